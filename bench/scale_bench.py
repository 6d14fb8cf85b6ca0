#!/usr/bin/env python
"""Benchmark of adding one worker (install.yml with the host added to the inventory,
docs/lifecycle.md) to a 3-host site and to a 10-host site: the time of the run, and what the
existing hosts do (tasks run, tasks changed, the phases they ran). One site, grown: h1, h2
masters (keepalived VIP; external etcd and the registry on h1) + h3 installed; h4 added (the
3-host figure); h5-h10 added at once; h11 added (the 10-host figure). The kubeadm, kubelet and
kube-apiserver test doubles are on the hosts. Not a test: prints numbers for the closing notes.

    sudo .cache/venv/bin/python bench/scale_bench.py [--th-id 12]
"""
import argparse
import os
import re
import sys
import time
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP / "tests"))
sys.path.insert(0, str(TOP / "collections"))   # the fixture pack reads the collection's module_utils

from harness import sites  # noqa: E402
from harness.playbook import run_playbook  # noqa: E402

PHASE_DONE = re.compile(r"phase (\d+)/\d+ (\S+): done on [\w\s,.-]*? in ([\d.]+) s")  # (the host list may wrap)


def grow(th, d, pack, workers, label, existing):
    inv = sites.keepalived_site(th, d / "hosts.yml", pack, ["h1", "h2"], workers)
    t0 = time.monotonic()
    run = run_playbook(TOP / "install.yml", inv)
    took = time.monotonic() - t0
    if run.rc != 0:
        print(run.explain())
        raise SystemExit(1)
    stats = run.stats
    ran = run.phase_hosts()
    print(f"{label}: {took:.1f} s (load average {os.getloadavg()[0]:.1f})")
    print("  phases: " + ", ".join(f"{name} {secs} s" for dummy, name, secs in PHASE_DONE.findall(run.output)))
    for host in existing:
        s = stats[host]
        phases = [p for p, hosts in ran.items() if host in hosts]
        print(f"  {host}: {s['ok'] + s['changed']} tasks, {s['changed']} changed; phases run: {', '.join(phases)}")
    return took


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--th-id", type=int, default=12)
    a = ap.parse_args()
    with sites.started(a.th_id, 11, TOP / ".cache" / "fixture-pack" / "e2e") as (th, d, pack):
        grow(th, d, pack, ["h3"], "install, 3 hosts", [])
        small = grow(th, d, pack, ["h3", "h4"], "add h4 to the 3-host site", ["h1", "h2", "h3"])
        grow(th, d, pack, [f"h{n}" for n in range(3, 11)], "add h5-h10 at once", [])
        big = grow(th, d, pack, [f"h{n}" for n in range(3, 12)], "add h11 to the 10-host site",
                   [f"h{n}" for n in range(1, 11)])
        print(f"adding one worker: 3-host site {small:.1f} s, 10-host site {big:.1f} s "
              f"(ratio {big / small:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

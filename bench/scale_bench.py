#!/usr/bin/env python
"""Benchmark of the install at several sizes and of adding one worker (install.yml with the host
added to the inventory, docs/lifecycle.md). Not a test: prints numbers for the closing notes. The
kubeadm, kubelet and kube-apiserver test doubles are on the hosts.

Default (grow one site): h1, h2 masters (keepalived VIP; external etcd and the registry on h1) + h3
installed; h4 added (the 3-host figure); h5-h10 added at once; h11 added (the 10-host figure); for
each run its time, phases, and what the existing hosts did (tasks run, changed, phases).

--sizes 3,10,30: for each size a fresh site of that many hosts (h1, h2 masters, the rest workers)
installed from nothing, re-run (no-op), and one worker added; for each run its wall time, the
controller's CPU (user+sys of ansible-playbook and every process under it: forks, SSH, mitogen),
the peak memory of one controller process, and the install's controller CPU per host.

    .cache/venv/bin/python bench/scale_bench.py [--th-id 12] [--sizes 3,10,30]
"""
import argparse
import os
import re
import resource
import sys
import time
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP / "tests"))
sys.path.insert(0, str(TOP / "collections"))   # the fixture pack reads the collection's module_utils

from harness import sites  # noqa: E402
from harness.playbook import run_playbook  # noqa: E402

PHASE_DONE = re.compile(r"phase (\d+)/\d+ (\S+): done on [\w\s,.-]*? in ([\d.]+) s")  # (the host list may wrap)


def install(inv, label):
    """One install.yml run, which must succeed; prints its time, the controller's CPU (user+sys of
    ansible-playbook and everything under it) and the load. (run, wall s, controller CPU s, peak RSS
    MB of one controller process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    run = run_playbook(TOP / "install.yml", inv)
    took = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.rc != 0:
        print(run.explain())
        raise SystemExit(1)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"{label}: {took:.1f} s, controller CPU {cpu:.1f} s, changed={run.total('changed')} "
          f"(load average {os.getloadavg()[0]:.1f})")
    return run, took, cpu, after.ru_maxrss / 1024


def grow(th, d, pack, workers, label, existing):
    inv = sites.keepalived_site(th, d / "hosts.yml", pack, ["h1", "h2"], workers)
    run, took, dummy, dummy = install(inv, label)
    stats = run.stats
    ran = run.phase_hosts()
    print("  phases: " + ", ".join(f"{name} {secs} s" for dummy, name, secs in PHASE_DONE.findall(run.output)))
    for host in existing:
        s = stats[host]
        phases = [p for p, hosts in ran.items() if host in hosts]
        print(f"  {host}: {s['ok'] + s['changed']} tasks, {s['changed']} changed; phases run: {', '.join(phases)}")
    return took


def sizes(th_id, counts):
    """A fresh site per size: install, no-op, one worker added."""
    rows = []
    for n in counts:
        with sites.started(th_id, n + 1, TOP / ".cache" / "fixture-pack" / "e2e") as (th, d, pack):
            print(f"{n} hosts:")
            workers = [f"h{i}" for i in range(3, n + 1)]
            inv = sites.keepalived_site(th, d / "hosts.yml", pack, ["h1", "h2"], workers)
            dummy, took, cpu, rss = install(inv, f"  install of {n} hosts")
            dummy, noop, dummy, dummy = install(inv, "  no-op re-run")
            inv = sites.keepalived_site(th, d / "hosts.yml", pack, ["h1", "h2"], workers + [f"h{n + 1}"])
            dummy, add, add_cpu, dummy = install(inv, f"  h{n + 1} added")
            rows.append((n, took, cpu, rss, noop, add, add_cpu))
    print("| hosts | install s | controller CPU s | CPU per host s | peak RSS MB | no-op s | add one worker s | its CPU s |")
    print("|---|---|---|---|---|---|---|---|")
    for n, took, cpu, rss, noop, add, add_cpu in rows:
        print(f"| {n} | {took:.1f} | {cpu:.1f} | {cpu / n:.2f} | {rss:.0f} | {noop:.1f} | {add:.1f} | {add_cpu:.1f} |")
    (n0, i0, c0, *dummy), (n1, i1, c1, *dummy2) = rows[0], rows[-1]
    if n1 > n0:
        print(f"{n0} -> {n1} hosts: install wall x{i1 / i0:.2f}, controller CPU per extra host "
              f"{(c1 - c0) / (n1 - n0):.2f} s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--th-id", type=int, default=12)
    ap.add_argument("--sizes", help="e.g. 3,10,30: a fresh site of each size (see the docstring)")
    a = ap.parse_args()
    if a.sizes:
        sizes(a.th_id, [int(x) for x in a.sizes.split(",")])
        return 0
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

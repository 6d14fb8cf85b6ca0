#!/usr/bin/env python
"""Benchmark of install.yml on 3 fresh test hosts, every phase: full install time, no-op re-run time
(journal resume) and its ratio to the install, a full re-converge with resume off, tasks executed per
host, and per-phase times from the phase banners (the network phase on a line of its own). The site is the end-to-end test's: HA keepalived
(h1, h2 masters holding the VIP; h3 a worker), external etcd on h1, the registry on h1, the fixture
site pack; kubeadm and kubelet are the test doubles (tests/kubeadm_double), put on the hosts first.
Not a test: prints numbers for the closing notes.

    sudo .cache/venv/bin/python bench/install_bench.py [--th-id 8]
"""
import argparse
import re
import sys
import time
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP / "tests"))

from harness import sites  # noqa: E402
from harness.playbook import run_playbook  # noqa: E402

PHASE_DONE = re.compile(r"phase (\d+)/\d+ (\S+): done on .*? in ([\d.]+) s")


def timed(inv, *args):
    t0 = time.monotonic()
    run = run_playbook(TOP / "install.yml", inv, *args)
    return run, time.monotonic() - t0


def tasks_per_host(run):
    return {h: s["ok"] + s["changed"] + s["failed"] for h, s in run.stats.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--th-id", type=int, default=8)
    a = ap.parse_args()
    with sites.started(a.th_id, 3, TOP / ".cache" / "sandbox") as (hosts, tmp, pack):
        inv = sites.ha_keepalived(hosts, tmp / "hosts.yml", pack)
        full, t_full = timed(inv)
        if full.rc != 0:
            print(full.explain())
            return 1
        noop, t_noop = timed(inv)
        again, t_again = timed(inv, "-e", '{"tke_resume": false}')
        print(f"full install on 3 hosts: {t_full:.1f} s")
        print(f"no-op re-run (journal resume): {t_noop:.1f} s = {t_noop / t_full:.2f} of the install; "
              f"changed={noop.total('changed')}")
        print(f"re-converge with tke_resume=false: {t_again:.1f} s; changed={again.total('changed')}")
        print("tasks executed per host (install / no-op re-run): " + ", ".join(
            f"{h} {n}/{tasks_per_host(noop).get(h, 0)}" for h, n in sorted(tasks_per_host(full).items())))
        print("per-phase time (install): " + ", ".join(
            f"{m[0]}. {m[1]} {m[2]} s" for m in PHASE_DONE.findall(full.output)))
        network = [m[2] for m in PHASE_DONE.findall(full.output) if m[1] == "network"]
        print(f"network phase (CNI configs, objects through the API, wait for every node Ready): "
              f"{network[0] + ' s' if network else 'did not run'}")
        print("changed by the re-converge: " + ("; ".join(again.changed_tasks()) or "nothing"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Benchmark of the test-host harness: cold and warm time to N hosts reachable over SSH, and
memory (PSS) per idle host. Not a test: prints numbers for the closing notes.

    sudo .cache/venv/bin/python bench/testhosts_bench.py [--hosts 3] [--cold] [--th-id 9]

--cold builds everything in a fresh cache directory (debootstrap, apt repository) as a new CI
machine would; without it the existing cache (.cache/testhosts) is used (the warm case).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
SCRIPT = TOP / "tests" / "harness" / "testhosts.sh"


def sh(env, *args):
    subprocess.run(["bash", str(SCRIPT), *args], env=env, check=True, stdout=subprocess.DEVNULL)


def pss_kib(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def host_pss_mib(run_dir, name):
    """PSS of every process in the host's own cgroup (the harness gives each host one)."""
    cg_file = Path(run_dir) / "hosts" / name / "cgroups"
    pids = set()
    for cg in cg_file.read_text().split():
        if "/memory/" in cg or cg.startswith("/sys/fs/cgroup/systemd/"):
            for procs in Path(cg).rglob("cgroup.procs"):
                pids.update(procs.read_text().split())
    return sum(pss_kib(p) for p in pids) / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=3)
    ap.add_argument("--cold", action="store_true")
    ap.add_argument("--th-id", default="9")
    a = ap.parse_args()
    cache = tempfile.mkdtemp(prefix="th-cold-", dir=TOP / ".cache") if a.cold else str(TOP / ".cache/testhosts")
    env = dict(os.environ, TH_ID=a.th_id, TH_CACHE=cache)
    nums = [str(n) for n in range(1, a.hosts + 1)]
    try:
        t0 = time.monotonic()
        for step in ("deps", "rootfs", "repo", "net-up"):
            sh(env, step)
        t_prep = time.monotonic() - t0
        sh(env, "up", *nums)
        sh(env, "ssh-wait", *nums)
        t_up = time.monotonic() - t0
        time.sleep(5)
        run = subprocess.run(["bash", str(SCRIPT), "info"], env=env, text=True, capture_output=True,
                             check=True).stdout
        run_dir = dict(line.split("=", 1) for line in run.split())["TH_RUN"]
        pss = [host_pss_mib(run_dir, f"h{n}") for n in nums]
        print(f"{'cold' if a.cold else 'warm'}: {a.hosts} hosts reachable by SSH in {t_up:.1f} s "
              f"(cache/rootfs/repo part {t_prep:.1f} s)")
        print("idle host PSS MiB: " + ", ".join(f"h{n} {p:.1f}" for n, p in zip(nums, pss)))
    finally:
        sh(env, "destroy")
        if a.cold:
            shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

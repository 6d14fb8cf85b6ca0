#!/usr/bin/env python
"""Benchmark of playbooks/upgrade.yml: a 1.30.4 site of 3 keepalived masters and 2 workers (external
etcd on h1, the registry on h1, the fixture site pack with kubeadm and kubelet 1.30.4 and 1.31.1,
the kubeadm/kubelet/kube-apiserver test doubles) upgraded to 1.31.1: total time, time per node
(from one node's record to the next: the hosts share this machine's clock), the validate and
backup part before the first node, and the no-op re-run. Not a test: prints numbers for the notes.

    sudo .cache/venv/bin/python bench/upgrade_bench.py [--th-id 9]
"""
import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP / "tests"))
sys.path.insert(0, str(TOP / "collections"))   # the fixture pack reads the collection's module_utils

from harness import fixture_pack, kubeadm_double, sites  # noqa: E402
from harness.playbook import run_playbook  # noqa: E402
from harness.testhosts import TestHosts  # noqa: E402

NODES = ["h1", "h2", "h3", "h4", "h5"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--th-id", type=int, default=9)
    a = ap.parse_args()
    hosts = TestHosts(th_id=a.th_id, count=5)
    hosts.prepare()
    try:
        hosts.up()
        with tempfile.TemporaryDirectory(dir=TOP / ".cache") as tmp:
            pack = fixture_pack.ensure_pack(TOP / ".cache" / "fixture-pack" / "e2e", Path(hosts.info["TH_REPO"]))
            kubeadm_double.install(hosts)
            inv = hosts.write_inventory(
                Path(tmp) / "hosts.yml",
                groups={"masters": NODES[:3], "workers": NODES[3:], "etcd": ["h1"], "registry": ["h1"]},
                group_vars={"tke_ha_mode": "keepalived", "tke_vip": sites.vip(hosts), "tke_site_pack": str(pack),
                            "tke_k8s_version": "1.30.4", "tke_allow_eol_install": True, "site_repo_packages": ["conntrack", "socat"],
                            "precheck_disk": [{"path": "/var/lib", "min_free_gb": 1}],
                            "precheck_disk_etcd": [{"path": "/var/lib/etcd", "min_free_gb": 1}]})
            t0 = time.monotonic()
            install = run_playbook(TOP / "install.yml", inv)
            t_install = time.monotonic() - t0
            if install.rc != 0:
                print(install.explain())
                return 1
            start = time.time()
            t0 = time.monotonic()
            up = run_playbook(TOP / "playbooks" / "upgrade.yml", inv, "-e", "tke_k8s_version=1.31.1")
            t_up = time.monotonic() - t0
            if up.rc != 0:
                print(up.explain())
                return 1
            done = {h: float(hosts.ssh(h, "stat -c %.3Y /var/lib/offline-pot/phases/upgrade").stdout) for h in NODES}
            t0 = time.monotonic()
            again = run_playbook(TOP / "playbooks" / "upgrade.yml", inv, "-e", "tke_k8s_version=1.31.1")
            t_again = time.monotonic() - t0
            print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
            print(f"install 1.30.4 (3 masters + 2 workers): {t_install:.1f} s")
            print(f"upgrade 1.30.4 -> 1.31.1: {t_up:.1f} s in all")
            prev, first = start, True
            for h in NODES:
                what = "validate + etcd backup + " if first else ""
                print(f"  {h}: {done[h] - prev:.1f} s ({what}{'master' if h in NODES[:3] else 'worker'})")
                prev, first = done[h], False
            print(f"  summary after the last node: {start + t_up - prev:.1f} s")
            print(f"re-run (every node at the target): {t_again:.1f} s, changed={again.total('changed')}")
    finally:
        hosts.destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Benchmark (not a test): the PKI authority for 3 masters + 100 nodes.

Times what the k8s_pki action does on the controller - read the PKI directory, reconcile, write
what changed - for a first run (everything issued) and a re-run with nothing to do.

    python bench/pki_generate.py [--nodes 100] [--masters 3] [--key-type rsa|ecdsa]
"""
import argparse
import datetime
import sys
import tempfile
import time
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP / "collections"))

from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki.store import read_tree, write_pki_file  # noqa: E402
from ansible_collections.offline_pot.tke.plugins.plugin_utils import k8s_pki  # noqa: E402


def run(pki_dir, cluster):
    t0 = time.perf_counter()
    existing = read_tree(pki_dir)
    files, actions, dummy = k8s_pki.reconcile(cluster, existing, datetime.datetime.now(datetime.timezone.utc))
    changed = k8s_pki.changed_files(existing, files)
    for rel in changed:
        write_pki_file(pki_dir, rel, files[rel])
    hosts = [h["name"] for h in cluster.machines]
    plan = {h: k8s_pki.host_files(cluster, h) for h in hosts}
    return time.perf_counter() - t0, sum(a.action != "reused" for a in actions), len(changed), sum(map(len, plan.values()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--masters", type=int, default=3)
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--key-type", default="rsa", choices=["rsa", "ecdsa"])
    a = ap.parse_args()
    masters = [{"name": f"m{i}", "ip": f"10.0.0.{10 + i}"} for i in range(1, a.masters + 1)]
    nodes = [{"name": f"n{i}", "ip": f"10.0.{1 + i // 250}.{i % 250 + 1}"} for i in range(a.nodes)]
    cluster = k8s_pki.Cluster(masters=masters, nodes=nodes, machines=masters + nodes, registry=nodes[:1],
                              vip="10.0.0.100", control_plane_endpoint="api.tke.com:6443", key_type=a.key_type)
    with tempfile.TemporaryDirectory() as d:
        first = run(d, cluster)
        second = run(d, cluster)
    print(f"{a.masters} masters + {a.nodes} nodes, {a.key_type} keys")
    for label, (secs, issued, written, planned) in (("first run", first), ("re-run", second)):
        print(f"  {label:10s} {secs:7.2f} s  certificates issued {issued:4d}  files written {written:4d}  "
              f"host files planned {planned}")


if __name__ == "__main__":
    main()

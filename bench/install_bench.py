#!/usr/bin/env python3
"""Benchmark of install.yml on 3 fresh test hosts: full install time, no-op re-run time (journal
resume) and its ratio to the install, a full re-converge with resume off, tasks executed per host,
and per-phase times from the phase banners, on the sandbox's real fixture site pack (every phase but
the two kubeadm ones: kubeadm/kubelet cannot be had here). Not a test: prints numbers for the closing notes.

    sudo .cache/venv/bin/python bench/install_bench.py [--inventory-template sandbox] [--th-id 8]
"""
import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP / "tests"))

from harness import fixture_pack  # noqa: E402
from harness.playbook import run_playbook  # noqa: E402
from harness.testhosts import TestHosts  # noqa: E402

PHASE_DONE = re.compile(r"phase (\d+)/\d+ (\S+): done on .*? in ([\d.]+) s")


def timed(inv, *args):
    t0 = time.monotonic()
    run = run_playbook(TOP / "install.yml", inv, *args)
    return run, time.monotonic() - t0


def tasks_per_host(run):
    return {h: s["ok"] + s["changed"] + s["failed"] for h, s in run.stats.items()}


def site_pack(hosts, tmp):
    """The sandbox's fixture pack (built once, cached under .cache/sandbox)."""
    out = TOP / ".cache" / "sandbox" / "packs"
    pack = out / "fixture-1.0.0"
    if not (pack / "manifest.json").is_file():
        spec = fixture_pack.build_inputs(TOP / ".cache" / "sandbox" / "pack-inputs", Path(hosts.info["TH_REPO"]))
        local = tmp / "local.yml"
        local.write_text(f"all:\n  hosts:\n    localhost:\n      ansible_connection: local\n"
                         f"      ansible_python_interpreter: {sys.executable}\n")
        run = run_playbook(TOP / "playbooks" / "site_pack.yml", local, "-e", f"pack_spec={spec}",
                           "-e", f"pack_output_dir={out}", "-e", f"pack_cache_dir={TOP / '.cache/sandbox/pack-cache'}")
        assert run.rc == 0, run.explain()
    return pack


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--th-id", type=int, default=8)
    a = ap.parse_args()
    hosts = TestHosts(th_id=a.th_id, count=3)
    hosts.prepare()
    try:
        hosts.up()
        with tempfile.TemporaryDirectory(dir=TOP / ".cache") as tmp:
            pack = site_pack(hosts, Path(tmp))
            # every phase but the two kubeadm ones (no kubeadm/kubelet on this machine)
            inv = hosts.write_inventory(Path(tmp) / "hosts.yml",
                                        groups={"masters": ["h1"], "workers": ["h2", "h3"], "registry": ["h1"]},
                                        group_vars={"precheck_disk": [{"path": "/var/lib", "min_free_gb": 1}],
                                                    "tke_site_pack": str(pack), "site_repo_packages": ["conntrack", "socat"],
                                                    "tke_skip_phases": ["control_plane", "nodes"]})
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
            print("changed by the re-converge: " + ("; ".join(again.changed_tasks()) or "nothing"))
    finally:
        hosts.destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main())

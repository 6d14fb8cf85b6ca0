#!/usr/bin/env python
"""Site pack benchmark on three real test hosts (tests/harness).

Measures, from one run:
  - pack size (staging directory and archive) and the registry's de-duplication ratio
    (sum of image sizes / bytes of stored blobs);
  - time from "pack present on the controller" to "images pullable on all 3 hosts", two ways:
      preseed  the pack's pre-seeded registry storage is brought to the registry host
               (install.yml --tags offline,runtime,registry), then every host pulls;
      push     the load-and-push way TKE uses (baseline, implemented here only): the pack has no
               registry storage, image tarballs (OCI archives, one per image, each carrying its
               layers) are copied to the registry host and pushed with skopeo into an empty
               registry, then every host pulls.
    and their ratio.

Run as root from the checkout:
  TH_CACHE=/work/main/.cache/testhosts TH_ID=5 python bench/site_pack_bench.py [--image-mb 64]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(TOP / "tests"), str(TOP / "collections")]

import yaml  # noqa: E402

from harness import fixture_pack  # noqa: E402
from harness.certs import registry_tls  # noqa: E402
from harness.playbook import run_playbook  # noqa: E402
from harness.testhosts import TestHosts  # noqa: E402

PASSWORD = "bench-pw-123"
AUTH = f"admin:{PASSWORD}"


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def check(run, what):
    if run.rc != 0:
        print(run.explain())
        raise SystemExit(f"{what} failed")


def adhoc(hosts: TestHosts, inv: Path, args: str):
    """One pack_sync call on the registry host, as the registry phase makes it."""
    argv = [str(Path(sys.executable).parent / "ansible"), "h1", "-i", str(inv), "-m", "offline_pot.tke.pack_sync",
            "-a", args]
    env = dict(os.environ, ANSIBLE_CONFIG=str(TOP / "ansible.cfg"))
    res = subprocess.run(argv, cwd=TOP, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         check=False)

    class R:
        rc, output = res.returncode, res.stdout

        def explain(self):
            return self.output[-4000:]
    return R()


def pull_everywhere(hosts: TestHosts, images: list[dict]) -> None:
    procs = []
    for h in hosts.names:
        cmd = " && ".join(f"ctr -n k8s.io images pull --hosts-dir /etc/containerd/certs.d --user {AUTH} "
                          f"registry.tke.com/{i['name']}:{i['tag']} >/dev/null" for i in images)
        procs.append(subprocess.Popen(["ssh", "-q", "-i", hosts.key, "-o", "StrictHostKeyChecking=no",
                                       "-o", "UserKnownHostsFile=/dev/null", f"root@{hosts.ip(h)}", cmd]))
    if any(p.wait() != 0 for p in procs):
        raise SystemExit("a pull failed")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--image-mb", type=int, default=64, help="MiB of incompressible data in the shared base layer")
    args = ap.parse_args()
    work = TOP / ".cache" / "bench-pack"
    work.mkdir(parents=True, exist_ok=True)
    hosts = TestHosts(th_id=int(os.environ.get("TH_ID", "1")), count=3)
    hosts.prepare()
    spec_path = fixture_pack.build_inputs(work / f"inputs-{args.image_mb}", Path(hosts.info["TH_REPO"]), args.image_mb)
    spec = yaml.safe_load(spec_path.read_text())
    local = work / "local.yml"
    local.write_text(yaml.safe_dump({"all": {"hosts": {"localhost": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}}))

    # the two packs: with pre-seeded storage, and without (the baseline ships image tarballs)
    t = time.time()
    check(run_playbook(TOP / "playbooks/site_pack.yml", local, "-e", f"pack_spec={spec_path}",
                       "-e", f"pack_output_dir={work / 'out-preseed'}", "-e", f"pack_cache_dir={work / 'cache'}",
                       "-e", f"pack_signing_key={fixture_pack.signing_key()}"), "build")
    build_s = time.time() - t
    nospec = dict(spec, images=[])
    nospec_path = work / f"spec-noimages-{args.image_mb}.yml"
    nospec_path.write_text(yaml.safe_dump(nospec))
    check(run_playbook(TOP / "playbooks/site_pack.yml", local, "-e", f"pack_spec={nospec_path}",
                       "-e", f"pack_output_dir={work / 'out-push'}", "-e", f"pack_cache_dir={work / 'cache'}",
                       "-e", f"pack_signing_key={fixture_pack.signing_key()}"), "build")
    tarballs = work / f"image-tarballs-{args.image_mb}"
    if not tarballs.exists():
        tarballs.mkdir()
        for img in spec["images"]:
            with tarfile.open(tarballs / (Path(img["path"]).name + ".tar"), "w") as tf:
                tf.add(img["path"], arcname=".")
    pre_dir = work / "out-preseed" / "fixture-1.0.0"
    manifest = json.loads((pre_dir / "manifest.json").read_text())
    reg = manifest["contents"]["registry"]
    results = {
        "image_mb": args.image_mb,
        "pack_dir_bytes": du(pre_dir), "pack_archive_bytes": (work / "out-preseed" / "fixture-1.0.0.tar.zst").stat().st_size,
        "registry_storage_bytes": du(pre_dir / "registry"), "image_tarball_bytes": du(tarballs),
        "sum_image_bytes": reg["image_bytes"], "stored_blob_bytes": reg["stored_blob_bytes"],
        "dedup_ratio": reg["dedup_ratio"], "build_first_s": round(build_s, 1)}

    certs = registry_tls(work / "tls")
    inv_vars = {"tke_admin_password": PASSWORD, "tke_registry_ca_cert": str(certs / "ca.crt"),
                "registry_tls_cert": str(certs / "registry.crt"), "registry_tls_key": str(certs / "registry.key")}
    groups = {"masters": ["h1"], "workers": ["h2", "h3"], "registry": ["h1"]}
    try:
        hosts.up()
        for way in ("preseed", "push"):
            hosts.reset(*hosts.names)
            pack = work / f"out-{way}" / "fixture-1.0.0.tar.zst"
            inv = hosts.write_inventory(work / f"inv-{way}.yml", groups, dict(inv_vars, tke_site_pack=str(pack)))
            if way == "push":  # the push tool must be there already (not timed): skopeo from the hosts' repo
                hosts.ssh("h1", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq skopeo >/dev/null",
                          timeout=300)
            t0 = time.time()
            check(run_playbook(TOP / "install.yml", inv, "--tags", "offline,runtime"), way)
            t1 = time.time()
            check(run_playbook(TOP / "install.yml", inv, "--tags", "registry"), way)
            tp = time.time()
            if way == "push":
                for f in sorted(tarballs.iterdir()):
                    subprocess.run(["scp", "-q", "-i", hosts.key, "-o", "StrictHostKeyChecking=no",
                                    "-o", "UserKnownHostsFile=/dev/null", str(f), f"root@{hosts.ip('h1')}:/root/"], check=True)
                for img in spec["images"]:
                    name = Path(img["path"]).name + ".tar"
                    hosts.ssh("h1", f"skopeo copy -q --dest-creds {AUTH} oci-archive:/root/{name} "
                                    f"docker://registry.tke.com/{img['name']}:{img['tag']}", timeout=600)
            t2 = time.time()
            pull_everywhere(hosts, spec["images"])
            t3 = time.time()
            results[way] = {"offline_runtime_s": round(t1 - t0, 1), "registry_ready_s": round(t2 - t1, 1),
                            "pull_all_hosts_s": round(t3 - t2, 1), "total_s": round(t3 - t0, 1)}
            if way == "push":
                results[way]["image_step_s"] = round(t2 - tp, 1)
            else:
                # the image step alone: empty the storage, bring the pre-seeded one again, pull
                hosts.ssh("h1", "systemctl stop tke-registry && rm -rf /var/lib/tke-registry && "
                                "systemctl start tke-registry")
                for h in hosts.names:
                    hosts.ssh(h, "ctr -n k8s.io images rm $(ctr -n k8s.io images ls -q) >/dev/null; "
                                 "ctr -n k8s.io content prune references >/dev/null 2>&1; true")
                ts = time.time()
                check(adhoc(hosts, inv, f"src={pre_dir} prefix=registry dest=/var/lib/tke-registry prune=false"),
                      "storage sync")
                t4 = time.time()
                pull_everywhere(hosts, spec["images"])
                results[way]["image_step_s"] = round(t4 - ts, 1)
                results[way]["image_step_then_pull_s"] = round(time.time() - ts, 1)
            print(way, json.dumps(results[way]), flush=True)
    finally:
        if os.environ.get("TH_KEEP") != "1":
            hosts.destroy()
    p, q = results["preseed"], results["push"]
    results["ratio_total_push_over_preseed"] = round(q["total_s"] / p["total_s"], 2)
    results["ratio_registry_ready_push_over_preseed"] = round(q["registry_ready_s"] / p["registry_ready_s"], 2)
    results["ratio_image_step_push_over_preseed"] = round(q["image_step_s"] / p["image_step_s"], 2)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

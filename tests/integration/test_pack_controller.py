"""The site pack carries its own controller: wheels fetched for the controller's Python and
platform (binary only), the collection built from source, and a `bootstrap` script that makes a
working controller from the pack with no network at all (run here in a network namespace of its
own: `unshare -n`, only a down loopback interface, no route, no resolver)."""
import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils import site_pack_build as b
from harness import fixture_pack
from harness.playbook import TOP

PY = "%d.%d" % sys.version_info[:2]


@pytest.mark.skipif(shutil.which("unshare") is None or os.geteuid() != 0, reason="needs root and unshare")
def test_bootstrap_makes_a_controller_from_the_pack_without_network(tmp_path):
    spec = {"name": "ctl", "version": "1", "controller": {
        "python": [PY], "platform": fixture_pack.CONTROLLER_PLATFORMS, "requirements": str(TOP / "requirements.txt"),
        "collection": str(TOP)}}
    build = b.Builder(spec, str(tmp_path / "out"), str(tmp_path / "cache"), fixture_pack.run_cmd,
                      fixture_pack.venv_which, archive=False).build()
    pack = tmp_path / "out" / "ctl-1"
    ctl = build["contents"]["controller"]
    assert ctl["bootstrap"] == "bootstrap" and ctl["python"] == [PY] and ctl["platform"] == fixture_pack.CONTROLLER_PLATFORMS
    wheels = sorted(p.name for p in (pack / "wheels").iterdir())
    assert not [w for w in wheels if not w.endswith(".whl") and w != "requirements.txt"], wheels   # binary only
    assert any(w.startswith("pip-") for w in wheels) and any(w.startswith("ansible_core-2.19") for w in wheels)
    assert any(w.startswith("cryptography-") and "manylinux" in w for w in wheels), wheels
    (coll,) = [c["file"] for c in ctl["collections"]]
    assert coll.startswith("collections/offline_pot-tke-") and (pack / coll).is_file()
    assert os.access(pack / "bootstrap", os.X_OK)

    # re-building changes nothing (the collection is rebuilt but kept: same MANIFEST.json)
    again = b.Builder(spec, str(tmp_path / "out"), str(tmp_path / "cache"), fixture_pack.run_cmd,
                      fixture_pack.venv_which, archive=False).build()
    assert again["changed"] is False, again["changes"]

    # the controller host: no network, only the pack and python3
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}

    def offline(code):
        return subprocess.run(["unshare", "-n", "python3", "-c", code], capture_output=True, text=True, env=env,
                              check=False)
    assert subprocess.run(["unshare", "-n", "ip", "route"], capture_output=True, text=True, check=True).stdout == ""
    no_route = offline("import socket; socket.create_connection(('1.1.1.1', 443), 3)")
    assert "Network is unreachable" in no_route.stderr, no_route.stderr
    no_resolver = offline("import socket; socket.getaddrinfo('pypi.org', 443)")
    assert "socket.gaierror" in no_resolver.stderr, no_resolver.stderr
    boot = subprocess.run(["unshare", "-n", "sh", str(pack / "bootstrap"), str(tmp_path / "controller")],
                          capture_output=True, text=True, env=env, check=False)
    assert boot.returncode == 0, boot.stdout + boot.stderr
    check = subprocess.run(["unshare", "-n", "sh", "-c", f". {tmp_path}/controller/activate && cd / && "
                            "ansible --version && ansible-doc -t module offline_pot.tke.precheck | head -1 && "
                            "python -c 'import cryptography, paramiko'"],
                           capture_output=True, text=True, env=env, check=False)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "core 2.19" in check.stdout and "offline_pot.tke.precheck" in check.stdout, check.stdout


def test_sample_spec_builds_with_the_fixture_sources_and_verifies(tmp_path):
    """docs/pack.sample.yml, with its sources (paths, URLs, digests) replaced by the test fixture's
    where the fixture has them (Debian's containerd, runc, CNI plugins, etcd, registry; its images
    and chart) and the rest left out (no kubeadm, kubelet, kubectl, crictl or helm can be had
    here), builds with playbooks/site_pack.yml and site_pack_verify accepts the archive."""
    import json
    import yaml
    from harness.playbook import ansible_bin, run_playbook

    sample = yaml.safe_load((TOP / "docs" / "pack.sample.yml").read_text())
    fixture = yaml.safe_load(fixture_pack.build_inputs(tmp_path / "inputs").read_text())
    theirs = {x["name"]: x for x in fixture["binaries"]}
    assert set(theirs) <= {x["name"] for x in sample["binaries"]}, "the sample lacks a binary the install uses"
    spec = dict(sample)
    spec["binaries"] = [dict(x, **{k: theirs[x["name"]][k] for k in ("path", "sha256", "version")})
                        for x in sample["binaries"] if x["name"] in theirs]
    for x in spec["binaries"]:
        x.pop("url", None)
    spec["os_packages"] = {"deb": [d for d in sample["os_packages"]["deb"] if "apt" in d]}
    # the sample's versions and plugins, the layouts from the fixture's images_dir (it carries
    # every derived image of its own versions and plugins); the site's own images are the fixture's
    assert set(sample["kubernetes"]["versions"]) <= set(fixture["kubernetes"]["versions"])
    spec["kubernetes"] = dict(sample["kubernetes"], images_dir=fixture["kubernetes"]["images_dir"])
    spec["images"], spec["charts"] = fixture["images"], fixture["charts"]
    # the sample's components are the fixture's (the same templates/components samples, with the
    # fixture's stand-in images)
    assert [c["name"] for c in sample["components"]] == [c["name"] for c in fixture["components"]]
    spec["components"] = fixture["components"]
    spec["controller"] = dict(sample["controller"], requirements=str(TOP / sample["controller"]["requirements"]),
                              collection=str(TOP / sample["controller"]["collection"]))
    spec_file = tmp_path / "pack.yml"
    spec_file.write_text(yaml.safe_dump(spec))
    local = tmp_path / "local.yml"
    local.write_text(yaml.safe_dump({"all": {"hosts": {"localhost": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}}))
    out = tmp_path / "out"
    build = run_playbook(TOP / "playbooks" / "site_pack.yml", local, "-e", f"pack_spec={spec_file}",
                         "-e", f"pack_output_dir={out}", "-e", f"pack_signing_key={fixture_pack.signing_key()}")
    assert build.rc == 0, build.explain()
    (archive,) = [p for p in out.iterdir() if p.name in ("tke-site-2026.11.1.tar.zst", "tke-site-2026.11.1.tar.gz")]
    verify = subprocess.run([ansible_bin("ansible"), "localhost", "-i", str(local), "-m", "offline_pot.tke.site_pack_verify",
                             "-a", json.dumps({"pack": str(archive), "unpack_dir": str(tmp_path / "unpacked"),
                                               "pubkey": fixture_pack.public_key_pem()})],
                            cwd=TOP, capture_output=True, text=True, check=False)
    # the archive is unpacked (changed) and every file checked against the manifest
    assert verify.returncode == 0 and "localhost | CHANGED" in verify.stdout, verify.stdout + verify.stderr
    manifest = json.loads((out / "tke-site-2026.11.1" / "manifest.json").read_text())
    assert manifest["contents"]["controller"]["bootstrap"] == "bootstrap"
    assert {b["name"] for b in manifest["contents"]["binaries"]} == set(theirs)
    # the images kubeadm needs for the sample's version and its network plugins' images, derived
    assert manifest["contents"]["kubernetes"] == {"versions": ["1.36.3"], "network_plugins": ["flannel", "calico"],
                                                  "namespace": "library"}
    refs = {f"{i['name']}:{i['tag']}" for i in manifest["contents"]["images"]}
    assert {"library/kube-apiserver:v1.36.3", "library/kube-proxy:v1.36.3", "library/coredns:v1.14.2",
            "library/pause:3.10.2", "library/etcd:3.6.8-0", "library/flannel:v0.28.9",
            "library/calico-node:v3.32.1", "library/busybox:1.35"} <= refs, refs

"""Site pack end to end on three real hosts: build a pack from local fixtures (Debian binaries,
apt-fetched .debs, images made here), refuse a tampered pack before any host changes, install the
offline, runtime and registry phases (twice: the second run changes nothing), then pull and run
an image from the pre-seeded registry on every host."""
import hashlib
import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from harness import fixture_pack
from harness.certs import registry_tls
from harness.playbook import NO_RESUME, TOP, converge_twice, run_playbook

INSTALL = TOP / "playbooks" / "install.yml"
BUILD = TOP / "playbooks" / "site_pack.yml"
CACHE = TOP / ".cache" / "fixture-pack"
PASSWORD = "pack-test-pw-1"
PHASES = ["--tags", "offline,runtime,registry"]


@pytest.fixture(scope="module")
def spec(testhosts):
    key = fixture_pack.recipe_key()   # (the image table's tags included: new tags, new stand-in images)
    for old in CACHE.glob("inputs-*"):  # inputs of an older fixture recipe
        if old.name != f"inputs-{key}":
            shutil.rmtree(old, ignore_errors=True)
    return fixture_pack.build_inputs(CACHE / f"inputs-{key}", Path(testhosts.info["TH_REPO"]))


@pytest.fixture(scope="module")
def local_inventory(tmp_path_factory):
    p = tmp_path_factory.mktemp("local") / "hosts.yml"
    p.write_text(yaml.safe_dump({"all": {"hosts": {"localhost": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}}))
    return p


@pytest.fixture(scope="module")
def built(spec, local_inventory, tmp_path_factory):
    out = tmp_path_factory.mktemp("packs")
    first, second = converge_twice(BUILD, local_inventory, "-e", f"pack_spec={spec}", "-e", f"pack_output_dir={out}",
                                   "-e", f"pack_cache_dir={CACHE / 'cache'}",
                                   "-e", f"pack_signing_key={fixture_pack.signing_key()}")
    pack_dir = out / "fixture-1.0.0"
    return {"dir": pack_dir, "archive": out / "fixture-1.0.0.tar.zst", "first": first}


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    """A self-signed CA and a registry server certificate (until the PKI phase provides them)."""
    return registry_tls(tmp_path_factory.mktemp("tls"))


def inventory(testhosts, path, pack, tls):
    return testhosts.write_inventory(
        path, groups={"masters": ["h1"], "workers": ["h2", "h3"], "registry": ["h1"]},
        group_vars={"tke_site_pack": str(pack), "tke_admin_password": PASSWORD,
                    "tke_registry_ca_cert": str(tls / "ca.crt"), "registry_tls_cert": str(tls / "registry.crt"),
                    "registry_tls_key": str(tls / "registry.key"), "site_repo_packages": ["conntrack", "socat"]})


def test_build_reuses_what_is_there_and_dedups_layers(built, local_inventory, spec, tmp_path):
    manifest = json.loads((built["dir"] / "manifest.json").read_text())
    assert manifest["format_version"] == 1 and manifest["name"] == "fixture"
    paths = {f["path"] for f in manifest["files"]}
    assert {"repo/deb/Packages", "repo/deb/Release", "bin/containerd-1.6.20", "bin/containerd-2.1.9", "bin/runc",
            "bin/registry", "bin/etcd", "bin/cni-plugins/bridge", "charts/hello-0.1.0.tgz"} <= paths
    # containerd in two versions: 2.1.9 for Kubernetes 1.35 and 1.36, 1.6.20 for the others (docs/site_pack.md)
    assert sorted((b["version"], b.get("for_kubernetes")) for b in manifest["contents"]["binaries"]
                  if b["name"] == "containerd") == [("1.6.20", None), ("2.1.9", ["1.35", "1.36"])]
    assert any(p.startswith("collections/offline_pot-tke-") for p in paths)
    for wheel in yaml.safe_load(spec.read_text())["controller"].get("wheels", []):
        assert "wheels/" + Path(wheel["path"]).name in paths
    assert sorted(d["name"] for d in manifest["contents"]["os_packages"]["deb"]) == [
        "conntrack", "libyaml-0-2", "python3-bcrypt", "python3-cffi-backend", "python3-yaml", "socat"]
    # three images share the busybox layer: it is stored once
    reg = manifest["contents"]["registry"]
    assert reg["dedup_ratio"] > 2.5, reg
    blobs = [p for p in paths if p.startswith("registry/docker/registry/v2/blobs/")]
    assert len(blobs) == 1 + 3 + 3 + 1  # shared layer, 3 configs, 3 manifests, hello's own layer
    assert built["archive"].exists()

    # a binary whose file does not match its sha256 stops the build naming it
    bad = yaml.safe_load(spec.read_text())
    next(b for b in bad["binaries"] if b["name"] == "runc")["sha256"] = "0" * 64
    bad["binaries"].append({"name": "kubeadm", "url": "http://127.0.0.1:9/kubeadm", "sha256": "1" * 64,
                            "install": "/usr/local/bin/kubeadm"})
    bad_spec = tmp_path / "bad.yml"
    bad_spec.write_text(yaml.safe_dump(bad))
    run = run_playbook(BUILD, local_inventory, "-e", f"pack_spec={bad_spec}", "-e", f"pack_output_dir={tmp_path}/out")
    assert run.rc != 0 and "binaries runc: " in run.output and "does not match its sha256" in run.output, run.explain()
    del next(b for b in bad["binaries"] if b["name"] == "runc")["sha256"]
    bad["binaries"] = [b for b in bad["binaries"] if b["name"] != "runc"]
    bad_spec.write_text(yaml.safe_dump(bad))
    run = run_playbook(BUILD, local_inventory, "-e", f"pack_spec={bad_spec}", "-e", f"pack_output_dir={tmp_path}/out")
    assert run.rc != 0 and "binaries kubeadm: download of http://127.0.0.1:9/kubeadm failed" in run.output, run.explain()
    # an archive setting that is no boolean is refused by name before anything is built
    run = run_playbook(BUILD, local_inventory, "-e", f"pack_spec={spec}", "-e", f"pack_output_dir={tmp_path}/typo",
                       "-e", "pack_archive=flase")
    assert run.rc != 0 and "localhost" in run.output and "pack_archive: true or false" in run.output \
        and "not flase" in run.output, run.explain()
    assert not (tmp_path / "typo").exists()


def test_tampered_pack_is_refused_before_any_host_changes(testhosts, built, tls, tmp_path):
    tampered = tmp_path / "tampered"
    shutil.copytree(built["dir"], tampered, copy_function=os.link)
    runc = tampered / "bin" / "runc"
    data = runc.read_bytes()
    runc.unlink()
    runc.write_bytes(data[: len(data) // 2])
    hello = tampered / "charts" / "hello-0.1.0.tgz"
    data = bytearray(hello.read_bytes())
    hello.unlink()
    data[10] ^= 0xFF
    hello.write_bytes(bytes(data))
    inv = inventory(testhosts, tmp_path / "hosts.yml", tampered, tls)
    run = run_playbook(INSTALL, inv, *PHASES)
    assert run.rc != 0, run.explain()
    assert "bin/runc: truncated" in run.output, run.explain()
    assert "charts/hello-0.1.0.tgz: altered" in run.output, run.explain()
    # nothing changed from the offline phase on (before it, validate renders tke.json on the controller)
    assert re.findall(r"^changed: ", run.output.split("PLAY [Phase offline", 1)[1], re.M) == [], run.explain()
    for h in testhosts.names:
        res = testhosts.ssh(h, "ls /opt/tke/pack /etc/apt/sources.list.d/tke-site-pack.list /usr/local/bin/containerd",
                            check=False)
        assert res.returncode != 0 and "No such file" in res.stderr, (h, res.stdout)


def assert_no_host_changed(testhosts, run):
    assert re.findall(r"^changed: ", run.output.split("PLAY [Phase offline", 1)[1], re.M) == [], run.explain()
    for h in testhosts.names:
        res = testhosts.ssh(h, "ls /opt/tke/pack /usr/local/bin/runc", check=False)
        assert res.returncode != 0 and "No such file" in res.stderr, (h, res.stdout)


def refused_in_validate(testhosts, inv, tmp_path):
    """The install run, with the hosts' sshd logins counted around it: a fresh ControlPath
    directory (no connection of an earlier run reused); the only login after is the count's own."""
    env = {"ANSIBLE_SSH_CONTROL_PATH_DIR": str(tmp_path / f"cp{len(list(tmp_path.glob('cp*')))}")}
    before = {h: testhosts.ssh_logins(h) for h in testhosts.names}
    run = run_playbook(INSTALL, inv, *PHASES, env=env)
    after = {h: testhosts.ssh_logins(h) for h in testhosts.names}
    assert run.rc != 0, run.explain()
    assert "PLAY [Phase precheck" not in run.output, run.explain()
    assert after == {h: n + 1 for h, n in before.items()}, ("a host was contacted", before, after)
    return run


def test_a_rewritten_pack_is_refused_by_its_signature(testhosts, built, tls, tmp_path):
    """bin/runc replaced and its manifest entry edited to match: the manifest alone passes, the
    signature does not; an unsigned pack is refused naming why, unless explicitly allowed. Both in
    the validate phase, on the controller: no host is contacted (no SSH login on any)."""
    assert (built["dir"] / "manifest.json.sig").is_file()
    tampered = tmp_path / "tampered"
    shutil.copytree(built["dir"], tampered, copy_function=os.link)
    runc = tampered / "bin" / "runc"
    data = runc.read_bytes() + b"\n# not the runc the site owner packed\n"
    runc.unlink()
    runc.write_bytes(data)
    manifest = json.loads((tampered / "manifest.json").read_text())
    for f in manifest["files"]:
        if f["path"] == "bin/runc":
            f.update(size=len(data), sha256=hashlib.sha256(data).hexdigest())
    (tampered / "manifest.json").unlink()
    (tampered / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    inv = inventory(testhosts, tmp_path / "hosts.yml", tampered, tls)
    run = refused_in_validate(testhosts, inv, tmp_path)
    assert "is refused: manifest.json.sig does not match manifest.json and tke_site_pack_pubkey" in run.output, \
        run.explain()
    # unsigned: refused, saying why and how to allow it
    (tampered / "manifest.json.sig").unlink()
    run = refused_in_validate(testhosts, inv, tmp_path)
    assert "is not signed (no manifest.json.sig)" in run.output and "tke_site_pack_allow_unsigned" in run.output, \
        run.explain()


def test_a_pack_without_the_sites_images_is_refused_before_any_host_changes(testhosts, built, tls, tmp_path):
    """The pack carries kubeadm's images of its releases and both network plugins' under library/: a
    site pulling from another namespace (or another release) is refused naming what it would miss,
    before any host changes."""
    inv = inventory(testhosts, tmp_path / "hosts.yml", built["dir"], tls)
    run = run_playbook(INSTALL, inv, *PHASES, "-e", '{"tke_registry_namespace": "platform", "tke_network_plugin": "calico"}')
    assert run.rc != 0, run.explain()
    out = " ".join(run.output.split())
    assert ("the site pack lacks images this site pulls from registry.tke.com/platform (Kubernetes 1.36.3, network "
            "calico): platform/calico-cni:v3.32.1, ") in out and "platform/pause:3.10.2" in out, run.explain()
    assert_no_host_changed(testhosts, run)


def test_install_pack_then_pull_and_run_from_preseeded_registry(testhosts, built, tls, tmp_path):
    inv = inventory(testhosts, tmp_path / "hosts.yml", built["archive"], tls)
    first, second = converge_twice(INSTALL, inv, *PHASES)
    assert set(second.stats) == {"h1", "h2", "h3"}
    # check mode with the journal off, so every phase's tasks really run in check mode (with the
    # journal on they would all be skipped as done, and changed=0 would prove nothing)
    check = run_playbook(INSTALL, inv, *PHASES, "--check", "--diff", *NO_RESUME)
    assert check.rc == 0 and check.changed_hosts() == {}, check.explain()
    assert set(check.stats) == {"h1", "h2", "h3"}, check.explain()
    # the phases' own roles went through their tasks (a phase the journal skips ends its hosts
    # before its role starts)
    for role in ("site_repo", "container_runtime", "registry"):
        assert any(n.startswith(f"TASK [offline_pot.tke.{role} : ") for n in check.task_names()), (role, check.explain())

    auth = f"admin:{PASSWORD}"
    for h in testhosts.names:
        # packages came from the pack's repository
        pol = testhosts.ssh(h, "dpkg -s conntrack socat >/dev/null && apt-cache policy conntrack").stdout
        assert "/opt/tke/pack/repo/deb" in pol, (h, pol)
        # the image is in the registry from the start: pull it over TLS with auth, and run it
        testhosts.ssh(h, f"ctr -n k8s.io images pull --hosts-dir /etc/containerd/certs.d --user {auth} "
                         "registry.tke.com/library/hello:1.0 >/dev/null")
        # ctr attaches the container's stdout through a FIFO and can lose the output of a container
        # that exits at once when the host is loaded (it still exits 0): a run is tried up to three
        # times, each must exit 0, and one must print the image's file
        outs = []
        for attempt in range(3):
            outs.append(testhosts.ssh(h, f"ctr -n k8s.io run --rm registry.tke.com/library/hello:1.0 hello-{h}-{attempt}").stdout)
            if outs[-1]:
                break
        assert outs[-1] == "hello from the offline site pack\n", (h, outs)
        # the node resolves the registry and trusts its CA (system store); unauthenticated pushes are refused
        probe = testhosts.ssh(h, "python3 - <<'EOF'\n"
                                 "import urllib.request as u, urllib.error as e\n"
                                 "r = u.Request('https://registry.tke.com/v2/library/evil/blobs/uploads/', method='POST')\n"
                                 "try:\n    u.urlopen(r); print('accepted')\n"
                                 "except e.HTTPError as x:\n    print(x.code)\nEOF").stdout.strip()
        assert probe == "401", (h, probe)
        present = testhosts.ssh(h, "ls /usr/local/bin/registry /usr/local/bin/etcd /opt/cni/bin/bridge 2>/dev/null; true").stdout
        assert "/opt/cni/bin/bridge" in present
        assert ("/usr/local/bin/registry" in present) == (h == "h1"), (h, present)
        assert ("/usr/local/bin/etcd" in present) == (h == "h1"), (h, present)

    catalog = testhosts.ssh("h2", f"python3 - <<'EOF'\nimport base64, urllib.request as u\n"
                                  "r = u.Request('https://registry.tke.com/v2/_catalog')\n"
                                  f"r.add_header('Authorization', 'Basic ' + base64.b64encode(b'{auth}').decode())\n"
                                  "print(u.urlopen(r).read().decode())\nEOF").stdout
    # the site's own images, those derived from the pack spec's kubernetes section, and the
    # sample components' (templates/components, templates/charts)
    assert json.loads(catalog)["repositories"] == sorted(
        {"library/busybox", "library/hello", "library/sample-redis", "library/sample-app", "library/sample-web"}
        | {i["name"] for i in fixture_pack.derived_images()})
    cfg = testhosts.ssh("h3", "cat /etc/containerd/config.toml").stdout
    # (Kubernetes 1.36: containerd 2.x, configuration version 3)
    assert "SystemdCgroup = true" in cfg and 'sandbox = "registry.tke.com/library/pause:3.10.2"' in cfg
    assert 'config_path = "/etc/containerd/certs.d"' in cfg

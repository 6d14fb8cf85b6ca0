"""A site of two Debian releases and two architectures from one pack (issue 27): a Debian 13 master
(h4, the first: kubeadm's init, the network's objects and the components' API calls and Helm run
there; with etcd - Debian 13's etcd 3.5, from the pack - and the registry), a Debian 12 amd64
master (h1, joining it) holding the API VIP with it (keepalived), a Debian 13 worker (h5) and a
Debian 12 arm64 worker (h6), with one component (the sample Helm chart sample-redis), the Debian 13
hosts on
trixie's own rootfs (its Python 3.13, systemd 257 and apt), the arm64 one on bookworm's arm64 rootfs
run through qemu-user-static (every program on it an arm64 build, emulated), installed from one
pack: the fixture's with Debian 13's packages in a folder of their own (os_packages.deb items with
`release: trixie`: repo/deb-trixie/), arm64's binaries (bin-arm64/) and packages (repo/deb-arm64/),
and every image an index of an amd64 and an arm64 image. Each host is given, and its apt reads,
only its release's and architecture's folder of the pack (the harness's own package repository is
taken off the Debian 13 and arm64 hosts first, as a site's hosts have none): they install their own
socat, conntrack, keepalived and etcd, every phase runs on all four, the arm64 worker runs arm64's
containerd, runc and CNI plugins and joins as an arm64 node, and a re-run changes nothing, with
the journal and without it (every phase re-converged, the evidence read from the hosts of both
releases and architectures). The site installs 1.35.7 and is then upgraded to 1.36.3 (day 2 on
Debian 13 and arm64: each node drained, its pack synced from its own folders, kubeadm upgrade and the
kubelet of 1.36 on it, containerd 2.1.9 of its architecture, the sandbox image of 1.36 in its
containerd configuration); then the Debian 13 worker is removed (remove_node.yml: drained, its Node
deleted, the host reset - its kubelet and containerd stopped and their units removed, its
kubelet.conf and the collection's records removed), again with no change, and, still in the
inventory, added back to the running site (install.yml --limit h5: it joins at the site's 1.36.3,
every node Ready). Last the whole site is reset (reset.yml: both releases, both architectures, the
Debian 13 master with etcd and the registry): nothing of the install is left on any host, the
journal forgets them, and a second reset of the Debian 13 hosts changes nothing. (The arm64 worker
is not removed and added too: every task on it runs emulated.)"""
import contextlib
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from harness import fixture_pack, kubeadm_double, sites
from harness.playbook import NO_RESUME, report_changes, run_playbook, TOP

INSTALL = TOP / "install.yml"
UPGRADE = TOP / "playbooks" / "upgrade.yml"
REMOVE = TOP / "playbooks" / "remove_node.yml"
RESET = TOP / "playbooks" / "reset.yml"
NODES = ("h1", "h4", "h5", "h6")
PACK_DIR = "/opt/tke/pack"   # site_repo_dir's default
TRIXIE = ("h4", "h5")
ARM64 = "h6"
# each host's kind, and its folder of the pack's packages
KINDS = {"h4": "trixie", "h5": "trixie", "h6": "bookworm/arm64"}
FOLDERS = {"h1": "repo/deb/", "h4": "repo/deb-trixie/", "h5": "repo/deb-trixie/", "h6": "repo/deb-arm64/"}
# the component: the sample chart (templates/charts/sample-redis) from the pack, installed by the
# pack's helm on the first master (Debian 13's), its image from the site registry
REDIS = {"name": "sample-redis", "namespace": "shop",
         "values": {"image": {"registry": "{{ components_image_prefix }}"}, "replicas": 1, "maxmemory": "64mb"},
         "ready": {"workloads": [{"kind": "StatefulSet", "name": "sample-redis"}], "timeout": 120}}
# an ELF file's machine (e_machine, the two bytes at offset 18)
ELF_MACHINE = {"3e00": "x86_64", "b700": "aarch64"}


@pytest.fixture(scope="module")
def site(testhosts, tmp_path_factory):
    with contextlib.ExitStack() as hosts:
        # the hosts first: their rootfs (arm64's takes minutes to build) is what the pack's build
        # fetches each kind's packages in, and the pack is built under the lock every scenario's takes
        for name, kind in KINDS.items():
            hosts.enter_context(testhosts.extra(name, kind))
        pack = fixture_pack.ensure_pack(TOP / ".cache" / "fixture-pack" / "mixed", Path(testhosts.info["TH_REPO"]),
                                        releases=("trixie",), arches=("arm64",))
        kubeadm_double.install(testhosts, names=NODES)
        for name in KINDS:
            testhosts.ssh(name, "rm /etc/apt/sources.list.d/local.list && apt-get update -qq", timeout=300)
        inv = sites.keepalived_site(testhosts, tmp_path_factory.mktemp("mixed") / "hosts.yml", pack,
                                    masters=["h4", "h1"], workers=["h5", ARM64],
                                    settings={"tke_k8s_version": "1.35.7", "components_list": [REDIS]}, services="h4")
        yield pack, inv, run_playbook(INSTALL, inv)


def arch_layers(pack, manifest, name, tag):
    """{arch: [layer digests]} of an image of the pack (an index), read from its registry storage."""
    def blob(digest):
        return json.loads((pack / "registry/docker/registry/v2/blobs/sha256" / digest[7:9] / digest[7:] / "data").read_text())
    (digest,) = [i["digest"] for i in manifest["contents"]["images"] if (i["name"], i["tag"]) == (name, tag)]
    return {m["platform"]["architecture"]: [layer["digest"] for layer in blob(m["digest"])["layers"]]
            for m in blob(digest)["manifests"]}


def elf_machine(testhosts, host, path):
    """The machine an executable on the host is built for."""
    return ELF_MACHINE.get(testhosts.ssh(host, f"od -An -j18 -N2 -tx1 {path} | tr -d ' \\n'").stdout)


def packaged(manifest, folder, name):
    """The version of package `name` in that folder of the pack."""
    (version,) = [d["version"] for d in manifest["contents"]["os_packages"]["deb"]
                  if d["name"] == name and d["file"].startswith(folder)]
    return version


def test_each_release_installs_from_its_own_folder_of_the_pack(testhosts, site):
    pack, dummy, run = site
    assert run.rc == 0, run.explain()
    assert [testhosts.ssh(h, ". /etc/os-release; echo $VERSION_ID; uname -m").stdout.split() for h in NODES] == \
        [["12", "x86_64"], ["13", "x86_64"], ["13", "x86_64"], ["12", "aarch64"]]
    manifest = json.loads((pack / "manifest.json").read_text())
    for host, folder in FOLDERS.items():
        # the host's apt source is its release's and architecture's folder, and it was given no other
        assert testhosts.ssh(host, "cat /etc/apt/sources.list.d/tke-site-pack.list").stdout == \
            f"deb [trusted=yes] file:{PACK_DIR}/{folder.rstrip('/')} ./\n"
        assert testhosts.ssh(host, f"ls {PACK_DIR}/repo").stdout.split() == [folder.split("/")[1]]
        for name in ("socat", "conntrack"):
            installed = testhosts.ssh(host, f"dpkg-query -W -f '${{Version}} ${{Architecture}}' {name}").stdout
            assert installed == packaged(manifest, folder, name) + (" arm64" if host == ARM64 else " amd64"), (host, name)
    # the Debian 13 master's keepalived and etcd are trixie's, from the pack; its etcd is the site's
    # (every master's API server keeps its objects there) and its registry serves every node's images
    for name in ("keepalived", "etcd-server"):
        assert testhosts.ssh("h4", f"dpkg-query -W -f '${{Version}}' {name}").stdout == \
            packaged(manifest, "repo/deb-trixie/", name), name
    assert testhosts.ssh("h4", "systemctl is-active etcd tke-registry").stdout.split() == ["active", "active"]
    assert testhosts.ssh("h1", "systemctl show -p LoadState --value etcd tke-registry").stdout.split() == ["not-found"] * 2
    # the two releases' packages differ (else this proves nothing)
    assert packaged(manifest, "repo/deb/", "socat") != packaged(manifest, "repo/deb-trixie/", "socat")
    # each host was given its own architecture's binaries, and only those
    assert testhosts.ssh("h5", f"ls {PACK_DIR}").stdout.split() == ["bin", "repo"]
    assert testhosts.ssh(ARM64, f"ls {PACK_DIR}").stdout.split() == ["bin-arm64", "repo"]
    for path in ("/usr/local/bin/containerd", "/usr/local/sbin/runc", "/opt/cni/bin/bridge"):
        assert [elf_machine(testhosts, h, path) for h in ("h5", ARM64)] == ["x86_64", "aarch64"], path
    # every phase ran on every host, the VIP is on a master, every node Ready (the network phase waited)
    assert all(run.stats[h]["failed"] == 0 and run.stats[h]["changed"] > 0 for h in NODES), run.explain()
    # the API (real kubectl) has the arm64 worker as an arm64 node, as its kubelet registered it
    testhosts.kubectl_client("h1")
    assert {n["metadata"]["name"]: (n["status"]["nodeInfo"]["architecture"], n["metadata"]["labels"]["kubernetes.io/arch"])
            for n in testhosts.nodes()} == {h: ("arm64", "arm64") if h == ARM64 else ("amd64", "amd64") for h in NODES}
    # its containerd (arm64's, emulated) serves the CRI, and pulled its own architecture's image of
    # the site's multi-arch index from the registry
    testhosts.ssh(ARM64, "ctr -n k8s.io images pull --hosts-dir /etc/containerd/certs.d --user admin:test-admin-password "
                         "registry.tke.com/library/hello:1.0 >/dev/null", timeout=300)
    layers = arch_layers(pack, manifest, "library/hello", "1.0")
    stored = testhosts.ssh(ARM64, "ctr -n k8s.io content ls -q").stdout.split()
    arm, amd = set(layers["arm64"]) - set(layers["amd64"]), set(layers["amd64"]) - set(layers["arm64"])
    assert arm and amd and arm <= set(stored) and not amd & set(stored), (layers, stored)
    holders = [h for h in ("h1", "h4") if sites.vip(testhosts) in testhosts.ssh(h, "ip -o addr").stdout]
    assert len(holders) == 1, holders
    assert "Every node Ready" in run.output, run.explain()
    # the component, installed from the Debian 13 first master by Helm (its release record, a Secret
    # Helm keeps), as real kubectl reads it
    objects = testhosts.ssh("h1", "kubectl --kubeconfig /etc/kubernetes/admin.conf -n shop get statefulsets,secrets "
                                  "-o name").stdout.split()
    assert "statefulset.apps/sample-redis" in objects and "secret/sh.helm.release.v1.sample-redis.v1" in objects, objects
    block = run.output.split("TASK [offline_pot.tke.components : Released with helm: component sample-redis]", 1)[1]
    assert re.match(r"[^\n]*\n(changed|ok): \[(h4|\S+ -> h4)\]", block.split("TASK [", 1)[0]), run.explain()


def test_a_rerun_changes_nothing_with_the_journal_or_without(site):
    dummy, inv, first = site
    assert first.rc == 0, first.explain()
    again = run_playbook(INSTALL, inv)
    assert again.rc == 0 and again.total("changed") == 0, again.explain()
    # every phase played again on every host, the journal's decisions set aside: what the hosts of
    # both releases report is what the install left
    off = run_playbook(INSTALL, inv, *NO_RESUME)
    assert off.rc == 0 and off.changed_hosts() == {}, off.explain()
    assert set(off.stats) >= set(NODES) and all(off.stats[h]["ok"] > 0 for h in NODES), off.explain()


def test_a_tampered_arm64_binary_is_refused_before_any_host_changes(testhosts, site, tmp_path):
    pack, inv, first = site
    assert first.rc == 0, first.explain()
    tampered = tmp_path / "tampered"
    shutil.copytree(pack, tampered, copy_function=os.link)
    runc = tampered / "bin-arm64" / "runc"
    data = bytearray(runc.read_bytes())
    runc.unlink()
    data[4096] ^= 0xFF
    runc.write_bytes(bytes(data))
    site_inv = inv.parent / "tampered.yml"   # (the site's folder: its controller state)
    site_inv.write_text(inv.read_text().replace(str(pack), str(tampered)))
    before = {h: testhosts.ssh(h, "sha256sum /usr/local/sbin/runc").stdout for h in NODES}
    run = run_playbook(INSTALL, site_inv, "--tags", "offline")
    assert run.rc != 0 and "bin-arm64/runc: altered" in run.output, run.explain()
    assert run.total("changed") == 0, run.explain()
    assert {h: testhosts.ssh(h, "sha256sum /usr/local/sbin/runc").stdout for h in NODES} == before


def test_a_host_of_an_architecture_the_pack_lacks_is_refused_before_any_host_changes(testhosts, site):
    pack, inv, first = site
    assert first.rc == 0, first.explain()
    # the scenarios' pack: amd64's binaries, packages and images alone
    other = fixture_pack.ensure_pack(TOP / ".cache" / "fixture-pack" / "e2e", Path(testhosts.info["TH_REPO"]))
    site_inv = inv.parent / "amd64-pack.yml"   # (the site's folder: its controller state)
    site_inv.write_text(inv.read_text().replace(str(pack), str(other)))
    run = run_playbook(INSTALL, site_inv, "--tags", "offline")
    text = " ".join(run.output.split())
    assert run.rc != 0 and "h6 (Debian bookworm aarch64): the site pack lacks repo/deb-arm64/ for Debian hosts; " \
        "binaries for arm64 hosts; library/" in text, run.explain()
    assert "(no arm64 image)" in text and "h5 (Debian" not in text, run.explain()
    assert run.total("changed") == 0, run.explain()
    assert testhosts.ssh(ARM64, f"ls {PACK_DIR}").stdout.split() == ["bin-arm64", "repo"]


def test_an_architecture_the_site_does_not_name_is_refused_at_precheck(testhosts, site):
    dummy, inv, first = site
    assert first.rc == 0, first.explain()
    run = run_playbook(INSTALL, inv, "--tags", "precheck", "-e", '{"precheck_arch": ["x86_64"]}')
    assert run.rc != 0, run.explain()
    failure = " ".join(run.output.split("fail listing every failing check", 1)[1].split())
    assert "h6: arch: architecture aarch64 is not supported (supported: x86_64)" in failure, run.explain()
    assert not any(f"{h}: " in failure for h in ("h1", "h4", "h5")), run.explain()
    assert run.total("changed") == 0, run.explain()


def test_the_mixed_site_upgrades_to_the_next_minor(testhosts, site):
    dummy, inv, first = site
    assert first.rc == 0, first.explain()
    testhosts.kubectl_client("h1")   # the official kubectl of the cluster's minor reads the nodes
    assert testhosts.kubelet_versions() == {h: "v1.35.7" for h in NODES}
    run = run_playbook(UPGRADE, inv, "-e", "tke_k8s_version=1.36.3")
    assert run.rc == 0, run.explain()
    assert ("cluster v1.35.7 -> v1.36.3: every node upgraded (the API reports kubelet v1.36.3 on h4, h1, h5, h6)"
            in " ".join(run.output.split())), run.explain()
    assert testhosts.kubelet_versions() == {h: "v1.36.3" for h in NODES}
    for h in NODES:
        assert testhosts.ssh(h, "cat /var/lib/offline-pot/phases/upgrade").stdout.strip() == "v1.36.3", h
        assert 'sandbox = "registry.tke.com/library/pause:3.10.2"' in \
            testhosts.ssh(h, "cat /etc/containerd/config.toml").stdout, h
    # the Debian 13 and arm64 nodes' apt source is still their own folder, the pack's files synced there
    for h in ("h4", "h5", ARM64):
        assert FOLDERS[h].split("/")[1] in testhosts.ssh(h, "cat /etc/apt/sources.list.d/tke-site-pack.list").stdout, h
    # the arm64 node runs its own architecture's build of the containerd 1.36 takes
    assert elf_machine(testhosts, ARM64, "/usr/local/bin/containerd") == "aarch64"
    assert "2.1.9" in testhosts.ssh(ARM64, "containerd --version").stdout


def test_the_debian_13_worker_is_removed_reset_and_added_back(testhosts, site):
    dummy, inv, first = site
    assert first.rc == 0, first.explain()
    # (the inventory still says 1.35.7: the release the cluster runs, 1.36.3 after the upgrade above,
    # is given on the command line)
    release = testhosts.kubelet_versions()["h1"]
    at = ("-e", f"tke_k8s_version={release.lstrip('v')}")
    run = run_playbook(REMOVE, inv, *at, "-e", "node=h5", "-e", "remove_node_confirm=true")
    assert run.rc == 0, run.explain()
    testhosts.kubectl_client("h1")
    assert sorted(n["metadata"]["name"] for n in testhosts.nodes()) == ["h1", "h4", "h6"]
    # the host reset: its kubelet and containerd stopped and their units gone, its kubelet.conf and records too
    assert testhosts.ssh("h5", "systemctl show -p LoadState --value kubelet containerd").stdout.split() == ["not-found"] * 2
    testhosts.ssh("h5", "test ! -e /etc/kubernetes/kubelet.conf && test ! -e /var/lib/offline-pot")
    again = run_playbook(REMOVE, inv, *at, "-e", "node=h5", "-e", "remove_node_confirm=true")
    assert again.rc == 0 and again.changed_hosts() == {}, again.explain()
    # the reset host, still in the inventory, joins the running site again at its release: the run
    # limited to it (docs/lifecycle.md: the other hosts' configuration names it already, so they have
    # nothing to change; the first master only answers the tasks delegated to it - the join
    # credentials, the API - and the arm64 worker, every task on it emulated, is not in the run)
    back = run_playbook(INSTALL, inv, *at, "--limit", "h5")
    assert back.rc == 0, back.explain()
    assert set(back.stats) - {"localhost"} == {"h5"}, back.explain()
    assert testhosts.kubelet_versions() == {h: release for h in NODES}
    assert {n["metadata"]["name"]: [c["status"] for c in n["status"]["conditions"] if c["type"] == "Ready"]
            for n in testhosts.nodes()} == {h: ["True"] for h in NODES}
    # the run's report has the Nodes, read through the first master although it was not in the run
    report, dummy = report_changes(back)
    table = report.read_text(encoding="utf-8").split('class="nodes"', 1)[1].split("</table>", 1)[0]
    assert {row[0]: row[1] for row in re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td>", table)} == \
        {h: "True" for h in NODES}, table


def test_the_mixed_site_is_reset_on_every_release_and_architecture(testhosts, site):
    """reset.yml over the whole site, the last scenario (it takes the site down): the Debian 13
    master's etcd and registry, the Debian 13 and arm64 workers' kubelet and containerd, every
    host's files and records gone; the journal forgets every host; a second reset of the Debian 13
    hosts changes nothing."""
    dummy, inv, first = site
    assert first.rc == 0, first.explain()
    run = run_playbook(RESET, inv, "-e", "reset_confirm=true")
    assert run.rc == 0, run.explain()
    assert set(run.changed_hosts()) == set(NODES), run.explain()
    for h in NODES:
        assert sites.left(testhosts, h) == [], (h, sites.left(testhosts, h))
    assert json.loads((inv.parent / ".tke" / "journal.json").read_text())["phases"] == {}
    # again on the Debian 13 hosts (the emulated arm64 worker, Debian 12 as test_network.py's second
    # reset, would cost CI some 45 s of emulated task time for no other code path)
    again = run_playbook(RESET, inv, "-e", "reset_confirm=true", "--limit", ",".join(TRIXIE))
    assert again.rc == 0 and again.changed_hosts() == {}, again.explain()
    assert set(again.stats) - {"localhost"} == set(TRIXIE), again.explain()

"""A site of two Debian releases from one pack (issue 27): a Debian 12 master (h1, with etcd and the
registry), a Debian 13 master (h4) holding the API VIP with it (keepalived), and a Debian 13 worker
(h5), the Debian 13 hosts on trixie's own rootfs (its Python 3.13, systemd 257 and apt), installed
from the fixture pack, which carries Debian 13's packages in a folder of their own
(os_packages.deb items with `release: trixie`: repo/deb-trixie/). Each host is given, and its apt
reads, only its release's folder of the pack (the harness's own package repository is taken off
the Debian 13 hosts first, as a site's hosts have none): they install trixie's socat, conntrack and
keepalived, the Debian 12 master bookworm's, every phase runs on all three, and a re-run changes
nothing, with the journal and without it (every phase re-converged, the evidence read from the hosts
of both releases). The site installs 1.35.7 and is then upgraded to 1.36.3 (day 2 on Debian 13: each
node drained, its pack synced from its release's folder, kubeadm upgrade and the kubelet of 1.36
on it, the sandbox image of 1.36 in its containerd configuration)."""
import contextlib
import json
from pathlib import Path

import pytest

from harness import fixture_pack, kubeadm_double, sites
from harness.playbook import NO_RESUME, run_playbook, TOP

INSTALL = TOP / "install.yml"
UPGRADE = TOP / "playbooks" / "upgrade.yml"
NODES = ("h1", "h4", "h5")
PACK_DIR = "/opt/tke/pack"   # site_repo_dir's default
TRIXIE = ("h4", "h5")


@pytest.fixture(scope="module")
def site(testhosts, tmp_path_factory):
    pack = fixture_pack.ensure_pack(TOP / ".cache" / "fixture-pack" / "e2e", Path(testhosts.info["TH_REPO"]))
    with contextlib.ExitStack() as hosts:
        for name in TRIXIE:
            hosts.enter_context(testhosts.extra(name, "trixie"))
        kubeadm_double.install(testhosts, names=["h1", *TRIXIE])
        for name in TRIXIE:
            testhosts.ssh(name, "rm /etc/apt/sources.list.d/local.list && apt-get update -qq")
        inv = sites.keepalived_site(testhosts, tmp_path_factory.mktemp("mixed") / "hosts.yml", pack,
                                    masters=["h1", "h4"], workers=["h5"], settings={"tke_k8s_version": "1.35.7"})
        yield pack, inv, run_playbook(INSTALL, inv)


def packaged(manifest, folder, name):
    """The version of package `name` in that folder of the pack."""
    (version,) = [d["version"] for d in manifest["contents"]["os_packages"]["deb"]
                  if d["name"] == name and d["file"].startswith(folder)]
    return version


def test_each_release_installs_from_its_own_folder_of_the_pack(testhosts, site):
    pack, dummy, run = site
    assert run.rc == 0, run.explain()
    assert [testhosts.ssh(h, ". /etc/os-release; echo $VERSION_ID").stdout.strip() for h in ("h1", *TRIXIE)] == \
        ["12", "13", "13"]
    manifest = json.loads((pack / "manifest.json").read_text())
    for host, folder in (("h1", "repo/deb/"), ("h4", "repo/deb-trixie/"), ("h5", "repo/deb-trixie/")):
        # the host's apt source is its release's folder, and it was given no other
        assert testhosts.ssh(host, "cat /etc/apt/sources.list.d/tke-site-pack.list").stdout == \
            f"deb [trusted=yes] file:{PACK_DIR}/{folder.rstrip('/')} ./\n"
        assert testhosts.ssh(host, f"ls {PACK_DIR}/repo").stdout.split() == [folder.split("/")[1]]
        for name in ("socat", "conntrack"):
            installed = testhosts.ssh(host, f"dpkg-query -W -f '${{Version}}' {name}").stdout
            assert installed == packaged(manifest, folder, name), (host, name)
    # the Debian 13 master's keepalived is trixie's, from the pack
    assert testhosts.ssh("h4", "dpkg-query -W -f '${Version}' keepalived").stdout == \
        packaged(manifest, "repo/deb-trixie/", "keepalived")
    # the two releases' packages differ (else this proves nothing)
    assert packaged(manifest, "repo/deb/", "socat") != packaged(manifest, "repo/deb-trixie/", "socat")
    # every phase ran on every host, the VIP is on a master, every node Ready (the network phase waited)
    assert all(run.stats[h]["failed"] == 0 and run.stats[h]["changed"] > 0 for h in ("h1", *TRIXIE)), run.explain()
    holders = [h for h in ("h1", "h4") if sites.vip(testhosts) in testhosts.ssh(h, "ip -o addr").stdout]
    assert len(holders) == 1, holders
    assert "Every node Ready" in run.output, run.explain()


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


def test_the_mixed_site_upgrades_to_the_next_minor(testhosts, site):
    dummy, inv, first = site
    assert first.rc == 0, first.explain()
    testhosts.kubectl_client("h1")   # the official kubectl of the cluster's minor reads the nodes
    assert testhosts.kubelet_versions() == {h: "v1.35.7" for h in NODES}
    run = run_playbook(UPGRADE, inv, "-e", "tke_k8s_version=1.36.3")
    assert run.rc == 0, run.explain()
    assert ("cluster v1.35.7 -> v1.36.3: every node upgraded (the API reports kubelet v1.36.3 on h1, h4, h5)"
            in " ".join(run.output.split())), run.explain()
    assert testhosts.kubelet_versions() == {h: "v1.36.3" for h in NODES}
    for h in NODES:
        assert testhosts.ssh(h, "cat /var/lib/offline-pot/phases/upgrade").stdout.strip() == "v1.36.3", h
        assert 'sandbox = "registry.tke.com/library/pause:3.10.2"' in \
            testhosts.ssh(h, "cat /etc/containerd/config.toml").stdout, h
    # the Debian 13 nodes' apt source is still their release's folder, the pack's files synced there
    for h in ("h4", "h5"):
        assert "deb-trixie" in testhosts.ssh(h, "cat /etc/apt/sources.list.d/tke-site-pack.list").stdout, h

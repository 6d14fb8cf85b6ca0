"""A site of two Debian releases from one pack (issue 27): a Debian 12 master (h1, with etcd and the
registry) and a Debian 13 worker (h4: trixie's own rootfs, its Python 3.13, systemd 257 and apt),
installed from the fixture pack, which carries Debian 13's packages in a folder of their own
(os_packages.deb items with `release: trixie`: repo/deb-trixie/). Each host is given, and its apt
reads, only its release's folder of the pack (the harness's own package repository is taken off the
worker first, as a site's hosts have none): the worker installs trixie's socat and conntrack, the
master bookworm's, every phase runs on both, and a re-run changes nothing."""
import json
from pathlib import Path

import pytest

from harness import fixture_pack, kubeadm_double
from harness.playbook import run_playbook, TOP

INSTALL = TOP / "install.yml"
PACK_DIR = "/opt/tke/pack"   # site_repo_dir's default


@pytest.fixture(scope="module")
def site(testhosts, tmp_path_factory):
    pack = fixture_pack.ensure_pack(TOP / ".cache" / "fixture-pack" / "e2e", Path(testhosts.info["TH_REPO"]))
    with testhosts.extra("h4", "trixie"):
        kubeadm_double.install(testhosts, names=["h1", "h4"])
        testhosts.ssh("h4", "rm /etc/apt/sources.list.d/local.list && apt-get update -qq")
        inv = testhosts.write_inventory(
            tmp_path_factory.mktemp("mixed") / "hosts.yml",
            groups={"masters": ["h1"], "workers": ["h4"], "etcd": ["h1"], "registry": ["h1"]},
            group_vars={"tke_site_pack": str(pack), "site_repo_packages": ["conntrack", "socat"],
                        "precheck_disk": [{"path": "/var/lib", "min_free_gb": 1}],
                        "precheck_disk_etcd": [{"path": "/var/lib/etcd", "min_free_gb": 1}]})
        yield pack, inv, run_playbook(INSTALL, inv)


def packaged(manifest, folder, name):
    """The version of package `name` in that folder of the pack."""
    (version,) = [d["version"] for d in manifest["contents"]["os_packages"]["deb"]
                  if d["name"] == name and d["file"].startswith(folder)]
    return version


def test_each_release_installs_from_its_own_folder_of_the_pack(testhosts, site):
    pack, dummy, run = site
    assert run.rc == 0, run.explain()
    assert testhosts.ssh("h4", ". /etc/os-release; echo $VERSION_ID").stdout.strip() == "13"
    manifest = json.loads((pack / "manifest.json").read_text())
    for host, folder in (("h1", "repo/deb/"), ("h4", "repo/deb-trixie/")):
        # the host's apt source is its release's folder, and it was given no other
        assert testhosts.ssh(host, "cat /etc/apt/sources.list.d/tke-site-pack.list").stdout == \
            f"deb [trusted=yes] file:{PACK_DIR}/{folder.rstrip('/')} ./\n"
        assert testhosts.ssh(host, f"ls {PACK_DIR}/repo").stdout.split() == [folder.split("/")[1]]
        for name in ("socat", "conntrack"):
            installed = testhosts.ssh(host, f"dpkg-query -W -f '${{Version}}' {name}").stdout
            assert installed == packaged(manifest, folder, name), (host, name)
    # the two releases' packages differ (else this proves nothing)
    assert packaged(manifest, "repo/deb/", "socat") != packaged(manifest, "repo/deb-trixie/", "socat")
    # every phase ran on the worker, and both nodes are Ready (the network phase waited for it)
    assert run.stats["h4"]["failed"] == 0 and run.stats["h4"]["changed"] > 0, run.explain()
    assert "Every node Ready" in run.output, run.explain()


def test_a_rerun_changes_nothing(site):
    dummy, inv, first = site
    assert first.rc == 0, first.explain()
    again = run_playbook(INSTALL, inv)
    assert again.rc == 0 and again.total("changed") == 0, again.explain()

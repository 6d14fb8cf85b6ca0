"""Site identity and the nodes' Kubernetes version (plugin_utils/site_identity.py), and how the
start of a phase reads them from the hosts' single raw read (install_journal.parse_host_files)."""
import subprocess

import pytest

from ansible_collections.offline_pot.tke.plugins.plugin_utils import install_journal as ij
from ansible_collections.offline_pot.tke.plugins.plugin_utils import site_identity as si

CA = "a" * 64
OTHER_CA = "b" * 64


def test_a_new_identity_is_random_and_takes_the_ca_once_there_is_one():
    first, second = si.new(), si.new()
    assert first["id"] != second["id"] and "ca_sha256" not in first
    assert si.with_ca(first, CA) == {"id": first["id"], "ca_sha256": CA}
    # made at the first install: a later CA does not replace the site's
    assert si.with_ca({"id": "x", "ca_sha256": CA}, OTHER_CA)["ca_sha256"] == CA
    assert si.load(si.dump(si.with_ca(first, CA))) == si.with_ca(first, CA)
    assert si.load("") is None
    with pytest.raises(ValueError):
        si.load('{"format": 1}')


def test_the_line_a_host_records_round_trips_and_holds_no_unknown_ca():
    identity = {"id": "0123", "ca_sha256": CA}
    assert si.host_text(identity) == f"id=0123 ca_sha256={CA}"
    assert si.parse_host_text(si.host_text(identity)) == identity
    assert si.host_text({"id": "0123", "ca_sha256": "none"}) == "id=0123"
    assert si.parse_host_text("") is None and si.parse_host_text("garbage") is None


def test_ca_fingerprint_is_the_sha256_of_the_der(tmp_path):
    key, crt = tmp_path / "k", tmp_path / "c"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ed25519", "-nodes", "-keyout", str(key), "-out", str(crt),
                    "-subj", "/CN=kubernetes", "-days", "1"], check=True, capture_output=True)
    want = subprocess.run(f"openssl x509 -in {crt} -outform DER | sha256sum", shell=True, check=True,
                          capture_output=True, text=True).stdout.split()[0]
    assert si.ca_fingerprint(crt.read_text()) == want
    assert si.ca_fingerprint(crt.read_text() + crt.read_text()) == want
    assert si.ca_fingerprint("") is None


def test_hosts_of_no_site_install_and_hosts_of_this_site_go_on():
    site = {"id": "s1", "ca_sha256": CA}
    assert si.conflicts(site, {"h1": None, "h2": {"id": "s1", "ca_sha256": CA}, "h3": {"id": "s1"}}, "/d") == []
    # a controller before its CA exists and hosts that recorded the same site with it
    assert si.conflicts({"id": "s1"}, {"h1": {"id": "s1", "ca_sha256": CA}}, "/d") == []
    # a fresh site: no identity anywhere
    assert si.conflicts(None, {"h1": None, "h2": None}, "/d") == []


def test_a_host_of_another_site_or_a_controller_without_identity_is_refused_naming_both():
    site = {"id": "s1", "ca_sha256": CA}
    out = si.conflicts(site, {"h1": {"id": "s2", "ca_sha256": OTHER_CA}, "h2": None}, "/d")
    assert out == [f"host h1 records site s2, CA sha256 {OTHER_CA} but the controller has site s1, CA sha256 {CA}: "
                   "it belongs to another site"]
    out = si.conflicts(None, {"h2": {"id": "s1"}, "h1": {"id": "s1"}}, "/inv/.tke")
    assert out == ["host h1 records site s1 but the controller has none: the controller's state (/inv/.tke) has no "
                   "site identity", "host h2 records site s1 but the controller has none: the controller's state "
                   "(/inv/.tke) has no site identity"]
    # the same site id with another CA (the controller's PKI store was lost and remade)
    out = si.conflicts({"id": "s1", "ca_sha256": "none"}, {"h1": {"id": "s1", "ca_sha256": CA}}, "/d")
    assert out and "installed with another cluster CA" in out[0] and "CA sha256 none" in out[0]
    assert "restore" in si.WHAT_TO_DO and "reset" in si.WHAT_TO_DO


def test_the_hosts_read_brings_the_identity_and_version_beside_the_phase_records():
    out = ("0123abcd\n\n/var/lib/offline-pot/phases/host_init:ff00\n/var/lib/offline-pot/phases/upgrade:1.31.1\n"
           f"/var/lib/offline-pot/site:id=s1 ca_sha256={CA}\n/var/lib/offline-pot/kubernetes:1.30.4\n")
    assert ij.parse_host_read(out, "/var/lib/offline-pot/phases") == (
        "0123abcd", {"host_init": "ff00", "upgrade": "1.31.1"})
    files = ij.parse_host_files(out, "/var/lib/offline-pot")
    assert files == {"site": f"id=s1 ca_sha256={CA}", "kubernetes": "1.30.4"}
    assert si.parse_host_text(files["site"]) == {"id": "s1", "ca_sha256": CA}


def test_node_versions_prefer_the_upgrade_record():
    records = {"h1": {"upgrade": "1.31.1", "pki": "x"}, "h2": {"pki": "x"}, "h3": {}}
    versions = {"h1": "1.30.4", "h2": "1.30.4"}
    assert si.node_versions(records, versions) == {"h1": "1.31.1", "h2": "1.30.4"}
    assert si.node_versions({"h1": {"upgrade": "v1.31.1"}}, {}) == {"h1": "1.31.1"}


def test_an_inventory_version_other_than_the_nodes_is_refused_naming_both_and_the_command():
    assert si.version_conflicts("1.31.1", {"h1": "1.31.1", "h2": "1.31.1"}) == []
    assert si.version_conflicts("1.30.4", {}) == []
    older = si.version_conflicts("1.30.4", {"h1": "1.31.1", "h2": "1.31.1"})
    assert len(older) == 1 and "inventory says v1.30.4" in older[0] and "h1: v1.31.1, h2: v1.31.1" in older[0]
    assert "never downgraded" in older[0] and 'tke_k8s_version: "1.31.1"' in older[0]
    newer = si.version_conflicts("v1.31.1", {"h1": "1.30.4"})
    assert "playbooks/upgrade.yml" in newer[0] and "h1: v1.30.4" in newer[0]


def test_end_of_life_install():
    sources, supported = ["1.30.4", "1.31.1"], ["1.35.7", "1.36.3"]
    assert si.end_of_life_install("1.36.3", {}, ["h1"], supported, sources) == []
    assert si.end_of_life_install("v1.31.1", {"h1": "1.31.1"}, ["h1"], supported, sources) == []
    assert si.end_of_life_install("1.31.1", {}, ["h1"], supported, sources, allowed=True) == []
    assert si.end_of_life_install("1.18.4", {}, ["h1"], supported, sources) == []   # inventory_rules' to refuse
    said = si.end_of_life_install("1.30.4", {}, ["h2", "h1"], supported, sources)
    assert len(said) == 1 and said[0].startswith("tke_k8s_version: 1.30.4 is past upstream's end of life and no node "
                                                 "of h1, h2 runs Kubernetes yet"), said

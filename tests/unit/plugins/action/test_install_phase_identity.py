"""install_phase's start refuses, before the journal is written, hosts of another site, a controller
state without the site's identity or CA, and a tke_k8s_version other than the nodes' (the action's
own code on a state directory, with the hosts' raw read as phase_start.yml registers it)."""
import json
import os
import subprocess
import types

import pytest
from ansible.errors import AnsibleActionFail

from ansible_collections.offline_pot.tke.plugins.action.install_phase import ActionModule
from ansible_collections.offline_pot.tke.plugins.plugin_utils import site_identity as si

RECORDS = "/var/lib/offline-pot/phases"


def action(check_mode=False):
    mod = ActionModule.__new__(ActionModule)
    mod._templar = types.SimpleNamespace(template=lambda value: value)
    mod._task = types.SimpleNamespace(check_mode=check_mode, diff=False)
    return mod


def read(site=None, version=None, upgrade=None):
    lines = ["0123abcd", "", f"{RECORDS}/precheck:ff"]
    if upgrade:
        lines.append(f"{RECORDS}/upgrade:{upgrade}")
    if site:
        lines.append(f"/var/lib/offline-pot/site:{site}")
    if version:
        lines.append(f"/var/lib/offline-pot/kubernetes:{version}")
    return {"rc": 0, "stdout": "\n".join(lines) + "\n"}


def start(state_dir, reads, version="1.30.4", check_mode=False, **settings):
    """What the journal's start does up to the decision: the identity, then the comparison."""
    mod = action(check_mode)
    task_vars = {"tke_host_record_dir": RECORDS, "tke_k8s_version": version,
                 "hostvars": {h: {"__tke_host_read": r} for h, r in reads.items()}, **settings}

    def var(name, default=None):
        return task_vars.get(name, default)
    identity = mod._identity(str(state_dir), var)
    records = {h: {} for h in reads}
    if upgrades := {h: r for h, r in reads.items() if "upgrade:" in r["stdout"]}:
        records.update({h: {"upgrade": r["stdout"].split("upgrade:")[1].split()[0]} for h, r in upgrades.items()})
    mod._refuse_foreign(identity, str(state_dir), list(reads), records, task_vars)
    return mod, identity


@pytest.fixture
def ca(tmp_path):
    pki = tmp_path / ".tke" / "pki"
    pki.mkdir(parents=True)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ed25519", "-nodes", "-keyout", str(pki / "ca.key"),
                    "-out", str(pki / "ca.crt"), "-subj", "/CN=kubernetes", "-days", "1"], check=True,
                   capture_output=True)
    return si.ca_fingerprint((pki / "ca.crt").read_text())


def test_a_first_install_makes_the_identity_with_the_ca(tmp_path, ca):
    mod, identity = start(tmp_path / ".tke", {"h1": read(), "h2": read()})
    assert mod._identity_new and identity["ca_sha256"] == ca and len(identity["id"]) == 32


def test_an_empty_controller_state_is_refused_when_hosts_record_a_site(tmp_path):
    with pytest.raises(AnsibleActionFail) as err:
        start(tmp_path / ".tke", {"h1": read("id=s1 ca_sha256=" + "a" * 64), "h2": read()})
    text = str(err.value)
    assert text.startswith("this run would change hosts of another installation, nothing was written on any host: "
                           "host h1 records site s1, CA sha256 " + "a" * 64 + " but the controller has none")
    assert "h2" not in text and si.WHAT_TO_DO in text


def test_a_host_of_another_site_and_a_lost_pki_store_are_refused(tmp_path, ca):
    state = tmp_path / ".tke"
    (state / "site.json").write_text(json.dumps({"id": "s1", "ca_sha256": ca}))
    start(state, {"h1": read(f"id=s1 ca_sha256={ca}"), "h2": read("id=s1")})   # this site's hosts
    with pytest.raises(AnsibleActionFail, match="host h2 records site s9 .* it belongs to another site"):
        start(state, {"h1": read(f"id=s1 ca_sha256={ca}"), "h2": read("id=s9")})
    os.unlink(state / "pki" / "ca.crt")   # a new CA would be issued over the live cluster's
    with pytest.raises(AnsibleActionFail, match="controller has site s1, CA sha256 none: it was installed with "
                                                "another cluster CA"):
        start(state, {"h1": read(f"id=s1 ca_sha256={ca}")})


def test_a_version_other_than_the_nodes_is_refused(tmp_path):
    start(tmp_path / ".tke", {"h1": read(version="1.30.4")})
    with pytest.raises(AnsibleActionFail, match=r"the inventory says v1.30.4 but the cluster's nodes run h1: "
                                                r"v1.31.1, h2: v1.31.1; .*never downgraded"):
        start(tmp_path / ".tke", {"h1": read(version="1.30.4", upgrade="1.31.1"), "h2": read(upgrade="1.31.1")})
    with pytest.raises(AnsibleActionFail, match="run playbooks/upgrade.yml"):
        start(tmp_path / ".tke", {"h1": read(version="1.30.4")}, version="1.31.1")


def test_a_day_two_playbook_refuses_nodes_of_another_version(tmp_path):
    """state=versions (tasks/versions.yml of the day-2 playbooks): the same comparison, nothing else."""
    mod = action()
    reads = {"h1": read(version="1.30.4", upgrade="1.31.1"), "h2": read(version="1.30.4")}
    task_vars = {"tke_host_record_dir": RECORDS, "tke_k8s_version": "1.31.1", "ansible_play_hosts": ["h1", "h2"],
                 "hostvars": {h: {"__tke_host_read": r} for h, r in reads.items()}}
    with pytest.raises(AnsibleActionFail) as err:
        mod._versions({}, {}, task_vars)
    assert "the inventory says v1.31.1 but the cluster's nodes run h2: v1.30.4; this playbook does not change " \
           "the version a cluster runs: to move the cluster to v1.31.1 run playbooks/upgrade.yml" in str(err.value)
    assert str(err.value).endswith("(nothing was touched)")
    reads["h2"] = read(version="1.31.1")
    task_vars["hostvars"]["h2"] = {"__tke_host_read": reads["h2"]}
    assert mod._versions({}, {}, task_vars)["msg"] == "every node runs the inventory's version (h1, h2)"


RELEASES = {"tke_supported_k8s_versions": ["1.35.7", "1.36.3"], "tke_upgrade_source_k8s_versions": ["1.30.4", "1.31.1"]}


def test_a_new_site_at_a_release_past_its_end_of_life_is_refused(tmp_path):
    """install.yml starts a new cluster (no site identity on the controller, no node runs a version) at
    a supported release only; tke_allow_eol_install lets it; a site that runs such a release is not
    refused (its day-2 runs and upgrade.yml act on it)."""
    state = tmp_path / ".tke"
    with pytest.raises(AnsibleActionFail) as err:
        start(state, {"h1": read(), "h2": read()}, version="1.31.1", **RELEASES)
    said = str(err.value)
    assert said.startswith("tke_k8s_version: 1.31.1 is past upstream's end of life and no node of h1, h2 runs "
                           "Kubernetes yet: install.yml starts a new cluster at a supported release only (1.35.7, "
                           "1.36.3: tke_supported_k8s_versions)") and "tke_allow_eol_install: true" in said, said
    assert said.endswith("(nothing was written on any host)") and not (state / si.CONTROLLER_FILE).exists()
    start(state, {"h1": read(), "h2": read()}, version="1.36.3", **RELEASES)
    start(state, {"h1": read(), "h2": read()}, version="1.31.1", tke_allow_eol_install=True, **RELEASES)
    # nodes that run it: an existing cluster
    start(state, {"h1": read(version="1.31.1"), "h2": read()}, version="1.31.1", **RELEASES)

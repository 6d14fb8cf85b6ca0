"""`install.yml --check --diff` on a fresh site (the HA keepalived site: h1 and h2 masters, h3 a
worker, external etcd and the registry on h1): the inventory is validated and the prerequisites
checked on every host (precheck only reads); every later phase is named with the hosts it would run
on, and not checked there, since the work it checks (the pack's repository, certificates, units,
the API server) is made by phases not done yet; each host says once what would run on it, as a
change; nothing changes - proven with a timestamp and `find -newer` on every host and a snapshot of
the controller's site directory (docs/install.md, "Preview with --check").

The same preview then runs from the execution environment image, built here with ansible-builder
and podman and run through ansible-runner as AWX runs a job (docs/testing.md, "The execution
environment"): the same hosts say the same, and nothing changes either.

The install on this site shape is test_install_e2e.py's; since the preview changes nothing here,
what it proves about fresh hosts holds after a preview too. Check mode over an installed site, and
the masked diff of a changed secret, are test_install_e2e.py's.
"""
import base64
import hashlib
import json
import re
import time
from pathlib import Path

import pytest
import yaml

from ansible_collections.offline_pot.tke.plugins.plugin_utils.install_journal import PHASE_NAMES
from harness import ee_image, fixture_pack, sites
from harness.playbook import TOP, run_playbook

INSTALL = TOP / "install.yml"
VERSION = yaml.safe_load((TOP / "galaxy.yml").read_text())["version"]
# the site's secrets, each its own value (containerd's registry auth is registry_password)
SECRETS = {"tke_admin_password": "adm-Preview-4711-xyz", "registry_password": "reg-Preview-0815-abc",
           "ha_keepalived_auth_pass": "kaPw2718"}
# Where any SSH login by Ansible writes, none of it the install's doing:
# /proc, /sys: the kernel's views, not files; /run, /tmp: runtime tmpfs (logind's session state;
# /tmp holds the stamp itself); /var/log/journal: journald logs every login and every module
# invocation; /root/.ansible/tmp: Ansible's remote temporary directory, each task's module is put
# there and removed (made before the stamp, so only it and its inside change).
PRUNE = ("/proc", "/sys", "/run", "/tmp", "/var/log/journal", "/root/.ansible/tmp")
# sshd's login accounting of each connection (pam_lastlog, utmp)
LOGIN_RECORDS = ("/var/log/lastlog", "/var/log/wtmp", "/var/log/btmp")
# (precheck's etcd-disk probe writes and removes a scratch file beside /var/lib/etcd and gives the
# directory back its times: -newer compares modification times, which it leaves as they were)
FIND = ("find / -xdev \\( " + " -o ".join(f"-path {p}" for p in PRUNE) + " \\) -prune -o -newer /tmp/stamp "
        + " ".join(f"! -path {p}" for p in LOGIN_RECORDS) + " -print")

# what each host says would run on it, in the preview of the fresh site
WOULD = {"h1": "offline, host_init, pki, runtime, registry, etcd, ha, control_plane, network, components",
         "h2": "offline, host_init, pki, runtime, registry, ha, control_plane, network, components",
         "h3": "offline, host_init, pki, runtime, registry, ha, nodes, network"}


def snapshot(directory: Path) -> dict[str, str]:
    return {str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(directory.rglob("*"))}


@pytest.fixture(scope="module")
def site(testhosts, tmp_path_factory):
    pack = fixture_pack.ensure_pack(TOP / ".cache" / "fixture-pack" / "e2e", Path(testhosts.info["TH_REPO"]))
    d = tmp_path_factory.mktemp("check")
    return {"dir": d, "pack": pack, "inv": sites.ha_keepalived(testhosts, d / "hosts.yml", pack, **SECRETS)}


def previewed(th, site, preview_run):
    """preview_run() with a time stamp on every host before it, and what changed after it: on the
    hosts (changed_on) and in the site's folder (site_before, site_after)."""
    before = snapshot(site["dir"])
    for h in th.names:
        th.ssh(h, "mkdir -p /root/.ansible/tmp && touch /tmp/stamp")
    run = preview_run()
    run.changed_on = {h: th.ssh(h, FIND).stdout.split() for h in th.names}
    run.site_before, run.site_after, run.site_dir = before, snapshot(site["dir"]), site["dir"]
    return run


@pytest.fixture(scope="module")
def preview(testhosts, site):
    return previewed(testhosts, site, lambda: run_playbook(INSTALL, site["inv"], "--check", "--diff"))


def test_check_mode_previews_every_phase_of_a_fresh_site(preview):
    run = preview
    assert run.rc == 0, run.explain()
    flat = " ".join(run.output.split())
    hosts = {"etcd": "h1", "control_plane": "h1, h2", "nodes": "h3", "components": "h1, h2"}
    for n, phase in enumerate(PHASE_NAMES, 1):
        if phase == "validate" or phase.startswith("hook:"):
            continue
        on = hosts.get(phase, "h1, h2, h3")
        # (its line up to the next phase's, in the plan's list of them)
        line = re.search(rf"phase {n}/\d+ {phase}: running on {on}\b(?:(?! - phase \d).)*", flat)
        assert line, (phase, run.explain())
        if phase == "precheck":     # it only reads: checked on the fresh hosts
            assert "not checked" not in line[0], line[0]
        else:                       # the phases before it (or it) not done there: said, not checked
            why = "not done there yet" if phase == "offline" else "offline"
            assert f"check mode, not checked on {on} (" in line[0] and why in line[0], line[0]
    # the prerequisites were checked on every host; no later phase's task ran anywhere
    names = run.task_names()
    assert any(n.startswith("TASK [offline_pot.tke.precheck : Gather facts") for n in names), run.explain()
    for role in ("site_repo", "host_init", "pki", "container_runtime", "registry", "etcd", "ha_keepalived",
                 "control_plane", "nodes", "network", "components"):
        assert not any(n.startswith(f"TASK [offline_pot.tke.{role} : ") for n in names), (role, sorted(names))
    # each host says once what would run on it, as a change (the recap counts it)
    for h, phases in WOULD.items():
        assert re.search(rf"changed: \[{h}\] => msg: '?would run {phases} here; not checked", flat), (h, run.explain())
    # (on h1 also the controller's records of the preview: tke.json, the precheck report)
    assert run.stats["h2"]["changed"] == run.stats["h3"]["changed"] == 1, run.explain()
    assert "TASK [What was installed and where its files are]" in run.output


def test_check_mode_shows_no_secret(preview):
    """The preview prints none of the site's secrets, in clear or base64."""
    out = preview.output
    for name, value in SECRETS.items():
        for form in (value, base64.b64encode(value.encode()).decode()):
            assert form not in out, f"{name} printed by the --check --diff run"


def test_check_mode_changes_nothing_anywhere(preview):
    assert preview.changed_on == {h: [] for h in preview.changed_on}, preview.changed_on
    # on the controller: no PKI store, journal or tke.json; the site directory as it was
    assert preview.site_after == preview.site_before, (preview.site_before, preview.site_after)
    assert not (preview.site_dir / ".tke").exists()


@pytest.fixture(scope="module")
def ee_preview(testhosts, site, tmp_path_factory):
    """The same preview from the execution environment image, built here (tests/harness/ee_image.py)
    and run by ansible-runner with process isolation, as AWX runs a job: the collection, Ansible and
    their Python and system needs from the image alone (this checkout is not mounted; only the site's
    folder, the pack and the SSH key are)."""
    th = testhosts
    start = time.monotonic()
    built = ee_image.build(tmp_path_factory.mktemp("ee"))
    assert built.returncode == 0, built.stdout[-6000:] + built.stderr[-3000:]
    print(f"\n[timing] execution environment built: {time.monotonic() - start:.1f} s")
    return previewed(th, site, lambda: ee_image.run(tmp_path_factory.mktemp("ee-job"), "offline_pot.tke.install",
                                                    site["inv"], [site["pack"], Path(th.key)], "--check", "--diff"))


def test_the_execution_environment_image_holds_the_collection_and_its_needs(ee_preview):
    inside = ee_image.podman("run", "--rm", "--user=0", ee_image.TAG, "sh", "-c",
                             "ansible-galaxy collection list offline_pot.tke; for t in ssh sshpass zstd; do command -v $t; done; "
                             "python3 -c 'import cryptography, paramiko, mitogen, yaml; print(\"imports\")'").stdout
    assert re.search(rf"offline_pot\.tke\s+{re.escape(VERSION)}", inside), inside
    assert "/usr/share/ansible/collections" in inside and "imports" in inside, inside
    assert all(f"/usr/bin/{tool}" in inside for tool in ("ssh", "sshpass", "zstd")), inside


def test_the_execution_environment_previews_the_fresh_site(ee_preview):
    run = ee_preview
    assert run.rc == 0 and run.status == "successful", run.output[-6000:]
    # each host says what would run on it, as from the checkout; precheck ran on every host
    said = {e["event_data"]["host"]: e["event_data"]["res"].get("msg", "") for e in run.events
            if e.get("event") == "runner_on_ok" and e["event_data"].get("res", {}).get("changed")
            and str(e["event_data"]["res"].get("msg", "")).startswith("would run ")}
    for h, phases in WOULD.items():
        assert said.get(h, "").startswith(f"would run {phases} here; not checked"), (h, said)
    prechecked = {e["event_data"]["host"] for e in run.events if e.get("event") == "runner_on_ok"
                  and e["event_data"].get("task", "").startswith("Gather facts and evaluate the prerequisites")}
    assert prechecked == set(WOULD), prechecked
    assert run.stats["changed"].get("h2") == run.stats["changed"].get("h3") == 1, run.stats
    # nor in the job's events, which AWX keeps in its database (every task's arguments and result)
    events = json.dumps(list(run.events))
    for name, value in SECRETS.items():
        for form in (value, base64.b64encode(value.encode()).decode()):
            assert form not in run.output, f"{name} printed by the execution environment's --check --diff run"
            assert form not in events, f"{name} in the execution environment job's events"


def test_the_execution_environment_changes_nothing_anywhere(ee_preview):
    assert ee_preview.changed_on == {h: [] for h in ee_preview.changed_on}, ee_preview.changed_on
    assert ee_preview.site_after == ee_preview.site_before, (ee_preview.site_before, ee_preview.site_after)
    assert not (ee_preview.site_dir / ".tke").exists()

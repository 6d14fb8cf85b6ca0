"""`install.yml --check --diff` on a fresh site (the HA keepalived site: h1 and h2 masters, h3 a
worker, external etcd and the registry on h1): every phase runs to the end, reports what it would
change, and changes nothing - proven with a timestamp and `find -newer` on every host and a
snapshot of the controller's site directory (docs/install.md, "Preview with --check").

The install on this site shape is test_install_e2e.py's; since the preview changes nothing here,
what it proves about fresh hosts holds after a preview too.
"""
import base64
import hashlib
import re
from pathlib import Path

import pytest

from ansible_collections.offline_pot.tke.plugins.plugin_utils.install_journal import PHASE_NAMES
from harness import fixture_pack, sites
from harness.playbook import TOP, run_playbook

INSTALL = TOP / "install.yml"
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


def snapshot(directory: Path) -> dict[str, str]:
    return {str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(directory.rglob("*"))}


@pytest.fixture(scope="module")
def preview(testhosts, tmp_path_factory):
    th = testhosts
    pack = fixture_pack.ensure_pack(TOP / ".cache" / "fixture-pack" / "e2e", Path(th.info["TH_REPO"]))
    d = tmp_path_factory.mktemp("check")
    inv = sites.ha_keepalived(th, d / "hosts.yml", pack, **SECRETS)
    before = snapshot(d)
    for h in th.names:
        th.ssh(h, "mkdir -p /root/.ansible/tmp && touch /tmp/stamp")
    run = run_playbook(INSTALL, inv, "--check", "--diff")
    run.changed_on = {h: th.ssh(h, FIND).stdout.split() for h in th.names}
    run.site_before, run.site_after, run.site_dir = before, snapshot(d), d
    return run


def test_check_mode_previews_every_phase_of_a_fresh_site(preview):
    run = preview
    assert run.rc == 0, run.explain()
    # every phase ran, on its hosts, then the cluster's health and the summary
    hosts = {"etcd": "h1", "control_plane": "h1, h2", "nodes": "h3", "components": "h1, h2"}
    for n, phase in enumerate(PHASE_NAMES, 1):
        if phase != "validate" and not phase.startswith("hook:"):
            assert re.search(rf"phase {n}/\d+ {phase}: running on {hosts.get(phase, 'h1, h2, h3')}\b", run.output), \
                (phase, run.explain())
    assert "TASK [Nodes Ready, the network's pods (check mode, no cluster yet)]" in run.output, run.explain()
    assert "TASK [What was installed and where its files are]" in run.output
    assert set(run.stats) == {"h1", "h2", "h3"} and all(s["changed"] > 0 for s in run.stats.values()), run.explain()
    changed = "\n".join(run.changed_tasks())
    # what every phase would do, reported as a change by the task that would do it
    for task, host in [("site_repo : Bring the package repository and this host's binaries", "h3"),
                       ("host_init : Managed /etc/hosts block", "h2"),
                       ("pki : Write the certificates, keys and kubeconfigs this host needs", "h1"),
                       ("container_runtime : Containerd configuration", "h3"),
                       ("registry : Registry configuration", "h1"),
                       ("etcd : Configure this member", "h1"),
                       ("ha_keepalived : Configure keepalived", "h2"),
                       ("control_plane : Run the kubeadm init phases up to the static pods", "h1"),
                       ("control_plane : Run the kubeadm control-plane join phases", "h2"),
                       ("nodes : Run the kubeadm join phases of a worker", "h3"),
                       ("network : The network's CNI configuration on this node", "h3")]:
        assert re.search(rf"{re.escape(task)}.*: changed: \[{host}\]", changed), (task, host, changed)
    # what cannot be checked before an earlier phase has run says what it would do and why
    for said in ("would install conntrack, socat from it", "would install etcd-server, etcd-client from it",
                 "the certificates are not issued yet (the pki phase would issue them)",
                 "the API server does not run yet (the control_plane phase would start it)",
                 "would apply the flannel network"):
        assert said in " ".join(run.output.split()), (said, run.explain())
    # the diff of what would be written (--diff): etcd's configuration and unit on h1
    assert '+name: "h1"' in run.output and "+ExecStart=/usr/bin/etcd --config-file /etc/etcd/etcd.conf.yml" in run.output


def test_check_mode_diff_shows_no_secret(preview):
    """--diff of a fresh site shows every file it would write, the secrets masked: containerd's
    registry auth and keepalived's auth_pass (modules/secret_file), no secret in clear or base64."""
    out = preview.output
    for name, value in SECRETS.items():
        for form in (value, base64.b64encode(value.encode()).decode()):
            assert form not in out, f"{name} printed by the --check --diff run"
    # the files are in the diff, their secrets masked
    assert 'password = "********"' in out and "auth_pass ********" in out, preview.explain()
    assert "/etc/containerd/config.toml (secrets masked)" in out


def test_check_mode_changes_nothing_anywhere(preview):
    assert preview.changed_on == {h: [] for h in preview.changed_on}, preview.changed_on
    # on the controller: no PKI store, journal or tke.json; the site directory as it was
    assert preview.site_after == preview.site_before, (preview.site_before, preview.site_after)
    assert not (preview.site_dir / ".tke").exists()

"""install.yml orchestration on real hosts: phase journal, hooks in order, skip list, force_phases,
changed inputs, tags (resume after a failing hook: test_install_e2e.py)."""
import json
import re

import pytest

from ansible_collections.offline_pot.tke.plugins.plugin_utils.install_journal import PHASE_NAMES
from harness import hooks
from harness.playbook import run_playbook, TOP

INSTALL = TOP / "install.yml"
PROGRESS = {"ANSIBLE_STDOUT_CALLBACK": "offline_pot.tke.progress"}   # the checkout's display, not the harness's
TIME = r"(?:\d+\.\d s|\d+ min \d\d s)"   # the display's times: 4.2 s, 1 min 06 s
SKIPPED = ["offline", "host_init", "pki", "runtime", "registry", "etcd", "ha", "control_plane", "nodes", "network",
           "components"]


@pytest.fixture()
def site(testhosts, tmp_path):
    inv = testhosts.write_inventory(
        tmp_path / "hosts.yml", groups={"masters": ["h1"], "workers": ["h2", "h3"]},
        # every phase but precheck is proven in its own scenario; here they are left out through
        # the skip list, which this scenario proves too
        group_vars={"precheck_disk": [{"path": "/var/lib", "min_free_gb": 1}],
                    "tke_skip_phases": SKIPPED})
    hooks.write(tmp_path / "hooks", "h1", ["pre-install", "post-install", "precheck/before", "precheck/after"],
                {"post-cluster-ready": tmp_path / "fixed"})
    testhosts.ssh("h1", "rm -f /root/hooks.log")
    return inv


def hook_log(testhosts):
    return hooks.log(testhosts, "h1")


def journal(inv):
    return json.loads((inv.parent / ".tke" / "journal.json").read_text())


def test_hooks_run_in_order_once_and_the_journal_records_the_run(testhosts, site, tmp_path):
    """The journal, the skip list and the hooks' order over a whole run, and a finished install
    re-run. (A hook that fails and the re-run that resumes there are proven once, in the
    end-to-end scenario, test_install_e2e.py.)"""
    (tmp_path / "fixed").touch()  # the post-cluster-ready hook passes here
    first = run_playbook(INSTALL, site)
    assert first.rc == 0, first.explain()
    assert re.search(r"control_plane: running on no host; skipping h1 \(skipped: named in\s+tke_skip_phases\)",
                     first.output), first.explain()
    names = [n for n, dummy in hook_log(testhosts)]
    assert names == ["precheck/before", "precheck/after", "pre-install", "post-cluster-ready", "post-install"]
    stamps = [t for dummy, t in hook_log(testhosts)]
    assert stamps == sorted(stamps)
    j = journal(site)
    assert set(j["phases"]["precheck"]) == {"h1", "h2", "h3"}
    assert set(j["phases"]) == {"precheck", "hook:pre-install", "hook:post-cluster-ready", "hook:post-install"}
    assert j["step"] == PHASE_NAMES.index("hook:post-install") + 1
    assert (site.parent / ".tke" / "journal.json").stat().st_mode & 0o777 == 0o600
    # TKE's state file carries the same resume point
    assert json.loads((site.parent / ".tke" / "tke.json").read_text())["step"] == j["step"]

    again = run_playbook(INSTALL, site)
    assert again.rc == 0 and again.changed_hosts() == {}, again.explain()
    # (the callback folds long messages: match across line breaks)
    assert re.search(r"phase 2/\d+ precheck: running on no host; skipping h1, h2, h3 \(done \S+,\s+inputs\s+unchanged\)",
                     again.output), again.explain()
    # the run ends with a summary that says where things are and holds no secret
    summary = again.output.split("TASK [What was installed and where its files are]", 1)[1]
    assert "journal: " in summary and f"(step {j['step']}/{len(PHASE_NAMES)})" in summary, again.explain()
    assert "skipped by tke_skip_phases: offline, host_init" in summary
    assert "test-admin-password" not in again.output
    assert len(hook_log(testhosts)) == 5, "a finished install ran a hook again"


def test_force_changed_inputs_tags_and_bad_phase_names(testhosts, site):
    assert run_playbook(INSTALL, site, "--tags", "precheck").rc == 0
    again = run_playbook(INSTALL, site, "--tags", "precheck")
    assert "running on no host; skipping h1, h2, h3" in again.output, again.explain()

    forced = run_playbook(INSTALL, site, "--tags", "precheck", "-e", "force_phases=precheck")
    assert "precheck: running on h1, h2, h3" in forced.output, forced.explain()
    assert "Gather facts and evaluate the prerequisites" in forced.output

    # an input of the phase changes on one host: only that host runs it again
    changed = run_playbook(INSTALL, site, "--tags", "precheck", "-e", "precheck_min_cpu=1", "-l", "h2")
    assert "precheck: running on h2" in changed.output, changed.explain()

    # h3 is reinstalled under the same name and address (a new /etc/machine-id): same inputs, yet
    # the journal's record is of another machine, so the phase runs there again
    testhosts.ssh("h3", "cp /etc/machine-id /root/machine-id.orig && "
                        "python3 -c 'import uuid; print(uuid.uuid4().hex)' > /etc/machine-id")
    try:
        # (h2's inputs differ since the run above: left out)
        again = run_playbook(INSTALL, site, "--tags", "precheck", "-l", "h1,h3")
    finally:
        testhosts.ssh("h3", "cat /root/machine-id.orig > /etc/machine-id")
    # (the callback folds long messages: match across line breaks)
    assert re.search(r"precheck: running on h3 \(h3:\s+not\s+the\s+machine\s+the\s+journal\s+recorded", again.output), \
        again.explain()
    assert re.search(r"skipping\s+h1\s+\(done", again.output), again.explain()

    # --tags precheck runs precheck only: no install hook ran
    assert [n for n, dummy in hook_log(testhosts)].count("pre-install") == 0

    bad = run_playbook(INSTALL, site, "--tags", "precheck", "-e", "force_phases=precheck,kubelet")
    assert bad.rc != 0
    assert "force_phases: unknown phase(s) kubelet; known: validate, precheck" in bad.output, bad.explain()

    # the progress display (plugins/callback/progress.py) of real runs, in plain lines (the output
    # is a pipe): a phase that runs, the same with nothing to do, a failure
    shown = run_playbook(INSTALL, site, "--tags", "precheck", "-e", "force_phases=precheck", env=PROGRESS)
    assert shown.rc == 0, shown.explain()
    out = shown.output
    assert "TASK [" not in out and "\r" not in out and "\x1b" not in out, out
    # the phase's line with its hosts and the journal's last time; its end with the counters
    assert re.search(rf"^phase 2/\d+ precheck: running on h1, h2, h3\b.* \(last time {TIME}\)$", out, re.M), out
    assert re.search(r"^phase 2/\d+ precheck: done on h1, h2, h3 in \d+\.\d s \(\d+ tasks, \d+ results\)$", out, re.M), out
    assert re.search(rf"^Phase validate: .*: done in {TIME}", out, re.M), out
    assert "Phase offline" not in out, out   # a play --tags leaves out is not printed
    # the final table: the phase's wall time and each host's
    table = out.split("\nPhase times\n", 1)[1]
    assert re.search(r"^\s+phase\s+wall\s+h1\s+h2\s+h3$", table, re.M), out
    assert re.search(rf"^\s+precheck(\s+{TIME}){{4}}$", table, re.M), out
    assert re.search(r"^h2 +: ok=\d+ +changed=\d+ +unreachable=0 +failed=0", table, re.M), out
    quiet = run_playbook(INSTALL, site, "--tags", "precheck", env=PROGRESS)
    assert quiet.rc == 0, quiet.explain()
    assert re.search(r"^phase 2/\d+ precheck: running on no host; skipping h1, h2, h3 \(done \S+, inputs unchanged\)$",
                     quiet.output, re.M), quiet.output
    failed = run_playbook(INSTALL, site, "--tags", "precheck", "-e", "precheck_min_cpu=999", env=PROGRESS)
    assert failed.rc != 0
    out = failed.output
    assert re.search(r"^ *FAILED: h1 \| (offline_pot\.tke\.precheck : )?Write the report on the controller and fail listing every failing check on every host$",
                     out, re.M), out
    for h in ("h1", "h2", "h3"):
        assert re.search(rf"^  {h}: cpu: ", out, re.M), out
    assert "resumes at phase 2/" in out and "precheck (that phase alone: --tags precheck)" in out, out
    assert re.search(rf"^\s+precheck\s+{TIME} \(failed\)", out, re.M), out

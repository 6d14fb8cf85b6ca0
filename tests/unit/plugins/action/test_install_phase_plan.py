"""install_phase's plan (install.yml's plan play): every phase's start decision made at once, by the
action's own code on a state directory - a site with every phase done and recorded on its hosts
plans no phase; a changed input, a host that lost its record, resume off or a forced phase bring
exactly the phases their starts would run; --tags and --limit are honoured; nothing is written."""
import os
import types

import pytest
from ansible.errors import AnsibleActionFail

from ansible_collections.offline_pot.tke.plugins.action.install_phase import ActionModule
from ansible_collections.offline_pot.tke.plugins.plugin_utils import install_journal as ij
from ansible_collections.offline_pot.tke.plugins.plugin_utils._controller import write_private

RECORDS = "/var/lib/offline-pot/phases"
GROUPS = {"all": ["m1", "w1"], "masters": ["m1"], "workers": ["w1"], "etcd": ["m1"], "registry": ["m1"]}
PHASES = [n for n in ij.USER_PHASES if n != "validate"]


def action():
    mod = ActionModule.__new__(ActionModule)
    mod._templar = types.SimpleNamespace(template=lambda value: value)
    mod._task = types.SimpleNamespace(check_mode=False, diff=False)
    return mod


def task_vars(state_dir, hostvars, **extra):
    return dict({"tke_state_dir": str(state_dir), "tke_host_record_dir": RECORDS, "tke_k8s_version": "1.30.4",
                 "groups": GROUPS, "ansible_play_hosts": ["m1", "w1"], "ansible_play_hosts_all": ["m1", "w1"],
                 "hostvars": hostvars}, **extra)


def installed(tmp_path):
    """A state directory whose journal has every phase done on the hosts its play has, and the
    hosts' reads recording them with the same fingerprints (what phase_end.yml writes)."""
    state = tmp_path / ".tke"
    (state / "pki").mkdir(parents=True)
    hostvars = {h: {"group_names": [g for g in GROUPS if g != "all" and h in GROUPS[g]], "ansible_host": h,
                    "tke_network_mtu": 1450} for h in GROUPS["all"]}
    mod = action()
    tv = task_vars(state, hostvars)
    mod._identity(str(state), lambda name, default=None: tv.get(name, default))
    journal, lines = ij.empty(), {h: ["0123abcd", ""] for h in GROUPS["all"]}
    for phase in PHASES:
        hosts = ij.pattern_hosts(ij.phase(phase).hosts, GROUPS)
        fps, names, inputs = mod._fingerprints(phase, hosts, tv)
        journal = ij.record(journal, phase, fps, "2026-11-26T00:00:00Z", machines={h: "0123abcd" for h in hosts},
                            names=names, inputs=inputs)
        for h, fp in fps.items():
            lines[h].append(f"{RECORDS}/{phase}:{fp}")
    write_private(os.path.join(state, "journal.json"), ij.dump(journal))
    for h in GROUPS["all"]:
        hostvars[h]["__tke_host_read"] = {"rc": 0, "stdout": "\n".join(lines[h]) + "\n"}
    return state, hostvars


def plan(state, hostvars, **extra):
    return action()._plan({}, {}, task_vars(state, hostvars, **extra))


def test_a_site_with_every_phase_done_plans_none_and_says_each_phases_line(tmp_path):
    state, hostvars = installed(tmp_path)
    before = (state / "journal.json").read_text()
    result = plan(state, hostvars)
    assert result["skip_phases"] == PHASES and result["run_phases"] == {}
    ha = next(x for x in result["plan"] if x["phase"] == "ha")
    assert ha["skip_hosts"] == {h: "done 2026-11-26T00:00:00Z, inputs unchanged" for h in ("m1", "w1")}
    assert ha["msg"].endswith("ha: running on no host; skipping m1, w1 (done 2026-11-26T00:00:00Z, inputs unchanged)")
    assert (state / "journal.json").read_text() == before   # the plan writes nothing


def test_what_a_start_would_run_is_planned_and_nothing_else(tmp_path):
    state, hostvars = installed(tmp_path)
    # an input of the network phase only (the MTU) changed on the worker
    hostvars["w1"]["tke_network_mtu"] = 1400
    result = plan(state, hostvars)
    # (the network phase runs together: on both hosts)
    assert result["run_phases"] == {"network": ["m1", "w1"]}
    assert result["skip_phases"] == [n for n in PHASES if n != "network"]
    # what the phases' plays leave out of their hosts: every host of the phases no host runs
    assert result["leave_out"] == {n: ":!all" for n in PHASES if n != "network"}
    # a host that lost its record of a phase (wiped) runs it again
    state, hostvars = installed(tmp_path / "b")
    hostvars["w1"]["__tke_host_read"]["stdout"] = hostvars["w1"]["__tke_host_read"]["stdout"].replace(f"{RECORDS}/nodes:", "x:")
    assert plan(state, hostvars)["run_phases"] == {"nodes": ["w1"]}
    # resume off: every phase; a forced one: that one
    assert plan(state, installed(tmp_path / "c")[1], tke_resume=False)["skip_phases"] == []
    state, hostvars = installed(tmp_path / "d")
    assert plan(state, hostvars, force_phases="ha")["run_phases"] == {"ha": ["m1", "w1"]}


def test_a_node_added_runs_every_phase_there_and_only_where_the_others_name_it(tmp_path):
    state, hostvars = installed(tmp_path)
    grown = {**GROUPS, "all": ["m1", "w1", "w2"], "workers": ["w1", "w2"]}
    hostvars["w2"] = {"group_names": ["workers"], "ansible_host": "w2", "tke_network_mtu": 1450,
                      "__tke_host_read": {"rc": 0, "stdout": "4567cdef\n"}}
    hosts = {"groups": grown, "ansible_play_hosts": grown["all"], "ansible_play_hosts_all": grown["all"]}
    result = plan(state, hostvars, **hosts)
    # every host's /etc/hosts and precheck's peers name w2; the master's PKI (its TKE server
    # certificate, the registry's) names it, and the PKI runs together; the rest is w2's alone
    assert result["run_phases"] == {"precheck": ["m1", "w1", "w2"], "host_init": ["m1", "w1", "w2"],
                                    "pki": ["m1", "w1", "w2"], **{p: ["w2"] for p in ("offline", "runtime", "registry",
                                                                                      "ha", "nodes", "network")}}
    # the start of host_init: m1 and w1 run only what names the hosts (install.yml's tke_phase_names_tasks)
    tv = task_vars(state, hostvars, __tke_plan=result, **hosts)
    start = action().run_action({"state": "start", "phase": "host_init"}, {}, tv)
    assert start["run_hosts"] == ["m1", "w1", "w2"] and start["names_hosts"] == ["m1", "w1"], start
    assert "m1, w1: its configuration names w2 (added): only what names them; w2: new" in start["msg"]
    # the PKI has no names tasks: where it runs, it runs whole, and the worker w1 (whose files name
    # no other host) runs it together with the others
    start = action().run_action({"state": "start", "phase": "pki"}, {}, tv)
    assert start["run_hosts"] == ["m1", "w1", "w2"] and start["names_hosts"] == [], start
    assert "w1: runs together with m1, w2; w2: new" in start["msg"], start["msg"]


def test_tags_and_limit(tmp_path):
    state, hostvars = installed(tmp_path)
    # --tags: only the phases this run goes through are planned
    assert plan(state, hostvars, ansible_run_tags=["runtime", "ha"])["skip_phases"] == ["runtime", "ha"]
    # --limit w1: the phases whose hosts are all masters have no host at all in this run
    hostvars["w1"]["tke_network_mtu"] = 1400
    limited = plan(state, hostvars, ansible_play_hosts=["w1"])
    assert limited["run_phases"] == {"network": ["w1"]} and "control_plane" in limited["skip_phases"]


def test_a_start_takes_the_fingerprints_the_plan_computed(tmp_path):
    state, hostvars = installed(tmp_path)
    tv = task_vars(state, hostvars)
    result = plan(state, hostvars)
    tv["__tke_plan"] = result
    mod = action()
    mod._pki_dir = str(state / "pki")
    computed = mod._fingerprints("ha", ["m1", "w1"], tv)
    assert mod._planned("ha", ["m1", "w1"], tv) == computed
    # a host the plan did not compute (another play's hosts): computed by the start itself
    assert mod._planned("ha", ["m1", "w9"], tv) is None and mod._planned("ha", ["m1"], {}) is None


def test_a_start_refuses_hosts_the_plan_did_not_read(tmp_path):
    # install.yml's plan (tagged always) is the run's one read of the hosts; a phase that starts
    # without it (--skip-tags always) says so, naming the hosts, before anything is written
    state, hostvars = installed(tmp_path)
    hostvars["w1"]["__tke_host_read"] = {"skipped": True, "changed": False}
    before = (state / "journal.json").read_text()
    with pytest.raises(AnsibleActionFail) as err:
        action().run_action({"state": "start", "phase": "nodes"}, {}, task_vars(state, hostvars))
    assert str(err.value) == ("nodes: w1 not read this run: install.yml's plan play reads every host before the "
                              "first phase (it is tagged 'always': do not skip that tag)")
    del hostvars["m1"]["__tke_host_read"]
    with pytest.raises(AnsibleActionFail, match="^nodes: m1, w1 not read this run"):
        action().run_action({"state": "start", "phase": "nodes"}, {}, task_vars(state, hostvars))
    assert (state / "journal.json").read_text() == before


def test_check_mode_leaves_a_host_out_of_the_phases_it_cannot_be_checked_in(tmp_path):
    """docs/install.md, "Preview with --check": w1 lost its records (a new worker): in check mode
    it would run every phase it takes part in, none can be checked there; m1 is checked where it
    runs on its own, not in a phase the hosts run together."""
    state, hostvars = installed(tmp_path)
    hostvars["w1"]["__tke_host_read"] = {"rc": 0, "stdout": "4567cdef\n\n"}
    mod = action()
    mod._task.check_mode = True
    result = mod._plan({}, {}, task_vars(state, hostvars))
    w1 = [p for p in PHASES if "w1" in ij.pattern_hosts(ij.phase(p).hosts, GROUPS)]
    # precheck only reads: checked on w1 too; every other phase of w1 is not
    assert result["run_phases"]["precheck"] == ["w1"] and "precheck" not in result["unchecked"]
    assert {p for p, hosts in result["unchecked"].items() if "w1" in hosts} == set(w1) - {"precheck"}
    assert result["unchecked_hosts"]["w1"].startswith("would run " + ", ".join(p for p in w1 if p != "precheck"))
    assert {p for p, hosts in result["unchecked"].items() if "m1" in hosts} == {
        p for p in w1 if p != "precheck" and ij.runs_together(p)}
    assert result["unchecked"]["network"] == ["m1", "w1"] and "network" in result["skip_phases"]
    # the plays leave out every host of a phase checked on none (w1's alone, or run together)
    assert result["leave_out"] == {p: ":!all" for p in result["skip_phases"]}
    # m1's own host_init changed: checked there, and its play leaves out w1 only
    hostvars["m1"]["host_init_ntp_servers"] = ["192.0.2.123"]
    result = mod._plan({}, {}, task_vars(state, hostvars))
    assert result["run_phases"]["host_init"] == ["m1"] and result["leave_out"]["host_init"] == ":!w1"
    line = next(x["msg"] for x in result["plan"] if x["phase"] == "network")
    assert "check mode, not checked on w1 (offline not done there yet)" in line
    assert "check mode, not checked on m1 (runs together with w1)" in line
    # a real run plans no such thing
    assert plan(state, hostvars)["unchecked"] == {} and plan(state, hostvars)["unchecked_hosts"] == {}

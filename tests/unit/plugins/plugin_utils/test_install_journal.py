import hashlib
import json
import re

import pytest

from ansible_collections.offline_pot.tke.plugins.plugin_utils import install_journal as j

FP = {"h1": "a", "h2": "b"}


def test_fresh_journal_runs_everywhere():
    assert j.decide(j.empty(), "precheck", FP) == {"run": ["h1", "h2"], "skip": {}, "reinstalled": [],
                                                   "why": {"h1": "new", "h2": "new"}, "names_only": []}


def test_done_with_same_fingerprint_is_skipped_and_changed_inputs_run():
    journal = j.record(j.empty(), "precheck", {"h1": "a", "h2": "old"}, "2026-11-22T10:00:00Z")
    d = j.decide(journal, "precheck", FP)
    assert d["run"] == ["h2"]
    assert d["skip"] == {"h1": "done 2026-11-22T10:00:00Z, inputs unchanged"}


def test_force_and_no_resume_run_done_hosts():
    journal = j.record(j.empty(), "precheck", FP, "t")
    assert j.decide(journal, "precheck", FP, force={"precheck"})["run"] == ["h1", "h2"]
    assert j.decide(journal, "precheck", FP, resume=False)["run"] == ["h1", "h2"]
    assert j.decide(journal, "precheck", FP, force={"pki"})["run"] == []


def test_skip_list_wins_over_force():
    d = j.decide(j.empty(), "registry", FP, force={"registry"}, skip={"registry"})
    assert d == {"run": [], "skip": {"h1": "skipped: named in tke_skip_phases",
                                     "h2": "skipped: named in tke_skip_phases"}, "reinstalled": [], "why": {},
                 "names_only": []}


def test_record_does_not_mutate_and_keeps_other_hosts():
    journal = j.record(j.empty(), "precheck", {"h1": "a"}, "t1")
    again = j.record(journal, "precheck", {"h2": "b"}, "t2")
    assert "h2" not in journal["phases"]["precheck"]
    assert again["phases"]["precheck"] == {"h1": {"fingerprint": "a", "done_at": "t1"},
                                           "h2": {"fingerprint": "b", "done_at": "t2"}}


def test_step_is_the_furthest_phase_done():
    journal = j.empty()
    assert j.step(journal) == 0
    journal = j.record(journal, "validate", {"localhost": "x"}, "t")
    journal = j.record(journal, "precheck", FP, "t")
    assert journal["step"] == 2
    journal = j.record(journal, "host_init", FP, "t")   # offline had no hosts
    assert journal["step"] == j.PHASE_NAMES.index("host_init") + 1


@pytest.mark.parametrize("value,expected", [
    ("", set()), (None, set()), ([], set()), ("pki", {"pki"}), ("pki, etcd", {"pki", "etcd"}),
    (["ha", "nodes"], {"ha", "nodes"}), ("all", set(j.PHASE_NAMES)),
])
def test_parse_phase_list(value, expected):
    assert j.parse_phase_list(value, "force_phases") == expected


def test_parse_phase_list_names_the_unknown():
    with pytest.raises(ValueError, match=r"force_phases: unknown phase\(s\) kubelet, pkii; known: validate, "):
        j.parse_phase_list("pki,pkii,kubelet", "force_phases")


def test_fingerprint_is_stable_sensitive_and_keyed(tmp_path):
    key = b"k" * 64
    assert j.fingerprint(key, {"b": 1, "a": [1, 2]}) == j.fingerprint(key, {"a": [1, 2], "b": 1})
    assert j.fingerprint(key, {"a": 1}) != j.fingerprint(key, {"a": 2})
    # without the key, a guess of a secret input cannot be tested against a host's record
    secret = {"registry_password": "hunter2"}
    assert j.fingerprint(key, secret) != j.fingerprint(b"x" * 64, secret)
    assert j.fingerprint(key, secret) != hashlib.sha256(json.dumps([secret], sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def test_journal_key_made_once_private_and_kept(tmp_path):
    store = tmp_path / ".tke" / "pki"
    preview = j.journal_key(str(store), make=False)
    assert len(preview) == 64 and not store.exists()      # check mode: a key of this run only
    key = j.journal_key(str(store))
    path = store / "tke" / "journal.key"
    assert path.read_bytes().strip() == key and key != preview
    assert oct(path.stat().st_mode & 0o777) == "0o600" and oct(store.stat().st_mode & 0o777) == "0o700"
    assert j.journal_key(str(store)) == key
    path.write_text("short\n")                           # not a key: made again
    assert j.journal_key(str(store)) not in (key, b"short")


def test_select_inputs_by_declared_option():
    hv = {"tke_vip": "1.2.3.4", "precheck_min_cpu": 2, "ansible_host": "x", "etcd_quota": 1}
    assert j.select_inputs(hv, {"precheck_min_cpu", "tke_vip"}) == {"precheck_min_cpu": 2, "tke_vip": "1.2.3.4"}
    assert j.select_inputs(hv, ()) == {}


def test_orchestration_and_run_vars_are_no_inputs():
    # a run with -e tke_resume=false (or a skip list, a forced phase) must not make the next
    # run redo phases: those steer the run, they are no phase's input
    hv = {"tke_vip": "1.2.3.4", "tke_resume": False, "tke_skip_phases": ["nodes"], "force_phases": "pki",
          "tke_hooks_dir": "/x", "__tke_phase_start": {"run_hosts": ["h1"]}}
    assert j.input_names(hv, set(hv)) == ["__tke_phase_start", "tke_vip"]
    assert j.input_names(hv, set(hv), exclude={"__tke_phase_start"}) == ["tke_vip"]
    # and the real phases' inputs hold them even though the tke role declares them
    assert not j.ORCHESTRATION_VARS & set(j.input_names(j.input_options("pki"), j.input_options("pki")))


def test_load_rejects_foreign_documents():
    assert j.load("") == j.empty()
    with pytest.raises(ValueError):
        j.load('{"format": 99}')
    assert j.load(j.dump(j.record(j.empty(), "pki", FP, "t")))["phases"]["pki"]["h1"]["fingerprint"] == "a"


def test_phase_numbers():
    assert j.phase_number("validate") == (1, len(j.PHASES))
    assert j.USER_PHASES[-2:] == ("network", "components")


def test_a_phase_run_together_runs_everywhere_when_one_host_needs_it():
    journal = j.record(j.empty(), "etcd", {"h1": "a", "h2": "old"}, "t")
    d = j.decide(journal, "etcd", FP)
    assert (d["run"], d["skip"], d["why"]) == (["h1", "h2"], {}, {"h2": "inputs changed", "h1": "runs together with h2"})
    assert j.decide(j.record(journal, "etcd", FP, "t"), "etcd", FP)["run"] == []
    # a host-local phase runs only where needed
    journal = j.record(j.empty(), "host_init", {"h1": "a", "h2": "old"}, "t")
    assert j.decide(journal, "host_init", FP)["run"] == ["h2"]


def test_a_reinstalled_host_runs_the_phase_again():
    journal = j.record(j.empty(), "precheck", FP, "t", machines={"h1": "m1", "h2": "m2"})
    assert journal["phases"]["precheck"]["h1"]["machine"] == "m1"
    same = j.decide(journal, "precheck", FP, machines={"h1": "m1", "h2": "m2"})
    assert same["run"] == [] and same["reinstalled"] == []
    # h2 is another machine under the same name and address: same inputs, yet not done there
    d = j.decide(journal, "precheck", FP, machines={"h1": "m1", "h2": "new"})
    assert d["run"] == ["h2"] and d["reinstalled"] == ["h2"] and list(d["skip"]) == ["h1"]
    # an unknown machine id (not read this run, or an old journal) does not force anything
    assert j.decide(journal, "precheck", FP, machines={"h1": None})["run"] == []
    assert j.decide(j.record(j.empty(), "precheck", FP, "t"), "precheck", FP, machines={"h1": "m1"})["run"] == []
    # a phase run together: the reinstalled host brings every host along
    etcd = j.record(j.empty(), "etcd", FP, "t", machines={"h1": "m1", "h2": "m2"})
    assert j.decide(etcd, "etcd", FP, machines={"h1": "m1", "h2": "x"})["run"] == ["h1", "h2"]


def test_a_wiped_host_runs_the_phase_again():
    journal = j.record(j.empty(), "precheck", FP, "t")
    # both hosts record the phase with its fingerprint: nothing to do
    assert j.decide(journal, "precheck", FP, records={"h1": {"precheck": "a"}, "h2": {"precheck": "b"}})["run"] == []
    # h2 records nothing (wiped, rebuilt) or another fingerprint: it runs again; unread: no opinion
    d = j.decide(journal, "precheck", FP, records={"h1": {"precheck": "a"}, "h2": {}})
    assert d["run"] == ["h2"] and d["reinstalled"] == ["h2"]
    assert j.decide(journal, "precheck", FP, records={"h1": {"precheck": "a"}, "h2": {"precheck": "old"}})["run"] == ["h2"]
    assert j.decide(journal, "precheck", FP, records={"h1": None, "h2": None})["run"] == []


def test_parse_host_read():
    out = "0123abcd\n\n/var/lib/x/host_init:ff00\n/var/lib/x/pki:aa11\ngrep: noise\n"
    assert j.parse_host_read(out, "/var/lib/x") == ("0123abcd", {"host_init": "ff00", "pki": "aa11"})
    assert j.parse_host_read("\n", "/var/lib/x") == (None, {})


GROUPS = {"all": ["m1", "m2", "w1"], "masters": ["m1", "m2"], "workers": ["w1"], "etcd": ["m1"]}
HOST_PHASES = [p for p in j.USER_PHASES if p != "validate"]


def test_check_mode_checks_a_phase_only_where_it_and_the_earlier_ones_are_done():
    """docs/install.md, "Preview with --check": where the work of an earlier phase (or the phase's
    own) is not on a host, the phase is not checked there but said."""
    done = {h: dict.fromkeys(HOST_PHASES, "x") for h in GROUPS["all"]}
    assert all(j.unchecked(p, GROUPS["all"], done, GROUPS) == {} for p in HOST_PHASES)
    fresh = {h: {} for h in GROUPS["all"]}
    # precheck only reads the hosts (tke_phase_reads_only): checked on fresh hosts
    assert j.unchecked("precheck", GROUPS["all"], fresh, GROUPS) == {}
    assert j.unchecked("offline", ["w1"], fresh, GROUPS) == {"w1": "not done there yet"}
    assert j.unchecked("host_init", ["w1"], fresh, GROUPS) == {"w1": "offline not done there yet"}
    # a new worker on an installed site: only it is not checked, from its first phase on
    new = dict(done, w1={})
    assert j.unchecked("precheck", GROUPS["all"], new, GROUPS) == {}
    assert j.unchecked("host_init", ["m1", "w1"], new, GROUPS) == {"w1": "offline not done there yet"}
    # the phases a host takes part in count (the etcd phase is m1's only; control_plane the masters')
    partial = dict(done, w1={p: "x" for p in HOST_PHASES if p not in ("etcd", "control_plane", "nodes")})
    assert j.unchecked("nodes", ["w1"], partial, GROUPS) == {"w1": "not done there yet"}
    # a host waits for the first master, which leads the cluster
    lead = dict(done, m1={p: "x" for p in HOST_PHASES if p not in ("control_plane", "network")})
    assert j.unchecked("nodes", ["w1"], lead, GROUPS) == {"w1": "control_plane not done on m1, the first master, yet"}
    # ... when it is read this run (--limit w1 leaves it out: not told)
    assert j.unchecked("nodes", ["w1"], {"w1": done["w1"]}, GROUPS) == {}
    # a phase whose hosts run it together is not checked on any of them when one cannot be
    grow = dict(done, m2={p: "x" for p in HOST_PHASES if p != "control_plane"})
    assert j.unchecked("control_plane", ["m1", "m2"], grow, GROUPS) == {
        "m1": "runs together with m2", "m2": "not done there yet"}
    # a phase the site skips (tke_skip_phases) does its work itself; a phase this run leaves out
    # (--tags) brings nothing: its work is checked as the host has it
    no_offline = dict(done, w1={p: "x" for p in HOST_PHASES if p != "offline"})
    assert j.unchecked("runtime", ["w1"], no_offline, GROUPS, skip=["offline"]) == {}
    assert j.unchecked("runtime", ["w1"], no_offline, GROUPS, this_run=j.selected(["runtime"])) == {}
    assert j.unchecked("runtime", ["w1"], no_offline, GROUPS) == {"w1": "offline not done there yet"}


def test_site_names_cover_the_hosts_a_phase_names():
    groups = {"all": ["m1", "w1", "w2"], "masters": ["m1"], "workers": ["w1", "w2"]}
    hv = {"m1": {"ansible_host": "10.0.0.1"}, "w1": {"ansible_host": "10.0.0.2", "tke_node_ip": "10.1.0.2"},
          "w2": {}}
    assert j.site_names("host_init", hv, groups, "w1") == [
        ["m1", ["all", "masters"], "10.0.0.1", ""], ["w1", ["all"], "10.0.0.2", "10.1.0.2"], ["w2", ["all"], "w2", ""]]
    # /etc/hosts names the registry host: the registry moved to w1, every host's host_init runs
    moved = {**groups, "registry": ["w1"]}
    assert j.site_names("host_init", hv, moved, "w2")[1] == ["w1", ["all", "registry"], "10.0.0.2", "10.1.0.2"]
    # ha names the masters only (keepalived's peers): a worker added changes nothing there;
    # runtime and nodes (a worker's join names the endpoint) name no host
    fewer = {"all": ["m1", "w1"], "masters": ["m1"], "workers": ["w1"]}
    assert j.site_names("ha", hv, groups, "w1") == j.site_names("ha", hv, fewer, "w1") != []
    assert j.site_names("nodes", hv, groups, "w1") == []
    assert j.site_names("host_init", hv, groups, "w1") != j.site_names("host_init", hv, fewer, "w1")
    assert j.site_names("runtime", hv, groups, "w1") == []
    # per host group (tke_phase_names as a mapping): the PKI of a master (its TKE server certificate)
    # names every host, a worker's none - a worker added changes the masters' PKI only
    assert j.named_groups("pki", "m1", groups) == ("all",) and j.named_groups("pki", "w1", groups) == ()
    assert [e[0] for e in j.site_names("pki", hv, groups, "m1")] == ["m1", "w1", "w2"]
    assert j.site_names("pki", hv, groups, "w1") == j.site_names("pki", hv, fewer, "w1") == []
    assert j.named_groups("pki", "r1", {**groups, "registry": ["r1"]}) == ("all",)


def test_inputs_are_the_settings_the_phase_roles_read():
    pki = j.input_options("pki")
    assert {"tke_vip", "pki_restart"} <= pki and "etcd_data_dir" not in pki
    # control_plane depends on the kubelet role: its options are inputs too
    assert {"control_plane_etcd_mode", "kubelet_bin"} <= j.input_options("control_plane")
    assert j.input_options("hook:pre-install") == frozenset()
    # a cluster-wide setting is an input only where a role reads it, directly or through a derived
    # setting: the network plugin is the network phase's (and offline's: the pack must have the
    # plugin's images), not the PKI's, the runtime's or the control plane's
    reads_plugin = {p for p in j.USER_PHASES if "tke_network_plugin" in j.input_options(p)}
    assert reads_plugin == {"offline", "network"}
    # the ha phase's roles are chosen by tke_ha_mode in its entry: an input of the phase
    assert "tke_ha_mode" in j.input_options("ha")
    # the nodes join tke_control_plane_endpoint, a derived setting: what it is made of is an input
    assert {"tke_control_plane_endpoint", "tke_api_domain", "tke_ha_mode", "tke_vport", "tke_api_port"} <= \
        j.input_options("nodes")
    # the VIP reaches the nodes through /etc/hosts (host_init: tke_api_address), not their own files
    assert "tke_vip" in j.input_options("host_init") and "tke_vip" not in j.input_options("nodes")
    # the host-by-host step's role (pki: etcd members restart) is part of its phase
    assert "pki" in j._reached_roles(j.phase("pki").roles, str(j.COLLECTION_ROOT / "roles"))


def test_a_derived_setting_is_followed_to_the_settings_it_uses(tmp_path):
    roles = tmp_path / "roles"
    for role, spec, defaults, tasks in (
            ("tke", {"tke_a": {}, "tke_b": {}, "tke_c": {}}, "tke_a: 1\ntke_b: 2\ntke_c: 3\n"
             "tke_derived: \"{{ tke_b }}\"\n", ""),
            ("one", {"one_x": {}}, "one_x: 1\n", "- debug: {msg: '{{ tke_derived }} {{ one_x }}'}\n"
             "- include_role: {name: offline_pot.tke.two}\n"),
            ("two", {"two_y": {}}, "two_y: 1\n", "- debug: {msg: '{{ tke_c }}'}\n")):
        (roles / role / "meta").mkdir(parents=True)
        (roles / role / "defaults").mkdir()
        (roles / role / "tasks").mkdir()
        (roles / role / "meta" / "argument_specs.yml").write_text(
            j.yaml.safe_dump({"argument_specs": {"main": {"options": spec}}}))
        (roles / role / "meta" / "main.yml").write_text("dependencies: [offline_pot.tke.tke]\n" if role != "tke" else "")
        (roles / role / "defaults" / "main.yml").write_text(defaults)
        (roles / role / "tasks" / "main.yml").write_text(tasks or "[]\n")
    assert j.read_names(("one",), roles_dir=roles) == {"one_x", "tke_b", "two_y", "tke_c"}
    assert j.read_names(("two",), frozenset({"tke_a"}), roles_dir=roles) == {"two_y", "tke_c", "tke_a"}


INSTALL = j.INSTALL_PLAYBOOK


def test_the_phases_are_install_yml_entries_and_each_runs_as_declared():
    import yaml
    entries = yaml.safe_load(INSTALL.read_text())
    assert j.PHASE_NAMES[0] == "validate" and j.USER_PHASES[-1] == "components"
    assert len(set(j.PHASE_NAMES)) == len(j.PHASE_NAMES)
    roles = j.COLLECTION_ROOT / "roles"
    for entry in entries:
        v = entry.get("vars") or {}
        if "tke_phase" in v and v["tke_phase"] != "validate":
            # one entry = one phase: the wrapper playbook (one play; with a host-by-host step, the
            # wrapper that adds it), its tag, a title, hosts and roles that exist
            wrapper = "phase_serial.yml" if "tke_phase_serial" in v else "phase.yml"
            assert entry["ansible.builtin.import_playbook"] == wrapper, entry
            assert entry["tags"] == [v["tke_phase"]], entry
            assert {"tke_phase_title", "tke_phase_hosts", "tke_phase_roles"} <= set(v), entry
            assert set(v) <= {"tke_phase", "tke_phase_title", "tke_phase_hosts", "tke_phase_roles",
                              "tke_phase_together", "tke_phase_names", "tke_phase_serial",
                              "tke_phase_reads_only", "tke_phase_names_tasks"}, entry
            p = j.phase(v["tke_phase"])
            for role in p.roles:
                assert (roles / role / "meta" / "argument_specs.yml").is_file(), role
                # names tasks: each role's own file, an entry point of its spec
                if p.names_tasks:
                    assert (roles / role / "tasks" / f"{p.names_tasks}.yml").is_file(), (role, p.names_tasks)
                    spec = yaml.safe_load((roles / role / "meta" / "argument_specs.yml").read_text())
                    assert p.names_tasks in spec["argument_specs"], (role, p.names_tasks)
            known = {"all", "masters", "workers", "etcd", "registry"}
            assert all(g in known and set(named) <= known for g, named in p.names_groups), p.names_groups
            # names tasks only for a phase of one role that names hosts (roles/tke/tasks/phase_names.yml)
            assert not p.names_tasks or (p.names_groups and len(v["tke_phase_roles"]) == 1), p
        elif "tke_hook" in v:
            assert entry["ansible.builtin.import_playbook"] == "hook.yml" and entry["tags"] == ["hooks"], entry
    # the validate play is tagged validate (and always)
    assert [e for e in entries if (e.get("vars") or {}).get("tke_phase") == "validate"][0]["tags"] == ["validate", "always"]
    # the plan play (right after validate) runs in every run (its read is the run's only one) and
    # does its work when some phase runs: `--tags validate` contacts no host
    # (the first entry refuses an inventory without hosts, which every later play would skip)
    assert entries[0]["ansible.builtin.import_playbook"] == "inventory_hosts.yml", entries[0]
    plan = entries[2]
    assert plan["name"].startswith("Plan:") and "vars" not in plan, plan
    assert plan["tags"] == ["always"]
    assert plan["tasks"][0]["when"] == ("ansible_run_tags | offline_pot.tke.install_phases_selected(ansible_skip_tags)"
                                        " | length > 0")
    # every phase's host pattern is one the plan resolves itself
    assert all(j.pattern_hosts(entry.hosts, {"all": []}) is not None for entry in j.PHASES), \
        [(entry.name, entry.hosts) for entry in j.PHASES]


def test_the_plan_resolves_a_phase_pattern_and_says_its_line_as_the_start_would():
    groups = {"all": ["m1", "m2", "w1", "e1"], "masters": ["m2", "m1"], "workers": ["w1"], "etcd": ["e1"]}
    assert j.pattern_hosts("masters:workers", groups) == ["m1", "m2", "w1"]   # in the inventory's order
    assert j.pattern_hosts("all", groups) == groups["all"] and j.pattern_hosts("registry", groups) == []
    assert j.pattern_hosts("masters[0]", groups) is None and j.pattern_hosts("all:!etcd", groups) is None
    assert j.phase("ha").hosts == "masters:workers" and j.phase("etcd").hosts == "etcd"
    journal = j.record(j.empty(), "ha", FP, "2026-01-01T00:00:00Z")
    done = j.decide(journal, "ha", FP)
    number = j.PHASE_NAMES.index("ha") + 1
    assert j.banner("ha", done) == (f"phase {number}/{len(j.PHASE_NAMES)} ha: running on no host; "
                                    "skipping h1, h2 (done 2026-01-01T00:00:00Z, inputs unchanged)")
    again = j.decide(journal, "ha", {"h1": "x", "h2": FP["h2"]})
    assert j.banner("ha", again).startswith(f"phase {number}/{len(j.PHASE_NAMES)} ha: running on h1")


def test_the_readme_phase_table_is_the_phase_list():
    import re
    readme = (j.COLLECTION_ROOT / "README.md").read_text()
    rows = re.findall(r"^\| (\d+) \| (\w+) \|", readme, re.M)
    assert [tag for dummy, tag in rows] == list(j.USER_PHASES)
    assert [int(n) for n, dummy in rows] == list(range(1, len(j.USER_PHASES) + 1))


def test_hosts_new_to_a_phase_run_together_do_not_bring_the_done_hosts_along():
    # a worker added to the inventory: the network phase (run together) runs on it alone ...
    journal = j.record(j.empty(), "network", FP, "t", names=[])
    d = j.decide(journal, "network", {**FP, "h3": "c"}, names=[])
    assert d["run"] == ["h3"] and set(d["skip"]) == {"h1", "h2"} and d["why"] == {"h3": "new"}
    # ... unless a done host runs it again too (inputs changed): then every host does
    d = j.decide(journal, "network", {"h1": "x", "h2": "b", "h3": "c"}, names=[])
    assert d["run"] == ["h1", "h2", "h3"] and d["why"]["h2"] == "runs together with h1, h3"
    # a fresh install: every host is new, every host runs
    assert j.decide(j.empty(), "network", FP)["run"] == ["h1", "h2"]


def test_why_a_done_host_runs_again_names_the_hosts_added_and_removed():
    journal = j.record(j.empty(), "ha", FP, "t", names=["h1", "h2"])
    assert journal["phases"]["ha"]["h1"]["names"] == ["h1", "h2"]
    d = j.decide(journal, "ha", {"h1": "x", "h2": "y", "h4": "z"}, names=["h1", "h4"])
    assert d["why"] == {"h1": "its configuration names h4 (added); h2 (removed)",
                        "h2": "its configuration names h4 (added); h2 (removed)", "h4": "new"}
    assert j.explain(d) == "h1, h2: its configuration names h4 (added); h2 (removed); h4: new"
    # an older journal without names: just "inputs changed"
    old = j.record(j.empty(), "ha", FP, "t")
    assert j.decide(old, "ha", {"h1": "x", "h2": "b"}, names=["h1"])["why"]["h1"] == "inputs changed"


def test_the_phases_a_run_goes_through_follow_its_tags():
    # every phase has its own tag in install.yml; validate's is also 'always'
    assert j.selected() == list(j.USER_PHASES) and j.selected(["all"], []) == list(j.USER_PHASES)
    assert j.selected(["runtime", "registry"]) == ["validate", "runtime", "registry"]
    assert "pki" not in j.selected(["all"], ["pki"])


def test_a_lost_journal_rebuilt_from_the_hosts_records():
    """adopt.yml: done where a host records the phase with the fingerprint its inputs have now;
    an install-level hook counts as run once a phase after it is done somewhere (the last hook:
    the phase before it)."""
    names = [n for n in j.PHASE_NAMES if not n.startswith("hook:")]
    records = {"h1": {n: f"fp-{n}" for n in names}, "h2": {n: f"fp-{n}" for n in names}}
    records["h2"]["network"] = "older"
    fps = {n: {"h1": f"fp-{n}", "h2": f"fp-{n}"} for n in names}
    hooks = {n: {"controller": "sha"} for n in j.PHASE_NAMES if n.startswith("hook:")}
    hooks["hook:post-install"] = None   # the site has no such hook
    journal, again = j.rebuild(records, fps, hooks, "2026-11-25T00:00:00Z", machines={"h1": "m-1", "h2": "m-2"},
                               names={"precheck": ["h1", "h2"]})
    assert again == {"network": ["h2"]}
    assert set(journal["phases"]["network"]) == {"h1"}
    assert journal["phases"]["precheck"]["h2"] == {"fingerprint": "fp-precheck", "done_at": "2026-11-25T00:00:00Z",
                                                   "machine": "m-2", "names": ["h1", "h2"]}
    assert journal["phases"]["hook:pre-install"] == {"controller": {"fingerprint": "sha",
                                                                    "done_at": "2026-11-25T00:00:00Z"}}
    assert "hook:post-install" not in journal["phases"] and journal["step"] == len(j.PHASE_NAMES) - 1
    # an install that stopped before nodes: the hooks after that point have not run
    for n in ("nodes", "network", "components"):
        del records["h1"][n], records["h2"][n]
    hooks["hook:post-install"] = {"controller": "sha"}
    journal, again = j.rebuild(records, fps, hooks, "t")
    assert [n for n in journal["phases"] if n.startswith("hook:")] == ["hook:pre-install"], journal["phases"]
    # the next decision skips what was rebuilt done, with the hosts' evidence
    assert j.decide(journal, "offline", {"h1": "fp-offline"}, records=records)["skip"] == {"h1": "done t, inputs unchanged"}


def test_state_probes_and_drift():
    """A phase records on the host what its roles keep there as probes and their digests; the
    next run's read runs the probes again: a digest that differs is drift, and the phase runs again
    on that host, the banner naming what drifted."""
    script = j.probe_script({"hosts-block": "sed -n '/BEGIN/,/END/p' /etc/hosts", "chrony": "true"}, "/r/.salt")
    assert script.splitlines() == [
        "_tke_salt=; read -r _tke_salt < /r/.salt",
        "printf '%s ' chrony; { printf %s \"$_tke_salt\"; { true; } 2>&1; } | sha256sum"
        " | { read -r _tke_d _; printf '%.16s\\n' \"$_tke_d\"; }",
        "printf '%s ' hosts-block; { printf %s \"$_tke_salt\"; { sed -n '/BEGIN/,/END/p' /etc/hosts; } 2>&1; } | sha256sum"
        " | { read -r _tke_d _; printf '%.16s\\n' \"$_tke_d\"; }"]
    assert j.probe_script({}, "/r/.salt") == ""
    with pytest.raises(ValueError, match="state probe name 'a b'"):
        j.probe_script({"a b": "true"}, "/r/.salt")
    rec = "/var/lib/offline-pot/phases"
    read = "\n".join([
        "0123456789abcdef0123456789abcdef",
        f"{rec}/host_init:fp-host_init", f"{rec}/host_init.state:chrony aaaa", f"{rec}/host_init.state:hosts-block bbbb",
        f"{rec}/runtime:fp-runtime", f"{rec}/runtime.state:containerd cccc",
        f"{rec}/pki:fp-pki",
        f"now:{rec}/host_init:chrony aaaa", f"now:{rec}/host_init:hosts-block 9999",
        f"now:{rec}/runtime:containerd cccc", f"now:{rec}/runtime:extra dddd"])
    machine, records = j.parse_host_read(read, rec)
    assert records == {"host_init": "fp-host_init", "runtime": "fp-runtime", "pki": "fp-pki"}
    drift = j.parse_host_drift(read, rec)
    assert drift == {"host_init": ["hosts-block"], "runtime": ["extra"]}
    journal = j.record(j.empty(), "host_init", {"h1": "fp-host_init", "h2": "fp-host_init"}, "t")
    d = j.decide(journal, "host_init", {"h1": "fp-host_init", "h2": "fp-host_init"},
                 records={"h1": records, "h2": {"host_init": "fp-host_init"}}, drift={"h1": drift, "h2": {}})
    assert d["run"] == ["h1"] and d["why"] == {"h1": "drifted: hosts-block"} and set(d["skip"]) == {"h2"}
    assert j.explain(d) == "h1: its state differs from what the phase recorded there (hosts-block)"


def test_state_changes_are_the_probes_that_print_otherwise_at_the_end_of_the_run():
    """What a run changed on a host, for the run report: the probes whose digest differs between
    the read at the run's start and the one at its end; a phase new to the host (a fresh host: no
    probe before) lists all its probes, a probe gone counts, the records themselves do not."""
    rec = "/var/lib/offline-pot/phases"
    before = "\n".join(["m", f"{rec}/host_init:fp", f"{rec}/host_init.state:chrony aaaa",
                        f"now:{rec}/host_init:chrony aaaa", f"now:{rec}/host_init:hosts-block bbbb",
                        f"now:{rec}/runtime:containerd cccc", f"now:{rec}/runtime:gone eeee"])
    after = "\n".join(["m", f"{rec}/host_init:fp2", f"{rec}/host_init.state:chrony ffff",
                       f"now:{rec}/host_init:chrony aaaa", f"now:{rec}/host_init:hosts-block 9999",
                       f"now:{rec}/runtime:containerd cccc",
                       f"now:{rec}/pki:certs 1111", f"now:{rec}/pki:kubeconfigs 2222"])
    assert j.state_changes(before, after, rec) == {
        "host_init": ["hosts-block"], "pki": ["certs", "kubeconfigs"], "runtime": ["gone"]}
    assert j.state_changes(after, after, rec) == {}
    assert j.state_changes("", "m", rec) == {}


def host_read_command(record_dir):
    """The raw command of roles/tke/tasks/host_read.yml (the tke role's tke_host_read_script, which
    the run report's read at a run's end runs too) with tke_host_record_dir set (its filters:
    Jinja's own and dirname, as Ansible's)."""
    import os
    from pathlib import Path
    import jinja2
    import yaml
    role = Path(__file__).resolve().parents[4] / "roles" / "tke"
    (task,) = yaml.safe_load((role / "tasks" / "host_read.yml").read_text())
    assert task["ansible.builtin.raw"] == "{{ tke_host_read_script }}"
    env = jinja2.Environment()
    env.filters["dirname"] = os.path.dirname
    script = yaml.safe_load((role / "vars" / "main.yml").read_text())["tke_host_read_script"]
    return env.from_string(script).render(tke_host_record_dir=record_dir)


@pytest.mark.parametrize("shell", ["dash", "bash"])
@pytest.mark.parametrize("salt_text", ["0f" * 32, "", None])
def test_probe_digests_are_those_the_earlier_probe_scripts_recorded(tmp_path, shell, salt_text):
    """Sites record their probes' digests with the probe script of the collection that ran the
    phase: the script of this one prints the same digest for the same salt and output (the salt,
    then the command's output and errors, SHA-256, 16 hex digits), so a newer collection reads no
    drift where nothing changed - with /bin/sh a dash (Debian) or a bash (RPM hosts), a salt
    file as record_script makes it (64 hex digits, no newline), empty or missing. The earlier
    script: `cat salt -` and `cut` in each probe's pipe."""
    import shutil
    import subprocess
    if not shutil.which(shell):
        pytest.skip(f"no {shell} here")
    salt = tmp_path / ".salt"
    if salt_text is not None:
        salt.write_text(salt_text)
    (tmp_path / "f").write_text("a\nb\n")
    probes = {"file": f"cat {tmp_path / 'f'}", "err": f"echo out; ls {tmp_path / 'missing'}; false", "empty": "true",
              "no-newline": "printf x", "stdin": "cat"}
    earlier = "".join(f"printf '%s ' {n}; {{ {probes[n]}; }} 2>&1 | cat {salt} - | sha256sum | cut -c1-16\n"
                      for n in sorted(probes))

    def run(script):
        return subprocess.run([shell, "-c", script], input="from stdin\n", capture_output=True, text=True,
                              check=False).stdout
    now = run(j.probe_script(probes, str(salt)))
    assert now == run(earlier), now
    assert [line.split()[0] for line in now.splitlines()] == sorted(probes), now
    assert all(re.fullmatch(r"[0-9a-f]{16}", line.split()[1]) for line in now.splitlines()), now


def test_the_record_command_writes_each_file_once_with_its_mode_and_the_read_finds_it(tmp_path):
    """The command a phase's end runs on each host (with sh, as raw does): the host records
    (0644), the phase's fingerprint, probes and their digests (root-only), written only when they
    differ; what host_read.yml then reads (the same grep and probe loop) is the phase done and no
    drift; a phase that no longer has probes removes its state record."""
    import os
    import subprocess
    rec = tmp_path / "offline-pot" / "phases"
    (tmp_path / "etc-hosts").write_text("a\n")
    probe = j.probe_script({"hosts": f"cat {tmp_path / 'etc-hosts'}"}, str(rec / j.SALT_NAME))
    host_records = {"site": "id=s1 ca_sha256=ab", "kubernetes": "1.35.7"}

    def run(script):
        return subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True).stdout.strip()

    script = j.record_script(str(rec), "host_init", host_records, "fp-1", probe, str(rec / j.SALT_NAME))
    assert run(script) == "recorded"
    assert run(script) == "unchanged"
    assert (tmp_path / "offline-pot" / "site").read_text() == "id=s1 ca_sha256=ab\n"
    assert (tmp_path / "offline-pot" / "kubernetes").stat().st_mode & 0o777 == 0o644
    assert (rec / "host_init").read_text() == "fp-1\n"
    assert {p.name: p.stat().st_mode & 0o777 for p in rec.iterdir()} == {
        "host_init": 0o600, "host_init.probe": 0o600, "host_init.state": 0o600, ".salt": 0o600}
    salt = (rec / j.SALT_NAME).read_text()
    assert len(salt) == 64 and int(salt, 16) >= 0
    # host_read.yml's own command, rendered for this record directory, as it runs at a run's start
    host_read = host_read_command(str(rec))
    read = run(host_read)
    assert j.parse_host_read(read, str(rec))[1] == {"host_init": "fp-1"}
    assert j.parse_host_drift(read, str(rec)) == {"host_init": []}
    (tmp_path / "etc-hosts").write_text("b\n")
    after = run(host_read)
    assert j.parse_host_drift(after, str(rec)) == {"host_init": ["hosts"]}
    # what a run changed, read at its start and its end (the run report): the probe whose output changed
    assert j.state_changes(read, after, str(rec)) == {"host_init": ["hosts"]}
    assert j.state_changes(after, after, str(rec)) == {}
    # a new fingerprint, the same salt; then no probe: the state record goes
    assert run(j.record_script(str(rec), "host_init", host_records, "fp-2", probe, str(rec / j.SALT_NAME))) == "recorded"
    assert (rec / "host_init").read_text() == "fp-2\n" and (rec / j.SALT_NAME).read_text() == salt
    assert run(j.record_script(str(rec), "host_init", host_records, "fp-2", "", str(rec / j.SALT_NAME))) == "recorded"
    assert sorted(os.listdir(rec)) == [".salt", "host_init"]


def test_a_host_whose_only_change_is_the_hosts_it_names_runs_only_what_names_them():
    # h1, h2 did host_init; h3 is added: their fingerprints change (their /etc/hosts names h3),
    # the fingerprints of their inputs less the names do not
    journal = j.record(j.empty(), "host_init", FP, "t", names=["h1", "h2"], inputs={"h1": "i1", "h2": "i2"})
    assert journal["phases"]["host_init"]["h1"]["inputs"] == "i1"
    now = {"h1": "x", "h2": "y", "h3": "z"}
    names = {h: ["h1", "h2", "h3"] for h in now}
    records = {"h1": {"host_init": "a"}, "h2": {"host_init": "b"}, "h3": {}}
    d = j.decide(journal, "host_init", now, names=names, inputs={"h1": "i1", "h2": "i2", "h3": "i3"},
                 records=records)
    assert d["run"] == ["h1", "h2", "h3"] and d["names_only"] == ["h1", "h2"]
    assert d["why"] == {"h1": "its configuration names h3 (added): only what names them",
                        "h2": "its configuration names h3 (added): only what names them", "h3": "new"}
    # another input changed too, the host does not record the phase as the journal does (rebuilt),
    # or its state drifted: the whole phase runs there
    same = {"h1": "i1", "h2": "i2"}
    for kwargs in ({"inputs": {"h1": "other", "h2": "i2"}},
                   {"inputs": same, "records": {"h1": {}, "h2": records["h2"]}},
                   {"inputs": same, "drift": {"h1": {"host_init": ["hosts-block"]}}}):
        d = j.decide(journal, "host_init", now, names=names, **{"records": records, **kwargs})
        assert d["names_only"] == ["h2"] and d["why"]["h1"] == "its configuration names h3 (added)", (kwargs, d)
    # a journal written before the inputs were recorded: the whole phase runs
    old = j.record(j.empty(), "host_init", FP, "t", names=["h1", "h2"])
    assert j.decide(old, "host_init", now, names=names, inputs={"h1": "i1", "h2": "i2"})["names_only"] == []
    # the same hosts at other addresses: named, not added
    d = j.decide(journal, "host_init", {"h1": "x", "h2": "b"}, names={"h1": ["h1", "h2"], "h2": ["h1", "h2"]},
                 inputs={"h1": "i1", "h2": "i2"})
    assert d["why"] == {"h1": "the addresses or groups of the hosts its configuration names changed: only what "
                              "names them"}


def test_a_host_that_names_an_added_host_brings_along_a_phase_run_together():
    # the PKI (run together): a worker w2 added - the master's TKE server certificate names it, the
    # worker w1's files do not (tke_phase_names per host group); the authority renews whatever is
    # near its end whoever holds it, so where m1 runs it every host does, all of it, and the line
    # says why each one runs
    fp = {"m1": "a", "w1": "b"}
    journal = j.record(j.empty(), "pki", fp, "t", names={"m1": ["m1", "w1"], "w1": []},
                       inputs={"m1": "im", "w1": "iw"})
    now = {"m1": "x", "w1": "b", "w2": "c"}
    d = j.decide(journal, "pki", now, names={"m1": ["m1", "w1", "w2"], "w1": [], "w2": ["m1", "w1", "w2"]},
                 inputs={"m1": "im", "w1": "iw", "w2": "iw2"})
    assert d["run"] == ["m1", "w1", "w2"] and d["skip"] == {} and d["names_only"] == []
    assert d["why"] == {"m1": "its configuration names w2 (added)", "w1": "runs together with m1, w2", "w2": "new"}
    assert not j.names_tasks("pki") and j.names_tasks("host_init") == "names"
    # nothing names w2 on a worker's side: alone, it runs the PKI alone
    d = j.decide(journal, "pki", {"m1": "a", "w1": "b", "w2": "c"}, inputs={"m1": "im", "w1": "iw", "w2": "iw2"})
    assert d["run"] == ["w2"] and set(d["skip"]) == {"m1", "w1"}

"""The progress display's pure parts (plugins/callback/progress.py): fed a fake stream of events
with a fake clock, the lines it prints, its phase table and estimates; then the callback itself on
fake Ansible results, in plain (non-terminal) mode."""
import io
from types import SimpleNamespace

import pytest

from ansible_collections.offline_pot.tke.plugins.callback import progress as p
from ansible_collections.offline_pot.tke.plugins.plugin_utils import install_journal as ij


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


START = {"phase": "host_init", "run_hosts": ["h1", "h2"], "skip_hosts": {"h3": "done 2026-01-01T00:00:00Z, inputs unchanged"},
         "msg": "phase 5/16 host_init: running on h1, h2; skipping h3 (done 2026-01-01T00:00:00Z, inputs unchanged)",
         "estimate": 11.6, "started": 1.0}


def run_phase(prog, clock, done_banner="phase 5/16 host_init: done on h1, h2 in 7.5 s"):
    prog.play("Phase host_init: kernel, swap", ["all"])
    prog.task("Journal - which hosts still need this phase")
    entry = prog.phase_start(START)
    prog.result("h1", "ok", counts_for_host=False)
    prog.task("Configure chrony")
    clock.now += 3
    prog.result("h1", "changed")
    clock.now += 2
    prog.result("h2", "ok")
    prog.task("Journal - phase done")
    clock.now += 2.5
    prog.phase_done({"msg": done_banner, "fingerprints": {}})
    return entry


def test_seconds():
    assert p.seconds(4.21) == "4.2 s" and p.seconds(65) == "1 min 05 s" and p.seconds(None) == "-"


def test_a_phase_start_line_its_live_line_and_its_end_line():
    clock = Clock()
    prog = p.Progress(clock)
    prog.play("Phase host_init: kernel, swap", ["all"])
    prog.task("Journal - which hosts still need this phase")
    entry = prog.phase_start(START)
    # the phase's play is the phase: one step, not two
    assert [e["name"] for e in prog.phases] == ["host_init"]
    assert prog.start_line(entry) == START["msg"] + " (last time 11.6 s)"
    prog.task("Configure chrony")
    clock.now += 4
    prog.result("h2", "changed")
    live = prog.live_line()
    assert live == START["msg"] + " | 2 tasks | Configure chrony (1/2 hosts) | 4.0 s of ~11.6 s"
    assert "\r" not in live and "\x1b" not in live
    assert prog.live_line(width=40) == live[:39] + "~" and len(prog.live_line(width=40)) == 40
    clock.now += 3.5
    prog.task("Journal - phase done")
    done = prog.phase_done({"msg": "phase 5/16 host_init: done on h1, h2 in 7.5 s", "fingerprints": {}})
    assert prog.end_line(done) == "phase 5/16 host_init: done on h1, h2 in 7.5 s (3 tasks, 1 results)"
    assert prog.live_line() == ""   # done: no live line left


def test_a_phase_with_no_host_to_run_is_one_line_at_once():
    prog = p.Progress(Clock())
    prog.play("Phase precheck: every host", ["all"])
    start = dict(START, phase="precheck", run_hosts=[], skip_hosts={h: "done x, inputs unchanged" for h in ("h1", "h2")},
                 msg="phase 2/16 precheck: running on no host; skipping h1, h2 (done x, inputs unchanged)")
    entry = prog.phase_start(start)
    assert entry["status"] == "skipped" and prog.end_line(entry) == start["msg"]
    assert prog.start_line(entry) == start["msg"]   # no estimate when nothing runs


def test_the_phases_the_plan_skips_are_one_line_each_and_skipped_in_the_table():
    clock = Clock()
    prog = p.Progress(clock)
    prog.play("Plan: the phases with work on some host (the others are not played)", ["all"])
    prog.task("Journal - the phases with work on some host this run")
    lines = ["phase 2/16 precheck: running on no host; skipping h1, h2 (done x, inputs unchanged)",
             "phase 4/16 offline: running on no host; skipping h1, h2 (done y, inputs unchanged)"]
    plan = [{"phase": "precheck", "skip_hosts": {"h1": "done x, inputs unchanged", "h2": "done x, inputs unchanged"},
             "msg": lines[0]},
            {"phase": "offline", "skip_hosts": {"h1": "done y, inputs unchanged", "h2": "done y, inputs unchanged"},
             "msg": lines[1]}]
    entries = prog.planned_skips({"plan": plan})
    assert [prog.end_line(e) for e in entries] == lines
    run_phase(prog, clock)
    table = prog.table()
    skipped = [["precheck", "skip", "skip", "skip"], ["offline", "skip", "skip", "skip"]]
    assert [row.split()[:4] for row in table[1:3]] == skipped
    assert table[3].split()[0] == "host_init"


def test_the_phase_table_has_wall_time_and_each_hosts_time_or_skip():
    clock = Clock()
    prog = p.Progress(clock)
    run_phase(prog, clock)
    assert prog.play("Hook pre-install: your playbook", ["all"]) is None   # the phase's line is out already
    prog.task("Hook")
    clock.now += 1
    prog.result("h1", "ok", counts_for_host=False)
    hook = prog.play("Phase pki: one CA", ["all"])
    assert prog.end_line(hook) == "Hook pre-install: your playbook: done in 1.0 s (1 tasks, 1 results)"
    prog.phase_start(dict(START, phase="pki", msg="phase 6/16 pki: running on h1, h2, h3", skip_hosts={},
                          run_hosts=["h1", "h2", "h3"], estimate=None))
    clock.now += 1
    prog.result("h3", "failed")
    prog.close()
    table = prog.table()
    assert table[0].split() == ["phase", "wall", "h1", "h2", "h3"]
    assert table[1].split() == ["host_init", "7.5", "s", "3.0", "s", "5.0", "s", "skip"]
    assert table[2].split() == ["pki", "1.0", "s", "(failed)", "-", "-", "1.0", "s"]
    assert table[3].split() == ["total", "8.5", "s"]


def test_a_phase_the_run_never_ended_is_stopped_in_the_table():
    clock = Clock()
    prog = p.Progress(clock)
    prog.play("Phase pki", ["all"])
    prog.phase_start(dict(START, phase="pki", msg="phase 6/16 pki: running on h1", run_hosts=["h1"], skip_hosts={}))
    clock.now += 2
    prog.close()
    assert "(stopped)" in prog.table()[1]


def test_a_failure_is_printed_whole_with_the_phases_hint_and_no_log_hides_it():
    clock = Clock()
    prog = p.Progress(clock)
    prog.play("Phase host_init", ["all"])
    prog.phase_start(START)
    result = {"msg": "chrony failed\nsecond line", "stderr_lines": [f"e{i}" for i in range(30)], "rc": 2}
    lines = prog.failure_lines("h2", "Configure chrony", result, prog.resume_hint())
    assert lines[0] == "FAILED: h2 | Configure chrony"
    assert lines[1:3] == ["  chrony failed", "  second line"]
    assert "  stderr (last 20 lines):" in lines and "    e29" in lines and "    e9" not in lines
    assert "  rc: 2" in lines
    listed = prog.failure_lines("h1", "Fail listing", {"msg": ["h1: cpu: 2 < 999", "h2: cpu: 2 < 999"]}, "hint")
    assert listed[1:3] == ["  h1: cpu: 2 < 999", "  h2: cpu: 2 < 999"]
    assert "resumes at phase 5/16 host_init (that phase alone: --tags host_init)" in lines[-1]
    censored = {"censored": "the output has been hidden", "msg": "s3cret", "stdout_lines": ["s3cret"]}
    hidden = prog.failure_lines("h2", "Secret", censored, "hint")
    assert not any("s3cret" in line for line in hidden) and "no_log" in hidden[1]
    items = {"msg": "One or more items failed", "results": [
        {"item": "a", "failed": True, "msg": "bad a"}, {"item": "b", "failed": True, "censored": "x", "msg": "s3cret"},
        {"item": "c", "changed": True}]}
    lines = prog.failure_lines("h1", "Loop", items, "hint")
    assert "  item 'a': bad a" in lines and "  item 'b': (hidden: no_log)" in lines
    assert not any("s3cret" in line for line in lines)


def test_resume_hint_outside_a_phase():
    prog = p.Progress(Clock())
    prog.play("Hook post-install: your playbook", ["all"])
    assert "fix the hook playbook" in prog.resume_hint()
    prog.play("Phase validate: the inventory", ["all"])
    assert prog.resume_hint() == "to resume: fix the cause, then run the same command again"


def test_the_estimate_is_the_journals_last_time_of_the_phase():
    journal = ij.record(ij.empty(), "host_init", {"h1": "a", "h2": "b"}, "t", seconds=11.6)
    journal = ij.record(journal, "host_init", {"h3": "c"}, "t", seconds=3.0)
    assert ij.last_seconds(journal, "host_init", ["h1", "h2"]) == 11.6
    assert ij.last_seconds(journal, "host_init", ["h3"]) == 3.0
    assert ij.last_seconds(journal, "host_init", ["h9"]) == 11.6   # a new host: the phase's last time
    assert ij.last_seconds(journal, "pki", ["h1"]) is None
    assert ij.last_seconds(ij.record(ij.empty(), "pki", {"h1": "a"}, "t"), "pki") is None   # an older journal


# --- the callback on fake results ---------------------------------------------------------------

def fake_task(name, action, run_once=False, delegate_to=None):
    return SimpleNamespace(get_name=lambda: name, action=action, resolved_action=action, run_once=run_once,
                           delegate_to=delegate_to, no_log=False, loop=None, check_mode=False, _uuid=name)


def fake_result(host, task, result):
    return SimpleNamespace(host=SimpleNamespace(get_name=lambda: host), task=task, result=result, _result=result)


@pytest.fixture()
def callback(monkeypatch):
    out = io.StringIO()
    cb = p.CallbackModule(out=out, live=False)
    cb.set_options()
    monkeypatch.setattr(cb._display, "verbosity", 0)
    return cb, out


def test_the_callback_prints_plain_phase_lines_no_task_headers_and_no_secret(callback, monkeypatch):
    cb, out = callback
    monkeypatch.setattr(p.context, "CLIARGS", {"check": False})
    cb.v2_playbook_on_play_start(SimpleNamespace(get_name=lambda: "Phase offline: left out by --tags", hosts=["all"]))
    cb.v2_playbook_on_play_start(SimpleNamespace(get_name=lambda: "Phase host_init: x", hosts=["all"]))
    phase = fake_task("Journal - which hosts still need this phase", "offline_pot.tke.install_phase", True, "localhost")
    cb.v2_playbook_on_task_start(phase, False)
    cb.v2_runner_on_ok(fake_result("h1", phase, dict(START)))
    work = fake_task("Configure chrony", "ansible.builtin.template")
    cb.v2_playbook_on_task_start(work, False)
    cb.v2_runner_on_ok(fake_result("h1", work, {"changed": True}))
    secret = fake_task("Secret", "ansible.builtin.debug")
    cb.v2_runner_on_ok(fake_result("h1", secret, {"censored": "hidden", "msg": "s3cret"}))
    done = fake_task("Journal - phase done", "offline_pot.tke.install_phase", True, "localhost")
    cb.v2_runner_on_ok(fake_result("h1", done, {"msg": "phase 5/16 host_init: done on h1, h2 in 1.0 s",
                                                "fingerprints": {"h1": "x"}}))
    cb.v2_runner_on_failed(fake_result("h2", work, {"msg": "boom"}))
    stats = SimpleNamespace(processed={"h1": 1}, custom={},
                            summarize=lambda h: dict(ok=3, changed=1, unreachable=0, failures=0, skipped=0, rescued=0, ignored=0))
    cb.v2_playbook_on_stats(stats)
    text = out.getvalue()
    lines = text.splitlines()
    assert lines[0] == START["msg"] + " (last time 11.6 s)"
    assert lines[1].startswith("phase 5/16 host_init: done on h1, h2 in 1.0 s (")
    assert "FAILED: h2 | Configure chrony" in lines and "  boom" in lines
    assert "Phase times" in lines and any(line.split()[:1] == ["host_init"] for line in lines)
    # the default callback's PLAY RECAP line, uncoloured (what tools and the harness read)
    assert "h1                         : ok=3    changed=1    unreachable=0    failed=0    skipped=0    rescued=0    ignored=0" \
        in lines
    assert "Phase offline" not in text   # a play that ran no task is not printed
    assert "TASK [" not in text and "\r" not in text and "\x1b" not in text and "s3cret" not in text


def test_from_v_on_the_default_output(callback, monkeypatch):
    cb, out = callback
    monkeypatch.setattr(cb._display, "verbosity", 1)
    shown = []
    monkeypatch.setattr(cb._display, "banner", lambda msg, **kw: shown.append(msg))
    monkeypatch.setattr(cb, "get_option", lambda key, hostvars=None: key != "check_mode_markers")
    cb._play = SimpleNamespace(strategy="linear")
    cb.v2_playbook_on_task_start(fake_task("Configure chrony", "ansible.builtin.template"), False)
    assert shown and shown[0].startswith("TASK [Configure chrony]") and out.getvalue() == ""


def test_outside_a_phase_a_verdicts_message_is_printed(callback, monkeypatch):
    cb, out = callback
    monkeypatch.setattr(p.context, "CLIARGS", {"check": False})
    cb.v2_playbook_on_play_start(SimpleNamespace(get_name=lambda: "Cluster health: nodes and the pod network",
                                                 hosts=["all"]))
    verdict = fake_task("Every node Ready", "ansible.builtin.assert", True)
    cb.v2_playbook_on_task_start(verdict, False)
    cb.v2_runner_on_ok(fake_result("h1", verdict, {"msg": "every node Ready: h1, h2, h3", "changed": False}))
    assert "  every node Ready: h1, h2, h3" in out.getvalue().splitlines()

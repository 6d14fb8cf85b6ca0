# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The install's progress display: phases, not tasks."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: progress
type: stdout
short_description: Phases and progress of an install instead of every task
version_added: 0.1.0
author:
  - offline_pot.tke developers (!UNKNOWN)
description:
  - A stdout callback for the playbooks of this collection (C(install.yml) and the day-2 playbooks).
    Each phase of the install journal (M(offline_pot.tke.install_phase)) is one line - the phase's
    number and name, the hosts it runs on and the hosts it skips with the reason, a counter of the
    phase's tasks and of the hosts done with the current task, the time elapsed and an estimate
    (how long the phase took the last time, from the journal).
  - A play that is no phase (the inventory's validation, a hook, a day-2 playbook) is one line too,
    unless it ran no task (left out by C(--tags)).
  - On a terminal the line of the running phase is rewritten in place; when standard output is not
    a terminal (AWX, CI logs, a pipe) every line is printed once, plain (no carriage returns, no
    ANSI sequences), at the phase's start and at its end.
  - A failure is printed whole - host, task, message, the tail of the output - with how to resume
    (the journal skips the phases done, so the same command again, or C(--tags) the phase).
  - At the end, a table of phase times (wall time, and per host the time until its last task of
    the phase), the count of results per host (as C(PLAY RECAP) has them) and, in check mode,
    C(DRY RUN).
  - Messages of C(debug) and C(assert) tasks outside the phases (the install's summary of what is
    where, the cluster health's verdict) are printed; those inside a phase are not (C(-v) shows them).
  - With C(-v) or more, the output is the default callback's, unchanged.
  - A result hidden by C(no_log) is never printed, only that it is hidden.
  - "Enable it: C(stdout_callback = offline_pot.tke.progress) in the C([defaults]) section of
    C(ansible.cfg) (the checkout's ansible.cfg does), or C(ANSIBLE_STDOUT_CALLBACK=offline_pot.tke.progress)
    for one run."
extends_documentation_fragment:
  - ansible.builtin.default_callback
  - ansible.builtin.result_format_callback
requirements:
  - set as the stdout callback in the configuration
notes:
  - The phase lines and the table come from the results of M(offline_pot.tke.install_phase); playbooks
    without phases show one line per play.
seealso:
  - module: offline_pot.tke.install_phase
"""

import shutil
import sys
import time

from ansible import context
from ansible.plugins.callback.default import CallbackModule as DefaultCallback
from ansible.utils.color import colorize, hostcolor

PHASE_ACTIONS = frozenset({"offline_pot.tke.install_phase", "install_phase"})
# tasks whose message is the result: the summary's debug lines, a verdict's assert (every node Ready)
MESSAGE_ACTIONS = frozenset({"ansible.builtin.debug", "debug", "ansible.legacy.debug",
                             "ansible.builtin.assert", "assert", "ansible.legacy.assert"})
TAIL = 20


def seconds(value):
    """'4.2 s', '1 min 05 s'."""
    if value is None:
        return "-"
    if value < 60:
        return f"{value:.1f} s"
    return f"{int(value // 60)} min {int(value % 60):02d} s"


class Progress:
    """What the display knows: the phases seen, the one running, counters; and the text it prints.
    Fed by the callback's events; no Ansible in here (tests/unit/plugins/callback/test_progress.py)."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.phases = []          # dicts, in the order seen
        self.current = None       # the phase or play running (a dict), or None
        self.hosts = []           # every host seen, in order

    # --- events -------------------------------------------------------------------------------
    def play(self, name, hosts):
        """A play starts. A play of the running phase (its host-by-host step, its end) continues
        it; any other play is a step of its own until a phase starts in it."""
        self._see(hosts)
        if self.current and self.current["kind"] == "phase" and not self.current.get("end"):
            return None
        finished = self.close()
        self.current = self._entry(kind="play", name=name, run=list(hosts))
        return finished

    def phase_start(self, result):
        """install_phase state=start: the running play becomes the phase."""
        name = result.get("phase") or "?"
        run, skip = list(result.get("run_hosts") or []), dict(result.get("skip_hosts") or {})
        self._see(run + list(skip))
        entry = self._entry(kind="phase", name=name, run=run, skip=skip, banner=result.get("msg", name),
                            estimate=result.get("estimate"))
        if self.current and self.current["kind"] == "play":   # the phase's play: it is the phase
            entry["tasks"], entry["started"] = self.current["tasks"], self.current["started"]
            self.phases.remove(self.current)
        self.current = entry
        if not run:                       # nothing to do: done at once
            entry["end"] = self.clock()
            entry["status"] = "skipped"
        return entry

    def planned_skips(self, result):
        """install_phase state=plan: the phases with no host to run on (not played): each one
        skipped at once, with its line."""
        out = []
        for item in result.get("plan") or []:
            skip = dict(item.get("skip_hosts") or {})
            self._see(list(skip))
            entry = self._entry(kind="phase", name=item.get("phase") or "?", skip=skip,
                                banner=item.get("msg") or item.get("phase") or "?")
            entry["end"], entry["status"] = self.clock(), "skipped"
            out.append(entry)
        return out

    def phase_done(self, result):
        """install_phase state=done: the phase's wall time as this run measured it."""
        entry = self.current if self.current and self.current["kind"] == "phase" else None
        if entry is None:
            return None
        entry["end"] = self.clock()
        entry["banner_done"] = result.get("msg")
        entry["status"] = "done"
        return entry

    def task(self, name):
        if self.current:
            self.current["tasks"] += 1
            self.current["task"] = name
            self.current["task_hosts"] = set()

    def result(self, host, status, counts_for_host=True):
        """A host's result of the current task (ok, changed, skipped, failed, unreachable)."""
        entry = self.current
        if not entry:
            return
        entry["task_hosts"].add(host)
        entry["results"] += 1
        if counts_for_host and status != "skipped":
            entry["host_end"][host] = self.clock()
        if status in ("failed", "unreachable"):
            entry["status"] = "failed"
            entry["failed"].add(host)

    def close(self):
        """The running step ends (the next play starts, or the run ends); returns it when it is a
        play that is no phase (its line is printed then)."""
        entry, self.current = self.current, None
        if entry is None:
            return None
        entry.setdefault("end", self.clock())
        if entry["kind"] == "play":
            if entry["status"] == "running":
                entry["status"] = "done"
            return entry
        if entry["status"] == "running":   # a phase whose end never came (a failure, --check)
            entry["status"] = "stopped"
        return None

    # --- text ---------------------------------------------------------------------------------
    def live_line(self, width=0):
        """The running step as one line: hosts, counters, elapsed, estimate."""
        entry = self.current
        if not entry or "end" in entry:
            return ""
        elapsed = self.clock() - entry["started"]
        if entry["kind"] == "phase":
            head = entry["banner"]
        else:
            head = entry["name"]
        parts = [head, f"{entry['tasks']} tasks"]
        if entry.get("task"):
            hosts = len(entry["run"]) or len(entry["task_hosts"])
            parts.append(f"{entry['task']} ({len(entry['task_hosts'])}/{hosts} hosts)")
        clock = seconds(elapsed)
        if entry.get("estimate"):
            clock += f" of ~{seconds(entry['estimate'])}"
        parts.append(clock)
        line = " | ".join(parts)
        if width and len(line) > width:
            line = line[:max(width - 1, 0)] + "~"
        return line

    @staticmethod
    def start_line(entry):
        """A phase's first line (printed once, plain): its banner, and the last time it took."""
        line = entry["banner"]
        if entry.get("estimate") and entry["run"]:
            line += f" (last time {seconds(entry['estimate'])})"
        return line

    @staticmethod
    def end_line(entry):
        """A step's closing line: done (with the counters), skipped, failed or stopped."""
        took = seconds(entry["end"] - entry["started"])
        counters = f"{entry['tasks']} tasks, {entry['results']} results"
        if entry["kind"] == "play":
            state = "failed" if entry["status"] == "failed" else "done"
            return f"{entry['name']}: {state} in {took} ({counters})"
        if entry["status"] == "skipped":
            return entry["banner"]
        hosts = ", ".join(entry["run"]) or "no host"
        if entry["status"] == "done":
            return f"{entry['banner_done'] or entry['name'] + ': done in ' + took} ({counters})"
        return f"{entry['banner'].split(':', 1)[0]}: {entry['status']} on {hosts} after {took} ({counters})"

    def table(self):
        """Phase times: wall time, and per host the time until its last task of the phase (skip:
        the phase was skipped there; -: not in the phase)."""
        phases = [p for p in self.phases if p["kind"] == "phase"]
        if not phases:
            return []
        hosts = [h for h in self.hosts if any(h in p["run"] or h in p["skip"] for p in phases)]
        rows = [["phase", "wall"] + hosts]
        for p in phases:
            wall = "skip" if p["status"] == "skipped" else seconds(p.get("end", self.clock()) - p["started"])
            if p["status"] in ("failed", "stopped"):
                wall += f" ({p['status']})"
            row = [p["name"], wall]
            for h in hosts:
                if h in p["skip"]:
                    row.append("skip")
                elif h in p["host_end"]:
                    row.append(seconds(p["host_end"][h] - p["started"]))
                else:
                    row.append("-")
            rows.append(row)
        total = sum((p.get("end", self.clock()) - p["started"]) for p in phases if p["status"] != "skipped")
        rows.append(["total"] + [seconds(total)] + [""] * len(hosts))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]

    def resume_hint(self):
        """How to go on after a failure, for the step running."""
        entry = self.current
        if entry and entry["kind"] == "phase":
            name = entry["name"]
            number = entry["banner"].split(" ", 2)[1] if entry["banner"].startswith("phase ") else ""
            return (f"to resume: fix the cause, then run the same command again - the journal skips the "
                    f"phases done with unchanged inputs and the run resumes at phase {number} {name} "
                    f"(that phase alone: --tags {name})").replace("phase  ", "phase ")
        if entry and entry["name"].startswith("Hook "):
            return ("to resume: fix the hook playbook, then run the same command again - the journal "
                    "skips the phases done and runs the hook again")
        return "to resume: fix the cause, then run the same command again"

    @staticmethod
    def failure_lines(host, task, result, hint):
        """A failure, whole: host, task, message, the output's tail (never a no_log result's)."""
        lines = [f"FAILED: {host} | {task}"]
        if result.get("censored"):
            lines.append("  (the result is hidden: no_log is set for this task)")
        else:
            items = [r for r in result.get("results") or [] if isinstance(r, dict) and r.get("failed")]
            for res in [result] + items:
                label = f"  item {res.get('item')!r}: " if res is not result else "  "
                if res.get("censored"):
                    lines.append(f"{label}(hidden: no_log)")
                    continue
                msg = res.get("msg")
                if msg:
                    text = [str(m) for m in msg] if isinstance(msg, list) else str(msg).splitlines() or [""]
                    lines += [label + line for line in text]
                for key in ("stderr_lines", "stdout_lines"):
                    tail = res.get(key) or []
                    if tail and isinstance(tail, list):
                        lines.append(f"  {key[:-len('_lines')]} (last {min(len(tail), TAIL)} lines):")
                        lines += ["    " + str(line) for line in tail[-TAIL:]]
                if res.get("rc") not in (None, 0):
                    lines.append(f"  rc: {res['rc']}")
        lines.append("  " + hint)
        return lines

    # --- helpers ------------------------------------------------------------------------------
    def _entry(self, **kw):
        entry = dict(kind="play", name="", run=[], skip={}, banner="", estimate=None, started=self.clock(),
                     tasks=0, results=0, task=None, task_hosts=set(), host_end={}, failed=set(),
                     status="running", banner_done=None)
        entry.update(kw)
        self.phases.append(entry)
        return entry

    def _see(self, hosts):
        for h in hosts:
            if h not in self.hosts:
                self.hosts.append(h)


class CallbackModule(DefaultCallback):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "offline_pot.tke.progress"

    def __init__(self, out=None, live=None):
        super().__init__()
        self._out = out or sys.stdout
        self._live = self._out.isatty() if live is None else live
        self._progress = Progress()
        self._drawn = False
        self._plays = []

    # the default output from -v on
    @property
    def _full(self):
        return self._display.verbosity > 0

    # --- printing -----------------------------------------------------------------------------
    def _print(self, line=""):
        if self._drawn:
            self._out.write("\r\x1b[K")
            self._drawn = False
        self._out.write(line + "\n")
        self._out.flush()
        self._draw()

    def _draw(self):
        if not self._live:
            return
        width = shutil.get_terminal_size((120, 20)).columns - 1
        line = self._progress.live_line(width)
        if line:
            self._out.write("\r\x1b[K" + line)
            self._out.flush()
            self._drawn = True

    def _closed(self, entry):
        # a play that ran no task (left out by --tags, no host) is not printed
        if entry is not None and entry["tasks"]:
            self._print(self._progress.end_line(entry))

    # --- events -------------------------------------------------------------------------------
    def v2_playbook_on_start(self, playbook):
        if self._full:
            return super().v2_playbook_on_start(playbook)
        return None

    def v2_playbook_on_play_start(self, play):
        if self._full:
            return super().v2_playbook_on_play_start(play)
        self._play = play
        name = play.get_name().strip()
        hosts = play.hosts if isinstance(play.hosts, list) else []
        self._closed(self._progress.play(name, [h for h in hosts if isinstance(h, str) and "{" not in h]))
        self._draw()
        return None

    def v2_playbook_on_task_start(self, task, is_conditional):
        if self._full:
            return super().v2_playbook_on_task_start(task, is_conditional)
        self._progress.task(task.get_name().strip())
        self._draw()
        return None

    def v2_playbook_on_handler_task_start(self, task):
        if self._full:
            return super().v2_playbook_on_handler_task_start(task)
        self._progress.task(task.get_name().strip())
        self._draw()
        return None

    def v2_runner_on_start(self, host, task):
        if self._full:
            return super().v2_runner_on_start(host, task)
        return None

    def _own(self, result):
        """Not the host's own work: a run_once task on the controller."""
        return not (result.task.run_once and result.task.delegate_to)

    def v2_runner_on_ok(self, result):
        if self._full:
            return super().v2_runner_on_ok(result)
        res = result.result
        host = result.host.get_name()
        self._handle_warnings_and_exception(result)
        action = {result.task.action, getattr(result.task, "resolved_action", None)}
        if action & PHASE_ACTIONS and not res.get("censored"):
            if res.get("plan") is not None:
                self._progress.result(host, "ok", counts_for_host=False)
                for entry in self._progress.planned_skips(res):
                    self._print(self._progress.end_line(entry))
                return None
            if res.get("run_hosts") is not None and res.get("msg"):
                entry = self._progress.phase_start(res)
                self._progress.result(host, "ok", counts_for_host=False)
                self._print(self._progress.start_line(entry) if entry["run"] else self._progress.end_line(entry))
                return None
            if res.get("fingerprints") is not None:
                self._progress.result(host, "ok", counts_for_host=False)
                entry = self._progress.phase_done(res)
                if entry:
                    self._print(self._progress.end_line(entry))
                return None
        self._progress.result(host, "changed" if res.get("changed") else "ok", self._own(result))
        current = self._progress.current
        if (action & MESSAGE_ACTIONS and "msg" in res and not res.get("censored")
                and not (current and current["kind"] == "phase")):
            self._print(f"{host} | {result.task.get_name().strip()}:")
            msg = res["msg"]
            for line in (msg if isinstance(msg, list) else str(msg).splitlines()):
                self._print(f"  {line}")
        else:
            self._draw()
        return None

    def v2_runner_on_skipped(self, result):
        if self._full:
            return super().v2_runner_on_skipped(result)
        self._progress.result(result.host.get_name(), "skipped")
        self._draw()
        return None

    def v2_runner_on_failed(self, result, ignore_errors=False):
        if self._full:
            return super().v2_runner_on_failed(result, ignore_errors)
        host = result.host.get_name()
        self._handle_warnings(result.result)   # the exception is in the failure printed below
        if ignore_errors:
            self._progress.result(host, "ok", self._own(result))
            self._draw()
            return None
        self._progress.result(host, "failed")
        for line in self._progress.failure_lines(host, result.task.get_name().strip(), result.result,
                                                 self._progress.resume_hint()):
            self._print(line)
        return None

    def v2_runner_on_unreachable(self, result):
        if self._full:
            return super().v2_runner_on_unreachable(result)
        host = result.host.get_name()
        self._progress.result(host, "unreachable")
        res = dict(result.result)
        res.setdefault("msg", "unreachable")
        for line in self._progress.failure_lines(host, result.task.get_name().strip() + " (UNREACHABLE)", res,
                                                 self._progress.resume_hint()):
            self._print(line)
        return None

    def v2_on_file_diff(self, result):
        if self._full:
            return super().v2_on_file_diff(result)
        res = result.result
        diffs = [r["diff"] for r in res.get("results", []) if isinstance(r, dict) and r.get("diff") and r.get("changed")]
        if res.get("diff") and res.get("changed"):
            diffs.append(res["diff"])
        for diff in diffs:
            text = self._get_diff(diff)
            if text:
                self._print(f"{result.host.get_name()} | {result.task.get_name().strip()} (diff):")
                self._print(text.rstrip("\n"))
        return None

    def v2_runner_item_on_ok(self, result):
        if self._full:
            return super().v2_runner_item_on_ok(result)
        return None

    def v2_runner_item_on_failed(self, result):
        if self._full:
            return super().v2_runner_item_on_failed(result)
        return None

    def v2_runner_item_on_skipped(self, result):
        if self._full:
            return super().v2_runner_item_on_skipped(result)
        return None

    def v2_runner_retry(self, result):
        if self._full:
            return super().v2_runner_retry(result)
        self._draw()
        return None

    def v2_runner_on_async_poll(self, result):
        if self._full:
            return super().v2_runner_on_async_poll(result)
        return None

    def v2_playbook_on_include(self, included_file):
        if self._full:
            return super().v2_playbook_on_include(included_file)
        return None

    def v2_playbook_on_notify(self, handler, host):
        if self._full:
            return super().v2_playbook_on_notify(handler, host)
        return None

    def v2_playbook_on_no_hosts_matched(self):
        if self._full:
            return super().v2_playbook_on_no_hosts_matched()
        return None

    def v2_playbook_on_no_hosts_remaining(self):
        if self._full:
            return super().v2_playbook_on_no_hosts_remaining()
        return None

    def v2_playbook_on_stats(self, stats):
        if self._full:
            return super().v2_playbook_on_stats(stats)
        self._closed(self._progress.close())
        table = self._progress.table()
        if table:
            self._print("")
            self._print("Phase times")
            for line in table:
                self._print("  " + line)
        self._print("")
        self._print("PLAY RECAP")
        # the default callback's lines, uncoloured: what tools that read a PLAY RECAP expect
        for h in sorted(stats.processed.keys()):
            t = stats.summarize(h)
            self._print(" ".join([hostcolor(h, t, False), ":"] + [
                colorize(lead, t[key], None) for lead, key in (
                    ("ok", "ok"), ("changed", "changed"), ("unreachable", "unreachable"), ("failed", "failures"),
                    ("skipped", "skipped"), ("rescued", "rescued"), ("ignored", "ignored"))]).rstrip())
        if context.CLIARGS.get("check"):
            self._print("DRY RUN (check mode): nothing was changed")
        return None

"""Bench and test callback (not part of the collection): each task's wall time per host, written as
JSON lines to the file named by TASK_TIMES_FILE when the playbook ends, with the playbook and, in a
test run, the pytest test that ran it (PYTEST_CURRENT_TEST). bench/install_bench.py enables it
(ANSIBLE_CALLBACK_PLUGINS + ANSIBLE_CALLBACKS_ENABLED) to print where an install's time goes, and
tests/harness/playbook.py when TASK_TIMES_FILE is set (tests/run_all.sh: where a whole test run's
time goes, tests/harness/task_times.py)."""
import json
import os
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: task_times
type: aggregate
short_description: each task's wall time per host, as JSON lines (bench only)
description: [Written to the file named by the TASK_TIMES_FILE environment variable.]
"""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "task_times"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self._start = {}
        self._rows = []
        self._task_starts = []   # (epoch, task): when the strategy started each task (the gaps: Ansible's own time)
        self._playbook = ""
        self._test = (os.environ.get("PYTEST_CURRENT_TEST") or "").split(" ")[0]

    def v2_playbook_on_start(self, playbook):
        self._playbook = os.path.basename(playbook._file_name)

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._task_starts.append((time.time(), task.get_name()))

    def v2_runner_on_start(self, host, task):
        self._start[(host.get_name(), task._uuid)] = time.monotonic()

    def _done(self, result, status):
        key = (result._host.get_name(), result._task._uuid)
        began = self._start.pop(key, None)
        if began is None:
            return
        task = result._task
        delegated = (task.delegate_to or "") in ("localhost", "127.0.0.1")
        self._rows.append({"host": key[0], "task": task.get_name(), "action": task.action, "status": status,
                           "seconds": round(time.monotonic() - began, 3), "on_controller": delegated,
                           "end": round(time.time(), 3),
                           "playbook": self._playbook, "test": self._test})

    def v2_runner_on_ok(self, result):
        self._done(result, "changed" if result._result.get("changed") else "ok")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._done(result, "failed")

    def v2_runner_on_skipped(self, result):
        self._done(result, "skipped")

    def v2_runner_on_unreachable(self, result):
        self._done(result, "unreachable")

    def v2_playbook_on_stats(self, stats):
        path = os.environ.get("TASK_TIMES_FILE")
        if path:
            with open(path, "a", encoding="utf-8") as out:
                out.writelines(json.dumps(r) + "\n" for r in self._rows)
        starts = os.environ.get("TASK_STARTS_FILE")
        if starts:   # when the strategy started each task: the gaps between tasks are Ansible's own time
            with open(starts, "a", encoding="utf-8") as out:
                out.writelines(json.dumps({"start": t, "task": n, "playbook": self._playbook}) + "\n"
                               for t, n in self._task_starts)

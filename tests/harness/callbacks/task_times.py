# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""A test-only callback: each task's wall time (from its start to its last host's result) appended
as JSON lines to $TKE_TASK_TIMES, with the pytest test that ran the playbook (PYTEST_CURRENT_TEST),
so tests/run_all.sh can say where a whole run's time went (tests/harness/task_times.py). Enabled
by tests/harness/playbook.py when TKE_TASK_TIMES is set; the collection knows nothing of it."""
from __future__ import annotations

DOCUMENTATION = r"""
name: task_times
type: aggregate
short_description: Task wall times of a test run, as JSON lines (test harness only)
description: Appends one line per task to the file TKE_TASK_TIMES names.
requirements: [the TKE_TASK_TIMES environment variable]
"""

import json
import os
import time

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "task_times"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self._path = os.environ.get("TKE_TASK_TIMES")
        self._test = (os.environ.get("PYTEST_CURRENT_TEST") or "").split(" ")[0]
        self._playbook, self._task, self._rows = "", None, []

    def v2_playbook_on_start(self, playbook):
        self._playbook = os.path.basename(playbook._file_name)

    def _close(self):
        if self._task:
            name, start, last, hosts = self._task
            self._rows.append({"test": self._test, "playbook": self._playbook, "task": name,
                               "seconds": round(max(last, start) - start, 2), "hosts": hosts})
        self._task = None

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._close()
        now = time.monotonic()
        self._task = [task.get_name(), now, now, 0]

    v2_playbook_on_handler_task_start = v2_playbook_on_task_start

    def _result(self, result, *args, **kwargs):
        if self._task:
            self._task[2] = time.monotonic()
            self._task[3] += 1

    v2_runner_on_ok = v2_runner_on_failed = v2_runner_on_skipped = v2_runner_on_unreachable = _result

    def v2_playbook_on_stats(self, stats):
        self._close()
        if self._path and self._rows:
            with open(self._path, "a", encoding="utf-8") as fh:
                fh.write("".join(json.dumps(r) + "\n" for r in self._rows))

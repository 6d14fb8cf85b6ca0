# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The precheck's report written on the controller, in Ansible's own process (documentation:
plugins/modules/precheck_report.py)."""
from __future__ import annotations

import json

from ansible_collections.offline_pot.tke.plugins.module_utils import precheck_rules
from ansible_collections.offline_pot.tke.plugins.plugin_utils._controller import write_private
from ansible_collections.offline_pot.tke.plugins.plugin_utils.action_module import ActionModuleBase


class ActionModule(ActionModuleBase):
    _requires_connection = False
    ARGUMENT_SPEC = dict(
        results=dict(type="dict", required=True),
        hostnames=dict(type="dict", required=True),
        dest=dict(type="path", required=True),
    )

    def run_action(self, args, result, task_vars):
        report = precheck_rules.report_by_host(args["results"], args["hostnames"])
        failures = precheck_rules.failure_lines(report)
        if not self._task.check_mode:
            write_private(args["dest"], json.dumps(report, indent=4, sort_keys=True) + "\n")
        result.update(changed=False, failures=failures, written=not self._task.check_mode)
        if failures:   # (every host's checks are in the report file and the tables shown before)
            result.update(failed=True, msg=failures)
        else:
            result["report"] = report
        return result

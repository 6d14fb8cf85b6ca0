# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Controller half of offline_pot.tke.precheck: runs the module once on the host and adds the
time-skew check, which needs the controller's clock (documentation: plugins/modules/precheck.py)."""
from __future__ import annotations

import time

from ansible_collections.offline_pot.tke.plugins.module_utils import precheck_rules
from ansible_collections.offline_pot.tke.plugins.plugin_utils.action_module import ActionModuleBase


class ActionModule(ActionModuleBase):
    ARGUMENT_SPEC = precheck_rules.ARGUMENT_SPEC

    def run_action(self, args, result, task_vars):
        max_skew = args["max_time_skew_s"]
        before = time.time()
        # the module checks its arguments again with the same spec; it gets them as the task gave them
        module = self._execute_module(module_name="offline_pot.tke.precheck", module_args=dict(self._task.args),
                                      task_vars=task_vars)
        after = time.time()
        result.update(module)
        if module.get("failed") or "facts" not in module:
            return result
        facts = module["facts"]
        # the host read its clock when the module started; the controller knows that moment
        # only to within the transport time (before .. after - the module's own work)
        transport_end = after - float(facts.get("elapsed", 0))
        midpoint = (before + transport_end) / 2
        uncertainty = max(0.0, (transport_end - before) / 2)
        skew = precheck_rules.check_time_skew(float(facts["time"]) - midpoint, uncertainty, max_skew)
        checks = list(module["checks"]) + [skew]
        result.update(checks=checks, failed_checks=precheck_rules.failures(checks),
                      table=precheck_rules.format_table(checks), changed=False)
        return result

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The base of the collection's action plugins: the task's arguments checked against an argument spec.

Private to the collection, only for action plugins (like community.crypto's
plugins/plugin_utils/_action_module.py). A subclass sets ARGUMENT_SPEC (the same dict format as
AnsibleModule's argument_spec; it must match the options documented in plugins/modules/<name>.py,
which tests/unit/plugins/action/test_argument_specs.py checks) and implements
run_action(args, result, task_vars). ansible's ArgumentSpecValidator does the checking: unknown
options, required ones, types (with the conversions a module gets), choices, sub-options, defaults.
"""
from __future__ import annotations

import copy

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase


class ActionModuleBase(ActionBase):
    ARGUMENT_SPEC: dict = {}
    # AnsibleModule's required_if: [(option, value, [options required then])]
    REQUIRED_IF: list = []

    def validated_args(self) -> dict:
        """The task's arguments, checked and completed with their defaults; a bad one fails the task."""
        validated = ArgumentSpecValidator(self.ARGUMENT_SPEC, required_if=self.REQUIRED_IF).validate(self._task.args)
        if validated.error_messages:
            raise AnsibleActionFail(f"{self._task.action}: " + "; ".join(validated.error_messages))
        # a copy: defaults are objects of the class-level spec, shared by every run
        return copy.deepcopy(validated.validated_parameters)

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        return self.run_action(self.validated_args(), result, task_vars or {})

    def run_action(self, args: dict, result: dict, task_vars: dict) -> dict:
        raise NotImplementedError

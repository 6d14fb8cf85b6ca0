# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Run one of the user's hook playbooks with the same inventory and variables as this run."""
from __future__ import annotations

# Documentation: plugins/modules/install_hook.py (ansible-doc reads it there).

import os

from ansible import context
from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_text

from ansible_collections.offline_pot.tke.plugins.plugin_utils import install_hooks
from ansible_collections.offline_pot.tke.plugins.plugin_utils import install_journal as ij
from ansible_collections.offline_pot.tke.plugins.plugin_utils.action_module import ActionModuleBase
from ansible_collections.offline_pot.tke.plugins.plugin_utils import inventory_model
from ansible_collections.offline_pot.tke.plugins.plugin_utils._controller import (
    read_text, sync_tke_json_step, utc_now, write_private)


class ActionModule(ActionModuleBase):
    TRANSFERS_FILES = False
    ARGUMENT_SPEC = dict(
        name=dict(type="str", required=True),
        hooks_dir=dict(type="path"),
        journal=dict(type="bool", default=False),
    )

    def run_action(self, args, result, task_vars):
        name = args["name"]
        hooks_dir = args["hooks_dir"] or self._templar.template(task_vars.get("tke_hooks_dir", "hooks"))
        path = install_hooks.hook_path(to_text(hooks_dir), name)
        if not os.path.isfile(path):
            return dict(result, skipped=True, changed=False, msg=f"no hook {path}")

        phase = f"hook:{name}"
        use_journal = args["journal"] and phase in ij.PHASE_NAMES
        journal_path = os.path.join(to_text(self._templar.template(task_vars.get("tke_state_dir"))), "journal.json")
        fp = ij.hook_fingerprint(os.path.abspath(to_text(hooks_dir)), name)
        if use_journal:
            journal = ij.load(read_text(journal_path))
            force = ij.parse_phase_list(self._templar.template(task_vars.get("force_phases")), "force_phases")
            resume = inventory_model.tke_setting("tke_resume", self._templar.template(task_vars.get("tke_resume", True)))
            if not ij.decide(journal, phase, fp, force=force, resume=resume)["run"]:
                return dict(result, skipped=True, changed=False, hook=path,
                            msg=f"hook {name}: done {journal['phases'][phase]['controller']['done_at']}, unchanged")

        try:
            ran = install_hooks.run_hook(name, path, dict(context.CLIARGS), self._task.check_mode)
        except ValueError as exc:
            raise AnsibleActionFail(str(exc))
        result.update(ran)
        if ran["failed"]:
            return result
        if use_journal and not self._task.check_mode:
            journal = ij.record(ij.load(read_text(journal_path)), phase, fp, utc_now())
            write_private(journal_path, ij.dump(journal))
            sync_tke_json_step(os.path.dirname(journal_path), journal["step"])
        return result

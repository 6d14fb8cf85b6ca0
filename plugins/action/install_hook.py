# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Run one of the user's hook playbooks with the same inventory and variables as this run."""
from __future__ import annotations

# Documentation: plugins/modules/install_hook.py (ansible-doc reads it there).

import os
import re
import shutil
import subprocess
import sys
import time

from ansible import context
from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_text

from ansible_collections.offline_pot.tke.plugins.plugin_utils import install_journal as ij
from ansible_collections.offline_pot.tke.plugins.plugin_utils.action_module import ActionModuleBase
from ansible_collections.offline_pot.tke.plugins.plugin_utils import inventory_model
from ansible_collections.offline_pot.tke.plugins.plugin_utils._controller import (
    read_text, sync_tke_json_step, utc_now, write_private)

TAIL = 60


def hook_argv(playbook, cli, check_mode):
    """ansible-playbook command line for a hook, carrying over this run's options."""
    exe = os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])), "ansible-playbook")
    if not os.access(exe, os.X_OK):
        exe = shutil.which("ansible-playbook") or "ansible-playbook"
    argv = [exe, playbook]
    for inv in cli.get("inventory") or ():
        argv += ["-i", inv]
    for ev in cli.get("extra_vars") or ():
        argv += ["-e", ev]
    for vid in cli.get("vault_ids") or ():
        argv += ["--vault-id", vid]
    for vpf in cli.get("vault_password_files") or ():
        argv += ["--vault-password-file", vpf]
    options = (("subset", "--limit"), ("remote_user", "--user"), ("private_key_file", "--private-key"),
               ("connection", "--connection"), ("timeout", "--timeout"), ("forks", "--forks"),
               ("become_method", "--become-method"), ("become_user", "--become-user"))
    for key, flag in options:
        if cli.get(key) not in (None, ""):
            argv += [flag, str(cli[key])]
    if cli.get("become"):
        argv.append("--become")
    if check_mode:
        argv.append("--check")
    if cli.get("verbosity"):
        argv.append("-" + "v" * int(cli["verbosity"]))
    return argv


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
        path = os.path.abspath(os.path.join(to_text(hooks_dir), f"{name}.yml"))
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

        cli = dict(context.CLIARGS)
        if cli.get("ask_vault_pass") or cli.get("become_ask_pass") or cli.get("ask_pass"):
            raise AnsibleActionFail(f"hook {name}: interactive passwords cannot be passed to a hook; "
                                    "use --vault-password-file / ansible_become_password in the inventory")
        argv = hook_argv(path, cli, self._task.check_mode)
        started = time.time()
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=dict(os.environ, ANSIBLE_NOCOLOR="1",
                                       # its PLAY RECAP is read below; its output's tail is the result's
                                       ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default"),
                              check=False)
        lines = proc.stdout.splitlines()[-TAIL:]
        # the hook changed something when its own PLAY RECAP says so
        recap = proc.stdout.rsplit("PLAY RECAP", 1)[-1] if "PLAY RECAP" in proc.stdout else ""
        changed = any(int(n) for n in re.findall(r"\bchanged=(\d+)", recap))
        result.update(hook=path, rc=proc.returncode, stdout_lines=lines, changed=changed)
        if proc.returncode != 0:
            result.update(failed=True, msg=f"hook {name} ({path}) failed with exit code {proc.returncode}")
            return result
        if use_journal and not self._task.check_mode:
            journal = ij.record(ij.load(read_text(journal_path)), phase, fp, utc_now())
            write_private(journal_path, ij.dump(journal))
            sync_tke_json_step(os.path.dirname(journal_path), journal["step"])
        result["msg"] = f"hook {name} ran in {time.time() - started:.1f} s"
        return result

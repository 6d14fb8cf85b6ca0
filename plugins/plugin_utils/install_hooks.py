# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The user's hook playbooks (docs/install.md, "Hooks"): where one is, and running it with the
same inventory and options as this run. Used by the action plugins install_hook (the install-level
hooks, journalled) and install_phase (a phase's before and after hooks, run as the phase starts
and before it is recorded done). Private to the collection; runs on the controller."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time

TAIL = 60


def hook_path(hooks_dir, name):
    """Where the hook's playbook is when there is one: <hooks_dir>/<name>.yml, absolute."""
    return os.path.abspath(os.path.join(hooks_dir, f"{name}.yml"))


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


def run_hook(name, path, cli, check_mode):
    """Run the hook playbook at path. Returns {hook, rc, stdout_lines (its output's tail), changed
    (its own PLAY RECAP says so), seconds, msg, failed}. Raises ValueError for a run that asks for
    passwords interactively (a hook cannot ask)."""
    if cli.get("ask_vault_pass") or cli.get("become_ask_pass") or cli.get("ask_pass"):
        raise ValueError(f"hook {name}: interactive passwords cannot be passed to a hook; "
                         "use --vault-password-file / ansible_become_password in the inventory")
    started = time.time()
    proc = subprocess.run(hook_argv(path, cli, check_mode), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True,
                          env=dict(os.environ, ANSIBLE_NOCOLOR="1",
                                   # its PLAY RECAP is read below; its output's tail is the result's
                                   ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default"),
                          check=False)
    recap = proc.stdout.rsplit("PLAY RECAP", 1)[-1] if "PLAY RECAP" in proc.stdout else ""
    seconds = round(time.time() - started, 1)
    out = dict(hook=path, rc=proc.returncode, stdout_lines=proc.stdout.splitlines()[-TAIL:], seconds=seconds,
               changed=any(int(n) for n in re.findall(r"\bchanged=(\d+)", recap)), failed=proc.returncode != 0)
    out["msg"] = (f"hook {name} ({path}) failed with exit code {proc.returncode}" if out["failed"]
                  else f"hook {name} ran in {seconds:.1f} s")
    return out

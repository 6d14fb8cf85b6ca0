# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""A site's controller state, packed and encrypted with the run's vault password (documentation:
plugins/modules/state_backup.py)."""
from __future__ import annotations

import io
import os
import tarfile

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_text
from ansible.parsing.vault import VaultLib

from ansible_collections.offline_pot.tke.plugins.module_utils.atomic_file import write_file
from ansible_collections.offline_pot.tke.plugins.plugin_utils import site_identity as si
from ansible_collections.offline_pot.tke.plugins.plugin_utils.action_module import ActionModuleBase
from ansible_collections.offline_pot.tke.plugins.plugin_utils._controller import read_text, utc_now


class ActionModule(ActionModuleBase):
    TRANSFERS_FILES = False
    ARGUMENT_SPEC = dict(
        state_dir=dict(type="path"),
        dest=dict(type="path", required=True),
        exclude=dict(type="list", elements="str", default=["run.lock", "pack", "etcd-backups"]),
    )
    _supports_check_mode = True

    def run_action(self, args, result, task_vars):
        state_dir = os.path.abspath(args["state_dir"] or to_text(self._templar.template(task_vars.get("tke_state_dir"))))
        if not os.path.isfile(os.path.join(state_dir, si.CONTROLLER_FILE)):
            raise AnsibleActionFail(f"{state_dir} holds no site's state (no {si.CONTROLLER_FILE}): nothing to back up")
        secrets = getattr(getattr(self._loader, "_vault", None), "secrets", None)
        if not secrets:
            raise AnsibleActionFail("no vault password: the backup holds the cluster's CA keys and is encrypted with "
                                    "it; give --vault-password-file (or --vault-id)")
        try:
            identity = si.load(read_text(os.path.join(state_dir, si.CONTROLLER_FILE)))
        except ValueError as exc:
            raise AnsibleActionFail(f"{state_dir}/{si.CONTROLLER_FILE}: {exc}")
        parent, base = os.path.split(state_dir)
        files = []
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            for dirpath, dirs, names in os.walk(state_dir):
                if dirpath == state_dir:
                    dirs[:] = sorted(d for d in dirs if d not in args["exclude"])
                    names = [n for n in names if n not in args["exclude"]]
                dirs.sort()
                for name in sorted(names):
                    full = os.path.join(dirpath, name)
                    if os.path.isfile(full) and not os.path.islink(full):
                        rel = os.path.relpath(full, parent)
                        tar.add(full, arcname=rel, recursive=False)
                        files.append(rel)
        stamp = utc_now().replace("-", "").replace(":", "")
        path = os.path.join(os.path.abspath(args["dest"]), f"tke-state-{identity['id']}-{stamp}.tar.gz.vault")
        if not self._task.check_mode:
            data = VaultLib(secrets).encrypt(buf.getvalue())
            write_file(path, data, 0o600, dir_mode=0o700)
        result.update(changed=True, path=path, files=files,
                      msg=f"{len(files)} files of {state_dir} saved to {path}, encrypted with the vault password "
                          f"(restore: ansible-vault decrypt --output - {path} | tar -xz -C {parent})")
        return result

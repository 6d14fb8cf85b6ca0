# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Controller side of pack_sync: select files from the manifest, send only what the host lacks."""
from __future__ import annotations

import json
import os
import tarfile
import tempfile

from ansible.errors import AnsibleActionFail

from ansible_collections.offline_pot.tke.plugins.module_utils import pack_manifest as pm
from ansible_collections.offline_pot.tke.plugins.plugin_utils.action_module import ActionModuleBase


class ActionModule(ActionModuleBase):
    TRANSFERS_FILES = True
    _requires_connection = True
    ARGUMENT_SPEC = pm.SYNC_ARGS

    def run_action(self, args, result, task_vars):
        try:
            with open(os.path.join(args["src"], pm.MANIFEST_NAME)) as f:
                manifest = json.load(f)
        except (OSError, ValueError) as e:
            raise AnsibleActionFail(f"cannot read the pack manifest in {args['src']}: {e}") from e
        prefix = args["prefix"].strip("/")
        files = pm.select(manifest, prefix, args["include"], args["exclude"])
        # the task's own options go along (the module declares them too), plus the selection
        mod_args = dict(args, files=files,
                        install=[{"path": e["path"], "install": e["install"]} for e in args["install"]])
        first = self._execute_module("offline_pot.tke.pack_sync", module_args=mod_args,
                                     task_vars=task_vars)
        if first.get("failed") or not first.get("need") or self._task.check_mode:
            first.update(transferred=first.get("need", []), bytes=0, files=len(files))
            result.update(first)
            return result

        need = first["need"]
        base = os.path.join(args["src"], prefix) if prefix else args["src"]
        remote_tmp = self._connection._shell.tmpdir or self._make_tmp_path()
        with tempfile.TemporaryDirectory(prefix="tke-pack-sync-") as ltmp:
            # uncompressed: on a data centre's network compression costs more CPU than the bytes it
            # saves (docs/install.md, "Speed")
            local = os.path.join(ltmp, "files.tar")
            with tarfile.open(local, "w") as t:
                for rel in need:
                    t.add(os.path.join(base, rel), arcname=rel, recursive=False)
            size = os.path.getsize(local)
            remote = self._connection._shell.join_path(remote_tmp, "files.tar")
            self._transfer_file(local, remote)
        self._fixup_perms2((remote_tmp, remote))
        second = self._execute_module("offline_pot.tke.pack_sync",
                                      module_args=dict(mod_args, archive=remote), task_vars=task_vars)
        self._remove_tmp_path(remote_tmp)
        second.update(transferred=need, bytes=size, files=len(files))
        result.update(second)
        return result

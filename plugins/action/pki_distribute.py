# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Read a host's PKI files on the controller and write them on the host in one module call
(documentation: plugins/modules/pki_distribute.py)."""
from __future__ import annotations

import os

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    # ActionBase.run refuses any other parameter
    _VALID_ARGS = frozenset(("pki_dir", "files", "pending_sources"))
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = self._task.args
        pki_dir = os.path.abspath(os.path.expanduser(to_text(args.get("pki_dir") or "")))
        files = args.get("files")
        if not args.get("pki_dir") or not isinstance(files, list):
            raise AnsibleActionFail("pki_dir and files (a list) are required")
        # check mode: sources the authority would re-issue count as changes (their new bytes are unknown)
        would_change = set(args.get("pending_sources") or []) if self._task.check_mode else set()
        payload, pending, contents = [], [], {}
        for f in files:
            try:
                src, dest, mode = f["src"], f["dest"], str(f["mode"])
            except (KeyError, TypeError):
                raise AnsibleActionFail(f"every file needs src, dest and mode (got {f!r})")
            if src in would_change:
                pending.append(dest)
                continue
            path = os.path.normpath(os.path.join(pki_dir, src))
            if not path.startswith(pki_dir + os.sep):
                raise AnsibleActionFail(f"{src}: outside {pki_dir}")
            try:
                with open(path, "rb") as fh:
                    content = fh.read().decode()
            except FileNotFoundError:
                if self._task.check_mode:
                    pending.append(dest)      # not issued yet: in check mode it would be written
                    continue
                raise AnsibleActionFail(f"{path} does not exist: run offline_pot.tke.k8s_pki first")
            payload.append({"path": dest, "mode": mode})
            contents[dest] = content
        if not payload:
            result.update(changed=bool(pending), changed_files=pending, files={d: "pending" for d in pending})
            return result
        res = self._execute_module(module_name="offline_pot.tke.pki_files", module_args={"files": payload, "contents": contents},
                                   task_vars=task_vars)
        res.pop("invocation", None)
        if pending and not res.get("failed"):
            res["changed"] = True
            res["changed_files"] = sorted(res.get("changed_files", []) + pending)
            res.setdefault("files", {}).update({d: "pending" for d in pending})
        result.update(res)
        return result

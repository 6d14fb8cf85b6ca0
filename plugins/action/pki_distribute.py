# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Read a host's PKI files on the controller and write them on the host in one module call
(documentation: plugins/modules/pki_distribute.py)."""
from __future__ import annotations

import datetime
import os

from ansible.errors import AnsibleActionFail

from ansible_collections.offline_pot.tke.plugins.plugin_utils import k8s_pki
from ansible_collections.offline_pot.tke.plugins.plugin_utils.action_module import ActionModuleBase


def store_cas(pki_dir):
    """The CA certificates of the controller's store (what a host's certificate must be signed by)."""
    cas = []
    for dirpath, dummy, names in os.walk(pki_dir):
        for n in names:
            if n.endswith("ca.crt"):
                with open(os.path.join(dirpath, n), "rb") as fh:
                    cert = k8s_pki.load_cert(fh.read())
                if cert is not None and k8s_pki.cert_is_ca(cert):
                    cas.append(cert)
    return cas


class ActionModule(ActionModuleBase):
    TRANSFERS_FILES = False
    ARGUMENT_SPEC = dict(
        pki_dir=dict(type="path", required=True),
        files=dict(type="list", elements="dict", required=True, options=dict(
            src=dict(type="str", required=True),
            dest=dict(type="str", required=True),
            mode=dict(type="str", required=True))),
        pending_sources=dict(type="list", elements="str", default=[]),
    )
    _supports_check_mode = True
    _supports_async = False

    def run_action(self, args, result, task_vars):
        pki_dir = os.path.abspath(args["pki_dir"])
        # check mode: sources the authority would re-issue count as changes (their new bytes are unknown)
        would_change = set(args["pending_sources"]) if self._task.check_mode else set()
        payload, pending, contents = [], [], {}
        for f in args["files"]:
            src, dest, mode = f["src"], f["dest"], f["mode"]
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
            result.update(changed=bool(pending), changed_files=pending, files={d: "pending" for d in pending},
                          replaced=[])
            return result
        res = self._execute_module(module_name="offline_pot.tke.pki_files", module_args={"files": payload, "contents": contents},
                                   task_vars=task_vars)
        res.pop("invocation", None)
        # per file, what the host had and why the store's copy replaces it (its certificate: public)
        previous = res.pop("previous", None) or {}
        if previous and k8s_pki.HAS_CRYPTOGRAPHY:
            res["replaced"] = k8s_pki.replacement_reasons(
                task_vars.get("inventory_hostname", ""), previous, contents,
                {p["path"]: p["mode"] for p in payload}, store_cas(pki_dir), datetime.datetime.now(datetime.timezone.utc))
        else:
            res["replaced"] = [f"{task_vars.get('inventory_hostname', '')}: {d}: replaced ({p.get('state')})"
                               for d, p in sorted(previous.items())]
        if pending and not res.get("failed"):
            res["changed"] = True
            res["changed_files"] = sorted(res.get("changed_files", []) + pending)
            res.setdefault("files", {}).update({d: "pending" for d in pending})
        result.update(res)
        return result

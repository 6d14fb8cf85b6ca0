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
        pending_digests=dict(type="dict", default={}),
    )
    _supports_check_mode = True
    _supports_async = False

    def run_action(self, args, result, task_vars):
        pki_dir = os.path.abspath(args["pki_dir"])
        # check mode: sources the authority would rewrite are not in the store yet; the host's file is
        # compared with the digest of their new bytes
        would_change = args["pending_digests"] if self._task.check_mode else {}
        payload, pending, contents, digests = [], [], {}, {}
        for f in args["files"]:
            src, dest, mode = f["src"], f["dest"], f["mode"]
            if src in would_change:
                payload.append({"path": dest, "mode": mode})
                digests[dest] = would_change[src]
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
        res = self._execute_module(module_name="offline_pot.tke.pki_files",
                                   module_args={"files": payload, "contents": contents, "digests": digests},
                                   task_vars=task_vars)
        res.pop("invocation", None)
        # per file, what the host had and why the store's copy replaces it (its certificate: public)
        previous = res.pop("previous", None) or {}
        host = task_vars.get("inventory_hostname", "")
        by_digest = {d: p for d, p in previous.items() if d in digests}
        previous = {d: p for d, p in previous.items() if d not in digests}
        if previous and k8s_pki.HAS_CRYPTOGRAPHY:
            res["replaced"] = k8s_pki.replacement_reasons(
                host, previous, contents,
                {p["path"]: p["mode"] for p in payload}, store_cas(pki_dir), datetime.datetime.now(datetime.timezone.utc))
        else:
            res["replaced"] = [f"{host}: {d}: replaced ({p.get('state')})" for d, p in sorted(previous.items())]
        res["replaced"] += [f"{host}: {d}: would be {'written' if p.get('state') == 'absent' else 'replaced'} - the "
                            "authority would rewrite it (check mode: the store keeps its old copy)"
                            for d, p in sorted(by_digest.items())]
        if pending and not res.get("failed"):
            res["changed"] = True
            res["changed_files"] = sorted(res.get("changed_files", []) + pending)
            res.setdefault("files", {}).update({d: "pending" for d in pending})
        result.update(res)
        return result

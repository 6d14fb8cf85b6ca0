# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""run_report: the run's HTML report, gathered and written on the controller (plugin_utils/run_report)."""
from __future__ import annotations

import hashlib
import json
import os
import time

from ansible_collections.offline_pot.tke.plugins.module_utils import pack_signature
from ansible_collections.offline_pot.tke.plugins.module_utils.pack_manifest import MANIFEST_NAME
from ansible_collections.offline_pot.tke.plugins.plugin_utils import install_journal as ij
from ansible_collections.offline_pot.tke.plugins.plugin_utils import run_report, site_lock
from ansible_collections.offline_pot.tke.plugins.plugin_utils._controller import read_text, utc_now, write_private
from ansible_collections.offline_pot.tke.plugins.plugin_utils.action_module import ActionModuleBase


def node_rows(nodes):
    """Name, Ready and kubelet version of each Node object (k8s_info's resources)."""
    rows = []
    for n in nodes:
        ready = next((c.get("status") for c in (n.get("status") or {}).get("conditions") or []
                      if c.get("type") == "Ready"), "Unknown")
        rows.append({"name": (n.get("metadata") or {}).get("name", "?"), "ready": ready,
                     "version": ((n.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion", "?")})
    return sorted(rows, key=lambda r: r["name"])


def state_changes(hosts, before, after, record_dir):
    """{host: {phase: [probe names]} (what the run changed there), or None when the host was not
    read at the run's start and its end (failed, unreachable, or a playbook that does not read)}."""
    return {h: ij.state_changes(before[h], after[h], record_dir)
            if isinstance(before.get(h), str) and isinstance(after.get(h), str) else None for h in hosts}


def pack_identity(pack, unpack_dir, pubkey):
    """The site pack's name, version, signature state and the key's sha256 (of its public key PEM),
    from the unpacked pack on the controller; None when there is none."""
    pack_dir = pack if pack and os.path.isdir(pack) else read_text(os.path.join(unpack_dir, ".pack-dir")).strip()
    manifest = read_text(os.path.join(pack_dir, MANIFEST_NAME)) if pack_dir else ""
    if not manifest:
        return None
    data = json.loads(manifest)
    try:
        signature = pack_signature.check_pack(pack_dir, pubkey, True)
    except pack_signature.SignatureError as e:
        signature = f"refused: {e}"
    return {"path": pack or pack_dir, "name": data.get("name", "?"), "version": data.get("version", "?"),
            "signature": signature,
            "key sha256": hashlib.sha256(pubkey.strip().encode()).hexdigest() if pubkey.strip() else "no key"}


class ActionModule(ActionModuleBase):
    TRANSFERS_FILES = False
    _requires_connection = False   # the site's state is the controller's
    ARGUMENT_SPEC = dict(
        state_dir=dict(type="path", required=True),
        playbook=dict(type="str", default="install"),
        site=dict(type="dict", default={}),
        hosts=dict(type="dict", default={}),
        certificates=dict(type="list", elements="dict", default=[]),
        nodes=dict(type="list", elements="dict"),
        # each host's read of its records and state probes at the run's start and at its end
        # (roles/tke/vars tke_host_read_script; None: not read), compared for what the run changed
        state_before=dict(type="dict", default={}),
        state_after=dict(type="dict", default={}),
        record_dir=dict(type="str", required=True),
        pack=dict(type="str", default=""),
        pack_dir=dict(type="path", required=True),
        pubkey=dict(type="str", default=""),
    )

    def run_action(self, args, result, task_vars):
        state = args["state_dir"]
        journal = ij.load(read_text(os.path.join(state, "journal.json")))
        try:
            lock = json.loads(read_text(os.path.join(state, site_lock.LOCK_FILE)) or "{}")
        except ValueError:
            lock = {}
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        name = f"{stamp}-{args['playbook']}.html"
        links = {"install journal (JSON)": "../journal.json", "tke.json": "../tke.json"}
        if os.path.exists(os.path.join(state, "precheck.json")):
            links["precheck (JSON)"] = "../precheck.json"
        page = run_report.render({
            "title": f"offline_pot.tke {args['playbook']} report: {args['site'].get('cluster', '')}",
            "generated": utc_now(), "run_started": lock.get("started"), "site": args["site"], "hosts": args["hosts"],
            "phases": [p for p in ij.PHASE_NAMES if not p.startswith("hook:")], "journal": journal,
            "certificates": args["certificates"], "nodes": None if args["nodes"] is None else node_rows(args["nodes"]),
            "changes": state_changes(args["hosts"], args["state_before"], args["state_after"], args["record_dir"]),
            "pack": pack_identity(args["pack"], args["pack_dir"], args["pubkey"]), "links": links})
        path = os.path.join(state, "reports", name)
        if not self._task.check_mode:
            write_private(path, page)
        # bookkeeping on the controller, not a change to the site
        result.update(changed=False, path=path, written=not self._task.check_mode)
        return result

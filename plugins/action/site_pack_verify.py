# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""site_pack_verify: the site pack checked in the controller's own process (plugin_utils/pack_verify)."""
from __future__ import annotations

from ansible_collections.offline_pot.tke.plugins.plugin_utils import pack_verify
from ansible_collections.offline_pot.tke.plugins.plugin_utils.action_module import ActionModuleBase


class ActionModule(ActionModuleBase):
    TRANSFERS_FILES = False
    _requires_connection = False   # the pack is the controller's: no host, no interpreter to start
    ARGUMENT_SPEC = dict(pack=dict(type="path", required=True), unpack_dir=dict(type="path", required=True),
                         pubkey=dict(type="str", default=""), allow_unsigned=dict(type="bool", default=False),
                         signature_only=dict(type="bool", default=False))

    def run_action(self, args, result, task_vars):
        try:
            result.update(pack_verify.verify(args["pack"], args["unpack_dir"], args["pubkey"], args["allow_unsigned"],
                                             args["signature_only"], keep_digests=not self._task.check_mode))
        except pack_verify.PackRefused as e:
            result.update(failed=True, msg=str(e), **e.fields)
        return result

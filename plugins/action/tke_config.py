# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Render tke.json on the controller from the inventory (documentation: plugins/modules/tke_config.py)."""
from __future__ import annotations

import json
import os

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_text
from ansible.template import trust_as_template

from ansible_collections.offline_pot.tke.plugins.plugin_utils import tke_config
from ansible_collections.offline_pot.tke.plugins.plugin_utils._controller import read_text, write_private
from ansible_collections.offline_pot.tke.plugins.plugin_utils import inventory_model, tke_rules
from ansible_collections.offline_pot.tke.plugins.plugin_utils.action_module import ActionModuleBase

TEMPLATE = os.path.join(os.path.dirname(__file__), "..", "..", "templates", "tke.json.j2")


def read_secrets(model, hostvars, templar):
    """Per-master password and private key, read on the controller (never returned)."""
    out = {}
    for host in model["groups"].get("masters", []):
        hv = hostvars[host]
        entry = {}
        for var in ("ansible_password", "ansible_ssh_pass"):
            if var in hv and hv[var]:
                entry["password"] = to_text(hv[var])
                break
        for var in ("ansible_ssh_private_key_file", "ansible_private_key_file"):
            if var in hv and hv[var]:
                path = os.path.expanduser(to_text(hv[var]))
                if os.path.isfile(path):
                    with open(path, encoding="utf-8") as fh:
                        entry["private_key"] = fh.read()
                break
        out[host] = entry
    return out


def registry_credential(task_vars, templar):
    """The registry role's registry_user / registry_password when the inventory (or -e) sets them
    (their defaults, the admin's, are the registry role's and not visible in the validate play)."""
    return {key: to_text(templar.template(task_vars[var])) if task_vars.get(var) else ""
            for key, var in (("user", "registry_user"), ("password", "registry_password"))}


class ActionModule(ActionModuleBase):
    _requires_connection = False
    ARGUMENT_SPEC = dict(
        dest=dict(type="path"),
        step=dict(type="int"),
        template=dict(type="path"),
        node_interfaces=dict(type="dict"),
    )

    def run_action(self, args, result, task_vars):
        dest = args["dest"] or os.path.expanduser(
            to_text(os.path.join(self._templar.template(task_vars["tke_state_dir"]), "tke.json")))
        source = args["template"] or TEMPLATE
        try:
            with open(dest, encoding="utf-8") as fh:
                before = fh.read()
        except FileNotFoundError:
            before = None
        step = tke_config.existing_step(before or "") if args["step"] is None else args["step"]

        model = inventory_model.build(task_vars, self._templar)
        secrets = read_secrets(model, task_vars.get("hostvars", {}), self._templar)
        # the interfaces the hosts' node addresses are on, as prechecks read them (interfaces.json)
        record_path = os.path.join(os.path.dirname(dest), tke_config.INTERFACES_FILE)
        try:
            recorded = tke_config.load_interfaces(read_text(record_path))
        except ValueError as exc:
            raise AnsibleActionFail(f"{record_path}: {exc}") from None
        interfaces = tke_config.merge_interfaces(recorded, args["node_interfaces"], model["hosts"])
        ctx = tke_config.context(model, secrets, step=step, registry=registry_credential(task_vars, self._templar),
                                 interfaces=interfaces)
        with open(source, encoding="utf-8") as fh:
            template_text = trust_as_template(fh.read())
        templar = self._templar.copy_with_new_env(available_variables={"tke": ctx})
        rendered = templar.template(template_text, escape_backslashes=False)
        try:
            text = tke_config.canonical(to_text(rendered))
        except ValueError as exc:
            raise AnsibleActionFail(f"{source} did not render valid JSON: {exc}") from None

        # what TKE's own validation would refuse (the inventory rules stop most of it earlier)
        data = json.loads(text)
        warnings = [f"tke.json: {p}" for p in tke_rules.check(data) + tke_rules.installer_limits(data)
                    + ctx["network_device_warnings"]]
        if warnings:
            result["warnings"] = warnings
        mode_ok = before is not None and (os.stat(dest).st_mode & 0o777) == 0o600
        changed = before != text or not mode_ok
        if changed and not self._task.check_mode:
            write_private(dest, text)
        if interfaces != recorded and not self._task.check_mode:
            write_private(record_path, tke_config.dump_interfaces(interfaces))
            changed = True
        result.update(changed=changed, dest=dest, step=step, mode=ctx["ha_mode"],
                      machines=len(ctx["machines"]), network_device=ctx["network_device"])
        return result

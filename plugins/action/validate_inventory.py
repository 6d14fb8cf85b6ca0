# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Check the whole inventory on the controller and report every problem at once
(documentation: plugins/modules/validate_inventory.py)."""
from __future__ import annotations

from ansible.errors import AnsibleUndefinedVariable
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.offline_pot.tke.plugins.plugin_utils import components
from ansible_collections.offline_pot.tke.plugins.plugin_utils import inventory_rules
from ansible_collections.offline_pot.tke.plugins.plugin_utils import inventory_model
from ansible_collections.offline_pot.tke.plugins.plugin_utils.action_module import ActionModuleBase


def spec_problems(host, hostvars, specs, settings, with_defaults):
    """Argument-spec, unknown-variable and cluster-consistency problems of one host.
    with_defaults(name): the variable templated with every role's defaults in reach, for a value
    built on one ("{{ etcd_peer_port }}"), which the host's variables alone cannot template."""
    out = []
    prefixes = {f"{role}_": role for role in specs}
    for name in inventory_model.explicit_vars(hostvars, prefixes):
        role = next(r for p, r in prefixes.items() if name.startswith(p))
        if name not in specs[role]:
            out.append(inventory_rules.problem(f"host {host}", name, f"unknown variable: role {role} has no such "
                                               "option (see docs/inventory.md)"))
    for role, options in sorted(specs.items()):
        provided = {}
        for name in options:
            if name in hostvars:
                try:
                    try:
                        provided[name] = hostvars[name]
                    except Exception as exc:  # pylint: disable=broad-except
                        if "undefined" not in str(exc).lower():
                            raise
                        # a value built on a role default: templated as the role's play would, so
                        # its type is checked here too (install.yml's phases do not check their
                        # roles' arguments again: roles/tke/tasks/phase.yml)
                        provided[name] = with_defaults(name)
                except Exception as exc:  # pylint: disable=broad-except
                    # still undefined: built on what only the host tells (its facts), which the
                    # controller cannot know before contacting it
                    if "undefined" not in str(exc).lower():
                        out.append(inventory_rules.problem(f"host {host}", name, f"cannot be templated: {exc}"))
        if not provided:
            continue
        for name, message in inventory_rules.mode_problems(options, provided):
            out.append(inventory_rules.problem(f"host {host}", name, message))
        result = ArgumentSpecValidator(options).validate(provided)
        for err in result.errors:
            text = str(err)
            name = next((n for n in sorted(provided, key=len, reverse=True) if n in text), role)
            out.append(inventory_rules.problem(f"host {host}", name, text))
        if role == "tke":
            for name, value in sorted(result.validated_parameters.items()):
                if name in provided and name in settings and value != settings[name] \
                        and not options[name].get("no_log") and name not in inventory_model.PER_HOST_SETTINGS:
                    out.append(inventory_rules.problem(
                        f"host {host}", name, f"set to {value!r} for this host but {settings[name]!r} for the "
                        "cluster; cluster-wide tke_* settings belong in group_vars/all"))
    return out


def component_problems(host, all_hostvars, pack):
    """The components of components_list between themselves and with the site pack
    (plugin_utils/components.py); the argument spec checks each entry's types."""
    hostvars = all_hostvars[host]
    try:
        declared = hostvars[components.VARIABLE] if components.VARIABLE in hostvars else None
    except AnsibleUndefinedVariable:
        # a value naming a variable only the components role defines ("{{ components_image_prefix }}"
        # in a chart's values): the entries as written, whose names, sources and dependencies are
        # checked all the same
        declared = all_hostvars.raw_get(host).get(components.VARIABLE)
        if not isinstance(declared, list):
            return []  # the list itself a template: spec_problems reports what it cannot read
    except Exception:  # pylint: disable=broad-except
        return []  # not templatable: spec_problems reports it
    out = []
    for line in components.problems(declared, pack):
        variable, dummy, message = line.partition(": ")
        out.append(inventory_rules.problem(f"host {host}", variable, message))
    return out


class ActionModule(ActionModuleBase):
    _requires_connection = False
    ARGUMENT_SPEC = dict(extra_problems=dict(type="list", elements="str", default=[]))

    def _with_defaults(self, hostvars, host):
        """A host's variable templated with every role's defaults under its own variables (the
        host's raw variables and the templar made once, at its first such variable)."""
        made = {}

        def template(name):
            if not made:
                made["raw"] = raw = hostvars.raw_get(host)
                made["templar"] = self._templar.copy_with_new_env(
                    available_variables={**inventory_model.role_defaults(), **raw})
            return made["templar"].template(made["raw"][name])
        return template

    def run_action(self, args, result, task_vars):
        model = inventory_model.build(task_vars, self._templar)
        specs = inventory_model.role_specs()
        problems = []
        hostvars = task_vars.get("hostvars", {})
        per_host = {}
        for host in sorted(model["hosts"]):
            for p in spec_problems(host, hostvars[host], specs, model["settings"], self._with_defaults(hostvars, host)):
                per_host.setdefault((p["variable"], p["message"]), []).append(host)
        pack = components.pack_components(model["settings"].get("tke_site_pack") or "")
        for host in sorted(model["hosts"]):
            for p in component_problems(host, hostvars, pack):
                per_host.setdefault((p["variable"], p["message"]), []).append(host)
        # a value set once in group_vars is reported once, naming every host that has it
        for (variable, message), hosts in per_host.items():
            scope = f"host {hosts[0]}" if len(hosts) == 1 else f"hosts {', '.join(hosts)}"
            problems.append(inventory_rules.problem(scope, variable, message))
        # a value the argument specs already rejected is not reported again by the cross-field rules
        rejected = {p["variable"] for p in problems}
        problems += [p for p in inventory_rules.check(model) if p["variable"] not in rejected]
        lines = [inventory_rules.format_problem(p) for p in problems]
        lines += args["extra_problems"]
        result.update(changed=False, problems=lines, hosts=len(model["hosts"]))
        if lines:
            result["failed"] = True
            result["msg"] = (f"The inventory has {len(lines)} problem(s); nothing was touched:\n"
                             + "\n".join(f"- {line}" for line in lines))
        else:
            result["msg"] = f"inventory valid: {len(model['hosts'])} hosts"
        return result

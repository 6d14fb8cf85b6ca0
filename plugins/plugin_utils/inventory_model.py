# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Controller side, private to the collection: read the inventory an action plugin sees into
the plain model that plugin_utils.inventory_rules checks and the tke.json template renders.

Only controller-side reads: group lists, per-host inventory variables (hostvars, templated on
access) and the cluster-wide tke_* settings of the running play. No host is contacted.
"""
from __future__ import annotations

import functools
import os

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.offline_pot.tke.plugins.plugin_utils._controller import read_yaml

ROLES_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "roles")
GROUPS = ("masters", "workers", "etcd", "registry")
# Connection variables that may name a host's address, in Ansible's order of precedence.
ADDRESS_VARS = ("ansible_host", "ansible_ssh_host")
# tke_* settings that are per host (host_vars), not cluster-wide.
PER_HOST_SETTINGS = frozenset({"tke_node_ip"})


def node_address(name, hostvars):
    """A node's address, the one rule (docs/architecture.md, "Derived settings"): its tke_node_ip,
    else its connection address (ADDRESS_VARS), else its name. Certificates name it, etcd listens
    and is dialled on it, the API server advertises it, /etc/hosts and peers list it."""
    for key in ("tke_node_ip",) + ADDRESS_VARS:
        value = _get(hostvars, key)
        if value:
            return str(value)
    return str(name)


def typed(values, options):
    """values with each one an argument spec (options) knows converted to the spec's type by
    Ansible's own type checkers, as a module's parameters are: an extra variable given as
    -e key=value arrives as a string ("false", "6443", "a,b"). A value that does not convert,
    and a name the spec does not know, stay as given (the validation reports them)."""
    known = {k: v for k, v in values.items() if k in options}
    out = dict(values)
    if known:
        result = ArgumentSpecValidator({k: options[k] for k in known}).validate(known)
        out.update({k: result.validated_parameters[k] for k in known if k in result.validated_parameters})
    return out


def tke_setting(name, value):
    """One cluster-wide tke_* setting typed by the tke role's argument spec (for example
    tke_resume=false from the command line -> False)."""
    return typed({name: value}, role_specs().get("tke", {}))[name]


# Settings the tke role derives per host from the others (roles/tke/defaults/main.yml, "Derived
# settings"): no input of the model. Templated here they would fail on the very inputs the rules
# report (a VIP that is no address, no master at all) before the rules could name them.
DERIVED_SETTINGS = frozenset({"tke_node_address", "tke_vip_sans", "tke_vrrp_router_id", "tke_api_address"})


def cluster_settings(task_vars, templar):
    """Every tke_* variable the play sees (role defaults of offline_pot.tke.tke plus the
    inventory and the extra variables), templated and typed by the tke role's argument spec;
    not the derived ones."""
    names = sorted(k for k in task_vars if k.startswith("tke_") and k not in DERIVED_SETTINGS)
    return typed({k: templar.template(task_vars[k]) for k in names}, role_specs().get("tke", {}))


def _get(hostvars, key, default=None):
    try:
        return hostvars[key] if key in hostvars else default
    except Exception:  # an undefined or broken template in the inventory is reported elsewhere
        return default


def host_model(name, hostvars):
    address = next((_get(hostvars, v) for v in ADDRESS_VARS if _get(hostvars, v)), None) or name
    return {
        "address": str(address),
        "node_address": node_address(name, hostvars),
        # the variable the node address comes from, which a problem with it names
        "node_address_var": "tke_node_ip" if _get(hostvars, "tke_node_ip") else "ansible_host",
        "connection": str(_get(hostvars, "ansible_connection", "ssh") or "ssh"),
        "port": int(_get(hostvars, "ansible_port", 22) or 22),
        "user": str(_get(hostvars, "ansible_user", "root") or "root"),
        "password_set": bool(_get(hostvars, "ansible_password") or _get(hostvars, "ansible_ssh_pass")),
        "key_set": bool(_get(hostvars, "ansible_ssh_private_key_file") or _get(hostvars, "ansible_private_key_file")),
    }


def build(task_vars, templar):
    """{"groups": ..., "hosts": ..., "settings": ...} (see inventory_rules.check)."""
    inv_groups = task_vars.get("groups", {})
    groups = {g: list(inv_groups.get(g, [])) for g in GROUPS if g != "etcd"}
    if "etcd" in inv_groups:
        groups["etcd"] = list(inv_groups["etcd"])
    hostvars = task_vars.get("hostvars", {})
    hosts = {h: host_model(h, hostvars[h]) for h in inv_groups.get("all", []) if h != "localhost"}
    return {"groups": groups, "hosts": hosts, "settings": cluster_settings(task_vars, templar)}


def _role_yaml(*parts):
    """(role, content) of the file at roles/<role>/<parts> for every role that has one."""
    for role in sorted(os.listdir(ROLES_DIR)):
        path = os.path.join(ROLES_DIR, role, *parts)
        if os.path.isfile(path):
            yield role, read_yaml(path) or {}


@functools.lru_cache(maxsize=1)
def role_specs():
    """{role: {option: spec}} from every role's meta/argument_specs.yml (entry point main; the tke
    role's is lock: SETTINGS_ENTRY). Read once per controller process; callers must not change it."""
    specs = {}
    for role, data in _role_yaml("meta", "argument_specs.yml"):
        entry = SETTINGS_ENTRY if role == "tke" else "main"
        specs[role] = data.get("argument_specs", {}).get(entry, {}).get("options", {}) or {}
    return specs


@functools.lru_cache(maxsize=1)
def role_defaults():
    """Every role's defaults/main.yml, merged (each role's names carry its prefix): the values a
    setting of the inventory may be built on ("{{ etcd_peer_port }}") that only exist inside the
    role's play. Read once per controller process; callers must not change it."""
    merged = {}
    for dummy, data in _role_yaml("defaults", "main.yml"):
        merged.update(data)
    return merged


# The tke role's entry point whose specification holds the cluster-wide settings: its lock, which
# every playbook that acts on a site runs once at its start (roles/tke/meta/argument_specs.yml).
SETTINGS_ENTRY = "lock"


def explicit_vars(hostvars, prefixes):
    """Names of the variables the inventory sets for a host whose name starts with a role prefix."""
    return sorted(k for k in hostvars if any(k.startswith(p) for p in prefixes))

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Inventory hosts -> the {name, ip} entries the PKI authority takes."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: pki_members
short_description: Inventory host names to PKI members (name and address)
version_added: 0.1.0
description:
  - Turns a list of inventory host names into C({name, ip}) entries for M(offline_pot.tke.k8s_pki).
  - The address is the host's C(tke_node_ip) when set, else its C(ansible_host), else its name.
positional: _input, hostvars
options:
  _input:
    description: Inventory host names.
    type: list
    elements: str
    required: true
  hostvars:
    description: The C(hostvars) magic variable.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Masters as PKI members
  ansible.builtin.debug:
    msg: "{{ groups['masters'] | offline_pot.tke.pki_members(hostvars) }}"
"""

RETURN = r"""
_value:
  description: One C({name, ip}) per host, in the order given, without duplicates.
  type: list
  elements: dict
"""

from ansible_collections.offline_pot.tke.plugins.plugin_utils.inventory_model import node_address


def pki_members(names, hostvars):
    out, seen = [], set()
    for name in names or []:
        if name in seen:
            continue
        seen.add(name)
        hv = hostvars.get(name, {}) if hasattr(hostvars, "get") else {}
        out.append({"name": name, "ip": node_address(name, hv)})
    return out


class FilterModule:
    def filters(self):
        return {"pki_members": pki_members}

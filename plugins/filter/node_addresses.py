# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Filter: the node addresses of inventory hosts, by the collection's one rule."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: node_addresses
short_description: The addresses of inventory hosts as the cluster uses them
version_added: 0.1.0
description:
  - For each host name, its node address - C(tke_node_ip) when set, else C(ansible_host)
    (or C(ansible_ssh_host)), else the name itself. The one rule of the collection for a node's
    address (certificates, etcd, API server, kubelet, /etc/hosts, peers and backends); the tke
    role's C(tke_node_address) is this host's.
positional: _input, hostvars
options:
  _input:
    description: Host names.
    type: list
    elements: str
    required: true
  hostvars:
    description: C(hostvars).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: The masters' addresses
  ansible.builtin.debug:
    msg: "{{ groups['masters'] | offline_pot.tke.node_addresses(hostvars) }}"
"""

RETURN = r"""
_value:
  description: One address per host, in the order given.
  type: list
  elements: str
"""

from ansible_collections.offline_pot.tke.plugins.plugin_utils.inventory_model import node_address


def node_addresses(names, hostvars):
    return [node_address(name, hostvars.get(name, {}) if hasattr(hostvars, "get") else {}) for name in names or []]


class FilterModule:
    def filters(self):
        return {"node_addresses": node_addresses}

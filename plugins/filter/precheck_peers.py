# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Filter precheck_peers: The other hosts and the TCP ports each must be reachable on"""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: precheck_peers
short_description: The other hosts and the TCP ports each must be reachable on
version_added: 0.2.0
description:
  - For every host of O(hosts) but O(me), its node address (C(tke_node_ip), else C(ansible_host))
    and the ports of O(always) plus the ports of every group it is in (O(ports_by_group)).
positional: _input, me, hosts, ports_by_group, groups
options:
  _input:
    description: hostvars.
    type: dict
    required: true
  me:
    description: This host (left out).
    type: str
    required: true
  hosts:
    description: The hosts to consider.
    type: list
    elements: str
    required: true
  ports_by_group:
    description: Group name -> TCP ports.
    type: dict
    required: true
  groups:
    description: The inventory's groups.
    type: dict
    required: true
  always:
    description: Ports probed on every peer.
    type: list
    elements: int
    default: [22]
"""

EXAMPLES = r"""
peers: >-
  {{ hostvars | offline_pot.tke.precheck_peers(inventory_hostname, groups['all'],
     {'masters': [6443]}, groups) }}
"""

RETURN = r"""
_value:
  description: List of {name, address, ports}.
  type: list
  elements: dict
"""


from ansible_collections.offline_pot.tke.plugins.plugin_utils.inventory_model import node_address


def precheck_peers(hostvars, me, hosts, ports_by_group, groups, always=(22,)):
    """Every other host with the TCP ports it must be reachable on: always + its groups' ports."""
    out = []
    for host in hosts:
        if host == me:
            continue
        address = node_address(host, hostvars[host])
        ports = set(int(p) for p in always)
        for group, gports in ports_by_group.items():
            if host in groups.get(group, []):
                ports.update(int(p) for p in gports)
        out.append({"name": host, "address": str(address), "ports": sorted(ports)})
    return out


class FilterModule:
    def filters(self):
        return {"precheck_peers": precheck_peers}

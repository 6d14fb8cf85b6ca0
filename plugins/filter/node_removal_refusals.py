# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Filter: why a node may not be removed from the site (playbooks/remove_node.yml)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: node_removal_refusals
short_description: Every reason a node may not be removed from the site
version_added: 0.4.0
description:
  - Returns the reasons, each naming the host, why removing the node would be refused - not a host
    of the inventory, the last master, an etcd member whose removal breaks quorum (the members that
    answer must be a majority before and after), a node that does not answer without I(force).
    An etcd member whose removal leaves an even membership (3 to 2) is refused unless I(etcd_even).
    An empty list means it may be removed.
positional: _input, groups, unreachable, force, etcd_even
options:
  _input:
    description: The node's inventory name.
    type: str
    required: true
  groups:
    description: The inventory's groups (C(groups)).
    type: dict
    required: true
  unreachable:
    description: Hosts that do not answer.
    type: list
    elements: str
    default: []
  force:
    description: Remove an unreachable node anyway.
    type: bool
    default: false
  etcd_even:
    description: Remove an etcd member even though the membership left is even (C(-e etcd_even=true)).
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Refuse before touching anything
  ansible.builtin.assert:
    that: refusals | length == 0
    fail_msg: "{{ refusals | join('; ') }}"
  vars:
    refusals: "{{ node | offline_pot.tke.node_removal_refusals(groups, [], false) }}"
"""

RETURN = r"""
_value:
  description: The reasons, each starting with the host's name.
  type: list
  elements: str
"""

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.offline_pot.tke.plugins.plugin_utils.node_removal import refusals


def node_removal_refusals(node, groups, unreachable=(), force=False, etcd_even=False):
    return refusals(str(node or ""), dict(groups), list(unreachable or ()), boolean(force, strict=False),
                    boolean(etcd_even, strict=False))


class FilterModule:
    def filters(self):
        return {"node_removal_refusals": node_removal_refusals}

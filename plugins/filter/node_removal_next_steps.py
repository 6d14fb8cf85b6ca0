# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Filter: what the next install needs after a node's removal (playbooks/remove_node.yml)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: node_removal_next_steps
short_description: What the inventory and the next install need after a node's removal
version_added: 0.4.0
description:
  - Returns the steps, one line each, that follow the removal of a node - taking it out of the
    inventory and running install.yml, and, when the removal left an even etcd membership
    (C(-e etcd_even=true)), the host to put in the etcd group (or the masters, with stacked etcd)
    before install.yml accepts the inventory again.
positional: _input, groups
options:
  _input:
    description: The removed node's inventory name.
    type: str
    required: true
  groups:
    description: The inventory's groups (C(groups)), the node still in them.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: What is left to do
  ansible.builtin.debug:
    msg: "{{ node | offline_pot.tke.node_removal_next_steps(groups) }}"
"""

RETURN = r"""
_value:
  description: The steps, in order.
  type: list
  elements: str
"""

from ansible_collections.offline_pot.tke.plugins.plugin_utils.node_removal import next_steps


def node_removal_next_steps(node, groups):
    return next_steps(str(node or ""), dict(groups))


class FilterModule:
    def filters(self):
        return {"node_removal_next_steps": node_removal_next_steps}

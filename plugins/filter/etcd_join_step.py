# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Filter: what one new etcd member's join takes now (roles/etcd/tasks/join.yml)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: etcd_join_step
short_description: What one new etcd member's join takes now (member add or not, its initial-cluster)
version_added: 0.5.0
description:
- 'For the new member O(host), from the running cluster''s C(etcdctl member list -w json) - whether C(etcdctl
  member add) is still to do (its peer URL is not listed: a member added by a run that stopped before
  starting it is not added twice), and the C(initial-cluster) it starts with (every member of the cluster,
  itself included; members not started yet are named by the inventory, found by their peer URL).'
positional: _input, listed, host, assumed
options:
  _input:
    description: The members in inventory order, each C({host, name, peer_url}).
    type: list
    elements: dict
    required: true
  listed:
    description: The output of C(etcdctl member list -w json) on a member with data.
    type: str
    required: true
  host:
    description: The joining member's inventory name.
    type: str
    required: true
  assumed:
    description: Hosts counted as members already (check mode - those a real run adds before this one).
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
- name: What joining h2 takes
  ansible.builtin.set_fact:
    step: "{{ peers | offline_pot.tke.etcd_join_step(member_list.stdout, 'h2') }}"
"""

RETURN = r"""
_value:
  description: '{add: bool, peer_url: str, initial_cluster: str}'
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.offline_pot.tke.plugins.plugin_utils import etcd_membership


def etcd_join_step(peers, listed, host, assumed=()):
    try:
        return etcd_membership.join_step(list(peers), listed, str(host), list(assumed or ()))
    except (ValueError, StopIteration) as e:
        raise AnsibleFilterError(f"etcd_join_step: {str(e) or str(host) + ' is not an etcd member'}") from e


class FilterModule:
    def filters(self):
        return {"etcd_join_step": etcd_join_step}

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Filter: why new etcd members may not join the running cluster now (roles/etcd, the etcd phase)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: etcd_join_refusals
short_description: Every reason new etcd members may not join the running cluster now
version_added: 0.5.0
description:
  - The members without data join when others have data. Returns the reasons, each naming the
    host, why they may not join now - the member with data does not answer C(member list), the
    cluster has a member that is not in the etcd group, a new member is listed as started (its data
    was lost), a member with data is not in the cluster, a member with data is not healthy (or, when a
    run resumes after C(member add), not running). An empty list means they may join (or none
    joins).
positional: _input, with_data, listed, healthy, active
options:
  _input:
    description: The members in inventory order, each C({host, name, peer_url}).
    type: list
    elements: dict
    required: true
  with_data:
    description: The hosts whose data directory has data.
    type: list
    elements: str
    required: true
  listed:
    description: The output of C(etcdctl member list -w json) on the first member with data (anything else when it did not answer).
    type: str
    required: true
  healthy:
    description: The members with data whose C(etcdctl endpoint health) succeeded.
    type: list
    elements: str
    required: true
  active:
    description: The members with data whose etcd service is active.
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: A join is safe
  ansible.builtin.assert:
    that: refusals | length == 0
    fail_msg: "{{ refusals | join('; ') }}"
  vars:
    refusals: "{{ peers | offline_pot.tke.etcd_join_refusals(with_data, listed.stdout, healthy, active) }}"
"""

RETURN = r"""
_value:
  description: The reasons, each starting with the host's name.
  type: list
  elements: str
"""

from ansible_collections.offline_pot.tke.plugins.plugin_utils import etcd_membership


def etcd_join_refusals(peers, with_data, listed, healthy, active):
    return etcd_membership.join_refusals(list(peers), list(with_data), listed, list(healthy), list(active))


class FilterModule:
    def filters(self):
        return {"etcd_join_refusals": etcd_join_refusals}

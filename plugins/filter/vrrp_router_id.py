# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Filter: the keepalived virtual_router_id for a VIP."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: vrrp_router_id
short_description: The keepalived virtual_router_id for a VIP
version_added: 0.1.0
description:
  - Returns I(configured) when it is not 0 (it must be 1-255), otherwise derives the id from the
    VIP as TKE does (last octet + 1), wrapped into 1-255.
positional: _input, configured
options:
  _input:
    description: The VIP (IPv4).
    type: str
    required: true
  configured:
    description: The configured id (0 = derive).
    type: int
    default: 0
"""

EXAMPLES = r"""
- name: virtual_router_id
  ansible.builtin.debug:
    msg: "{{ tke_vip | offline_pot.tke.vrrp_router_id(tke_vrid) }}"
"""

RETURN = r"""
_value:
  description: The virtual_router_id, 1-255.
  type: int
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.offline_pot.tke.plugins.module_utils.vrrp import derive_router_id


def vrrp_router_id(vip, configured=0):
    try:
        return derive_router_id(str(vip), int(configured or 0))
    except ValueError as exc:
        raise AnsibleFilterError(f"vrrp_router_id: {exc}") from exc


class FilterModule:
    def filters(self):
        return {"vrrp_router_id": vrrp_router_id}

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Filter hostname_checks: The "hostname unique" precheck result of every host"""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: hostname_checks
short_description: The "hostname unique" precheck result of every host
version_added: 0.2.0
description:
  - Takes host name -> the hostname the host reports; returns host name -> a check result
    (C(check), C(value), C(limit), C(status), C(message)) that fails when another host has the
    same hostname (case-insensitive).
positional: _input
options:
  _input:
    description: Inventory host -> its hostname.
    type: dict
    required: true
"""

EXAMPLES = r"""
unique: "{{ {'h1': 'node1', 'h2': 'node1'} | offline_pot.tke.hostname_checks }}"
"""

RETURN = r"""
_value:
  description: Inventory host -> check result.
  type: dict
"""


from ansible_collections.offline_pot.tke.plugins.module_utils.precheck_rules import duplicate_hostnames


def hostname_checks(hostnames):
    """{host: hostname} -> {host: "hostname unique" check result}."""
    return duplicate_hostnames(hostnames)


class FilterModule:
    def filters(self):
        return {"hostname_checks": hostname_checks}

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Filter check_failure_lines: per-host check results into report lines."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: check_failure_lines
short_description: One line per failing check of every host
version_added: 0.1.0
description:
  - Takes a mapping of host name to a list of check results (each with C(check), C(status) and
    C(message)) and returns one line C(<host>, <check>, <message>) joined by colons for every result whose status is C(fail).
positional: _input
options:
  _input:
    description: Host name -> list of check results.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Fail listing every failing check
  ansible.builtin.fail:
    msg: "{{ results_by_host | offline_pot.tke.check_failure_lines }}"
"""

RETURN = r"""
_value:
  description: The lines, host by host in the order given.
  type: list
  elements: str
"""


def check_failure_lines(results_by_host):
    return [f"{host}: {r['check']}: {r.get('message') or r.get('value')}"
            for host, results in results_by_host.items()
            for r in results or [] if r.get("status") == "fail"]


class FilterModule:
    def filters(self):
        return {"check_failure_lines": check_failure_lines}

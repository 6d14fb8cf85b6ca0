#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Write the precheck's report on the controller and fail naming every failing check (documentation:
the action plugin plugins/action/precheck_report.py does the work)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: precheck_report
short_description: Write the precheck's JSON report on the controller and fail listing every failing check
version_added: 0.4.0
description:
  - Takes every host's precheck results (the C(checks) the M(offline_pot.tke.precheck) module
    returned) and the hostname each host reported; adds to each host the "hostname unique" check
    (another host of the run with the same hostname, case-insensitive, fails it).
  - Writes every host's results as JSON to O(dest) on the controller (mode 0600, its directory made
    0700 when missing), then fails with one line per failing check, host by host
    (C(<host>) colon C(<check>) colon C(<message>)), so a run reports every problem at once.
  - Runs on the controller, in Ansible's own process (an action plugin); the report is a by-product
    of the checks and is never reported as a change.
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_NO_DIFF
  - offline_pot.tke.attributes.ACTION
attributes:
  check_mode:
    details: Checks and fails as in a run; writes no report.
  idempotent:
    details: Never reports a change.
options:
  results:
    description: Inventory host -> its precheck results (each a dict with C(check), C(value),
      C(limit), C(status), C(message)).
    type: dict
    required: true
  hostnames:
    description: Inventory host -> the hostname the host reported.
    type: dict
    required: true
  dest:
    description: The report file on the controller.
    type: path
    required: true
"""

EXAMPLES = r"""
- name: Write the report and fail listing every failing check on every host
  offline_pot.tke.precheck_report:
    results: >-
      {{ dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, '__precheck_result')
         | map(attribute='checks'))) }}
    hostnames: >-
      {{ dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, '__precheck_result')
         | map(attribute='facts') | map(attribute='hostname'))) }}
    dest: "{{ tke_state_dir }}/precheck.json"
  run_once: true
  delegate_to: localhost
"""

RETURN = r"""
report:
  description: Inventory host -> its results, the "hostname unique" check last (what O(dest) holds).
  returned: success
  type: dict
failures:
  description: One line per failing check (host, check and message, colon-separated), in the hosts' order.
  returned: always
  type: list
  elements: str
written:
  description: Whether the report was written (false in check mode).
  returned: always
  type: bool
"""

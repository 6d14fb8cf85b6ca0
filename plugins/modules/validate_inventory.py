#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Documentation of the validate_inventory action plugin (plugins/action/validate_inventory.py);
it runs on the controller only, so there is no module code."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: validate_inventory
short_description: Check the inventory on the controller and report every problem at once
version_added: 0.2.0
description:
  - Runs on the controller only (no connection to any host is made).
  - Checks every host's explicitly set role variables against the roles' C(meta/argument_specs.yml),
    flags variables with a role prefix that no role knows (typos), flags cluster-wide C(tke_*)
    settings set differently for one host, and evaluates the cross-field rules of
    C(plugin_utils/inventory_rules.py) (etcd member count, HA mode against masters, VIP, CIDRs,
    ports, unique IPs and names, DNS names, supported versions, password length, skip list).
  - "Fails once, listing every problem as C(<where>: <variable>: <message>), where C(<where>) is
    C(all), C(group <name>), C(host <name>) or C(hosts <names>)."
requirements:
  - Runs on the controller (an action plugin); touches no host
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.INFO_MODULE
  - offline_pot.tke.attributes.ACTION
options:
  extra_problems:
    description: Problems found by other means, reported with the rest (strings).
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
- name: Validate the inventory before any host is touched
  offline_pot.tke.validate_inventory:
  run_once: true
"""

RETURN = r"""
problems:
  description: Every problem found, one string each.
  returned: always
  type: list
  elements: str
hosts:
  description: Number of hosts checked.
  returned: always
  type: int
"""

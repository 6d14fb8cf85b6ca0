#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Documentation of the tke_config action plugin (plugins/action/tke_config.py); it runs on the
controller only, so there is no module code."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: tke_config
short_description: Render the site's tke.json (TKEStack installer state) on the controller
version_added: 0.2.0
description:
  - Builds tke.json from the inventory in TKEStack's state form (C(config), C(para.cluster),
    C(para.Config), C(cluster), C(step)) with C(templates/tke.json.j2) and writes it with mode 0600.
  - Masters become C(spec.machines); passwords (host C(ansible_password), C(tke_admin_password)) and
    private keys (C(ansible_ssh_private_key_file)) are base64 as TKE expects. The result never
    contains them; use C(no_log) on the task anyway.
  - Writes only when the content or the mode differs, so an unchanged inventory reports changed=0.
  - The output is valid against C(schemas/tke.schema.json).
requirements:
  - Runs on the controller (an action plugin); nothing on the hosts
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_NO_DIFF
  - offline_pot.tke.attributes.ACTION
attributes:
  diff_mode:
    details: The file holds secrets; no diff is shown.
options:
  dest:
    description: Where to write; default C({{ tke_state_dir }}/tke.json).
    type: path
  step:
    description:
      - TKE's resume point. The install journal sets it; when omitted, the step recorded in the
        existing file is kept (0 for a new file).
    type: int
  template:
    description: Another template to render instead of the collection's C(templates/tke.json.j2).
    type: path
  node_interfaces:
    description:
      - The interface holding each node's address, as the precheck phase read it on the hosts (host ->
        interface). Kept beside tke.json (C(interfaces.json), merged with what earlier runs read,
        hosts gone from the inventory dropped). TKE's C(networkDevice) is C(tke_network_interface)
        when the inventory sets it, else the masters' interface from this record (the first
        master's, with a warning, when they differ), else empty until a precheck has read the hosts.
    type: dict
"""

EXAMPLES = r"""
- name: Render tke.json
  offline_pot.tke.tke_config:
  run_once: true
  no_log: true
"""

RETURN = r"""
dest:
  description: The file written.
  returned: always
  type: str
step:
  description: The step written.
  returned: always
  type: int
mode:
  description: The HA mode rendered (tke_ha_mode).
  returned: always
  type: str
machines:
  description: Number of machines (masters) in spec.machines.
  returned: always
  type: int
"""

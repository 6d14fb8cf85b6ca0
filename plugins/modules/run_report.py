#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Write the run's HTML report on the controller (documentation: the action plugin
plugins/action/run_report.py does the work, plugin_utils/run_report renders the page)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: run_report
short_description: Write a self-contained HTML report of the run under the site's state directory
version_added: 0.2.0
description:
  - Writes C(<state_dir>/reports/<UTC time>-<playbook>.html), mode 0600, a page with no external asset
    (it opens without a network) - the site's settings, its hosts and groups, a timeline of the
    install's phases per host drawn as SVG from the install journal (a phase done in this run solid,
    an earlier one faded), which hosts ran each phase in this run, the Nodes' Ready state, the
    certificates found on the hosts with their expiry, the site pack's name, version, signature state
    and key, and links to the JSON it came from.
  - No secret goes in; runs on the controller, in Ansible's own process (an action plugin).
  - The run's start is the site lock's (C(run.lock)); without it no phase is marked as this run's.
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_NO_DIFF
  - offline_pot.tke.attributes.ACTION
attributes:
  check_mode:
    details: Renders the page and writes nothing (RV(written) is false).
options:
  state_dir:
    description: The site's state directory (C(tke_state_dir)) - the journal, the lock.
    type: path
    required: true
  playbook:
    description: The playbook the report is of (in its file name and title).
    type: str
    default: install
  site:
    description: The site's settings to show (label -> value; C(cluster) names the page).
    type: dict
    default: {}
  hosts:
    description: Each host with its groups.
    type: dict
    default: {}
  certificates:
    description: Rows of P(offline_pot.tke.cert_report#filter) (host, file, subject, not_after, days_left, status).
    type: list
    elements: dict
    default: []
  nodes:
    description: The cluster's Node objects (M(offline_pot.tke.k8s_info)'s RV(offline_pot.tke.k8s_info#module:resources));
      not given, the page says they were not read.
    type: list
    elements: dict
  state_before:
    description:
      - Each host's read of its records and its phases' state probes at the start of the run (host to the
        output of the tke role's C(tke_host_read_script)). A host not read is absent or null.
    type: dict
    default: {}
  state_after:
    description:
      - The same read at the end of the run. A host with both reads gets the probes whose output differs,
        per phase; one without either is shown as not read.
    type: dict
    default: {}
  record_dir:
    description: Where the hosts record the phases (C(tke_host_record_dir), the one home of that path), as the reads name it.
    type: str
    required: true
  pack:
    description: The site pack (C(tke_site_pack)); an archive is read where the offline phase unpacked it (I(pack_dir)).
    type: str
    default: ""
  pack_dir:
    description: Where the controller unpacked an archived pack (C(tke_pack_dir), the one home of that path).
    type: path
    required: true
  pubkey:
    description: The site owner's public key (C(tke_site_pack_pubkey)), to check the pack's signature and name the key.
    type: str
    default: ""
"""

EXAMPLES = r"""
- name: Write the run report
  offline_pot.tke.run_report:
    state_dir: "{{ tke_state_dir }}"
    pack_dir: "{{ tke_pack_dir }}"
    record_dir: "{{ tke_host_record_dir }}"
    site: {cluster: "{{ tke_cluster_name }}", kubernetes: "{{ tke_k8s_version }}"}
    hosts: "{{ dict(groups['all'] | zip(groups['all'] | map('extract', hostvars, 'group_names'))) }}"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
path:
  description: The report's file.
  returned: always
  type: str
written:
  description: Whether it was written (not in check mode).
  returned: always
  type: bool
"""

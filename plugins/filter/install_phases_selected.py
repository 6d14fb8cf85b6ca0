# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Filter: the phases of install.yml that a run with these tags goes through."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: install_phases_selected
short_description: The phases of install.yml that a run with these --tags and --skip-tags goes through
version_added: 0.2.0
description:
  - Given C(ansible_run_tags) and C(ansible_skip_tags), returns the names of the install's phases
    whose plays run (by the tags of their entries in C(install.yml), Ansible's rule), in install
    order, without C(validate), which contacts no host.
  - install.yml's plan reads the hosts only when this list is not empty (C(--tags validate)
    contacts no host).
positional: _input, skip_tags
options:
  _input:
    description: The run's tags, C(ansible_run_tags).
    type: list
    elements: str
    required: true
  skip_tags:
    description: The run's skipped tags, C(ansible_skip_tags).
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
- name: Read the hosts when some phase runs
  ansible.builtin.raw: cat /etc/machine-id
  when: ansible_run_tags | offline_pot.tke.install_phases_selected(ansible_skip_tags) | length > 0
"""

RETURN = r"""
_value:
  description: Phase names, in install order.
  type: list
  elements: str
"""

from ansible_collections.offline_pot.tke.plugins.plugin_utils import install_journal


def install_phases_selected(run_tags, skip_tags=()):
    return [p for p in install_journal.selected(run_tags, skip_tags) if p != "validate"]


class FilterModule:
    def filters(self):
        return {"install_phases_selected": install_phases_selected}

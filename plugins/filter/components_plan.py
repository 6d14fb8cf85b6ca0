# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The plan of a components run (plugins/plugin_utils/components.py)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: components_plan
short_description: Which components a run applies (dependency order) and removes (reverse order)
version_added: 0.3.0
description:
  - Takes C(components_list) and the site pack's components (its manifest's C(contents.components))
    and returns C(apply), the enabled components each after those it depends on, and C(remove),
    the components to uninstall in reverse dependency order. Each component has every field
    with its default, the pack's C(files) and C(images), and C(label), the prune label it owns.
  - Every problem (a duplicate name, an unknown or disabled dependency, a cycle, a source the pack
    does not have, a removal of a component another one still needs, removing all without
    confirmation) is returned in C(problems), one line each in the words of install's validate phase,
    with nothing to apply or remove; the caller fails with them (roles/components).
positional: pack_components, state, only, confirm
options:
  _input:
    description: components_list.
    type: list
    elements: dict
    required: true
  pack_components:
    description: The site pack manifest's contents.components.
    type: list
    elements: dict
    required: true
  state:
    description: present (apply the enabled, remove the disabled) or absent (remove).
    type: str
    default: present
  only:
    description: Names of the components the run is about (empty - all).
    type: list
    elements: str
    default: []
  confirm:
    description: Removing every component (state absent, no only) needs this true.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: The plan
  ansible.builtin.set_fact:
    plan: "{{ components_list | offline_pot.tke.components_plan(pack.manifest.contents.components, 'present') }}"
"""

RETURN = r"""
_value:
  description: C(apply) and C(remove), lists of components; C(problems), lines (empty when none).
  type: dict
"""

from ansible_collections.offline_pot.tke.plugins.plugin_utils import components


def components_plan(declared, pack_components, state="present", only=None, confirm=False):
    try:
        return dict(components.plan(declared, pack_components or [], state, only, confirm), problems=[])
    except components.PlanError as e:
        return {"apply": [], "remove": [], "problems": e.lines}


class FilterModule:
    def filters(self):
        return {"components_plan": components_plan}

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Filters over the site pack's manifest."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: pack_host_binaries
short_description: The pack's binaries one host receives
version_added: 0.1.0
description:
  - Takes the C(contents.binaries) list of a site pack manifest and the host's groups, and returns
    the binaries meant for the host (those with no C(groups), or sharing a group with the host),
    each with C(path), the pack path of its file or directory.
positional: groups
options:
  _input:
    description: The manifest's contents.binaries.
    type: list
    elements: dict
    required: true
  groups:
    description: The host's groups (group_names).
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Binaries for this host
  ansible.builtin.set_fact:
    my_binaries: "{{ pack.manifest.contents.binaries | offline_pot.tke.pack_host_binaries(group_names) }}"
"""

RETURN = r"""
_value:
  description: The selected binaries, each with C(path) added.
  type: list
  elements: dict
"""


def pack_host_binaries(binaries, groups):
    groups = set(groups or [])
    return [dict(b, path=b.get("file") or b["dir"]) for b in binaries or []
            if not b.get("groups") or groups & set(b["groups"])]


class FilterModule:
    def filters(self):
        return {"pack_host_binaries": pack_host_binaries}

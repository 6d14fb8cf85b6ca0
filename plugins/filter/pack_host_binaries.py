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
  - A binary the pack carries in several versions (kubeadm, kubelet and kubectl of two Kubernetes
    versions, for an upgrade, see docs/lifecycle.md) is taken in the version I(version) names; none of
    them matching is an error naming the versions the pack has.
positional: groups, version
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
  version:
    description: The version to take of a binary the pack carries in several versions (C(tke_k8s_version)).
    type: str
"""

EXAMPLES = r"""
- name: Binaries for this host
  ansible.builtin.set_fact:
    my_binaries: >-
      {{ pack.manifest.contents.binaries | offline_pot.tke.pack_host_binaries(group_names, tke_k8s_version) }}
"""

RETURN = r"""
_value:
  description: The selected binaries, each with C(path) added.
  type: list
  elements: dict
"""


from ansible.errors import AnsibleFilterError


def pack_host_binaries(binaries, groups, version=None):
    groups = set(groups or [])
    mine = [dict(b, path=b.get("file") or b["dir"]) for b in binaries or []
            if not b.get("groups") or groups & set(b["groups"])]
    want = str(version or "").lstrip("v")
    out = []
    for b in mine:
        versions = [str(o.get("version", "")).lstrip("v") for o in mine if o["name"] == b["name"]]
        if len(versions) == 1:
            out.append(b)
        elif want not in versions:
            raise AnsibleFilterError(f"the site pack carries {b['name']} in versions {', '.join(sorted(set(versions)))}, "
                                     f"none of them {want or '(no version given)'} (tke_k8s_version)")
        elif str(b.get("version", "")).lstrip("v") == want:
            out.append(b)
    return out


class FilterModule:
    def filters(self):
        return {"pack_host_binaries": pack_host_binaries}

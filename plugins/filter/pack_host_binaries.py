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
    versions, for an upgrade, see docs/lifecycle.md) is taken in the version I(version) names; else
    the entry whose C(for_kubernetes) lists I(version)'s minor (containerd 2.x for Kubernetes 1.35,
    docs/site_pack.md); else the one entry of that name without C(for_kubernetes) when another has
    it; none of them is an error naming the versions the pack has.
  - Only the entries of the host's architecture I(arch) are taken (an entry without C(arch) is amd64's).
positional: groups, version, arch
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
  arch:
    description:
      - The host's architecture, as C(uname -m) (Ansible's C(architecture) fact) or Debian names it.
    type: str
    default: amd64
"""

EXAMPLES = r"""
- name: Binaries for this host
  ansible.builtin.set_fact:
    my_binaries: >-
      {{ pack.manifest.contents.binaries
         | offline_pot.tke.pack_host_binaries(group_names, tke_k8s_version, ansible_facts.architecture) }}
"""

RETURN = r"""
_value:
  description: The selected binaries, each with C(path) added.
  type: list
  elements: dict
"""


from ansible.errors import AnsibleFilterError

from ansible_collections.offline_pot.tke.plugins.module_utils.pack_manifest import BinaryChoiceError, deb_arch, host_binaries


def pack_host_binaries(binaries, groups, version=None, arch="amd64"):
    try:
        return host_binaries(binaries, groups or [], version, deb_arch(arch))
    except BinaryChoiceError as e:
        raise AnsibleFilterError(str(e)) from e


class FilterModule:
    def filters(self):
        return {"pack_host_binaries": pack_host_binaries}

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Filter: the kubeadm preflight checks the collection ignores for a Kubernetes release."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: kubeadm_preflight_ignores
short_description: The kubeadm preflight checks to ignore for a Kubernetes release and the site's settings
version_added: 0.2.0
description:
  - Given the Kubernetes version and whether the site allows cgroup v1 hosts (C(tke_allow_cgroup_v1)), returns
    the names of kubeadm's preflight checks the join and upgrade commands ignore (their
    C(--ignore-preflight-errors)).
  - From 1.35 kubeadm's C(SystemVerification) check fails on a cgroup v1 host (KEP-5573); with cgroup v1
    allowed it is ignored (and the kubelet runs with C(failCgroupV1) false). Otherwise nothing is ignored
    (the precheck phase and the upgrade's validation refuse such hosts first).
positional: _input, allow_cgroup_v1
options:
  _input:
    description: The Kubernetes version, for example C(1.35.7).
    type: str
    required: true
  allow_cgroup_v1:
    description: Whether the site allows cgroup v1 hosts.
    type: bool
    required: true
"""

EXAMPLES = r"""
- name: Upgrade this node
  ansible.builtin.command: >-
    /usr/local/bin/kubeadm upgrade node
    {{ (tke_k8s_version | offline_pot.tke.kubeadm_preflight_ignores(tke_allow_cgroup_v1))
       | map('regex_replace', '^', '--ignore-preflight-errors=') | join(' ') }}
"""

RETURN = r"""
_value:
  description: The names of the checks, as C(--ignore-preflight-errors) takes them (may be empty).
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError
from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.offline_pot.tke.plugins.module_utils import kubeadm_phases


def kubeadm_preflight_ignores(version, allow_cgroup_v1):
    try:
        return kubeadm_phases.preflight_ignores(str(version), boolean(allow_cgroup_v1, strict=False))
    except ValueError as e:
        raise AnsibleFilterError(f"kubeadm_preflight_ignores: {e}") from None


class FilterModule:
    def filters(self):
        return {"kubeadm_preflight_ignores": kubeadm_preflight_ignores}

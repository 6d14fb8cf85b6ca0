# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Filter: what playbooks/upgrade.yml may do (plugin_utils/kubeadm_upgrade.py)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: kubeadm_upgrade_check
short_description: The version skew, the pack's binaries and the nodes still to upgrade, before an upgrade
version_added: 0.4.0
description:
  - Takes the target version (C(tke_k8s_version)) and returns C(target) (as kubeadm writes it,
    C(v1.31.1)), C(cluster_version) (the
    kubeadm-config's kubernetesVersion), C(kubelets) (Node name to kubelet version), C(pending)
    (the given hosts whose kubelet is not at the target) and C(errors), each naming the variable,
    the host and the versions found.
  - From 1.35 a target refuses the nodes on cgroup v1 (the kubelet refuses them by default, KEP-5573) unless
    the site allows them (C(tke_allow_cgroup_v1)).
  - A target whose kubeadm no longer knows a feature gate the cluster's stored ClusterConfiguration sets
    (C(ControlPlaneKubeletLocalMode) from 1.36, C(WaitForAllControlPlaneComponents) from 1.35) is refused,
    naming the gate.
  - "kubeadm's rules (cmd/kubeadm/app/phases/upgrade/policy.go): one minor version at a time, no
    downgrade; a kubelet at most three minors older than the target and never newer. The site pack
    must carry kubeadm and kubelet (and kubectl, if it carries kubectl at all) of the target."
positional: _input, cluster_configuration, nodes, binaries, hosts, first_master, cgroup_v1_hosts, allow_cgroup_v1
options:
  _input:
    description: The target version.
    type: str
    required: true
  cluster_configuration:
    description: The C(ClusterConfiguration) text of the kube-system/kubeadm-config ConfigMap.
    type: str
    required: true
  nodes:
    description: The cluster's Node objects.
    type: list
    elements: dict
    required: true
  binaries:
    description: The site pack manifest's C(contents.binaries).
    type: list
    elements: dict
    required: true
  hosts:
    description: The inventory's nodes (masters, then workers), named as their Nodes.
    type: list
    elements: str
    required: true
  first_master:
    description: The master the cluster was read through (for the messages).
    type: str
    required: true
  cgroup_v1_hosts:
    description: The nodes whose /sys/fs/cgroup is not a cgroup2 mount.
    type: list
    elements: str
    default: []
  allow_cgroup_v1:
    description: Whether the site allows cgroup v1 nodes from Kubernetes 1.35 (C(tke_allow_cgroup_v1)).
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: The upgrade is possible
  ansible.builtin.set_fact:
    upgrade_check: >-
      {{ tke_k8s_version | offline_pot.tke.kubeadm_upgrade_check(config_text, nodes, binaries, hosts, 'm1') }}
"""

RETURN = r"""
_value:
  description: C(target), C(cluster_version), C(kubelets), C(pending), C(errors).
  type: dict
"""

from ansible_collections.offline_pot.tke.plugins.plugin_utils import kubeadm_upgrade


class FilterModule:
    def filters(self):
        return {"kubeadm_upgrade_check": kubeadm_upgrade.check}

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Filter: the kubeadm join phases a node runs for a Kubernetes release."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: kubeadm_join_phases
short_description: The kubeadm join phases a master or a worker runs for a Kubernetes release
version_added: 0.2.0
description:
  - Given the Kubernetes version, returns the phases of C(kubeadm join) a node runs one by one, in
    kubeadm's order for that release.
  - Up to 1.32, C(preflight, control-plane-prepare all, kubelet-start, control-plane-join all) for a
    master and C(preflight, kubelet-start) for a worker.
  - From 1.33, kubeadm runs with ControlPlaneKubeletLocalMode on (a master's kubelet talks to its own
    API server), and a master runs C(preflight, control-plane-prepare all, kubelet-start, local-mode,
    control-plane-join all) and a worker C(preflight, kubelet-start, local-mode); C(local-mode) is the
    hidden phases C(check-etcd), C(etcd-join) and C(kubelet-wait-bootstrap), run by
    M(offline_pot.tke.kubeadm_phase) as C(kubeadm join) with every other phase skipped.
  - From 1.35 those phases are C(join phase) commands, run one by one - a master runs C(preflight,
    control-plane-prepare all, kubelet-start, etcd-join, kubelet-wait-bootstrap, control-plane-join all)
    and a worker C(preflight, kubelet-start, kubelet-wait-bootstrap).
positional: _input, control_plane
options:
  _input:
    description: The Kubernetes version, for example C(1.33.13).
    type: str
    required: true
  control_plane:
    description: Whether the node joins as a master.
    type: bool
    required: true
"""

EXAMPLES = r"""
- name: Run the kubeadm join phases of a worker
  offline_pot.tke.kubeadm_phase:
    command: join
    phases: "{{ tke_k8s_version | offline_pot.tke.kubeadm_join_phases(false) }}"
    config: /etc/kubernetes/kubeadm-join.yaml
    version: "{{ tke_k8s_version }}"
"""

RETURN = r"""
_value:
  description: The phases, in order, as C(offline_pot.tke.kubeadm_phase) takes them.
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.offline_pot.tke.plugins.module_utils import kubeadm_phases


def kubeadm_join_phases(version, control_plane):
    try:
        return kubeadm_phases.join_phases(str(version), bool(control_plane))
    except ValueError as e:
        raise AnsibleFilterError(f"kubeadm_join_phases: {e}") from None


class FilterModule:
    def filters(self):
        return {"kubeadm_join_phases": kubeadm_join_phases}

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Filter: the cluster health report (nodes, the network's DaemonSets and pods) from API objects."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: cluster_health
short_description: Nodes with their Ready state and the network's DaemonSets and pods, as report lines
version_added: 0.3.0
description:
  - Takes the Node objects (from offline_pot.tke.k8s_info) and returns report lines and the names
    of nodes that are not Ready, by the same rules offline_pot.tke.k8s_wait waits with.
  - I(expected) names nodes that must be there (the inventory's); a missing one is not Ready.
positional: _input, daemonsets, pods, expected
options:
  _input:
    description: Node objects.
    type: list
    elements: dict
    required: true
  daemonsets:
    description: The network's DaemonSet objects.
    type: list
    elements: dict
    default: []
  pods:
    description: The network's Pod objects.
    type: list
    elements: dict
    default: []
  expected:
    description: Node names that must be registered.
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
- name: Report
  ansible.builtin.debug:
    msg: "{{ (nodes.resources | offline_pot.tke.cluster_health(ds.resources, pods.resources, groups['all'])).lines }}"
"""

RETURN = r"""
_value:
  description: C(lines) (list of str) and C(not_ready) (sorted node names).
  type: dict
"""

from ansible_collections.offline_pot.tke.plugins.module_utils.k8s import waiter


def _name(obj):
    return (obj.get("metadata") or {}).get("name", "?")


def health(nodes, daemonsets=(), pods=(), expected=()):
    lines, not_ready = [], []
    for node in sorted(nodes or [], key=_name):
        ok, state = waiter.node_ready(node)
        labels = (node.get("metadata") or {}).get("labels") or {}
        role = "control-plane" if "node-role.kubernetes.io/control-plane" in labels else "worker"
        version = ((node.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion", "")
        lines.append(f"  {_name(node)}: {'Ready' if ok else 'NOT READY (' + state + ')'} {role} {version}".rstrip())
        if not ok:
            not_ready.append(_name(node))
    registered = {_name(n) for n in nodes or []}
    for name in sorted(set(expected or ()) - registered):
        lines.append(f"  {name}: NOT REGISTERED")
        not_ready.append(name)
    for ds in sorted(daemonsets or [], key=_name):
        ok, state = waiter.daemonset_rolled_out(ds)
        lines.append(f"  DaemonSet {(ds.get('metadata') or {}).get('namespace')}/{_name(ds)}: "
                     f"{'rolled out' if ok else 'NOT rolled out'}, {state}")
    for pod in sorted(pods or [], key=_name):
        status = pod.get("status") or {}
        node = (pod.get("spec") or {}).get("nodeName") or "unscheduled"
        lines.append(f"  pod {_name(pod)} on {node}: {status.get('phase', 'Unknown')}")
    return {"lines": lines, "not_ready": sorted(set(not_ready))}


class FilterModule:
    def filters(self):
        return {"cluster_health": health}

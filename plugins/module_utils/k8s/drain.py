# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Which pods a drain evicts, which it leaves, and which stop it: kubectl drain's filters, pure.

The rules (kubectl's, k8s.io/kubectl/pkg/drain/filters.go; `kubectl drain --help`):
- a mirror pod (annotation `kubernetes.io/config.mirror`: a static pod the kubelet mirrors) cannot
  be deleted through the API: left alone;
- a pod whose controller (the ownerReference with `controller: true`) is a DaemonSet would come
  straight back, the DaemonSet controller ignores unschedulable: left alone (kubectl's
  --ignore-daemonsets, always on here);
- a pod already finished (status.phase Succeeded or Failed) is deleted without question;
- a pod with no controller would be lost for good: it stops the drain unless forced (--force);
- a pod with an emptyDir volume loses that data: it stops the drain unless allowed
  (--delete-emptydir-data).
Every other pod is evicted through the Eviction API (policy/v1 Eviction, POST
pods/<name>/eviction; the API server refuses with 429 TooManyRequests when a
PodDisruptionBudget would be broken - pkg/registry/core/pod/storage/eviction.go).
"""
from __future__ import annotations

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


def controller_of(pod):
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def name_of(pod):
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace', 'default')}/{meta.get('name', '')}"


def classify(pods, force=False, delete_emptydir_data=False):
    """{"evict": [pods], "ignore": {name: reason}, "blocking": {name: reason}}: what a drain does
    with each pod of the node. Blocking reasons stop the drain before anything is evicted."""
    out = {"evict": [], "ignore": {}, "blocking": {}}
    for pod in pods:
        name, meta = name_of(pod), pod.get("metadata") or {}
        owner = controller_of(pod)
        if MIRROR_ANNOTATION in (meta.get("annotations") or {}):
            out["ignore"][name] = "mirror pod (static pod of the kubelet)"
        elif owner and owner.get("kind") == "DaemonSet":
            out["ignore"][name] = f"managed by DaemonSet {owner.get('name', '')}"
        elif (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            out["evict"].append(pod)
        elif owner is None and not force:
            out["blocking"][name] = "not managed by a controller (it would be lost; force=true deletes it)"
        elif any("emptyDir" in v for v in (pod.get("spec") or {}).get("volumes") or []) and not delete_emptydir_data:
            out["blocking"][name] = ("uses an emptyDir volume (its data would be lost; "
                                     "delete_emptydir_data=true allows it)")
        else:
            out["evict"].append(pod)
    return out


def eviction(pod):
    """The body of an Eviction of the pod (policy/v1, Kubernetes >= 1.22)."""
    meta = pod.get("metadata") or {}
    return {"apiVersion": "policy/v1", "kind": "Eviction",
            "metadata": {"name": meta.get("name"), "namespace": meta.get("namespace", "default")}}


def cordon_patch(unschedulable=True):
    """The merge patch that cordons (or uncordons) a Node: spec.unschedulable."""
    return {"spec": {"unschedulable": True if unschedulable else None}}


def is_cordoned(node):
    return bool((node.get("spec") or {}).get("unschedulable"))

#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Cordon a Node and evict its pods through the Eviction API, as kubectl drain --ignore-daemonsets."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s_drain
short_description: Cordon a Node and evict its pods through the Eviction API (kubectl drain --ignore-daemonsets)
version_added: 0.4.0
description:
  - With I(state=drained), marks the Node unschedulable (C(spec.unschedulable), a merge patch) and
    evicts every pod bound to it (C(fieldSelector=spec.nodeName=<node>)) with a policy/v1 Eviction,
    then waits until those pods are gone. Mirror pods and pods of a DaemonSet are left alone, as
    C(kubectl drain --ignore-daemonsets) does; finished pods are evicted too.
  - Before anything is changed it refuses, naming each pod, when a pod has no controller (unless
    I(force)) or uses an emptyDir volume (unless I(delete_emptydir_data)).
  - An eviction refused with 429 (a PodDisruptionBudget would be broken) is retried every
    I(delay) seconds until I(timeout).
  - I(state=cordoned) only marks the Node unschedulable; I(state=uncordoned) marks it schedulable again.
  - A Node that does not exist is reported (C(found=false)) and nothing is done.
  - In check mode the cordon and the evictions are sent with C(dryRun=All); nothing changes.
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_HOST
  - offline_pot.tke.k8s
options:
  name:
    description: The Node.
    type: str
    required: true
  state:
    description: C(drained), C(cordoned) or C(uncordoned).
    type: str
    choices: [drained, cordoned, uncordoned]
    default: drained
  force:
    description: Also evict pods that no controller manages (they are gone for good).
    type: bool
    default: false
  delete_emptydir_data:
    description: Also evict pods with emptyDir volumes (their data is gone).
    type: bool
    default: false
  timeout:
    description: Seconds to wait for the evicted pods to be gone (and for refused evictions to be accepted).
    type: int
    default: 300
  delay:
    description: Seconds between polls.
    type: int
    default: 2
"""

EXAMPLES = r"""
- name: Drain node w3 before removing it
  offline_pot.tke.k8s_drain:
    name: w3
  delegate_to: "{{ groups['masters'] | first }}"
"""

RETURN = r"""
found:
  description: Whether the Node exists.
  returned: always
  type: bool
cordoned:
  description: Whether this run changed the Node's schedulability.
  returned: always
  type: bool
evicted:
  description: C(namespace/name) of every pod evicted (or that check mode would evict).
  returned: always
  type: list
  elements: str
ignored:
  description: Pods left on the Node, with the reason (DaemonSet, mirror pod).
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.offline_pot.tke.plugins.module_utils.k8s import args, drain, waiter
from ansible_collections.offline_pot.tke.plugins.module_utils.k8s.client import ApiError


def main():
    module = AnsibleModule(argument_spec=args.argument_spec(
        name=dict(type="str", required=True),
        state=dict(type="str", choices=["drained", "cordoned", "uncordoned"], default="drained"),
        force=dict(type="bool", default=False),
        delete_emptydir_data=dict(type="bool", default=False),
        timeout=dict(type="int", default=300),
        delay=dict(type="int", default=2),
    ), supports_check_mode=True)
    p = module.params
    result = dict(changed=False, found=False, cordoned=False, evicted=[], ignored={})
    node_ref = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": p["name"]}}

    def work(svc):
        node = svc.get(node_ref)
        if node is None:
            return result
        result["found"] = True
        plan = None
        if p["state"] == "drained":
            pods = svc.list("v1", "Pod", field_selector=f"spec.nodeName={p['name']}")
            plan = drain.classify(pods, p["force"], p["delete_emptydir_data"])
            result["ignored"] = plan["ignore"]
            if plan["blocking"]:
                module.fail_json(msg=f"Node {p['name']}: not drained, nothing changed: " + "; ".join(
                    f"pod {n} {why}" for n, why in sorted(plan["blocking"].items())), **result)
        want = p["state"] != "uncordoned"
        if drain.is_cordoned(node) != want:
            svc.patch(node_ref, drain.cordon_patch(want))
            result["cordoned"] = result["changed"] = True
        if plan:
            result["evicted"] = _evict(module, svc, plan["evict"], p)
            result["changed"] = result["changed"] or bool(result["evicted"])
        return result

    args.run_module(module, work, done=result, prefix=f"Node {p['name']}: ")


def _evict(module, svc, pods, p):
    """Evict the pods (retrying those a disruption budget holds back), then wait until they are
    gone; returns their names."""
    todo = {drain.name_of(pod): pod for pod in pods}
    evicted = []

    def poll():
        for name, pod in list(todo.items()):
            try:
                if svc.evict(pod, drain.eviction(pod)):
                    evicted.append(name)
                del todo[name]
            except ApiError as e:
                if e.code != 429:
                    raise
        if module.check_mode or todo:
            return [(f"pod {n}", "evicted", "refused: a PodDisruptionBudget holds it") for n in todo]
        uids = {(pod.get("metadata") or {}).get("uid") for pod in pods}
        left = [pod for pod in svc.list("v1", "Pod", field_selector=f"spec.nodeName={p['name']}")
                if (pod.get("metadata") or {}).get("uid") in uids]
        return [(f"pod {drain.name_of(pod)}", "gone", "still there") for pod in left]

    waiting, dummy = waiter.wait(poll, p["timeout"], p["delay"])
    if waiting:
        module.fail_json(msg=f"Node {p['name']}: timed out after {p['timeout']} s waiting for "
                             f"{waiter.describe(waiting)}", evicted=sorted(evicted))
    return sorted(evicted)


if __name__ == "__main__":
    main()

#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Wait until Kubernetes objects are ready: DaemonSet or StatefulSet rolled out, Deployment available, Node Ready."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s_wait
short_description: Wait until DaemonSets or StatefulSets are rolled out, Deployments available or Nodes Ready
version_added: 0.3.0
description:
  - Polls the API until every object named in I(objects) is ready, or fails after I(timeout)
    seconds naming each object still waited for, what it waits for and its state.
  - DaemonSet is rolled out and Deployment available by C(kubectl rollout status)'s rule (the
    controller saw the latest spec; every pod updated and available; no old Deployment replica
    left; a DaemonSet no node fits, or with the OnDelete strategy, has nothing to wait for). A
    Deployment past its progress deadline fails the module at once. StatefulSet is rolled out by
    the same command's rule (every replica ready; the partitioned roll out done, or the current
    revision the update revision). Node is Ready when its Ready condition is True.
  - An object may select several by I(label_selector) instead of a name; with I(names), every
    listed name must be among them (a node that never registered is named as missing).
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.INFO_MODULE
  - offline_pot.tke.k8s
attributes:
  check_mode:
    details: Waits in check mode too (it reads only); objects that check mode did not create are reported missing.
options:
  objects:
    description: What to wait for.
    type: list
    elements: dict
    required: true
    suboptions:
      api_version:
        description: API group and version (C(apps/v1) for DaemonSet, Deployment and StatefulSet, C(v1) for Node).
        type: str
        default: v1
      kind:
        description: DaemonSet, Deployment, StatefulSet or Node.
        type: str
        required: true
        choices: [DaemonSet, Deployment, Node, StatefulSet]
      name:
        description: The object; without it, every object matching I(label_selector).
        type: str
      namespace:
        description: Namespace of a DaemonSet, Deployment or StatefulSet.
        type: str
      label_selector:
        description: Label selector when I(name) is not given.
        type: str
      names:
        description: Names that must all be among the selected objects (e.g. every node of the inventory).
        type: list
        elements: str
        default: []
  timeout:
    description: Seconds to wait in all.
    type: int
    default: 300
  delay:
    description: Seconds between polls.
    type: int
    default: 5
"""

EXAMPLES = r"""
- name: The pod network rolled out and every node Ready
  offline_pot.tke.k8s_wait:
    objects:
      - {api_version: apps/v1, kind: DaemonSet, namespace: kube-flannel, name: kube-flannel-ds}
      - {kind: Node, names: "{{ groups['masters'] + groups['workers'] }}"}
    timeout: 300
  delegate_to: "{{ groups['masters'] | first }}"
  run_once: true
"""

RETURN = r"""
waited:
  description: Seconds waited.
  returned: always
  type: float
ready:
  description: C(Kind namespace/name) of every object found ready.
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.offline_pot.tke.plugins.module_utils.k8s import args, waiter


def main():
    module = AnsibleModule(argument_spec=args.argument_spec(
        objects=args.object_refs(kind=dict(type="str", required=True, choices=sorted(waiter.RULES)),
                                 names=dict(type="list", elements="str", default=[])),
        timeout=dict(type="int", default=300),
        delay=dict(type="int", default=5),
    ), supports_check_mode=True)
    p = module.params

    def work(svc):
        found = []

        def poll():
            out, found[:] = [], []
            for spec in p["objects"]:
                ident = f"{spec['kind']} {spec['namespace'] + '/' if spec['namespace'] else ''}{spec['name']}"
                if spec["name"]:
                    obj = svc.get({"apiVersion": spec["api_version"], "kind": spec["kind"],
                                   "metadata": {"name": spec["name"], "namespace": spec["namespace"]}})
                    items = [obj] if obj else []
                    if not obj:
                        out.append((ident, "to exist", "not found"))
                else:
                    items = svc.list(spec["api_version"], spec["kind"], spec["namespace"], spec["label_selector"])
                    names = [f"{spec['kind']} {n}" for n in spec["names"]]
                    seen = {f"{spec['kind']} {(i.get('metadata') or {}).get('name')}" for i in items}
                    out += [(n, "to exist", "not registered") for n in names if n not in seen]
                waiting = waiter.pending(items)
                out += waiting
                stuck = {w[0] for w in waiting}
                found.extend(i for i in (f"{o['kind']} {(o.get('metadata') or {}).get('name')}" for o in items)
                             if i not in stuck)
            return out

        waiting, waited = waiter.wait(poll, p["timeout"], p["delay"])
        if waiting:
            module.fail_json(msg=f"timed out after {p['timeout']} s waiting for {waiter.describe(waiting)}",
                             waited=round(waited, 1), ready=found, not_ready=[w[0] for w in waiting])
        return dict(changed=False, waited=round(waited, 1), ready=found)

    args.run_module(module, work, errors=(waiter.RolloutFailed,))


if __name__ == "__main__":
    main()

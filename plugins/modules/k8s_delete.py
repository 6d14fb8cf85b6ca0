#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Delete Kubernetes objects by name or by label selector."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s_delete
short_description: Delete Kubernetes objects named or selected by labels; changed only when one existed
version_added: 0.3.0
description:
  - Deletes each object of I(objects) that exists, with background propagation (the objects it
    owns go with it). An object without a name stands for every object of its kind matching its
    C(label_selector).
  - In check mode the deletion is sent with C(dryRun=All) and nothing is deleted.
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_HOST
  - offline_pot.tke.k8s
options:
  objects:
    description: What to delete.
    type: list
    elements: dict
    required: true
    suboptions:
      api_version:
        description: API group and version.
        type: str
        default: v1
      kind:
        description: The kind.
        type: str
        required: true
      name:
        description: The object's name; without it, every object matching I(label_selector).
        type: str
      namespace:
        description: Namespace of a namespaced kind.
        type: str
      label_selector:
        description: Label selector when I(name) is not given (required then).
        type: str
"""

EXAMPLES = r"""
- name: Remove the flannel DaemonSet
  offline_pot.tke.k8s_delete:
    objects:
      - {api_version: apps/v1, kind: DaemonSet, namespace: kube-flannel, name: kube-flannel-ds}
  delegate_to: "{{ groups['masters'] | first }}"
  run_once: true
"""

RETURN = r"""
deleted:
  description: C(Kind namespace/name) of every object deleted (or that check mode would delete).
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.offline_pot.tke.plugins.module_utils.k8s import args, objects


def main():
    module = AnsibleModule(argument_spec=args.argument_spec(
        objects=args.object_refs(),
    ), supports_check_mode=True)
    missing = [o["kind"] for o in module.params["objects"] if not o["name"] and not o["label_selector"]]
    if missing:
        module.fail_json(msg=f"objects: a {', '.join(missing)} entry needs a name or a label_selector")
    deleted, diffs = [], []

    def work(svc):
        for spec in module.params["objects"]:
            if spec["name"]:
                targets = [{"apiVersion": spec["api_version"], "kind": spec["kind"],
                            "metadata": {"name": spec["name"], "namespace": spec["namespace"]}}]
            else:
                targets = svc.list(spec["api_version"], spec["kind"], spec["namespace"], spec["label_selector"])
            for obj in targets:
                if svc.delete(obj):
                    deleted.append(objects.identity(obj))
                    diffs.append({"before_header": objects.identity(obj), "after_header": "(deleted)",
                                  "before": f"{objects.identity(obj)}\n", "after": ""})
        return dict(changed=bool(deleted), deleted=deleted, **({"diff": diffs} if module._diff else {}))

    args.run_module(module, work, done={"deleted": deleted})


if __name__ == "__main__":
    main()

#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Read Kubernetes objects: one by name or a list by selectors."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s_info
short_description: Read Kubernetes objects, one by name or a list by label and field selectors
version_added: 0.3.0
description:
  - Returns the object named I(name), or every object of the kind matching the selectors (in
    I(namespace), or in every namespace when it is not given).
  - A kind is found through API discovery. Values of Secrets are never returned.
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.INFO_MODULE
  - offline_pot.tke.k8s
options:
  api_version:
    description: API group and version of the kind (C(v1), C(apps/v1)).
    type: str
    default: v1
  kind:
    description: The kind (C(Node), C(DaemonSet), ...).
    type: str
    required: true
  name:
    description: The object's name; without it, a list.
    type: str
  namespace:
    description: Namespace of a namespaced kind; without it a list spans every namespace.
    type: str
  label_selector:
    description: Label selector of a list (C(app=flannel,tier=node)).
    type: str
  field_selector:
    description: Field selector of a list (C(spec.nodeName=w1)).
    type: str
"""

EXAMPLES = r"""
- name: Every node
  offline_pot.tke.k8s_info:
    kind: Node
  delegate_to: "{{ groups['masters'] | first }}"
  run_once: true
  register: nodes
"""

RETURN = r"""
resources:
  description: The objects found (empty when none; one element for a name that exists).
  returned: always
  type: list
  elements: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.offline_pot.tke.plugins.module_utils.k8s import args, objects


def main():
    module = AnsibleModule(argument_spec=args.argument_spec(
        api_version=dict(type="str", default="v1"),
        kind=dict(type="str", required=True),
        name=dict(type="str"),
        namespace=dict(type="str"),
        label_selector=dict(type="str"),
        field_selector=dict(type="str"),
    ), supports_check_mode=True)
    p = module.params

    def work(svc):
        if p["name"]:
            obj = svc.get({"apiVersion": p["api_version"], "kind": p["kind"],
                           "metadata": {"name": p["name"], "namespace": p["namespace"]}})
            items = [obj] if obj else []
        else:
            items = svc.list(p["api_version"], p["kind"], p["namespace"], p["label_selector"], p["field_selector"])
        return dict(changed=False, resources=[objects.redact(i) for i in items])

    args.run_module(module, work)


if __name__ == "__main__":
    main()

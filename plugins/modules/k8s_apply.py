#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Create or update Kubernetes objects idempotently; prune the collection's stale ones."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s_apply
short_description: Create or update Kubernetes objects, changed only when the live object differs
version_added: 0.3.0
description:
  - Each object of I(objects) is created when it does not exist, and updated with a JSON merge
    patch when the live object differs from it. The live object is as desired when every field
    of the desired object is there with the same value (the API server's defaults and status are
    no difference) and no field applied last time and since dropped is still there; the last
    applied object is kept in the annotation C(tke.offline-pot.io/last-applied). When it is not,
    the patch is first sent as a dry run (C(dryRun=All)) and the object the server would store
    compared with the live one; a difference the server's own normalisation removes (a Secret's
    C(stringData) stored as C(data), a quantity in canonical form, a default) is no change.
  - Writes are sent with C(fieldValidation=Strict); a field the server does not know fails the
    module naming it, rather than being dropped with a warning.
  - With I(prune_labels), every object gets those labels and, after the apply, live objects of
    I(prune_kinds) carrying them that I(objects) no longer lists are deleted.
  - An object still being deleted (a Namespace C(Terminating) while its content goes) is created again
    once it is gone; a Namespace the prune deletes is waited for until it is gone, so what runs next
    may create it again. Both wait up to I(gone_timeout) seconds.
  - Kinds are found through API discovery. An API refusal fails the module naming the object,
    the reason and the fields at fault.
  - In check mode creations and updates are sent with C(dryRun=All), so the API server validates
    them and stores nothing. Objects in a namespace that is itself only about to be created are
    reported without that validation.
  - Values of Secrets are never shown in results or diffs, and their last-applied record names
    their keys only. Give them in I(secrets), not in I(objects), because the module's invocation is
    logged on the host it runs on (the journal) and shown at C(-vvv) with every option but the
    C(no_log) ones. A Secret whose values are in I(objects) is applied with a warning saying so.
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_HOST
  - offline_pot.tke.k8s
options:
  objects:
    description: The desired objects (apiVersion, kind, metadata.name, metadata.namespace for namespaced kinds).
    type: list
    elements: dict
    required: true
  secrets:
    description:
      - The values of Secrets of I(objects), by C(namespace/name) (C(/name) for a Secret without
        a namespace), each a mapping of C(data) and/or C(stringData) as a Secret has them.
      - Not logged, and masked wherever they would appear in results (C(no_log)).
      - A key that is no Secret of I(objects) fails the module before any request.
    type: dict
    default: {}
  prune_labels:
    description: Labels the collection owns for this set of objects (added to each of them; the prune selector).
    type: dict
    default: {}
  prune_kinds:
    description:
      - Kinds searched for stale objects, as C(apiVersion/kind) strings (C(apps/v1/DaemonSet), C(v1/ConfigMap)).
      - Empty means no prune. Kinds the API does not serve are skipped.
    type: list
    elements: str
    default: []
  gone_timeout:
    description: Seconds to wait for an object being deleted to be gone (see above).
    type: int
    default: 120
"""

EXAMPLES = r"""
- name: The pod network's objects on the first master, stale ones pruned
  offline_pot.tke.k8s_apply:
    objects: "{{ lookup('ansible.builtin.template', 'flannel.yml.j2') | ansible.builtin.from_yaml_all | list }}"
    prune_labels:
      tke.offline-pot.io/part-of: network
    prune_kinds: [apps/v1/DaemonSet, v1/ConfigMap]
  delegate_to: "{{ groups['masters'] | first }}"
  run_once: true

- name: A Secret whose values no log records
  offline_pot.tke.k8s_apply:
    objects:
      - {apiVersion: v1, kind: Secret, metadata: {name: app-session, namespace: shop}, type: Opaque}
    secrets:
      shop/app-session: {stringData: {SESSION_SECRET: "{{ vault_app_session }}"}}
  delegate_to: "{{ groups['masters'] | first }}"
  run_once: true
"""

RETURN = r"""
results:
  description: What happened to each object, in order (pruned objects last).
  returned: always
  type: list
  elements: dict
  contains:
    object:
      description: C(Kind namespace/name).
      type: str
    action:
      description: created, updated, unchanged or deleted (in check mode, what would happen).
      type: str
  sample: [{object: DaemonSet kube-flannel/kube-flannel-ds, action: created}]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.offline_pot.tke.plugins.module_utils.k8s import args, objects


def split_kind(text):
    api_version, dummy, kind = str(text).rpartition("/")
    if not api_version or not kind:
        raise ValueError(f"prune_kinds: {text!r} is not apiVersion/kind (e.g. apps/v1/DaemonSet)")
    return api_version, kind


def main():
    module = AnsibleModule(argument_spec=args.argument_spec(
        objects=dict(type="list", elements="dict", required=True),
        secrets=dict(type="dict", default={}, no_log=True),
        prune_labels=dict(type="dict", default={}),
        prune_kinds=dict(type="list", elements="str", default=[]),
        gone_timeout=dict(type="int", default=120),
    ), supports_check_mode=True)
    p = module.params
    problems = [x for obj in p["objects"] for x in objects.validate_shape(obj)]
    for name in sorted(objects.split_secrets(p["objects"])[1]):
        module.warn(f"Secret {name}: its values are in objects, which the module's invocation log records; "
                    "give them in secrets")
    try:
        given = objects.join_secrets(p["objects"], p["secrets"])
    except ValueError as e:
        given = p["objects"]
        problems.append(str(e))
    try:
        kinds = [split_kind(k) for k in p["prune_kinds"]]
    except ValueError as e:
        problems.append(str(e))
    if problems:
        module.fail_json(msg="; ".join(problems))
    labels = {str(k): str(v) for k, v in p["prune_labels"].items()}
    desired = [objects.with_labels(o, labels) for o in given]
    results, diffs = [], []

    def work(svc):
        new_namespaces = set()
        for obj in desired:
            ns = (obj.get("metadata") or {}).get("namespace")
            r = svc.apply(obj, skip_dry_run=ns in new_namespaces)
            if obj["kind"] == "Namespace" and r["action"] == "created":
                new_namespaces.add(obj["metadata"]["name"])
            results.append({"object": objects.identity(obj), "action": r["action"]})
            if r["action"] != "unchanged":
                diffs.append({"before_header": objects.identity(obj), "after_header": objects.identity(obj),
                              "before": objects.to_text(r["before"]), "after": objects.to_text(r["after"])})
        if labels and kinds:
            pruned = []
            for item in svc.stale(desired, kinds, labels):
                if svc.delete(item):
                    pruned.append(item)
                    results.append({"object": objects.identity(item), "action": "deleted"})
                    diffs.append({"before_header": objects.identity(item), "after_header": "(deleted)",
                                  "before": objects.to_text(objects.for_display(item)), "after": ""})
            for item in pruned:
                if item["kind"] == "Namespace" and not module.check_mode:
                    svc.wait_gone(item)
        changed = any(r["action"] != "unchanged" for r in results)
        return dict(changed=changed, results=results, **({"diff": diffs} if module._diff else {}))

    args.run_module(module, work, done={"results": results}, gone_timeout=p["gone_timeout"])


if __name__ == "__main__":
    main()

#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""A Helm release installed or upgraded from a chart file, rolled back, or uninstalled, with helm 3."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: helm_release
short_description: A Helm release from a chart file, changed only when its chart or values differ
version_added: 0.4.0
description:
  - Runs helm 3 (O(binary)) on the host with the admin kubeconfig; never contacts a chart repository
    (the chart is a file of the site pack).
  - O(state=present) installs or upgrades (C(helm upgrade --install --reset-values)) only when the
    release differs from what is asked - its newest revision is not deployed, its chart's name or
    version differs, its chart file does (the sha256 the module records in the revision's
    description), or its values (C(helm get values)) differ - or when one of the O(objects) the chart
    renders is missing from the cluster (a deleted object is put back). Otherwise nothing is called and
    the result is unchanged. It does not wait - the caller waits for the workloads and rolls back
    (O(state=rolled_back)) when they do not become ready, naming them.
  - A revision an interrupted helm left pending is rolled back to the last deployed one (or, for a
    first install, uninstalled) before the upgrade, as helm refuses to upgrade it.
  - O(state=rolled_back) returns the release to O(revision) (C(helm rollback)); revision 0 - there was
    none before - uninstalls it. O(state=absent) uninstalls the release when it exists.
  - Check mode calls nothing that writes and reports what would change; with C(--diff) the rendered
    objects (O(objects)) are shown against the live ones, Secrets' values hidden.
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_HOST
  - offline_pot.tke.k8s
requirements:
  - helm 3 on the host (the site pack's C(helm) binary)
options:
  name:
    description: The release (the component's name).
    type: str
    required: true
  namespace:
    description: The release's namespace (it must exist).
    type: str
    default: default
  state:
    description: present, rolled_back (to O(revision)) or absent.
    type: str
    choices: [present, rolled_back, absent]
    default: present
  chart:
    description: The chart file (C(.tgz)) on the host; required with O(state=present).
    type: path
  chart_name:
    description: The chart's name (C(Chart.yaml)); required with O(state=present).
    type: str
  chart_version:
    description: The chart's version (C(Chart.yaml)); required with O(state=present).
    type: str
  chart_sha256:
    description: The chart file's sha256 (the site pack's manifest); required with O(state=present).
    type: str
  values:
    description: The release's values, over the chart's defaults (they may hold secrets; never logged
      or returned).
    type: dict
    default: {}
  objects:
    description: The objects the chart renders with these values (Secrets without their values), as
      C(helm template) gives them; their presence is checked, and C(--diff) shows them.
    type: list
    elements: dict
    default: []
  revision:
    description: With O(state=rolled_back), the revision to return to (0 - uninstall).
    type: int
  timeout:
    description: Seconds helm may take for one operation.
    type: int
    default: 300
  binary:
    description: The helm binary.
    type: path
    default: /usr/local/bin/helm
"""

EXAMPLES = r"""
- name: The release of component sample-web
  offline_pot.tke.helm_release:
    name: sample-web
    namespace: shop
    chart: /var/lib/offline-pot/charts/sample-web-0.1.0.tgz
    chart_name: sample-web
    chart_version: 0.1.0
    chart_sha256: "{{ chart_sha256 }}"
    values: {replicas: 2, password: "{{ vault_web_password }}"}
  register: release

- name: Back to the revision before, when its workloads did not become ready
  offline_pot.tke.helm_release:
    name: sample-web
    namespace: shop
    state: rolled_back
    revision: "{{ release.previous_revision | default(0, true) }}"
  when: release is changed
"""

RETURN = r"""
revision:
  description: The release's revision after the call (0 - no release).
  returned: always
  type: int
previous_revision:
  description: The last deployed revision before the call (0 - none); what a rollback returns to.
  returned: always
  type: int
reasons:
  description: Why the release was (or in check mode would be) installed, upgraded or removed.
  returned: always
  type: list
  elements: str
"""

import json
import os
import tempfile

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.offline_pot.tke.plugins.module_utils import helm
from ansible_collections.offline_pot.tke.plugins.module_utils.k8s import args, objects
from ansible_collections.offline_pot.tke.plugins.module_utils.k8s.client import ApiError
from ansible_collections.offline_pot.tke.plugins.module_utils.k8s.service import ObjectError, Objects


class Release:
    def __init__(self, module, home):
        self.module = module
        p = module.params
        self.name, self.namespace, self.helm = p["name"], p["namespace"], p["binary"]
        self.target = dict(kubeconfig=p["kubeconfig"], context=p["context"])
        self.env = helm.env(home)
        self.home = home

    def run(self, argv, what):
        rc, out, err = self.module.run_command(argv, environ_update=self.env)
        if rc != 0:   # stderr only: stdout may be a release record, values and Secrets included
            self.module.fail_json(msg=f"helm release {self.namespace}/{self.name}: {what} failed: "
                                      f"{err.strip() or f'exit code {rc}'}", rc=rc)
        return out

    def history(self):
        rc, out, err = self.module.run_command(helm.history_argv(self.helm, self.name, self.namespace, **self.target),
                                               environ_update=self.env)
        try:
            return helm.parse_history(rc, out, err)
        except ValueError as e:
            self.module.fail_json(msg=f"helm release {self.namespace}/{self.name}: helm history failed: {e}")

    def values(self):
        out = self.run(helm.values_argv(self.helm, self.name, self.namespace, **self.target), "helm get values")
        return json.loads(out or "null")

    def uninstall(self, timeout):
        self.run(helm.uninstall_argv(self.helm, self.name, self.namespace, timeout, **self.target), "helm uninstall")

    def rollback(self, revision, timeout):
        self.run(helm.rollback_argv(self.helm, self.name, self.namespace, revision, timeout, **self.target),
                 "helm rollback")

    def upgrade(self, values):
        p = self.module.params
        fd, path = tempfile.mkstemp(dir=self.home, suffix=".json")   # the values: 0600, in a 0700 directory
        with os.fdopen(fd, "w") as fh:
            json.dump(values, fh)
        out = self.run(helm.upgrade_argv(self.helm, self.name, p["chart"], self.namespace, path, p["chart_sha256"],
                                         p["timeout"], **self.target), "helm upgrade --install")
        return json.loads(out).get("version", 0)


def missing_objects(module, rendered):
    """The rendered objects the cluster lacks (identities)."""
    if not rendered:
        return []
    with args.client(module) as client:
        svc = Objects(client, check_mode=True)
        try:
            return [objects.identity(o) for o in rendered if svc.get(o) is None]
        except (ObjectError, ApiError) as e:
            module.fail_json(msg=f"helm release {module.params['namespace']}/{module.params['name']}: {e}")


def live_diff(module, rendered):
    """Each rendered object against the live one (Secrets' values hidden on both sides)."""
    out = []
    with args.client(module) as client:
        svc = Objects(client, check_mode=True)
        for obj in rendered:
            try:
                live = svc.get(obj)
            except (ObjectError, ApiError):
                live = None
            after = objects.for_display(obj)
            before = objects.for_display(objects.project(live, objects.display_shape(obj, live))) if live else None
            out.append({"before_header": objects.identity(obj) if live else "(absent)",
                        "after_header": objects.identity(obj), "before": objects.to_text(before),
                        "after": objects.to_text(after)})
    return out


def present(module, release):
    p = module.params
    revisions = release.history()
    previous = helm.last_deployed(revisions) or 0
    live_values = release.values() if revisions else None
    reasons = helm.differences(revisions, p["chart_name"], p["chart_version"], p["chart_sha256"], p["values"],
                               live_values)
    if not reasons:
        reasons = [f"{o} is missing from the cluster" for o in missing_objects(module, p["objects"])]
    result = dict(changed=bool(reasons), reasons=reasons, previous_revision=previous,
                  revision=revisions[-1]["revision"] if revisions else 0)
    if module._diff and reasons:
        result["diff"] = live_diff(module, p["objects"])
    if not reasons or module.check_mode:
        return result
    status = revisions[-1].get("status") if revisions else None
    if status in helm.PENDING or (status == "failed" and not previous):
        # helm refuses to upgrade a pending revision; a release never deployed cannot be upgraded
        if previous:
            release.rollback(previous, p["timeout"])
        else:
            release.uninstall(p["timeout"])
    result["revision"] = release.upgrade(p["values"])
    return result


def main():
    module = AnsibleModule(argument_spec=args.argument_spec(
        name=dict(type="str", required=True),
        namespace=dict(type="str", default="default"),
        state=dict(type="str", choices=["present", "rolled_back", "absent"], default="present"),
        chart=dict(type="path"),
        chart_name=dict(type="str"),
        chart_version=dict(type="str"),
        chart_sha256=dict(type="str"),
        values=dict(type="dict", default={}, no_log=True),
        objects=dict(type="list", elements="dict", default=[]),
        revision=dict(type="int"),
        timeout=dict(type="int", default=300),
        binary=dict(type="path", default="/usr/local/bin/helm"),
    ), required_if=[("state", "present", ("chart", "chart_name", "chart_version", "chart_sha256")),
                    ("state", "rolled_back", ("revision",))],
        supports_check_mode=True)
    p = module.params
    with tempfile.TemporaryDirectory(prefix="tke-helm-") as home:
        release = Release(module, home)
        if p["state"] == "present":
            module.exit_json(**present(module, release))
        revisions = release.history()
        current = revisions[-1]["revision"] if revisions else 0
        if p["state"] == "absent" or p["revision"] == 0:
            result = dict(changed=bool(revisions), reasons=["uninstalled"] if revisions else [], revision=0,
                          previous_revision=helm.last_deployed(revisions) or 0)
            if module._diff and revisions:
                result["diff"] = {"before": f"helm release {p['namespace']}/{p['name']} revision {current}\n",
                                  "after": ""}
            if revisions and not module.check_mode:
                release.uninstall(p["timeout"])
            module.exit_json(**result)
        if not revisions:
            module.fail_json(msg=f"helm release {p['namespace']}/{p['name']}: no release to roll back")
        result = dict(changed=True, reasons=[f"rolled back from revision {current} to {p['revision']}"],
                      previous_revision=helm.last_deployed(revisions) or 0, revision=current)
        if not module.check_mode:
            release.rollback(p["revision"], p["timeout"])
            result["revision"] = release.history()[-1]["revision"]
        module.exit_json(**result)


if __name__ == "__main__":
    main()

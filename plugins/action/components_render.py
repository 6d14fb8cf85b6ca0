# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Render the components' templates from the verified pack and check the images they run
(documentation: plugins/modules/components_render.py)."""
from __future__ import annotations

import json
import os
import subprocess
import tempfile

import yaml

from ansible.errors import AnsibleError
from ansible.plugins.loader import lookup_loader

from ansible_collections.offline_pot.tke.plugins.module_utils import helm
from ansible_collections.offline_pot.tke.plugins.module_utils.k8s import objects as k8s_objects
from ansible_collections.offline_pot.tke.plugins.plugin_utils import components
from ansible_collections.offline_pot.tke.plugins.plugin_utils.action_module import ActionModuleBase


class ActionModule(ActionModuleBase):
    _requires_connection = False
    ARGUMENT_SPEC = dict(
        components=dict(type="list", elements="dict", required=True),
        removed=dict(type="list", elements="dict", default=[]),
        pack_dir=dict(type="path", required=True),
        prefix=dict(type="str", required=True),
        registry_domain=dict(type="str", default=""),
        kube_version=dict(type="str", default=""),
    )

    def run_action(self, args, result, task_vars):
        lookup = lookup_loader.get("ansible.builtin.template", loader=self._loader, templar=self._templar)
        objects, secrets, problems = {}, {}, []
        try:
            with open(os.path.join(args["pack_dir"], "manifest.json"), encoding="utf-8") as fh:
                manifest = json.load(fh)
        except (OSError, ValueError) as exc:
            manifest = {}
            if args["registry_domain"]:
                problems.append(f"the site pack's manifest.json cannot be read: {exc}")
        site_images = self._site_images(manifest) if args["registry_domain"] else []
        helm_entry = components.pack_helm(manifest, args["pack_dir"]) or {}
        checked = {c["name"] for c in args["components"]}
        for c in args["components"] + args["removed"]:
            try:
                rendered = (self._chart(c, args, helm_entry.get("path")) if c.get("chart") else
                            self._templates(c, args["pack_dir"], lookup, task_vars))
            except (AnsibleError, yaml.YAMLError, ValueError) as exc:
                problems.append(f"component {c['name']}: {exc}")
                continue
            if c.get("chart"):
                # helm applies them: helm_release gets the objects to check and show, values hidden
                objects[c["name"]], secrets[c["name"]] = [k8s_objects.redact(o) for o in rendered], {}
            else:
                # Secrets' values apart: k8s_apply takes them in its no_log option
                objects[c["name"]], secrets[c["name"]] = k8s_objects.split_secrets(rendered)
            if c["name"] in checked:
                allowed = components.pack_image_refs(c, args["prefix"], site_images, args["registry_domain"])
                problems += components.image_problems(c, rendered, allowed)
        result.update(changed=False, objects=objects, secrets=secrets, problems=problems,
                      helm=helm_entry.get("path", ""), helm_install=helm_entry.get("install", ""))
        return result

    @staticmethod
    def _templates(c, pack_dir, lookup, task_vars):
        """A component's manifest templates rendered as ansible.builtin.template does."""
        paths = [os.path.join(pack_dir, f) for f in c.get("files") or []]
        try:
            texts = lookup.run(paths, variables=task_vars, template_vars={"component": c, "values": c.get("values") or {}})
            return [o for text in texts for o in yaml.safe_load_all(text) if o]
        except (AnsibleError, yaml.YAMLError) as exc:
            raise ValueError(f"its templates do not render: {exc}") from None

    @staticmethod
    def _chart(c, args, binary):
        """A chart component rendered by the pack's helm binary (`helm template`, no cluster), its
        namespaced objects in the release's namespace as an install puts them."""
        chart = c["chart"]
        if not binary:
            raise ValueError(f"it is the Helm chart {chart['name']}-{chart['version']}, and the site pack carries "
                             "no helm binary (binaries: a helm entry)")
        with tempfile.TemporaryDirectory(prefix="tke-helm-") as home:
            values = os.path.join(home, "values.json")
            with open(os.open(values, os.O_WRONLY | os.O_CREAT, 0o600), "w", encoding="utf-8") as fh:
                json.dump(c.get("values") or {}, fh)
            argv = helm.template_argv(binary, c["name"], os.path.join(args["pack_dir"], chart["file"]),
                                      c["namespace"], values, args["kube_version"] or None)
            done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False,
                                  env=dict(os.environ, **helm.env(home)))
        if done.returncode != 0:
            raise ValueError(f"its chart {chart['name']}-{chart['version']} does not render with its values: "
                             f"{done.stderr.strip()}")
        rendered = [o for o in yaml.safe_load_all(done.stdout) if o]
        for o in rendered:
            o.setdefault("metadata", {}).setdefault("namespace", c["namespace"])
        return rendered

    @staticmethod
    def _site_images(manifest):
        """The site's own images the pack pre-seeds in the site registry (manifest contents.images)."""
        listed = (manifest.get("contents") or {}).get("images") or []
        return [f"{i['name']}:{i['tag']}" for i in listed if i.get("name") and i.get("tag")]

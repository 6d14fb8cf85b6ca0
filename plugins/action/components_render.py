# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Render the components' templates from the verified pack and check the images they run
(documentation: plugins/modules/components_render.py)."""
from __future__ import annotations

import json
import os

import yaml

from ansible.errors import AnsibleError
from ansible.plugins.loader import lookup_loader

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
    )

    def run_action(self, args, result, task_vars):
        lookup = lookup_loader.get("ansible.builtin.template", loader=self._loader, templar=self._templar)
        objects, secrets, problems = {}, {}, []
        try:
            site_images = self._site_images(args["pack_dir"]) if args["registry_domain"] else []
        except (OSError, ValueError) as exc:
            site_images = []
            problems.append(f"the site pack's manifest.json cannot be read: {exc}")
        checked = {c["name"] for c in args["components"]}
        for c in args["components"] + args["removed"]:
            paths = [os.path.join(args["pack_dir"], f) for f in c.get("files") or []]
            try:
                texts = lookup.run(paths, variables=task_vars,
                                   template_vars={"component": c, "values": c.get("values") or {}})
                rendered = [o for text in texts for o in yaml.safe_load_all(text) if o]
            except (AnsibleError, yaml.YAMLError) as exc:
                problems.append(f"component {c['name']}: its templates do not render: {exc}")
                continue
            # Secrets' values apart: k8s_apply takes them in its no_log option
            objects[c["name"]], secrets[c["name"]] = k8s_objects.split_secrets(rendered)
            if c["name"] in checked:
                allowed = components.pack_image_refs(c, args["prefix"], site_images, args["registry_domain"])
                problems += components.image_problems(c, rendered, allowed)
        result.update(changed=False, objects=objects, secrets=secrets, problems=problems)
        return result

    @staticmethod
    def _site_images(pack_dir):
        """The site's own images the pack pre-seeds in the site registry (manifest contents.images)."""
        with open(os.path.join(pack_dir, "manifest.json"), encoding="utf-8") as fh:
            listed = json.load(fh).get("contents", {}).get("images") or []
        return [f"{i['name']}:{i['tag']}" for i in listed if i.get("name") and i.get("tag")]

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Filter: the network plugins' facts, read from their folders (roles/network/plugins/<name>/)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: network_plugins
short_description: The network plugins' facts, by name, read from the network role's plugin folders
version_added: 0.1.0
description:
  - Reads C(plugins/<name>/plugin.yml) of every plugin folder under the network role's path (what
    its CNI configuration files are, what the phase waits for, where its pods are, what a reset
    removes; docs/network.md, "Adding a network plugin").
  - The folders must be exactly the plugins of the image table (module_utils kube_images,
    C(NETWORK_IMAGES)), the registry of the names validation and the site pack read; fails naming
    a folder without images there, or a plugin there without a folder.
positional: _input
options:
  _input:
    description: The network role's path (C(role_path) inside the role).
    type: path
    required: true
"""

EXAMPLES = r"""
- name: The chosen plugin's CNI configuration files
  ansible.builtin.debug:
    msg: "{{ (role_path | offline_pot.tke.network_plugins)[tke_network_plugin].cni_files }}"
"""

RETURN = r"""
_value:
  description: Plugin name -> the mapping in its C(plugin.yml).
  type: dict
"""

import os

import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.offline_pot.tke.plugins.module_utils import kube_images


def network_plugins(role_path):
    folder = os.path.join(str(role_path), "plugins")
    try:
        names = sorted(n for n in os.listdir(folder) if os.path.isdir(os.path.join(folder, n)))
    except OSError as e:
        raise AnsibleFilterError(f"network plugins: cannot list {folder}: {e}") from e
    if names != sorted(kube_images.NETWORK_PLUGINS):
        raise AnsibleFilterError(
            f"network plugins: the folders in {folder} ({', '.join(names)}) are not the image table's "
            f"(kube_images.NETWORK_IMAGES: {', '.join(sorted(kube_images.NETWORK_PLUGINS))})")
    out = {}
    for name in names:
        path = os.path.join(folder, name, "plugin.yml")
        try:
            with open(path, encoding="utf-8") as f:
                out[name] = yaml.safe_load(f)
        except (OSError, yaml.YAMLError) as e:
            raise AnsibleFilterError(f"network plugin {name}: cannot read {path}: {e}") from e
    return out


class FilterModule:
    def filters(self):
        return {"network_plugins": network_plugins}

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The site pack's package folder a Debian host reads (module_utils site_pack_spec.deb_dir names the folders)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: pack_deb_dir
short_description: The site pack's package folder a Debian host reads
version_added: 0.1.0
description:
  - Takes the C(files) list of a site pack manifest and a Debian host's release and architecture,
    and returns the pack's folder of packages for the host, as the pack build names them
    (docs/site_pack.md) - its release's own (C(repo/deb-<release>/), another architecture's
    C(repo/deb-<release>-<arch>/)) where the pack has files there, else the one the other releases
    of its architecture share (C(repo/deb/), C(repo/deb-<arch>/)).
positional: release, arch
options:
  _input:
    description: The manifest's files (each with C(path)).
    type: list
    elements: dict
    required: true
  release:
    description: The host's Debian release codename (Ansible's C(distribution_release) fact).
    type: str
    required: true
  arch:
    description: The host's architecture, as C(uname -m) (Ansible's C(architecture) fact) or Debian names it.
    type: str
    default: amd64
"""

EXAMPLES = r"""
- name: This host's package folder of the pack
  ansible.builtin.set_fact:
    my_deb_dir: >-
      {{ pack.manifest.files
         | offline_pot.tke.pack_deb_dir(ansible_facts.distribution_release, ansible_facts.architecture) }}
"""

RETURN = r"""
_value:
  description: The folder, ending in C(/), e.g. C(repo/deb-trixie/) or C(repo/deb-arm64/).
  type: str
"""

from ansible_collections.offline_pot.tke.plugins.module_utils.pack_manifest import deb_arch
from ansible_collections.offline_pot.tke.plugins.module_utils.site_pack_spec import deb_dir


def pack_deb_dir(files, release, arch="amd64"):
    arch = deb_arch(arch)
    own = deb_dir({"release": release, "arch": arch})
    if any(str(f.get("path", "")).startswith(own) for f in files or []):
        return own
    return deb_dir({"arch": arch})


class FilterModule:
    def filters(self):
        return {"pack_deb_dir": pack_deb_dir}

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""A machine's architecture as Debian and the site pack name it (module_utils pack_manifest, its one home)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: deb_arch
short_description: A machine architecture as Debian and the site pack name it
version_added: 0.1.0
description:
  - Maps C(uname -m) (Ansible's C(architecture) fact) to the Debian architecture the site pack's
    binaries and package folders are for (C(x86_64) is C(amd64), C(aarch64) is C(arm64)); a name it
    does not know is returned unchanged.
options:
  _input:
    description: The machine architecture (C(uname -m)).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: This host's package folder suffix
  ansible.builtin.debug:
    msg: "{{ ansible_facts.architecture | offline_pot.tke.deb_arch }}"
"""

RETURN = r"""
_value:
  description: The Debian architecture, e.g. C(arm64).
  type: str
"""

from ansible_collections.offline_pot.tke.plugins.module_utils.pack_manifest import deb_arch


class FilterModule:
    def filters(self):
        return {"deb_arch": deb_arch}

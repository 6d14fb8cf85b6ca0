# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Changed host paths -> what must be restarted."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: pki_consumers
short_description: What uses the certificate files that changed on a host
version_added: 0.1.0
description:
  - Maps changed host paths (as returned by M(offline_pot.tke.pki_distribute)) to the components that
    read them - C(kube-apiserver), C(kube-controller-manager), C(kube-scheduler), C(etcd), C(kubelet),
    C(registry) - so only those are restarted.
positional: _input
options:
  _input:
    description: Changed host paths.
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Restart what uses the changed files
  ansible.builtin.debug:
    msg: "{{ written.changed_files | offline_pot.tke.pki_consumers }}"
"""

RETURN = r"""
_value:
  description: Sorted component names.
  type: list
  elements: str
"""

from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki import consumers


def pki_consumers(paths):
    return consumers(paths or [])


class FilterModule:
    def filters(self):
        return {"pki_consumers": pki_consumers}

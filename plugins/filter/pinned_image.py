# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The name:tag of an image the collection pins (module_utils kube_images, the pack's one home)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: pinned_image
short_description: The name and tag of an image the collection pins
version_added: 0.1.0
description:
  - Returns C(name:tag) of a network plugin's image (C(flannel), C(flannel-cni-plugin),
    C(calico-cni), C(calico-node), C(calico-kube-controllers)), or, given a Kubernetes version,
    of the image kubeadm uses for that release (C(pause), C(etcd), C(coredns), C(kube-apiserver) ...).
  - The same table decides what a site pack built with C(kubernetes.versions) and
    C(kubernetes.network_plugins) carries, so the cluster pulls exactly what the pack pushed.
  - Fails naming the image or the version when the table does not know it.
positional: version
options:
  _input:
    description: The image's name (its repository under the site registry's namespace).
    type: str
    required: true
  version:
    description: The Kubernetes version (for kubeadm's images); omit for a network image.
    type: str
"""

EXAMPLES = r"""
- name: containerd's sandbox image for the site's Kubernetes version
  ansible.builtin.debug:
    msg: "{{ tke_registry_domain }}/library/{{ 'pause' | offline_pot.tke.pinned_image(tke_k8s_version) }}"
"""

RETURN = r"""
_value:
  description: C(name:tag), e.g. C(pause:3.9) or C(flannel:v0.28.9).
  type: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.offline_pot.tke.plugins.module_utils import kube_images


def pinned_image(name, version=None):
    try:
        return kube_images.pinned(str(name), str(version) if version else None)
    except kube_images.UnsupportedVersion as e:
        raise AnsibleFilterError(str(e)) from e


class FilterModule:
    def filters(self):
        return {"pinned_image": pinned_image}

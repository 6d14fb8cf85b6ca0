# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The images a site pulls that a site pack's registry lacks."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: pack_missing_images
short_description: The images a site pulls that a site pack's registry lacks
version_added: 0.3.0
description:
  - Takes the C(contents.images) list of a site pack manifest and returns, as
    C(namespace/name:tag), every image a site of that Kubernetes version and network plugin pulls
    from its registry (kubeadm's images of the release, the network plugin's images) that the
    pack does not carry. The list comes from the same table the pack build derives its images
    from (the C(kubernetes) section of the pack spec).
  - Fails naming the version when the table does not know it.
  - Given I(arch), an image the pack carries but not for that architecture (its manifest, or
    none of the manifests its image index names, is for it) is returned as C(namespace/name:tag
    (no arch image)). A pack built before images recorded their architectures, or an image whose
    manifests name none, is taken as it is.
positional: version, network_plugin, namespace, arch
options:
  _input:
    description: The manifest's contents.images (each with C(name) and C(tag)).
    type: list
    elements: dict
    required: true
  version:
    description: The site's Kubernetes version (C(tke_k8s_version)).
    type: str
    required: true
  network_plugin:
    description: The site's network plugin (C(tke_network_plugin)); C(none) needs no image.
    type: str
    required: true
  namespace:
    description: The registry namespace the cluster pulls from (C(tke_registry_namespace)).
    type: str
    default: library
  arch:
    description:
      - A host's architecture (C(uname -m) or Debian's name) every image must serve, or a list of
        them; omitted, none is checked.
    type: raw
"""

EXAMPLES = r"""
- name: Images the pack lacks
  ansible.builtin.debug:
    msg: "{{ manifest.contents.images | offline_pot.tke.pack_missing_images(tke_k8s_version, tke_network_plugin) }}"
"""

RETURN = r"""
_value:
  description: The missing images, C(namespace/name:tag), sorted.
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.offline_pot.tke.plugins.module_utils import kube_images
from ansible_collections.offline_pot.tke.plugins.module_utils.pack_manifest import deb_arch


def pack_missing_images(images, version, network_plugin, namespace="library", arch=None):
    try:
        wanted = kube_images.site_images(str(version), str(network_plugin), str(namespace))
    except kube_images.UnsupportedVersion as e:
        raise AnsibleFilterError(str(e)) from e
    present = {f"{i['name']}:{i['tag']}": i.get("architectures") for i in images or []}
    arches = sorted({deb_arch(a) for a in ([arch] if isinstance(arch, str) else arch or []) if a})
    out = [ref for ref in wanted if ref not in present]
    for a in arches:
        out += [f"{ref} (no {a} image)" for ref in wanted if ref in present and present[ref] and a not in present[ref]]
    return out


class FilterModule:
    def filters(self):
        return {"pack_missing_images": pack_missing_images}

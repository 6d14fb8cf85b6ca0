#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Push images of the site pack into a registry the collection does not run."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: registry_push
short_description: Push images of the site pack into a registry, changed only when one was missing
version_added: 0.3.0
description:
  - Each image of I(images) is read from the pack's pre-seeded registry storage (C(registry/) of a
    verified site pack) and pushed to I(registry) through the OCI distribution API, unless the
    registry already has its tag at the same digest. Blobs the registry has are not sent again.
  - For a registry the collection does not run (the components onto an existing cluster,
    docs/components.md); the site's own registry serves the pack's storage as it is.
  - Authentication by HTTP Basic or by a Bearer token from the realm the registry names.
  - In check mode the registry is only asked which images it has.
requirements:
  - Python 3 where it runs, with network access to the target registry (the controller in decoupled mode)
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_HOST
attributes:
  diff_mode:
    support: none
options:
  pack_dir:
    description: The verified site pack's directory (its C(manifest.json) lists the images with their digests).
    type: path
    required: true
  images:
    description: Images of the pack to push, as C(repository:tag) (C(library/sample-redis:7.2)).
    type: list
    elements: str
    required: true
  registry:
    description: Where to push, C(host[:port]) (HTTPS).
    type: str
    required: true
  namespace:
    description: When set, an image C(a/b/name:tag) is pushed as C(<namespace>/name:tag); otherwise under its own name.
    type: str
    default: ""
  ca_path:
    description: CA certificate file that verifies the registry's certificate (empty - the system's).
    type: path
  validate_certs:
    description: Verify the registry's certificate.
    type: bool
    default: true
  username:
    description: Registry user (empty - anonymous).
    type: str
    default: ""
  password:
    description: The user's password.
    type: str
    default: ""
"""

EXAMPLES = r"""
- name: The components' images into the site's registry
  offline_pot.tke.registry_push:
    pack_dir: "{{ pack.pack_dir }}"
    images: [library/sample-redis:7.2]
    registry: registry.example.com:5000
    ca_path: /etc/ssl/registry-ca.crt
    username: admin
    password: "{{ registry_password }}"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
results:
  description: Each image with its target and what happened (pushed or present; in check mode, what would).
  returned: always
  type: list
  elements: dict
  sample: [{image: library/sample-redis:7.2, target: registry.example.com:5000/shop/sample-redis:7.2, action: pushed}]
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.offline_pot.tke.plugins.module_utils import pack_manifest as pm
from ansible_collections.offline_pot.tke.plugins.module_utils import registry_push as rp


def main():
    module = AnsibleModule(argument_spec=dict(
        pack_dir=dict(type="path", required=True),
        images=dict(type="list", elements="str", required=True),
        registry=dict(type="str", required=True),
        namespace=dict(type="str", default=""),
        ca_path=dict(type="path"),
        validate_certs=dict(type="bool", default=True),
        username=dict(type="str", default=""),
        password=dict(type="str", default="", no_log=True),
    ), supports_check_mode=True)
    p = module.params
    try:
        with open(os.path.join(p["pack_dir"], pm.MANIFEST_NAME)) as f:
            listed = {f"{i['name']}:{i['tag']}": i["digest"] for i in json.load(f)["contents"].get("images", [])}
    except (OSError, ValueError, KeyError) as e:
        module.fail_json(msg=f"{p['pack_dir']}: no readable pack manifest ({e})")
    missing = [i for i in p["images"] if i not in listed]
    if missing:
        module.fail_json(msg=f"not images of the site pack: {', '.join(missing)}")
    registry = rp.Registry("https://" + p["registry"], p["username"], p["password"], p["ca_path"],
                           p["validate_certs"])
    root = os.path.join(p["pack_dir"], "registry")
    results = []
    for image in p["images"]:
        repo, dummy, tag = image.rpartition(":")
        target = rp.target_repo(repo, p["namespace"])
        try:
            action = rp.push(registry, root, listed[image], target, tag, module.check_mode)
        except rp.PushError as e:
            module.fail_json(msg=f"{image} -> {p['registry']}/{target}:{tag}: {e}", results=results)
        results.append({"image": image, "target": f"{p['registry']}/{target}:{tag}", "action": action})
    module.exit_json(changed=any(r["action"] == "pushed" for r in results), results=results)


if __name__ == "__main__":
    main()

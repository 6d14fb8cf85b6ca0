#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Build an offline site pack from a pack spec."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: site_pack
short_description: Build an offline site pack (packages, binaries, pre-seeded registry, charts, controller files)
version_added: 0.1.0
description:
  - Builds, on the machine it runs on (normally the connected build machine, C(localhost)), the
    pack a spec describes into O(output_dir)/<name>-<version>/ with C(manifest.json), an apt
    repository under C(repo/deb/) (one more per Debian release and architecture the spec's
    C(os_packages.deb) items name, C(repo/deb-<release>/) or C(repo/deb[-<release>]-<arch>/);
    C(repo/rpm/) when C(createrepo_c) is there), C(bin/) (another architecture's C(bin-<arch>/)),
    a pre-seeded distribution registry storage under C(registry/), C(charts/), C(wheels/) and
    C(collections/), then one archive of it (zstd where the C(zstd) command exists).
  - Every URL or file is checked against its sha256; a failed download or a mismatch stops the
    build naming the item. A re-build with nothing changed changes nothing (changed=false).
  - The spec format is documented in docs/site_pack.md and in the module_utils site_pack_spec.
requirements:
  - tar; zstd for .tar.zst archives (else gzip)
  - apt-get, dpkg-deb and apt-ftparchive for Debian packages; createrepo_c (or createrepo) for RPMs
  - pip (python3 -m pip) for controller.requirements; ansible-galaxy for controller.collection
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_NO_DIFF
attributes:
  check_mode:
    support: partial
    details: In check mode the spec is validated and nothing is fetched or written; changed
      tells whether the pack has not been built yet.
options:
  spec:
    description: The pack spec as a mapping (see docs/site_pack.md).
    type: dict
    required: true
  output_dir:
    description: Directory receiving the staging directory <name>-<version>/ and the archive.
    type: path
    required: true
  cache_dir:
    description: Download cache (by sha256), reused by later builds.
    type: path
    required: true
  archive:
    description: Whether to make the archive of the staging directory.
    type: bool
    default: true
  compression:
    description: Archive compression; auto is zstd when the zstd command exists, else gzip.
    type: str
    choices: [auto, zstd, gzip, none]
    default: auto
  signing_key:
    description:
      - The site owner's Ed25519 private key (PEM, unencrypted; C(openssl genpkey -algorithm ed25519)).
        The build signs C(manifest.json) with it into C(manifest.json.sig), which
        M(offline_pot.tke.site_pack_verify) checks against the inventory's C(tke_site_pack_pubkey)
        before anything else. Without it the pack is unsigned, and a site refuses it unless
        C(tke_site_pack_allow_unsigned) is true.
    type: path
"""

EXAMPLES = r"""
- name: Build the site pack
  offline_pot.tke.site_pack:
    spec: "{{ lookup('ansible.builtin.file', 'pack.yml') | from_yaml }}"
    output_dir: /srv/packs
    cache_dir: /srv/packs/.cache
"""

RETURN = r"""
pack_dir:
  description: The staging directory (an unpacked pack).
  returned: success
  type: str
archive:
  description: The archive; null when O(archive) is false.
  returned: success
  type: str
contents:
  description: The manifest's contents section (versions of everything inside, registry statistics).
  returned: success
  type: dict
files:
  description: Number of files in the manifest.
  returned: success
  type: int
bytes:
  description: Total size of the files in the manifest.
  returned: success
  type: int
changes:
  description: What this build wrote or removed.
  returned: success
  type: list
  elements: str
"""

import os
import shutil

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.offline_pot.tke.plugins.module_utils import pack_signature, site_pack_build, site_pack_spec


def main():
    module = AnsibleModule(
        argument_spec=dict(
            spec=dict(type="dict", required=True),
            output_dir=dict(type="path", required=True),
            cache_dir=dict(type="path", required=True),
            archive=dict(type="bool", default=True),
            compression=dict(type="str", choices=["auto", "zstd", "gzip", "none"], default="auto"),
            signing_key=dict(type="path"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    errors = site_pack_spec.validate(p["spec"])
    if errors:
        module.fail_json(msg="the pack spec has errors: " + "; ".join(errors), errors=errors)
    stage = os.path.join(p["output_dir"], f"{p['spec']['name']}-{p['spec']['version']}")
    if module.check_mode:
        module.exit_json(changed=not os.path.exists(os.path.join(stage, "manifest.json")), pack_dir=stage)

    def run(argv, cwd):
        return module.run_command(argv, cwd=cwd)

    os.makedirs(p["output_dir"], exist_ok=True)
    if p["signing_key"] and not os.path.isfile(p["signing_key"]):
        module.fail_json(msg=f"signing_key: {p['signing_key']} is not a file")

    def sign(stage):
        return pack_signature.sign_pack(stage, p["signing_key"])

    builder = site_pack_build.Builder(p["spec"], p["output_dir"], p["cache_dir"], run,
                                      shutil.which, p["compression"], p["archive"],
                                      sign=sign if p["signing_key"] else None)
    try:
        result = builder.build()
    except (site_pack_build.BuildError, pack_signature.SignatureError) as e:
        module.fail_json(msg=str(e))
    module.exit_json(**result)


if __name__ == "__main__":
    main()

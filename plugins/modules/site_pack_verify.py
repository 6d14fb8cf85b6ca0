#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Check an offline site pack against its manifest before anything is installed."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: site_pack_verify
short_description: Check every file of an offline site pack against its manifest
version_added: 0.1.0
description:
  - Takes a pack as an archive (unpacked once into O(unpack_dir)) or as an unpacked directory.
    Before anything else it checks the signature C(manifest.json.sig) of C(manifest.json) against
    O(pubkey) (Ed25519) - an unsigned pack, or one without a public key to check it against, is
    refused unless O(allow_unsigned); a signature that does not match is always refused. Then it
    checks every file C(manifest.json) lists (size, then sha256).
  - Fails listing every missing, truncated or altered file by its path; the offline phase runs it
    on the controller before any host is touched.
  - Returns the manifest, which the offline phase uses to decide what each host receives.
requirements:
  - tar; zstd to unpack a .tar.zst archive
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_NO_DIFF
attributes:
  check_mode:
    details: An archive not yet unpacked is unpacked in check mode too (on the controller only),
      since nothing can be verified otherwise.
options:
  pack:
    description: The pack archive (.tar.zst, .tar.gz, .tar) or an unpacked pack directory.
    type: path
    required: true
  unpack_dir:
    description: Where an archive is unpacked (a directory <name>-<version>/ appears in it).
    type: path
    required: true
  pubkey:
    description: The site owner's Ed25519 public key (PEM; the inventory's C(tke_site_pack_pubkey)).
    type: str
    default: ""
  allow_unsigned:
    description:
      - Let an unsigned pack (or any pack, when O(pubkey) is empty) through, with a warning
        (C(tke_site_pack_allow_unsigned)). A pack whose signature does not match is refused anyway.
    type: bool
    default: false
  signature_only:
    description:
      - Check the signature only, not the files (install's validate phase, where a pack re-signed
        with another key, or unsigned, is refused before any host is contacted; the offline phase
        then checks every file). Returns no manifest.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Verify the pack
  offline_pot.tke.site_pack_verify:
    pack: /media/usb/tke-site-2026.11.1.tar.zst
    unpack_dir: /srv/site/.tke/pack
  delegate_to: localhost
  run_once: true
  register: pack
"""

RETURN = r"""
signature:
  description: C(signed), or why the pack is unverified when O(allow_unsigned) let it through.
  returned: success
  type: str
pack_dir:
  description: The unpacked pack that was verified.
  returned: always
  type: str
manifest:
  description: The pack's manifest (format_version, name, version, contents, files).
  returned: success
  type: dict
problems:
  description: One line per bad file.
  returned: failure
  type: list
  elements: str
"""

import json
import os
import shutil

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.offline_pot.tke.plugins.module_utils import pack_manifest as pm
from ansible_collections.offline_pot.tke.plugins.module_utils.atomic_file import write_file
from ansible_collections.offline_pot.tke.plugins.module_utils import pack_signature


def unpack(module, archive: str, unpack_dir: str) -> tuple[str, bool]:
    """Unpack archive into unpack_dir unless the stamp says this very archive is there."""
    st = os.stat(archive)
    stamp_value = f"{os.path.abspath(archive)} {st.st_size} {st.st_mtime_ns}\n"
    stamp = os.path.join(unpack_dir, ".unpacked-from")
    try:
        with open(stamp) as f:
            if f.read() == stamp_value:
                with open(os.path.join(unpack_dir, ".pack-dir")) as g:
                    return g.read().strip(), False
    except OSError:
        pass
    tmp = unpack_dir + ".part"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    argv = ["tar", "-C", tmp, "-xf", archive]
    if archive.endswith(".zst"):
        argv = ["tar", "-C", tmp, "-I", "zstd", "-xf", archive]
    rc, out, err = module.run_command(argv)
    if rc != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        module.fail_json(msg=f"{archive}: cannot unpack: {err.strip()}", pack_dir="")
    tops = [d for d in os.listdir(tmp) if os.path.isdir(os.path.join(tmp, d))]
    if len(tops) != 1:
        shutil.rmtree(tmp, ignore_errors=True)
        module.fail_json(msg=f"{archive}: expected one top directory, found {tops}", pack_dir="")
    shutil.rmtree(unpack_dir, ignore_errors=True)
    os.replace(tmp, unpack_dir)
    pack_dir = os.path.join(unpack_dir, tops[0])
    write_file(os.path.join(unpack_dir, ".pack-dir"), pack_dir + "\n")
    write_file(stamp, stamp_value)
    return pack_dir, True


def main():
    module = AnsibleModule(
        argument_spec=dict(pack=dict(type="path", required=True), unpack_dir=dict(type="path", required=True),
                           pubkey=dict(type="str", default=""), allow_unsigned=dict(type="bool", default=False),
                           signature_only=dict(type="bool", default=False)),
        supports_check_mode=True,
    )
    pack = module.params["pack"]
    if not os.path.exists(pack):
        module.fail_json(msg=f"the site pack {pack} does not exist", pack_dir="")
    changed = False
    pack_dir = pack
    if os.path.isfile(pack):
        pack_dir, changed = unpack(module, pack, module.params["unpack_dir"])
    try:
        signature = pack_signature.check_pack(pack_dir, module.params["pubkey"], module.params["allow_unsigned"])
    except FileNotFoundError as e:
        module.fail_json(msg=f"the site pack {pack_dir}: {e.filename} is missing", pack_dir=pack_dir)
    except pack_signature.SignatureError as e:
        module.fail_json(msg=f"the site pack {pack_dir} is refused: {e}", pack_dir=pack_dir, signature="refused")
    if module.params["signature_only"]:
        module.exit_json(changed=changed, pack_dir=pack_dir, signature=signature)
    if signature != "signed":
        module.warn(f"installing an unverified site pack: {signature} (tke_site_pack_allow_unsigned is true)")
    try:
        with open(os.path.join(pack_dir, pm.MANIFEST_NAME)) as f:
            manifest = json.load(f)
    except FileNotFoundError:
        module.fail_json(msg=f"{pm.MANIFEST_NAME}: missing from the pack {pack_dir}", pack_dir=pack_dir)
    except ValueError as e:
        module.fail_json(msg=f"{pm.MANIFEST_NAME}: not valid JSON ({e})", pack_dir=pack_dir)
    errors = pm.check_manifest(manifest)
    if errors:
        module.fail_json(msg=f"{pm.MANIFEST_NAME}: " + "; ".join(errors), pack_dir=pack_dir)
    lines = pm.problem_lines(pm.verify_tree(pack_dir, manifest))
    if lines:
        module.fail_json(msg=f"the site pack {pack_dir} does not match its manifest: " + "; ".join(lines),
                         problems=lines, pack_dir=pack_dir)
    # unpacking on the controller is bookkeeping, not a change to any host
    module.exit_json(changed=changed, pack_dir=pack_dir, manifest=manifest, signature=signature)


if __name__ == "__main__":
    main()

#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Check an offline site pack against its manifest before anything is installed (documentation: the
action plugin plugins/action/site_pack_verify.py does the work on the controller, plugin_utils/pack_verify)."""
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
    checks every file C(manifest.json) lists (size, then sha256). In the copy unpacked from an
    archive, a file this check read before whose size, modification and change times, inode and
    device are the same is not read again - its digest from then is used (kept in O(unpack_dir),
    C(.verified-digests.json), mode 0600, trusted only while this user alone can write it and its
    directory; a file changed in the two seconds before it was read is read again). A pack given
    as a directory is read whole every time. Removing that file makes the next check read every
    file.
  - Fails listing every missing, truncated or altered file by its path; the offline phase runs it
    on the controller before any host is touched.
  - Returns the manifest, which the offline phase uses to decide what each host receives.
  - Runs on the controller, in Ansible's own process (an action plugin), whatever host the task
    names; no module is shipped and no interpreter started.
requirements:
  - tar; zstd to unpack a .tar.zst archive
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_NO_DIFF
  - offline_pot.tke.attributes.ACTION
attributes:
  check_mode:
    details: An archive not yet unpacked is unpacked in check mode too (on the controller only),
      since nothing can be verified otherwise; the digests it read are not kept.
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

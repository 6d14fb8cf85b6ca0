#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Documentation of the pki_distribute action plugin (plugins/action/pki_distribute.py)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pki_distribute
short_description: Copy a host's certificates, keys and kubeconfigs from the controller's PKI directory
version_added: 0.1.0
description:
  - Reads the listed files from the PKI directory on the controller and writes them on the host with
    M(offline_pot.tke.pki_files) in one round trip; reports changed only for files whose bytes or
    mode differ. Contents are never logged.
  - The file list usually comes from the RV(offline_pot.tke.k8s_pki#module:host_files) return value
    of M(offline_pot.tke.k8s_pki).
  - In check mode a source file that does not exist yet (the authority would issue it) counts as a change.
requirements:
  - Runs on the controller (an action plugin) with cryptography; the hosts need only Python 3
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_HOST
  - offline_pot.tke.attributes.ACTION
attributes:
  diff_mode:
    details: Names the files that change with SHA-256 prefixes, never their content.
options:
  pki_dir:
    description: The PKI directory on the controller.
    type: path
    required: true
  files:
    description: The files, each C({src, dest, mode}); C(src) is relative to O(pki_dir).
    type: list
    elements: dict
    required: true
    suboptions:
      src:
        description: Path relative to O(pki_dir).
        type: str
        required: true
      dest:
        description: Path on the host.
        type: str
        required: true
      mode:
        description: File mode on the host (octal string).
        type: str
        required: true
  pending_digests:
    description:
      - Sources (relative to O(pki_dir)) the authority would rewrite, with the sha256 (hex) of their new bytes, usually the
        RV(offline_pot.tke.k8s_pki#module:check_digests) of a check-mode run (the store keeps its old copies then). In check
        mode a destination counts as a change unless the host's file already has those bytes and the mode (a kubeconfig
        re-rendered with the address the host has, for example). Ignored outside check mode.
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Write what this host needs
  offline_pot.tke.pki_distribute:
    pki_dir: "{{ pki.pki_dir }}"
    files: "{{ pki.host_files[inventory_hostname] }}"
"""

RETURN = r"""
changed_files:
  description: Host paths written (or that would be written in check mode).
  returned: always
  type: list
  elements: str
files:
  description: Every managed path with its state before this run (absent, differs, mode, same, pending).
  returned: always
  type: dict
replaced:
  description:
    - "One line per file written over what the host had, C(host: path: replaced - why): missing,
      only the mode, signed by another CA than the store's, another key pair (key mismatch),
      expired or expiring sooner than the store's copy, missing SANs - decided on the controller
      from the certificate the host held (never a key). Empty for a host that had none of its files."
  returned: always
  type: list
  elements: str
"""

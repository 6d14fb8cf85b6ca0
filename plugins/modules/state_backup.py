#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Documentation of the state_backup action plugin (plugins/action/state_backup.py), which does the work
on the controller; there is no module code to run on a host."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: state_backup
short_description: Save a site's controller state, encrypted with the vault password
version_added: 0.1.0
description:
  - Packs the site's state directory (C(tke_state_dir) - the PKI store with the CA keys, C(site.json),
    the journal, C(tke.json)) into a gzip tar and encrypts it with this run's vault password
    (C(--vault-password-file) or C(--vault-id)) in Ansible Vault's format, so that it can be carried
    off the controller. Written 0600 as C(<dest>/tke-state-<site id>-<UTC time>.tar.gz.vault).
  - Restore with C(ansible-vault decrypt --output - <file> | tar -xz -C <inventory folder>).
  - Fails without a vault password. Nothing secret is shown. In check mode nothing is written.
requirements:
  - Runs on the controller (an action plugin)
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_NO_DIFF
  - offline_pot.tke.attributes.ACTION
attributes:
  idempotent:
    support: none
    details: Every run writes a new backup file.
options:
  state_dir:
    description: The site's state directory. Defaults to C(tke_state_dir).
    type: path
  dest:
    description: Directory the backup is written to (made 0700 when missing).
    type: path
    required: true
  exclude:
    description: Names directly in I(state_dir) left out (the run lock; bulky copies made again from
      elsewhere - the unpacked site pack, etcd snapshots, which are backups of their own).
    type: list
    elements: str
    default: [run.lock, pack, etcd-backups]
"""

EXAMPLES = r"""
- name: Save the site's state
  offline_pot.tke.state_backup:
    dest: /mnt/offsite
  run_once: true
  delegate_to: localhost
"""

RETURN = r"""
path:
  description: The backup written (or that would be written in check mode).
  returned: always
  type: str
files:
  description: The files it holds, relative to the state directory's parent.
  returned: always
  type: list
  elements: str
"""

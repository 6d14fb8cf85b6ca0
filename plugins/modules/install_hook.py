#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Documentation of the install_hook action plugin (plugins/action/install_hook.py), which does the work
on the controller; there is no module code to run on a host."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: install_hook
short_description: Run a user hook playbook (pre-install, post-cluster-ready, post-install, <phase>/before|after)
version_added: 0.1.0
description:
  - Looks for C(<hooks_dir>/<name>.yml) on the controller. When it is missing the task is skipped. When
    it exists, it is run with C(ansible-playbook) on the controller with the same inventory sources,
    extra variables, vault password files, limit and connection options as the running install, and a
    failing hook fails this task (and so stops the install there), showing the tail of its output.
  - The three install hooks (pre-install, post-cluster-ready, post-install) are journalled like phases
    when I(journal=true); a hook done with the same file content is not run again on a resumed install.
  - Runs on the controller only (C(run_once), delegated to C(localhost)). In check mode the hook runs
    with C(--check).
requirements:
  - Runs on the controller (an action plugin), with the running Ansible's ansible-playbook for the hook playbook
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_NO_DIFF
  - offline_pot.tke.attributes.ACTION
attributes:
  idempotent:
    support: none
    details: Whatever the user's hook does.
options:
  name:
    description: Hook name, for example C(pre-install) or C(host_init/before).
    type: str
    required: true
  hooks_dir:
    description: Directory of the hooks. Defaults to C(tke_hooks_dir).
    type: path
  journal:
    description: Journal the hook (install hooks); a done, unchanged hook is not run again unless forced.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Hook post-cluster-ready
  offline_pot.tke.install_hook:
    name: post-cluster-ready
    journal: true
  run_once: true
  delegate_to: localhost
"""

RETURN = r"""
hook:
  description: Path of the hook playbook that ran (absent when none exists).
  returned: when the hook exists
  type: str
rc:
  description: Exit code of the hook's ansible-playbook.
  returned: when the hook ran
  type: int
stdout_lines:
  description: The last lines of the hook's output.
  returned: when the hook ran
  type: list
  elements: str
"""

#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""One user of a bcrypt htpasswd file (the distribution registry's htpasswd auth)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: registry_htpasswd
short_description: Keep a user's bcrypt entry in an htpasswd file
version_added: 0.1.0
description:
  - Makes O(path) hold an entry for O(user) whose bcrypt hash matches O(password); an entry that
    already matches is left alone, so the file changes only when the password does.
  - Hashes with the C(bcrypt) Python module (no htpasswd command is needed; Python's crypt module,
    gone from Python 3.13, is not used). The registry phase installs it as an OS package from the
    site pack (C(python3-bcrypt)).
requirements:
  - bcrypt (Python module on the host; Debian/Ubuntu and RHEL package python3-bcrypt)
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_HOST
attributes:
  check_mode:
    details: Writes nothing. Without the bcrypt module (check mode before the registry phase
      installed it), a user not in the file yet is reported as would be added; an existing entry
      cannot be checked and fails.
  diff_mode:
    details: The diff names the users, never a hash.
options:
  path:
    description: The htpasswd file.
    type: path
    required: true
  user:
    description: User name.
    type: str
    required: true
  password:
    description: The user's password.
    type: str
    required: true
  mode:
    description: File mode.
    type: str
    default: "0640"
  group:
    description: Group owning the file.
    type: str
"""

EXAMPLES = r"""
- name: Registry user
  offline_pot.tke.registry_htpasswd:
    path: /etc/tke-registry/htpasswd
    user: admin
    password: "{{ registry_password }}"
"""

RETURN = r"""
users:
  description: The users in the file.
  returned: always
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.offline_pot.tke.plugins.module_utils.atomic_file import write_file
from ansible_collections.offline_pot.tke.plugins.module_utils import htpasswd


def _placeholder_hash(password):  # pylint: disable=unused-argument
    """In check mode without bcrypt: what a new entry would hold, never a hash of the password."""
    return "(a bcrypt hash)"


def main():
    module = AnsibleModule(
        argument_spec=dict(path=dict(type="path", required=True), user=dict(type="str", required=True),
                           password=dict(type="str", required=True, no_log=True),
                           mode=dict(type="str", default="0640"), group=dict(type="str")),
        supports_check_mode=True,
    )
    p = module.params
    try:
        with open(p["path"]) as f:
            current = htpasswd.parse(f.read())
    except FileNotFoundError:
        current = {}
    try:
        check, make_hash = htpasswd.bcrypt_backend()
    except RuntimeError as e:
        # check mode before the registry phase installed bcrypt: a user not in the file yet would be
        # added (no hash needed to say so); an existing entry cannot be checked without it
        if not module.check_mode or p["user"] in current:
            module.fail_json(msg=str(e))
        check, make_hash = None, _placeholder_hash
    users, changed = htpasswd.desired(current, p["user"], p["password"], check, make_hash)
    diff = {"before": "".join(f"{u}\n" for u in sorted(current)),
            "after": "".join(f"{u}{' (new password)' if changed and u == p['user'] else ''}\n" for u in sorted(users))}
    if changed and not module.check_mode:
        write_file(p["path"], htpasswd.render(users), 0o600)
    file_args = module.load_file_common_arguments(dict(path=p["path"], mode=p["mode"], group=p["group"]))
    if os.path.exists(p["path"]):
        changed = module.set_fs_attributes_if_different(file_args, changed)
    module.exit_json(changed=changed, users=sorted(users), diff=diff)


if __name__ == "__main__":
    main()

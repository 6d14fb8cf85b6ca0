#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Write a set of certificate, key and kubeconfig files on a host in one call."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pki_files
short_description: Write certificates, keys and kubeconfigs on a host, only where the bytes differ
version_added: 0.1.0
description:
  - Writes every given file whose content or mode differs from what is on the host, atomically
    (temporary file and rename in the same directory), owned by the connecting user (root).
    Missing parent directories are created 0755.
  - Contents are never logged or returned. Usually called by M(offline_pot.tke.pki_distribute),
    which reads the contents from the controller's PKI directory.
requirements:
  - Python 3 on the host
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_HOST
attributes:
  diff_mode:
    details: The diff names the files that change and their SHA-256 prefixes, never their content.
options:
  files:
    description: The files to write (paths and modes; their contents are in I(contents)).
    type: list
    elements: dict
    required: true
    suboptions:
      path:
        description: Absolute path on the host.
        type: path
        required: true
      mode:
        description: File mode, for example C("0600").
        type: str
        required: true
  contents:
    description:
      - The content of each file of I(files), by path. The whole option is C(no_log), so the
        invocation Ansible logs to the host's journal shows no key. (A C(no_log) sub-option inside
        a list is not enough - Ansible logs the list as one string whose escaped newlines no longer
        match the secret - and C(no_log) on I(files) would mask the paths in the result as well.)
    type: dict
    required: true
  digests:
    description:
      - Check mode only - files of I(files) whose new content is known by its sha256 (hex) alone (the controller's
        store does not have the new bytes yet), by path; such a file is the same when the host's bytes have that
        digest and the mode is right. Outside check mode every file needs its content.
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Install a CA certificate
  offline_pot.tke.pki_files:
    files:
      - path: /etc/tke/pki/ca.crt
        mode: "0644"
    contents:
      /etc/tke/pki/ca.crt: "{{ lookup('ansible.builtin.file', 'pki/ca.crt') }}\n"
"""

RETURN = r"""
changed_files:
  description: Paths written (or that would be written in check mode).
  returned: always
  type: list
  elements: str
files:
  description: Every managed path with its state before this run (absent, differs, mode, same).
  returned: always
  type: dict
previous:
  description:
    - What each path written (or that would be written) held before - C(state), C(mode) (octal,
      or null when absent) and C(certificate) (the PEM of the certificate it held, a kubeconfig's
      client certificate, or null - a key is never read out). M(offline_pot.tke.pki_distribute)
      says from it why each file is replaced, and drops it from its result.
  returned: always
  type: dict
"""

import hashlib
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.offline_pot.tke.plugins.module_utils.atomic_file import write_file
from ansible_collections.offline_pot.tke.plugins.module_utils.pki_pem import first_certificate


def state_of(path, data, mode, sha256=None):
    """(absent | differs | mode | same, the old bytes, the old mode); sha256: the new bytes known by digest only."""
    try:
        st = os.stat(path)
        with open(path, "rb") as fh:
            old = fh.read()
    except FileNotFoundError:
        return "absent", None, None
    old_mode = st.st_mode & 0o7777
    if (hashlib.sha256(old).hexdigest() != sha256) if sha256 else (old != data):
        return "differs", old, old_mode
    if old_mode != mode:
        return "mode", old, old_mode
    return "same", old, old_mode


def previous_of(path, state, old, old_mode):
    """What a replaced file held: its state, mode and certificate (public), never a key."""
    cert = None
    if old is not None:
        cert = first_certificate(old.decode("utf-8", "replace"), kubeconfig=path.endswith(".conf"))
    return {"state": state, "mode": None if old_mode is None else format(old_mode, "04o"), "certificate": cert}


def write(path, data, mode):
    write_file(path, data, mode, dir_mode=0o755)


def digest(data):
    return "absent" if data is None else "sha256:" + hashlib.sha256(data).hexdigest()[:16]


def main():
    module = AnsibleModule(
        argument_spec=dict(
            files=dict(type="list", elements="dict", required=True, options=dict(
                path=dict(type="path", required=True),
                mode=dict(type="str", required=True))),
            contents=dict(type="dict", required=True, no_log=True),
            digests=dict(type="dict", default={})),
        supports_check_mode=True,
    )
    digests = module.params["digests"]
    if digests and not module.check_mode:
        module.fail_json(msg="digests: only in check mode (a file is written from its content)")
    states, changed, before, after, previous = {}, [], [], [], {}
    for f in module.params["files"]:
        path = f["path"]
        if not os.path.isabs(path):
            module.fail_json(msg=f"{path}: path must be absolute")
        try:
            mode = int(f["mode"], 8)
        except ValueError:
            module.fail_json(msg=f"{path}: mode {f['mode']!r} is not an octal mode")
        sha256 = digests.get(path)
        if not sha256 and not isinstance(module.params["contents"].get(path), str):
            module.fail_json(msg=f"{path}: no content in contents")
        data = None if sha256 else module.params["contents"][path].encode()
        state, old, old_mode = state_of(path, data, mode, sha256)
        states[path] = state
        if state == "same":
            continue
        changed.append(path)
        previous[path] = previous_of(path, state, old, old_mode)
        before.append(f"{path} {digest(old)}\n")
        after.append(f"{path} {'sha256:' + sha256[:16] if sha256 else digest(data)} mode {f['mode']}\n")
        if not module.check_mode:
            try:
                write(path, data, mode)
            except OSError as e:
                module.fail_json(msg=f"{path}: {e}", changed_files=changed[:-1])
    result = dict(changed=bool(changed), changed_files=changed, files=states, previous=previous)
    if module._diff:
        result["diff"] = {"before": "".join(before), "after": "".join(after)}
    module.exit_json(**result)


if __name__ == "__main__":
    main()

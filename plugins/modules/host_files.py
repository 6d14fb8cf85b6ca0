#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""A host's files and directories made exactly as given, in one call (one round trip for a role's files)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: host_files
short_description: Make several files and directories on a host exactly as given, in one call
version_added: 0.4.0
description:
  - Makes each entry of O(files), in order, what it says - a file holding exactly its O(files[].content)
    (usually C(lookup('ansible.builtin.template', ...)) or C(lookup('ansible.builtin.file', ...))
    rendered on the controller) or a directory - with its mode, owner and group; then removes each
    path of O(absent). One module call for what would otherwise be one task, and one round trip,
    per file.
  - A file is written atomically (the collection's one file writer, module_utils/atomic_file, with a
    temporary file beside the target, its mode set before it is renamed over the target); one that
    already holds the content is not touched. Its directory must exist (listed before it, as a
    directory, or there already, in check mode too); a dangling link there is replaced by the file, a
    link to a file is read and, when the content differs, replaced. A directory is made with its
    missing parents (as the file module does), and may be a link to one, whose attributes are then
    set (as the file module's C(follow)).
  - A file that holds a secret takes its content from O(secret_contents) (a no_log option, by path),
    not O(files[].content), so neither its content nor the secret reaches the host's journal (module
    invocations are logged there) nor C(-v) output; it is made C(0600) unless its entry says
    otherwise. Every value of O(secrets), and what the first group of each of the entry's
    O(files[].mask) patterns matches (the previous value of a secret, on the host before a change),
    reads C(********) in the diff and in failure messages; a change of a secret alone shows as a
    changed file whose masked diff has no changed line.
  - The diff (C(--diff)) has an entry per file whose text changes and per entry whose kind
    (file, directory, absent) or attributes change.
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_HOST
attributes:
  check_mode:
    details: Writes nothing; reports what would change, with the diff.
  diff_mode:
    details: An entry per file whose text changes (before and after), and per entry whose kind or
      attributes change.
options:
  files:
    description: The entries, made in this order (a directory before the files in it).
    type: list
    elements: dict
    required: true
    suboptions:
      path:
        description: The file or directory.
        type: path
        required: true
      state:
        description: C(file) holds O(files[].content); C(directory) is a directory.
        type: str
        choices: [file, directory]
        default: file
      content:
        description: The whole text of the file (for C(state=file), unless the file's content is in
          O(secret_contents)).
        type: str
      mode:
        description: Its mode, octal as a string (C("0644")); without it a new file gets C(0644),
          a new directory C(0755), and an existing one keeps its mode - but a file whose content is
          in O(secret_contents) is made C(0600), new or not.
        type: str
      owner:
        description: Its owner; without it a new entry is root's (the module runs as root) and an
          existing one keeps its owner (a file rewritten too).
        type: str
      group:
        description: Its group (as O(files[].owner)).
        type: str
      mask:
        description: Python regular expressions (multiline); what the first group of each match
          holds, in the file's text before and after, is masked in the diff.
        type: list
        elements: str
        default: []
      validate:
        description: A command that checks the new file before it replaces the old one; C(%s) is the
          temporary file's path. A non-zero exit fails the task and leaves the file untouched. Not
          run in check mode, nor when the file holds its content already.
        type: str
  secret_contents:
    description:
      - The content of each file of O(files) that holds a secret, by path. The whole option is
        C(no_log) (a C(no_log) sub-option of O(files) is not enough - Ansible logs a list as one
        string whose escaped newlines and quotes no longer match the secret - and C(no_log) on
        O(files) would mask every path and mode in the result as well).
    type: dict
    default: {}
  secrets:
    description: Values masked wherever they appear in the diffs and messages.
    type: list
    elements: str
    default: []
  absent:
    description: Paths where nothing may be, removed after O(files) are made (a directory with what
      it holds; a link, not what it points to).
    type: list
    elements: path
    default: []
"""

EXAMPLES = r"""
- name: Containerd's registry configuration and crictl's
  offline_pot.tke.host_files:
    files:
      - {path: /etc/containerd/certs.d/registry.tke.local, state: directory, mode: "0755"}
      - path: /etc/containerd/certs.d/registry.tke.local/hosts.toml
        content: "{{ lookup('ansible.builtin.template', 'hosts.toml.j2') }}"
        mode: "0644"
      - {path: /etc/crictl.yaml, content: "runtime-endpoint: unix:///run/containerd/containerd.sock\n", mode: "0644"}
    absent: [/etc/cni/net.d/10-calico.conflist]

- name: Containerd's configuration (holding the registry's password) and its unit
  offline_pot.tke.host_files:
    files:
      - {path: /etc/containerd/config.toml, mode: "0600", mask: ['^\s*password\s*=\s*"(.*)"\s*$']}
      - path: /etc/systemd/system/containerd.service
        content: "{{ lookup('ansible.builtin.template', 'containerd.service.j2') }}"
    secret_contents:
      /etc/containerd/config.toml: "{{ lookup('ansible.builtin.template', 'config.toml.j2') }}"
    secrets: ["{{ container_runtime_registry_password }}"]
"""

RETURN = r"""
changed_files:
  description: The paths of O(files) and O(absent) that changed (or would, in check mode), in that order.
  returned: always
  type: list
  elements: str
"""

import os
import re
import shutil

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.validation import check_type_path

from ansible_collections.offline_pot.tke.plugins.module_utils.atomic_file import (
    OCTAL_MODE, atomic_path, make_dirs, mask_secrets)

DEFAULT_MODE = {"file": "0644", "directory": "0755", "secret": "0600"}


def kind(path):
    """directory (a link to one too: the file module's follow), file (a link to one too), link (a
    dangling one), absent."""
    if os.path.isdir(path):
        return "directory"
    if os.path.exists(path):
        return "file"
    return "link" if os.path.islink(path) else "absent"


def text(data):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return f"({len(data)} bytes, not text)\n"


def remove(module, path):
    """Nothing at path (a link is removed, not what it points to); (changed, its diffs)."""
    now = "link" if os.path.islink(path) else kind(path)
    if now == "absent":
        return False, []
    if not module.check_mode:
        if now == "directory":
            shutil.rmtree(path)
        else:
            os.unlink(path)
    return True, [{"before_header": path, "after_header": path,
                   "before": {"path": path, "state": now}, "after": {"path": path, "state": "absent"}}]


def masked(module, entry, before, after):
    """The diff of a file's text, every secret masked (the call's secrets, the entry's patterns)."""
    path, secrets, patterns = entry["path"], module.params["secrets"], entry["mask"]
    masked_before, n_before = mask_secrets(before or "", secrets, patterns)
    masked_after, n_after = mask_secrets(after, secrets, patterns)
    if before is not None and (n_before or n_after) and masked_before == masked_after:
        # only a secret changed: say so rather than show an empty diff
        return {"prepared": f"{path}: a secret changed (masked, not shown)\n"}
    return {"before_header": path + (" (absent)" if before is None else " (secrets masked)" if n_before else ""),
            "after_header": path + (" (secrets masked)" if n_after else ""),
            "before": masked_before, "after": masked_after}


def write(module, entry, data, mode):
    """The file's new bytes in place, atomically, after the entry's validate command passed on them."""
    with atomic_path(entry["path"], mode) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
        if entry["validate"]:
            # (umask 077: whatever the command writes beside the file, a copy of it too, is root's alone)
            rc, out, err = module.run_command(entry["validate"].replace("%s", tmp), umask=0o077)
            if rc != 0:
                fail(module, entry, f"the new file fails validation ({entry['validate']}), left as it was: "
                                    f"rc={rc} {out.strip()} {err.strip()}".strip())


def fail(module, entry, message):
    module.fail_json(msg=mask_secrets(f"{entry['path']}: {message}", module.params["secrets"], entry["mask"])[0],
                     path=entry["path"])


def converge(module, entry, planned):
    """Make one entry what it says; (changed, its diffs). planned: the directories this call makes
    (so far), which check mode counts as there."""
    path, state = entry["path"], entry["state"]
    secret = path in module.params["secret_contents"]
    now, diffs, changed = kind(path), [], False
    if state == "file" and now == "link":
        now = "absent"   # a dangling link: replaced by the file
    if now not in ("absent", state):
        what = "a dangling link" if now == "link" else f"a {now}"
        fail(module, entry, f"{what} is there where a {state} is wanted; remove it first")
    if entry["mode"] is not None and not OCTAL_MODE.fullmatch(entry["mode"]):
        fail(module, entry, f"mode {entry['mode']!r} is not an octal mode such as '0644'")
    parent = os.path.dirname(os.path.normpath(path))
    if state == "file" and now == "absent" and not os.path.isdir(parent) and parent not in planned:
        fail(module, entry, f"its directory {parent} is missing (list it before, as a directory)")
    # (a file holding a secret is 0600 unless its entry says otherwise, whatever mode it had)
    mode = entry["mode"] or (DEFAULT_MODE["secret"] if secret else None if now != "absent" else DEFAULT_MODE[state])
    real = path
    if state == "directory":
        if now == "absent":
            changed = True
            diffs.append({"before_header": path, "after_header": path,
                          "before": {"path": path, "state": "absent"}, "after": {"path": path, "state": "directory"}})
            if not module.check_mode:
                make_dirs(path, int(mode, 8))
        d = os.path.normpath(path)
        while d not in planned and d != os.path.dirname(d):   # it and the parents it is made with
            planned.add(d)
            d = os.path.dirname(d)
        # a link to a directory: its attributes are the directory's (as the file module's follow)
        real = os.path.realpath(path) if os.path.islink(path) else path
    else:
        data = (module.params["secret_contents"][path] if secret else entry["content"]).encode(
            "utf-8", errors="surrogateescape")
        before = None
        if now == "file":
            with open(path, "rb") as fh:
                before = fh.read()
        if before != data:
            changed = True
            diffs.append(masked(module, entry, None if before is None else text(before), text(data)))
            if not module.check_mode:
                old = os.stat(path) if now == "file" else None
                keep = int(mode, 8) if mode else old.st_mode & 0o7777
                write(module, entry, data, keep)
                if old is not None and (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
                    # the new file is the writer's: the old owner and group kept, then the mode again
                    # (a change of owner clears setuid and setgid)
                    os.chown(path, old.st_uid, old.st_gid)
                    os.chmod(path, keep)
    if module.check_mode and now == "absent":
        return changed, diffs
    attrs = {"before": {}, "after": {}}
    file_args = module.load_file_common_arguments(dict(path=real, mode=mode, owner=entry["owner"], group=entry["group"]))
    if module.set_fs_attributes_if_different(file_args, False, diff=attrs):
        changed = True
        if attrs["before"] != attrs["after"]:
            diffs.append(dict(attrs, before_header=f"{path} (attributes)", after_header=f"{path} (attributes)"))
    return changed, diffs


def main():
    module = AnsibleModule(
        argument_spec=dict(files=dict(type="list", elements="dict", required=True, options=dict(
            path=dict(type="path", required=True),
            state=dict(type="str", choices=["file", "directory"], default="file"),
            content=dict(type="str"),
            mode=dict(type="str"),
            owner=dict(type="str"),
            group=dict(type="str"),
            mask=dict(type="list", elements="str", default=[]),
            validate=dict(type="str"),
        )),
            secret_contents=dict(type="dict", default={}, no_log=True),
            secrets=dict(type="list", elements="str", default=[], no_log=True),
            absent=dict(type="list", elements="path", default=[])),
        supports_check_mode=True,
    )
    files = module.params["files"]
    # its keys are paths as files[].path are (the argument spec's type path: ~ and $VAR expanded)
    secret = module.params["secret_contents"] = {
        check_type_path(path): text for path, text in module.params["secret_contents"].items()}
    for path in sorted(set(secret) - {e["path"] for e in files if e["state"] == "file"}):
        module.fail_json(msg=f"secret_contents: {path} is not a file of files")
    for path in sorted(p for p, text in secret.items() if not isinstance(text, str)):
        module.fail_json(msg=f"secret_contents: the content of {path} is not a string")
    for entry in files:
        for pattern in entry["mask"]:
            try:
                re.compile(pattern)
            except re.error as e:
                module.fail_json(msg=f"{entry['path']}: mask {pattern!r} is not a regular expression: {e}")
    for entry in files:
        if entry["state"] == "file" and (entry["content"] is None) == (entry["path"] not in secret):
            module.fail_json(msg=f"{entry['path']}: its content is given in neither or both of content and "
                                 "secret_contents")
    changed_files, diffs, planned = [], [], set()
    steps = [(e["path"], converge, (module, e, planned)) for e in module.params["files"]]
    steps += [(p, remove, (module, p)) for p in module.params["absent"]]
    for path, step, args in steps:
        try:
            changed, entry_diffs = step(*args)
        except OSError as e:
            module.fail_json(msg=f"{path}: {e}", changed_files=changed_files)
        if changed:
            changed_files.append(path)
        diffs += entry_diffs
    module.exit_json(changed=bool(changed_files), changed_files=changed_files, diff=diffs)


if __name__ == "__main__":
    main()

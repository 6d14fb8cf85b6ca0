#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Make a host directory hold exactly the listed files of the site pack (host side of pack_sync)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pack_sync
short_description: Bring part of the offline site pack onto a host, transferring only what differs
version_added: 0.1.0
description:
  - Run as an action on the controller, it reads the pack's C(manifest.json) from O(src), selects
    the files under O(prefix) (narrowed by O(include) and O(exclude)), asks the host which of them
    are missing or differ (sizes, then sha256; a state file on the host avoids re-hashing files
    whose size and mtime are unchanged), sends only those in one tar, and has the host check each
    received file against its sha256 before putting it in place.
  - A second run transfers nothing and reports changed=false.
requirements:
  - Python 3 on the host (the transfer is Ansible's own)
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_HOST
  - offline_pot.tke.attributes.ACTION
options:
  src:
    description: The unpacked pack on the controller (the directory holding manifest.json).
    type: path
    required: true
  dest:
    description: Directory on the host receiving the files (paths below O(prefix)).
    type: path
    required: true
  prefix:
    description: Directory of the pack to bring over (for example C(registry)); empty for the whole pack.
    type: str
    default: ""
  include:
    description: Only paths below O(prefix) starting with one of these (all when empty).
    type: list
    elements: str
    default: []
  exclude:
    description: Leave out paths below O(prefix) starting with one of these.
    type: list
    elements: str
    default: []
  prune:
    description: Remove files under O(dest) that are not selected (leave C(false) for a directory
      others write into, such as registry storage).
    type: bool
    default: true
  install:
    description:
      - Files to install from O(dest) once it is in sync, each C(path) (below O(prefix); a path ending
        in C(/) is a directory whose files all go into the directory C(install)) to C(install)
        (absolute path on the host), mode 0755; a file is replaced only when its content differs.
      - Other keys of each entry are ignored, so the manifest's binaries can be passed as they are.
    type: list
    elements: dict
    default: []
  files:
    description:
      - Internal, set by the action plugin from the manifest (path below O(prefix) to size and
        sha256 of every selected file); not set in a task.
    type: dict
  archive:
    description:
      - Internal, set by the action plugin (the tar of the missing files, already on the host);
        not set in a task.
    type: path
"""

EXAMPLES = r"""
- name: Package repository and binaries of the pack
  offline_pot.tke.pack_sync:
    src: /srv/site/.tke/pack/tke-site-2026.11.1
    dest: /opt/tke/pack
    include: [repo/deb/, bin/containerd]

- name: Registry storage, pre-seeded
  offline_pot.tke.pack_sync:
    src: /srv/site/.tke/pack/tke-site-2026.11.1
    prefix: registry
    dest: /var/lib/tke-registry
    prune: false
"""

RETURN = r"""
transferred:
  description: Paths (below prefix) sent to the host.
  returned: always
  type: list
  elements: str
removed:
  description: Paths removed from the host (prune).
  returned: always
  type: list
  elements: str
installed:
  description: Host paths (re)installed from O(install).
  returned: always
  type: list
  elements: str
bytes:
  description: Bytes sent (the archive of the files the host lacked).
  returned: always
  type: int
files:
  description: Number of selected files.
  returned: always
  type: int
"""

import hashlib
import json
import os
import tarfile

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.offline_pot.tke.plugins.module_utils import pack_manifest as pm
from ansible_collections.offline_pot.tke.plugins.module_utils.atomic_file import atomic_writer, write_file

STATE = ".tke-pack-sync.json"


def main():
    module = AnsibleModule(
        argument_spec=dict(pm.SYNC_ARGS, files=dict(type="dict"), archive=dict(type="path")),
        supports_check_mode=True,
    )
    dest, expected = module.params["dest"], module.params["files"]
    if expected is None:
        module.fail_json(msg="files is set by the pack_sync action plugin from the manifest; "
                             "run pack_sync as a task, not the module alone")
    state_file = os.path.join(dest, STATE)
    try:
        with open(state_file) as f:
            known = json.load(f)
    except (OSError, ValueError):
        known = {}
    actual = pm.scan_tree(dest, known) if os.path.isdir(dest) else {}
    actual.pop(STATE, None)
    need = [p["path"] for p in pm.compare(expected, actual)]
    extra = sorted(set(actual) - set(expected)) if module.params["prune"] else []
    diff = {"before": "".join(f"{p}\n" for p in sorted(set(actual) & set(expected) - set(need)) + extra),
            "after": "".join(f"{p}\n" for p in sorted(expected))}
    archive = module.params["archive"]
    installs = pm.install_plan(expected, dest, module.params["install"])
    if module.check_mode:
        pending = [t for src, t in installs
                   if os.path.relpath(src, dest) in need or not pm.same_installed(src, t)]
        module.exit_json(changed=bool(need or extra or pending), need=need, removed=extra,
                         installed=pending, diff=diff)
    if need and not archive:
        # the action sends the files and calls again with the archive
        module.exit_json(changed=True, need=need, removed=[], installed=[], diff=diff)
    if not (need or extra):
        done = pm.install_files(installs)
        module.exit_json(changed=bool(done), need=[], removed=[], installed=done, diff=diff)

    os.makedirs(dest, exist_ok=True)
    if need:
        wanted = set(need)
        with tarfile.open(archive) as t:
            members = [m for m in t.getmembers() if m.isfile() and m.name in wanted]
            got = {m.name for m in members}
            if got != wanted:
                module.fail_json(msg="the transfer lacks " + ", ".join(sorted(wanted - got)))
            for m in members:
                with atomic_writer(os.path.join(dest, m.name), m.mode & 0o7777) as fo, t.extractfile(m) as fi:
                    h = hashlib.sha256()
                    for chunk in iter(lambda: fi.read(1 << 20), b""):
                        h.update(chunk)
                        fo.write(chunk)
                    if h.hexdigest() != expected[m.name]["sha256"]:  # the target is kept as it was
                        module.fail_json(msg=f"{m.name}: received content does not match the manifest's sha256")
    for rel in extra:
        os.unlink(os.path.join(dest, rel))
    # what is there now, without hashing again: received files were checked on arrival
    files = {rel: v for rel, v in actual.items() if rel not in extra}
    for rel in need:
        st = os.stat(os.path.join(dest, rel))
        files[rel] = {"size": st.st_size, "sha256": expected[rel]["sha256"], "mtime_ns": st.st_mtime_ns}
    write_file(state_file, json.dumps(files), 0o644)
    module.exit_json(changed=True, need=need, removed=extra, installed=pm.install_files(installs), diff=diff)


if __name__ == "__main__":
    main()

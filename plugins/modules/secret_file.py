#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""A file that holds a secret (a rendered template): written atomically, its diff masked."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: secret_file
short_description: Write a file that holds secrets, with the secrets masked in its diff
version_added: 0.1.0
description:
  - Makes O(dest) hold exactly O(content) (usually C(lookup('template', ...)) rendered on the
    controller) with O(mode), written atomically (the collection's one file writer,
    module_utils/atomic_file; a 0600 temporary file beside the target, renamed over it).
  - The diff (C(--diff)) shows both the current and the new text with every secret replaced by
    C(********); each value of O(secrets), and whatever the first group of each O(mask) pattern
    matches (so the previous value of a secret, on the host before a change, is masked too). A change
    of a secret alone shows as a changed file whose masked diff has no changed line.
  - O(content) and O(secrets) are no_log options, so neither appears in the host's journal (module
    invocations are logged there) nor in C(-v) output.
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_HOST
attributes:
  check_mode:
    details: Writes nothing; reports whether the file would change, with the masked diff.
  diff_mode:
    details: Before and after, the secrets masked.
options:
  dest:
    description: The file.
    type: path
    required: true
  content:
    description: The whole text of the file.
    type: str
    required: true
  mode:
    description: File mode.
    type: str
    default: "0600"
  secrets:
    description: Values masked wherever they appear in the diff.
    type: list
    elements: str
    default: []
  validate:
    description: A command that checks the new file before it replaces O(dest); C(%s) is the
      temporary file's path. A non-zero exit fails the task and leaves O(dest) untouched. Not run
      in check mode.
    type: str
  mask:
    description: Python regular expressions (multiline); what the first group of each match holds is
      masked in the diff.
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
- name: Containerd configuration (registry credentials masked in the diff)
  offline_pot.tke.secret_file:
    dest: /etc/containerd/config.toml
    content: "{{ lookup('ansible.builtin.template', 'config.toml.j2') }}"
    secrets: ["{{ container_runtime_registry_password }}"]
    mask: ['^\s*password\s*=\s*"(.*)"']
"""

RETURN = r"""
masked:
  description: How many secret occurrences the diff masks (before and after together).
  returned: always
  type: int
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.offline_pot.tke.plugins.module_utils.atomic_file import atomic_path, mask_secrets


def main():
    module = AnsibleModule(
        argument_spec=dict(dest=dict(type="path", required=True),
                           content=dict(type="str", required=True, no_log=True),
                           mode=dict(type="str", default="0600"),
                           secrets=dict(type="list", elements="str", default=[], no_log=True),
                           mask=dict(type="list", elements="str", default=[]),
                           validate=dict(type="str")),
        supports_check_mode=True,
    )
    p = module.params
    try:
        with open(p["dest"], encoding="utf-8", errors="surrogateescape") as fh:
            before = fh.read()
    except FileNotFoundError:
        before = None
    content = p["content"]
    changed = before != content
    masked_before, n_before = mask_secrets(before or "", p["secrets"], p["mask"])
    masked_after, n_after = mask_secrets(content, p["secrets"], p["mask"])
    diff = {"before": masked_before, "after": masked_after,
            "before_header": p["dest"] + (" (secrets masked)" if n_before else ""),
            "after_header": p["dest"] + (" (secrets masked)" if n_after else "")}
    if changed and masked_before == masked_after:
        # only a secret changed: say so rather than show an empty diff
        diff = {"prepared": f"{p['dest']}: a secret changed (masked, not shown)\n"}
    if changed and not module.check_mode:
        try:
            with atomic_path(p["dest"], int(p["mode"], 8)) as tmp:
                with open(tmp, "w", encoding="utf-8", errors="surrogateescape") as fh:
                    fh.write(content)
                if p["validate"]:
                    rc, out, err = module.run_command(p["validate"].replace("%s", tmp))
                    if rc != 0:
                        raise ValueError(f"{p['dest']}: the new file fails validation ({p['validate']}), "
                                         f"left as it was: rc={rc} {out.strip()} {err.strip()}".strip())
        except ValueError as e:
            module.fail_json(msg=mask_secrets(str(e), p["secrets"], p["mask"])[0])
    if os.path.exists(p["dest"]):
        file_args = module.load_file_common_arguments(dict(path=p["dest"], mode=p["mode"]))
        changed = module.set_fs_attributes_if_different(file_args, changed)
    module.exit_json(changed=changed, masked=n_before + n_after, diff=diff)


if __name__ == "__main__":
    main()

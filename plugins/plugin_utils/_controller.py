# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Private to the collection: small controller-side helpers shared by its action plugins."""
from __future__ import annotations

import hashlib
import json
import os
import time

import yaml

from ansible_collections.offline_pot.tke.plugins.module_utils.atomic_file import write_file
from ansible_collections.offline_pot.tke.plugins.plugin_utils import tke_config

COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def utc_now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def read_text(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        return ""


# libyaml's loader when PyYAML has it (its wheels do): the collection's own YAML (the roles'
# argument specs, install.yml) is read in every task's worker process, about ten times faster so
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml(path):
    """The YAML document of a file, safely loaded."""
    with open(path, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=YAML_LOADER)  # nosec B506 - a safe loader


def write_private(path, text):
    """Write a controller-side state file atomically, mode 0600, in a 0700 directory."""
    write_file(path, text, 0o600, dir_mode=0o700)


def tree_digest(*relative_dirs):
    """sha256 over the paths and contents of every file under the collection's given folders, less
    byte code and hidden entries (a site's .tke state folder, an editor's files): only the code."""
    h = hashlib.sha256()
    for rel in relative_dirs:
        top = os.path.join(COLLECTION_ROOT, rel)
        for root, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
            for name in sorted(f for f in files if not f.startswith(".")):
                path = os.path.join(root, name)
                h.update(os.path.relpath(path, COLLECTION_ROOT).encode() + b"\0")
                with open(path, "rb") as fh:
                    h.update(hashlib.sha256(fh.read()).digest())
    return h.hexdigest()


def sync_tke_json_step(state_dir, step):
    """TKE's state file (<state_dir>/tke.json) carries the resume point: its `step` follows the
    install journal's. Nothing is written when there is no tke.json or the step is already right."""
    path = os.path.join(state_dir, "tke.json")
    text = read_text(path)
    if not text:
        return
    state = json.loads(text)
    if state.get("step") != step:
        state["step"] = step
        write_private(path, tke_config.canonical(state))

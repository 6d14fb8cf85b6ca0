# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The controller's PKI directory as a dict of relative path -> bytes, and back.

Private to the collection (package plugins/plugin_utils/k8s_pki; used by plugins/action/k8s_pki.py
and bench/pki_generate.py). Keys and kubeconfigs are written 0600, certificates 0644, directories
0700, through the collection's one file writer (module_utils/atomic_file.py).
"""
from __future__ import annotations

import os

from ansible_collections.offline_pot.tke.plugins.module_utils.atomic_file import write_file

SECRET_SUFFIXES = (".key", ".conf")

# The site's journal key (install_journal.fingerprint): 32 random bytes as hex, kept in the store
# like the store's other keys, made by the site's first phase (or by k8s_pki when a store has none),
# given to the masters root-only (distribution.host_files), so adopt.yml brings it back.
JOURNAL_KEY = "tke/journal.key"


def new_journal_key() -> bytes:
    """A new journal key: 32 random bytes, hex, as a one-line text file."""
    return os.urandom(32).hex().encode() + b"\n"


def journal_key_ok(data) -> bool:
    """Whether a journal key file's content is a key (at least 32 bytes as hex)."""
    return len((data or b"").strip()) >= 64


def read_tree(root: str) -> dict:
    """Every regular file under root -> bytes, by path relative to root (hidden files skipped)."""
    out = {}
    for dirpath, _dirs, names in os.walk(root):
        for n in names:
            full = os.path.join(dirpath, n)
            if n.startswith(".") or not os.path.isfile(full):
                continue
            with open(full, "rb") as fh:
                out[os.path.relpath(full, root)] = fh.read()
    return out


def write_pki_file(root: str, rel: str, data: bytes) -> None:
    """Atomic write; directories 0700, keys and kubeconfigs 0600, certificates 0644."""
    write_file(os.path.join(root, rel), data, 0o600 if rel.endswith(SECRET_SUFFIXES) else 0o644, dir_mode=0o700)

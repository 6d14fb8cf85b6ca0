# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The site pack checked on the controller: unpacked once, its manifest's signature, every file.

Private to the collection: the site_pack_verify action plugin's work, done in the controller's own
process (no module to ship, no interpreter to start: the check runs before any host is contacted).
The rules over files and signatures are module_utils' (pack_manifest, pack_signature), shared with
the pack's build.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import time

from ansible_collections.offline_pot.tke.plugins.module_utils import pack_manifest as pm
from ansible_collections.offline_pot.tke.plugins.module_utils import pack_signature
from ansible_collections.offline_pot.tke.plugins.module_utils.atomic_file import write_file, write_if_differs


class PackRefused(Exception):
    """The pack cannot be used; fields: what the task returns beside the message."""

    def __init__(self, msg: str, **fields):
        super().__init__(msg)
        self.fields = fields


def unpack(archive: str, unpack_dir: str) -> tuple[str, bool]:
    """(the pack directory, whether it was unpacked now): archive unpacked into unpack_dir unless
    the stamp there says this very archive (path, size, modification and change times, inode) is
    unpacked already."""
    st = os.stat(archive)
    stamp_value = f"{os.path.abspath(archive)} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino}\n"
    stamp = os.path.join(unpack_dir, ".unpacked-from")
    try:
        with open(stamp) as f:
            if f.read() == stamp_value:
                with open(os.path.join(unpack_dir, ".pack-dir")) as g:
                    return g.read().strip(), False
    except OSError:
        pass
    tmp = unpack_dir + ".part"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    argv = ["tar", "-C", tmp, "-xf", archive]
    if archive.endswith(".zst"):
        argv = ["tar", "-C", tmp, "-I", "zstd", "-xf", archive]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise PackRefused(f"{archive}: cannot unpack: {done.stderr.strip()}", pack_dir="")
    tops = [d for d in os.listdir(tmp) if os.path.isdir(os.path.join(tmp, d))]
    if len(tops) != 1:
        shutil.rmtree(tmp, ignore_errors=True)
        raise PackRefused(f"{archive}: expected one top directory, found {tops}", pack_dir="")
    shutil.rmtree(unpack_dir, ignore_errors=True)
    os.replace(tmp, unpack_dir)
    pack_dir = os.path.join(unpack_dir, tops[0])
    write_file(os.path.join(unpack_dir, ".pack-dir"), pack_dir + "\n")
    write_file(stamp, stamp_value)
    return pack_dir, True


DIGESTS = ".verified-digests.json"
RACY_NS = 2_000_000_000


def read_digests(unpack_dir: str, pack_dir: str) -> dict:
    """{path: stamp and sha256} of the files of pack_dir hashed by an earlier verification (kept in
    unpack_dir, the controller's state), or {} (none, another pack directory, unreadable, or a file
    or directory that is not this user's alone to write: then every file is read)."""
    path = os.path.join(unpack_dir, DIGESTS)
    try:
        for st in (os.stat(unpack_dir), os.stat(path)):
            if st.st_uid != os.geteuid() or st.st_mode & 0o022:
                return {}
        with open(path, encoding="utf-8") as f:
            kept = json.load(f)
    except (OSError, ValueError):
        return {}
    if not isinstance(kept, dict) or kept.get("pack_dir") != os.path.abspath(pack_dir):
        return {}
    return kept.get("files") if isinstance(kept.get("files"), dict) else {}


def write_digests(unpack_dir: str, pack_dir: str, known: dict, manifest: dict) -> None:
    """Keep what this verification hashed, for the next one (0600, only when it changed): the
    manifest's files, less those changed in the last seconds (a write in the same clock tick as the
    reading can leave the change time as it was: git's "racy" entries)."""
    recent = time.time_ns() - RACY_NS
    listed = pm.file_index(manifest)
    files = {p: e for p, e in known.items() if p in listed and e.get("ctime_ns", recent) < recent}
    text = json.dumps({"pack_dir": os.path.abspath(pack_dir), "files": files}, sort_keys=True) + "\n"
    write_if_differs(os.path.join(unpack_dir, DIGESTS), text, 0o600, dir_mode=0o700)


def verify(pack: str, unpack_dir: str, pubkey: str = "", allow_unsigned: bool = False,
           signature_only: bool = False, keep_digests: bool = True) -> dict:
    """The task's result: changed (the archive was unpacked now: bookkeeping on the controller, not
    a change to any host), pack_dir, signature, and unless signature_only the manifest and a
    warning for an unverified pack. In the copy unpacked from an archive, a file verified before and
    unchanged since (pack_manifest.STRICT_STAMP) is not read again; keep_digests (not in check
    mode): what was read is kept for the next time.
    Raises PackRefused naming what is wrong."""
    if not os.path.exists(pack):
        raise PackRefused(f"the site pack {pack} does not exist", pack_dir="")
    changed, pack_dir = False, pack
    if os.path.isfile(pack):
        pack_dir, changed = unpack(pack, unpack_dir)
    try:
        signature = pack_signature.check_pack(pack_dir, pubkey, allow_unsigned)
    except FileNotFoundError as e:
        raise PackRefused(f"the site pack {pack_dir}: {e.filename} is missing", pack_dir=pack_dir) from None
    except pack_signature.SignatureError as e:
        raise PackRefused(f"the site pack {pack_dir} is refused: {e}", pack_dir=pack_dir, signature="refused") from None
    result = {"changed": changed, "pack_dir": pack_dir, "signature": signature}
    if signature_only:
        return result
    if signature != "signed":
        result["warnings"] = [f"installing an unverified site pack: {signature} (tke_site_pack_allow_unsigned is true)"]
    try:
        with open(os.path.join(pack_dir, pm.MANIFEST_NAME)) as f:
            manifest = json.load(f)
    except FileNotFoundError:
        raise PackRefused(f"{pm.MANIFEST_NAME}: missing from the pack {pack_dir}", pack_dir=pack_dir) from None
    except ValueError as e:
        raise PackRefused(f"{pm.MANIFEST_NAME}: not valid JSON ({e})", pack_dir=pack_dir) from None
    errors = pm.check_manifest(manifest)
    if errors:
        raise PackRefused(f"{pm.MANIFEST_NAME}: " + "; ".join(errors), pack_dir=pack_dir)
    # the digests kept only for the copy unpacked here from an archive (the controller's state): a
    # pack given as a directory may be on a medium or share changed from elsewhere, read whole
    unpacked = os.path.isfile(pack)
    known = read_digests(unpack_dir, pack_dir) if unpacked else {}
    lines = pm.problem_lines(pm.verify_tree(pack_dir, manifest, known))
    if keep_digests and unpacked:
        write_digests(unpack_dir, pack_dir, known, manifest)
    if lines:
        raise PackRefused(f"the site pack {pack_dir} does not match its manifest: " + "; ".join(lines),
                          problems=lines, pack_dir=pack_dir)
    result["manifest"] = manifest
    return result

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""A tar extracted with the standard library's "data" filter (PEP 706): leading slashes stripped,
no member or link outside the destination, no absolute link, no device or FIFO, no owner taken
from the archive, no setuid/setgid bits nor group/other write. Python has tarfile.data_filter from
3.11.4 (and 3.12); Debian 12's python3 (3.11.2) has not, so there the same rules (as
Lib/tarfile.py's _get_filtered_attrs words them) are applied here to each member just before it is
extracted, as the filter is: a link extracted earlier is followed when the next member's place is
checked. Unit-tested, both ways, in tests/unit/plugins/module_utils/test_safe_tar.py."""
from __future__ import annotations

import copy
import os
import tarfile


def _inside(dest: str, path: str) -> bool:
    return os.path.commonpath([dest, path]) == dest


def _filtered(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo:
    """member as the data filter lets it through, or tarfile.TarError naming it."""
    name = member.name.lstrip("/" + os.sep)           # leading slashes stripped, as the filter does
    if os.path.isabs(name):
        raise tarfile.TarError(f"{member.name!r} is an absolute path")
    target = os.path.realpath(os.path.join(dest, name))
    if not _inside(dest, target):
        raise tarfile.TarError(f"{name!r} would be extracted outside the destination")
    if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
        raise tarfile.TarError(f"{name!r} is a special file")
    out = copy.copy(member)
    out.name = name
    if member.issym() or member.islnk():
        link = member.linkname
        if os.path.isabs(link):
            raise tarfile.TarError(f"{name!r} links to an absolute path")
        base = os.path.dirname(target) if member.issym() else dest
        if not _inside(dest, os.path.realpath(os.path.join(base, link))):
            raise tarfile.TarError(f"{name!r} links outside the destination")
    mode = member.mode
    if member.isfile() or member.islnk():
        mode = (mode & 0o755) | 0o600            # owner reads and writes; no group/other write
        if not mode & 0o100:
            mode &= ~0o011                       # executable by others only if by the owner
        out.mode = mode
    elif member.isdir():
        out.mode = (mode & 0o755) | 0o700        # (the filter leaves a directory's mode to the umask)
    out.uid, out.gid, out.uname, out.gname = os.getuid(), os.getgid(), "", ""
    return out


def extract(tar: tarfile.TarFile, dest: str) -> None:
    """Every member of tar under dest, as extractall(dest, filter="data") does."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, filter="data")
        return
    dest = os.path.realpath(dest)
    for member in tar.getmembers():
        tar.extract(_filtered(member, dest), dest)

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The collection's one way to write a file: whole or not at all, with its mode from the start.

Private to the collection (used by modules on hosts and, through plugin_utils, by action plugins
on the controller; unit-tested in tests/unit/plugins/module_utils/test_atomic_file.py). Like
community.crypto's plugins/module_utils/_io.py write_file: a temporary file in the target's own
directory (mkstemp: mode 0600, so a secret is never readable by others, not even for a moment),
the content flushed and fsync'd, the final mode set before the rename, an atomic os.replace onto
the target, and the temporary file removed when anything fails (the target is then untouched).
No Ansible import.
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile

# a file mode as the collection's modules take it: octal digits in a string ("0644", "755",
# "1777"); chmod's symbolic forms ("u=rwx,go=rx") are not taken (host_files; the validate phase
# refuses them in the roles' options: inventory_rules.mode_problems)
OCTAL_MODE = re.compile(r"0?[0-7]{3}|[0-7]{4}")


def make_dirs(directory: str, mode: int = 0o755) -> None:
    """Create directory and its missing parents with exactly mode (whatever the umask);
    directories that exist are left as they are."""
    directory = os.path.abspath(directory)
    missing = []
    while not os.path.isdir(directory):
        missing.append(directory)
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    for d in reversed(missing):
        try:
            os.mkdir(d, mode)
        except FileExistsError:
            continue
        os.chmod(d, mode)


@contextlib.contextmanager
def atomic_path(path: str, mode: int = 0o644, dir_mode: int | None = None):
    """Yield the name of a temporary file beside path for the caller (or a command) to fill;
    on leaving the block without an exception it replaces path, with mode. An exception (including
    a module's fail_json exit) removes the temporary file and leaves path untouched."""
    directory = os.path.dirname(os.path.abspath(path))
    if dir_mode is not None:
        make_dirs(directory, dir_mode)
    else:
        os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".")
    os.close(fd)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_writer(path: str, mode: int = 0o644, dir_mode: int | None = None):
    """A binary file object whose content replaces path when the block ends without an exception
    (for streamed writes that check what they wrote: raise in the block to keep the target)."""
    # pylint: disable-next=contextmanager-generator-missing-cleanup
    with atomic_path(path, mode, dir_mode) as tmp, open(tmp, "wb") as fh:  # atomic_path cleans up on any BaseException, GeneratorExit too
        yield fh
        fh.flush()


def write_file(path: str, content: bytes | str, mode: int = 0o644, dir_mode: int | None = None) -> None:
    """Replace path with content (str is written as UTF-8), atomically, with mode."""
    data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
    with atomic_writer(path, mode, dir_mode) as fh:
        fh.write(data)


def copy_file(src: str, path: str, mode: int = 0o644, dir_mode: int | None = None) -> None:
    """Replace path with a copy of src, atomically, with mode."""
    with atomic_writer(path, mode, dir_mode) as fh, open(src, "rb") as fi:
        shutil.copyfileobj(fi, fh, 1 << 20)


def write_if_differs(path: str, content: bytes | str, mode: int = 0o644, dir_mode: int | None = None) -> bool:
    """write_file unless path already holds exactly content; whether it wrote."""
    data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
    try:
        with open(path, "rb") as fh:
            if fh.read() == data:
                return False
    except FileNotFoundError:
        pass
    write_file(path, data, mode, dir_mode)
    return True


MASK = "********"


def mask_secrets(text: str, values=(), patterns=()) -> tuple[str, int]:
    """text with every secret replaced by MASK, and how many were: first what the first group of
    each (multiline) regular expression of patterns matches (a secret's previous value too, which
    the caller does not know), then every non-empty value of values wherever it appears. For the
    diff of a file that holds secrets (modules/host_files)."""
    count = 0

    def hide(match):
        nonlocal count
        if match.group(1) == "" or match.group(1) == MASK:
            return match.group(0)
        count += 1
        start, end = match.start(1) - match.start(0), match.end(1) - match.start(0)
        whole = match.group(0)
        return whole[:start] + MASK + whole[end:]

    for pattern in patterns:
        text = re.sub(pattern, hide, text, flags=re.MULTILINE)
    for value in sorted({v for v in values if v}, key=len, reverse=True):
        count += text.count(value)
        text = text.replace(value, MASK)
    return text, count

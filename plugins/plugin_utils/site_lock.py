# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""One run at a time per site: an fcntl.flock on <tke_state_dir>/run.lock, held for the whole
ansible-playbook run (docs/install.md, "One run at a time"). Private to the collection.

Action plugins run in worker processes that ansible-playbook forks for each task and that end with
it, and a flock lasts as long as a descriptor of the open file does. So the step that takes the lock
(install_phase state=lock, the first controller step of install.yml, the day-2 playbooks and
components.yml) forks a small holder process that keeps the descriptor and waits for the
ansible-playbook process (the worker's parent) to end, however it ends: the lock is released then,
by the kernel if the holder is killed. The lock file says who holds it (JSON: pid, playbook,
started), for the refusal of a second run.
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
import select
import time

LOCK_FILE = "run.lock"


class Held(Exception):
    """The site's lock is held by another run; holder: what the lock file says about it."""

    def __init__(self, path, holder):
        self.path, self.holder = path, holder
        super().__init__(describe(path, holder))


def describe(path, holder):
    who = ", ".join(f"{k} {holder[k]}" for k in ("pid", "playbook", "started", "user") if holder.get(k)) \
        or "no details"
    return (f"another run holds this site's lock {path} ({who}): one run at a time per site; wait for it to end "
            "(a lock of a run that ended, however it ended, is free: nothing to delete)")


def _read(fd):
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        data = json.loads(os.read(fd, 65536).decode() or "{}")
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _alive(pid):
    try:
        os.kill(int(pid), 0)
    except (OSError, ValueError, TypeError) as exc:
        return getattr(exc, "errno", None) == errno.EPERM
    return True


def acquire(state_dir, owner, info, wait=60.0):
    """Take the site's lock for the process `owner` (the ansible-playbook process), or find it held
    by that process already. Returns (fd or None when already held by owner, path); raises Held when
    another live run holds it. A run that has just ended (its holder process is on its way out: on a
    loaded controller that can take seconds) is waited for up to `wait` seconds."""
    os.makedirs(state_dir, mode=0o700, exist_ok=True)
    path = os.path.join(state_dir, LOCK_FILE)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            holder = _read(fd)
            if str(holder.get("pid")) == str(owner):
                os.close(fd)
                return None, path
            if _alive(holder.get("pid")) or time.monotonic() > deadline:
                os.close(fd)
                raise Held(path, holder) from None
            time.sleep(0.1)
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, (json.dumps(dict(info, pid=owner), sort_keys=True) + "\n").encode())
    return fd, path


def hold_until_exit(fd, owner):
    """Fork a process that keeps fd (and so the lock) until the process `owner` ends; the caller's
    copy of fd is closed. Returns the holder's pid."""
    child = os.fork()
    if child:
        os.close(fd)
        return child
    try:  # the holder: nothing but waiting, then leave without running any of the parent's cleanup
        os.setsid()
        for std in (0, 1, 2):
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, std)
            os.close(null)
        os.closerange(3, fd)
        os.closerange(fd + 1, 65536)
        _wait_for(owner)
    finally:
        os._exit(0)  # pylint: disable=protected-access


def _wait_for(pid):
    try:
        pidfd = os.pidfd_open(pid)
    except (OSError, AttributeError):
        while _alive(pid):
            time.sleep(0.5)
        return
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    while not poller.poll(None):
        pass


def playbook_of(pid):
    """The playbook(s) a running ansible-playbook process was given (its command line), or ''."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read().decode(errors="replace").split("\0")
    except OSError:
        return ""
    takes_value = {"-i", "--inventory", "-e", "--extra-vars", "-l", "--limit", "-t", "--tags", "--skip-tags",
                   "-u", "--user", "-f", "--forks", "--vault-password-file", "--vault-id", "-M", "--module-path"}
    out, skip_next = [], False
    for arg in argv[1:]:
        if skip_next:
            skip_next = False
        elif arg in takes_value:
            skip_next = True
        elif arg.endswith((".yml", ".yaml")) and not arg.startswith("-"):
            out.append(arg)
    return " ".join(out)

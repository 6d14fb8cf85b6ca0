# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""htpasswd files with bcrypt entries (what the distribution registry accepts): pure functions,
the hash and check functions are passed in so tests need no crypt library."""
from __future__ import annotations


def parse(text: str) -> dict[str, str]:
    users = {}
    for line in text.splitlines():
        if ":" in line and not line.startswith("#"):
            user, dummy, hashed = line.partition(":")
            users[user.strip()] = hashed.strip()
    return users


def render(users: dict[str, str]) -> str:
    return "".join(f"{u}:{h}\n" for u, h in sorted(users.items()))


def desired(current: dict[str, str], user: str, password: str, check, make_hash) -> tuple[dict, bool]:
    """The users mapping with user's entry matching password: the current entry is kept when it is
    a bcrypt hash of that password (check(password, hash) is true), else replaced by make_hash."""
    old = current.get(user)
    if old and old.startswith(("$2a$", "$2b$", "$2y$")) and check(password, old):
        return dict(current), False
    new = dict(current)
    new[user] = make_hash(password)
    return new, True


def bcrypt_backend():
    """(check, make_hash) from the bcrypt package. Python's crypt module is no fallback: it is
    deprecated and gone from Python 3.13; hosts get bcrypt as an OS package from the site pack
    (registry_bcrypt_package, python3-bcrypt)."""
    try:
        import bcrypt  # pylint: disable=import-outside-toplevel
    except ImportError as e:
        raise RuntimeError("the Python bcrypt module is missing on this host: install python3-bcrypt "
                           "(the registry phase does, from the site pack's repository: add python3-bcrypt "
                           f"and python3-cffi-backend to the pack spec's os_packages) ({e})") from e
    return (lambda pw, h: bcrypt.checkpw(pw.encode(), h.encode()),
            lambda pw: bcrypt.hashpw(pw.encode(), bcrypt.gensalt(10)).decode())

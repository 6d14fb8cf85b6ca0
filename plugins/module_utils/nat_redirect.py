# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The third-party VIP redirect rule: rule arguments and what to change, as pure functions.

On a master, packets to VIP:vport are redirected to the local API server port (TKE's
C(iptables -t nat -I OUTPUT -p tcp -d VIP --dport VPORT -j REDIRECT --to-ports 6443)), so a
master never needs the load balancer to hairpin back to itself. Our rule carries a comment so
stale rules of an earlier VIP/port are found and removed.
"""
from __future__ import annotations

import shlex

CHAIN = "OUTPUT"


def rule_args(vip: str, vport: int, to_port: int, comment: str) -> list[str]:
    """The rule specification (without table/chain/command), as iptables takes it."""
    return ["-p", "tcp", "-d", f"{vip}/32", "--dport", str(vport), "-m", "comment",
            "--comment", comment, "-j", "REDIRECT", "--to-ports", str(to_port)]


def ours(listing: str, comment: str) -> list[str]:
    """Lines of C(iptables -t nat -S OUTPUT) that carry our comment."""
    out = []
    for line in listing.splitlines():
        try:
            words = shlex.split(line)
        except ValueError:
            continue
        if words[:2] == ["-A", CHAIN] and "--comment" in words \
                and words[words.index("--comment") + 1:words.index("--comment") + 2] == [comment]:
            out.append(line.strip())
    return out


def plan(existing: list[str], desired_present: bool, state: str) -> dict:
    """What to do, from our existing rule lines and whether the desired rule matches (-C).

    Returns C(delete) (list of -S lines to delete) and C(insert) (bool). With state present,
    exactly one rule of ours must remain and it must be the desired one."""
    if state == "absent":
        return {"delete": list(existing), "insert": False}
    if desired_present and len(existing) == 1:
        return {"delete": [], "insert": False}
    # anything else: drop every rule of ours (stale or duplicate), insert the desired one once
    return {"delete": list(existing), "insert": True}


def delete_args(line: str) -> list[str]:
    """Turn a C(-A OUTPUT ...) listing line into the arguments that delete that rule."""
    words = shlex.split(line)
    return ["-D"] + words[1:]

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""What node_cleanup removes from a host, decided as pure functions from what the host reports.

Used by the node_cleanup module (the reset of a host, playbooks/reset.yml). Private to the
collection. Nothing here touches the host: each function reads text the module collected
(C(iptables-save), C(ip -o link show), C(/proc/mounts)) and returns what to remove.
"""
from __future__ import annotations

import fnmatch
import re
import shlex

_JUMP = ("-j", "--jump", "-g", "--goto")


def netfilter_plan(save_text: str, chain_prefixes) -> dict:
    """The C(iptables-restore --noflush) input, per table, that removes the chains whose names
    start with one of chain_prefixes (kube-proxy's KUBE-, flannel's FLANNEL-, calico's cali-)
    and every rule of another chain that jumps to them. Rules inside those chains go with the
    flush. Returns {table: restore text}; a table with nothing of ours is absent."""
    prefixes = tuple(p for p in chain_prefixes if p)
    if not prefixes:
        return {}
    plan, table, chains, rules = {}, None, [], []

    def close():
        if table and (chains or rules):
            body = [f"-D {r}" for r in rules] + [f"-F {c}" for c in chains] + [f"-X {c}" for c in chains]
            plan[table] = "\n".join([f"*{table}"] + body + ["COMMIT", ""])

    for line in save_text.splitlines():
        line = line.strip()
        if line.startswith("*"):
            close()
            table, chains, rules = line[1:], [], []
        elif line.startswith(":") and table:
            name = line[1:].split()[0]
            if name.startswith(prefixes):
                chains.append(name)
        elif line.startswith("-A ") and table:
            try:
                words = shlex.split(line)
            except ValueError:
                continue
            if len(words) < 2 or words[1].startswith(prefixes):
                continue
            targets = [words[i + 1] for i, w in enumerate(words[:-1]) if w in _JUMP]
            if any(t.startswith(prefixes) for t in targets):
                rules.append(line[3:])
        elif line == "COMMIT":
            close()
            table, chains, rules = None, [], []
    close()
    return plan


def netfilter_summary(plan: dict) -> list:
    """One line per table and removal, for the report and the diff."""
    out = []
    for table, text in sorted(plan.items()):
        out += [f"{table}: {ln}" for ln in text.splitlines() if ln.startswith(("-D ", "-X "))]
    return out


def links_matching(ip_link_text: str, patterns) -> list:
    """Names of the links of C(ip -o link show) matching one of the shell patterns (cni0, flannel.*,
    cali*), in the order listed; C(name@parent) is read as name."""
    out = []
    for line in ip_link_text.splitlines():
        m = re.match(r"^\d+:\s+([^:\s]+):", line)
        if not m:
            continue
        name = m.group(1).split("@", 1)[0]
        if any(fnmatch.fnmatchcase(name, p) for p in patterns) and name not in out:
            out.append(name)
    return out


def _unescape(field: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def mounts_under(mounts_text: str, roots) -> list:
    """Mount points of C(/proc/mounts) at or below one of roots, deepest first (the order to
    unmount them in)."""
    roots = [r.rstrip("/") for r in roots if r and r != "/"]
    found = []
    for line in mounts_text.splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        point = _unescape(fields[1])
        if any(point == r or point.startswith(r + "/") for r in roots) and point not in found:
            found.append(point)
    return sorted(found, key=lambda p: (-p.count("/"), p))

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The install journal: which phase is done on which host, with a fingerprint of its inputs.

Pure functions on plain data (the journal is a JSON document on the controller); the action
plugin offline_pot.tke.install_phase does the I/O. Private to the collection.

A phase is skipped on a host when the journal has it done there with the same fingerprint, it
is not forced and resuming is on. A phase named in the skip list is skipped everywhere. The
journal's `step` (TKE's tke.json `step`) is the position of the furthest phase done.
"""
from __future__ import annotations

import hashlib
import json

FORMAT = 1

# The phases of install.yml in order: (name, variable prefixes that are its inputs, together).
# Hooks are phases too (their input is the hook file's content). A phase run "together" is one
# whose hosts coordinate (a cluster forms, a first master leads, a VIP moves): when any of its
# hosts needs it, it runs on all of them, so no host is missing when another relies on it.
PHASES = (
    ("validate", ("tke_",), True),
    ("precheck", ("precheck_", "tke_"), False),
    ("hook:pre-install", (), True),
    ("offline", ("offline_", "site_pack_", "site_repo_", "tke_"), True),
    ("host_init", ("host_init_", "tke_"), False),
    ("pki", ("pki_", "tke_"), True),
    ("runtime", ("runtime_", "container_runtime_", "containerd_", "tke_"), False),
    ("registry", ("registry_", "tke_"), True),
    ("etcd", ("etcd_", "tke_"), True),
    ("ha", ("ha_", "keepalived_", "haproxy_", "tke_"), True),
    ("control_plane", ("control_plane_", "kubelet_", "kubeadm_", "tke_"), True),
    ("hook:post-cluster-ready", (), True),
    ("nodes", ("nodes_", "kubelet_", "kubeadm_", "tke_"), False),
    ("network", ("network_", "tke_"), True),
    ("hook:post-install", (), True),
)
PHASE_NAMES = tuple(name for name, dummy, dummy in PHASES)
# Phases a user may name in tke_skip_phases / force_phases (hooks are skipped by removing them).
USER_PHASES = tuple(n for n in PHASE_NAMES if not n.startswith("hook:"))


def empty():
    return {"format": FORMAT, "phases": {}, "step": 0}


def load(text):
    """Parse a journal; an empty or foreign document gives an empty journal."""
    if not text or not text.strip():
        return empty()
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"not an offline_pot.tke install journal of format {FORMAT}")
    data.setdefault("phases", {})
    return data


def dump(journal):
    return json.dumps(journal, indent=2, sort_keys=True) + "\n"


def phase_number(phase):
    """1-based position of a phase, and how many phases there are."""
    return PHASE_NAMES.index(phase) + 1, len(PHASE_NAMES)


def input_prefixes(phase):
    return {name: prefixes for name, prefixes, dummy in PHASES}[phase]


def runs_together(phase):
    return {name: together for name, dummy, together in PHASES}[phase]


# Variables that steer the install run itself (resume, skip, force, where the hooks are): they are
# no phase's input, or a run with -e tke_resume=false would make every later run redo every phase.
ORCHESTRATION_VARS = frozenset({"tke_resume", "tke_skip_phases", "force_phases", "tke_hooks_dir"})


def input_names(names, prefixes, exclude=()):
    """The names among names that are a phase's inputs: its prefixes, less the orchestration
    variables and exclude (what this run registered or set_fact'ed)."""
    if not prefixes:
        return []
    return sorted(k for k in names
                  if k.startswith(tuple(prefixes)) and k not in ORCHESTRATION_VARS and k not in exclude)


def select_inputs(host_vars, prefixes):
    """The variables of one host that are a phase's inputs."""
    return {k: host_vars[k] for k in input_names(host_vars, prefixes)}


def fingerprint(*parts):
    """sha256 over a canonical JSON form of the parts (values that are not JSON become strings)."""
    blob = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def parse_phase_list(value, what):
    """'a,b' | ['a', 'b'] | 'all' -> a set of phase names; unknown names raise ValueError."""
    if value in (None, "", []):
        return set()
    names = [n.strip() for n in value.split(",")] if isinstance(value, str) else [str(n).strip() for n in value]
    names = [n for n in names if n]
    if names == ["all"]:
        return set(PHASE_NAMES)
    unknown = sorted(set(names) - set(PHASE_NAMES))
    if unknown:
        raise ValueError(f"{what}: unknown phase(s) {', '.join(unknown)}; known: {', '.join(USER_PHASES)}")
    return set(names)


def decide(journal, phase, fingerprints, force=(), skip=(), resume=True, machines=None):
    """Which hosts run the phase. fingerprints: host -> fingerprint of its inputs now; machines:
    host -> its machine id now (/etc/machine-id), when known.

    Returns {"run": [hosts], "skip": {host: reason}, "reinstalled": [hosts]} with hosts in the
    given order. A host whose machine id differs from the one recorded with the phase is another
    machine under the same name (reinstalled): the phase runs there again. A phase that runs
    together runs on every host as soon as one of them needs it.
    """
    run, skipped, reinstalled = [], {}, []
    done = journal.get("phases", {}).get(phase, {})
    machines = machines or {}
    for host, fp in fingerprints.items():
        entry = done.get(host, {})
        if phase in skip:
            skipped[host] = "skipped: named in tke_skip_phases"
        elif phase in force or not resume:
            run.append(host)
        elif entry.get("fingerprint") == fp and _other_machine(entry, machines.get(host)):
            reinstalled.append(host)
            run.append(host)
        elif entry.get("fingerprint") == fp:
            skipped[host] = f"done {entry.get('done_at', '')}, inputs unchanged".replace(" ,", ",")
        else:
            run.append(host)
    if run and runs_together(phase):
        run, skipped = list(fingerprints), {}
    return {"run": run, "skip": skipped, "reinstalled": reinstalled}


def _other_machine(entry, machine):
    return bool(machine and entry.get("machine") and entry["machine"] != machine)


def record(journal, phase, fingerprints, now, machines=None):
    """Mark the phase done on these hosts (with their machine ids when known); returns the
    updated journal (the input is not changed)."""
    new = json.loads(json.dumps(journal))
    entry = new.setdefault("phases", {}).setdefault(phase, {})
    for host, fp in fingerprints.items():
        entry[host] = {"fingerprint": fp, "done_at": now}
        if (machines or {}).get(host):
            entry[host]["machine"] = machines[host]
    new["step"] = step(new)
    return new


def step(journal):
    """TKE's `step`: how far the install got - the position of the furthest phase done (0: none).

    Phases without hosts in an inventory (etcd without an etcd group) never get an entry, so
    this is the furthest phase reached, not a count of entries.
    """
    done = [PHASE_NAMES.index(name) + 1 for name in journal.get("phases", {}) if name in PHASE_NAMES]
    return max(done, default=0)

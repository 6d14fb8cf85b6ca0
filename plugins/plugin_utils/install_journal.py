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

import functools
import hashlib
import hmac
import json
import os
import re
import shlex
from pathlib import Path
from typing import NamedTuple

import yaml

from ansible_collections.offline_pot.tke.plugins.plugin_utils._controller import read_text, read_yaml, write_private
from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki.store import JOURNAL_KEY, journal_key_ok, new_journal_key

FORMAT = 1

# The one list of phases is playbooks/install.yml itself: every top-level entry with a `tke_phase`
# (or `tke_hook`) variable is a phase, in order. An entry says which roles the phase runs
# (tke_phase_roles: their argument specs name its inputs), whether its hosts run it together
# (tke_phase_together: a cluster forms, a first master leads, a VIP moves: when any of its hosts
# needs it, it runs on all of them, so no host is missing when another relies on it) and which
# groups' hosts its configuration names (tke_phase_names: /etc/hosts names every node on every
# host, keepalived names the masters, the TKE server certificate of the masters and registry
# hosts every node...: adding or removing such a host re-runs the phase where it is named - their
# membership, not a group's order -; with tke_phase_names_tasks, a host whose only change is that
# runs those of the roles' tasks alone).
# Hooks are phases too (their input is the hook file's content); they run together.
COLLECTION_ROOT = Path(__file__).resolve().parents[2]
INSTALL_PLAYBOOK = COLLECTION_ROOT / "playbooks" / "install.yml"
CLUSTER_ROLE = "tke"   # its options (the cluster-wide settings) are an input of every phase


# names in a text (a file, a definition, a phase entry): see "what a phase reads" below
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _words(text):
    return frozenset(_WORD.findall(text))


class Phase(NamedTuple):
    name: str
    roles: tuple = ()
    together: bool = True
    # ((host group, (groups it names)), ...): the hosts of a host group ("all": every host) name
    # the hosts of those groups in their configuration (tke_phase_names; named_groups)
    names_groups: tuple = ()
    tags: tuple = ()
    # the names its entry's variables use (a role's `when`, the host-by-host step's role)
    entry_words: frozenset = frozenset()
    # its play's host pattern (tke_phase_hosts)
    hosts: str = "all"
    # it only reads the hosts (tke_phase_reads_only): check mode checks it on a host new to it too
    reads_only: bool = False
    # the roles' tasks that write what names other hosts (tke_phase_names_tasks: tasks/<it>.yml),
    # which a host whose only change is the hosts it names runs instead of the whole phase
    names_tasks: str = ""


def read_phases(path=INSTALL_PLAYBOOK):
    """The phases of an install playbook, in order (see above)."""
    entries = read_yaml(path) or []
    phases = []
    for entry in entries:
        v = entry.get("vars") or {}
        if "tke_hook" in v:
            phases.append(Phase(f"hook:{v['tke_hook']}"))
        elif "tke_phase" in v:
            roles = tuple(r["role"] if isinstance(r, dict) else r for r in v.get("tke_phase_roles") or ())
            serial = (v.get("tke_phase_serial") or {}).get("role")
            roles += (serial,) if serial and serial not in roles else ()
            phases.append(Phase(v["tke_phase"], roles, bool(v.get("tke_phase_together", False)),
                                _names_groups(v.get("tke_phase_names")), tuple(entry.get("tags") or ()),
                                _words(yaml.safe_dump(v)), str(v.get("tke_phase_hosts", "all")),
                                bool(v.get("tke_phase_reads_only", False)), str(v.get("tke_phase_names_tasks") or "")))
    return tuple(phases)


def _names_groups(value):
    """tke_phase_names as ((host group, (named groups)), ...): a list is what every host names, a
    mapping says it per host group ({masters: [all]}: the masters name every host)."""
    if isinstance(value, dict):
        return tuple((str(group), tuple(named or ())) for group, named in value.items())
    return (("all", tuple(value)),) if value else ()


PHASES = read_phases()
PHASE_NAMES = tuple(p.name for p in PHASES)
# Phases a user may name in tke_skip_phases / force_phases (hooks are skipped by removing them).
USER_PHASES = tuple(n for n in PHASE_NAMES if not n.startswith("hook:"))


def phase(name):
    return {p.name: p for p in PHASES}[name]


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


def runs_together(name):
    return phase(name).together


def names_tasks(name):
    """The roles' tasks a host runs when only the hosts its configuration names changed ("" when
    the phase has none: the whole phase runs there)."""
    return "" if name.startswith("hook:") else phase(name).names_tasks


def role_options(role, roles_dir=COLLECTION_ROOT / "roles"):
    """Every option a role declares (meta/argument_specs.yml, all entry points), with those of the
    roles it depends on (meta/main.yml)."""
    return _role_options(role, str(roles_dir))


@functools.lru_cache(maxsize=None)
def _role_options(role, roles_dir):
    role = _short(role)
    names = set(_declared(role, roles_dir))
    for dep in _dependencies(role, roles_dir):
        names |= _role_options(dep, roles_dir)
    return frozenset(names)


def _short(role):
    return role.rsplit(".", 1)[-1]


@functools.lru_cache(maxsize=None)
def _declared(role, roles_dir):
    """The options one role declares itself (meta/argument_specs.yml, all entry points)."""
    specs = _yaml(Path(roles_dir) / role / "meta" / "argument_specs.yml").get("argument_specs") or {}
    return frozenset(k for entry in specs.values() for k in ((entry or {}).get("options") or {}))


def _dependencies(role, roles_dir):
    return [_short(dep["role"] if isinstance(dep, dict) else dep)
            for dep in _yaml(Path(roles_dir) / role / "meta" / "main.yml").get("dependencies") or ()]


def _yaml(path):
    try:
        return read_yaml(path) or {}
    except FileNotFoundError:
        return {}


# --- what a phase reads -----------------------------------------------------------------------
# A phase's inputs are the settings its roles read, not every cluster-wide setting: changing the
# network plugin must re-run the network phase, not the PKI. What a role reads is found in its
# files (tasks, templates, handlers, defaults, vars, files): every name in them that some role
# declares as an option, followed through the derived settings it uses (a `tke_*` default of the
# tke role, or any role's default or var, whose definition names other settings). Over-inclusive
# by design (a name in a comment counts): a phase may re-run for a setting it only mentions, never
# skip one it reads. The roles it reaches are its own, their meta dependencies and the roles their
# tasks include (`offline_pot.tke.<role>`), less the tke role's own files (the phase machinery,
# whose settings steer the run: ORCHESTRATION_VARS); the tke role's defaults count by name only.
def _role_names(roles_dir):
    return frozenset(p.name for p in Path(roles_dir).iterdir() if (p / "meta").is_dir())


@functools.lru_cache(maxsize=None)
def _role_text(role, roles_dir):
    """A role's own files, as one text."""
    return "\n".join(path.read_text(encoding="utf-8", errors="replace")
                     for path in sorted((Path(roles_dir) / role).rglob("*")) if path.is_file())


@functools.lru_cache(maxsize=None)
def _role_words(role, roles_dir):
    """The names used anywhere in a role's own files."""
    return _words(_role_text(role, roles_dir))


@functools.lru_cache(maxsize=None)
def _reached_roles(roles, roles_dir):
    """roles, their dependencies and the collection's roles their files include, less tke."""
    known = _role_names(roles_dir)
    seen, todo = set(), [_short(r) for r in roles]
    while todo:
        role = todo.pop()
        if role in seen or role == CLUSTER_ROLE or role not in known:
            continue
        seen.add(role)
        todo += _dependencies(role, roles_dir)
        todo += re.findall(r"offline_pot\.tke\.(\w+)", _role_text(role, roles_dir))
    return frozenset(seen)


@functools.lru_cache(maxsize=None)
def _definitions(roles_dir):
    """name -> the names its definition uses, for every role's defaults and vars."""
    out = {}
    for role in _role_names(roles_dir):
        for kind in ("defaults", "vars"):
            for path in sorted((Path(roles_dir) / role / kind).glob("*.yml")):
                for key, value in (_yaml(path) or {}).items():
                    out[key] = out.get(key, frozenset()) | _words(json.dumps(value, default=str))
    return out


@functools.lru_cache(maxsize=None)
def _all_options(roles_dir):
    return frozenset(k for role in _role_names(roles_dir) for k in _declared(role, roles_dir))


def read_names(roles, extra=frozenset(), roles_dir=COLLECTION_ROOT / "roles"):
    """The settings (options some role declares) that roles read, directly or through derived
    settings; extra: more names used (the phase entry's own variables)."""
    roles_dir = str(roles_dir)
    reached = _reached_roles(tuple(roles), roles_dir)
    words = set(extra).union(*(_role_words(r, roles_dir) for r in reached))
    definitions = _definitions(roles_dir)
    todo = list(words & set(definitions))
    while todo:
        for w in definitions.get(todo.pop(), ()):
            if w not in words:
                words.add(w)
                todo.append(w)
    own = set().union(*(_declared(r, roles_dir) for r in reached))
    return frozenset(own | (words & _all_options(roles_dir)))


def input_options(name):
    """The variables that are a phase's inputs: what its roles read (read_names; a hook has none:
    its input is its file)."""
    if name.startswith("hook:"):
        return frozenset()
    p = phase(name)
    return read_names(p.roles, p.entry_words)


# Variables that steer the install run itself (resume, skip, force, where the hooks are): they are
# no phase's input, or a run with -e tke_resume=false would make every later run redo every phase.
ORCHESTRATION_VARS = frozenset({"tke_resume", "tke_skip_phases", "force_phases", "tke_hooks_dir"})


def input_names(names, options, exclude=()):
    """The names among names that are a phase's inputs: its options, less the orchestration
    variables and exclude (what this run registered or set_fact'ed)."""
    return sorted(k for k in names if k in options and k not in ORCHESTRATION_VARS and k not in exclude)


def select_inputs(host_vars, options):
    """The variables of one host that are a phase's inputs."""
    return {k: host_vars[k] for k in input_names(host_vars, options)}


def named_groups(name, host, groups):
    """The groups whose hosts the phase's configuration on host names (tke_phase_names)."""
    out = []
    for group, named in (phase(name).names_groups if not name.startswith("hook:") else ()):
        if group == "all" or host in groups.get(group, ()):
            out += [g for g in named if g not in out]
    return tuple(out)


def site_names(name, hostvars, groups, host):
    """What a phase's configuration on host says about other hosts: for each host of the groups it
    names there (named_groups), its groups and addresses. Part of the host's fingerprint, so adding
    or removing such a host re-runs the phase on the hosts that name it."""
    wanted = named_groups(name, host, groups)
    hosts = sorted({h for g in wanted for h in groups.get(g, ())})
    out = []
    for other in hosts:
        hv = hostvars.get(other, {})
        out.append([other, sorted(g for g in wanted if other in groups.get(g, ())),
                    str(hv.get("ansible_host") or other), str(hv.get("tke_node_ip") or "")])
    return out


def fingerprint(key, *parts):
    """HMAC-SHA256, keyed with the site's journal key (journal_key), over a canonical JSON form of
    the parts (values that are not JSON become strings). Keyed: a phase's inputs hold secrets (the
    registry's password, components' values), and the hosts keep the fingerprint in a file, so
    without the key nobody can test guesses of a secret against it."""
    blob = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hmac.new(key, blob.encode(), hashlib.sha256).hexdigest()


def journal_key(pki_dir, make=True):
    """The site's journal key (k8s_pki/store.py JOURNAL_KEY) from the controller's PKI store, made
    there when the store has none (make false, check mode: a key of this run only stands in,
    nothing recorded with it is kept)."""
    path = os.path.join(pki_dir, JOURNAL_KEY)
    key = read_text(path).encode()
    if not journal_key_ok(key):
        key = new_journal_key()
        if make:
            write_private(path, key.decode())
    return key.strip()


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


def decide(journal, phase, fingerprints, force=(), skip=(), resume=True, machines=None, records=None,
           names=None, drift=None, inputs=None):
    """Which hosts run the phase. fingerprints: host -> fingerprint of its inputs now; machines:
    host -> its machine id now (/etc/machine-id), when known; records: host -> {phase: fingerprint}
    the host itself records as done (parse_host_read), when known; names: host -> the hosts the
    phase's configuration names there now (site_names; one list: the same on every host), to say
    why a done host runs again; drift: host -> {phase: [state probes that differ from the host's
    record]} (parse_host_drift), when known: a host whose state drifted runs the phase again;
    inputs: host -> the fingerprint of its inputs less the hosts its configuration names (the
    journal records it beside the fingerprint), when known.

    Returns {"run": [hosts], "skip": {host: reason}, "reinstalled": [hosts], "why": {host: reason},
    "names_only": [hosts]} with hosts in the given order. A host whose machine id differs from the
    one recorded with the phase is another machine under the same name; a host that does not
    record the phase done with this fingerprint was wiped or rebuilt (or never finished it):
    either way the phase runs there again ("reinstalled").

    A done host whose fingerprint changed only in the hosts its configuration names (its inputs
    fingerprint is the one recorded, the host records the phase done as the journal does, its
    state did not drift) is "names_only": a phase with names tasks (tke_phase_names_tasks) runs
    those alone there.

    A phase that runs together runs on every host as soon as one of them needs it again - with
    one exception: hosts that are new to the phase (no journal entry: hosts added to the
    inventory, docs/lifecycle.md) do not bring along the hosts that have it done with unchanged
    inputs. A done host that runs it again, names_only included, does: the pki phase's authority
    renews, on the controller, any certificate near its end whoever holds it, so every holder must
    be in the run. When the phase runs on every host, no host is names_only: each runs all of it.
    """
    run, skipped, reinstalled, why, names_only = [], {}, [], {}, []
    done = journal.get("phases", {}).get(phase, {})
    machines, records, inputs = machines or {}, records or {}, inputs or {}
    for host, fp in fingerprints.items():
        entry = done.get(host, {})
        drifted = ((drift or {}).get(host) or {}).get(phase)
        if phase in skip:
            skipped[host] = "skipped: named in tke_skip_phases"
        elif phase in force or not resume:
            run.append(host)
            why[host] = "forced" if phase in force else "resume off"
        elif entry.get("fingerprint") == fp and (_other_machine(entry, machines.get(host))
                                                 or _not_on_host(phase, fp, records.get(host))):
            reinstalled.append(host)
            run.append(host)
            why[host] = "reinstalled"
        elif entry.get("fingerprint") == fp and drifted:
            run.append(host)
            why[host] = "drifted: " + ", ".join(drift[host][phase])
        elif entry.get("fingerprint") == fp:
            skipped[host] = f"done {entry.get('done_at', '')}, inputs unchanged".replace(" ,", ",")
        else:
            run.append(host)
            why[host] = _why_changed(entry, names.get(host) if isinstance(names, dict) else names)
            if (entry.get("inputs") and entry["inputs"] == inputs.get(host) and not drifted
                    and not _other_machine(entry, machines.get(host))
                    and not _not_on_host(phase, entry.get("fingerprint"), records.get(host))):
                names_only.append(host)
                if why[host] == "inputs changed":   # the same hosts, another address or group
                    why[host] = "the addresses or groups of the hosts its configuration names changed"
    if run and runs_together(phase) and any(why[h] != "new" for h in run):
        for host in fingerprints:
            why.setdefault(host, "runs together with " + ", ".join(run))
        run, skipped, names_only = list(fingerprints), {}, []
    for host in names_only if names_tasks(phase) else ():
        why[host] += ": only what names them"
    return {"run": run, "skip": skipped, "reinstalled": reinstalled, "why": why, "names_only": names_only}


def _why_changed(entry, names):
    """Why a host runs a phase it may have done: new to it, or what changed in its inputs."""
    if not entry:
        return "new"
    before = entry.get("names")
    if names is None or before is None or sorted(before) == sorted(names):
        return "inputs changed"
    added, removed = sorted(set(names) - set(before)), sorted(set(before) - set(names))
    return "its configuration names " + "; ".join(
        part for part in (", ".join(added) + " (added)" if added else "",
                          ", ".join(removed) + " (removed)" if removed else "") if part)


def explain(decision):
    """The hosts that run, grouped by why (decide's "why"), for the phase's banner."""
    groups = {}
    for host in decision["run"]:
        why = decision["why"].get(host, "inputs changed")
        if why.startswith("drifted: "):
            why = f"its state differs from what the phase recorded there ({why[len('drifted: '):]})"
        groups.setdefault(WHY_TEXT.get(why, why), []).append(host)
    return "; ".join(f"{', '.join(hosts)}: {reason}" for reason, hosts in groups.items())


# decide's short reasons said in full in the phase's banner
WHY_TEXT = {"reinstalled": "not the machine the journal recorded (/etc/machine-id changed, or the host does not "
                           "record the phase done: reinstalled?), so the phase runs again"}


def _other_machine(entry, machine):
    return bool(machine and entry.get("machine") and entry["machine"] != machine)


def _not_on_host(phase, fp, record):
    return record is not None and not phase.startswith("hook:") and record.get(phase) != fp


def parse_host_read(stdout, record_dir):
    """The output of roles/tke/tasks/host_read.yml's raw read: the machine id on the first line,
    then `<record_dir>/<phase>:<fingerprint>` lines (grep -r), one per phase the host records done
    (phase_end.yml writes them; a wiped or rebuilt host has none). Returns (machine id or None,
    {phase: fingerprint}). The state records beside them (`<phase>.state`, parse_host_drift) are
    not phases."""
    lines = (stdout or "").splitlines()
    machine = lines[0].strip() if lines else ""
    record, prefix = {}, record_dir.rstrip("/") + "/"
    for line in lines[1:]:
        path, sep, fp = line.strip().partition(":")
        if sep and path.startswith(prefix) and not path.endswith(STATE_SUFFIX):
            record[path[len(prefix):]] = fp
    return machine or None, record


# A phase's state record on a host (docs/install.md, "Evidence from the hosts"): what the phase's
# roles keep there (a managed block, a configuration file, a service active) as named probes -
# shell commands whose output's digest stands for that state. phase_end.yml writes the probes
# (<phase>.probe, a shell script printing `<name> <digest>` per probe) and their digests when the
# phase is done (<phase>.state); host_read.yml runs every phase's probes again at the start of a
# run and prints `now:<record_dir>/<phase>:<name> <digest>`. A digest that differs is drift.
STATE_SUFFIX = ".state"
PROBE_SUFFIX = ".probe"
NOW_PREFIX = "now:"


# Beside the phase records on every host, root-only: a random salt the state probes hash first, so
# a probe's digest (of a configuration file that holds a password, say) cannot be tested against
# guesses by whoever sees it (phase_end.yml makes it; host_read.yml prints no hidden file).
SALT_NAME = ".salt"


def probe_script(probes, salt):
    """The <phase>.probe script for {name: shell command}: the host's salt (the file salt, no
    newline: record_script makes it) read once, then one line per probe, sorted by name, printing
    the name and the first 16 hex digits of the SHA-256 of the salt followed by the command's
    output. Besides the probes' own commands, one program a probe (sha256sum): the rest are the
    shell's builtins (the probes run at every run's start, on every host, for every phase; where a
    program costs, as on an emulated host, that is most of the read's time)."""
    for name in probes:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
            raise ValueError(f"state probe name {name!r}: letters, digits, _ . - only")
    if not probes:
        return ""
    return f"_tke_salt=; read -r _tke_salt < {shlex.quote(salt)}\n" + "".join(
        f"printf '%s ' {name}; {{ printf %s \"$_tke_salt\"; {{ {probes[name]}; }} 2>&1; }} | sha256sum"
        f" | {{ read -r _tke_d _; printf '%.16s\\n' \"$_tke_d\"; }}\n"
        for name in sorted(probes))


def record_script(record_dir, phase, host_records, fingerprint, probe, salt):
    """The shell command that records a phase done on a host (phase_end.yml runs it with raw: no
    module transfer), printing `recorded` when it wrote something, else `unchanged`:
    - host_records ({file name: text}) beside the record directory, world-readable (0644: the site
      this host belongs to, the Kubernetes version installed; site_identity.py: no secret);
    - root-only (umask 077) in record_dir: `<phase>` holding the fingerprint (keyed:
      fingerprint()), and the state the phase keeps there, `<phase>.probe` (probe_script()) with
      its digests now, `<phase>.state` (salted with the host's own random salt, made here once:
      SALT_NAME), which the next run's host_read.yml compares (parse_host_drift); a phase with no
      probe removes both.
    Each file is written only when its content differs (write to .new, then rename)."""
    q = shlex.quote
    d = q(record_dir)
    lines = ["umask 022; r=unchanged;"]
    for name, text in sorted(host_records.items()):
        f = q(os.path.join(os.path.dirname(record_dir.rstrip("/")), name))
        lines.append(f"f={f}; t={q(text)}; if [ \"$(cat $f 2>/dev/null)\" != \"$t\" ]; then mkdir -p -m 0755 {d} && "
                     f"printf '%s\\n' \"$t\" > $f.new && mv -f $f.new $f && r=recorded; fi;")
    f = q(os.path.join(record_dir, phase))
    lines.append(f"umask 077; f={f}; fp={q(fingerprint)}; if [ \"$(cat $f 2>/dev/null)\" != \"$fp\" ]; then "
                 f"mkdir -p -m 0755 {d} && printf '%s\\n' \"$fp\" > $f.new && mv -f $f.new $f && r=recorded; fi;")
    lines.append(f"p=$f{PROBE_SUFFIX}; s=$f{STATE_SUFFIX};")
    probe = (probe or "").strip()
    if probe:
        lines.append(f"t={q(probe)}; salt={q(salt)};")
        lines.append(f"if [ ! -s $salt ]; then mkdir -p -m 0755 {d} && od -An -tx1 -N32 /dev/urandom | tr -d ' \\n' > $salt.new && "
                     "mv -f $salt.new $salt && r=recorded; fi;")
        lines.append("if [ \"$(cat $p 2>/dev/null)\" != \"$t\" ]; then printf '%s\\n' \"$t\" > $p.new && mv -f $p.new $p && "
                     "r=recorded; fi;")
        lines.append("now=$(sh $p 2>/dev/null); if [ \"$(cat $s 2>/dev/null)\" != \"$now\" ]; then "
                     "printf '%s\\n' \"$now\" > $s.new && mv -f $s.new $s && r=recorded; fi;")
    else:
        lines.append("if [ -e $p ] || [ -e $s ]; then rm -f $p $s && r=recorded; fi;")
    lines.append("echo $r")
    return "\n".join(lines)


def _probe_digests(stdout, record_dir):
    """The raw read's state lines (host_read.yml): ({phase: {probe: digest}} as the host recorded
    them when the phase was done, {phase: {probe: digest}} as its probes print them now)."""
    prefix = record_dir.rstrip("/") + "/"
    recorded, now = {}, {}
    for line in (stdout or "").splitlines()[1:]:
        line = line.strip()
        into = now if line.startswith(NOW_PREFIX) else recorded
        path, sep, rest = line[len(NOW_PREFIX):].partition(":") if into is now else line.partition(":")
        if not sep or not path.startswith(prefix):
            continue
        phase = path[len(prefix):]
        if into is recorded:
            if not phase.endswith(STATE_SUFFIX):
                continue
            phase = phase[:-len(STATE_SUFFIX)]
        name, _sp, digest = rest.partition(" ")
        into.setdefault(phase, {})[name] = digest.strip()
    return recorded, now


def _differing(a, b):
    return sorted(n for n in set(a) | set(b) if a.get(n) != b.get(n))


def parse_host_drift(stdout, record_dir):
    """{phase: [names of the probes whose digest now differs from the recorded one]} from the raw
    read (a probe recorded and no longer printed, or printed and never recorded, drifted too).
    Phases without a state record (recorded before this existed) have no entry."""
    recorded, now = _probe_digests(stdout, record_dir)
    return {phase: _differing(states, now.get(phase, {})) for phase, states in recorded.items()}


def state_changes(before, after, record_dir):
    """What a run changed on a host, in its phases' state probes' terms: {phase: [probe names]}
    for every phase whose probes print something else at the run's end (`after`, the same raw
    read as host_read.yml's) than at its start (`before`); a probe new or gone counts, a phase
    with none changed has no entry."""
    dummy, start = _probe_digests(before, record_dir)
    dummy, end = _probe_digests(after, record_dir)
    changed = {phase: _differing(start.get(phase, {}), end.get(phase, {})) for phase in set(start) | set(end)}
    return {phase: names for phase, names in sorted(changed.items()) if names}


def parse_host_files(stdout, base_dir):
    """The files directly in base_dir (the phase records' parent: the site identity, the installed
    Kubernetes version, site_identity.py) as the same raw read shows them: {name: content}."""
    out, prefix = {}, base_dir.rstrip("/") + "/"
    for line in (stdout or "").splitlines()[1:]:
        path, sep, text = line.strip().partition(":")
        name = path[len(prefix):] if path.startswith(prefix) else ""
        if sep and name and "/" not in name:
            out[name] = text.strip()
    return out


def selected(run_tags=("all",), skip_tags=()):
    """The phases a run with these --tags / --skip-tags (ansible_run_tags, ansible_skip_tags) goes
    through, by the tags of their entries in install.yml (Ansible's rule: a play runs when it has a
    tag asked for, or 'always', or 'all' is asked for, and no tag skipped)."""
    run, skip = set(run_tags or ("all",)), set(skip_tags or ())
    return [p.name for p in PHASES if p.name in USER_PHASES
            and (("all" in run and "never" not in p.tags) or run & set(p.tags) or "always" in p.tags)
            and not skip & set(p.tags)]


def pattern_hosts(pattern, groups):
    """The hosts a phase's play pattern names (install.yml's tke_phase_hosts: 'all', group names,
    joined by ':'), in the inventory's order; None for a pattern of another form (its play decides
    for itself)."""
    names = set()
    for part in str(pattern).split(":"):
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", part):
            return None
        names.update(groups.get(part) or ())
    return [h for h in groups.get("all", ()) if h in names]


def banner(phase, decision, unchecked=None):
    """A phase's line as its start says it: where it runs, why (unless a fresh install), and which
    hosts skip it and why; in check mode, where it would run but is not checked and why
    (unchecked: {host: reason})."""
    number, total = phase_number(phase)
    parts = [f"phase {number}/{total} {phase}: running on {', '.join(decision['run']) or 'no host'}"]
    if decision["run"] and (decision["skip"] or {decision["why"][h] for h in decision["run"]} != {"new"}):
        parts[0] += f" ({explain(decision)})"
    for what, hosts in (("skipping", decision["skip"]), ("check mode, not checked on", unchecked or {})):
        for reason in sorted(set(hosts.values())):
            parts.append(f"{what} {', '.join(h for h, r in hosts.items() if r == reason)} ({reason})")
    return "; ".join(parts)


def unchecked(name, hosts, records, groups, skip=(), this_run=USER_PHASES):
    """Check mode (docs/install.md, "Preview with --check"): the hosts among `hosts` on which the
    phase `name` cannot be checked, each with why - {host: reason}. A phase's tasks check what its
    earlier tasks and the earlier phases made (the pack's repository, certificates, units, running
    services, the API server): on a host that does not record this phase done, or an earlier one it
    takes part in, that is not there, so the phase is not checked there but said (a phase that only
    reads the hosts, tke_phase_reads_only, makes nothing: it is checked on a host new to it, and a
    later phase does not wait for it). A host also waits for the first master (groups['masters'][0],
    when it is read this run: `records` has it), which leads the cluster: the phases before this
    one it takes part in must be done there. A phase
    whose hosts run it together is not checked on any of them when one cannot be. Only the phases
    this run goes through (`this_run`) count, less those the site does itself (`skip`): a phase a
    run leaves out brings nothing, its work is checked as the host has it. `records`: {host: the
    phases it records done (parse_host_read)}."""
    # (validate runs on the controller: no host records it)
    order = [p for p in PHASES if p.name in this_run and p.name not in skip and p.name != "validate"]
    upto = order[:[p.name for p in order].index(name) + 1] if name in this_run and name not in skip else order

    # the phases up to this one that make something, each with the hosts it runs on (once, not per host)
    making = [(p.name, pattern_hosts(p.hosts, groups) or ()) for p in upto if not p.reads_only]

    def lacking(host, phases):
        return [n for n, members in phases if host in members and n not in (records.get(host) or {})]

    first = (groups.get("masters") or [None])[0]
    # what the first master lacks of the earlier phases: the same for every host it leads
    lead = lacking(first, [m for m in making if m[0] != name]) if first in records else []
    out = {}
    for host in hosts:
        own = lacking(host, making)
        if own:
            # the first earlier phase it lacks is the cause; without one, the phase's own work is not there
            earlier = [n for n in own if n != name]
            out[host] = f"{earlier[0]} not done there yet" if earlier else "not done there yet"
        elif lead and host != first:
            out[host] = f"{lead[0]} not done on {first}, the first master, yet"
    if out and runs_together(name):
        cannot = ", ".join(out)
        for host in hosts:
            out.setdefault(host, f"runs together with {cannot}")
    return {h: out[h] for h in hosts if h in out}


def record(journal, phase, fingerprints, now, machines=None, names=None, seconds=None, inputs=None):
    """Mark the phase done on these hosts (with their machine ids when known, the hosts the
    phase's configuration names - host -> hosts, or one list for every host -, the fingerprint of
    their inputs less those (decide's inputs) and how many seconds the phase took, when given);
    returns the updated journal (the input is not changed)."""
    new = json.loads(json.dumps(journal))
    entry = new.setdefault("phases", {}).setdefault(phase, {})
    for host, fp in fingerprints.items():
        entry[host] = {"fingerprint": fp, "done_at": now}
        if (machines or {}).get(host):
            entry[host]["machine"] = machines[host]
        named = names.get(host) if isinstance(names, dict) else names
        if named is not None:
            entry[host]["names"] = sorted(named)
        if (inputs or {}).get(host):
            entry[host]["inputs"] = inputs[host]
        if seconds is not None:
            entry[host]["seconds"] = seconds
    new["step"] = step(new)
    return new


def last_seconds(journal, phase, hosts=None):
    """How long the phase last took (the longest recorded time among these hosts, or all of its
    hosts when none of these has one); None when the journal has no time for it. The progress
    display's estimate."""
    entry = journal.get("phases", {}).get(phase, {})
    times = {h: e["seconds"] for h, e in entry.items() if isinstance(e, dict) and isinstance(e.get("seconds"), (int, float))}
    chosen = [times[h] for h in hosts or () if h in times] or list(times.values())
    return max(chosen) if chosen else None


def forget(journal, hosts):
    """The journal without these hosts (a reset): their entries leave every phase, a phase left
    without hosts leaves the journal, and when no host is left in any phase the hooks' entries go
    too (the site starts again from nothing). The step follows. Returns (journal, the hosts it
    had) (the input is not changed)."""
    new, hosts, had = json.loads(json.dumps(journal)), set(hosts), set()
    phases = new.setdefault("phases", {})
    for name in list(phases):
        gone = hosts & set(phases[name])
        had |= gone
        for host in gone:
            del phases[name][host]
        if not phases[name]:
            del phases[name]
    if not any(not name.startswith("hook:") for name in phases):
        phases.clear()
    for name in list(new.get("running", {})):
        if hosts & set(new["running"][name].get("fingerprints", {})):
            del new["running"][name]
    new["step"] = step(new)
    return new, sorted(had)


def step(journal):
    """TKE's `step`: how far the install got - the position of the furthest phase done (0: none).

    Phases without hosts in an inventory (etcd without an etcd group) never get an entry, so
    this is the furthest phase reached, not a count of entries.
    """
    done = [PHASE_NAMES.index(name) + 1 for name in journal.get("phases", {}) if name in PHASE_NAMES]
    return max(done, default=0)


def hook_fingerprint(hooks_dir, name):
    """An install-level hook's fingerprint, as its journal entry holds it ({"controller": the
    SHA-256 of the hook file}), or None when the site has no such hook."""
    path = Path(hooks_dir) / f"{name}.yml"
    if not path.is_file():
        return None
    return {"controller": hashlib.sha256(path.read_bytes()).hexdigest()}


def rebuild(records, fingerprints, hooks, now, machines=None, names=None, inputs=None):
    """A lost journal rebuilt from what the hosts record (playbooks/adopt.yml): a phase is done on
    a host that records it done with the fingerprint its inputs have now (a host whose record
    differs runs the phase again at the next install, as after an inventory change). An
    install-level hook counts as run when the site has it and the install got past it: a phase
    after it is done on some host (the last hook: the phase right before it); hooks record nothing
    on hosts. records: host ->
    {phase: fingerprint} (parse_host_read); fingerprints: phase -> {host: fingerprint now};
    hooks: hook phase -> hook_fingerprint(); names: phase -> {host: the hosts its configuration
    names there}; inputs: phase -> {host: the fingerprint of its inputs less those}.
    Returns (journal, {phase: [hosts that run it again]})."""
    journal, again = empty(), {}
    for p in PHASES:
        if p.name.startswith("hook:"):
            continue
        now_fp = fingerprints.get(p.name, {})
        done = {h: fp for h, fp in now_fp.items() if (records.get(h) or {}).get(p.name) == fp}
        stale = sorted(h for h in now_fp if h not in done and p.name in (records.get(h) or {}))
        if stale:
            again[p.name] = stale
        if done:
            journal = record(journal, p.name, done, now, machines=machines, names=(names or {}).get(p.name),
                             inputs=(inputs or {}).get(p.name))
    for i, p in enumerate(PHASES):
        if p.name.startswith("hook:") and hooks.get(p.name):
            later = [q.name for q in PHASES[i + 1:] if not q.name.startswith("hook:")]
            earlier = [q.name for q in PHASES[:i] if not q.name.startswith("hook:")][-1:]
            if any(journal["phases"].get(q) for q in later or earlier):
                journal = record(journal, p.name, hooks[p.name], now)
    return journal, again

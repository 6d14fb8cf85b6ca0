# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Controller side, private to the collection: the components of a site (docs/components.md).

An inventory declares components in `components_list` (roles/components/meta/argument_specs.yml
types each entry); this file holds the rules between entries and the site pack (a duplicate
name, an unknown or disabled dependency, a cycle, a source the pack does not have) and the plan of
a run: which components are applied, in dependency order, and which are removed, in reverse
dependency order. Pure, except pack_components() which reads a pack's manifest.
"""
from __future__ import annotations

import json
import os
import platform
import re
import tarfile

from ansible_collections.offline_pot.tke.plugins.module_utils.pack_manifest import binary_arch, deb_arch
from ansible_collections.offline_pot.tke.plugins.module_utils.precheck_rules import version_tuple

VARIABLE = "components_list"
# Component names are label values (tke.offline-pot.io/part-of) and object names: RFC 1123 labels.
NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet")
DEFAULT_TIMEOUT = 300
# The label every object of a component carries (the prune selector): its value is the component's.
PART_OF = "tke.offline-pot.io/part-of"
PREFIX = "component-"


class PlanError(Exception):
    """Problems of the components, one line each."""

    def __init__(self, lines):
        super().__init__("; ".join(lines))
        self.lines = lines


def normalize(entry: dict) -> dict:
    """An entry with every field given its default (the argument spec's defaults, applied here
    because a role's argument-spec check does not change the variables it checks)."""
    ready = dict(entry.get("ready") or {})
    namespace = entry.get("namespace") or "default"
    return {
        "name": entry.get("name"),
        "source": entry.get("source") or entry.get("name"),
        "namespace": namespace,
        "values": dict(entry.get("values") or {}),
        "enabled": entry.get("enabled", True) is not False,
        "depends_on": list(entry.get("depends_on") or []),
        # k8s_wait's object references: the workloads are in the component's namespace by default
        "ready": {"workloads": [{"api_version": "apps/v1", "kind": w.get("kind"), "name": w.get("name"),
                                 "namespace": w.get("namespace") or namespace}
                                for w in ready.get("workloads") or [] if isinstance(w, dict)],
                  "timeout": int(ready.get("timeout") or DEFAULT_TIMEOUT)},
        "label": {PART_OF: PREFIX + str(entry.get("name"))},
    }


def _where(i: int, entry) -> str:
    name = entry.get("name") if isinstance(entry, dict) else None
    return f"{VARIABLE}[{i}]" + (f" ({name})" if name else "")


def _cycle(graph: dict[str, list[str]]) -> list[str]:
    """One dependency cycle as a path a -> b -> a, or [] (depth-first search, colours)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for d in graph.get(n, []):
            if d not in graph:
                continue
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if not state.get(d):
                found = visit(d)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return []

    for n in sorted(graph):
        if not state.get(n):
            found = visit(n)
            if found:
                return found
    return []


def problems(components, pack_components=None) -> list[str]:
    """Every problem between the entries of components_list (and with the pack's components when
    pack_components, the manifest's contents.components, is given); each names the entry."""
    if components is None:
        return []
    if not isinstance(components, list):
        return [f"{VARIABLE}: must be a list of components (docs/components.md)"]
    out = []
    seen: dict[str, int] = {}
    entries = []
    for i, entry in enumerate(components):
        where = _where(i, entry)
        if not isinstance(entry, dict):
            out.append(f"{where}: must be a mapping with at least a name")
            continue
        name = entry.get("name")
        if not isinstance(name, str) or not NAME_RE.match(name):
            out.append(f"{where}: name {name!r} must be a lowercase RFC 1123 label (a-z, 0-9, -; at most 63)")
            continue
        if name in seen:
            out.append(f"{where}: name {name!r} is used twice (also {VARIABLE}[{seen[name]}])")
            continue
        seen[name] = i
        namespace = entry.get("namespace")
        if namespace is not None and not (isinstance(namespace, str) and NAME_RE.match(namespace)):
            out.append(f"{where}: namespace {namespace!r} must be a lowercase RFC 1123 label")
        for w in (entry.get("ready") or {}).get("workloads") or []:
            if not isinstance(w, dict) or w.get("kind") not in WORKLOAD_KINDS or not w.get("name"):
                out.append(f"{where}: ready.workloads entry {w!r} needs kind ({', '.join(WORKLOAD_KINDS)}) and name")
        entries.append((i, normalize(entry)))
    by_name = {c["name"]: c for dummy, c in entries}
    for i, c in entries:
        where = f"{VARIABLE}[{i}] ({c['name']})"
        for dep in c["depends_on"]:
            if dep not in by_name:
                out.append(f"{where}: depends_on {dep!r}, which is not a component of {VARIABLE}")
            elif c["enabled"] and not by_name[dep]["enabled"]:
                out.append(f"{where}: depends_on {dep!r}, which is disabled (enabled: false)")
        if pack_components is not None and c["source"] not in {p.get("name") for p in pack_components}:
            have = ", ".join(sorted(p.get("name", "?") for p in pack_components)) or "none"
            out.append(f"{where}: source {c['source']!r} is not a component of the site pack (the pack has: {have})")
    cycle = _cycle({c["name"]: c["depends_on"] for dummy, c in entries})
    if cycle:
        out.append(f"{VARIABLE}: depends_on makes a cycle: {' -> '.join(cycle)}")
    return out


def order(components: list[dict]) -> list[dict]:
    """Normalized components, each after the ones it depends on (ties: the inventory's order)."""
    done: list[dict] = []
    names: set[str] = set()
    pending = [normalize(c) for c in components]
    while pending:
        ready = [c for c in pending if all(d in names for d in c["depends_on"])]
        if not ready:  # a cycle: problems() names it; never reached after validation
            raise PlanError([f"{VARIABLE}: depends_on makes a cycle among "
                             + ", ".join(c["name"] for c in pending)])
        for c in ready:
            done.append(c)
            names.add(c["name"])
        pending = [c for c in pending if c["name"] not in names]
    return done


def plan(components, pack_components, state="present", only=None, confirm=False) -> dict:
    """{"apply": [...], "remove": [...]} for a run, each a list of normalized components with
    `files` and `images` from the pack: apply in dependency order, remove in reverse order.

    present: enabled components applied, disabled ones removed. absent: the components named in
    only removed, or with no only, every component (confirm must be true). Raises PlanError."""
    only = [only] if isinstance(only, str) else list(only or [])
    only = [n for part in only for n in str(part).split(",") if n.strip()]
    lines = problems(components or [], pack_components)
    if state not in ("present", "absent"):
        lines.append(f"components_state: {state!r} is neither present nor absent")
    ordered = order(components or []) if not lines else []
    names = {c["name"] for c in ordered}
    unknown = [n for n in only if n not in names]
    if unknown and not lines:
        lines.append(f"components_only: {', '.join(unknown)} not in {VARIABLE} "
                     f"(components: {', '.join(sorted(names)) or 'none'})")
    if lines:
        raise PlanError(lines)
    pack = {p["name"]: p for p in pack_components or []}
    for c in ordered:
        src = pack.get(c["source"], {})
        c["files"] = list(src.get("files") or [])
        c["images"] = list(src.get("images") or [])
        # a Helm chart ({file, name, version, sha256}) instead of manifest templates
        c["chart"] = src.get("chart")
    chosen = [c for c in ordered if not only or c["name"] in only]
    if state == "present":
        return {"apply": [c for c in chosen if c["enabled"]],
                "remove": [c for c in reversed(chosen) if not c["enabled"]]}
    if not only and not confirm:
        raise PlanError(["components_state=absent without components_only removes every component: "
                         "confirm with -e components_confirm=true, or name some with -e components_only=a,b"])
    leaving = {c["name"] for c in chosen}
    for c in ordered:
        if c["name"] not in leaving and c["enabled"]:
            needed = [d for d in c["depends_on"] if d in leaving]
            if needed:
                lines.append(f"components_only: {', '.join(needed)} is needed by {c['name']} (depends_on); "
                             f"remove {c['name']} too, or first")
    if lines:
        raise PlanError(lines)
    return {"apply": [], "remove": list(reversed(chosen))}


# Where a pod template is in each workload kind (and a bare Pod's own spec).
POD_SPEC_PATHS = {"Pod": ("spec",), "Deployment": ("spec", "template", "spec"),
                  "StatefulSet": ("spec", "template", "spec"), "DaemonSet": ("spec", "template", "spec"),
                  "ReplicaSet": ("spec", "template", "spec"), "Job": ("spec", "template", "spec"),
                  "CronJob": ("spec", "jobTemplate", "spec", "template", "spec")}


def object_images(obj) -> list[str]:
    """The images a rendered object runs: every container, init and ephemeral container of its pod
    template (core/v1 PodSpec), in order."""
    spec = obj if isinstance(obj, dict) else {}
    for key in POD_SPEC_PATHS.get(spec.get("kind"), ("-",)):
        spec = spec.get(key) if isinstance(spec, dict) else None
    if not isinstance(spec, dict):
        return []
    return [c["image"] for field in ("initContainers", "containers", "ephemeralContainers")
            for c in spec.get(field) or [] if isinstance(c, dict) and c.get("image")]


def pack_image_refs(component: dict, prefix: str, site_images=(), registry_domain: str = "") -> set[str]:
    """The image references a component may run: its own pack images under the prefix it is pushed
    or pre-seeded with (a pack image is `<namespace>/<name>:<tag>`; the prefix replaces its
    namespace), and the site's images (`<namespace>/<name>:<tag>`) in the site's registry."""
    own = {f"{prefix}/{i.split('/', 1)[-1]}" for i in component.get("images") or []}
    return own | {f"{registry_domain}/{i}" for i in site_images if registry_domain}


def image_problems(component: dict, objects, allowed) -> list[str]:
    """One line per image a component's objects run that the site pack does not carry for it."""
    out = []
    for obj in objects:
        meta = obj.get("metadata") or {}
        where = f"{obj.get('kind')} {meta.get('namespace') or component.get('namespace', 'default')}/{meta.get('name')}"
        for image in object_images(obj):
            if image not in allowed:
                have = ", ".join(sorted(allowed)) or "none"
                out.append(f"component {component['name']}: {where} runs image {image}, which the site pack "
                           f"does not carry for it (it may run: {have})")
    return out


def pack_components(pack: str) -> list[dict] | None:
    """The components the site pack's manifest lists (contents.components), read on the
    controller without unpacking: a pack directory, or a tar/tar.gz archive. None when it cannot
    be read here (a .tar.zst: the components phase checks again once the pack is verified)."""
    if not pack:
        return None
    manifest = None
    try:
        if os.path.isdir(pack):
            with open(os.path.join(pack, "manifest.json")) as f:
                manifest = json.load(f)
        elif os.path.isfile(pack) and not pack.endswith(".zst"):
            with tarfile.open(pack) as t:
                member = next((m for m in t if m.name.count("/") == 1 and m.name.endswith("/manifest.json")), None)
                f = t.extractfile(member) if member else None
                manifest = json.load(f) if f else None
    except (OSError, ValueError, tarfile.TarError):
        return None
    if not isinstance(manifest, dict):
        return None
    return list((manifest.get("contents") or {}).get("components") or [])


def pack_helm(manifest: dict, pack_dir: str, arch: str | None = None) -> dict | None:
    """The verified pack's helm for the controller (its manifest's binaries entry named helm of the
    controller's architecture, or arch's, the newest version): {path: its file in the pack, for the
    controller's own use; install: where the offline phase puts it on the hosts}; None when the pack
    carries none."""
    binaries = ((manifest or {}).get("contents") or {}).get("binaries") or []
    arch = arch or deb_arch(platform.machine())
    found = sorted((b for b in binaries if b.get("name") == "helm" and b.get("file") and binary_arch(b) == arch),
                   key=lambda b: version_tuple(b.get("version") or "0"))
    return {"path": os.path.join(pack_dir, found[-1]["file"]), "install": found[-1].get("install") or ""} \
        if found else None

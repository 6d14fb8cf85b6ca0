# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The offline site pack's manifest: what it lists, how a tree is checked against it.

Pure functions over files and dicts; used by the site_pack (build), site_pack_verify (controller
check before anything is installed) and pack_sync (host side) modules.
"""
from __future__ import annotations

import hashlib
import json
import os

from ansible_collections.offline_pot.tke.plugins.module_utils.atomic_file import copy_file

FORMAT_VERSION = 1
# a pack with another architecture's binaries (arch, bin-<arch>/): a collection that reads format 1
# only would take those for amd64's too, so such a pack says 2 and that collection refuses it
FORMAT_VERSIONS = (1, 2)
MANIFEST_NAME = "manifest.json"
# the manifest's signature (module_utils/pack_signature.py): next to it, never listed in it
SIGNATURE_NAME = "manifest.json.sig"
CHUNK = 1 << 20

# Options of a pack_sync task: validated by the action plugin, declared by the module too (the
# action passes them along with the selection it made, see plugins/modules/pack_sync.py).
SYNC_ARGS = dict(
    src=dict(type="path", required=True),
    dest=dict(type="path", required=True),
    prefix=dict(type="str", default=""),
    include=dict(type="list", elements="str", default=[]),
    exclude=dict(type="list", elements="str", default=[]),
    prune=dict(type="bool", default=True),
    install=dict(type="list", elements="dict", default=[]),
)


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def walk_files(root: str, exclude=(MANIFEST_NAME, SIGNATURE_NAME)) -> list[str]:
    """Every regular file under root as a sorted list of '/'-separated relative paths."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in filenames:
            rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
            if rel not in exclude:
                out.append(rel)
    return sorted(out)


# What tells a file unchanged since it was hashed, without reading it (as git's index and rsync's
# quick check do). scan_tree's files are written by the caller's own program (a build's stage, a
# host's copy of the pack); verify_tree's are the pack checked before it is used, so also the change
# time - which a write through this machine's file system moves (touch -d sets the modification
# time alone; docs/site_pack.md says what does not move it) - the inode and the device.
STAMP = ("size", "mtime_ns")
STRICT_STAMP = STAMP + ("ctime_ns", "ino", "dev")


def hashed(full: str, st: os.stat_result, known: dict | None, fields=STAMP) -> dict:
    """The file's entry {<fields>..., sha256}: the known entry's digest when the file's fields are
    the same as there, else the file read."""
    entry = {f: getattr(st, "st_" + f) for f in fields}
    if isinstance(known, dict) and known.get("sha256") and all(known.get(f) == v for f, v in entry.items()):
        return dict(entry, sha256=known["sha256"])
    return dict(entry, sha256=sha256_file(full))


def scan_tree(root: str, known: dict | None = None) -> dict[str, dict]:
    """relpath -> {size, mtime_ns, sha256} for every file under root; a file the same as in known
    (its size and modification time) is not read again (hashed())."""
    known = known or {}
    return {rel: hashed(os.path.join(root, rel), os.stat(os.path.join(root, rel)), known.get(rel))
            for rel in walk_files(root)}


def build_manifest(name: str, version: str, files: dict[str, dict], contents: dict) -> dict:
    """The manifest document: format, pack name/version, what is inside, every file."""
    several = any(binary_arch(b) != "amd64" for b in contents.get("binaries") or [])
    return {
        "format_version": FORMAT_VERSIONS[-1] if several else FORMAT_VERSION,
        "name": name,
        "version": version,
        "contents": contents,
        "files": [{"path": p, "size": files[p]["size"], "sha256": files[p]["sha256"]}
                  for p in sorted(files)],
    }


def dump_manifest(manifest: dict) -> str:
    return json.dumps(manifest, indent=1, sort_keys=True) + "\n"


def check_manifest(manifest) -> list[str]:
    """Structural problems of a manifest document (empty when it is usable)."""
    if not isinstance(manifest, dict):
        return ["manifest is not a JSON object"]
    errors = []
    if manifest.get("format_version") not in FORMAT_VERSIONS:
        errors.append(f"format_version {manifest.get('format_version')!r} is not one of "
                      f"{', '.join(map(str, FORMAT_VERSIONS))} (a pack of another collection version?)")
    for key in ("name", "version"):
        if not isinstance(manifest.get(key), str) or not manifest.get(key):
            errors.append(f"{key} is missing")
    files = manifest.get("files")
    if not isinstance(files, list):
        return errors + ["files is not a list"]
    for i, f in enumerate(files):
        if not isinstance(f, dict) or not isinstance(f.get("path"), str) \
                or not isinstance(f.get("size"), int) or not isinstance(f.get("sha256"), str):
            errors.append(f"files[{i}] needs path, size and sha256")
            continue
        p = f["path"]
        if p.startswith("/") or ".." in p.split("/") or p in (MANIFEST_NAME, SIGNATURE_NAME):
            errors.append(f"files[{i}]: path {p!r} is not a relative path inside the pack")
    return errors + component_errors(manifest)


def component_errors(manifest: dict) -> list[str]:
    """Each component the manifest lists (contents.components) has its files among the pack's
    files and its images among the pack's images (docs/components.md)."""
    contents = manifest.get("contents") if isinstance(manifest.get("contents"), dict) else {}
    digests = {f.get("path"): f.get("sha256") for f in manifest.get("files") or [] if isinstance(f, dict)}
    paths = set(digests)
    images = {f"{i.get('name')}:{i.get('tag')}" for i in contents.get("images") or [] if isinstance(i, dict)}
    errors = []
    for c in contents.get("components") or []:
        name = c.get("name") if isinstance(c, dict) else None
        if not name or not isinstance(c.get("files"), list) or not c["files"]:
            errors.append(f"contents.components: {c!r} needs a name and its files")
            continue
        errors += [f"component {name}: file {f} is not in the pack" for f in c["files"] if f not in paths]
        errors += [f"component {name}: image {i} is not in the pack" for i in c.get("images") or [] if i not in images]
        chart = c.get("chart")
        if chart is not None and (not isinstance(chart, dict) or chart.get("file") not in c["files"]
                                  or not chart.get("name") or not chart.get("version")
                                  or chart.get("sha256") != digests.get(chart.get("file"))):
            errors.append(f"component {name}: its chart {chart!r} is not one of its files with that sha256, "
                          "name and version")
    return errors


def file_index(manifest: dict) -> dict[str, dict]:
    return {f["path"]: f for f in manifest["files"]}


def compare(expected: dict[str, dict], actual: dict[str, dict]) -> list[dict]:
    """Differences between the manifest's files and what a tree holds, one entry per bad file:
    {path, problem: missing|truncated|size|altered, ...}. Extra files are not problems."""
    problems = []
    for path in sorted(expected):
        want = expected[path]
        have = actual.get(path)
        if have is None:
            problems.append({"path": path, "problem": "missing"})
        elif have["size"] != want["size"]:
            problems.append({"path": path, "problem": "truncated" if have["size"] < want["size"] else "size",
                             "expected_size": want["size"], "size": have["size"]})
        elif have["sha256"] != want["sha256"]:
            problems.append({"path": path, "problem": "altered", "expected_sha256": want["sha256"],
                             "sha256": have["sha256"]})
    return problems


def verify_tree(root: str, manifest: dict, known: dict | None = None) -> list[dict]:
    """Check every file the manifest lists under root: size first (cheap), then sha256. known:
    {path: entry} of files hashed before (hashed(), STRICT_STAMP); a file the same as there is
    not read again, and known is updated with what this call read."""
    expected = file_index(manifest)
    actual = {}
    known = {} if known is None else known
    for path, want in expected.items():
        full = os.path.join(root, path)
        try:
            st = os.stat(full)
        except FileNotFoundError:
            continue
        if st.st_size != want["size"]:
            actual[path] = {"size": st.st_size, "sha256": ""}
            continue
        known[path] = hashed(full, st, known.get(path), STRICT_STAMP)
        actual[path] = {"size": st.st_size, "sha256": known[path]["sha256"]}
    return compare(expected, actual)


def problem_lines(problems: list[dict]) -> list[str]:
    lines = []
    for p in problems:
        if p["problem"] == "missing":
            lines.append(f"{p['path']}: missing")
        elif p["problem"] in ("truncated", "size"):
            lines.append(f"{p['path']}: {p['problem']} ({p['size']} bytes, manifest says {p['expected_size']})")
        else:
            lines.append(f"{p['path']}: altered (sha256 {p['sha256']}, manifest says {p['expected_sha256']})")
    return lines


def select(manifest: dict, prefix: str, include: list[str] | None = None,
           exclude: list[str] | None = None) -> dict[str, dict]:
    """Files under prefix (a directory of the pack, '' = all) whose path below prefix starts with
    one of include (all when empty) and none of exclude; keys are paths below prefix."""
    prefix = prefix.strip("/")
    pre = prefix + "/" if prefix else ""
    out = {}
    for f in manifest["files"]:
        if not f["path"].startswith(pre):
            continue
        rel = f["path"][len(pre):]
        if include and not any(rel.startswith(i) for i in include):
            continue
        if exclude and any(rel.startswith(e) for e in exclude):
            continue
        out[rel] = {"size": f["size"], "sha256": f["sha256"]}
    return out


# uname -m (precheck_arch, Ansible's architecture fact) -> the Debian architecture a pack's binaries
# and package folders are for (site_pack_spec.ARCHES)
DEB_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}


def deb_arch(machine: str) -> str:
    """The Debian architecture of a machine (uname -m); an unknown one is returned as it is."""
    return DEB_ARCH.get(str(machine), str(machine))


def binary_arch(entry: dict) -> str:
    """The architecture of a manifest's binary, or of a spec's binary or os_packages.deb item (none
    named, as in a pack built before there were several: amd64)."""
    return str(entry.get("arch") or "amd64")


def arch_label(name: str, arch: str) -> str:
    """How messages name a binary of an architecture: containerd (amd64's), containerd (arm64)."""
    return str(name) if arch == "amd64" else f"{name} ({arch})"


class BinaryChoiceError(ValueError):
    """No entry of a binary the pack carries in several versions serves the Kubernetes version."""


def _binary_version(entry: dict) -> str:
    return str(entry.get("version", "")).lstrip("v")


def pick_binary(entries: list, version: str) -> dict:
    """The entry, among a binary's entries in several versions, that Kubernetes `version` takes: the
    one of that exact version (kubeadm, kubelet, kubectl); else the one whose for_kubernetes lists
    its minor (containerd 2.x for 1.35); else the single entry without for_kubernetes when another
    has it (the version every other release takes). Raises BinaryChoiceError naming the versions."""
    want = str(version or "").lstrip("v")
    minor = ".".join(want.split(".")[:2])
    exact = [e for e in entries if _binary_version(e) == want]
    served = [e for e in entries if minor in (e.get("for_kubernetes") or [])]
    default = [e for e in entries if "for_kubernetes" not in e]
    if exact or served:
        return (exact or served)[0]
    if len(default) == 1 and len(default) < len(entries):
        return default[0]
    raise BinaryChoiceError(f"the site pack carries {entries[0].get('name')} in versions "
                            f"{', '.join(sorted({_binary_version(e) for e in entries}))}, "
                            f"none of them {want or '(no version given)'} (tke_k8s_version)")


def host_binaries(binaries: list, groups, version: str, arch: str = "amd64") -> list[dict]:
    """The manifest's binaries (contents.binaries) one host of Debian architecture `arch` receives,
    each with `path` (its file or directory in the pack): those of its arch without groups or sharing
    one with the host's (groups None: every entry of the arch), a binary carried in several versions
    in the one pick_binary takes for `version`."""
    groups = None if groups is None else set(groups)
    mine = [dict(b, path=b.get("file") or b["dir"]) for b in binaries or [] if binary_arch(b) == arch
            and (groups is None or not b.get("groups") or groups & set(b["groups"]))]
    out = []
    for b in mine:
        same = [o for o in mine if o["name"] == b["name"]]
        if len(same) == 1 or pick_binary(same, version) is b:
            out.append(b)
    return out


def install_plan(expected: dict, dest: str, entries: list) -> list[tuple[str, str]]:
    """(source below dest, target on the host) for every file the install entries cover."""
    plan = []
    for e in entries:
        path, target = str(e["path"]), str(e["install"])
        if path.endswith("/"):
            plan += [(os.path.join(dest, rel), os.path.join(target, rel[len(path):]))
                     for rel in sorted(expected) if rel.startswith(path)]
        else:
            plan.append((os.path.join(dest, path), target))
    return plan


def same_installed(a: str, b: str) -> bool:
    """Whether b is an executable (0755) copy of a."""
    try:
        if os.path.getsize(a) != os.path.getsize(b) or os.stat(b).st_mode & 0o7777 != 0o755:
            return False
    except OSError:
        return False
    return sha256_file(a) == sha256_file(b)


def install_files(plan: list[tuple[str, str]]) -> list[str]:
    """Copy each source to its target (mode 0755, atomic) unless it is there already; targets written."""
    done = []
    for src, target in plan:
        if same_installed(src, target):
            continue
        copy_file(src, target, 0o755)
        done.append(target)
    return done

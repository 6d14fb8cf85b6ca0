# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The site pack spec: what a pack holds, checked before anything is fetched (pure functions).

A spec (YAML) looks like::

    name: tke-site
    version: "2026.11.1"
    os_packages:
      deb:
        - apt: [socat, conntrack]          # fetched with apt-get download on the build machine
        - dir: /srv/debs                   # every *.deb in a local directory
        - url: https://host/x.deb          # or path: /local/x.deb
          sha256: <hex>
        - dir: /srv/debs-trixie            # release: the Debian release (codename) these are for:
          release: trixie                  # its hosts get repo/deb-<release>/, the others repo/deb/
        - dir: /srv/debs-arm64             # arch: the Debian architecture (default amd64): arm64
          arch: arm64                      # hosts get repo/deb[-<release>]-arm64/
      rpm:
        - url: ... / path: ...
          sha256: <hex>
    binaries:
      - name: containerd
        url: https://host/containerd       # or path:
        sha256: <hex>
        version: "1.6.20"
        install: /usr/local/bin/containerd  # where the offline phase installs it
        groups: []                          # only on hosts of these groups (empty: every host)
      - name: containerd                   # a second version of a binary: for the Kubernetes minors
        url: https://host/containerd-2.1.9 # it names (the entry without for_kubernetes serves
        sha256: <hex>                      # every other release)
        version: "2.1.9"
        install: /usr/local/bin/containerd
        for_kubernetes: ["1.35", "1.36"]
      - name: containerd                   # the same binary for arm64 hosts (arch: default amd64):
        url: https://host/containerd-arm64 # kept under bin-arm64/, each host gets its own arch's
        sha256: <hex>
        version: "1.6.20"
        install: /usr/local/bin/containerd
        arch: arm64
      - name: cni-plugins
        path: /local/cni-plugins.tgz
        sha256: <hex>
        unpack: true                        # a tar: its files go to bin/cni-plugins/, installed under install
        install: /opt/cni/bin
    kubernetes:                            # images derived by code (module_utils kube_images)
      versions: ["1.30.4"]                 # kubeadm's images of each release (kube-*, coredns, pause, etcd)
      network_plugins: [flannel, calico]   # the network plugins' images (default: [flannel])
      namespace: library                   # registry namespace (tke_registry_namespace); default library
      images_dir: /build/images            # OCI layouts at <images_dir>/<name>_<tag> (directory or .tar)
    images:                                # the site's own images; one named like a derived image
      - name: library/busybox              # (same name and tag) replaces its layout: an override

        tag: "1.35"
        path: /local/busybox-oci            # OCI image layout: a directory or a tar of one
        sha256: <hex>                       # required for a tar, not for a directory (blobs are digests)
    charts:
      - path: /local/chart.tgz
        sha256: <hex>
    components:                            # docs/components.md
      - name: sample-redis                 # components_list's source
        dir: /local/components/sample-redis   # its manifest templates (*.yml, *.yaml, *.j2)
        images:                            # as images: above, pre-seeded in the pack's registry
          - {name: library/sample-redis, tag: "7.2", path: /local/sample-redis-oci}
      - name: sample-web                   # or a Helm chart (helm 3, apiVersion v2) from a file
        chart: /local/charts/sample-web-0.1.0.tgz
        sha256: <64 hex>                   # optional: the build checks it
        images: [{name: library/sample-web, tag: "1.0", path: /local/sample-web-oci}]
    controller:
      python: ["3.11"]                     # the controller's Python version(s): wheels for them
      platform: manylinux2014_x86_64       # pip --platform tag(s) of the controller
      requirements: /local/requirements.txt   # pip download on the build machine (+ pip itself)
      collection: /src/offline_pot.tke     # a collection source built into collections/ (ansible-galaxy)
      collections: [{path: offline_pot-tke-0.1.0.tar.gz, sha256: <hex>}]
      wheels: [{url: ..., sha256: <hex>}]
"""
from __future__ import annotations

import os
import re

from ansible_collections.offline_pot.tke.plugins.module_utils import kube_images
from ansible_collections.offline_pot.tke.plugins.module_utils.pack_manifest import arch_label, binary_arch

SHA_RE = re.compile(r"^[0-9a-f]{64}$")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
REPO_RE = re.compile(r"^[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*$")
TAG_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
PYVER_RE = re.compile(r"^3\.[0-9]{1,2}$")
PLATFORM_RE = re.compile(r"^[a-z0-9_]+$")
MINOR_RE = re.compile(r"^[0-9]+\.[0-9]+$")
# a Debian release's codename (os-release VERSION_CODENAME: bookworm, trixie)
RELEASE_RE = re.compile(r"^[a-z]+$")
# the Debian architectures the collection installs on (a binary's or a package folder's arch;
# precheck_arch names them as uname -m does: pack_manifest.DEB_ARCH)
ARCHES = ("amd64", "arm64")
CONTROLLER_KEYS = {"collections", "wheels", "requirements", "python", "platform", "collection"}
TOP_KEYS = {"name", "version", "os_packages", "binaries", "images", "charts", "controller", "kubernetes",
            "components"}
KUBERNETES_KEYS = {"versions", "network_plugins", "namespace", "images_dir"}


def _source_errors(where: str, item, need_sha: bool = True) -> list[str]:
    if not isinstance(item, dict):
        return [f"{where}: must be a mapping"]
    errors = []
    has = [k for k in ("url", "path") if item.get(k)]
    if len(has) != 1:
        errors.append(f"{where}: give exactly one of url or path")
    sha = item.get("sha256")
    if sha is not None and not (isinstance(sha, str) and SHA_RE.match(sha)):
        errors.append(f"{where}: sha256 must be 64 lowercase hex digits")
    elif sha is None and need_sha:
        errors.append(f"{where}: sha256 is required")
    return errors


def _arch_errors(where: str, item) -> list[str]:
    if isinstance(item, dict) and "arch" in item and item["arch"] not in ARCHES:
        return [f"{where}: arch {item['arch']!r} is not one the collection installs on ({', '.join(ARCHES)})"]
    return []


def _served_twice(binaries: list) -> list[str]:
    """A binary in several versions chosen by for_kubernetes: each minor served by one entry, and at
    most one entry without it (the one every other release takes), per architecture."""
    errors = []
    by_name: dict = {}
    for item in binaries:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            by_name.setdefault(arch_label(item["name"], binary_arch(item)), []).append(item)
    for name, items in sorted(by_name.items()):
        if not any(isinstance(i.get("for_kubernetes"), list) for i in items):
            continue
        defaults = [str(i.get("version", "")) for i in items if i.get("for_kubernetes") is None]
        if len(defaults) > 1:
            errors.append(f"binaries: {name} has {len(defaults)} versions without for_kubernetes "
                          f"({', '.join(defaults)}): at most one serves the releases the others do not name")
        seen: dict = {}
        for i in items:
            minors = i.get("for_kubernetes")
            for minor in minors if isinstance(minors, list) else []:
                if not isinstance(minor, str):
                    continue
                if minor in seen:
                    errors.append(f"binaries: {name} {seen[minor]} and {i.get('version', '')} both name Kubernetes {minor} "
                                  "in for_kubernetes")
                seen.setdefault(minor, str(i.get("version", "")))
    return errors


def deb_dir(item: dict) -> str:
    """The pack's folder of an os_packages.deb item: repo/deb/ (every amd64 Debian host without a
    folder of its own release), repo/deb-<release>/ for an item with a release; another arch's
    folders end in -<arch> (repo/deb-arm64/, repo/deb-trixie-arm64/)."""
    arch = binary_arch(item)
    suffix = "" if arch == "amd64" else "-" + arch
    return f"repo/deb-{item['release']}{suffix}/" if item.get("release") else f"repo/deb{suffix}/"


def binary_dir(item: dict) -> str:
    """The pack's folder of a binary: bin/ (amd64), bin-<arch>/ for another architecture."""
    arch = binary_arch(item)
    return "bin/" if arch == "amd64" else f"bin-{arch}/"


def label(section: str, item: dict, index: int) -> str:
    """How an item is named in messages: section and its name, file or URL."""
    if isinstance(item, dict):
        for key in ("name", "path", "url", "dir"):
            if item.get(key):
                name = item[key] if key == "name" else str(item[key]).rstrip("/").rsplit("/", 1)[-1]
                if key == "name" and item.get("tag"):
                    name = f"{name}:{item['tag']}"
                return f"{section} {name}"
    return f"{section}[{index}]"


def validate(spec) -> list[str]:
    """Every problem of a spec, each naming the item; empty when the spec is usable."""
    if not isinstance(spec, dict):
        return ["the spec must be a mapping"]
    errors = [f"unknown key {k!r}" for k in sorted(set(spec) - TOP_KEYS)]
    for key in ("name", "version"):
        v = spec.get(key)
        if not isinstance(v, (str, int, float)) or not NAME_RE.match(str(v)):
            errors.append(f"{key} is required (letters, digits, . _ -)")
    osp = spec.get("os_packages") or {}
    if not isinstance(osp, dict) or set(osp) - {"deb", "rpm"}:
        errors.append("os_packages takes deb and rpm lists")
        osp = {}
    for fam in ("deb", "rpm"):
        for i, item in enumerate(osp.get(fam) or []):
            where = label(f"os_packages.{fam}", item, i)
            if isinstance(item, dict) and "release" in item and (
                    fam != "deb" or not isinstance(item["release"], str) or not RELEASE_RE.match(item["release"])):
                errors.append(f"{where}: release takes a Debian release's codename (e.g. trixie), on deb items")
            if isinstance(item, dict) and "arch" in item and fam != "deb":
                errors.append(f"{where}: arch is for deb items")
            errors += _arch_errors(where, item)
            if isinstance(item, dict) and "apt" in item:
                if fam != "deb" or not isinstance(item["apt"], list) or not item["apt"]:
                    errors.append(f"{where}: apt takes a non-empty list of Debian package names")
            elif isinstance(item, dict) and "dir" in item:
                if not isinstance(item["dir"], str):
                    errors.append(f"{where}: dir must be a path")
            else:
                errors += _source_errors(where, item)
    names = set()
    for i, item in enumerate(spec.get("binaries") or []):
        where = label("binaries", item, i)
        errors += _source_errors(where, item)
        if not isinstance(item, dict):
            continue
        if not isinstance(item.get("name"), str) or not NAME_RE.match(item.get("name") or ""):
            errors.append(f"{where}: name is required (letters, digits, . _ -)")
        elif (item["name"], str(item.get("version", "")), binary_arch(item)) in names:
            errors.append(f"{where}: name, version and arch are used twice (a binary may come in several versions "
                          "and architectures)")
        names.add((item.get("name"), str(item.get("version", "")), binary_arch(item)))
        errors += _arch_errors(where, item)
        inst = item.get("install")
        if not isinstance(inst, str) or not inst.startswith("/"):
            errors.append(f"{where}: install must be an absolute path on the hosts")
        if not isinstance(item.get("groups", []), list):
            errors.append(f"{where}: groups must be a list")
        minors = item.get("for_kubernetes")
        if minors is not None and (not isinstance(minors, list) or not minors
                                   or not all(isinstance(m, str) and MINOR_RE.match(m) for m in minors)):
            errors.append(f"{where}: for_kubernetes takes a list of Kubernetes minors like \"1.35\" (quoted)")
    errors += _served_twice(spec.get("binaries") or [])
    refs = set()
    for i, item in enumerate((spec.get("images") or []) + component_images(spec)):
        where = label("images", item, i)
        if not isinstance(item, dict):
            errors.append(f"{where}: must be a mapping")
            continue
        if not REPO_RE.match(str(item.get("name", ""))):
            errors.append(f"{where}: name must be a registry repository name like library/busybox")
        if not TAG_RE.match(str(item.get("tag", ""))):
            errors.append(f"{where}: tag is required")
        ref = (item.get("name"), str(item.get("tag")))
        if ref in refs:
            errors.append(f"{where}: listed twice")
        refs.add(ref)
        if not item.get("path"):
            errors.append(f"{where}: path (an OCI layout directory or tar) is required")
        sha = item.get("sha256")
        if sha is not None and not (isinstance(sha, str) and SHA_RE.match(sha)):
            errors.append(f"{where}: sha256 must be 64 lowercase hex digits")
    for i, item in enumerate(spec.get("charts") or []):
        errors += _source_errors(label("charts", item, i), item)
    ctl = spec.get("controller") or {}
    if not isinstance(ctl, dict) or set(ctl) - CONTROLLER_KEYS:
        errors.append("controller takes " + ", ".join(sorted(CONTROLLER_KEYS)))
        ctl = {}
    for sec in ("collections", "wheels"):
        for i, item in enumerate(ctl.get(sec) or []):
            errors += _source_errors(label(f"controller.{sec}", item, i), item)
    errors += _controller_target_errors(ctl)
    errors += _kubernetes_errors(spec.get("kubernetes"))
    errors += _components_errors(spec)
    return errors


# --- components (docs/components.md) ----------------------------------------------------------
COMPONENT_RE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
COMPONENT_KEYS = {"name", "dir", "chart", "sha256", "images"}


def component_images(spec: dict) -> list:
    """The images the components bring: pre-seeded and checked like the images section's. Several
    components may run one image (two charts of one vendor, a chart's next version): the same
    name, tag and path count once."""
    comps = spec.get("components") if isinstance(spec, dict) else None
    if not isinstance(comps, list):
        return []
    out, seen = [], set()
    for c in comps:
        for img in (c.get("images") if isinstance(c, dict) and isinstance(c.get("images"), list) else []):
            key = (img.get("name"), str(img.get("tag")), img.get("path")) if isinstance(img, dict) else None
            if key is None or key not in seen:
                out.append(img)
            seen.add(key)
    return out


def _components_errors(spec: dict) -> list[str]:
    comps = spec.get("components") or []
    if not isinstance(comps, list):
        return ["components: must be a list"]
    errors, names = [], set()
    for i, item in enumerate(comps):
        where = label("components", item, i)
        if not isinstance(item, dict):
            errors.append(f"{where}: must be a mapping")
            continue
        errors += [f"{where}: unknown key {k!r}" for k in sorted(set(item) - COMPONENT_KEYS)]
        name = item.get("name")
        if not isinstance(name, str) or not COMPONENT_RE.match(name):
            errors.append(f"{where}: name is required (a lowercase RFC 1123 label: a-z, 0-9, -)")
        elif name in names:
            errors.append(f"{where}: name is used twice")
        names.add(name)
        sources = [k for k in ("dir", "chart") if isinstance(item.get(k), str) and item[k]]
        if len(sources) != 1:
            errors.append(f"{where}: needs one of dir (the directory of its manifest templates) and chart "
                          "(a Helm chart file, .tgz)")
        sha = item.get("sha256")
        if sha is not None and not (isinstance(sha, str) and SHA_RE.match(sha)):
            errors.append(f"{where}: sha256 must be 64 lowercase hex digits")
        if not isinstance(item.get("images", []), list):
            errors.append(f"{where}: images must be a list")
    return errors


def as_list(value) -> list:
    """A scalar or a list, as a list (absent: empty)."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _controller_target_errors(ctl: dict) -> list[str]:
    """The controller's Python version(s) and platform tag(s) the wheels are fetched for."""
    errors = []
    pythons = as_list(ctl.get("python"))
    platforms = as_list(ctl.get("platform"))
    for v in pythons:
        if not isinstance(v, str) or not PYVER_RE.match(v):
            errors.append(f"controller.python: {v!r} is not a Python version like 3.11 (quote it in YAML)")
    for p in platforms:
        if not isinstance(p, str) or not PLATFORM_RE.match(p):
            errors.append(f"controller.platform: {p!r} is not a pip platform tag like manylinux2014_x86_64")
    if bool(pythons) != bool(platforms):
        errors.append("controller: python and platform go together (the wheels are fetched for both)")
    if pythons and not ctl.get("requirements"):
        errors.append("controller.python: needs controller.requirements (what to fetch wheels of)")
    if ctl.get("collection") is not None and not isinstance(ctl.get("collection"), str):
        errors.append("controller.collection: must be the path of a collection source directory")
    return errors


def basename(item: dict) -> str:
    src = item.get("path") or item.get("url")
    return str(src).split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]


# --- kubernetes: the images derived from versions and network plugins ---------------------------
def _kubernetes_errors(k8s) -> list[str]:
    if k8s is None:
        return []
    if not isinstance(k8s, dict) or set(k8s) - KUBERNETES_KEYS:
        return ["kubernetes takes " + ", ".join(sorted(KUBERNETES_KEYS))]
    errors = []
    versions = as_list(k8s.get("versions"))
    if not versions:
        errors.append("kubernetes.versions: list the Kubernetes release(s) the pack serves, like [\"1.30.4\"]")
    for v in versions:
        try:
            kube_images.kubeadm_images(v)
        except kube_images.UnsupportedVersion as e:
            errors.append(f"kubernetes.versions: {e}")
    for p in as_list(k8s.get("network_plugins", ["flannel"])):
        if p not in kube_images.NETWORK_PLUGINS:
            errors.append(f"kubernetes.network_plugins: {p!r} is not one of {', '.join(kube_images.NETWORK_PLUGINS)}")
    if not REPO_RE.match(str(k8s.get("namespace", "library"))):
        errors.append("kubernetes.namespace: must be a registry namespace like library")
    if not isinstance(k8s.get("images_dir"), str) or not k8s["images_dir"]:
        errors.append("kubernetes.images_dir: the directory holding the OCI layouts <name>_<tag> is required")
    return errors


def kubernetes_images(spec: dict) -> list[dict]:
    """The images kubernetes: derives, each {name (namespace/name), tag, source (upstream, no tag),
    path (<images_dir>/<name>_<tag>), for: why it is in the pack}, without duplicates. Call on a
    valid spec."""
    k8s = spec.get("kubernetes") or {}
    if not k8s:
        return []
    ns = str(k8s.get("namespace", "library"))
    wanted = [(f"Kubernetes {v}", kube_images.kubeadm_images(v)) for v in as_list(k8s.get("versions"))]
    wanted += [(f"network {p}", kube_images.network_images(p)) for p in as_list(k8s.get("network_plugins", ["flannel"]))]
    out, seen = [], {}
    for why, imgs in wanted:
        for img in imgs:
            key = (img["name"], img["tag"])
            if key in seen:
                seen[key]["for"] += f", {why}"
                continue
            item = {"name": f"{ns}/{img['name']}", "tag": img["tag"], "source": img["source"], "for": why,
                    "path": os.path.join(os.path.expanduser(str(k8s["images_dir"])),
                                         kube_images.layout_name(img["name"], img["tag"]))}
            seen[key] = item
            out.append(item)
    return out


def pack_images(spec: dict) -> list[dict]:
    """Every image the pack carries: the spec's images: and the components' images, then the derived ones that images: does
    not list (an images: item with a derived image's name and tag is its override)."""
    explicit = list(spec.get("images") or []) + component_images(spec)
    listed = {(i.get("name"), str(i.get("tag"))) for i in explicit}
    return explicit + [i for i in kubernetes_images(spec) if (i["name"], i["tag"]) not in listed]

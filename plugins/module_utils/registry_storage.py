# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Write OCI images straight into a CNCF distribution registry's filesystem storage.

This is how the site pack pre-seeds its registry/: each blob is stored once under
docker/registry/v2/blobs (layers shared by several images are stored once), and each repository
gets the links the registry reads (_layers, _manifests/revisions, _manifests/tags). The registry
serves such a directory as if every image had been pushed, with no load-and-push step.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tarfile
import tempfile

from ansible_collections.offline_pot.tke.plugins.module_utils.atomic_file import atomic_writer, write_if_differs
from ansible_collections.offline_pot.tke.plugins.module_utils import safe_tar

V2 = "docker/registry/v2"
INDEX_TYPES = ("application/vnd.oci.image.index.v1+json",
               "application/vnd.docker.distribution.manifest.list.v2+json")
REF_NAME = "org.opencontainers.image.ref.name"


class ImageError(Exception):
    pass


def _hex(digest: str) -> str:
    algo, dummy, hexpart = digest.partition(":")
    if algo != "sha256" or len(hexpart) != 64 or any(c not in "0123456789abcdef" for c in hexpart):
        raise ImageError(f"unsupported digest {digest!r}")
    return hexpart


def blob_path(root: str, digest: str) -> str:
    h = _hex(digest)
    return os.path.join(root, V2, "blobs", "sha256", h[:2], h, "data")


def link_path(root: str, repo: str, kind: str, digest: str, tag: str | None = None) -> str:
    base = os.path.join(root, V2, "repositories", repo)
    h = _hex(digest)
    if kind == "layer":
        return os.path.join(base, "_layers", "sha256", h, "link")
    if kind == "revision":
        return os.path.join(base, "_manifests", "revisions", "sha256", h, "link")
    if kind == "tag_current":
        return os.path.join(base, "_manifests", "tags", tag, "current", "link")
    if kind == "tag_index":
        return os.path.join(base, "_manifests", "tags", tag, "index", "sha256", h, "link")
    raise ValueError(kind)


class Layout:
    """An OCI image layout: a directory, or a tar of one (extracted to a temporary directory)."""

    def __init__(self, path: str):
        self._tmp = None
        if os.path.isdir(path):
            self.dir = path
        elif tarfile.is_tarfile(path):
            self._tmp = tempfile.mkdtemp(prefix="oci-layout-")
            with tarfile.open(path) as t:
                safe_tar.extract(t, self._tmp)
            self.dir = self._tmp
        else:
            raise ImageError(f"{path} is neither an OCI layout directory nor a tar of one")
        try:
            with open(os.path.join(self.dir, "index.json"), "rb") as f:
                self.index = json.load(f)
        except (OSError, ValueError) as e:
            raise ImageError(f"{path}: no readable index.json ({e})") from e

    def close(self):
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)

    def blob_file(self, digest: str) -> str:
        return os.path.join(self.dir, "blobs", "sha256", _hex(digest))

    def read_blob(self, digest: str) -> bytes:
        with open(self.blob_file(digest), "rb") as f:
            return f.read()

    def pick(self, tag: str) -> dict:
        """The index entry for tag: the one annotated with that ref name, else the only one."""
        entries = self.index.get("manifests") or []
        named = [m for m in entries if (m.get("annotations") or {}).get(REF_NAME) == tag]
        if named:
            return named[0]
        if len(entries) == 1:
            return entries[0]
        raise ImageError(f"the layout holds {len(entries)} manifests and none is named {tag!r}")


def put_blob(root: str, layout: Layout, digest: str, size: int | None = None) -> int:
    """Store one blob (verified against its digest) unless it is there; bytes written."""
    dest = blob_path(root, digest)
    if os.path.exists(dest) and (size is None or os.path.getsize(dest) == size):
        return 0
    src = layout.blob_file(digest)
    h = hashlib.sha256()
    try:
        with open(src, "rb") as fi, atomic_writer(dest) as fo:
            for chunk in iter(lambda: fi.read(1 << 20), b""):
                h.update(chunk)
                fo.write(chunk)
            if "sha256:" + h.hexdigest() != digest:  # the blob store keeps no bad blob
                raise ImageError(f"blob {digest} does not match its digest (content is sha256:{h.hexdigest()})")
    except FileNotFoundError as e:
        raise ImageError(f"blob {digest} is missing from the layout") from e
    return os.path.getsize(dest)


def _import_manifest(root: str, layout: Layout, repo: str, desc: dict, acc: dict) -> None:
    digest = desc["digest"]
    acc["bytes_written"] += put_blob(root, layout, digest, desc.get("size"))
    acc["image_bytes"] += desc.get("size") or os.path.getsize(blob_path(root, digest))
    acc["changed"] |= write_if_differs(link_path(root, repo, "revision", digest), digest.encode())
    doc = json.loads(layout.read_blob(digest))
    media = doc.get("mediaType") or desc.get("mediaType", "")
    if media in INDEX_TYPES or "manifests" in doc:
        for child in doc.get("manifests", []):
            _import_manifest(root, layout, repo, child, acc)
        return
    try:   # the architecture this image is for (an index's children: each its own)
        arch = json.loads(layout.read_blob(doc["config"]["digest"])).get("architecture")
    except (OSError, ValueError, AttributeError):
        arch = None
    if arch and arch != "unknown":   # (an attestation manifest's platform is unknown/unknown)
        acc["architectures"].add(arch)
    for blob in [doc["config"], *doc.get("layers", [])]:
        acc["bytes_written"] += put_blob(root, layout, blob["digest"], blob.get("size"))
        acc["image_bytes"] += blob["size"]
        acc["changed"] |= write_if_differs(link_path(root, repo, "layer", blob["digest"]),
                                           blob["digest"].encode())


def import_image(root: str, layout_path: str, repo: str, tag: str) -> dict:
    """Pre-seed repo:tag from an OCI layout into the registry storage under root.

    Returns {digest, image_bytes (manifest+config+layers, counted per image), bytes_written,
    changed, architectures (the sorted architectures its manifests are for: several for an index)}."""
    layout = Layout(layout_path)
    try:
        desc = layout.pick(tag)
        acc = {"bytes_written": 0, "image_bytes": 0, "changed": False, "architectures": set()}
        _import_manifest(root, layout, repo, desc, acc)
        d = desc["digest"]
        acc["changed"] |= write_if_differs(link_path(root, repo, "tag_index", d, tag), d.encode())
        acc["changed"] |= write_if_differs(link_path(root, repo, "tag_current", d, tag), d.encode())
        acc["changed"] |= acc["bytes_written"] > 0
        acc["digest"] = d
        acc["architectures"] = sorted(acc["architectures"])
        return acc
    finally:
        layout.close()


def stored_blob_bytes(root: str) -> int:
    total = 0
    base = os.path.join(root, V2, "blobs")
    for dirpath, dummy, files in os.walk(base):
        total += sum(os.path.getsize(os.path.join(dirpath, f)) for f in files if f == "data")
    return total

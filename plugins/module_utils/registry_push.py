# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Push images from a registry's filesystem storage (the site pack's pre-seeded registry/,
registry_storage.py) into a running registry through the OCI distribution API.

This is how the images of the pack reach a registry the collection does not run (the components
onto an existing cluster, docs/components.md): the registry the collection runs serves the pack's
storage itself. Protocol (OCI distribution spec, "Push"): a blob is checked with
HEAD /v2/<name>/blobs/<digest> and, when missing, uploaded monolithically (POST
/v2/<name>/blobs/uploads/ then PUT <location>?digest=<digest>); manifests are PUT by digest
(an index's children) and by tag. A blob this run already sent to another repository of the
registry (a layer images share) is mounted from there ("Mounting a blob from another repository":
POST .../blobs/uploads/?mount=<digest>&from=<repo>, 201; a registry that does not mount answers
202 and the blob is sent), not sent again; a blob is streamed from its file. Authentication: HTTP
Basic, or a Bearer token fetched from the realm a 401's WWW-Authenticate names (the distribution
token protocol). Measured against skopeo: bench/registry_push_bench.py, docs/site_pack.md.
"""
from __future__ import annotations

import base64
import json
import os
import re

from urllib.error import HTTPError
from urllib.parse import urlencode, urljoin, urlsplit

from ansible.module_utils.urls import Request

from ansible_collections.offline_pot.tke.plugins.module_utils import registry_storage as rs

MANIFEST_TYPES = ("application/vnd.oci.image.manifest.v1+json", "application/vnd.oci.image.index.v1+json",
                  "application/vnd.docker.distribution.manifest.v2+json",
                  "application/vnd.docker.distribution.manifest.list.v2+json")


class PushError(Exception):
    pass


def target_repo(repo: str, namespace: str = "") -> str:
    """The repository an image of the pack is pushed to: the same, or <namespace>/<last part>."""
    return f"{namespace.strip('/')}/{repo.rsplit('/', 1)[-1]}" if namespace else repo


def read_manifest(root: str, digest: str) -> tuple[bytes, str, dict]:
    """(bytes, media type, document) of a manifest stored under root."""
    try:
        with open(rs.blob_path(root, digest), "rb") as f:
            raw = f.read()
    except OSError as e:
        raise PushError(f"manifest {digest} is not in the pack's registry storage") from e
    doc = json.loads(raw)
    media = doc.get("mediaType") or (MANIFEST_TYPES[1] if "manifests" in doc else MANIFEST_TYPES[0])
    return raw, media, doc


def _challenge(header: str) -> dict:
    return dict(re.findall(r'(\w+)="([^"]*)"', header or ""))


class Registry:
    """A registry's /v2/ API at base (https://host:port) with Basic or Bearer authentication."""

    def __init__(self, base, username="", password="", ca_path=None, validate_certs=True, timeout=60):
        self.base = base.rstrip("/")
        self.username, self.password = username, password
        self.http = Request(ca_path=ca_path, validate_certs=validate_certs, timeout=timeout,
                            http_agent="offline_pot.tke registry_push")
        self.auth = None
        self.sent = {}  # digest -> a repository this run sent the blob to (mounted from there)

    def _basic(self):
        raw = f"{self.username}:{self.password}".encode()
        return "Basic " + base64.b64encode(raw).decode()

    def _token(self, header: str) -> str:
        ch = _challenge(header)
        query = {k: ch[k] for k in ("service", "scope") if k in ch}
        headers = {"Authorization": self._basic()} if self.username else {}
        try:
            r = self.http.open("GET", ch["realm"] + "?" + urlencode(query), headers=headers)
            doc = json.loads(r.read())
        except (HTTPError, KeyError, ValueError) as e:
            raise PushError(f"no token from the registry's realm {ch.get('realm')}: {e}") from e
        return "Bearer " + (doc.get("token") or doc.get("access_token") or "")

    def call(self, method, path, data=None, headers=None, ok=(200, 201, 202, 204)):
        """(status, headers, body); 404 on HEAD/GET answers (404, {}, b"")."""
        url = path if path.startswith("http") else self.base + path
        for attempt in (1, 2):
            h = dict(headers or {})
            if self.auth:
                h["Authorization"] = self.auth
            if hasattr(data, "seek"):
                data.seek(0)  # a file sent again after authenticating
            try:
                r = self.http.open(method, url, data=data, headers=h)
                return r.status, r.headers, r.read()
            except HTTPError as e:
                if e.code == 401 and attempt == 1:
                    www = e.headers.get("WWW-Authenticate", "")
                    self.auth = self._token(www) if www.lower().startswith("bearer") else self._basic()
                    continue
                if e.code == 404 and method in ("HEAD", "GET"):
                    return 404, {}, b""
                body = e.read().decode(errors="replace")[:300]
                raise PushError(f"{method} {url}: HTTP {e.code} {body}".strip()) from None
            except OSError as e:  # connection refused, TLS failures, timeouts
                raise PushError(f"{method} {url}: {e}") from None
        raise PushError(f"{method} {url}: refused after authenticating")

    def has_blob(self, repo, digest):
        return self.call("HEAD", f"/v2/{repo}/blobs/{digest}")[0] == 200

    def manifest_digest(self, repo, ref):
        status, headers, dummy = self.call("HEAD", f"/v2/{repo}/manifests/{ref}",
                                           headers={"Accept": ", ".join(MANIFEST_TYPES)})
        return headers.get("Docker-Content-Digest") if status == 200 else None

    def upload(self, repo, digest, path):
        other = self.sent.get(digest)
        mount = f"?{urlencode({'mount': digest, 'from': other})}" if other and other != repo else ""
        status, headers, dummy = self.call("POST", f"/v2/{repo}/blobs/uploads/{mount}")
        if status == 201:  # mounted
            return
        location = upload_url(self.base, headers.get("Location", ""))
        sep = "&" if "?" in location else "?"
        with open(path, "rb") as f:
            self.call("PUT", f"{location}{sep}digest={digest}", data=f,
                      headers={"Content-Type": "application/octet-stream",
                               "Content-Length": str(os.fstat(f.fileno()).st_size)})
        self.sent[digest] = repo

    def put_manifest(self, repo, ref, raw, media):
        self.call("PUT", f"/v2/{repo}/manifests/{ref}", data=raw, headers={"Content-Type": media})


def upload_url(base: str, location: str) -> str:
    """Where to PUT an upload: the Location a POST answered. A registry names itself there as
    it is configured (distribution's http.host, a proxy's name), which the controller may not
    resolve: its own upload endpoint (/v2/...) is reached through base, the address we use;
    a Location elsewhere (a storage redirect) is followed as given."""
    parts = urlsplit(location)
    if parts.path.startswith("/v2/"):
        return base.rstrip("/") + parts.path + (f"?{parts.query}" if parts.query else "")
    return urljoin(base.rstrip("/") + "/", location)


def push(registry: Registry, root: str, digest: str, target: str, tag: str, check_mode=False) -> str:
    """Push the image whose manifest is digest (the pack manifest's contents.images digest) from
    the storage under root to target:tag; "present" when the registry already has the tag at the
    same digest, else "pushed" (check mode: only looks)."""
    if registry.manifest_digest(target, tag) == digest:
        return "present"
    if check_mode:
        return "pushed"
    _push_manifest(registry, root, target, digest, tag)
    return "pushed"


def _push_manifest(registry, root, target, digest, ref):
    raw, media, doc = read_manifest(root, digest)
    for child in doc.get("manifests", []):
        _push_manifest(registry, root, target, child["digest"], child["digest"])
    for blob in ([doc["config"]] if "config" in doc else []) + doc.get("layers", []):
        path = rs.blob_path(root, blob["digest"])
        if not os.path.isfile(path):
            raise PushError(f"blob {blob['digest']} is not in the pack's registry storage")
        if not registry.has_blob(target, blob["digest"]):
            registry.upload(target, blob["digest"], path)
    registry.put_manifest(target, ref, raw, media)

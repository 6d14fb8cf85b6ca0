"""Does an image exist in the registry its reference names? HTTPS HEAD /v2/<repo>/manifests/<ref>
(the OCI distribution spec), trusting the host's system store plus containerd's certs.d/<host>/*.crt,
with the credentials containerd's CRI plugin has for that host (config.toml
registry.configs."<host>".auth, in the table of the config's version: CRI_IMAGES): what the
kubelet/containerd would use to pull it. Basic auth and
the token (Bearer) challenge are both followed. Results are cached (found: 5 min, not found: 10 s)."""
from __future__ import annotations

import base64
import glob
import json
import os
import ssl
import threading
import time
import tomllib
import urllib.error
import urllib.parse
import urllib.request

from .logic import parse_image

ACCEPT = ", ".join(["application/vnd.oci.image.index.v1+json", "application/vnd.oci.image.manifest.v1+json",
                    "application/vnd.docker.distribution.manifest.list.v2+json",
                    "application/vnd.docker.distribution.manifest.v2+json"])


# Where containerd reads a registry's credentials, by config.toml's `version`: 2 (containerd 1.x, and
# 2.x migrating it at start) under the CRI plugin; 3 (containerd 2.x) under the images plugin the CRI
# plugin was split into (containerd v2.1.9 plugins/cri/images/plugin.go, migrateConfig; docs/cri/
# registry.md). A file without a version is version 1, which the collection never writes.
CRI_IMAGES = {2: "io.containerd.grpc.v1.cri", 3: "io.containerd.cri.v1.images"}


class ImageChecker:
    def __init__(self, containerd_config="/etc/containerd/config.toml", certs_d="/etc/containerd/certs.d",
                 ttl_ok=300, ttl_missing=10):
        self.config, self.certs_d = containerd_config, certs_d
        self.ttl_ok, self.ttl_missing = ttl_ok, ttl_missing
        self._cache, self._lock = {}, threading.Lock()

    def _auth(self, host):
        try:
            with open(self.config, "rb") as f:
                cfg = tomllib.load(f)
            a = cfg["plugins"][CRI_IMAGES[cfg.get("version", 1)]]["registry"]["configs"][host]["auth"]
            return a.get("username", ""), a.get("password", "")
        except (OSError, KeyError, TypeError, tomllib.TOMLDecodeError):
            return None

    def _ctx(self, host):
        ctx = ssl.create_default_context()
        for ca in glob.glob(os.path.join(self.certs_d, host, "*.crt")):
            try:
                ctx.load_verify_locations(ca)
            except (OSError, ssl.SSLError):
                pass
        return ctx

    def exists(self, ref: str) -> bool:
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(ref)
            if hit and hit[1] > now:
                return hit[0]
        ok = self._head(ref)
        with self._lock:
            self._cache[ref] = (ok, now + (self.ttl_ok if ok else self.ttl_missing))
        return ok

    def _head(self, ref):
        host, repo, tag = parse_image(ref)
        if host == "docker.io":
            host = "registry-1.docker.io"
        url = f"https://{host}/v2/{repo}/manifests/{tag}"
        ctx, creds = self._ctx(host), self._auth(host)
        headers = {"Accept": ACCEPT}
        for dummy in range(2):
            req = urllib.request.Request(url, method="HEAD", headers=headers)
            try:
                with urllib.request.urlopen(req, context=ctx, timeout=5) as r:
                    return r.status == 200
            except urllib.error.HTTPError as e:
                if e.code != 401 or not creds or "Authorization" in headers:
                    return False
                challenge = e.headers.get("WWW-Authenticate", "")
                basic = base64.b64encode(f"{creds[0]}:{creds[1]}".encode()).decode()
                if challenge.lower().startswith("bearer"):
                    token = self._token(challenge, basic, ctx)
                    if not token:
                        return False
                    headers["Authorization"] = f"Bearer {token}"
                else:
                    headers["Authorization"] = f"Basic {basic}"
            except (OSError, urllib.error.URLError, ValueError):
                return False
        return False

    @staticmethod
    def _token(challenge, basic, ctx):
        params = dict(p.split("=", 1) for p in challenge[6:].strip().replace('"', "").split(",") if "=" in p)
        realm = params.pop("realm", "")
        if not realm:
            return None
        req = urllib.request.Request(realm + "?" + urllib.parse.urlencode(params),
                                     headers={"Authorization": f"Basic {basic}"})
        try:
            with urllib.request.urlopen(req, context=ctx, timeout=5) as r:
                body = json.loads(r.read())
            return body.get("token") or body.get("access_token")
        except (OSError, urllib.error.URLError, ValueError):
            return None

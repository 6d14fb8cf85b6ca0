# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""HTTPS to the Kubernetes API with ansible.module_utils.urls (no client library to install).

Key material given inline in a kubeconfig is written to files of mode 0600 in a private
temporary directory (0700) for the TLS context and removed when the client closes; a bearer token
lives only in a request header. Nothing here prints or returns credentials. Failed requests raise
ApiError carrying the API's Status object (k8s.io/apimachinery/pkg/apis/meta/v1 types.go: kind
Status, reason, message, details.causes[].field/message).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from urllib.error import HTTPError, URLError
from urllib.parse import urlencode

from ansible.module_utils.urls import Request

# the API server names a write's field manager after the User-Agent up to its first "/" when the
# request names none: the collection's fields are "offline_pot.tke"'s in managedFields (kubectl
# shows them), not "Python-urllib"'s
USER_AGENT = "offline_pot.tke"


class ApiError(Exception):
    def __init__(self, code, status, method="", path=""):
        self.code = code
        self.status = status if isinstance(status, dict) else {}
        self.method, self.path = method, path
        super().__init__(self.describe())

    @property
    def reason(self):
        return self.status.get("reason") or ""

    @property
    def causes(self):
        return [c for c in (self.status.get("details") or {}).get("causes") or [] if isinstance(c, dict)]

    def describe(self):
        message = self.status.get("message") or f"HTTP {self.code}"
        reason = f"{self.reason}: " if self.reason else ""
        return f"{reason}{message}"


class Client:
    """One connection's settings (kubeconfig.connection()); use as a context manager."""

    def __init__(self, conn, timeout=30):
        self.server = conn["server"]
        self._tmp = None
        files = {}
        for name in ("ca", "cert", "key"):
            entry = conn.get(name)
            if entry and "data" in entry:
                files[name] = self._private_file(name, entry["data"])
            elif entry:
                files[name] = entry["path"]
        headers = {"Accept": "application/json"}
        token = conn.get("token")
        if not token and conn.get("token_file"):
            with open(conn["token_file"]) as fh:
                token = fh.read().strip()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._request = Request(headers=headers, timeout=timeout, validate_certs=not conn.get("insecure"),
                                ca_path=files.get("ca"), client_cert=files.get("cert"),
                                client_key=files.get("key"), follow_redirects="none", http_agent=USER_AGENT)

    def _private_file(self, name, data):
        if self._tmp is None:
            self._tmp = tempfile.mkdtemp(prefix="tke-k8s-")  # mode 0700
        path = os.path.join(self._tmp, name)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        return path

    def close(self):
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def request(self, method, path, body=None, query=None, content_type="application/json"):
        """The decoded JSON answer; raises ApiError for an error status or an unreachable API."""
        url = self.server + path
        if query:
            url += "?" + urlencode({k: v for k, v in query.items() if v not in (None, "")})
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": content_type} if data is not None else {}
        try:
            resp = self._request.open(method, url, data=data, headers=headers)
            raw = resp.read()
        except HTTPError as e:
            try:
                status = json.loads(e.read() or b"{}")
            except ValueError:
                status = {}
            raise ApiError(e.code, status, method, path) from None
        except (URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise ApiError(0, {"reason": "Unreachable", "message": f"{self.server}: {reason}"}, method, path) from None
        return json.loads(raw) if raw else {}

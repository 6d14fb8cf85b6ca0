"""Where the double keeps objects: the real etcd the apiserver manifest names (--etcd-servers with
--etcd-cafile/--etcd-certfile/--etcd-keyfile, through etcd's v3 JSON gateway over mutual TLS), so
every master's double shows the same objects; or, when no etcd answers there (stacked etcd: the
kubeadm double runs no etcd), a file on this host (then masters do NOT share objects).

Both give what the API server needs from etcd: a cluster-wide monotonic revision (resourceVersion
= the key's mod_revision, as the real API server does), create-if-absent and update-if-unchanged."""
from __future__ import annotations

import base64
import fcntl
import json
import os
import ssl
import threading
import urllib.error
import urllib.request


def _b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def prefix_end(prefix: str) -> str:
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


class StoreUnavailable(Exception):
    pass


class EtcdStore:
    """etcd v3 over its gRPC JSON gateway (POST /v3/kv/range|put|deleterange|txn, base64 keys)."""

    kind = "etcd"

    def __init__(self, endpoints, cafile, certfile, keyfile, timeout=5):
        self.endpoints = [e.rstrip("/") for e in endpoints]
        self.ctx = ssl.create_default_context(cafile=cafile or None)
        if certfile:
            self.ctx.load_cert_chain(certfile, keyfile or None)
        self.timeout = timeout

    def _call(self, path, body):
        err = None
        for ep in list(self.endpoints):
            req = urllib.request.Request(ep + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(req, context=self.ctx, timeout=self.timeout) as r:
                    return json.loads(r.read() or b"{}")
            except (OSError, urllib.error.URLError, ValueError) as e:
                err = e
                self.endpoints.append(self.endpoints.pop(0))   # try the next member next time
        raise StoreUnavailable(f"etcd {self.endpoints}: {err}")

    def ping(self):
        self._call("/v3/kv/range", {"key": _b64("/registry/health")})

    @staticmethod
    def _kv(kv):
        return json.loads(base64.b64decode(kv["value"])), int(kv.get("mod_revision", 0))

    def get(self, key):
        r = self._call("/v3/kv/range", {"key": _b64(key)})
        kvs = r.get("kvs") or []
        return self._kv(kvs[0]) if kvs else None

    def list(self, prefix):
        r = self._call("/v3/kv/range", {"key": _b64(prefix), "range_end": _b64(prefix_end(prefix))})
        return [self._kv(kv) for kv in r.get("kvs") or []], int(r["header"]["revision"])

    def _txn(self, key, compare, value):
        r = self._call("/v3/kv/txn", {"compare": [dict(compare, key=_b64(key))],
                                      "success": [{"request_put": {"key": _b64(key), "value": _b64(json.dumps(value))}}]})
        return int(r["header"]["revision"]) if r.get("succeeded") else None

    def create(self, key, value):
        """The new revision, or None when the key exists."""
        return self._txn(key, {"target": "CREATE", "result": "EQUAL", "create_revision": "0"}, value)

    def update(self, key, value, expect_rev):
        """The new revision, or None when the key's mod_revision is not expect_rev (or it is gone)."""
        return self._txn(key, {"target": "MOD", "result": "EQUAL", "mod_revision": str(expect_rev)}, value)

    def delete(self, key, expect_rev=None):
        if expect_rev is None:
            r = self._call("/v3/kv/deleterange", {"key": _b64(key)})
            return int(r.get("deleted", 0)) > 0
        r = self._call("/v3/kv/txn", {"compare": [{"key": _b64(key), "target": "MOD", "result": "EQUAL",
                                                   "mod_revision": str(expect_rev)}],
                                      "success": [{"request_delete_range": {"key": _b64(key)}}]})
        return bool(r.get("succeeded"))

    def delete_prefix(self, prefix):
        self._call("/v3/kv/deleterange", {"key": _b64(prefix), "range_end": _b64(prefix_end(prefix))})

    def revision(self):
        return int(self._call("/v3/kv/range", {"key": _b64("/registry/health")})["header"]["revision"])


class FileStore:
    """One JSON file, locked (flock) for each operation; re-read only when it changed."""

    kind = "file"

    def __init__(self, path):
        self.path = path
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self._lock = threading.Lock()
        self._cache, self._stamp = None, None

    def _op(self, fn, write=False):
        with self._lock, open(self.path + ".lock", "a") as lk:
            fcntl.flock(lk, fcntl.LOCK_EX if write else fcntl.LOCK_SH)
            try:
                st = os.stat(self.path)
                stamp = (st.st_mtime_ns, st.st_size)
                if stamp != self._stamp:
                    with open(self.path) as f:
                        self._cache, self._stamp = json.load(f), stamp
            except FileNotFoundError:
                self._cache, self._stamp = {"rev": 1, "kv": {}}, None
            data = self._cache
            result, changed = fn(data)
            if changed:
                tmp = self.path + ".tmp"
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "w") as f:
                    json.dump(data, f)
                os.replace(tmp, self.path)
                st = os.stat(self.path)
                self._stamp = (st.st_mtime_ns, st.st_size)
            return result

    def ping(self):
        return True

    def get(self, key):
        def fn(d):
            e = d["kv"].get(key)
            return (e[1], e[0]) if e else None, False
        return self._op(fn)

    def list(self, prefix):
        def fn(d):
            return ([(v, r) for k, (r, v) in sorted(d["kv"].items()) if k.startswith(prefix)], d["rev"]), False
        return self._op(fn)

    def _put(self, key, value, ok):
        def fn(d):
            if not ok(d["kv"].get(key)):
                return None, False
            d["rev"] += 1
            d["kv"][key] = [d["rev"], value]
            return d["rev"], True
        return self._op(fn, write=True)

    def create(self, key, value):
        return self._put(key, value, lambda e: e is None)

    def update(self, key, value, expect_rev):
        return self._put(key, value, lambda e: e is not None and e[0] == expect_rev)

    def delete(self, key, expect_rev=None):
        def fn(d):
            e = d["kv"].get(key)
            if e is None or (expect_rev is not None and e[0] != expect_rev):
                return False, False
            del d["kv"][key]
            d["rev"] += 1
            return True, True
        return self._op(fn, write=True)

    def delete_prefix(self, prefix):
        def fn(d):
            gone = [k for k in d["kv"] if k.startswith(prefix)]
            for k in gone:
                del d["kv"][k]
            if gone:
                d["rev"] += 1
            return None, bool(gone)
        return self._op(fn, write=True)

    def revision(self):
        return self._op(lambda d: (d["rev"], False))


def open_store(args, file_path, tries=10, wait=1.0, log=print):
    """EtcdStore when the flags' etcd answers (retried a few seconds), else FileStore(file_path)."""
    import time
    servers = [s for s in (args.get("etcd-servers") or "").split(",") if s]
    if servers:
        try:
            st = EtcdStore(servers, args.get("etcd-cafile"), args.get("etcd-certfile"), args.get("etcd-keyfile"))
            for n in range(tries):
                try:
                    st.ping()
                    log(f"I storage: etcd {','.join(servers)}")
                    return st
                except StoreUnavailable as e:
                    if n == tries - 1:
                        log(f"W storage: no etcd answers ({e}); objects in {file_path} on this host only")
                    time.sleep(wait)
        except (OSError, ssl.SSLError) as e:
            log(f"W storage: etcd client files unusable ({e}); objects in {file_path} on this host only")
    return FileStore(file_path)

"""Where the double keeps objects: the real etcd the apiserver manifest names (--etcd-servers with
--etcd-cafile/--etcd-certfile/--etcd-keyfile, through etcdctl, mutual TLS), so
every master's double shows the same objects (external etcd, or the stacked etcd members the kubelet
double runs); or, when no etcd answers there (no etcd binary on the host for the kubelet double to
run), a file on this host (then masters do NOT share objects).

Both give what the API server needs from etcd: a cluster-wide monotonic revision (resourceVersion
= the key's mod_revision, as the real API server does), create-if-absent and update-if-unchanged."""
from __future__ import annotations

import base64
import fcntl
import json
import os
import subprocess
import threading


class StoreUnavailable(Exception):
    pass


class EtcdStore:
    """etcd v3 through etcdctl (-w json): the collection's etcd is configured by a file, which leaves
    etcd's HTTP/JSON gateway off (its default comes from the command-line flag only), and a gRPC
    client is not available on the hosts; etcdctl speaks etcd's gRPC API with mutual TLS.

    Reads come from a cache of /registry/ fed by one long-lived `etcdctl watch` (start_cache), as
    the real API server serves from its watch cache (apiserver/pkg/storage/cacher): a list of the
    prefix at revision R, then a watch from R+1. Writes go to etcd (txn: the same create-if-absent
    and update-if-unchanged), and a read waits until the cache has seen the revision of this
    store's last write, or of the last conflict it met, so a client reads its own writes and a
    retried update reads the object that beat it. Another master's write reaches the cache when
    its watch event does (milliseconds, more on a loaded host): a read that must see every write
    made anywhere before it (fresh=True: the server asks so for a client's GET or LIST without
    resourceVersion=0, which the real server answers as etcd has them now) goes to etcd. Until the cache is
    ready, or while its watch is restarted, reads go to etcd."""

    kind = "etcd"
    PREFIX = "/registry/"
    WAIT = 2.0   # seconds a read waits for the cache to catch up before it asks etcd

    def __init__(self, endpoints, cafile, certfile, keyfile, etcdctl="etcdctl", timeout=5):
        self.base = [etcdctl, "--endpoints=" + ",".join(endpoints), f"--command-timeout={timeout}s",
                     "--dial-timeout=3s", "-w", "json"]
        for flag, f in (("cacert", cafile), ("cert", certfile), ("key", keyfile)):
            if f:
                self.base.append(f"--{flag}={f}")
        self.endpoints = endpoints
        self._cond = threading.Condition()
        self._cache = None        # key -> (base64 value, mod_revision); None: not ready
        self._rev = 0             # the revision the cache has seen
        self._need = 0            # the revision a read must see (this store's writes and conflicts)
        self._watch, self._closed = None, False

    def _run(self, args, stdin=None):
        try:
            r = subprocess.run(self.base + args, input=stdin, capture_output=True, text=True, timeout=30,
                               env=dict(os.environ, ETCDCTL_API="3"), check=False)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise StoreUnavailable(f"etcd {self.endpoints}: {e}") from None
        if r.returncode != 0:
            raise StoreUnavailable(f"etcd {self.endpoints}: {(r.stderr or r.stdout).strip()}")
        return json.loads(r.stdout or "{}")

    # ------------------------------------------------------------ the watch cache
    def start_cache(self, log=print):
        threading.Thread(target=self._feed, args=(log,), daemon=True).start()

    def close(self):
        """The cache's watch stopped (the double itself never closes its store: its watch ends with it)."""
        self._closed = True
        if self._watch:
            self._watch.kill()

    def _saw(self, revision):
        """A change under the prefix at this revision (this store's write, or the one that beat its
        transaction): later reads wait for the cache to see it. (Only changes under the prefix: the
        revision of a response that changed nothing may be of a write elsewhere, which the watch
        never sends.)"""
        with self._cond:
            self._need = max(self._need, revision)

    def _feed(self, log):
        import time
        while not self._closed:
            try:
                listed = self._run(["get", "--prefix", self.PREFIX])
                rev = int(listed["header"]["revision"])
                with self._cond:
                    self._cache = {base64.b64decode(kv["key"]).decode(): (kv.get("value", ""), int(kv["mod_revision"]))
                                   for kv in listed.get("kvs") or []}
                    self._rev = rev
                    self._cond.notify_all()
                # interactive: the watch is asked on its stdin, which stays open as long as this
                # process lives - etcdctl exits at its end (EOF), so no watch outlives the double
                proc = self._watch = subprocess.Popen(self.base + ["watch", "--interactive"], stdin=subprocess.PIPE,
                                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                                      env=dict(os.environ, ETCDCTL_API="3"))
                try:
                    proc.stdin.write(f"watch --prefix {self.PREFIX} --rev={rev + 1}\n")
                    proc.stdin.flush()
                    for line in proc.stdout:
                        resp = json.loads(line)
                        if resp.get("Canceled") or resp.get("CompactRevision"):
                            break     # compacted past what it had seen: list again
                        with self._cond:
                            for ev in resp.get("Events") or []:
                                kv = ev["kv"]
                                key = base64.b64decode(kv["key"]).decode()
                                if ev.get("type") == 1:     # mvccpb.DELETE
                                    self._cache.pop(key, None)
                                else:
                                    self._cache[key] = (kv.get("value", ""), int(kv["mod_revision"]))
                            self._rev = max(self._rev, int(resp["Header"]["revision"]))
                            self._cond.notify_all()
                    if not self._closed:
                        log("W storage: etcd's watch ended; the cache lists again")
                finally:
                    proc.kill()
                    proc.wait()
                    proc.stdin.close()
            except (StoreUnavailable, OSError, ValueError, KeyError) as e:
                log(f"W storage: the cache's watch of etcd: {e}; reads go to etcd meanwhile")
            with self._cond:
                self._cache = None
            time.sleep(1)

    def _cached(self):
        """The cache, caught up with this store's last write or conflict; None: ask etcd."""
        with self._cond:
            if self._cache is None:
                return None
            need = self._need
            if not self._cond.wait_for(lambda: self._cache is None or self._rev >= need, timeout=self.WAIT):
                return None
            return self._cache

    def ping(self):
        self._run(["get", "/registry/health"])

    @staticmethod
    def _kv(kv):
        return json.loads(base64.b64decode(kv["value"])), int(kv.get("mod_revision", 0))

    def get(self, key, fresh=False):
        """(object, its revision) or None; fresh: as etcd has it now, not as the cache has seen it."""
        with self._cond:
            cache = None if fresh else self._cached()
            if cache is not None:
                got = cache.get(key)
                return (json.loads(base64.b64decode(got[0])), got[1]) if got else None
        kvs = self._run(["get", key]).get("kvs") or []
        return self._kv(kvs[0]) if kvs else None

    def list(self, prefix, fresh=False):
        with self._cond:
            cache = None if fresh else self._cached()
            if cache is not None and prefix.startswith(self.PREFIX):
                return ([(json.loads(base64.b64decode(v)), r) for k, (v, r) in sorted(cache.items()) if k.startswith(prefix)],
                        self._rev)
        r = self._run(["get", "--prefix", prefix])
        return [self._kv(kv) for kv in r.get("kvs") or []], int(r["header"]["revision"])

    def _txn(self, key, compare, op):
        """The new revision, or None when the compare failed; then the key as it is now is read in
        the same transaction, and later reads wait for the cache to have it."""
        # etcdctl txn reads: compares, a blank line, success requests, a blank line, failure requests
        r = self._run(["txn"], f"{compare}\n\n{op}\n\nget {key}\n\n")
        if r.get("succeeded"):
            self._saw(int(r["header"]["revision"]))
            return int(r["header"]["revision"])
        for resp in r.get("responses") or []:
            for kv in ((resp.get("Response") or {}).get("ResponseRange") or {}).get("kvs") or []:
                self._saw(int(kv["mod_revision"]))
        return None

    @staticmethod
    def _put(key, value):
        return f"put {key} {json.dumps(json.dumps(value))}"

    def create(self, key, value):
        """The new revision, or None when the key exists."""
        return self._txn(key, f'create("{key}") = "0"', self._put(key, value))

    def update(self, key, value, expect_rev):
        """The new revision, or None when the key's mod_revision is not expect_rev (or it is gone)."""
        return self._txn(key, f'mod("{key}") = "{int(expect_rev)}"', self._put(key, value))

    def _del(self, args):
        r = self._run(["del"] + args)
        if int(r.get("deleted", 0)):
            self._saw(int(r["header"]["revision"]))
        return int(r.get("deleted", 0)) > 0

    def delete(self, key, expect_rev=None):
        if expect_rev is None:
            return self._del([key])
        return self._txn(key, f'mod("{key}") = "{int(expect_rev)}"', f"del {key}") is not None

    def delete_prefix(self, prefix):
        self._del(["--prefix", prefix])

    def revision(self):
        with self._cond:
            if self._cached() is not None:
                return self._rev
        return int(self._run(["get", "/registry/health"])["header"]["revision"])


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

    def get(self, key, fresh=False):   # (one file: always as it is now)
        def fn(d):
            e = d["kv"].get(key)
            return (e[1], e[0]) if e else None, False
        return self._op(fn)

    def list(self, prefix, fresh=False):
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


def stacked(servers) -> bool:
    """kubeadm's stacked etcd: the API server's only etcd is the local member, https://127.0.0.1:2379
    (phases/controlplane/manifests.go: the etcd servers of a local etcd)."""
    return bool(servers) and all(s.split("://", 1)[-1].split(":")[0] in ("127.0.0.1", "[::1]", "localhost") for s in servers)


def open_store(args, file_path, tries=3, wait=1.0, log=print, etcd_wait=0.0, file_only=False):
    """EtcdStore of the flags' etcd; FileStore(file_path) when the harness asks for it (file_only: a
    scenario that runs no etcd at all) or for stacked etcd that no kubelet double runs (etcd_wait 0:
    no etcd binary on the host, the doubles-only tests). etcd_wait: with stacked
    etcd, the seconds to keep trying (the kubelet double runs this host's etcd static pod: it starts
    after this API server, as kubeadm writes its manifest after the API server's). An etcd that does
    not answer (3 tries, ~12 s at most, or that wait) raises StoreUnavailable: a real kube-apiserver
    does not serve without its storage, it exits and its kubelet restarts it (a crash loop)."""
    import time
    servers = [s for s in (args.get("etcd-servers") or "").split(",") if s]
    if file_only:
        log(f"I storage: {file_path} on this host only (the test harness runs no etcd in this scenario)")
    if file_only or not servers:
        return FileStore(file_path)
    st = EtcdStore(servers, args.get("etcd-cafile"), args.get("etcd-certfile"), args.get("etcd-keyfile"))
    deadline = time.monotonic() + (etcd_wait if stacked(servers) else 0)
    n = 0
    while True:
        try:
            st.ping()
            log(f"I storage: etcd {','.join(servers)} (reads from a cache fed by its watch)")
            st.start_cache(log)
            return st
        except StoreUnavailable as e:
            n += 1
            if n >= tries and time.monotonic() >= deadline:
                if stacked(servers) and not etcd_wait:
                    log(f"W storage: no etcd runs on this host ({e}); objects in {file_path} on this host only")
                    return FileStore(file_path)
                raise StoreUnavailable(f"etcd {','.join(servers)} did not answer: {e}") from None
        time.sleep(wait)

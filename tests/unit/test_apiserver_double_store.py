"""The API server double's etcd store (tests/apiserver_double/apiserver_double/store.py): reads from
the cache its watch feeds, writes through etcd's transactions, against a fake etcdctl on the
controller that keeps one key space with revisions in a file and speaks etcdctl's `-w json` (the
shapes of etcd 3.4's etcdctl: get, del, txn from stdin, watch --interactive). The real etcd behind it
is exercised by the scenarios (tests/integration/test_apiserver_double.py)."""
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "apiserver_double"))
from apiserver_double import server, store  # noqa: E402
from apiserver_double.logic import ApiError  # noqa: E402
from apiserver_double.resources import BUILTIN  # noqa: E402

FAKE = r'''#!PYTHON
import base64, fcntl, json, os, re, sys, threading, time
path = "STATE"
args = [a for a in sys.argv[1:] if not a.startswith("--") and a not in ("-w", "json")]
prefix = "--prefix" in sys.argv
b64 = lambda s: base64.b64encode(s.encode()).decode()

def locked(fn):
    with open(path + ".lock", "a") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        st = json.load(open(path))
        out = fn(st)
        json.dump(st, open(path, "w"))
        return out

def match(st, key, pre):
    return sorted(k for k in st["kv"] if (k.startswith(key) if pre else k == key))

def kv(st, k):
    v, mod, create = st["kv"][k]
    return {"key": b64(k), "create_revision": create, "mod_revision": mod, "version": 1, "value": v}

def put(st, k, v):
    st["rev"] += 1
    st["kv"][k] = [b64(v), st["rev"], st["kv"].get(k, [0, 0, st["rev"]])[2]]
    st["log"].append([st["rev"], 0, k])

def delete(st, keys):
    if keys:
        st["rev"] += 1
    for k in keys:
        del st["kv"][k]
        st["log"].append([st["rev"], 1, k])
    return len(keys)

def head(st):
    return {"header": {"revision": st["rev"]}}

def cmd(st):
    st["calls"].append(args[0])
    if args[0] == "get":
        return {**head(st), "kvs": [kv(st, k) for k in match(st, args[1], prefix)]}
    if args[0] == "del":
        gone = delete(st, match(st, args[1], prefix))
        return {**head(st), "deleted": gone}   # (the header: the revision after the delete)
    if args[0] == "txn":
        compare, ok, fail = sys.stdin.read().split("\n\n")[:3]
        what, key, want = re.match(r'(\w+)\("(.*)"\) = "(\d+)"', compare).groups()
        have = st["kv"].get(key, [None, 0, 0])[1 if what == "mod" else 2]
        good = have == int(want)
        out = {**head(st), "succeeded": good, "responses": []}
        for op in (ok if good else fail).strip().splitlines():
            verb, k, *v = op.split(" ", 2)
            if verb == "put":
                put(st, k, json.loads(v[0]))
            elif verb == "del":
                delete(st, [k])
            elif verb == "get":
                out["responses"].append({"Response": {"ResponseRange": {"kvs": [kv(st, x) for x in match(st, k, False)]}}})
        out["header"]["revision"] = st["rev"]
        return out

if args[:1] == ["watch"]:
    line = sys.stdin.readline()
    pre, since = line.split()[2], int(line.split("--rev=")[1])
    threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    while True:
        time.sleep(0.05)
        if os.path.exists(path + ".paused"):   # a watch that lags (tests: lagging())
            continue
        st = json.load(open(path))
        evs = [e for e in st["log"] if e[0] >= since and e[2].startswith(pre)]
        if evs:
            events = [{"kv": kv(st, k)} if t == 0 and k in st["kv"] else {"type": 1, "kv": {"key": b64(k), "mod_revision": r}}
                      for r, t, k in evs]
            print(json.dumps({"Header": {"revision": st["rev"]}, "Events": events, "CompactRevision": 0, "Canceled": False}), flush=True)
            since = evs[-1][0] + 1
print(json.dumps(locked(cmd)))
'''


@pytest.fixture(name="etcd")
def fake_etcd(tmp_path):
    state = tmp_path / "etcd.json"
    state.write_text(json.dumps({"rev": 1, "kv": {}, "log": [], "calls": []}))
    exe = tmp_path / "etcdctl"
    exe.write_text(FAKE.replace("PYTHON", sys.executable).replace("STATE", str(state)))
    exe.chmod(0o755)
    stores = []

    def calls():
        return json.loads(state.read_text())["calls"]

    def cached():
        st = store.EtcdStore(["https://192.0.2.11:2379"], None, None, None, etcdctl=str(exe))
        stores.append(st)
        st.start_cache(log=lambda m: None)
        assert wait_until(lambda: st._cache is not None), "the cache did not get ready"
        return st

    def held(on):
        """The watch sends nothing from held(True) until held(False): the cache stays behind for as
        long as a test needs, however slow the machine."""
        pause = Path(str(state) + ".paused")
        if on:
            pause.touch()
        else:
            pause.unlink()

    def lagging(seconds=0.5):
        """The watch sends nothing for the next `seconds`: a read right after a write must wait for it."""
        held(True)
        threading.Timer(seconds, held, (False,)).start()

    yield {"cached": cached, "plain": lambda: store.EtcdStore(["x"], None, None, None, etcdctl=str(exe)),
           "calls": calls, "lagging": lagging, "held": held}
    for st in stores:
        st.close()


def wait_until(cond, seconds=20, every=0.02):
    """(the unit tests run beside the scenarios, at the lowest priority: the watch may be slow)"""
    deadline = time.monotonic() + seconds
    while not cond() and time.monotonic() < deadline:
        time.sleep(every)
    return cond()


def caught_up(st):
    return wait_until(lambda: st._rev >= st._need)


def test_reads_see_their_own_writes_and_come_from_the_cache(etcd):
    st = etcd["cached"]()
    # at once after each write (the read waits for the cache to have the write's revision, or after
    # WAIT asks etcd): what was written
    etcd["lagging"](1.0)
    rev = st.create("/registry/core/pods/ns/a", {"n": 1})
    assert rev and st.create("/registry/core/pods/ns/a", {"n": 2}) is None
    assert st.get("/registry/core/pods/ns/a") == ({"n": 1}, rev)
    etcd["lagging"](1.0)
    new = st.update("/registry/core/pods/ns/a", {"n": 3}, rev)
    assert st.list("/registry/core/pods/") == ([({"n": 3}, new)], new)
    # once the cache has the writes, reads do not go to etcd
    assert caught_up(st)
    before = etcd["calls"]().count("get")
    for dummy in range(20):
        assert st.get("/registry/core/pods/ns/a") == ({"n": 3}, new)
        assert st.list("/registry/core/pods/")[0] == [({"n": 3}, new)] and st.revision() == new
    assert etcd["calls"]().count("get") == before, "a read went to etcd"
    assert st.delete("/registry/core/pods/ns/a") and st.get("/registry/core/pods/ns/a") is None


def test_another_clients_write_reaches_the_cache_and_a_conflict_reads_the_winner(etcd):
    st, other = etcd["cached"](), etcd["plain"]()
    rev = st.create("/registry/core/configmaps/ns/c", {"v": 1})
    assert caught_up(st)
    etcd["lagging"](1.5)
    won = other.update("/registry/core/configmaps/ns/c", {"v": "other"}, rev)
    # this store's update with the revision it read fails; the transaction read the key, and the
    # next read waits until the cache has the write that won
    assert st.update("/registry/core/configmaps/ns/c", {"v": "mine"}, rev) is None
    assert st.get("/registry/core/configmaps/ns/c") == ({"v": "other"}, won)
    other.create("/registry/core/configmaps/ns/d", {"v": 4})
    assert wait_until(lambda: st.get("/registry/core/configmaps/ns/d") == ({"v": 4}, won + 1))


def test_a_fresh_read_sees_another_masters_write_before_the_cache_does(etcd):
    """What a client's GET or LIST without resourceVersion=0 reads (server.py): the object as etcd has
    it, while the cache has not seen another master's write yet; the cache still answers the rest."""
    st, other = etcd["cached"](), etcd["plain"]()
    rev = st.create("/registry/core/configmaps/ns/c", {"v": 1})
    assert caught_up(st)
    etcd["held"](True)
    won = other.update("/registry/core/configmaps/ns/c", {"v": 2}, rev)
    made = other.create("/registry/core/configmaps/ns/d", {"v": 3})
    assert st.get("/registry/core/configmaps/ns/c", fresh=True) == ({"v": 2}, won)
    assert st.list("/registry/core/configmaps/ns/", fresh=True) == ([({"v": 2}, won), ({"v": 3}, made)], made)
    # the cache, still behind: the object as it was, the new one not yet there
    assert st.get("/registry/core/configmaps/ns/c") == ({"v": 1}, rev)
    assert st.get("/registry/core/configmaps/ns/d") is None
    etcd["held"](False)
    assert wait_until(lambda: st.get("/registry/core/configmaps/ns/d") == ({"v": 3}, made))


def test_the_server_reads_etcd_where_a_real_one_would_not_serve_a_stale_cache(etcd):
    """Another master created a ConfigMap that this server's cache has not seen yet: a client's GET
    without resourceVersion=0 (fresh) finds it, one with resourceVersion=0 (the cache) does not, and a
    PATCH or DELETE of it is not refused as NotFound (the real GuaranteedUpdate reads etcd on a miss)."""
    cms = next(r for r in BUILTIN if r.plural == "configmaps")
    api, other = server.Api(etcd["cached"](), "v1.31.1"), server.Api(etcd["plain"](), "v1.31.1")
    api.ensure_system()
    assert caught_up(api.store)
    etcd["held"](True)
    other.create(cms, "default", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}})
    assert api.get(cms, "default", "c", fresh=True)["data"] == {"a": "1"}
    assert [o["metadata"]["name"] for o in api.list(cms, "default", {}, fresh=True)["items"]] == ["c"]
    with pytest.raises(ApiError) as e:
        api.get(cms, "default", "c")
    assert e.value.code == 404
    assert api.update(cms, "default", "c", None, patcher=lambda o: {**o, "data": {"a": "2"}})["data"] == {"a": "2"}
    other.create(cms, "default", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d"}})
    assert api.delete(cms, "default", "d")["status"] == "Success"
    etcd["held"](False)
    # a PUT with the resourceVersion another master returned, while this cache still has the older
    # copy: not a conflict (decided on etcd's copy, as GuaranteedUpdate retries with fresh data)
    assert caught_up(api.store) and wait_until(lambda: api.get(cms, "default", "c")["data"] == {"a": "2"})
    etcd["held"](True)
    theirs = other.update(cms, "default", "c", None, patcher=lambda o: {**o, "data": {"a": "3"}})
    assert api.get(cms, "default", "c")["data"] == {"a": "2"}     # (the cache: behind)
    assert api.update(cms, "default", "c", {**theirs, "data": {"a": "4"}})["data"] == {"a": "4"}
    etcd["held"](False)


def test_nothing_deleted_and_writes_elsewhere_do_not_hold_reads(etcd):
    st, other = etcd["cached"](), etcd["plain"]()
    st.create("/registry/core/pods/ns/a", {"n": 1})
    assert caught_up(st)
    other._run(["txn"], 'create("/elsewhere") = "0"\n\nput /elsewhere "1"\n\n\n')   # a revision the watch never sends
    st.delete_prefix("/registry/core/pods/gone/")                                 # deletes nothing
    assert not st.delete("/registry/core/pods/ns/none")
    # the revision of the last write under the prefix is all a read waits for: the cache has it
    # (and the watch never sends the others)
    assert caught_up(st)
    assert st.get("/registry/core/pods/ns/a")[0] == {"n": 1}


def test_until_the_cache_is_ready_reads_go_to_etcd(etcd):
    st = etcd["plain"]()      # no watch started
    rev = st.create("/registry/core/pods/ns/a", {"n": 1})
    assert st.get("/registry/core/pods/ns/a") == ({"n": 1}, rev)
    assert etcd["calls"]().count("get") == 1


def test_the_watch_ends_with_the_store_process(etcd, tmp_path):  # pylint: disable=unused-argument
    """The watch is asked on etcdctl's stdin: when the process holding it ends, so does etcdctl."""
    code = (f"import sys, time; sys.path.insert(0, {str(Path(store.__file__).parent.parent)!r}); "
            f"from apiserver_double import store; "
            f"st = store.EtcdStore(['x'], None, None, None, etcdctl={str(tmp_path / 'etcdctl')!r}); "
            "st.start_cache(log=print); t = time.monotonic() + 20\n"
            "while st._cache is None and time.monotonic() < t: time.sleep(0.02)\n"
            "print('up', st._cache is not None, flush=True)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert "up True" in proc.stdout, proc.stdout + proc.stderr
    # (etcdctl reads the end of its stdin and exits: on a busy machine that can take a while; a
    # watch that never ends still fails here)

    def left():
        return subprocess.run(["pgrep", "-f", f"{tmp_path}/etcdctl"], capture_output=True, text=True,
                              check=False).stdout.strip()
    assert wait_until(lambda: not left(), every=0.25), f"a watch outlived its double: {left()}"

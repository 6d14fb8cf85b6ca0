"""The kubeadm double's stacked etcd (tests/kubeadm_double/etcd_member.py and the etcd parts of
`kubeadm`): the static pod's command line, the member added as a learner and promoted on a
control-plane join, the member removed on reset - against a fake etcdctl that keeps a member list,
on the controller. Expected behaviour is kubeadm's (cmd/kubeadm/app/phases/etcd/local.go,
cmd/kubeadm/app/util/etcd/etcd.go, cmd/kubeadm/app/cmd/phases/reset/removeetcdmember.go)."""
import json
import sys

import pytest
import yaml

from harness import kubeadm_double

# a fake etcdctl: the member list in $FAKE_ETCD (JSON); a learner is in sync after one promote attempt
FAKE = r'''#!PYTHON
import json, os, sys
path = os.environ["FAKE_ETCD"]
st = json.load(open(path))
args = [a for a in sys.argv[1:] if not a.startswith("--") and a != "-w" and a != "json"]
flags = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
st["calls"].append([args, flags.get("endpoints")])
out = {"header": {"revision": 1}}
def save():
    json.dump(st, open(path, "w"))
if args[:2] == ["member", "list"]:
    out["members"] = st["members"]
elif args[:2] == ["member", "add"] and not st.get("added_once"):
    st["added_once"] = True
    save()
    sys.exit("Error: etcdserver: unhealthy cluster")
elif args[:2] == ["member", "add"]:
    new = {"ID": 1000 + len(st["members"]), "peerURLs": [flags["peer-urls"]], "isLearner": "--learner" in sys.argv}
    st["members"].append(new)
    out.update(member=new, members=st["members"])
elif args[:2] == ["member", "promote"]:
    m = next(m for m in st["members"] if format(m["ID"], "x") == args[2])
    if not st.get("tried"):
        st["tried"] = True
        save()
        sys.exit("Error: etcdserver: can only promote a learner member which is in sync with leader")
    m["isLearner"] = False
    m["name"] = "joined"
    m["clientURLs"] = [m["peerURLs"][0].replace(":2380", ":2379")]
elif args[:2] == ["member", "remove"]:
    st["members"] = [m for m in st["members"] if format(m["ID"], "x") != args[2]]
elif args[:2] == ["endpoint", "status"]:
    out = [{"Endpoint": e} for e in flags["endpoints"].split(",")]
save()
print(json.dumps(out))
'''

NODES = {"items": [
    {"metadata": {"name": "m2", "labels": {}}, "status": {"addresses": [{"type": "InternalIP", "address": "192.0.2.12"}]}},
    {"metadata": {"name": "m1", "labels": {"node-role.kubernetes.io/control-plane": ""}},
     "status": {"addresses": [{"type": "Hostname", "address": "m1"}, {"type": "InternalIP", "address": "192.0.2.11"}]}}]}
M1 = {"ID": 17, "name": "m1", "peerURLs": ["https://192.0.2.11:2380"], "clientURLs": ["https://192.0.2.11:2379"]}
CLUSTER = {"kubernetesVersion": "v1.30.4", "imageRepository": "registry.tke.com/library",
           "etcd": {"local": {"dataDir": "/var/lib/etcd", "extraArgs": {"quota-backend-bytes": "6442450944"}}}}


@pytest.fixture(params=["1.30", "1.31", "1.32"])
def double(request, monkeypatch, tmp_path):
    mod = kubeadm_double.load(request.param, monkeypatch)
    monkeypatch.setenv("KUBEADM_DOUBLE_WARNINGS", str(tmp_path / "warnings.log"))
    monkeypatch.setattr(mod.common, "K8S", str(tmp_path / "k8s"))
    (tmp_path / "k8s" / "manifests").mkdir(parents=True)
    fake = tmp_path / "etcdctl"
    fake.write_text(FAKE.replace("#!PYTHON", "#!" + sys.executable))
    fake.chmod(0o755)
    monkeypatch.setattr(mod.etcd_member, "ETCDCTL", str(fake))
    monkeypatch.setattr(mod.etcd_member, "PROMOTE_INTERVAL", 0.01)
    monkeypatch.setattr(mod.etcd_member, "BACKOFF_FIRST", 0.01)
    monkeypatch.setenv("FAKE_ETCD", str(tmp_path / "etcd.json"))
    mod.etcd = lambda: json.loads((tmp_path / "etcd.json").read_text())
    (tmp_path / "etcd.json").write_text(json.dumps({"members": [M1], "calls": []}))
    monkeypatch.setattr(mod.cluster_api, "cluster_get", lambda kubeconfig, path, what: NODES if path == "/api/v1/nodes" else
                        {"data": {"ClusterConfiguration": yaml.safe_dump(CLUSTER)}})
    mod.tmp = tmp_path
    return mod


def _command(mod):
    pod = yaml.safe_load(open(f"{mod.common.K8S}/manifests/etcd.yaml"))
    return pod, dict(a[2:].split("=", 1) for a in pod["spec"]["containers"][0]["command"][1:])


def test_the_init_manifest_is_kubeadms(double):
    double.static_pods.phase_etcd(CLUSTER, {"name": "m1", "address": "192.0.2.11"})
    pod, a = _command(double)
    assert pod["metadata"]["annotations"] == {"kubeadm.kubernetes.io/etcd.advertise-client-urls": "https://192.0.2.11:2379"}
    assert a["listen-client-urls"] == "https://127.0.0.1:2379,https://192.0.2.11:2379"
    assert a["listen-peer-urls"] == a["initial-advertise-peer-urls"] == "https://192.0.2.11:2380"
    assert a["initial-cluster"] == "m1=https://192.0.2.11:2380" and "initial-cluster-state" not in a
    assert a["quota-backend-bytes"] == "6442450944" and a["listen-metrics-urls"] == "http://127.0.0.1:2381"
    assert {v["name"]: v["hostPath"]["path"] for v in pod["spec"]["volumes"]} == {
        "etcd-data": "/var/lib/etcd", "etcd-certs": f"{double.common.PKI}/etcd"}


def test_a_control_plane_join_adds_a_learner_promotes_it_and_waits(double, monkeypatch, capsys):
    monkeypatch.setattr(double.os, "makedirs", lambda *a, **kw: None)
    double.cmd_join.join_stacked_etcd(CLUSTER, {"name": "m2", "address": "192.0.2.12"}, "admin.conf")
    _pod, a = _command(double)
    assert a["initial-cluster"] == "m1=https://192.0.2.11:2380,m2=https://192.0.2.12:2380"
    assert a["initial-cluster-state"] == "existing"
    st = double.etcd()
    calls = [c[0][:2] for c in st["calls"]]
    # the client starts on the control-plane Nodes' addresses, then follows the member list
    assert st["calls"][0][1] == "https://192.0.2.11:2379"
    # etcd refuses the first add (a member joined just now): retried; the promotion until in sync
    assert calls.count(["member", "add"]) == 2 and calls.count(["member", "promote"]) == 2
    added = [c[0] for c in st["calls"] if c[0][:2] == ["member", "add"]][-1]
    assert added[2] == "m2" and len(st["members"]) == 2
    assert [m["isLearner"] for m in st["members"] if m["ID"] != 17] == [False]
    assert calls[-1] == ["endpoint", "status"]
    out = capsys.readouterr().out
    assert "[etcd] Announced new etcd member joining to the existing etcd cluster" in out
    assert "[etcd] Waiting for the new etcd member to join the cluster. This can take up to 40s" in out


def test_learner_mode_is_on_unless_the_gate_is_off(double):
    learner_mode = double.etcd_member.learner_mode
    assert learner_mode(None) and learner_mode({}) and not learner_mode({"EtcdLearnerMode": False})
    assert double.etcd_member.client_url("fd00::1") == "https://[fd00::1]:2379"


def test_reset_removes_the_member_then_cleans_the_data(double, monkeypatch, capsys):
    data = double.tmp / "data"
    (data / "member").mkdir(parents=True)
    double.static_pods.phase_etcd({**CLUSTER, "etcd": {"local": {"dataDir": str(data)}}}, {"name": "m2", "address": "192.0.2.12"})
    (double.tmp / "k8s" / "manifests" / "kube-apiserver.yaml").write_text(yaml.safe_dump(
        {"spec": {"containers": [{"command": ["kube-apiserver", "--advertise-address=192.0.2.12"]}]}}))
    (double.tmp / "k8s" / "admin.conf").write_text("x")
    m2 = {"ID": 18, "name": "m2", "peerURLs": ["https://192.0.2.12:2380"], "clientURLs": ["https://192.0.2.12:2379"]}
    (double.tmp / "etcd.json").write_text(json.dumps({"members": [M1, m2], "calls": []}))
    monkeypatch.setattr(double.common, "STATE", str(double.tmp / "state.json"))
    monkeypatch.setattr(double.cmd_reset, "APISERVER_STORE", str(double.tmp / "store.json"))
    double.cmd_reset.run_reset(["phase", "remove-etcd-member"])
    assert [m["name"] for m in double.etcd()["members"]] == ["m1"]
    assert not any(data.iterdir())
    # the only member left, reached at its own client URL, is not removed
    double.static_pods.phase_etcd({**CLUSTER, "etcd": {"local": {"dataDir": str(data)}}}, {"name": "m1", "address": "192.0.2.11"})
    (double.tmp / "k8s" / "manifests" / "kube-apiserver.yaml").write_text(yaml.safe_dump(
        {"spec": {"containers": [{"command": ["kube-apiserver", "--advertise-address=192.0.2.11"]}]}}))
    double.cmd_reset.run_reset(["phase", "remove-etcd-member"])
    assert [m["name"] for m in double.etcd()["members"]] == ["m1"]
    assert "Failed to remove etcd member" not in capsys.readouterr().err


def test_the_api_double_waits_only_for_a_stacked_etcd(monkeypatch, tmp_path):
    sys.path.insert(0, str(kubeadm_double.APISERVER))
    from apiserver_double import store
    assert store.stacked(["https://127.0.0.1:2379"]) and not store.stacked(["https://192.0.2.11:2379"])
    pings = []

    def ping(self):
        pings.append(1)
        if len(pings) < 6:
            raise store.StoreUnavailable("connection refused")
    monkeypatch.setattr(store.EtcdStore, "ping", ping)
    monkeypatch.setattr(store.EtcdStore, "start_cache", lambda self, log: None)   # (no etcd here to watch)
    args = {"etcd-servers": "https://127.0.0.1:2379"}
    assert store.open_store(args, str(tmp_path / "s.json"), wait=0.01, log=lambda m: None, etcd_wait=30).kind == "etcd"
    pings.clear()
    pings.clear()
    # no kubelet double runs etcd here (no etcd binary): the host's own file
    assert store.open_store(args, str(tmp_path / "s.json"), wait=0.01, log=lambda m: None).kind == "file"
    # an etcd that should answer and does not: no storage, as the real server (it exits)
    pings.clear()
    with pytest.raises(store.StoreUnavailable, match="etcd https://127.0.0.1:2379 did not answer"):
        store.open_store(args, str(tmp_path / "s.json"), wait=0.01, log=lambda m: None, etcd_wait=0.02)
    pings.clear()
    args = {"etcd-servers": "https://192.0.2.11:2379"}
    # the harness's mark: a scenario without etcd, the file asked for, no etcd tried
    assert store.open_store(args, str(tmp_path / "s.json"), wait=0.01, log=lambda m: None, file_only=True).kind == "file"
    assert not pings
    with pytest.raises(store.StoreUnavailable, match="did not answer: connection refused"):
        store.open_store(args, str(tmp_path / "s.json"), wait=0.01, log=lambda m: None, etcd_wait=30)


def test_member_operations_retry_within_kubeadms_backoff_overall(double, monkeypatch):
    """etcdBackoff's steps, and their waits' sum as the overall bound: an etcdctl that fails slowly
    (its own dial and command timeouts) ends the retries before all 18 steps."""
    import types
    em = double.etcd_member
    monkeypatch.setattr(em, "BACKOFF_TOTAL", 0.2)
    # a clock of its own, so that a loaded machine's late wake-ups do not count
    now = [0.0]
    monkeypatch.setattr(em, "time", types.SimpleNamespace(monotonic=lambda: now[0],
                                                          sleep=lambda s: now.__setitem__(0, now[0] + s)))
    tries = []

    def slow_failure():
        tries.append(now[0])
        now[0] += 0.05
        raise em.EtcdError("etcdctl member list: context deadline exceeded")
    client = object.__new__(em.Client)   # retried() reaches no etcd itself
    with pytest.raises(em.EtcdError, match="context deadline exceeded"):
        client.retried(slow_failure)
    assert 2 <= len(tries) < em.BACKOFF_STEPS and now[0] <= em.BACKOFF_TOTAL + 0.05, (tries, now)
    assert client.retried(lambda: "answered") == "answered"

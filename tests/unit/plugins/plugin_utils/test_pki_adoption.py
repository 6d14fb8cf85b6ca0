"""A lost PKI store rebuilt from what the hosts hold (k8s_pki/adoption.py, playbooks/adopt.yml),
and the rule that makes it safe: a CA whose key no host holds is kept, what it must sign refused."""
import datetime
import fnmatch
import io
import tarfile
from pathlib import Path

import pytest
import yaml

from ansible_collections.offline_pot.tke.plugins.plugin_utils import k8s_pki as p
from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki import adoption
from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki.store import journal_key_ok

NOW = datetime.datetime(2026, 1, 1, 12, 0, tzinfo=datetime.timezone.utc)
ADOPT = Path(adoption.__file__).resolve().parents[3] / "playbooks" / "adopt.yml"
HOSTS = ("m1", "m2", "w1", "e1")


def cluster(**kw):
    """Two masters, a worker holding the registry, an external etcd member."""
    args = dict(
        masters=[{"name": "m1", "ip": "10.0.0.11"}, {"name": "m2", "ip": "10.0.0.12"}],
        nodes=[{"name": "w1", "ip": "10.0.0.21"}], registry=[{"name": "w1", "ip": "10.0.0.21"}],
        etcd=[{"name": "e1", "ip": "10.0.0.31"}],
        machines=[{"name": n, "ip": i} for n, i in (("m1", "10.0.0.11"), ("m2", "10.0.0.12"), ("w1", "10.0.0.21"),
                                                    ("e1", "10.0.0.31"))],
        vip="10.0.0.100", control_plane_endpoint="10.0.0.100:6443", key_type="ecdsa")
    args.update(kw)
    return p.Cluster(**args)


@pytest.fixture(scope="module")
def store():
    return p.reconcile(cluster(), {}, NOW)[0]


def held(c, store, host):
    """What the pki phase wrote on a host: {dest: bytes}."""
    return {f["dest"]: store[f["src"]] for f in p.host_files(c, host)}


def tar_of(files):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(path.lstrip("/"))
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_the_hosts_give_back_the_store_but_what_only_the_controller_held(store):
    c = cluster()
    reads = {h: adoption.read_tar(tar_of(held(c, store, h))) for h in HOSTS}
    files, conflicts, missing = adoption.assemble(c, reads)
    assert conflicts == [] and missing == {}
    lost = sorted(set(store) - set(files))
    # TKE's admin client certificate and the external etcd's CA key were never on a host
    assert lost == ["etcd/ca.key", "tke/admin.crt", "tke/admin.key"], lost
    assert all(files[rel] == store[rel] for rel in files)
    # the install journal's key comes back from the masters, the only hosts that keep it
    assert files["tke/journal.key"] == store["tke/journal.key"] and journal_key_ok(files["tke/journal.key"])
    assert [h for h in HOSTS if "/etc/tke/pki/journal.key" in held(c, store, h)] == ["m1", "m2"]
    # the kubeconfigs gave back the client certificates and keys they embed
    for rel in ("kubeconfig/admin.key", "kubeconfig/kubelet/w1.crt", "kubeconfig/controller-manager.key"):
        assert files[rel] == store[rel], rel
    # the store made from them: every certificate a host holds reused, nothing on a host would change
    again, actions, warnings = p.reconcile(c, files, NOW)
    assert {a.name: a.action for a in actions if a.action != "reused"} == {"tke/admin": "issued"}
    assert p.changed_files(files, again) == ["tke/admin.crt", "tke/admin.key"]
    assert any(w.startswith("CA etcd/ca: its key is not in the store") for w in warnings), warnings
    assert adoption.host_sources(c, HOSTS) >= set(files)


def test_copies_that_differ_between_hosts_are_refused_and_files_no_host_holds_are_missing(store):
    c = cluster()
    reads = {h: held(c, store, h) for h in HOSTS}
    reads["w1"]["/etc/kubernetes/pki/ca.crt"] = store["front-proxy-ca.crt"]
    del reads["w1"]["/etc/kubernetes/kubelet.conf"]
    files, conflicts, missing = adoption.assemble(c, reads)
    assert conflicts == ["/etc/kubernetes/pki/ca.crt differs between m1 and w1 (store file ca.crt)"], conflicts
    assert missing == {"kubeconfigs/w1/kubelet.conf": ["w1"]}
    assert "kubeconfig/kubelet/w1.crt" not in files
    # a kubeconfig that names its credential's files (kubeadm's kubelet.conf after certificate
    # rotation) gives back no client certificate: missing, not a refusal
    reads = {h: held(c, store, h) for h in HOSTS}
    reads["m2"]["/etc/kubernetes/kubelet.conf"] = (
        b"apiVersion: v1\nusers:\n- name: default-auth\n  user:\n"
        b"    client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem\n"
        b"    client-key: /var/lib/kubelet/pki/kubelet-client-current.pem\n")
    files, conflicts, missing = adoption.assemble(c, reads)
    assert conflicts == [] and missing == {"kubeconfig/kubelet/m2.crt": ["m2"], "kubeconfig/kubelet/m2.key": ["m2"]}
    assert files["kubeconfigs/m2/kubelet.conf"] == reads["m2"]["/etc/kubernetes/kubelet.conf"]


def test_a_ca_without_its_key_is_kept_and_what_it_must_sign_is_refused(store):
    files = {k: v for k, v in store.items() if k != "etcd/ca.key"}
    kept, actions, dummy = p.reconcile(cluster(), files, NOW)
    assert {a.name: a.action for a in actions}["etcd/ca"] == "reused" and kept["etcd/ca.crt"] == store["etcd/ca.crt"]
    with pytest.raises(ValueError, match=r"etcd/healthcheck-client must be renewed \(forced\) but its signer etcd/ca "
                                         r"has no key in the store"):
        p.reconcile(cluster(), files, NOW, force=["etcd/healthcheck-client"])
    # replacing the CA deliberately still works, and re-issues what it signed
    new, actions, dummy = p.reconcile(cluster(), files, NOW, force=["etcd/ca"])
    acts = {a.name: a.action for a in actions}
    assert acts["etcd/ca"] == "renewed" and acts["etcd/members/e1/server"] == "renewed" and "etcd/ca.key" in new


def covered(path):
    """Whether an absolute host path is inside what adoption.HOST_PATTERNS read (tar's patterns)."""
    rel = path.lstrip("/")
    return any(rel == pat or rel.startswith(pat + "/") or ("*" in pat and fnmatch.fnmatch(rel, pat))
               for pat in adoption.HOST_PATTERNS)


def test_what_adopt_reads_covers_every_place_the_pki_phase_writes():
    c = cluster(etcd=[])   # stacked etcd too: the masters hold the etcd CA key
    for host in HOSTS[:3]:
        for f in p.host_files(c, host) + p.host_files(cluster(), host):
            assert covered(f["dest"]), f["dest"]
    assert not covered("/etc/kubernetes/manifests/kube-apiserver.yaml")
    raw = next(t for play in yaml.safe_load(ADOPT.read_text()) for t in play.get("tasks", [])
               if "ansible.builtin.raw" in t)
    assert " ".join(adoption.HOST_PATTERNS) in raw["ansible.builtin.raw"], raw

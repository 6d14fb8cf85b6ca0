import datetime
import ipaddress

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID as EKU

from ansible_collections.offline_pot.tke.plugins.plugin_utils import k8s_pki as p

NOW = datetime.datetime(2026, 1, 1, 12, 0, tzinfo=datetime.timezone.utc)


def cluster(**kw):
    args = dict(
        masters=[{"name": "m1", "ip": "10.0.0.11"}, {"name": "m2", "ip": "10.0.0.12"},
                 {"name": "m3", "ip": "10.0.0.13"}],
        nodes=[{"name": "w1", "ip": "10.0.0.21"}],
        registry=[{"name": "w1", "ip": "10.0.0.21"}],
        machines=[{"name": n, "ip": f"10.0.0.{i}"} for n, i in (("m1", 11), ("m2", 12), ("m3", 13), ("w1", 21))],
        vip="10.0.0.100", api_domain="api.tke.com", service_cidr="10.96.0.0/16",
        control_plane_endpoint="api.tke.com:6443",
        apiserver_extra_sans=["api.example.org"], key_type="ecdsa")
    args.update(kw)
    return p.Cluster(**args)


@pytest.fixture(scope="module")
def built():
    files, actions, warnings = p.reconcile(cluster(), {}, NOW)
    return files, actions, warnings


def cert(files, name):
    return x509.load_pem_x509_certificate(files[f"{name}.crt"])


def sans(c):
    dns, ips = p.cert_sans(c)
    return set(dns) | set(ips)


def ekus(c):
    return p.cert_ekus(c)


def test_first_run_issues_everything(built):
    files, actions, warnings = built
    assert warnings == []
    assert {a.action for a in actions} == {"issued"}
    names = [a.name for a in actions]
    for n in ("ca", "front-proxy-ca", "etcd/ca", "apiserver", "apiserver-kubelet-client", "front-proxy-client",
              "apiserver-etcd-client", "etcd/healthcheck-client", "etcd/members/m1/server", "etcd/members/m3/peer",
              "kubeconfig/admin", "kubeconfig/super-admin", "kubeconfig/kubelet/w1", "tke/server", "tke/admin",
              "tke/webhook", "sa"):
        assert n in names
    assert "kubeconfigs/m2/scheduler.conf" in files and "kubeconfigs/w1/kubelet.conf" in files


@pytest.mark.parametrize("name,cn,orgs,signer,eku", [
    ("apiserver", "kube-apiserver", [], "kubernetes", {EKU.SERVER_AUTH}),
    ("apiserver-kubelet-client", "kube-apiserver-kubelet-client", ["kubeadm:cluster-admins"], "kubernetes",
     {EKU.CLIENT_AUTH}),
    ("front-proxy-client", "front-proxy-client", [], "front-proxy-ca", {EKU.CLIENT_AUTH}),
    ("apiserver-etcd-client", "kube-apiserver-etcd-client", [], "etcd-ca", {EKU.CLIENT_AUTH}),
    ("etcd/healthcheck-client", "kube-etcd-healthcheck-client", [], "etcd-ca", {EKU.CLIENT_AUTH}),
    ("etcd/members/m2/server", "m2", [], "etcd-ca", {EKU.SERVER_AUTH, EKU.CLIENT_AUTH}),
    ("etcd/members/m2/peer", "m2", [], "etcd-ca", {EKU.SERVER_AUTH, EKU.CLIENT_AUTH}),
    ("kubeconfig/admin", "kubernetes-admin", ["kubeadm:cluster-admins"], "kubernetes", {EKU.CLIENT_AUTH}),
    ("kubeconfig/super-admin", "kubernetes-super-admin", ["system:masters"], "kubernetes", {EKU.CLIENT_AUTH}),
    ("kubeconfig/controller-manager", "system:kube-controller-manager", [], "kubernetes", {EKU.CLIENT_AUTH}),
    ("kubeconfig/scheduler", "system:kube-scheduler", [], "kubernetes", {EKU.CLIENT_AUTH}),
    ("kubeconfig/kubelet/w1", "system:node:w1", ["system:nodes"], "kubernetes", {EKU.CLIENT_AUTH}),
    ("tke/server", "tke-server", [], "kubernetes", {EKU.SERVER_AUTH}),
    ("tke/admin", "admin", ["system:masters"], "kubernetes", {EKU.CLIENT_AUTH}),
    ("tke/webhook", "tke-webhook", [], "kubernetes", {EKU.CLIENT_AUTH}),
])
def test_leaf_subject_usages_and_chain(built, name, cn, orgs, signer, eku):
    files = built[0]
    c = cert(files, name)
    assert c.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value == cn
    assert [a.value for a in c.subject.get_attributes_for_oid(x509.NameOID.ORGANIZATION_NAME)] == orgs
    assert c.issuer.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value == signer
    assert ekus(c) == eku
    ku = c.extensions.get_extension_for_class(x509.KeyUsage).value
    assert ku.digital_signature and not ku.key_cert_sign
    assert not p.cert_is_ca(c)
    ca_name = {"kubernetes": "ca", "front-proxy-ca": "front-proxy-ca", "etcd-ca": "etcd/ca"}[signer]
    assert p.signed_by(c, cert(files, ca_name))
    c.verify_directly_issued_by(cert(files, ca_name))
    assert p.key_matches(c, p.load_key(files[f"{name}.key"]))
    assert (p.not_after(c) - NOW).days == 365


@pytest.mark.parametrize("name,cn", [("ca", "kubernetes"), ("front-proxy-ca", "front-proxy-ca"), ("etcd/ca", "etcd-ca")])
def test_cas(built, name, cn):
    c = cert(built[0], name)
    assert c.subject == c.issuer
    assert c.subject.rfc4514_string() == f"CN={cn}"
    assert p.cert_is_ca(c)
    assert c.extensions.get_extension_for_class(x509.KeyUsage).value.key_cert_sign
    c.verify_directly_issued_by(c)
    assert (p.not_after(c) - NOW).days == 3650


def test_apiserver_sans(built):
    assert sans(cert(built[0], "apiserver")) == {
        "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local",
        "localhost", "api.tke.com", "m1", "m2", "m3", "api.example.org",
        "10.0.0.11", "10.0.0.12", "10.0.0.13", "10.0.0.100", "10.96.0.1", "127.0.0.1", "::1"}


def test_etcd_member_sans(built):
    files = built[0]
    assert sans(cert(files, "etcd/members/m2/server")) == {
        "m2", "localhost", "etcd", "etcd.kube-system", "10.0.0.12", "127.0.0.1", "::1"}
    assert sans(cert(files, "etcd/members/m2/peer")) == {"m2", "localhost", "10.0.0.12", "127.0.0.1", "::1"}


def test_tke_server_sans(built):
    assert sans(cert(built[0], "tke/server")) == {
        "localhost", "registry.tke.com", "*.registry.tke.com", "console.tke.com", "m1", "m2", "m3", "w1",
        "10.0.0.11", "10.0.0.12", "10.0.0.13", "10.0.0.21", "10.0.0.100", "127.0.0.1"}


def test_service_account_pair(built):
    files = built[0]
    key = p.load_key(files["sa.key"])
    assert files["sa.pub"] == p.public_to_pem(key.public_key())


def test_key_types():
    files, dummy, dummy = p.reconcile(cluster(key_type="rsa", masters=[{"name": "m1", "ip": "10.0.0.11"}], nodes=[],
                                      registry=[], machines=[]), {}, NOW)
    assert isinstance(p.load_key(files["apiserver.key"]), rsa.RSAPrivateKey)
    assert p.load_key(files["apiserver.key"]).key_size == 2048
    assert files["apiserver.key"].startswith(b"-----BEGIN RSA PRIVATE KEY-----")
    ku = cert(files, "apiserver").extensions.get_extension_for_class(x509.KeyUsage).value
    assert ku.key_encipherment
    assert isinstance(p.load_key(cert_key := files["etcd/ca.key"]), rsa.RSAPrivateKey), cert_key


def test_ecdsa_keys(built):
    assert isinstance(p.load_key(built[0]["apiserver.key"]).curve, ec.SECP256R1)


@pytest.mark.parametrize("version,group,super_admin", [("1.28.13", "system:masters", False),
                                                       ("1.29.8", "kubeadm:cluster-admins", True),
                                                       ("1.31.1", "kubeadm:cluster-admins", True),
                                                       # kubeadm 1.36.1+ drops the O from apiserver-kubelet-client
                                                       # (kubernetes#138957); the collection keeps it (specs.py)
                                                       ("1.36.3", "kubeadm:cluster-admins", True)])
def test_admin_groups_per_version(version, group, super_admin):
    specs = {s.name: s for s in p.cluster_certs(cluster(k8s_version=version))}
    assert specs["kubeconfig/admin"].orgs == (group,)
    assert specs["apiserver-kubelet-client"].orgs == (group,)
    assert ("kubeconfig/super-admin" in specs) == super_admin
    dests = [f["dest"] for f in p.host_files(cluster(k8s_version=version), "m1")]
    assert ("/etc/kubernetes/super-admin.conf" in dests) == super_admin


def test_second_run_reuses_everything_byte_for_byte(built):
    files, dummy, dummy = built
    again, actions, warnings = p.reconcile(cluster(), files, NOW + datetime.timedelta(days=300))
    assert {a.action for a in actions} == {"reused"}
    assert p.changed_files(files, again) == []


def changed_certs(actions):
    return sorted(a.name for a in actions if a.action != "reused")


def test_new_vip_reissues_exactly_the_certs_carrying_it(built):
    files, dummy, dummy = built
    again, actions, dummy = p.reconcile(cluster(vip="10.0.0.200"), files, NOW)
    assert changed_certs(actions) == ["apiserver", "tke/server"]
    reasons = {a.name: a.reason for a in actions}
    assert reasons["apiserver"] == "missing SANs: 10.0.0.200"
    # CA and keys are kept; the new certificates have the new SAN
    assert again["ca.crt"] == files["ca.crt"] and again["apiserver.key"] == files["apiserver.key"]
    assert "10.0.0.200" in sans(cert(again, "apiserver"))
    assert p.changed_files(files, again) == ["apiserver.crt", "tke/server.crt"]


def test_new_api_domain_sans(built):
    files, dummy, dummy = built
    dummy, actions, dummy = p.reconcile(cluster(apiserver_extra_sans=["api.example.org", "k8s.example.org"]), files, NOW)
    assert changed_certs(actions) == ["apiserver"]
    dummy, actions, dummy = p.reconcile(cluster(registry_domain="hub.example.org"), files, NOW)
    assert changed_certs(actions) == ["tke/server"]


def test_new_master_affects_its_own_certs_only(built):
    files, dummy, dummy = built
    c = cluster()
    c.masters = c.masters + [{"name": "m4", "ip": "10.0.0.14"}]
    again, actions, dummy = p.reconcile(c, files, NOW)
    assert changed_certs(actions) == ["apiserver", "etcd/members/m4/peer", "etcd/members/m4/server",
                                      "kubeconfig/kubelet/m4"]
    assert "kubeconfigs/m4/scheduler.conf" in again


def test_force_all_renews_leaves_not_cas(built):
    files, dummy, dummy = built
    again, actions, dummy = p.reconcile(cluster(), files, NOW, force="all")
    acts = {a.name: a for a in actions}
    assert acts["ca"].action == "reused" and acts["etcd/ca"].action == "reused"
    assert acts["apiserver"].action == "renewed" and acts["apiserver"].reason == "forced"
    assert again["ca.crt"] == files["ca.crt"]
    assert again["apiserver.key"] == files["apiserver.key"]          # renewal keeps the key
    assert again["apiserver.crt"] != files["apiserver.crt"]
    assert again["kubeconfigs/admin.conf"] != files["kubeconfigs/admin.conf"]


def test_force_one_by_name(built):
    files, dummy, dummy = built
    dummy, actions, dummy = p.reconcile(cluster(), files, NOW, force=["front-proxy-client"])
    assert changed_certs(actions) == ["front-proxy-client"]
    with pytest.raises(ValueError, match="unknown certificate names to renew: nope"):
        p.reconcile(cluster(), files, NOW, force=["nope"])


def test_new_ca_reissues_everything_it_signed(built):
    files, dummy, dummy = built
    again, actions, dummy = p.reconcile(cluster(), files, NOW, force=["etcd/ca"])
    assert changed_certs(actions) == ["apiserver-etcd-client", "etcd/ca", "etcd/healthcheck-client",
                                      "etcd/members/m1/peer", "etcd/members/m1/server", "etcd/members/m2/peer",
                                      "etcd/members/m2/server", "etcd/members/m3/peer", "etcd/members/m3/server"]
    assert {a.reason for a in actions if a.name == "apiserver-etcd-client"} == {"not signed by the current etcd/ca"}


def near(files, name, days_left, seconds=0):
    """Replace name's certificate by one with the same key expiring days_left (+seconds) after NOW."""
    spec = {s.name: s for s in p.cluster_certs(cluster())}[name]
    key = p.load_key(files[f"{name}.key"])
    ca = {"ca": "ca"}.get(spec.signer, spec.signer)
    ca_cert, ca_key = cert(files, ca), p.load_key(files[f"{ca}.key"])
    short = p.CertSpec(**{**spec.__dict__, "days": 1})
    issued_at = NOW + datetime.timedelta(days=days_left - 1, seconds=seconds)
    out = dict(files)
    out[f"{name}.crt"] = p.cert_to_pem(p.issue(short, key, issued_at, ca_cert, ca_key))
    return out


@pytest.mark.parametrize("days,seconds,renewed", [(31, 0, False), (30, 0, False), (29, 86399, True),
                                                  (1, 0, True), (-5, 0, True)])
def test_expiry_window_boundaries(built, days, seconds, renewed):
    files = near(built[0], "apiserver-kubelet-client", days, seconds)
    again, actions, dummy = p.reconcile(cluster(), files, NOW, renew_days=30)
    acts = {a.name: a for a in actions}
    assert changed_certs(actions) == (["apiserver-kubelet-client"] if renewed else [])
    if renewed:
        expected = f"expired {-days} days ago" if days < 0 else f"expires in {days} days (renewal window 30 days)"
        assert acts["apiserver-kubelet-client"].reason.startswith(expected), acts["apiserver-kubelet-client"].reason
        assert (p.not_after(cert(again, "apiserver-kubelet-client")) - NOW).days == 365


def test_ca_near_expiry_warns_and_is_kept(built):
    files = dict(built[0])
    spec = p.CertSpec("ca", "kubernetes", days=10)
    key = p.load_key(files["ca.key"])
    files["ca.crt"] = p.cert_to_pem(p.issue(spec, key, NOW))
    dummy, actions, warnings = p.reconcile(cluster(), files, NOW)
    assert {a.name: a.action for a in actions}["ca"] == "reused"
    assert len(warnings) == 1 and "CA ca expires in" in warnings[0]


def test_wrong_key_or_broken_files_are_replaced(built):
    files = dict(built[0])
    files["apiserver.key"] = files["tke/admin.key"]
    files["front-proxy-client.crt"] = b"garbage"
    dummy, actions, dummy = p.reconcile(cluster(), files, NOW)
    acts = {a.name: a for a in actions}
    assert acts["apiserver"].reason == "key does not match the certificate"
    assert acts["front-proxy-client"].reason == "missing"
    assert changed_certs(actions) == ["apiserver", "front-proxy-client"]


def test_key_type_change_rekeys(built):
    files = built[0]
    dummy, actions, dummy = p.reconcile(cluster(key_type="rsa"), files, NOW)
    acts = {a.name: a for a in actions}
    assert acts["apiserver"].reason == "key type is ecdsa, wanted rsa"
    assert acts["ca"].action == "reused"


def test_user_provided_ca_is_imported(built):
    ca_key = p.new_key("ecdsa")
    ca_cert = p.issue(p.CertSpec("ca", "my-corp-ca"), ca_key, NOW)
    user = {"ca": {"cert": p.cert_to_pem(ca_cert), "key": p.key_to_pem(ca_key)}}
    files, actions, dummy = p.reconcile(cluster(), built[0], NOW, user_cas=user)
    acts = {a.name: a for a in actions}
    assert acts["ca"].action == "imported"
    assert acts["apiserver"].reason == "not signed by the current ca"
    assert acts["front-proxy-client"].action == "reused"
    assert p.signed_by(cert(files, "apiserver"), ca_cert)
    again, actions, dummy = p.reconcile(cluster(), files, NOW, user_cas=user)
    assert {a.action for a in actions} == {"reused"} and p.changed_files(files, again) == []
    bad = {"ca": {"cert": p.cert_to_pem(ca_cert), "key": built[0]["ca.key"]}}
    with pytest.raises(ValueError, match="not a matching CA pair"):
        p.reconcile(cluster(), files, NOW, user_cas=bad)


def test_kubeconfigs_kubeadm_layout(built):
    import yaml
    files = built[0]
    admin = yaml.safe_load(files["kubeconfigs/admin.conf"])
    assert admin["current-context"] == "kubernetes-admin@kubernetes"
    assert admin["clusters"][0]["cluster"]["server"] == "https://api.tke.com:6443"
    import base64
    assert base64.b64decode(admin["clusters"][0]["cluster"]["certificate-authority-data"]) == files["ca.crt"]
    assert base64.b64decode(admin["users"][0]["user"]["client-key-data"]) == files["kubeconfig/admin.key"]
    sched = yaml.safe_load(files["kubeconfigs/m2/scheduler.conf"])
    assert sched["clusters"][0]["cluster"]["server"] == "https://10.0.0.12:6443"
    assert sched["users"][0]["name"] == "system:kube-scheduler"
    kubelet = files["kubeconfigs/w1/kubelet.conf"].decode()
    assert p.kubeconfig_client_cert(kubelet) == files["kubeconfig/kubelet/w1.crt"]


@pytest.mark.parametrize("version,m2_server", [("1.32.13", "https://api.tke.com:6443"),
                                               ("1.33.13", "https://10.0.0.12:6443")])
def test_a_masters_kubelet_talks_to_its_own_api_server_from_1_33(version, m2_server):
    """kubeadm 1.33 runs with ControlPlaneKubeletLocalMode on: init, join and upgrade point a master's
    kubelet.conf at the master's own API server; a worker's keeps the control-plane endpoint."""
    import yaml
    specs = {kc.path: kc for kc in p.kubeconfig_specs(cluster(k8s_version=version))}
    assert specs["kubeconfigs/m2/kubelet.conf"].server == m2_server
    assert specs["kubeconfigs/w1/kubelet.conf"].server == "https://api.tke.com:6443"
    files = p.reconcile(cluster(k8s_version=version), {}, NOW)[0]
    kubelet = yaml.safe_load(files["kubeconfigs/m2/kubelet.conf"])
    assert kubelet["clusters"][0]["cluster"]["server"] == m2_server


def test_host_files_per_role():
    c = cluster(etcd=[{"name": "e1", "ip": "10.0.0.31"}])
    m1 = {f["dest"]: f for f in p.host_files(c, "m1")}
    assert m1["/etc/kubernetes/pki/apiserver.key"] == {
        "src": "apiserver.key", "dest": "/etc/kubernetes/pki/apiserver.key", "mode": "0600"}
    assert m1["/etc/kubernetes/controller-manager.conf"]["src"] == "kubeconfigs/m1/controller-manager.conf"
    assert "/etc/kubernetes/pki/etcd/server.crt" not in m1 and "/etc/kubernetes/pki/etcd/ca.key" not in m1
    e1 = sorted(p.host_files(c, "e1"), key=lambda f: f["dest"])
    assert [f["dest"] for f in e1] == [f"/etc/kubernetes/pki/etcd/{n}" for n in (
        "ca.crt", "healthcheck-client.crt", "healthcheck-client.key", "peer.crt", "peer.key", "server.crt",
        "server.key")]
    assert {f["src"] for f in e1} >= {"etcd/members/e1/server.crt", "etcd/members/e1/peer.key"}
    w1 = {f["dest"]: f["src"] for f in p.host_files(c, "w1")}
    assert w1 == {"/etc/kubernetes/pki/ca.crt": "ca.crt", "/etc/kubernetes/kubelet.conf": "kubeconfigs/w1/kubelet.conf",
                  "/etc/tke/pki/ca.crt": "ca.crt", "/etc/tke/pki/registry.crt": "tke/server.crt",
                  "/etc/tke/pki/registry.key": "tke/server.key"}
    # stacked etcd: masters carry their member certificates and the etcd CA key
    m2 = {f["dest"]: f["src"] for f in p.host_files(cluster(), "m2")}
    assert m2["/etc/kubernetes/pki/etcd/server.crt"] == "etcd/members/m2/server.crt"
    assert "/etc/kubernetes/pki/etcd/ca.key" in m2
    assert all(f["mode"] == ("0600" if f["dest"].endswith((".key", ".conf")) else "0644")
               for h in ("m1", "w1", "e1") for f in p.host_files(c, h))


def test_every_distributed_source_exists(built):
    files = built[0]
    for h in ("m1", "m2", "m3", "w1"):
        for f in p.host_files(cluster(), h):
            assert f["src"] in files, f


@pytest.mark.parametrize("paths,who", [
    (["/etc/kubernetes/pki/apiserver.crt"], ["kube-apiserver"]),
    (["/etc/kubernetes/pki/etcd/server.crt", "/etc/kubernetes/pki/etcd/peer.key"], ["etcd"]),
    (["/etc/kubernetes/scheduler.conf"], ["kube-scheduler"]),
    (["/etc/tke/pki/registry.crt"], ["registry"]),
    (["/etc/kubernetes/admin.conf", "/etc/kubernetes/pki/etcd/healthcheck-client.crt"], []),
    (["/etc/kubernetes/pki/ca.crt"], ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet"]),
])
def test_consumers(paths, who):
    assert p.consumers(paths) == who


def test_helpers():
    assert p.first_service_ip("10.96.0.0/12") == "10.96.0.1"
    assert p.first_service_ip("fd00::/108") == "fd00::1"
    assert p.split_sans(["a", "10.0.0.1", "", "a", "::0001", "b"]) == (("a", "b"), ("10.0.0.1", "::1"))
    assert p.version_tuple("v1.30.4") == (1, 30, 4)
    assert p.uses_super_admin("1.29.0") and not p.uses_super_admin("1.28.13")
    assert str(ipaddress.ip_address("::1")) == "::1"


def test_describe(built):
    d = p.describe(cert(built[0], "etcd/members/m1/peer"), NOW)
    assert d["subject"] == "commonName=m1" and d["issuer"] == "commonName=etcd-ca"
    assert d["days_left"] == 365 and d["not_after"].startswith("2027-01-01")
    assert set(d["sans"]) == {"m1", "localhost", "10.0.0.11", "127.0.0.1", "::1"}

"""Why a host's PKI file is replaced with the store's copy (issue 21, item 6): certs.yml renew says,
per host and file, what it replaced and why (plugin_utils/k8s_pki/replacement.py)."""
import datetime

from ansible_collections.offline_pot.tke.plugins.module_utils.pki_pem import first_certificate
from ansible_collections.offline_pot.tke.plugins.plugin_utils import k8s_pki as p

NOW = datetime.datetime(2026, 1, 1, 12, 0, tzinfo=datetime.timezone.utc)
CA_SPEC = p.CertSpec("etcd/ca", "etcd-ca", days=3650)
LEAF = p.CertSpec("etcd/healthcheck-client", "kube-etcd-healthcheck-client", "etcd/ca", client=True, days=365)
SERVER = p.CertSpec("etcd/members/h2/server", "h2", "etcd/ca", server=True, dns=("h2", "localhost"),
                    ips=("10.0.0.2",), days=365)
PATH = "/etc/kubernetes/pki/etcd/healthcheck-client.crt"


def ca():
    key = p.new_key("ecdsa")
    return p.issue(CA_SPEC, key, NOW), key


STORE_CA, STORE_CA_KEY = ca()
KEY = p.new_key("ecdsa")


def leaf(spec=LEAF, key=KEY, signer=(STORE_CA, STORE_CA_KEY), now=NOW):
    return p.cert_to_pem(p.issue(spec, key, now, *signer)).decode()


STORE = leaf()


def why(previous, content=STORE, path=PATH, mode="0644"):
    return p.replacement_reasons("h3", {path: previous}, {path: content, "/other": "x"}, {path: mode}, [STORE_CA], NOW)


def test_a_certificate_of_another_ca_is_named_with_its_issuer():
    other = leaf(signer=ca())   # another installation's etcd-ca: same name, another key
    assert why({"state": "differs", "mode": "0644", "certificate": other}) == [
        f"h3: {PATH}: replaced - signed by another CA (issuer commonName=etcd-ca, not the store's)"]


def test_key_mismatch_expiring_missing_mode_and_sans():
    assert why({"state": "differs", "mode": "0644", "certificate": leaf(key=p.new_key("ecdsa"))}) == [
        f"h3: {PATH}: replaced - another key pair than the store's (key mismatch)"]
    old = leaf(spec=p.CertSpec(**{**LEAF.__dict__, "days": 5}), now=NOW - datetime.timedelta(days=1))
    assert why({"state": "differs", "mode": "0644", "certificate": old}) == [
        f"h3: {PATH}: replaced - expiring: 4 days left (until 2026-01-05), the store's copy until 2027-01-01"]
    assert why({"state": "absent", "mode": None, "certificate": None}) == [f"h3: {PATH}: written - missing"]
    assert why({"state": "mode", "mode": "0666", "certificate": STORE}) == [
        f"h3: {PATH}: replaced - mode 0666, the store's is 0644"]
    narrow = leaf(spec=p.CertSpec(**{**SERVER.__dict__, "dns": ("h2",), "ips": ()}))
    assert why({"state": "differs", "mode": "0644", "certificate": narrow}, content=leaf(spec=SERVER)) == [
        f"h3: {PATH}: replaced - missing SANs: localhost, 10.0.0.2"]


def test_a_key_file_is_never_read_out_and_is_named_a_key_mismatch():
    key_pem = p.key_to_pem(KEY).decode()
    assert first_certificate(key_pem) is None      # what the host module returns for a key: nothing
    assert why({"state": "differs", "mode": "0600", "certificate": None}, content=key_pem,
               path="/etc/kubernetes/pki/etcd/healthcheck-client.key", mode="0600") == [
        "h3: /etc/kubernetes/pki/etcd/healthcheck-client.key: replaced - another key than the store's (it does not "
        "match the store's certificate: key mismatch)"]


def test_a_kubeconfig_is_judged_by_its_client_certificate():
    conf = p.render_kubeconfig("c", "https://api:6443", p.cert_to_pem(STORE_CA), "u", STORE.encode(),
                               p.key_to_pem(KEY))
    other = p.render_kubeconfig("c", "https://api:6443", p.cert_to_pem(STORE_CA), "u", leaf(signer=ca()).encode(),
                                p.key_to_pem(KEY))
    old = first_certificate(other, kubeconfig=True)
    assert old and old != STORE
    conf_path = "/etc/kubernetes/admin.conf"
    previous = {conf_path: {"state": "differs", "mode": "0600", "certificate": old}}
    assert p.replacement_reasons("h1", previous, {conf_path: conf}, {conf_path: "0600"}, [STORE_CA], NOW) == [
        "h1: /etc/kubernetes/admin.conf: replaced - signed by another CA (issuer commonName=etcd-ca, not the store's)"]


def test_a_fresh_host_lists_nothing():
    assert p.replacement_reasons("h3", {PATH: {"state": "absent", "mode": None, "certificate": None}},
                                 {PATH: STORE}, {PATH: "0644"}, [STORE_CA], NOW) == []

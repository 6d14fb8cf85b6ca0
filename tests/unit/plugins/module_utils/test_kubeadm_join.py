"""Discovery hash, token choice and certificate-key freshness."""
import datetime
import hashlib

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from ansible_collections.offline_pot.tke.plugins.module_utils import kubeadm_join as kj

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


def _ca(version_field=True):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubernetes")])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(NOW).not_valid_after(NOW + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return cert


def test_ca_cert_hash_is_sha256_of_the_public_key_info():
    cert = _ca()
    spki = cert.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    pem = cert.public_bytes(serialization.Encoding.PEM).decode()
    assert kj.ca_cert_hash(pem) == "sha256:" + hashlib.sha256(spki).hexdigest()
    with pytest.raises(ValueError):
        kj.ca_cert_hash("not a certificate")


LIST = """{
    "kind": "BootstrapToken", "apiVersion": "output.kubeadm.k8s.io/v1alpha3",
    "token": "aaaaaa.aaaaaaaaaaaaaaaa", "description": "other", "usages": ["authentication", "signing"],
    "groups": ["system:bootstrappers:kubeadm:default-node-token"]
}
{
    "kind": "BootstrapToken", "apiVersion": "output.kubeadm.k8s.io/v1alpha3",
    "token": "bbbbbb.bbbbbbbbbbbbbbbb", "description": "ours", "expires": "%s",
    "usages": ["authentication", "signing"], "groups": ["system:bootstrappers:kubeadm:default-node-token"]
}
"""


def test_token_list_parsing_and_choice():
    tokens = kj.parse_token_list(LIST % "2026-01-02T00:00:00Z")
    assert [t["token"] for t in tokens] == ["aaaaaa.aaaaaaaaaaaaaaaa", "bbbbbb.bbbbbbbbbbbbbbbb"]
    assert kj.usable_token(tokens, "ours", NOW) == "bbbbbb.bbbbbbbbbbbbbbbb"
    # expiring within the hour: not usable, a new one is created
    assert kj.usable_token(kj.parse_token_list(LIST % "2026-01-01T00:30:00Z"), "ours", NOW) is None
    assert kj.usable_token(tokens, "missing", NOW) is None
    never = [dict(tokens[1], expires=None)]
    assert kj.usable_token(never, "ours", NOW) == "bbbbbb.bbbbbbbbbbbbbbbb"
    assert kj.usable_token([dict(tokens[1], usages=["signing"])], "ours", NOW) is None
    assert kj.parse_token_list("") == []


@pytest.mark.parametrize("uploaded,now,fresh", [(None, 100, False), (0, 3600, True), (0, 7200 - 601, True),
                                                (0, 7200 - 599, False), (100, 50, False)])
def test_certificate_key_freshness(uploaded, now, fresh):
    assert kj.certificate_key_fresh(uploaded, now) is fresh


def test_certificate_key_goes_into_init_configuration():
    text = "---\napiVersion: x\nkind: InitConfiguration\nnodeRegistration: {}\n---\nkind: ClusterConfiguration\n"
    out = kj.with_certificate_key(text, "c" * 64)
    assert out.splitlines()[3] == 'certificateKey: "' + "c" * 64 + '"'
    assert kj.with_certificate_key(out, "d" * 64).count("certificateKey") == 1
    with pytest.raises(ValueError):
        kj.with_certificate_key("kind: JoinConfiguration\n", "c" * 64)

"""kubeadm's discovery hash of a CA, computed on the controller."""
import datetime
import hashlib
import subprocess

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from ansible_collections.offline_pot.tke.plugins.filter.kubeadm_ca_cert_hash import kubeadm_ca_cert_hash
from ansible_collections.offline_pot.tke.plugins.plugin_utils.kubeadm_discovery import ca_cert_hash

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


def _ca(key):
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubernetes")])
    return (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(NOW).not_valid_after(NOW + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))


@pytest.mark.parametrize("key", [rsa.generate_private_key(public_exponent=65537, key_size=2048),
                                 ec.generate_private_key(ec.SECP256R1())], ids=["rsa", "ecdsa"])
def test_hash_is_sha256_of_the_public_key_info_as_openssl_prints_it(key):
    pem = _ca(key).public_bytes(serialization.Encoding.PEM)
    # kubeadm's documented recipe: openssl x509 -pubkey | openssl pkey -pubin -outform der | sha256
    pub = subprocess.run(["openssl", "x509", "-pubkey", "-noout"], input=pem, capture_output=True, check=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=pub, capture_output=True,
                         check=True).stdout
    expected = "sha256:" + hashlib.sha256(der).hexdigest()
    assert ca_cert_hash(pem) == expected
    assert kubeadm_ca_cert_hash(pem.decode() + "trailing text\n") == expected


def test_not_a_certificate_is_an_error():
    from ansible.errors import AnsibleFilterError
    with pytest.raises(ValueError, match="no PEM certificate"):
        ca_cert_hash("not a certificate")
    with pytest.raises(AnsibleFilterError, match="kubeadm_ca_cert_hash"):
        kubeadm_ca_cert_hash("")

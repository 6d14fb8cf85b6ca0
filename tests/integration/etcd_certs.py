"""Test fixture: etcd certificates in kubeadm's layout (/etc/kubernetes/pki/etcd), made with
Python cryptography, standing in for the pki phase (which is developed separately)."""
from __future__ import annotations

import datetime
import ipaddress

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

import ha_support

DAY = datetime.timedelta(days=1)


def _key():
    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _pem(cert) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _cert(cn, key, ca_cert=None, ca_key=None, sans=(), usages=(), ca=False):
    now = datetime.datetime.now(datetime.timezone.utc)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    b = (x509.CertificateBuilder().subject_name(name)
         .issuer_name(ca_cert.subject if ca_cert else name).public_key(key.public_key())
         .serial_number(x509.random_serial_number()).not_valid_before(now - DAY).not_valid_after(now + DAY)
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if sans:
        b = b.add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address(s)) if s[0].isdigit() else x509.DNSName(s) for s in sans]),
            critical=False)
    if usages:
        b = b.add_extension(x509.ExtendedKeyUsage(list(usages)), critical=False)
    return b.sign(ca_key or key, hashes.SHA256())


def install(hosts, names) -> dict[str, bytes]:
    """Write the etcd CA, per-host server/peer and the client certificates to every host.
    Returns the CA and client material (for a test's own etcdctl calls)."""
    ca_key = _key()
    ca = _cert("etcd-ca", ca_key, ca=True)
    client_key = _key()
    client = _cert("kube-etcd-healthcheck-client", client_key, ca, ca_key,
                   usages=[ExtendedKeyUsageOID.CLIENT_AUTH])
    both = [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
    d = "/etc/kubernetes/pki/etcd"
    for n in names:
        sans = [n, "localhost", hosts.ip(n), "127.0.0.1"]
        files = {f"{d}/ca.crt": _pem(ca), f"{d}/ca.key": _pem_key(ca_key),
                 f"{d}/healthcheck-client.crt": _pem(client), f"{d}/healthcheck-client.key": _pem_key(client_key)}
        for kind in ("server", "peer"):
            k = _key()
            files[f"{d}/{kind}.crt"] = _pem(_cert(n, k, ca, ca_key, sans, both))
            files[f"{d}/{kind}.key"] = _pem_key(k)
        for path, data in files.items():
            ha_support.put(hosts, n, path, data, "0600" if path.endswith(".key") else "0644")
    return {"ca": _pem(ca), "cert": _pem(client), "key": _pem_key(client_key)}

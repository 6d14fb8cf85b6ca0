# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Keys and X.509 certificates with `cryptography`: make, serialise, load, inspect, issue.

Private to the collection (package plugins/plugin_utils/k8s_pki). Works on bytes, no file system.
"""
from __future__ import annotations

import datetime
import ipaddress

try:
    from cryptography import x509
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
except ImportError as exc:
    # a controller without cryptography still lists and loads the plugins importing this package
    # (ansible-doc -l, the filters that need no certificate); what needs it says so when called
    HAS_CRYPTOGRAPHY = False
    CRYPTOGRAPHY_IMPORT_ERROR: ImportError | None = exc
else:
    HAS_CRYPTOGRAPHY = True
    CRYPTOGRAPHY_IMPORT_ERROR = None

from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki.specs import CertSpec


def require_cryptography() -> None:
    """Raise an ImportError that says what to install when cryptography is missing."""
    if not HAS_CRYPTOGRAPHY:
        raise ImportError("the Python package cryptography is needed on the controller for the PKI "
                          f"(pip install -r requirements.txt, or the site pack's bootstrap): {CRYPTOGRAPHY_IMPORT_ERROR}")


BACKDATE = datetime.timedelta(minutes=5)   # tolerate a little clock skew between hosts


def new_key(key_type: str = "rsa", rsa_bits: int = 2048):
    if key_type == "ecdsa":
        return ec.generate_private_key(ec.SECP256R1())
    if key_type == "rsa":
        return rsa.generate_private_key(public_exponent=65537, key_size=rsa_bits)
    raise ValueError(f"unknown key type {key_type!r} (rsa or ecdsa)")


def key_to_pem(key) -> bytes:
    # kubeadm writes "RSA PRIVATE KEY" / "EC PRIVATE KEY" (traditional OpenSSL format)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption())


def public_to_pem(pub) -> bytes:
    return pub.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def cert_to_pem(cert) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def load_key(pem: bytes | None):
    if not pem:
        return None
    try:
        # our own keys from a 0700 directory: skip the slow RSA consistency proof (100+ ms per key);
        # a damaged key still shows as a public key that does not match its certificate
        return serialization.load_pem_private_key(pem, password=None, unsafe_skip_rsa_key_validation=True)
    except (ValueError, TypeError):
        return None


def load_cert(pem: bytes | None):
    if not pem:
        return None
    try:
        return x509.load_pem_x509_certificate(pem)
    except ValueError:
        return None


def key_type_of(key) -> str:
    if isinstance(key, rsa.RSAPrivateKey):
        return "rsa"
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return "ecdsa"
    return "other"


def _name(cn: str, orgs=()) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs]
    return x509.Name(attrs + [x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def issue(spec: CertSpec, key, now: datetime.datetime, signer_cert=None, signer_key=None):
    """Sign spec's certificate for key: self-signed when spec is a CA, else by signer."""
    subject = _name(spec.cn, spec.orgs)
    pub = key.public_key()
    is_rsa = isinstance(key, rsa.RSAPrivateKey)
    b = (x509.CertificateBuilder()
         .subject_name(subject)
         .public_key(pub)
         .serial_number(x509.random_serial_number())
         .not_valid_before(now - BACKDATE)
         .not_valid_after(now + datetime.timedelta(days=spec.days)))
    if spec.is_ca:
        b = (b.issuer_name(subject)
             .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
             .add_extension(_key_usage(is_rsa, ca=True), critical=True)
             .add_extension(x509.SubjectKeyIdentifier.from_public_key(pub), critical=False))
        return b.sign(key, hashes.SHA256())
    b = (b.issuer_name(signer_cert.subject)
         .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
         .add_extension(_key_usage(is_rsa, ca=False), critical=True)
         .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(signer_cert.public_key()),
                        critical=False))
    ekus = _ext_key_usages(spec)
    if ekus:
        b = b.add_extension(x509.ExtendedKeyUsage(ekus), critical=False)
    if spec.sans:
        b = b.add_extension(x509.SubjectAlternativeName(_general_names(spec)), critical=False)
    return b.sign(signer_key, hashes.SHA256())


def _key_usage(is_rsa: bool, ca: bool) -> x509.KeyUsage:
    # kubeadm: CAs DigitalSignature|KeyEncipherment|CertSign, leaves DigitalSignature|KeyEncipherment;
    # key encipherment only means something for RSA keys, so ECDSA keys go without it.
    return x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=is_rsa,
                         data_encipherment=False, key_agreement=False, key_cert_sign=ca, crl_sign=False,
                         encipher_only=False, decipher_only=False)


def _ext_key_usages(spec: CertSpec) -> list:
    out = []
    if spec.server:
        out.append(ExtendedKeyUsageOID.SERVER_AUTH)
    if spec.client:
        out.append(ExtendedKeyUsageOID.CLIENT_AUTH)
    return out


def _general_names(spec: CertSpec) -> list:
    return ([x509.DNSName(d) for d in spec.dns]
            + [x509.IPAddress(ipaddress.ip_address(i)) for i in spec.ips])


def cert_sans(cert) -> tuple:
    """(dns list, ip list) of a certificate; ([], []) without the extension."""
    try:
        ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return [], []
    return ext.get_values_for_type(x509.DNSName), [str(i) for i in ext.get_values_for_type(x509.IPAddress)]


def cert_ekus(cert) -> set:
    try:
        return set(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value)
    except x509.ExtensionNotFound:
        return set()


def cert_is_ca(cert) -> bool:
    try:
        return cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    except x509.ExtensionNotFound:
        return False


def signed_by(cert, ca_cert) -> bool:
    """True when ca_cert's key signed cert (and the issuer name is ca_cert's subject)."""
    if cert.issuer != ca_cert.subject:
        return False
    pub = ca_cert.public_key()
    try:
        if isinstance(pub, rsa.RSAPublicKey):
            pub.verify(cert.signature, cert.tbs_certificate_bytes, padding.PKCS1v15(),
                       cert.signature_hash_algorithm)
        elif isinstance(pub, ec.EllipticCurvePublicKey):
            pub.verify(cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(cert.signature_hash_algorithm))
        else:
            return False
    except InvalidSignature:
        return False
    return True


def key_matches(cert, key) -> bool:
    return public_to_pem(cert.public_key()) == public_to_pem(key.public_key())


def not_after(cert) -> datetime.datetime:
    return cert.not_valid_after_utc


def days_left(cert, now: datetime.datetime) -> int:
    return int((not_after(cert) - now).total_seconds() // 86400)


def within_window(cert, now: datetime.datetime, renew_days: int) -> bool:
    """True when less than renew_days are left before expiry (exactly renew_days left: not yet)."""
    return not_after(cert) - now < datetime.timedelta(days=renew_days)


def subject_text(name: x509.Name) -> str:
    return ",".join(f"{a.oid._name}={a.value}" for a in name)


def describe(cert, now: datetime.datetime) -> dict:
    """What an operator wants to see about a certificate (never anything secret)."""
    dns, ips = cert_sans(cert)
    return {"subject": subject_text(cert.subject), "issuer": subject_text(cert.issuer),
            "sans": list(dns) + list(ips), "not_after": not_after(cert).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "days_left": days_left(cert, now), "serial": format(cert.serial_number, "x"),
            "is_ca": cert_is_ca(cert)}

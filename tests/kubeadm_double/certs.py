"""PKI (python3-cryptography on the host): the certificates `init phase certs all` writes and those of
a joining control-plane node (`join phase control-plane-prepare certs`), existing files reused as kubeadm
does; the CA's public key hash that token discovery pins."""
import datetime
import hashlib
import ipaddress
import os

import common
from common import Fail, out
import config_load


def crypto():
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID
    return x509, hashes, serialization, rsa, NameOID


def _name(cn, org=None):
    x509, dummy, dummy, dummy, NameOID = crypto()
    attrs = ([x509.NameAttribute(NameOID.ORGANIZATION_NAME, org)] if org else []) + [
        x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    return x509.Name(attrs)


def key_pem(key):
    dummy, dummy, ser, dummy, dummy = crypto()
    return key.private_bytes(ser.Encoding.PEM, ser.PrivateFormat.TraditionalOpenSSL, ser.NoEncryption())


def new_cert(cn, org=None, ca=None, sans=(), server=False, client=False, is_ca=False, days=365):
    x509, hashes, ser, rsa, dummy = crypto()
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = datetime.datetime.now(datetime.timezone.utc)
    issuer_cert, issuer_key = ca if ca else (None, key)
    b = (x509.CertificateBuilder().subject_name(_name(cn, org))
         .issuer_name(issuer_cert.subject if issuer_cert else _name(cn, org))
         .public_key(key.public_key()).serial_number(x509.random_serial_number())
         .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=days))
         .add_extension(x509.BasicConstraints(ca=is_ca, path_length=None), critical=True))
    usages = [x509.oid.ExtendedKeyUsageOID.SERVER_AUTH] * server + [x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH] * client
    if usages:
        b = b.add_extension(x509.ExtendedKeyUsage(usages), critical=False)
    if sans:
        alt = [x509.IPAddress(ipaddress.ip_address(s)) if config_load.ip_ok(s) else x509.DNSName(s) for s in dict.fromkeys(sans)]
        b = b.add_extension(x509.SubjectAlternativeName(alt), critical=False)
    cert = b.sign(issuer_key, hashes.SHA256())
    return cert, key


def load_pair(base):
    x509, dummy, ser, dummy, dummy = crypto()
    try:
        cert = x509.load_pem_x509_certificate(open(base + ".crt", "rb").read())
        key = ser.load_pem_private_key(open(base + ".key", "rb").read(), None)
    except FileNotFoundError as e:
        raise Fail(f"failure loading {os.path.basename(base)} certificate authority: couldn't load the certificate "
                   f"file {e.filename}: open {e.filename}: no such file or directory")
    return cert, key


def write_pair(base, cert, key):
    dummy, dummy, ser, dummy, dummy = crypto()
    os.makedirs(os.path.dirname(base), exist_ok=True)
    with open(base + ".crt", "wb") as f:
        f.write(cert.public_bytes(ser.Encoding.PEM))
    fd = os.open(base + ".key", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(key_pem(key))


def ensure_ca(name, cn):
    base = f"{common.PKI}/{name}"
    if os.path.exists(base + ".crt") and os.path.exists(base + ".key"):
        out(f"[certs] Using existing {name} certificate authority")
        return load_pair(base)
    cert, key = new_cert(cn, is_ca=True, days=3650)
    write_pair(base, cert, key)
    out(f"[certs] Generating \"{name}\" certificate and key")
    return cert, key


def ensure_leaf(name, ca_name, cn, org=None, sans=(), server=False, client=False):
    base = f"{common.PKI}/{name}"
    if os.path.exists(base + ".crt") and os.path.exists(base + ".key"):
        out(f"[certs] Using existing {name} certificate and key on disk")
        return
    ca = load_pair(f"{common.PKI}/{ca_name}")
    cert, key = new_cert(cn, org, ca, sans, server, client)
    write_pair(base, cert, key)
    out(f"[certs] Generating \"{name}\" certificate and key")
    if sans:
        out(f"[certs] {name} serving cert is signed for DNS names and IPs {sorted(set(sans))}")


def phase_certs(cluster, node, join=False):
    net = cluster.get("networking") or {}
    svc = ipaddress.ip_network(net.get("serviceSubnet", "10.96.0.0/12"), strict=False)
    dns = net.get("dnsDomain", "cluster.local")
    stacked = "external" not in (cluster.get("etcd") or {})
    cpe_host = (cluster.get("controlPlaneEndpoint") or "").rsplit(":", 1)[0]
    if not join:
        ensure_ca("ca", "kubernetes")
    else:
        load_pair(f"{common.PKI}/ca")
    sans = [node["name"], "kubernetes", "kubernetes.default", "kubernetes.default.svc", f"kubernetes.default.svc.{dns}",
            str(svc.network_address + 1), node["address"]] + ([cpe_host] if cpe_host else []) + \
        list((cluster.get("apiServer") or {}).get("certSANs") or [])
    ensure_leaf("apiserver", "ca", "kube-apiserver", sans=sans, server=True)
    # from v1.36.1 (#138958, cli_v1_36.KUBELET_CLIENT_ORG): no Organization, the bootstrap-token phase binds the user
    ensure_leaf("apiserver-kubelet-client", "ca", "kube-apiserver-kubelet-client",
                getattr(common.CLI, "KUBELET_CLIENT_ORG", "kubeadm:cluster-admins"), client=True)
    if not join:
        ensure_ca("front-proxy-ca", "front-proxy-ca")
    ensure_leaf("front-proxy-client", "front-proxy-ca", "front-proxy-client", client=True)
    if stacked:
        if not join:
            ensure_ca("etcd/ca", "etcd-ca")
        local = (cluster.get("etcd") or {}).get("local") or {}
        esans = [node["name"], "localhost", node["address"], "127.0.0.1", "::1"]
        ensure_leaf("etcd/server", "etcd/ca", node["name"], sans=esans + list(local.get("serverCertSANs") or []),
                    server=True, client=True)
        ensure_leaf("etcd/peer", "etcd/ca", node["name"], sans=esans + list(local.get("peerCertSANs") or []),
                    server=True, client=True)
        ensure_leaf("etcd/healthcheck-client", "etcd/ca", "kube-etcd-healthcheck-client", client=True)
        ensure_leaf("apiserver-etcd-client", "etcd/ca", "kube-apiserver-etcd-client", client=True)
    else:
        out("[certs] External etcd mode: Skipping etcd/ca certificate authority generation")
    if not join and not os.path.exists(f"{common.PKI}/sa.key"):
        dummy, dummy, ser, rsa, dummy = crypto()
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        fd = os.open(f"{common.PKI}/sa.key", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(key_pem(key))
        with open(f"{common.PKI}/sa.pub", "wb") as f:
            f.write(key.public_key().public_bytes(ser.Encoding.PEM, ser.PublicFormat.SubjectPublicKeyInfo))
        out("[certs] Generating \"sa\" key and public key")
    elif join and not os.path.exists(f"{common.PKI}/sa.key"):
        raise Fail(f"couldn't load the private key file {common.PKI}/sa.key: open {common.PKI}/sa.key: no such file or directory")


def ca_hash(pem):
    x509, dummy, ser, dummy, dummy = crypto()
    cert = x509.load_pem_x509_certificate(pem)
    der = cert.public_key().public_bytes(ser.Encoding.DER, ser.PublicFormat.SubjectPublicKeyInfo)
    return "sha256:" + hashlib.sha256(der).hexdigest()

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The cluster's PKI as pure functions: what to issue, whether what exists is still good, how.

Private to the collection (used by plugins/action/k8s_pki.py, the certs report filter and bench/).
Everything here works on bytes and plain dicts: no Ansible, no file system. The controller-side
action reads the PKI directory into a dict of relative path -> bytes, calls reconcile(), and
writes back the files whose bytes differ.

The certificate set is kubeadm's (same subjects, key usages, extended key usages and SANs as
`kubeadm init phase certs all` / `kubeconfig all`) plus TKE's extras (server certificate for the
registry and the gateway, admin and webhook client certificates). The on-host layout is in
host_files() and documented in docs/pki.md.
"""
from __future__ import annotations

import base64
import datetime
import ipaddress
from dataclasses import dataclass, field

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_DAYS = 3650          # kubeadm: 10-year CAs
CERT_DAYS = 365         # kubeadm: 1-year leaves
RENEW_DAYS = 30         # TKE/kubeadm: renew within 30 days of expiry
BACKDATE = datetime.timedelta(minutes=5)   # tolerate a little clock skew between hosts

MASTERS_GROUP = "system:masters"
CLUSTER_ADMINS_GROUP = "kubeadm:cluster-admins"   # kubeadm >= 1.29

K8S_PKI = "/etc/kubernetes/pki"
K8S_CONF = "/etc/kubernetes"
TKE_PKI = "/etc/tke/pki"


# --------------------------------------------------------------------------------------------
# What to issue
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CertSpec:
    """One certificate (or CA) and its key, stored as <name>.crt / <name>.key in the PKI dir."""

    name: str
    cn: str
    signer: str | None = None          # name of the signing CA; None for a self-signed CA
    orgs: tuple = ()
    server: bool = False
    client: bool = False
    dns: tuple = ()
    ips: tuple = ()
    days: int = CERT_DAYS

    @property
    def is_ca(self) -> bool:
        return self.signer is None

    @property
    def sans(self) -> tuple:
        return tuple(self.dns) + tuple(self.ips)


@dataclass(frozen=True)
class KubeconfigSpec:
    """A kubeconfig rendered from a client certificate, in kubeadm's layout."""

    path: str          # relative path in the PKI dir, e.g. kubeconfigs/h1/scheduler.conf
    cert: str          # CertSpec name of its client certificate
    server: str        # https://host:port
    user: str          # kubeadm's user name in the file


@dataclass
class Cluster:
    """Inputs of the PKI (from the shared tke_* variables and the inventory groups)."""

    masters: list                       # [{"name": "h1", "ip": "10.0.0.11"}]
    # host:port of every kubeconfig that goes through the endpoint: the tke role's
    # tke_control_plane_endpoint, its one definition (no default here)
    control_plane_endpoint: str
    nodes: list = field(default_factory=list)          # every node running a kubelet
    etcd: list = field(default_factory=list)           # external etcd members; [] = stacked on masters
    registry: list = field(default_factory=list)       # registry hosts
    machines: list = field(default_factory=list)       # every host (TKE server cert SANs)
    name: str = "kubernetes"
    k8s_version: str = "1.30.4"
    vip: str = ""
    api_domain: str = "api.tke.com"
    api_port: int = 6443
    service_cidr: str = "10.96.0.0/16"
    dns_domain: str = "cluster.local"
    registry_domain: str = "registry.tke.com"
    gateway_domain: str = "console.tke.com"
    apiserver_extra_sans: list = field(default_factory=list)
    etcd_extra_sans: list = field(default_factory=list)
    server_extra_sans: list = field(default_factory=list)
    ca_days: int = CA_DAYS
    cert_days: int = CERT_DAYS
    key_type: str = "rsa"               # rsa or ecdsa (P-256)
    rsa_bits: int = 2048

    @property
    def endpoint(self) -> str:
        return self.control_plane_endpoint

    @property
    def stacked_etcd(self) -> bool:
        return not self.etcd

    @property
    def etcd_members(self) -> list:
        return self.etcd or self.masters


def version_tuple(version: str) -> tuple:
    out = []
    for part in str(version).lstrip("v").split("."):
        digits = "".join(ch for ch in part if ch.isdigit()) or "0"
        out.append(int(digits))
    return tuple(out)


def uses_super_admin(version: str) -> bool:
    """kubeadm 1.29 split admin.conf (kubeadm:cluster-admins) from super-admin.conf (system:masters)."""
    return version_tuple(version)[:2] >= (1, 29)


def first_service_ip(cidr: str) -> str:
    return str(next(ipaddress.ip_network(cidr, strict=False).hosts()))


def is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False


def split_sans(values) -> tuple:
    """Mixed names and addresses -> (dns tuple, ip tuple), both de-duplicated, order kept."""
    dns, ips = [], []
    for v in values:
        v = str(v).strip()
        if not v:
            continue
        if is_ip(v):
            v = str(ipaddress.ip_address(v))
            if v not in ips:
                ips.append(v)
        elif v not in dns:
            dns.append(v)
    return tuple(dns), tuple(ips)


def _host_sans(hosts) -> list:
    out = []
    for h in hosts:
        out += [h["name"], h.get("ip", "")]
    return out


def cluster_certs(c: Cluster) -> list:
    """Every certificate of the cluster, CAs first (a signer always precedes what it signs)."""
    admins = CLUSTER_ADMINS_GROUP if uses_super_admin(c.k8s_version) else MASTERS_GROUP
    d = c.cert_days
    svc = [f"kubernetes.default.svc.{c.dns_domain}"] if c.dns_domain else []
    api_dns, api_ips = split_sans(
        ["kubernetes", "kubernetes.default", "kubernetes.default.svc", *svc, "localhost",
         c.api_domain, *_host_sans(c.masters), c.vip, *c.apiserver_extra_sans,
         first_service_ip(c.service_cidr), "127.0.0.1", "::1"])
    specs = [
        CertSpec("ca", "kubernetes", days=c.ca_days),
        CertSpec("front-proxy-ca", "front-proxy-ca", days=c.ca_days),
        CertSpec("etcd/ca", "etcd-ca", days=c.ca_days),
        CertSpec("apiserver", "kube-apiserver", "ca", server=True, dns=api_dns, ips=api_ips, days=d),
        CertSpec("apiserver-kubelet-client", "kube-apiserver-kubelet-client", "ca", orgs=(admins,),
                 client=True, days=d),
        CertSpec("front-proxy-client", "front-proxy-client", "front-proxy-ca", client=True, days=d),
        CertSpec("apiserver-etcd-client", "kube-apiserver-etcd-client", "etcd/ca", client=True, days=d),
        CertSpec("etcd/healthcheck-client", "kube-etcd-healthcheck-client", "etcd/ca", client=True, days=d),
    ]
    for m in c.etcd_members:
        # kubeadm: CN and SANs = the member's name, localhost, its address, 127.0.0.1, ::1;
        # TKE adds etcd and etcd.kube-system to the server certificate.
        base = [m["name"], "localhost", m.get("ip", ""), "127.0.0.1", "::1", *c.etcd_extra_sans]
        sdns, sips = split_sans(base + ["etcd", "etcd.kube-system"])
        pdns, pips = split_sans(base)
        specs.append(CertSpec(f"etcd/members/{m['name']}/server", m["name"], "etcd/ca", server=True,
                              client=True, dns=sdns, ips=sips, days=d))
        specs.append(CertSpec(f"etcd/members/{m['name']}/peer", m["name"], "etcd/ca", server=True,
                              client=True, dns=pdns, ips=pips, days=d))
    # kubeconfig client certificates (kubeadm's subjects)
    specs.append(CertSpec("kubeconfig/admin", "kubernetes-admin", "ca", orgs=(admins,), client=True, days=d))
    if uses_super_admin(c.k8s_version):
        specs.append(CertSpec("kubeconfig/super-admin", "kubernetes-super-admin", "ca",
                              orgs=(MASTERS_GROUP,), client=True, days=d))
    specs.append(CertSpec("kubeconfig/controller-manager", "system:kube-controller-manager", "ca",
                          client=True, days=d))
    specs.append(CertSpec("kubeconfig/scheduler", "system:kube-scheduler", "ca", client=True, days=d))
    for n in _unique_hosts(c.masters + c.nodes):
        specs.append(CertSpec(f"kubeconfig/kubelet/{n['name']}", f"system:node:{n['name']}", "ca",
                              orgs=("system:nodes",), client=True, days=d))
    # TKE's extras: one server certificate for the registry and the gateway, admin, webhook
    reg = c.registry_domain
    tke_dns, tke_ips = split_sans(
        ["localhost", reg, f"*.{reg}" if reg else "", c.gateway_domain, *_host_sans(c.machines),
         c.vip, "127.0.0.1", *c.server_extra_sans])
    specs += [
        CertSpec("tke/server", "tke-server", "ca", server=True, dns=tke_dns, ips=tke_ips, days=d),
        CertSpec("tke/admin", "admin", "ca", orgs=(MASTERS_GROUP,), client=True, days=d),
        CertSpec("tke/webhook", "tke-webhook", "ca", client=True, days=d),
    ]
    return specs


def _unique_hosts(hosts) -> list:
    seen, out = set(), []
    for h in hosts:
        if h["name"] not in seen:
            seen.add(h["name"])
            out.append(h)
    return out


def kubeconfig_specs(c: Cluster) -> list:
    """kubeadm's kubeconfigs: admin/super-admin/kubelet use the control-plane endpoint,
    controller-manager and scheduler the master's own address (kubeadm's LocalAPIEndpoint)."""
    cpe = f"https://{c.endpoint}"
    out = [KubeconfigSpec("kubeconfigs/admin.conf", "kubeconfig/admin", cpe, "kubernetes-admin")]
    if uses_super_admin(c.k8s_version):
        out.append(KubeconfigSpec("kubeconfigs/super-admin.conf", "kubeconfig/super-admin", cpe,
                                  "kubernetes-super-admin"))
    for m in c.masters:
        local = f"https://{_url_host(m.get('ip') or m['name'])}:{c.api_port}"
        out.append(KubeconfigSpec(f"kubeconfigs/{m['name']}/controller-manager.conf",
                                  "kubeconfig/controller-manager", local, "system:kube-controller-manager"))
        out.append(KubeconfigSpec(f"kubeconfigs/{m['name']}/scheduler.conf", "kubeconfig/scheduler",
                                  local, "system:kube-scheduler"))
    for n in _unique_hosts(c.masters + c.nodes):
        out.append(KubeconfigSpec(f"kubeconfigs/{n['name']}/kubelet.conf", f"kubeconfig/kubelet/{n['name']}",
                                  cpe, f"system:node:{n['name']}"))
    return out


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


# --------------------------------------------------------------------------------------------
# Keys and certificates
# --------------------------------------------------------------------------------------------
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


# --------------------------------------------------------------------------------------------
# Deciding: is an existing certificate still the one we want?
# --------------------------------------------------------------------------------------------
def regeneration_reason(spec: CertSpec, cert, key, signer_cert, now: datetime.datetime,
                        renew_days: int, key_type: str, forced: bool = False) -> str | None:
    """Why spec's certificate must be (re)issued, or None when the existing one is good.

    A CA is kept while it exists and matches its key: it is never renewed for its age (renewing
    a CA re-keys the whole cluster); force it by name to replace it.
    """
    if forced:
        return "forced"
    if cert is None:
        return "missing"
    if key is None:
        return "key missing"
    if not key_matches(cert, key):
        return "key does not match the certificate"
    if spec.is_ca:
        if not cert_is_ca(cert):
            return "not a CA certificate"
        return None
    if key_type_of(key) != key_type:
        return f"key type is {key_type_of(key)}, wanted {key_type}"
    if signer_cert is None or not signed_by(cert, signer_cert):
        return f"not signed by the current {spec.signer}"
    if cert.subject != _name(spec.cn, spec.orgs):
        return f"subject is {subject_text(cert.subject)}, wanted {subject_text(_name(spec.cn, spec.orgs))}"
    if cert_ekus(cert) != set(_ext_key_usages(spec)):
        return "extended key usages differ"
    dns, ips = cert_sans(cert)
    have = set(dns) | {str(ipaddress.ip_address(i)) for i in ips}
    missing = [s for s in spec.sans if s not in have]
    if missing:
        return "missing SANs: " + ", ".join(missing)
    if within_window(cert, now, renew_days):
        left = days_left(cert, now)
        if left < 0:
            return f"expired {-left} days ago"
        return f"expires in {left} days (renewal window {renew_days} days)"
    return None


@dataclass
class Action:
    name: str
    action: str          # issued | renewed | reused | imported
    reason: str = ""

    def as_dict(self) -> dict:
        return {"name": self.name, "action": self.action, "reason": self.reason}


def reconcile(c: Cluster, existing: dict, now: datetime.datetime, renew_days: int = RENEW_DAYS,
              force=(), user_cas: dict | None = None, keygen=None) -> tuple:
    """Desired PKI files from the existing ones.

    existing: relative path -> bytes of what the PKI directory holds now.
    force: certificate names to re-issue whatever their state, or "all" (every leaf; CAs only by name).
    user_cas: CA name -> {"cert": bytes, "key": bytes} imported instead of generated.
    Returns (files, actions, warnings): files is the complete desired content (relative path ->
    bytes; unchanged files keep their exact bytes), actions one Action per certificate.
    """
    keygen = keygen or (lambda: new_key(c.key_type, c.rsa_bits))
    user_cas = user_cas or {}
    files = dict(existing)
    actions, warnings = [], []
    loaded = {}        # name -> (cert, key)
    names = {s.name for s in cluster_certs(c)}
    force_all = force == "all" or (not isinstance(force, str) and "all" in force)
    forced_names = set() if isinstance(force, str) else set(force) - {"all"}
    unknown = forced_names - names
    if unknown:
        raise ValueError("unknown certificate names to renew: " + ", ".join(sorted(unknown)))

    for spec in cluster_certs(c):
        crt_path, key_path = f"{spec.name}.crt", f"{spec.name}.key"
        cert, key = load_cert(files.get(crt_path)), load_key(files.get(key_path))
        if spec.is_ca and spec.name in user_cas:
            ucert, ukey = load_cert(user_cas[spec.name]["cert"]), load_key(user_cas[spec.name]["key"])
            if ucert is None or ukey is None or not key_matches(ucert, ukey) or not cert_is_ca(ucert):
                raise ValueError(f"the provided {spec.name} certificate and key are not a matching CA pair")
            if cert is not None and cert_to_pem(cert) == cert_to_pem(ucert) and key is not None \
                    and key_matches(cert, key):
                actions.append(Action(spec.name, "reused"))
            else:
                files[crt_path], files[key_path] = cert_to_pem(ucert), key_to_pem(ukey)
                actions.append(Action(spec.name, "imported", "user-provided CA"))
                cert, key = ucert, ukey
            loaded[spec.name] = (cert, key)
            _warn_ca_age(spec, cert, now, renew_days, warnings)
            continue
        forced = spec.name in forced_names or (force_all and not spec.is_ca)
        signer_cert = loaded[spec.signer][0] if spec.signer else None
        reason = regeneration_reason(spec, cert, key, signer_cert, now, renew_days, c.key_type, forced)
        if reason is None:
            actions.append(Action(spec.name, "reused"))
            loaded[spec.name] = (cert, key)
            if spec.is_ca:
                _warn_ca_age(spec, cert, now, renew_days, warnings)
            continue
        # keep a good existing key (kubeadm's renew keeps keys); make one when there is none,
        # it does not match, or the key type changed
        if key is None or key_type_of(key) != c.key_type or (cert is not None and not key_matches(cert, key)) \
                or (spec.is_ca and forced):
            key = keygen()
            files[key_path] = key_to_pem(key)
        signer = loaded.get(spec.signer, (None, None))
        cert = issue(spec, key, now, *signer)
        files[crt_path] = cert_to_pem(cert)
        loaded[spec.name] = (cert, key)
        actions.append(Action(spec.name, "issued" if reason == "missing" else "renewed", reason))

    _service_account_keys(files, actions, keygen, "sa" in forced_names)
    for kc in kubeconfig_specs(c):
        cert, key = loaded[kc.cert]
        files[kc.path] = render_kubeconfig(c.name, kc.server, files["ca.crt"], kc.user,
                                           cert_to_pem(cert), key_to_pem(key)).encode()
    return files, actions, warnings


def _warn_ca_age(spec, cert, now, renew_days, warnings):
    if within_window(cert, now, renew_days):
        warnings.append(f"CA {spec.name} expires in {days_left(cert, now)} days; CAs are not renewed "
                        "automatically (renewing a CA re-keys the cluster): plan a CA rotation")


def _service_account_keys(files, actions, keygen, forced):
    key = load_key(files.get("sa.key"))
    if key is not None and not forced and files.get("sa.pub") == public_to_pem(key.public_key()):
        actions.append(Action("sa", "reused"))
        return
    reason = "forced" if forced else ("missing" if key is None else "sa.pub does not match sa.key")
    if key is None or forced:
        key = keygen()
        files["sa.key"] = key_to_pem(key)
    files["sa.pub"] = public_to_pem(key.public_key())
    actions.append(Action("sa", "issued" if reason == "missing" else "renewed", reason))


def render_kubeconfig(cluster: str, server: str, ca_pem: bytes, user: str, cert_pem: bytes, key_pem: bytes) -> str:
    """A kubeconfig exactly as kubeadm writes it (embedded data, context user@cluster)."""
    def b64(data):
        return base64.b64encode(data).decode()
    ctx = f"{user}@{cluster}"
    return (
        "apiVersion: v1\n"
        "clusters:\n"
        "- cluster:\n"
        f"    certificate-authority-data: {b64(ca_pem)}\n"
        f"    server: {server}\n"
        f"  name: {cluster}\n"
        "contexts:\n"
        "- context:\n"
        f"    cluster: {cluster}\n"
        f"    user: {user}\n"
        f"  name: {ctx}\n"
        f"current-context: {ctx}\n"
        "kind: Config\n"
        "preferences: {}\n"
        "users:\n"
        f"- name: {user}\n"
        "  user:\n"
        f"    client-certificate-data: {b64(cert_pem)}\n"
        f"    client-key-data: {b64(key_pem)}\n")


def kubeconfig_client_cert(text: str) -> bytes | None:
    """The PEM of the client certificate embedded in a kubeconfig (kubeadm layout), or None."""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("client-certificate-data:"):
            try:
                return base64.b64decode(line.split(":", 1)[1].strip())
            except ValueError:
                return None
    return None


def changed_files(before: dict, after: dict) -> list:
    return sorted(p for p, data in after.items() if before.get(p) != data)


# --------------------------------------------------------------------------------------------
# Distribution: which host gets which file where
# --------------------------------------------------------------------------------------------
def _f(src, dest, mode):
    return {"src": src, "dest": dest, "mode": mode}


def _pair(src, dest):
    return [_f(f"{src}.crt", f"{dest}.crt", "0644"), _f(f"{src}.key", f"{dest}.key", "0600")]


def host_files(c: Cluster, host: str) -> list:
    """The files one host needs, as {src (PKI dir relative), dest (absolute), mode}, sorted by dest.

    every node: CA certificate and its kubelet.conf; masters: the kubeadm set and kubeconfigs
    (+ etcd server/peer when etcd is stacked); etcd members: their etcd certificates; registry
    hosts: the TKE server certificate as registry.crt/key with the CA.
    """
    names = lambda hosts: {h["name"] for h in hosts}   # noqa: E731
    masters, nodes = names(c.masters), names(c.masters) | names(c.nodes)
    etcd_hosts = names(c.etcd_members)
    out = {}

    def add(items):
        for it in items:
            out[it["dest"]] = it

    if host in nodes:
        add([_f("ca.crt", f"{K8S_PKI}/ca.crt", "0644"),
             _f(f"kubeconfigs/{host}/kubelet.conf", f"{K8S_CONF}/kubelet.conf", "0600")])
    if host in masters:
        for n in ("ca", "front-proxy-ca", "apiserver", "apiserver-kubelet-client", "front-proxy-client",
                  "apiserver-etcd-client"):
            add(_pair(n, f"{K8S_PKI}/{n}"))
        add([_f("etcd/ca.crt", f"{K8S_PKI}/etcd/ca.crt", "0644"),
             _f("sa.key", f"{K8S_PKI}/sa.key", "0600"), _f("sa.pub", f"{K8S_PKI}/sa.pub", "0644"),
             _f("kubeconfigs/admin.conf", f"{K8S_CONF}/admin.conf", "0600"),
             _f(f"kubeconfigs/{host}/controller-manager.conf", f"{K8S_CONF}/controller-manager.conf", "0600"),
             _f(f"kubeconfigs/{host}/scheduler.conf", f"{K8S_CONF}/scheduler.conf", "0600"),
             _f("ca.crt", f"{TKE_PKI}/ca.crt", "0644")])
        add(_pair("tke/server", f"{TKE_PKI}/gateway") + _pair("tke/webhook", f"{TKE_PKI}/webhook"))
        if uses_super_admin(c.k8s_version):
            add([_f("kubeconfigs/super-admin.conf", f"{K8S_CONF}/super-admin.conf", "0600")])
        if c.stacked_etcd:
            add([_f("etcd/ca.key", f"{K8S_PKI}/etcd/ca.key", "0600")])
    if host in etcd_hosts:
        add([_f("etcd/ca.crt", f"{K8S_PKI}/etcd/ca.crt", "0644")])
        add(_pair(f"etcd/members/{host}/server", f"{K8S_PKI}/etcd/server")
            + _pair(f"etcd/members/{host}/peer", f"{K8S_PKI}/etcd/peer")
            + _pair("etcd/healthcheck-client", f"{K8S_PKI}/etcd/healthcheck-client"))
    if host in names(c.registry):
        add([_f("ca.crt", f"{TKE_PKI}/ca.crt", "0644")] + _pair("tke/server", f"{TKE_PKI}/registry"))
    return [out[d] for d in sorted(out)]


# What uses a file on a host, to restart after it changed (static pod manifest names and services)
_CONSUMERS = [
    (f"{K8S_PKI}/etcd/server.", ["etcd"]), (f"{K8S_PKI}/etcd/peer.", ["etcd"]),
    (f"{K8S_PKI}/etcd/ca.", ["etcd", "kube-apiserver"]),
    (f"{K8S_PKI}/etcd/healthcheck-client.", []),
    (f"{K8S_PKI}/apiserver", ["kube-apiserver"]),
    (f"{K8S_PKI}/front-proxy-ca.", ["kube-apiserver", "kube-controller-manager"]),
    (f"{K8S_PKI}/front-proxy-client.", ["kube-apiserver"]),
    (f"{K8S_PKI}/ca.", ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet"]),
    (f"{K8S_PKI}/sa.", ["kube-apiserver", "kube-controller-manager"]),
    (f"{K8S_CONF}/controller-manager.conf", ["kube-controller-manager"]),
    (f"{K8S_CONF}/scheduler.conf", ["kube-scheduler"]),
    (f"{K8S_CONF}/kubelet.conf", ["kubelet"]),
    (f"{TKE_PKI}/registry.", ["registry"]),
]


def consumers(paths) -> list:
    """Sorted names of what must be restarted after the given host paths changed."""
    out = set()
    for p in paths:
        for prefix, who in _CONSUMERS:
            if p.startswith(prefix):
                out.update(who)
                break
    return sorted(out)

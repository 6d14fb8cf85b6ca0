# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Which certificates and kubeconfigs the cluster has: the PKI's inputs (Cluster) and specs.

Private to the collection (package plugins/plugin_utils/k8s_pki). The certificate set is kubeadm's
(same subjects, key usages, extended key usages and SANs as `kubeadm init phase certs all` /
`kubeconfig all`) plus TKE's extras (server certificate for the registry and the gateway, admin and
webhook client certificates). Pure: no file system, no cryptography.
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from ansible_collections.offline_pot.tke.plugins.module_utils import kubeadm_phases

CA_DAYS = 3650          # kubeadm: 10-year CAs
CERT_DAYS = 365         # kubeadm: 1-year leaves
RENEW_DAYS = 30         # TKE/kubeadm: renew within 30 days of expiry

MASTERS_GROUP = "system:masters"
CLUSTER_ADMINS_GROUP = "kubeadm:cluster-admins"   # kubeadm >= 1.29

K8S_PKI = "/etc/kubernetes/pki"
K8S_CONF = "/etc/kubernetes"
TKE_PKI = "/etc/tke/pki"


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
        # kubeadm from 1.36.1 (and 1.35.5, 1.34.8, 1.33.12: kubernetes#138957 and its cherry-picks) issues this
        # one without O and binds the user to system:kubelet-api-admin in init's and upgrade apply's
        # bootstrap-token phase, but not on a master's join (docs/kubernetes_releases.md section 10). Kept with the
        # admins' group for every release: bound to cluster-admin, it reaches the kubelets whatever path made
        # the cluster (docs/pki.md).
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
    controller-manager and scheduler the master's own address (kubeadm's LocalAPIEndpoint); so does a
    master's kubelet where kubeadm runs in the kubelet's local mode (kubeadm_phases.kubelet_local_mode:
    kubeadm init, join and upgrade write it so; the endpoint would make every upgrade and install fight)."""
    cpe = f"https://{c.endpoint}"
    local_mode = kubeadm_phases.kubelet_local_mode(c.k8s_version)
    masters = {m["name"]: m for m in c.masters}
    out = [KubeconfigSpec("kubeconfigs/admin.conf", "kubeconfig/admin", cpe, "kubernetes-admin")]
    if uses_super_admin(c.k8s_version):
        out.append(KubeconfigSpec("kubeconfigs/super-admin.conf", "kubeconfig/super-admin", cpe,
                                  "kubernetes-super-admin"))
    for m in c.masters:
        local = _local(m, c.api_port)
        out.append(KubeconfigSpec(f"kubeconfigs/{m['name']}/controller-manager.conf",
                                  "kubeconfig/controller-manager", local, "system:kube-controller-manager"))
        out.append(KubeconfigSpec(f"kubeconfigs/{m['name']}/scheduler.conf", "kubeconfig/scheduler",
                                  local, "system:kube-scheduler"))
    for n in _unique_hosts(c.masters + c.nodes):
        server = _local(masters[n["name"]], c.api_port) if local_mode and n["name"] in masters else cpe
        out.append(KubeconfigSpec(f"kubeconfigs/{n['name']}/kubelet.conf", f"kubeconfig/kubelet/{n['name']}",
                                  server, f"system:node:{n['name']}"))
    return out


def _local(master: dict, port: int) -> str:
    """A master's own API server (kubeadm's LocalAPIEndpoint)."""
    return f"https://{_url_host(master.get('ip') or master['name'])}:{port}"


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host

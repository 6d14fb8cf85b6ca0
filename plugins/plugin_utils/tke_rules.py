# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""TKE's own validation rules for the state file tke.json, as facts: would TKE accept it?

Private to the collection (used by plugins/action/tke_config.py, which warns with what it finds,
and by tests/unit/plugins/plugin_utils/test_tke_rules.py on the tke.json rendered for every sample
inventory). Pure functions over the parsed document, no Ansible import.

Read (not copied) from github.com/tkestack/tke at commit 31e93ce096d1 (2024-06-06, after tag
v1.9.2); each rule names its source:
- cmd/tke-installer/app/installer/installer.go  validateConfig (the create-cluster request)
- cmd/tke-installer/app/installer/types/types.go  `validate:"..."` tags (go-playground validator)
- api/platform/validation/cluster.go  ValidateCluster, ValidateHA (the platform API)
- pkg/platform/provider/baremetal/validation/cluster.go  ValidateCIDRs, ValidateClusterProperty,
  ValidateIPVS, ValidateClusterGPUMachines (the Baremetal provider)
- pkg/platform/provider/baremetal/validation/machine.go  ValidateSSH
- api/platform/v1/types.go  ExternalEtcd (caFile, certFile, keyFile "required if using a TLS
  connection"; the spec is merged into kubeadm's ClusterConfiguration:
  pkg/platform/provider/baremetal/cluster/kubeadm.go)

Not encoded, because they depend on the running installer, not on the document:
ValidateClusterSpecVersion (the version must be one of the installer image's pkg/spec K8sVersions,
"1.21.4-tke.3" and "1.20.6-tke.2" at that commit: this collection installs 1.28-1.36 itself and
records that version), the SSH/OS/disk/port probes of ValidateClusterMachines (our precheck
phase does those), and hook/file existence. INSTALLER_LIMITS lists what tke-installer itself
refuses although the API would accept it.
"""
from __future__ import annotations

import ipaddress
import re

# pkg/platform/provider/baremetal/validation/cluster.go: nodePodNumAvails, clusterServiceNumAvails
MAX_NODE_POD_NUM = (16, 32, 64, 128, 256)
MAX_CLUSTER_SERVICE_NUM = (32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768)
# the global cluster is a Baremetal one (baremetal/cluster/provider.go name, create.go); Imported
# and Edge are the other registered providers, for clusters TKE did not install
CLUSTER_TYPES = ("Baremetal",)
# k8s.io/apimachinery NameIsDNSLabel (metadata.name) and go-playground hostname_rfc1123
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_HOSTNAME_RFC1123 = re.compile(r"^(?=.{1,253}$)[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
                               r"(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$")


def _ip(value) -> bool:
    try:
        ipaddress.ip_address(str(value))
        return True
    except ValueError:
        return False


def _net(value):
    try:
        return ipaddress.ip_network(str(value), strict=False)
    except ValueError:
        return None


def _port(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 65535


def check_cluster(cluster: dict, where: str = "cluster") -> list[str]:
    """Problems TKE's platform API and Baremetal provider would report for a Cluster object."""
    out = []
    meta, spec = cluster.get("metadata") or {}, cluster.get("spec") or {}
    name = str(meta.get("name") or "")
    if not _DNS_LABEL.match(name):   # api/platform/validation/cluster.go ValidateObjectMeta(NameIsDNSLabel)
        out.append(f"{where}.metadata.name: {name!r} is not a DNS label")
    if spec.get("type") not in CLUSTER_TYPES:   # ValidateClusterType
        out.append(f"{where}.spec.type: {spec.get('type')!r} is not one of {', '.join(CLUSTER_TYPES)}")
    features = spec.get("features") or {}
    out += _check_ha(features.get("ha"), f"{where}.spec.features.ha")
    out += _check_cidrs(spec, where)
    out += _check_properties(spec, where)
    # baremetal ValidateIPVS: ipvs needs spec.serviceCIDR
    if features.get("ipvs") and spec.get("serviceCIDR") is None:
        out.append(f"{where}.spec.features.ipvs: needs spec.serviceCIDR")
    machines = spec.get("machines")
    if machines is None:   # ValidateClusterGPUMachines: field.Required
        out.append(f"{where}.spec.machines: required")
    for i, m in enumerate(machines or []):   # machine.go ValidateSSH
        path = f"{where}.spec.machines[{i}]"
        if not _ip(m.get("ip")):
            out.append(f"{path}.ip: {m.get('ip')!r} is not an IP address")
        if not _port(m.get("port")):
            out.append(f"{path}.port: {m.get('port')!r} is not a port number")
        if not m.get("password") and not m.get("privateKey"):
            out.append(f"{path}: must specify password or privateKey")
    etcd = spec.get("etcd") or {}
    ext = etcd.get("external")
    if ext is not None:   # api/platform/v1/types.go ExternalEtcd: TLS needs the three files
        if not ext.get("endpoints"):
            out.append(f"{where}.spec.etcd.external.endpoints: required")
        if any(str(e).startswith("https://") for e in ext.get("endpoints") or []):
            for key in ("caFile", "certFile", "keyFile"):
                if not ext.get(key):
                    out.append(f"{where}.spec.etcd.external.{key}: required with https endpoints")
    return out


def _check_ha(ha, path) -> list[str]:
    """api/platform/validation/cluster.go ValidateHA and types.go TKEHA/ThirdPartyHA vip required."""
    out = []
    if not ha:
        return out
    if "tke" in ha:
        if not _ip(ha["tke"].get("vip")):
            out.append(f"{path}.tke.vip: {ha['tke'].get('vip')!r} is not an IP address")
        vrid = ha["tke"].get("vrid")
        if vrid is not None and not (isinstance(vrid, int) and 1 <= vrid <= 255):
            out.append(f"{path}.tke.vrid: {vrid!r} must be a valid vrid, range [1, 255]")
    if "thirdParty" in ha:
        if not _ip(ha["thirdParty"].get("vip")):
            out.append(f"{path}.thirdParty.vip: {ha['thirdParty'].get('vip')!r} is not an IP address")
        # installer.go setConfigDefaults: vport 0 becomes 6443; then IsValidPortNum
        vport = ha["thirdParty"].get("vport") or 6443
        if not _port(vport):
            out.append(f"{path}.thirdParty.vport: {vport!r} is not a port number")
    return out


def _check_cidrs(spec, where) -> list[str]:
    """baremetal ValidateCIDRs (single stack: features.ipv6DualStack is not set by us)."""
    out = []
    cluster_cidr = spec.get("clusterCIDR") or ""
    pods = _net(cluster_cidr) if cluster_cidr and "," not in cluster_cidr else None
    if not cluster_cidr:
        out.append(f"{where}.spec.clusterCIDR: empty")
    elif pods is None:
        out.append(f"{where}.spec.clusterCIDR: {cluster_cidr!r} must be one valid CIDR block")
    else:
        for i, m in enumerate(spec.get("machines") or []):
            if _ip(m.get("ip")) and ipaddress.ip_address(m["ip"]) in pods:
                out.append(f"{where}.spec.clusterCIDR: {cluster_cidr} contains node IP {m['ip']} (machines[{i}])")
    if spec.get("serviceCIDR") is not None:
        svc = _net(spec["serviceCIDR"]) if spec["serviceCIDR"] and "," not in spec["serviceCIDR"] else None
        if svc is None:
            out.append(f"{where}.spec.serviceCIDR: {spec['serviceCIDR']!r} must be one valid CIDR block")
        elif pods is not None:
            if pods.version == svc.version and pods.overlaps(svc):
                out.append(f"{where}.spec.serviceCIDR: {svc} overlaps clusterCIDR {pods}")
            if svc.num_addresses <= 10:   # ipallocator.GetIndexedIP(serviceCIDR, 10): kubeadm's DNS IP
                out.append(f"{where}.spec.serviceCIDR: {svc} must contain at least 10 IPs (kubeadm needs the 10th)")
    return out


def _check_properties(spec, where) -> list[str]:
    """baremetal ValidateClusterProperty."""
    out = []
    props = spec.get("properties") or {}
    path = f"{where}.spec.properties"
    pods = props.get("maxNodePodNum")
    if pods is None:
        out.append(f"{path}.maxNodePodNum: required, one of {list(MAX_NODE_POD_NUM)}")
    elif pods not in MAX_NODE_POD_NUM:
        out.append(f"{path}.maxNodePodNum: {pods!r} is not one of {list(MAX_NODE_POD_NUM)}")
    services = props.get("maxClusterServiceNum")
    if services is None:
        if spec.get("serviceCIDR") is None:
            out.append(f"{path}.maxClusterServiceNum: required without spec.serviceCIDR, "
                       f"one of {list(MAX_CLUSTER_SERVICE_NUM)}")
    elif spec.get("serviceCIDR") is not None:
        out.append(f"{path}.maxClusterServiceNum: can't be used together with spec.serviceCIDR")
    elif services not in MAX_CLUSTER_SERVICE_NUM:
        out.append(f"{path}.maxClusterServiceNum: {services!r} is not one of {list(MAX_CLUSTER_SERVICE_NUM)}")
    return out


def check_config(config: dict, where: str = "para.Config") -> list[str]:
    """Problems tke-installer's validateConfig (installer.go) and its types' tags would report."""
    out = []
    basic, auth, registry = config.get("basic") or {}, config.get("auth") or {}, config.get("registry") or {}
    if (config.get("gateway") is not None or registry.get("tke") is not None) and \
            (not basic.get("username") or basic.get("password") is None):
        out.append(f"{where}.basic: username or password required when enabled gateway or registry")
    if auth.get("tke") is None and auth.get("oidc") is None:
        out.append(f"{where}.auth: tke auth or oidc auth required")
    if registry.get("tke") is None and registry.get("thirdParty") is None:
        out.append(f"{where}.registry: tke registry or third party registry required")
    domain = (registry.get("tke") or {}).get("domain")
    if registry.get("tke") is not None and not _HOSTNAME_RFC1123.match(str(domain or "")):
        out.append(f"{where}.registry.tke.domain: {domain!r} is not an RFC 1123 host name")
    monitor = config.get("monitor") or {}
    if monitor.get("influxDB") is not None and monitor.get("es") is not None:
        out.append(f"{where}.monitor: influxdb or es only had one")
    ha = config.get("ha") or {}
    for key in ("tke", "thirdParty"):   # types.go TKEHA.VIP / ThirdPartyHA.VIP validate:"required"
        if key in ha and not (ha[key] or {}).get("vip"):
            out.append(f"{where}.ha.{key}.vip: required")
    return out


def check(document: dict) -> list[str]:
    """Every problem TKE would report for a tke.json (installer request and both cluster copies)."""
    para = document.get("para") or {}
    return (check_config(para.get("Config") or {}) + check_cluster(para.get("cluster") or {}, "para.cluster")
            + check_cluster(document.get("cluster") or {}, "cluster"))


def installer_limits(document: dict) -> list[str]:
    """What tke-installer itself refuses although the platform API accepts it."""
    out = []
    if ((document.get("cluster") or {}).get("spec") or {}).get("etcd", {}).get("external") is not None:
        # installer.go prepareCertificates: "external etcd specified, but ca key is not provided yet"
        out.append("tke-installer refuses an external etcd (installer.go prepareCertificates): the collection "
                   "installs it itself, tke.json records it")
    return out

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""kubeadm configuration documents from the cluster settings, for Kubernetes 1.28-1.36.

Private to the collection. Pure functions, no Ansible import (unit-tested in
tests/unit/plugins/module_utils/test_kubeadm_config.py). Hosts may lack PyYAML, so the
documents are written as JSON (standard library; JSON is YAML, and kubeadm reads YAML or JSON
documents separated by "---" lines: cmd/kubeadm/app/util/marshal.go splits them and decodes
each with sigs.k8s.io/yaml, which takes JSON).

API versions (kubeadm reference, "kubeadm Configuration (v1beta3)" and "(v1beta4)"):
v1beta3 for 1.28-1.30; v1beta4 from 1.31, where extraArgs become lists of {name, value}.
KubeletConfiguration is kubelet.config.k8s.io/v1beta1, KubeProxyConfiguration
kubeproxy.config.k8s.io/v1alpha1 for every supported version (1.36 changes neither the kubeadm
nor these APIs' fields: the config-API references regenerated for 1.36, docs/kubernetes_releases.md section 10).

No featureGates are written: each release's defaults hold (kubeadm 1.36 would refuse the removed
ControlPlaneKubeletLocalMode, kubernetes#135773; kubeadm_phases.REMOVED_GATES).
"""
from __future__ import annotations

import ipaddress
import json
import re

from ansible_collections.offline_pot.tke.plugins.module_utils.kubeadm_phases import cgroup_v1_refused, kubeadm_api_version


class ConfigError(ValueError):
    pass


def service_ip(cidr: str, n: int) -> str:
    """The n-th address of a CIDR (1: kubernetes service, 10: cluster DNS)."""
    net = ipaddress.ip_network(cidr, strict=False)
    return str(net.network_address + n)


def _extra_args(args: dict | None, v4: bool):
    args = {str(k): str(v) for k, v in (args or {}).items()}
    if v4:
        return [{"name": k, "value": v} for k, v in sorted(args.items())]
    return dict(sorted(args.items()))


def _cidr(value: str, what: str) -> str:
    try:
        return str(ipaddress.ip_network(value, strict=True))
    except ValueError as e:
        raise ConfigError(f"{what}: {value!r} is not a CIDR ({e})") from None


# kubeadm's layout of the API server's external etcd client files (the pki phase issues them there);
# also what tke.json's spec.etcd.external names.
EXTERNAL_ETCD_FILES = {"caFile": "/etc/kubernetes/pki/etcd/ca.crt",
                       "certFile": "/etc/kubernetes/pki/apiserver-etcd-client.crt",
                       "keyFile": "/etc/kubernetes/pki/apiserver-etcd-client.key"}

# Files the pki phase puts on every node before it joins (its CA and its own kubelet.conf, issued
# by the collection's authority so certificates never surprise): kubeadm join's preflight would
# refuse them as "already exists".
JOIN_PREPROVISIONED = ("FileAvailable--etc-kubernetes-kubelet.conf", "FileAvailable--etc-kubernetes-pki-ca.crt")


def _node_registration(node: dict, v4: bool, control_plane: bool, joining: bool = False) -> dict:
    reg = {"name": node["name"], "criSocket": node.get("cri_socket") or "unix:///run/containerd/containerd.sock",
           "imagePullPolicy": "IfNotPresent",
           "kubeletExtraArgs": _extra_args(node.get("kubelet_extra_args"), v4)}
    if joining:
        reg["ignorePreflightErrors"] = list(JOIN_PREPROVISIONED)
    taints = node.get("taints")
    if taints is None:
        taints = [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}] if control_plane else []
    reg["taints"] = taints
    return reg


def build(kind: str, version: str, cluster: dict, node: dict, join: dict | None = None) -> list[dict]:
    """Documents of the kubeadm configuration file for this node.

    kind: init (first master: Init + Cluster + Kubelet + KubeProxy configuration) or join
    (JoinConfiguration; the cluster's settings come from the kubeadm-config ConfigMap).
    """
    api = kubeadm_api_version(version)
    v4 = api.endswith("v1beta4")
    if kind not in ("init", "join"):
        raise ConfigError(f"kind must be init or join, not {kind!r}")
    address = node.get("advertise_address") or ""
    try:
        ipaddress.ip_address(address)
    except ValueError:
        raise ConfigError(f"node advertise address {address!r} is not an IP address") from None
    port = int(cluster.get("api_port", 6443))
    if kind == "join":
        join = join or {}
        for key in ("api_server_endpoint", "token", "ca_cert_hash"):
            if not join.get(key):
                raise ConfigError(f"join: {key} is required")
        doc = {"apiVersion": api, "kind": "JoinConfiguration",
               "nodeRegistration": _node_registration(node, v4, bool(join.get("control_plane")), joining=True),
               "discovery": {"bootstrapToken": {"apiServerEndpoint": join["api_server_endpoint"],
                                                "token": join["token"],
                                                "caCertHashes": [join["ca_cert_hash"]]}}}
        if join.get("control_plane"):
            cp = {"localAPIEndpoint": {"advertiseAddress": address, "bindPort": port}}
            if join.get("certificate_key"):
                cp["certificateKey"] = join["certificate_key"]
            doc["controlPlane"] = cp
        return [doc]

    pod_cidr = _cidr(cluster["pod_cidr"], "pod CIDR")
    svc_cidr = _cidr(cluster["service_cidr"], "service CIDR")
    if ipaddress.ip_network(pod_cidr).overlaps(ipaddress.ip_network(svc_cidr)):
        raise ConfigError(f"pod CIDR {pod_cidr} overlaps service CIDR {svc_cidr}")
    mask = int(cluster.get("node_cidr_mask", 24))
    if mask <= ipaddress.ip_network(pod_cidr).prefixlen:
        raise ConfigError(f"node CIDR mask /{mask} must be longer than the pod CIDR {pod_cidr}")
    endpoint = cluster["control_plane_endpoint"]
    if not re.match(r"^[A-Za-z0-9.\-]+:\d+$", endpoint):
        raise ConfigError(f"control plane endpoint {endpoint!r} must be host:port")

    init = {"apiVersion": api, "kind": "InitConfiguration",
            "localAPIEndpoint": {"advertiseAddress": address, "bindPort": port},
            "nodeRegistration": _node_registration(node, v4, True),
            "bootstrapTokens": [{"groups": ["system:bootstrappers:kubeadm:default-node-token"],
                                 "ttl": "24h0m0s", "usages": ["signing", "authentication"],
                                 "description": "kubeadm init default token (unused by offline_pot.tke)"}]}
    cm_args = {"allocate-node-cidrs": "true", "cluster-cidr": pod_cidr,
               "node-cidr-mask-size": str(mask), **(cluster.get("controller_manager_extra_args") or {})}
    etcd = cluster.get("etcd") or {}
    if etcd.get("external"):
        ext = etcd["external"]
        if not ext.get("endpoints"):
            raise ConfigError("external etcd: endpoints are required")
        for ep in ext["endpoints"]:
            if not re.match(r"^https://[A-Za-z0-9.\-\[\]:]+:\d+$", ep):
                raise ConfigError(f"external etcd endpoint {ep!r} must be https://host:port")
        etcd_doc = {"external": {"endpoints": list(ext["endpoints"]),
                                 "caFile": ext.get("ca_file") or EXTERNAL_ETCD_FILES["caFile"],
                                 "certFile": ext.get("cert_file") or EXTERNAL_ETCD_FILES["certFile"],
                                 "keyFile": ext.get("key_file") or EXTERNAL_ETCD_FILES["keyFile"]}}
    else:
        local = etcd.get("local") or {}
        etcd_doc = {"local": {"dataDir": local.get("data_dir") or "/var/lib/etcd",
                              "extraArgs": _extra_args({"quota-backend-bytes": "6442450944",
                                                        **(local.get("extra_args") or {})}, v4),
                              "serverCertSANs": list(local.get("server_cert_sans") or []),
                              "peerCertSANs": list(local.get("peer_cert_sans") or [])}}
    cluster_doc = {
        "apiVersion": api, "kind": "ClusterConfiguration",
        "clusterName": cluster.get("name") or "kubernetes",
        "kubernetesVersion": "v" + str(version).lstrip("v"),
        "controlPlaneEndpoint": endpoint,
        "imageRepository": cluster["image_repository"],
        "certificatesDir": "/etc/kubernetes/pki",
        "networking": {"podSubnet": pod_cidr, "serviceSubnet": svc_cidr,
                       "dnsDomain": cluster.get("dns_domain") or "cluster.local"},
        "apiServer": {"certSANs": list(cluster.get("apiserver_cert_sans") or []),
                      "extraArgs": _extra_args(cluster.get("apiserver_extra_args"), v4)},
        "controllerManager": {"extraArgs": _extra_args(cm_args, v4)},
        "scheduler": {"extraArgs": _extra_args(cluster.get("scheduler_extra_args"), v4)},
        "etcd": etcd_doc,
    }
    reserved = {"cpu": "100m", "memory": "500Mi"}
    kubelet_doc = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
        "cgroupDriver": "systemd",
        "clusterDNS": [service_ip(svc_cidr, 10)],
        "clusterDomain": cluster.get("dns_domain") or "cluster.local",
        "maxPods": int(cluster.get("max_pods", 110)),
        "kubeReserved": dict(cluster.get("kube_reserved") or reserved),
        "systemReserved": dict(cluster.get("system_reserved") or reserved),
    }
    if cluster.get("allow_cgroup_v1") is True and cgroup_v1_refused(version):
        # KEP-5573: from 1.35 the kubelet refuses cgroup v1 unless told not to (kubeadm uploads this
        # document as kube-system/kubelet-config: every joining node's config.yaml gets it)
        kubelet_doc["failCgroupV1"] = False
    mode = cluster.get("proxy_mode", "ipvs")
    if mode not in ("ipvs", "iptables"):
        raise ConfigError(f"kube-proxy mode must be ipvs or iptables, not {mode!r}")
    exclude = [_cidr(c, "kube-proxy excluded CIDR") for c in cluster.get("proxy_exclude_cidrs") or []]
    proxy_doc = {"apiVersion": "kubeproxy.config.k8s.io/v1alpha1", "kind": "KubeProxyConfiguration",
                 "mode": mode, "clusterCIDR": pod_cidr, "ipvs": {"excludeCIDRs": exclude}}
    return [init, cluster_doc, kubelet_doc, proxy_doc]


# --- the file: JSON documents (JSON is YAML; kubeadm reads each document between "---" lines) ---
HEADER = "# Written by offline_pot.tke (kubeadm_config); changes here are overwritten.\n"


def dump_documents(documents: list[dict]) -> str:
    """The configuration file's text: each document as indented JSON after a "---" line (one key
    per line, so that kubeadm_phases can mask secrets line by line)."""
    return "".join("---\n" + json.dumps(d, indent=2) + "\n" for d in documents)


def load_documents(text: str) -> list[dict]:
    """The documents of a file written by dump_documents (comment lines ignored)."""
    docs, chunk = [], []
    for line in (text or "").splitlines() + ["---"]:
        if line.strip() == "---":
            body = "\n".join(chunk).strip()
            chunk = []
            if body:
                try:
                    doc = json.loads(body)
                except ValueError as e:
                    raise ConfigError(f"not a configuration written by offline_pot.tke (JSON documents): {e}") from None
                if not isinstance(doc, dict):
                    raise ConfigError("a configuration document is not a mapping")
                docs.append(doc)
        elif not line.lstrip().startswith("#"):
            chunk.append(line)
    return docs

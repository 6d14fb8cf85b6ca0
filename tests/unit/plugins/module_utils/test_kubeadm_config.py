"""kubeadm configuration documents per Kubernetes version, and the file they are written to."""
import json

import pytest

import yaml

from ansible_collections.offline_pot.tke.plugins.module_utils import kubeadm_config as kc
from ansible_collections.offline_pot.tke.plugins.module_utils import kubeadm_phases as kp

CLUSTER = {"name": "global", "control_plane_endpoint": "api.tke.com:6443", "image_repository": "registry.tke.com/library",
           "pod_cidr": "10.244.0.0/16", "service_cidr": "10.96.0.0/16", "node_cidr_mask": 24, "max_pods": 256,
           "proxy_mode": "ipvs", "proxy_exclude_cidrs": ["192.0.2.100/32"], "apiserver_cert_sans": ["api.tke.com"],
           "apiserver_extra_args": {"audit-log-maxage": "30"}, "etcd": {"local": {}}}
NODE = {"name": "m1", "advertise_address": "192.0.2.11"}


def docs(version="1.30.4", cluster=None, node=None):
    return {d["kind"]: d for d in kc.build("init", version, cluster or CLUSTER, node or NODE)}


def test_init_v1beta3_carries_tke_settings():
    d = docs()
    assert d["InitConfiguration"]["apiVersion"] == "kubeadm.k8s.io/v1beta3"
    c = d["ClusterConfiguration"]
    assert c["controlPlaneEndpoint"] == "api.tke.com:6443" and c["kubernetesVersion"] == "v1.30.4"
    assert c["imageRepository"] == "registry.tke.com/library"
    assert c["etcd"]["local"]["extraArgs"] == {"quota-backend-bytes": "6442450944"}
    assert c["controllerManager"]["extraArgs"] == {"allocate-node-cidrs": "true", "cluster-cidr": "10.244.0.0/16",
                                                   "node-cidr-mask-size": "24"}
    assert c["apiServer"]["extraArgs"] == {"audit-log-maxage": "30"}
    k = d["KubeletConfiguration"]
    assert k["maxPods"] == 256 and k["clusterDNS"] == ["10.96.0.10"] and k["cgroupDriver"] == "systemd"
    assert k["kubeReserved"] == k["systemReserved"] == {"cpu": "100m", "memory": "500Mi"}
    p = d["KubeProxyConfiguration"]
    assert p["mode"] == "ipvs" and p["ipvs"]["excludeCIDRs"] == ["192.0.2.100/32"]
    assert d["InitConfiguration"]["nodeRegistration"]["taints"][0]["key"] == "node-role.kubernetes.io/control-plane"


def test_v1beta4_from_1_31_uses_name_value_args():
    d = docs("1.31.1")
    assert d["ClusterConfiguration"]["apiVersion"] == "kubeadm.k8s.io/v1beta4"
    assert {"name": "audit-log-maxage", "value": "30"} in d["ClusterConfiguration"]["apiServer"]["extraArgs"]
    assert d["InitConfiguration"]["nodeRegistration"]["kubeletExtraArgs"] == []


def test_external_etcd_uses_kubeadm_cert_layout():
    c = docs(cluster={**CLUSTER, "etcd": {"external": {"endpoints": ["https://192.0.2.21:2379"]}}})["ClusterConfiguration"]
    assert c["etcd"] == {"external": {"endpoints": ["https://192.0.2.21:2379"], "caFile": "/etc/kubernetes/pki/etcd/ca.crt",
                                      "certFile": "/etc/kubernetes/pki/apiserver-etcd-client.crt",
                                      "keyFile": "/etc/kubernetes/pki/apiserver-etcd-client.key"}}


@pytest.mark.parametrize("change,message", [
    ({"pod_cidr": "10.244.0.0/33"}, "pod CIDR"),
    ({"service_cidr": "10.244.0.0/20"}, "overlaps"),
    ({"node_cidr_mask": 16}, "node CIDR mask"),
    ({"control_plane_endpoint": "https://api.tke.com"}, "host:port"),
    ({"proxy_mode": "userspace"}, "kube-proxy mode"),
    ({"etcd": {"external": {"endpoints": ["192.0.2.1:2379"]}}}, "https://host:port"),
])
def test_bad_settings_are_named(change, message):
    with pytest.raises(kc.ConfigError, match=message):
        kc.build("init", "1.30.4", {**CLUSTER, **change}, NODE)


def test_join_documents():
    join = {"api_server_endpoint": "api.tke.com:6443", "token": "abcdef.0123456789abcdef",
            "ca_cert_hash": "sha256:" + "a" * 64}
    worker = kc.build("join", "1.30.4", {}, {**NODE, "taints": []}, join)[0]
    assert worker["kind"] == "JoinConfiguration" and "controlPlane" not in worker
    assert worker["nodeRegistration"]["taints"] == []
    master = kc.build("join", "1.30.4", {"api_port": 6443}, NODE,
                      {**join, "control_plane": True, "certificate_key": "b" * 64})[0]
    assert master["controlPlane"] == {"localAPIEndpoint": {"advertiseAddress": "192.0.2.11", "bindPort": 6443},
                                      "certificateKey": "b" * 64}
    with pytest.raises(kc.ConfigError, match="token is required"):
        kc.build("join", "1.30.4", {}, NODE, {**join, "token": ""})


@pytest.mark.parametrize("version", ["1.28.13", "1.29.8", "1.30.4", "1.31.1", "1.35.7", "1.36.3"])
def test_file_round_trips_through_a_yaml_reader(version):
    """kubeadm reads the file as YAML documents split on "---" lines: the JSON documents must
    come back unchanged through a YAML reader and through our own loader."""
    documents = kc.build("init", version, CLUSTER, NODE)
    text = kc.HEADER + kc.dump_documents(documents)
    assert [d for d in yaml.safe_load_all(text) if d is not None] == documents
    assert kc.load_documents(text) == documents


def test_strings_yaml_would_misread_stay_strings():
    doc = {"a": "true", "b": "10.0.0.1", "c": "x: y", "d": "", "e": [], "f": {}, "g": "1.30", "h": "no",
           "i": "0600", "j": "~", "k": "- x", "l": "#x", "m": "1e3"}
    assert yaml.safe_load(kc.dump_documents([doc])) == doc


def test_secret_lines_masked_in_the_written_file():
    join = {"api_server_endpoint": "api.tke.com:6443", "token": "abcdef.0123456789abcdef",
            "ca_cert_hash": "sha256:" + "a" * 64, "control_plane": True, "certificate_key": "b" * 64}
    text = kc.dump_documents(kc.build("join", "1.30.4", {}, NODE, join))
    masked = kp.mask_config(text)
    assert "abcdef.0123456789abcdef" not in masked and "b" * 64 not in masked
    # still one valid document, with the secrets replaced and nothing else
    doc = json.loads(masked.split("---", 1)[1])
    assert doc["discovery"]["bootstrapToken"]["token"] == "<secret>"
    assert doc["controlPlane"]["certificateKey"] == "<secret>"
    assert doc["discovery"]["bootstrapToken"]["caCertHashes"] == ["sha256:" + "a" * 64]
    # credentials do not count in comparisons: rotated, or absent once no master needs to join
    other = kc.dump_documents(kc.build("join", "1.30.4", {}, NODE, {**join, "token": "zzzzzz.0123456789abcdef"}))
    assert kp.strip_secrets(other) == kp.strip_secrets(text) and other != text
    no_key = kc.dump_documents(kc.build("join", "1.30.4", {}, NODE, {**join, "certificate_key": ""}))
    assert '"certificateKey"' not in no_key and kp.strip_secrets(no_key) == kp.strip_secrets(text)
    # anything else still counts
    other_node = kc.dump_documents(kc.build("join", "1.30.4", {}, {**NODE, "name": "m2"}, join))
    assert kp.strip_secrets(other_node) != kp.strip_secrets(text)


def test_service_ip():
    assert kc.service_ip("10.96.0.0/16", 10) == "10.96.0.10"


def test_join_ignores_only_the_files_the_pki_phase_provides():
    docs = kc.build("join", "1.30.4", CLUSTER, NODE,
                    join={"api_server_endpoint": "api.tke.com:6443", "token": "abcdef.0123456789abcdef",
                          "ca_cert_hash": "sha256:" + "0" * 64})
    reg = docs[0]["nodeRegistration"]
    assert reg["ignorePreflightErrors"] == ["FileAvailable--etc-kubernetes-kubelet.conf",
                                            "FileAvailable--etc-kubernetes-pki-ca.crt"]
    init = kc.build("init", "1.30.4", CLUSTER, NODE)
    assert "ignorePreflightErrors" not in init[0]["nodeRegistration"]


def test_the_kubelet_runs_on_cgroup_v1_from_1_35_only_when_the_site_allows_it():
    allowed = {**CLUSTER, "allow_cgroup_v1": True}
    assert docs("1.35.7", allowed)["KubeletConfiguration"]["failCgroupV1"] is False
    # not allowed: the kubelet's default (true from 1.35) stays, the precheck refused cgroup v1 hosts
    assert "failCgroupV1" not in docs("1.35.7")["KubeletConfiguration"]
    # before 1.35 the default is false already: nothing written, an upgraded site's configuration unchanged
    assert "failCgroupV1" not in docs("1.34.10", allowed)["KubeletConfiguration"]
    assert docs("1.35.7", {**CLUSTER, "allow_cgroup_v1": "False"})["KubeletConfiguration"].get("failCgroupV1") is None


def test_1_36_documents_are_1_35s_with_the_version_and_no_feature_gates():
    """1.36 changes no field of the APIs the documents use (docs/kubernetes_releases.md section 10); no featureGates are
    written (kubeadm 1.36 refuses the removed ControlPlaneKubeletLocalMode); failCgroupV1 as from 1.35."""
    allowed = {**CLUSTER, "allow_cgroup_v1": True}
    for cluster in (CLUSTER, allowed):
        d136, d135 = docs("1.36.3", cluster), docs("1.35.7", cluster)
        assert d136["ClusterConfiguration"].pop("kubernetesVersion") == "v1.36.3"
        d135["ClusterConfiguration"].pop("kubernetesVersion")
        assert d136 == d135
        assert not [d for d in d136.values() if "featureGates" in d]
    assert docs("1.36.3", allowed)["KubeletConfiguration"]["failCgroupV1"] is False
    assert "failCgroupV1" not in docs("1.36.3")["KubeletConfiguration"]


def test_1_36_documents_load_in_the_1_36_kubeadm_double(d136, tmp_path):
    """What the collection writes for 1.36, as the 1.36 double decodes and validates it (unknown fields,
    removed gates, the control plane's minimum version): read cleanly, without a configuration warning."""
    init = tmp_path / "init.yaml"
    init.write_text(kc.HEADER + kc.dump_documents(kc.build("init", "1.36.3", CLUSTER, NODE)))
    loaded = d136.config_load.load_config(str(init), "init")
    assert loaded["ClusterConfiguration"]["kubernetesVersion"] == "v1.36.3"
    join = tmp_path / "join.yaml"
    join.write_text(kc.HEADER + kc.dump_documents(kc.build(
        "join", "1.36.3", CLUSTER, NODE, {"api_server_endpoint": "api.tke.com:6443", "token": "abcdef.0123456789abcdef",
                                          "ca_cert_hash": "sha256:" + "a" * 64, "control_plane": True,
                                          "certificate_key": "b" * 64})))
    assert d136.config_load.load_config(str(join), "join")["JoinConfiguration"]["controlPlane"]["certificateKey"] == "b" * 64
    assert not (tmp_path / "warnings.log").exists()

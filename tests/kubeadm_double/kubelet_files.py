"""What `kubelet-start` (init and join) writes: /var/lib/kubelet/config.yaml, with NodeLocalCRISocket
instance-config.yaml merged into it, and kubeadm-flags.env; then the kubelet unit is restarted.
`upgrade apply|node` writes config.yaml and instance-config.yaml with the same functions."""
import json
import os
import subprocess

import yaml

import common
from common import CLI, out
import config_load
import static_pods


KUBELET_DEFAULTS = {"authentication": {"anonymous": {"enabled": False}, "webhook": {"enabled": True},
                                       "x509": {"clientCAFile": f"{common.PKI}/ca.crt"}},
                    "authorization": {"mode": "Webhook"}, "healthzBindAddress": "127.0.0.1", "healthzPort": 10248,
                    "rotateCertificates": True, "staticPodPath": f"{common.K8S}/manifests"}


def write_instance_config(endpoint):
    """NodeLocalCRISocket: the node's own kubelet configuration, one line (WriteInstanceConfigToDisk)."""
    os.makedirs(common.KUBELET_DIR, mode=0o700, exist_ok=True)
    with open(f"{common.KUBELET_DIR}/instance-config.yaml", "w") as f:
        f.write(f"containerRuntimeEndpoint: {json.dumps(endpoint)}\n")
    os.chmod(f"{common.KUBELET_DIR}/instance-config.yaml", 0o644)
    out(f'[kubelet-start] Writing kubelet configuration to file "{common.KUBELET_DIR}/instance-config.yaml"')


def write_kubelet_config(cfg, cluster):
    """config.yaml: the cluster's KubeletConfiguration, with NodeLocalCRISocket the instance
    configuration merged over it (a kubeletconfiguration patch: its containerRuntimeEndpoint wins)."""
    if config_load.gate_on(cluster, "NodeLocalCRISocket"):
        with open(f"{common.KUBELET_DIR}/instance-config.yaml") as f:
            cfg = {**cfg, **(yaml.safe_load(f) or {})}
    with open(f"{common.KUBELET_DIR}/config.yaml", "w") as f:
        yaml.safe_dump(cfg, f, sort_keys=False)
    out(f'[kubelet-start] Writing kubelet configuration to file "{common.KUBELET_DIR}/config.yaml"')


def write_kubelet_files(kubelet_doc, node, repo, cluster):
    os.makedirs(common.KUBELET_DIR, exist_ok=True)
    cfg = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", **KUBELET_DEFAULTS,
           **{k: v for k, v in (kubelet_doc or {}).items() if k not in ("apiVersion", "kind")}}
    local_cri = config_load.gate_on(cluster, "NodeLocalCRISocket")
    if local_cri:
        write_instance_config(node["cri"])
    write_kubelet_config(cfg, cluster)
    # NodeLocalCRISocket: the endpoint is the node's instance configuration's, no longer a flag; from v1.35
    # (#133778, cli_v1_35.POD_INFRA_FLAG) no --pod-infra-container-image either: the file may be
    # KUBELET_KUBEADM_ARGS="" (the user's kubeletExtraArgs are still written as given)
    pod_infra = {"pod-infra-container-image": f"{repo}/pause:3.9"} if getattr(CLI, "POD_INFRA_FLAG", True) else {}
    args = {**({} if local_cri else {"container-runtime-endpoint": node["cri"]}),
            **pod_infra, **static_pods.extra_args(node["kubelet_args"])}
    with open(f"{common.KUBELET_DIR}/kubeadm-flags.env", "w") as f:
        f.write('KUBELET_KUBEADM_ARGS="' + " ".join(static_pods.flags(args)) + '"\n')
    out(f'[kubelet-start] Writing kubelet environment file with flags to file "{common.KUBELET_DIR}/kubeadm-flags.env"')
    if subprocess.run(["systemctl", "cat", "kubelet.service"], capture_output=True, check=False).returncode == 0:
        out("[kubelet-start] Starting the kubelet")
        subprocess.run(["systemctl", "restart", "kubelet"], check=False)
    else:
        out("[kubelet-start] WARNING: unable to start the kubelet service: kubelet.service not found")

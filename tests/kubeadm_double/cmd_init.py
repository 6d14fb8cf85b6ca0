"""`kubeadm init phase <phase> [<sub-phase>]`: the phases the collection runs. Each writes what the real
phase writes (certs.py, kubeconfigs.py, static_pods.py, kubelet_files.py) and records in the state file
what kubeadm uploads to the cluster (the configuration, bootstrap tokens, the certificate key's upload,
cluster-info, the control-plane marks)."""
import base64
import datetime
import hashlib
import secrets

import yaml

import certs
import cluster_api
import cmd_token
import common
from common import Fail, out
import config_load
import kubeconfigs
import kubelet_files
import static_pods


def run_init(phase, fl, docs):
    cluster = docs.get("ClusterConfiguration") or {}
    if not cluster:
        raise Fail("no ClusterConfiguration in the configuration (the double needs one)")
    node = config_load.node_ctx(docs)
    repo = cluster.get("imageRepository", "registry.k8s.io")
    group, dummy, sub = phase.partition(" ")
    if group == "kubelet-start":
        kubelet_files.write_kubelet_files(docs.get("KubeletConfiguration"), node, repo, cluster)
    elif group == "certs":
        if sub != "all":
            raise Fail("the double implements 'certs all' only")
        certs.phase_certs(cluster, node)
    elif group == "kubeconfig":
        names = ["admin.conf", "super-admin.conf", "kubelet.conf", "controller-manager.conf", "scheduler.conf"] \
            if sub == "all" else [f"{sub}.conf"]
        kubeconfigs.write_kubeconfigs(cluster, node, names)
    elif group == "control-plane":
        static_pods.phase_control_plane(cluster, node, None if sub == "all" else [f"kube-{sub}"] if sub != "apiserver" else ["kube-apiserver"]) \
            if sub != "all" else static_pods.phase_control_plane(cluster, node)
    elif group == "etcd":
        static_pods.phase_etcd(cluster, node)
    elif group == "upload-config":
        cluster_api.require_cluster(fl, docs)
        st = common.load_state()
        plain = dict(cluster.items())
        if sub in ("all", "kubeadm"):
            st["configmaps"]["kubeadm-config"] = {"ClusterConfiguration": yaml.safe_dump(plain)}
            out("[upload-config] Storing the configuration used in ConfigMap \"kubeadm-config\" in the \"kube-system\" Namespace")
        if sub in ("all", "kubelet"):
            kub = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", **kubelet_files.KUBELET_DEFAULTS,
                   **{k: v for k, v in (docs.get("KubeletConfiguration") or {}).items() if k not in ("apiVersion", "kind")}}
            st["configmaps"]["kubelet-config"] = {"kubelet": yaml.safe_dump(kub)}
            out("[kubelet] Creating a ConfigMap \"kubelet-config\" in namespace kube-system with the configuration for the kubelets in the cluster")
        common.save_state(st)
    elif group == "upload-certs":
        if "upload-certs" not in fl:
            out("[upload-certs] Skipping phase. Please see --upload-certs")
            return
        cluster_api.require_cluster(fl, docs)
        key = (docs.get("InitConfiguration") or {}).get("certificateKey") or secrets.token_hex(32)
        st = common.load_state()
        st["certs_upload"] = {"key_sha256": hashlib.sha256(key.encode()).hexdigest(),
                              "at": datetime.datetime.now(datetime.timezone.utc).timestamp()}
        common.save_state(st)
        out('[upload-certs] Storing the certificates in Secret "kubeadm-certs" in the "kube-system" Namespace')
        if "skip-certificate-key-print" not in fl:
            out(f"[upload-certs] Using certificate key:\n{key}")
    elif group == "mark-control-plane":
        cluster_api.require_cluster(fl, docs)
        mark_control_plane(docs, node)
        out(f"[mark-control-plane] Marking the node {node['name']} as control-plane by adding the labels: "
            "[node-role.kubernetes.io/control-plane node.kubernetes.io/exclude-from-external-load-balancers]")
    elif group == "bootstrap-token":
        cluster_api.require_cluster(fl, docs)
        st = common.load_state()
        for t in (docs.get("InitConfiguration") or {}).get("bootstrapTokens") or [{}]:
            tok = t.get("token") or f"{secrets.token_hex(3)}.{secrets.token_hex(8)}"
            cmd_token.add_token(st, tok, t.get("description", ""), t.get("ttl", "24h0m0s"), t.get("usages"), t.get("groups"))
            if "skip-token-print" not in fl:
                out(f"[bootstrap-token] Using token: {tok}")
        ca = open(f"{common.PKI}/ca.crt", "rb").read()
        st["configmaps"]["cluster-info"] = {"kubeconfig": yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "clusters": [{"name": "", "cluster": {
                "certificate-authority-data": base64.b64encode(ca).decode(),
                "server": "https://" + (cluster.get("controlPlaneEndpoint") or f"{node['address']}:{node['port']}")}}]})}
        common.save_state(st)
        out("[bootstrap-token] Configured RBAC rules to allow Node Bootstrap tokens to get nodes")
        if getattr(common.CLI, "KUBELET_API_ADMIN_BINDING", False):
            # from v1.36.1 (#138958): ClusterRoleBinding kubeadm:apiserver-kubelet-client (User
            # kube-apiserver-kubelet-client -> system:kubelet-api-admin); the double keeps no RBAC objects
            out("[bootstrap-token] Configured RBAC rules to allow the API server kubelet client certificate to "
                "access the kubelet API")
        out('[bootstrap-token] Creating the "cluster-info" ConfigMap in the "kube-public" namespace')
    elif group == "addon":
        cluster_api.require_cluster(fl, docs)
        st = common.load_state()
        if sub in ("all", "coredns"):
            st.setdefault("addons", {})["coredns"] = f"{repo}/coredns:v1.11.1"
            out("[addons] Applied essential addon: CoreDNS")
        if sub in ("all", "kube-proxy"):
            proxy = docs.get("KubeProxyConfiguration") or {}
            st.setdefault("addons", {})["kube-proxy"] = {"image": f"{repo}/kube-proxy:{cluster['kubernetesVersion']}",
                                                         "mode": proxy.get("mode") or "iptables"}
            out("[addons] Applied essential addon: kube-proxy")
        common.save_state(st)
    else:
        raise Fail(f"the double does not implement 'init phase {phase}'")


def mark_control_plane(docs, node):
    """kubeadm labels and taints the Node (cmd/kubeadm/app/phases/markcontrolplane): recorded in the
    state on this host; the kube-apiserver double puts them on the Node once it is registered.
    nodeRegistration.taints unset: the control-plane NoSchedule taint; set (even []): those."""
    reg = (docs.get("InitConfiguration") or docs.get("JoinConfiguration") or {}).get("nodeRegistration") or {}
    taints = reg["taints"] if reg.get("taints") is not None else \
        [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
    st = common.load_state()
    st.setdefault("nodes", {})[node["name"]] = {
        "labels": ["node-role.kubernetes.io/control-plane", "node.kubernetes.io/exclude-from-external-load-balancers"],
        "taints": taints}
    common.save_state(st)

"""The static pod manifests: the control plane's (`control-plane` phases of init and join: the flags
from the configuration, extra args as map or list) and the stacked etcd's (`init phase etcd local`, the
member a joining master adds: cmd_join.join_stacked_etcd)."""
import os

import yaml

import common
from common import CLI, out
import etcd_member


def extra_args(d):
    if isinstance(d, list):
        return {a["name"]: a["value"] for a in d}
    return dict(d or {})


def static_pod(name, image, command, volumes, annotations=None, mounts=None):
    """mounts: (volume name, host path, read only) when the phase names its volumes (etcd)."""
    mounts = mounts or [(v.strip("/").replace("/", "-"), v, True) for v in volumes]
    meta = {"name": name, "namespace": "kube-system", "labels": {"component": name, "tier": "control-plane"}}
    if annotations:
        meta["annotations"] = annotations
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
           "spec": {"hostNetwork": True, "priorityClassName": "system-node-critical",
                    "containers": [{"name": name, "image": image, "command": command,
                                    "volumeMounts": [{"name": n, "mountPath": v, "readOnly": ro} for n, v, ro in mounts]}],
                    "volumes": [{"name": n, "hostPath": {"path": v, **({} if ro else {"type": "DirectoryOrCreate"})}}
                                for n, v, ro in mounts]}}
    os.makedirs(f"{common.K8S}/manifests", exist_ok=True)
    with open(f"{common.K8S}/manifests/{name}.yaml", "w") as f:
        yaml.safe_dump(pod, f, sort_keys=False)
    out(f"[control-plane] Creating static Pod manifest for \"{name}\"" if name != "etcd"
        else "[etcd] Creating static Pod manifest for local etcd in \"/etc/kubernetes/manifests\"")


def flags(d):
    return [f"--{k}={v}" for k, v in sorted(d.items())]


def phase_control_plane(cluster, node, which=("kube-apiserver", "kube-controller-manager", "kube-scheduler")):
    repo = cluster.get("imageRepository", "registry.k8s.io")
    ver = cluster["kubernetesVersion"]
    net = cluster.get("networking") or {}
    etcd = cluster.get("etcd") or {}
    if "external" in etcd:
        ext = etcd["external"]
        etcd_args = {"etcd-servers": ",".join(ext["endpoints"]), "etcd-cafile": ext.get("caFile", ""),
                     "etcd-certfile": ext.get("certFile", ""), "etcd-keyfile": ext.get("keyFile", "")}
    else:
        etcd_args = {"etcd-servers": "https://127.0.0.1:2379", "etcd-cafile": f"{common.PKI}/etcd/ca.crt",
                     "etcd-certfile": f"{common.PKI}/apiserver-etcd-client.crt", "etcd-keyfile": f"{common.PKI}/apiserver-etcd-client.key"}
    api = {"advertise-address": node["address"], "secure-port": str(node["port"]), "allow-privileged": "true",
           "authorization-mode": "Node,RBAC", "client-ca-file": f"{common.PKI}/ca.crt", "enable-bootstrap-token-auth": "true",
           "service-cluster-ip-range": net.get("serviceSubnet", "10.96.0.0/12"),
           "tls-cert-file": f"{common.PKI}/apiserver.crt", "tls-private-key-file": f"{common.PKI}/apiserver.key",
           "kubelet-client-certificate": f"{common.PKI}/apiserver-kubelet-client.crt",
           "kubelet-client-key": f"{common.PKI}/apiserver-kubelet-client.key",
           "service-account-key-file": f"{common.PKI}/sa.pub", "service-account-signing-key-file": f"{common.PKI}/sa.key",
           "service-account-issuer": "https://kubernetes.default.svc." + net.get("dnsDomain", "cluster.local"),
           **etcd_args, **extra_args((cluster.get("apiServer") or {}).get("extraArgs"))}
    cm = {"kubeconfig": f"{common.K8S}/controller-manager.conf", "cluster-signing-cert-file": f"{common.PKI}/ca.crt",
          "cluster-signing-key-file": f"{common.PKI}/ca.key", "service-cluster-ip-range": net.get("serviceSubnet", "10.96.0.0/12"),
          "use-service-account-credentials": "true", "leader-elect": "true",
          **extra_args((cluster.get("controllerManager") or {}).get("extraArgs"))}
    sched = {"kubeconfig": f"{common.K8S}/scheduler.conf", "leader-elect": "true",
             **extra_args((cluster.get("scheduler") or {}).get("extraArgs"))}
    specs = {"kube-apiserver": api, "kube-controller-manager": cm, "kube-scheduler": sched}
    for name in which:
        static_pod(name, f"{repo}/{name}:{ver}", [name] + flags(specs[name]), [common.PKI, "/etc/ssl/certs"])


def etcd_3_6(tag):
    return tuple(int(x) for x in tag.split("-")[0].split(".")[:2]) >= (3, 6)


def phase_etcd(cluster, node, initial_cluster=None):
    """The local etcd's static pod (phases/etcd/local.go GetEtcdPodSpec and getEtcdCommand: the image
    of this release's etcd, CLI.ETCD_TAG; etcd 3.5's --experimental-initial-corrupt-check and
    --experimental-watch-progress-notify-interval, etcd 3.6's names from 3.6.0). initial_cluster:
    [(name, peer URL)] of the members when joining an existing cluster (then
    --initial-cluster-state=existing)."""
    etcd = cluster.get("etcd") or {}
    if "external" in etcd:
        out("[etcd] External etcd mode. Skipping the creation of a manifest for local etcd")
        return
    local = etcd.get("local") or {}
    data_dir = local.get("dataDir", "/var/lib/etcd")
    addr = node["address"]
    a = {"name": node["name"], "data-dir": data_dir,
         "advertise-client-urls": etcd_member.client_url(addr),
         "listen-client-urls": f"https://127.0.0.1:2379,{etcd_member.client_url(addr)}",
         "listen-peer-urls": etcd_member.peer_url(addr),
         "initial-advertise-peer-urls": etcd_member.peer_url(addr),
         "initial-cluster": ",".join(f"{n}={u}" for n, u in initial_cluster) if initial_cluster
         else f"{node['name']}={etcd_member.peer_url(addr)}",
         "cert-file": f"{common.PKI}/etcd/server.crt", "key-file": f"{common.PKI}/etcd/server.key",
         "peer-cert-file": f"{common.PKI}/etcd/peer.crt", "peer-key-file": f"{common.PKI}/etcd/peer.key",
         "trusted-ca-file": f"{common.PKI}/etcd/ca.crt", "peer-trusted-ca-file": f"{common.PKI}/etcd/ca.crt",
         "client-cert-auth": "true", "peer-client-cert-auth": "true", "snapshot-count": "10000",
         "listen-metrics-urls": "http://127.0.0.1:2381",
         # etcd 3.6's names from an image of 3.6.0 on (kubeadm v1.34, #132838), the experimental ones before
         **({"feature-gates": "InitialCorruptCheck=true", "watch-progress-notify-interval": "5s"}
            if etcd_3_6(CLI.ETCD_TAG) else
            {"experimental-initial-corrupt-check": "true", "experimental-watch-progress-notify-interval": "5s"})}
    if initial_cluster:
        a["initial-cluster-state"] = "existing"
    a.update(extra_args(local.get("extraArgs")))
    static_pod("etcd", f"{cluster.get('imageRepository', 'registry.k8s.io')}/etcd:{CLI.ETCD_TAG}", ["etcd"] + flags(a), [],
               annotations={"kubeadm.kubernetes.io/etcd.advertise-client-urls": etcd_member.client_url(addr)},
               mounts=[("etcd-data", data_dir, False), ("etcd-certs", f"{common.PKI}/etcd", False)])

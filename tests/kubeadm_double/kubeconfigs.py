"""The kubeconfig files: `init phase kubeconfig` (and a joining control-plane node's admin,
controller-manager and scheduler.conf), the kubelet's bootstrap-kubelet.conf and kubelet.conf; an
existing one kept and checked (phases/kubeconfig validateKubeConfig); written 0600."""
import base64
import os

import yaml

import certs
import common
from common import Fail, out, warn
import config_load


def kubeconfig_text(server, user, cert=None, key=None, ca_pem=None, cert_file=None, token=None):
    dummy, dummy, ser, dummy, dummy = certs.crypto()
    ca_pem = ca_pem or open(f"{common.PKI}/ca.crt", "rb").read()
    u = {"client-certificate-data": base64.b64encode(cert.public_bytes(ser.Encoding.PEM)).decode(),
         "client-key-data": base64.b64encode(certs.key_pem(key)).decode()} if cert else \
        {"token": token} if token else {"client-certificate": cert_file, "client-key": cert_file}
    cfg = {"apiVersion": "v1", "kind": "Config", "clusters": [{"name": "kubernetes", "cluster": {
        "certificate-authority-data": base64.b64encode(ca_pem).decode(), "server": server}}],
        "contexts": [{"name": f"{user}@kubernetes", "context": {"cluster": "kubernetes", "user": user}}],
        "current-context": f"{user}@kubernetes", "preferences": {}, "users": [{"name": user, "user": u}]}
    return yaml.safe_dump(cfg, sort_keys=False)


def check_existing_kubeconfig(path, server):
    """kubeconfig.go validateKubeConfig: an existing kubeconfig is kept; a CA other than the cluster's
    is an error, an API server other than the expected one a warning."""
    try:
        cfg = yaml.safe_load(open(path))
        cl = cfg["clusters"][0]["cluster"]
    except (OSError, yaml.YAMLError, KeyError, IndexError, TypeError):
        raise Fail(f"failed to load kubeconfig file \"{path}\"") from None
    current = cl.get("certificate-authority-data", "")
    expected = base64.b64encode(open(f"{common.PKI}/ca.crt", "rb").read()).decode()
    if current.strip() != expected.strip():
        raise Fail(f"a kubeconfig file \"{path}\" exists already but has got the wrong CA cert")
    if cl.get("server") != server:
        warn(f"a kubeconfig file \"{path}\" exists already but has an unexpected API Server URL: expected: "
             f"{server}, got: {cl.get('server')}")


def write_private(path, text):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def write_kubeconfigs(cluster, node, names):
    ca = certs.load_pair(f"{common.PKI}/ca")
    cpe = cluster.get("controlPlaneEndpoint") or f"{node['address']}:{node['port']}"
    local = f"https://{node['address']}:{node['port']}"
    spec = {"admin.conf": ("kubernetes-admin", "kubeadm:cluster-admins", f"https://{cpe}"),
            "super-admin.conf": ("kubernetes-super-admin", "system:masters", f"https://{cpe}"),
            "kubelet.conf": (f"system:node:{node['name']}", "system:nodes",
                             local if config_load.local_mode(cluster) else f"https://{cpe}"),
            "controller-manager.conf": ("system:kube-controller-manager", None, local),
            "scheduler.conf": ("system:kube-scheduler", None, local)}
    for n in names:
        path = f"{common.K8S}/{n}"
        if os.path.exists(path):
            check_existing_kubeconfig(path, spec[n][2])
            out(f"[kubeconfig] Using existing kubeconfig file: \"{path}\"")
            continue
        cn, org, server = spec[n]
        cert, key = certs.new_cert(cn, org, ca, client=True)
        write_private(path, kubeconfig_text(server, cn, cert, key))
        out(f"[kubeconfig] Writing \"{n}\" kubeconfig file")

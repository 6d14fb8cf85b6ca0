"""The command-line surface of kubeadm v1.30 that the double accepts: phases, sub-phases, flags.

Sources (facts, not code): kubeadm reference pages "kubeadm init phase", "kubeadm join phase",
"kubeadm token" generated for v1.29/v1.30 (kubernetes.io/docs/reference/setup-tools/kubeadm/
generated/...), and cmd/kubeadm/app/cmd/phases/{init,join}/*.go and
cmd/kubeadm/app/apis/kubeadm/validation (ValidateMixedArguments: only --config,
--ignore-preflight-errors, --dry-run, --kubeconfig, --node-name, --kubeconfig-dir,
--upload-certs, --print-join-command, --rootfs, --v, --log-file and --skip-* may be given with
--config). In v1.30 "init phase wait-control-plane" is a hidden phase (not a command);
"join phase control-plane-join update-status" still exists (deprecated, removed in 1.31).
"""

VERSION = "v1.30.4"
BOOL_FLAGS = {"dry-run", "upload-certs", "skip-certificate-key-print", "skip-token-print", "control-plane",
              "discovery-token-unsafe-skip-ca-verification", "help", "print-join-command",
              "allow-missing-template-keys", "show-managed-fields"}
GLOBAL = {"rootfs", "v", "log-file"}
MIX_ALLOWED = {"config", "ignore-preflight-errors", "dry-run", "kubeconfig", "node-name", "kubeconfig-dir",
               "upload-certs", "print-join-command", "rootfs", "v", "log-file"}

_CERT_FLAGS = {"cert-dir", "config", "dry-run", "kubernetes-version"}
_CERTS_ALL = _CERT_FLAGS | {"apiserver-advertise-address", "apiserver-cert-extra-sans", "control-plane-endpoint",
                            "service-cidr", "service-dns-domain"}
_KUBECONFIG = {"apiserver-advertise-address", "apiserver-bind-port", "cert-dir", "config", "control-plane-endpoint",
               "dry-run", "kubeconfig-dir", "kubernetes-version"}
_CONTROL_PLANE = {"apiserver-advertise-address", "apiserver-bind-port", "apiserver-extra-args", "cert-dir", "config",
                  "control-plane-endpoint", "controller-manager-extra-args", "dry-run", "feature-gates",
                  "image-repository", "kubernetes-version", "patches", "pod-network-cidr", "scheduler-extra-args",
                  "service-cidr"}
_ADDON = {"apiserver-advertise-address", "apiserver-bind-port", "config", "control-plane-endpoint", "dry-run",
          "feature-gates", "image-repository", "kubeconfig", "kubernetes-version", "pod-network-cidr",
          "service-cidr", "service-dns-domain"}
_DISCOVERY = {"config", "discovery-file", "discovery-token", "discovery-token-ca-cert-hash",
              "discovery-token-unsafe-skip-ca-verification", "tls-bootstrap-token", "token", "dry-run"}
_CP_PREPARE = _DISCOVERY | {"apiserver-advertise-address", "apiserver-bind-port", "certificate-key", "control-plane",
                            "node-name", "patches"}

INIT = {
    "preflight": {"config", "cri-socket", "dry-run", "ignore-preflight-errors", "image-repository"},
    "kubelet-start": {"config", "cri-socket", "dry-run", "image-repository", "node-name", "patches"},
    "certs all": _CERTS_ALL, "certs apiserver": _CERTS_ALL,
    **{f"certs {n}": _CERT_FLAGS for n in ("ca", "apiserver-kubelet-client", "front-proxy-ca", "front-proxy-client",
                                           "etcd-ca", "etcd-server", "etcd-peer", "etcd-healthcheck-client",
                                           "apiserver-etcd-client")},
    "certs sa": {"cert-dir", "config", "dry-run"},
    **{f"kubeconfig {n}": _KUBECONFIG | ({"node-name"} if n in ("all", "kubelet") else set())
       for n in ("all", "admin", "super-admin", "kubelet", "controller-manager", "scheduler")},
    **{f"control-plane {n}": _CONTROL_PLANE for n in ("all", "apiserver", "controller-manager", "scheduler")},
    "etcd local": {"config", "dry-run", "image-repository", "patches"},
    **{f"upload-config {n}": {"config", "dry-run", "kubeconfig"} for n in ("all", "kubeadm", "kubelet")},
    "upload-certs": {"certificate-key", "config", "dry-run", "kubeconfig", "skip-certificate-key-print",
                     "upload-certs"},
    "mark-control-plane": {"config", "dry-run", "node-name"},
    "bootstrap-token": {"config", "dry-run", "kubeconfig", "skip-token-print"},
    **{f"kubelet-finalize {n}": {"cert-dir", "config", "dry-run"} for n in ("all", "experimental-cert-rotation")},
    **{f"addon {n}": _ADDON for n in ("all", "coredns", "kube-proxy")},
    "show-join-command": {"config", "dry-run", "kubeconfig", "skip-certificate-key-print", "skip-token-print",
                          "upload-certs", "certificate-key"},
}
JOIN = {
    "preflight": _CP_PREPARE | {"cri-socket", "ignore-preflight-errors"},
    **{f"control-plane-prepare {n}": _CP_PREPARE for n in ("all", "download-certs", "certs", "kubeconfig",
                                                           "control-plane")},
    "kubelet-start": _DISCOVERY | {"cri-socket", "node-name", "patches"},
    "control-plane-join all": {"apiserver-advertise-address", "config", "control-plane", "dry-run", "node-name",
                               "patches"},
    "control-plane-join etcd": {"apiserver-advertise-address", "config", "control-plane", "dry-run", "node-name",
                                "patches"},
    "control-plane-join update-status": {"apiserver-advertise-address", "config", "control-plane", "node-name"},
    "control-plane-join mark-control-plane": {"config", "control-plane", "dry-run", "node-name"},
    "wait-control-plane": set(),
}
TOKEN = {
    "list": {"dry-run", "kubeconfig", "output", "allow-missing-template-keys", "show-managed-fields"},
    "create": {"certificate-key", "config", "description", "groups", "print-join-command", "ttl", "usages",
               "dry-run", "kubeconfig"},
    "delete": {"dry-run", "kubeconfig"},
}
# kubeadm configuration API versions this kubeadm decodes
KUBEADM_APIS = {"kubeadm.k8s.io/v1beta3"}
MIN_CONTROL_PLANE = (1, 29)

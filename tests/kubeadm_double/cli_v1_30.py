"""kubeadm v1.30 as the double mirrors it: command line (phases, sub-phases, flags, arguments),
configuration API versions, feature gates, control-plane version skew.

Sources (facts read, not code copied; kubernetes/kubernetes revisions as stored in the search
index, the kubernetes.io reference pages generated per release):
- phases and their flags: cmd/kubeadm/app/cmd/phases/init/{certs,controlplane,etcd,addons}.go
  (getCertPhaseFlags, getControlPlanePhaseFlags, getEtcdPhaseFlags, getAddonPhaseFlags and the
  addon sub-phases' local --print-manifest flag), cmd/kubeadm/app/cmd/phases/join/
  {preflight,controlplaneprepare}.go (InheritFlags, getControlPlanePreparePhaseFlags), and the
  reference pages "kubeadm init phase" / "kubeadm join phase" for v1.29 and v1.30 (--dry-run on
  every phase that takes a configuration; "certs sa" takes --cert-dir only up to v1.30: its
  InheritFlags is [CertificatesDir] in certs.go of that era, and the v1.29 page lists only it).
- arguments: cmd/kubeadm/app/cmd/phases/workflow/runner.go (a phase with sub-phases takes no
  argument; a leaf takes its command's: init is cobra.NoArgs, join cobra.MaximumNArgs(1), except
  "control-plane-prepare control-plane" whose ArgsValidator is cobra.NoArgs).
- global flags: cmd/kubeadm/app/kubeadm.go adds klog's flag set to the command line and hides
  version, log-flush-frequency, alsologtostderr, log-backtrace-at, log-dir, logtostderr,
  stderrthreshold and vmodule (hidden, still accepted); --rootfs from cmd/kubeadm/app/cmd/cmd.go.
- --config mixing: cmd/kubeadm/app/apis/kubeadm/validation/validation.go isAllowedFlag.
- feature gates: cmd/kubeadm/app/features/features.go at v1.30 (pkg.go.dev k8s.io/kubernetes@v1.30.1):
  PublicKeysECDSA and UpgradeAddonsBeforeControlPlane are Deprecated there, and
  features.Supports() answers false for a deprecated gate, so ValidateFeatureGates refuses them.
- "init phase wait-control-plane" is hidden in v1.30 (not a command); "join phase
  control-plane-join update-status" still exists (removed in v1.31).
"""

VERSION = "v1.30.4"
# the etcd image tag of this release (constants.go SupportedEtcdVersion; minikube's kubeadm image lists,
# as plugins/module_utils/kube_images.py records them): the etcd manifest names it
ETCD_TAG = "3.5.12-0"
BOOL_FLAGS = {"dry-run", "upload-certs", "skip-certificate-key-print", "skip-token-print", "control-plane",
              "discovery-token-unsafe-skip-ca-verification", "help", "print-join-command", "print-manifest",
              "allow-missing-template-keys", "show-managed-fields",
              # klog booleans
              "add-dir-header", "alsologtostderr", "logtostderr", "one-output", "skip-headers", "skip-log-headers"}
GLOBAL = {"rootfs", "v", "log-file", "log-file-max-size", "add-dir-header", "one-output", "skip-headers",
          "skip-log-headers", "alsologtostderr", "log-backtrace-at", "log-dir", "logtostderr", "stderrthreshold",
          "vmodule", "log-flush-frequency"}
MIX_ALLOWED = {"config", "ignore-preflight-errors", "dry-run", "kubeconfig", "node-name", "kubeconfig-dir",
               "upload-certs", "print-join-command", "rootfs", "v", "log-file"}

_CERT_FLAGS = {"cert-dir", "config", "dry-run", "kubernetes-version"}
_CERTS_ALL = _CERT_FLAGS | {"apiserver-advertise-address", "apiserver-cert-extra-sans", "control-plane-endpoint",
                            "service-cidr", "service-dns-domain"}
_KUBECONFIG = {"apiserver-advertise-address", "apiserver-bind-port", "cert-dir", "config", "control-plane-endpoint",
               "dry-run", "kubeconfig-dir", "kubernetes-version"}
# getControlPlanePhaseFlags: a common base, then per component
_CP_BASE = {"cert-dir", "config", "dry-run", "image-repository", "kubernetes-version", "patches"}
_CP_APISERVER = {"apiserver-advertise-address", "apiserver-bind-port", "apiserver-extra-args",
                 "control-plane-endpoint", "feature-gates", "service-cidr"}
_CP_CM = {"controller-manager-extra-args", "pod-network-cidr"}
_CP_SCHED = {"scheduler-extra-args"}
# getAddonPhaseFlags: a common base, then per addon; coredns and kube-proxy add --print-manifest
_ADDON_BASE = {"config", "dry-run", "image-repository", "kubeconfig", "kubernetes-version"}
_ADDON_PROXY = {"apiserver-advertise-address", "apiserver-bind-port", "control-plane-endpoint", "pod-network-cidr"}
_ADDON_DNS = {"feature-gates", "service-cidr", "service-dns-domain"}
# join: the discovery flags every discovering phase takes
_DISCOVERY = {"config", "discovery-file", "discovery-token", "discovery-token-ca-cert-hash",
              "discovery-token-unsafe-skip-ca-verification", "tls-bootstrap-token", "token", "dry-run"}

INIT = {
    "preflight": {"config", "cri-socket", "dry-run", "ignore-preflight-errors", "image-repository"},
    "kubelet-start": {"config", "cri-socket", "dry-run", "image-repository", "node-name", "patches"},
    "certs all": _CERTS_ALL, "certs apiserver": _CERTS_ALL,
    **{f"certs {n}": _CERT_FLAGS for n in ("ca", "apiserver-kubelet-client", "front-proxy-ca", "front-proxy-client",
                                           "etcd-ca", "etcd-server", "etcd-peer", "etcd-healthcheck-client",
                                           "apiserver-etcd-client")},
    "certs sa": {"cert-dir"},
    **{f"kubeconfig {n}": _KUBECONFIG | ({"node-name"} if n in ("all", "kubelet") else set())
       for n in ("all", "admin", "super-admin", "kubelet", "controller-manager", "scheduler")},
    "control-plane all": _CP_BASE | _CP_APISERVER | _CP_CM | _CP_SCHED,
    "control-plane apiserver": _CP_BASE | _CP_APISERVER,
    "control-plane controller-manager": _CP_BASE | _CP_CM,
    "control-plane scheduler": _CP_BASE | _CP_SCHED,
    "etcd local": {"cert-dir", "config", "dry-run", "image-repository", "patches"},
    **{f"upload-config {n}": {"config", "dry-run", "kubeconfig"} for n in ("all", "kubeadm", "kubelet")},
    "upload-certs": {"certificate-key", "config", "dry-run", "kubeconfig", "skip-certificate-key-print",
                     "upload-certs"},
    "mark-control-plane": {"config", "dry-run", "node-name"},
    "bootstrap-token": {"config", "dry-run", "kubeconfig", "skip-token-print"},
    **{f"kubelet-finalize {n}": {"cert-dir", "config", "dry-run"} for n in ("all", "experimental-cert-rotation")},
    "addon all": _ADDON_BASE | _ADDON_PROXY | _ADDON_DNS,
    "addon coredns": _ADDON_BASE | _ADDON_DNS | {"print-manifest"},
    "addon kube-proxy": _ADDON_BASE | _ADDON_PROXY | {"print-manifest"},
    "show-join-command": {"config", "dry-run", "kubeconfig", "skip-certificate-key-print", "skip-token-print",
                          "upload-certs", "certificate-key"},
}
_PREPARE_DISCOVERY = _DISCOVERY | {"control-plane"}
JOIN = {
    "preflight": _PREPARE_DISCOVERY | {"apiserver-advertise-address", "apiserver-bind-port", "certificate-key",
                                       "cri-socket", "ignore-preflight-errors", "node-name"},
    "control-plane-prepare all": _PREPARE_DISCOVERY | {"apiserver-advertise-address", "apiserver-bind-port",
                                                       "certificate-key", "node-name", "patches"},
    "control-plane-prepare download-certs": _PREPARE_DISCOVERY | {"certificate-key"},
    "control-plane-prepare certs": _PREPARE_DISCOVERY | {"apiserver-advertise-address", "node-name"},
    "control-plane-prepare kubeconfig": _PREPARE_DISCOVERY | {"certificate-key"},
    "control-plane-prepare control-plane": {"apiserver-advertise-address", "apiserver-bind-port", "config",
                                            "control-plane", "dry-run", "patches"},
    "kubelet-start": _DISCOVERY | {"cri-socket", "node-name", "patches"},
    "control-plane-join all": {"apiserver-advertise-address", "config", "control-plane", "dry-run", "node-name",
                               "patches"},
    "control-plane-join etcd": {"apiserver-advertise-address", "config", "control-plane", "dry-run", "node-name",
                                "patches"},
    "control-plane-join update-status": {"apiserver-advertise-address", "config", "control-plane", "node-name"},
    "control-plane-join mark-control-plane": {"config", "control-plane", "dry-run", "node-name"},
    "wait-control-plane": set(),
}
# leaf phases of join whose ArgsValidator is cobra.NoArgs (the others take [api-server-endpoint])
JOIN_NO_ARGS = {"control-plane-prepare control-plane"}
# the whole "kubeadm join" workflow in order (cmd/kubeadm/app/cmd/join.go's AppendPhase calls; KEP-4471
# lists the order), by generated name: check-etcd is a hidden phase (no "join phase" command, it runs
# inside "kubeadm join" only; workflow/runner.go BindToCommand skips hidden phases)
JOIN_WORKFLOW = ("preflight", "control-plane-prepare", "check-etcd", "kubelet-start", "control-plane-join",
                 "wait-control-plane")
TOKEN = {
    "list": {"dry-run", "kubeconfig", "output", "allow-missing-template-keys", "show-managed-fields"},
    "create": {"certificate-key", "config", "description", "groups", "print-join-command", "ttl", "usages",
               "dry-run", "kubeconfig"},
    "delete": {"dry-run", "kubeconfig"},
}
# kubeadm configuration API versions this kubeadm decodes (cmd/kubeadm/app/apis/kubeadm/scheme)
KUBEADM_APIS = {"kubeadm.k8s.io/v1beta3"}
DEPRECATED_APIS = set()
# constants.MinimumControlPlaneVersion: kubeadm's minor - 1
MIN_CONTROL_PLANE = (1, 29)
# features.InitFeatureGates entries that Supports() accepts (not Deprecated)
FEATURE_GATES = {"RootlessControlPlane", "EtcdLearnerMode", "WaitForAllControlPlaneComponents"}
# preflight.RunChecks' failure: v1.30 returns the whole report as the error (preflight.Error)
PREFLIGHT_REPORT_IN_ERROR = True

# ---------------------------------------------------------------- reset (kubeadm reset; its own block)
# Sources: cmd/kubeadm/app/cmd/phases/reset/{preflight,removeetcdmember,cleanupnode}.go (each phase's
# Name, Aliases and InheritFlags: preflight [ignore-preflight-errors, force, dry-run] alias
# pre-flight; remove-etcd-member [kubeconfig, dry-run]; cleanup-node [cert-dir, cri-socket,
# cleanup-tmp-dir, dry-run] alias cleanupnode) and the reference page "kubeadm reset" of that era
# (the command's flags: cert-dir, cleanup-tmp-dir, config, cri-socket, dry-run, -f/--force,
# ignore-preflight-errors, kubeconfig, skip-phases; phases preflight, remove-etcd-member,
# cleanup-node: update-cluster-status is gone). --config takes a ResetConfiguration, a kind of
# kubeadm.k8s.io/v1beta4 only: v1.30 does not decode v1beta4 (KUBEADM_APIS), so a 1.30 reset
# with --config is refused at decoding, as the real one refuses the kind.
RESET_PHASES = ("preflight", "remove-etcd-member", "cleanup-node")
RESET_ALIASES = {"pre-flight": "preflight", "cleanupnode": "cleanup-node"}
RESET = {
    "": {"cert-dir", "cleanup-tmp-dir", "config", "cri-socket", "dry-run", "force", "ignore-preflight-errors",
         "kubeconfig", "skip-phases"},
    "preflight": {"force", "ignore-preflight-errors", "dry-run"},
    "remove-etcd-member": {"kubeconfig", "dry-run"},
    "cleanup-node": {"cert-dir", "cri-socket", "cleanup-tmp-dir", "dry-run"},
}
# the kubeconfigs cleanup-node deletes (resetConfigDir's filesToClean; super-admin.conf since v1.29,
# when kubeadm started writing it)
RESET_KUBECONFIGS = ("admin.conf", "super-admin.conf", "kubelet.conf", "bootstrap-kubelet.conf",
                     "controller-manager.conf", "scheduler.conf")
BOOL_FLAGS = BOOL_FLAGS | {"force", "cleanup-tmp-dir"}
# ---------------------------------------------------------------- end of reset

# ---------------------------------------------------------------- upgrade (plan | apply | node)
# cmd/kubeadm/app/cmd/upgrade/{upgrade,common,plan,apply,node}.go and the v1.30 reference pages
# "kubeadm upgrade plan|apply|node": plan and apply share addApplyPlanFlags (allow-experimental-
# upgrades, allow-release-candidate-upgrades, config, feature-gates, ignore-preflight-errors,
# kubeconfig, print-config); plan adds the output flags (-o, allow-missing-template-keys,
# show-managed-fields); apply adds -y/--yes, -f/--force, --dry-run, --etcd-upgrade,
# --certificate-renewal and --patches; node has its own set (no --config before v1beta4).
_APPLY_PLAN = {"allow-experimental-upgrades", "allow-release-candidate-upgrades", "config", "feature-gates",
               "ignore-preflight-errors", "kubeconfig", "print-config"}
UPGRADE = {
    "plan": _APPLY_PLAN | {"output", "allow-missing-template-keys", "show-managed-fields"},
    "apply": _APPLY_PLAN | {"yes", "force", "dry-run", "etcd-upgrade", "certificate-renewal", "patches"},
    "node": {"certificate-renewal", "dry-run", "etcd-upgrade", "ignore-preflight-errors", "kubeconfig", "patches",
             "skip-phases"},
}
# short forms registered with BoolVarP ("yes", "y"), ("force", "f")
UPGRADE_SHORT = {"-y": "--yes", "-f": "--force"}
UPGRADE_BOOL = {"allow-experimental-upgrades", "allow-release-candidate-upgrades", "print-config", "yes", "force",
                "etcd-upgrade", "certificate-renewal"}
# phases/upgrade/policy.go: MaximumAllowedMinorVersionUpgradeSkew = 1 (and the downgrade skew 1);
# MaximumAllowedMinorVersionKubeletSkew is 3 from v1.28 on (kubelets may be three minors older)
UPGRADE_MINOR_SKEW = 1
KUBELET_MINOR_SKEW = 3
# the kubeadm configuration API version upload-config writes the ClusterConfiguration in
# (the newest one this kubeadm knows: kubeadmapiv1.SchemeGroupVersion of its scheme)
UPLOAD_API = "kubeadm.k8s.io/v1beta3"

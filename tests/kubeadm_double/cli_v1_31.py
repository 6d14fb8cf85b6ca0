"""kubeadm v1.31 as the double mirrors it: what differs from v1.30 (cli_v1_30.py holds the rest).

Sources (facts read, not code copied):
- reference page "kubeadm init phase certs sa" updated for v1.31: --cert-dir, --config, --dry-run,
  --kubernetes-version (the sa key follows ClusterConfiguration.encryptionAlgorithm, so it reads
  the configuration).
- "join phase control-plane-join update-status" removed in v1.31 (deprecated in v1.30).
- configuration: cmd/kubeadm/app/apis/kubeadm/v1beta4 registered in v1.31 next to v1beta3, which
  is deprecated (cmd/kubeadm/app/util/config/common.go validateSupportedVersion warns
  "your configuration file uses a deprecated API spec").
- feature gates (cmd/kubeadm/app/features/features.go, v1.31; godocs for the v1.31-v1.33 line):
  ControlPlaneKubeletLocalMode is new (alpha in v1.31), UpgradeAddonsBeforeControlPlane is gone,
  PublicKeysECDSA stays Deprecated (refused by Supports()).
- constants.MinimumControlPlaneVersion is v1.30.0.
- cmd/kubeadm/app/preflight/checks.go of the v1beta4 era (ImagePullSerial): RunChecks writes the
  report to stderr and returns "preflight checks failed".
- validation.go of that era: isAllowedFlag also accepts "yes" with --config.
- release notes of v1.31 (kubernetes/sig-release releases/release-1.31/release-notes/
  release-notes-draft.md): klog's hidden flags are no longer accepted (#125179: --alsologtostderr,
  --log-backtrace-at, --log-dir, --logtostderr, --log-file, --log-file-max-size, --one-output,
  --skip-log-headers, --stderrthreshold, --vmodule); "init phase kubelet-finalize" gains
  enable-client-cert-rotation, the replacement of experimental-cert-rotation, which is deprecated
  (#124419: kubeadm prints a warning when it is used; the double does not reproduce that line).
"""
# the double's CLI module for v1.31: what v1.30 had unchanged is re-exported from here
from cli_v1_30 import (BOOL_FLAGS, GLOBAL as _GLOBAL, INIT as _INIT, JOIN as _JOIN, JOIN_NO_ARGS, MIX_ALLOWED as _MIX,  # noqa: F401 pylint: disable=unused-import
                       TOKEN)

VERSION = "v1.31.1"
ETCD_TAG = "3.5.15-0"
MIX_ALLOWED = _MIX | {"yes"}
INIT = {**_INIT, "certs sa": {"cert-dir", "config", "dry-run", "kubernetes-version"},
        "kubelet-finalize enable-client-cert-rotation": _INIT["kubelet-finalize experimental-cert-rotation"]}
GLOBAL = _GLOBAL - {"alsologtostderr", "log-backtrace-at", "log-dir", "logtostderr", "log-file", "log-file-max-size",
                    "one-output", "skip-log-headers", "stderrthreshold", "vmodule"}
JOIN = {k: v for k, v in _JOIN.items() if k != "control-plane-join update-status"}
# KEP-4471 (ControlPlaneKubeletLocalMode, alpha in v1.31): etcd-join and kubelet-wait-bootstrap join the
# workflow after kubelet-start, hidden (no "join phase" command) and run only with the gate on
JOIN_WORKFLOW = ("preflight", "control-plane-prepare", "check-etcd", "kubelet-start", "etcd-join",
                 "kubelet-wait-bootstrap", "control-plane-join", "wait-control-plane")
KUBEADM_APIS = {"kubeadm.k8s.io/v1beta3", "kubeadm.k8s.io/v1beta4"}
DEPRECATED_APIS = {"kubeadm.k8s.io/v1beta3"}
MIN_CONTROL_PLANE = (1, 30)
FEATURE_GATES = {"RootlessControlPlane", "EtcdLearnerMode", "WaitForAllControlPlaneComponents",
                 "ControlPlaneKubeletLocalMode"}
PREFLIGHT_REPORT_IN_ERROR = False

# ---------------------------------------------------------------- reset: as v1.30 (its own block)
# the same phases and flags (reference page "kubeadm reset" for v1.31); --config now decodes, as
# v1beta4's ResetConfiguration (kubeadm_types.py) is served
from cli_v1_30 import RESET, RESET_ALIASES, RESET_KUBECONFIGS, RESET_PHASES  # noqa: E402,F401 pylint: disable=unused-import,wrong-import-position
# ---------------------------------------------------------------- end of reset

# ---------------------------------------------------------------- upgrade (plan | apply | node)
# v1.31 reference page "kubeadm upgrade node": --config joins the flags (UpgradeConfiguration of
# v1beta4 is read by plan, apply and node); the rest as in v1.30 (cli_v1_30.UPGRADE).
from cli_v1_30 import (KUBELET_MINOR_SKEW, UPGRADE as _UPGRADE, UPGRADE_BOOL, UPGRADE_MINOR_SKEW,  # noqa: F401,E402 pylint: disable=unused-import
                       UPGRADE_SHORT)

UPGRADE = {**_UPGRADE, "node": _UPGRADE["node"] | {"config"}}
# upload-config marshals the ClusterConfiguration with the newest API version: v1beta4 from v1.31
UPLOAD_API = "kubeadm.k8s.io/v1beta4"

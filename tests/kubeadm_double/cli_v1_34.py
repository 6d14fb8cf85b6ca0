"""kubeadm v1.34 as the double mirrors it: what differs from v1.33 (cli_v1_33.py holds the rest).

Sources (facts read, not code copied; docs/kubernetes_releases.md keeps the references and revisions):
- the v1.34 release notes, kubernetes/sig-release releases/release-1.34/release-notes/
  release-notes-draft.md, and CHANGELOG-1.34.md (v1.34.0-v1.34.3) of kubernetes/kubernetes:
  - #131647: only -v and --vmodule of klog's flags are left on kubeadm's command line (with --rootfs);
  - #132080: every error kubeadm prints starts with "error: " (exit code 1, the stack hint kept);
  - #132594: WaitForAllControlPlaneComponents GA (locked on); #131981: NodeLocalCRISocket beta, on by
    default (below); ControlPlaneKubeletLocalMode stays beta, on;
  - #135482 (v1.34.3): "join phase etcd-join" unhidden; kubelet-wait-bootstrap stays hidden (until
    v1.35, #134106): it runs inside "kubeadm join" only;
  - #132838 / local.go getEtcdCommand: for an etcd image of 3.6.0 or later kubeadm writes etcd 3.6's
    flag names, --feature-gates=InitialCorruptCheck=true and --watch-progress-notify-interval=5s (the
    --experimental-* names before); v1.34.10's etcd is 3.6.5-0 (3.6.5-0 from v1.34.2).
- NodeLocalCRISocket (KEP-4656; cmd/kubeadm/app/phases/kubelet/{config,flags}.go,
  cmd/kubeadm/app/cmd/phases/join/kubelet.go, phases/upgrade/postupgrade.go of the v1.34 line): with
  the gate on, kubelet-start writes /var/lib/kubelet/instance-config.yaml (one line,
  containerRuntimeEndpoint: "<criSocket>"), merges it into config.yaml as a kubeletconfiguration
  patch, and leaves --container-runtime-endpoint out of kubeadm-flags.env; "kubeadm upgrade
  apply|node" on a node without instance-config.yaml moves the flag's value into it (kubeadm-flags.env
  rewritten without the flag) before it writes config.yaml merged; the cri-socket node annotation
  is no longer written (the double never wrote it).
- Skew: constants.MinimumControlPlaneVersion is kubeadm's minor - 1 (v1.33.0); upload-config writes
  v1beta4; v1beta3 still decoded, deprecated.
"""
# the double's CLI module for v1.34: what v1.33 had unchanged is re-exported from here
from cli_v1_33 import (BOOL_FLAGS, DEPRECATED_APIS, FEATURE_GATES, GATE_DEFAULTS as _DEFAULTS, INIT, JOIN,  # noqa: F401 pylint: disable=unused-import
                       JOIN_NO_ARGS, JOIN_WORKFLOW, KUBEADM_APIS, MIX_ALLOWED, PREFLIGHT_REPORT_IN_ERROR, TOKEN,
                       UPLOAD_API)

VERSION = "v1.34.10"
MIN_CONTROL_PLANE = (1, 33)
GLOBAL = {"rootfs", "v", "vmodule"}
GATE_DEFAULTS = {**_DEFAULTS, "NodeLocalCRISocket": True}
ERROR_PREFIX = "error: "
ETCD_TAG = "3.6.5-0"

# ---------------------------------------------------------------- reset: as v1.33 (its own block)
from cli_v1_33 import RESET, RESET_ALIASES, RESET_KUBECONFIGS, RESET_PHASES  # noqa: E402,F401 pylint: disable=unused-import,wrong-import-position
# ---------------------------------------------------------------- end of reset

# ---------------------------------------------------------------- upgrade (plan | apply | node): as v1.33
from cli_v1_33 import (KUBELET_MINOR_SKEW, UPGRADE, UPGRADE_BOOL, UPGRADE_MINOR_SKEW,  # noqa: F401,E402 pylint: disable=unused-import
                       UPGRADE_PHASED, UPGRADE_SHORT)
# ---------------------------------------------------------------- end of upgrade

"""kubeadm v1.32 as the double mirrors it: what differs from v1.31 (cli_v1_31.py holds the rest).

Sources (facts read, not code copied): the v1.32 release notes, kubernetes/sig-release
releases/release-1.32/release-notes/release-notes-draft.md at e8dfc805 (every "kubeadm" entry):
- #126913: "init phase kubelet-finalize experimental-cert-rotation" removed (enable-client-cert-
  rotation stays, since v1.31).
- #126032: "kubeadm upgrade apply" gains phases ("upgrade apply phase <name>") and --skip-phases;
  #127242: "kubeadm upgrade node" gains the phases addon and post-upgrade (it has --skip-phases).
- #127123: the deprecated no-op --feature-gates of "kubeadm upgrade apply" removed (plan keeps it).
- #126914: --experimental-output removed (the double never accepted it: --output / -o only).
- #126740: --config may be mixed with --print-manifest of the "init phase addon" sub-phases.
- #126374: feature gate EtcdLearnerMode GA (still a known gate, locked on); #128031: new alpha gate
  NodeLocalCRISocket.
- #127151, #126953: the preflight checks for socat, ebtables and conntrack removed (the double's
  preflight never checked binaries).
- Skew: constants.MinimumControlPlaneVersion is kubeadm's minor - 1 (v1.31.0), as the double
  models for every release; upload-config writes v1beta4, as in v1.31; v1beta3 still decoded,
  deprecated.
The image tags of v1.32.13 (pause 3.10, etcd 3.5.24-0, CoreDNS v1.11.3) are the collection's
table (plugins/module_utils/kube_images.py), not the double's.
"""
# the double's CLI module for v1.32: what v1.31 had unchanged is re-exported from here
from cli_v1_31 import (BOOL_FLAGS, DEPRECATED_APIS, FEATURE_GATES as _GATES, GLOBAL, INIT as _INIT, JOIN,  # noqa: F401 pylint: disable=unused-import
                       JOIN_NO_ARGS, JOIN_WORKFLOW, KUBEADM_APIS, MIX_ALLOWED as _MIX, PREFLIGHT_REPORT_IN_ERROR, TOKEN,
                       UPLOAD_API)

VERSION = "v1.32.13"
ETCD_TAG = "3.5.24-0"
MIX_ALLOWED = _MIX | {"print-manifest"}
INIT = {k: v for k, v in _INIT.items() if k != "kubelet-finalize experimental-cert-rotation"}
MIN_CONTROL_PLANE = (1, 31)
FEATURE_GATES = _GATES | {"NodeLocalCRISocket"}

# ---------------------------------------------------------------- reset: as v1.31 (its own block)
from cli_v1_31 import RESET, RESET_ALIASES, RESET_KUBECONFIGS, RESET_PHASES  # noqa: E402,F401 pylint: disable=unused-import,wrong-import-position
# ---------------------------------------------------------------- end of reset

# ---------------------------------------------------------------- upgrade (plan | apply | node)
from cli_v1_31 import (KUBELET_MINOR_SKEW, UPGRADE as _UPGRADE, UPGRADE_BOOL, UPGRADE_MINOR_SKEW,  # noqa: F401,E402 pylint: disable=unused-import
                       UPGRADE_SHORT)

UPGRADE = {**_UPGRADE, "apply": (_UPGRADE["apply"] - {"feature-gates"}) | {"skip-phases"}}
# the sub-commands with phases ("kubeadm upgrade <sub> phase <name>"): the double runs them whole only
UPGRADE_PHASED = {"apply", "node"}

"""kubeadm v1.33 as the double mirrors it: what differs from v1.32 (cli_v1_32.py holds the rest).

Sources (facts read, not code copied; docs/kubernetes_releases.md keeps the references):
- the v1.33 release notes, kubernetes/sig-release releases/release-1.33/release-notes/
  release-notes-draft.md (every "kubeadm" entry): ControlPlaneKubeletLocalMode and
  WaitForAllControlPlaneComponents beta, on by default; the EtcdLearnerMode gate removed (#129589:
  GA in v1.32, a gate kubeadm no longer knows is refused as unknown); "kubeadm upgrade plan"
  gains --etcd-upgrade (#130023); preflight checks for binaries changed (cp and losetup added,
  nsenter, ip, iptables, ethtool, tc and touch removed: the double's preflight checks no binary).
- the local mode (KEP-4471 "ControlPlaneKubeletLocalMode"; cmd/kubeadm/app/cmd/phases/join/
  {kubelet,controlplanejoin}.go of the v1.32-v1.33 line): the phases etcd-join (flags config,
  control-plane, node-name, patches, apiserver-advertise-address, dry-run) and kubelet-wait-bootstrap
  (flags config, cri-socket, dry-run) run only with the gate on (RunIf), "control-plane-join etcd"
  only with it off. Both were hidden (no "join phase" command: workflow/runner.go BindToCommand skips
  hidden phases); etcd-join was unhidden on the release-1.33 branch (kubernetes#135481, kubeadm#3262;
  the 1.34 backport #135482 is in v1.34.3's changelog), so v1.33.13 has "join phase etcd-join";
  kubelet-wait-bootstrap stays hidden until v1.35 (#134106): it runs inside "kubeadm join" only
  (Cluster API runs "kubeadm join --skip-phases ..." for it, kubernetes-sigs/cluster-api#10983).
  With the gate on kubelet-start writes the bootstrap
  kubeconfig of a control-plane node against the node's own API server and does not wait for the
  TLS bootstrap (kubelet-wait-bootstrap does); init's kubelet.conf and "kubeadm upgrade" on a
  control-plane node name the local API server (KEP: "adjust init and upgrade to result in the same
  configuration").
- Skew: constants.MinimumControlPlaneVersion is kubeadm's minor - 1 (v1.32.0); upload-config writes
  v1beta4; v1beta3 still decoded, deprecated.
"""
# the double's CLI module for v1.33: what v1.32 had unchanged is re-exported from here
from cli_v1_32 import (BOOL_FLAGS, DEPRECATED_APIS, FEATURE_GATES as _GATES, GLOBAL, INIT, JOIN as _JOIN,  # noqa: F401 pylint: disable=unused-import
                       JOIN_NO_ARGS, JOIN_WORKFLOW, KUBEADM_APIS, MIX_ALLOWED, PREFLIGHT_REPORT_IN_ERROR, TOKEN,
                       UPLOAD_API)

VERSION = "v1.33.13"
ETCD_TAG = "3.5.24-0"
MIN_CONTROL_PLANE = (1, 32)
FEATURE_GATES = _GATES - {"EtcdLearnerMode"}
# gates whose default is on in this release (features.InitFeatureGates: beta, default true)
GATE_DEFAULTS = {"ControlPlaneKubeletLocalMode": True, "WaitForAllControlPlaneComponents": True}
JOIN = {**_JOIN,
        "etcd-join": {"apiserver-advertise-address", "config", "control-plane", "dry-run", "node-name", "patches"}}

# ---------------------------------------------------------------- reset: as v1.32 (its own block)
from cli_v1_32 import RESET, RESET_ALIASES, RESET_KUBECONFIGS, RESET_PHASES  # noqa: E402,F401 pylint: disable=unused-import,wrong-import-position
# ---------------------------------------------------------------- end of reset

# ---------------------------------------------------------------- upgrade (plan | apply | node)
from cli_v1_32 import (KUBELET_MINOR_SKEW, UPGRADE as _UPGRADE, UPGRADE_BOOL, UPGRADE_MINOR_SKEW,  # noqa: F401,E402 pylint: disable=unused-import
                       UPGRADE_PHASED, UPGRADE_SHORT)

UPGRADE = {**_UPGRADE, "plan": _UPGRADE["plan"] | {"etcd-upgrade"}}
# ---------------------------------------------------------------- end of upgrade

"""kubeadm (and kubelet) v1.35 as the doubles mirror them: what differs from v1.34 (cli_v1_34.py holds the rest).

Sources (facts read, not code copied; /work/notes/k135_facts.md and docs/kubernetes_releases.md keep the
references and revisions):
- the v1.35 release notes, kubernetes/sig-release releases/release-1.35/release-notes/
  release-notes-draft.md (@ e8dfc805), and CHANGELOG-1.35.md (v1.35.0-v1.35.4) of kubernetes/kubernetes:
  - #134106: ControlPlaneKubeletLocalMode GA, locked on; "join phase control-plane-join etcd" deprecated and
    hidden (replaced by etcd-join, identical); kubelet-wait-bootstrap no longer experimental, always run;
  - #134781: the WaitForAllControlPlaneComponents gate removed (GA and locked in v1.34): a name kubeadm no
    longer knows ("... is not a valid feature name."); "join phase wait-control-plane" always waits on a
    control-plane node (no longer "EXPERIMENTAL");
  - #133778 / #133779: kubeadm no longer writes --pod-infra-container-image into kubeadm-flags.env (an env
    file may now be KUBELET_KUBEADM_ARGS="", kubernetes/kubeadm#3279), and the kubelet flag is removed
    (the kubelet refuses it: "failed to parse kubelet flag: unknown flag: --pod-infra-container-image",
    kubernetes/kubeadm#3281);
  - #134744: kubeadm vendors k8s.io/system-validators v1.12.1: the SystemVerification preflight check
    refuses a cgroup v1 host for a kubelet of v1.35 or newer (below);
  - #134906: the preflight check ContainerRuntimeVersion (the CRI's RuntimeConfig RPC, KEP-4033): a
    warning in every 1.35 patch;
  - #134890: ClusterConfiguration.etcd.external.httpEndpoints (v1beta4, optional list of URLs);
  - #135271: etcd 3.6.6 (ETCD_TAG 3.6.6-0 from v1.35.0 to v1.35.7); #134298 (KEP-5573): the kubelet's
    failCgroupV1 defaults to true.
- kubernetes/system-validators tag v1.12.1 (0656506e, cherry-pick PR #62 of #61),
  validators/cgroup_validator_linux.go: CgroupsValidator.KubeletVersion; on a cgroup v1 host one message,
  an error when the kubelet version parses and is at least 1.35.0-0, else (no version, an older kubelet)
  a warning; the kubelet's configuration (failCgroupV1) is not read. kubeadm passes the installed kubelet's
  version at init/join and the installed kubelet's minor + 1 at upgrade (PR #134744's description;
  system-validators issue #58). The text: CGROUP_V1_MESSAGE (identical in real kubeadm 1.35 output).
- kubeadm's cmd/kubeadm/app/preflight/checks.go (1.34 era, @ 00b6a4c7): SystemVerificationCheck prints
  "[preflight] The system verification failed. Printing the output from the verification:" and the
  validators' report only when it has errors; RunUpgradeChecks runs SystemVerification (since 1.33, #129401).
- cmd/kubeadm/app/cmd/phases/upgrade/postupgrade.go (@ 4f6fdb45, the 1.35 state): the post-upgrade phase of
  "upgrade apply" and "upgrade node" backs up kubeadm-flags.env to /etc/kubernetes/tmp/kubeadm-kubelet-env<random>
  and rewrites it without the unwanted flags (["pod-infra-container-image"], "Remove it from this list in
  1.36"), the others kept in order (postupgrade_test.go TestRemoveKubeletArgsFromFile). The v1.35.0 bug on an
  empty env file (#136131, fixed in v1.35.1) is not modelled: the double acts as v1.35.7.
- kubernetes/website, generated kubeadm reference for v1.35 (769e76a326): "kubeadm join phase
  kubelet-wait-bootstrap" (flags --config, --cri-socket, --dry-run), phase order preflight,
  control-plane-prepare, kubelet-start, etcd-join, kubelet-wait-bootstrap, control-plane-join,
  wait-control-plane; the kubeadm_join_phase_control-plane-join_etcd page deleted.
- Skew: constants.MinimumControlPlaneVersion is kubeadm's minor - 1 (v1.34.0); upload-config writes
  v1beta4; v1beta3 still decoded, deprecated.
"""
# the double's CLI module for v1.35: what v1.34 had unchanged is re-exported from here
from cli_v1_34 import (BOOL_FLAGS, DEPRECATED_APIS, ERROR_PREFIX, FEATURE_GATES as _GATES, GLOBAL, INIT,  # noqa: F401 pylint: disable=unused-import
                       JOIN as _JOIN, JOIN_NO_ARGS, JOIN_WORKFLOW, KUBEADM_APIS, MIX_ALLOWED,
                       PREFLIGHT_REPORT_IN_ERROR, TOKEN, UPLOAD_API)

VERSION = "v1.35.7"
MIN_CONTROL_PLANE = (1, 34)
ETCD_TAG = "3.6.6-0"
# #134781: WaitForAllControlPlaneComponents is no gate of 1.35 any more
FEATURE_GATES = _GATES - {"WaitForAllControlPlaneComponents"}
# features.InitFeatureGates, default on: ControlPlaneKubeletLocalMode GA (locked), NodeLocalCRISocket beta
GATE_DEFAULTS = {"ControlPlaneKubeletLocalMode": True, "NodeLocalCRISocket": True}
# GA gates locked to their default (#134106): the double's phases follow the default whatever a configuration
# sets (kubeadm's refusal of a locked gate set to false was not found: not modelled)
LOCKED_GATES = {"ControlPlaneKubeletLocalMode"}

# join (#134106): kubelet-wait-bootstrap is a "join phase" command; "control-plane-join etcd" is hidden (no
# command; BindToCommand skips hidden phases) but its generated name stays valid in --skip-phases.
# JOIN_WORKFLOW is v1.31's order (check-etcd hidden; etcd-join before kubelet-wait-bootstrap).
JOIN = {**{k: v for k, v in _JOIN.items() if k != "control-plane-join etcd"},
        "kubelet-wait-bootstrap": {"config", "cri-socket", "dry-run"}}
JOIN_HIDDEN = ("control-plane-join etcd",)

# v1beta4 gains ClusterConfiguration.etcd.external.httpEndpoints (#134890; kubeadm_types.types_for)
ETCD_HTTP_ENDPOINTS = True

# #133778: kubeadm-flags.env without --pod-infra-container-image (earlier releases: True, getattr's default)
POD_INFRA_FLAG = False

# ---------------------------------------------------------------- preflight (1.35)
# system-validators v1.12.1 CgroupsValidator on a cgroup v1 host: an error for a kubelet >= CGROUP_V1_ERROR_FROM,
# a warning otherwise (no kubelet version, an older kubelet)
CGROUP_V1_MESSAGE = ("cgroups v1 support is deprecated and will be removed in a future release. Please migrate to "
                     "cgroups v2. To explicitly enable cgroups v1 support for kubelet v1.35 or newer, you must set the "
                     "kubelet configuration option 'FailCgroupV1' to 'false'. You must also explicitly skip this "
                     "validation. For more information, see "
                     "https://git.k8s.io/enhancements/keps/sig-node/5573-remove-cgroup-v1")
CGROUP_V1_ERROR_FROM = (1, 35, 0)
# #134906: the CRI's RuntimeConfig RPC (containerd from 2.0.0, containerd PR #8722; the 1.7 backport #11346
# was closed unmerged): a warning when the runtime lacks it, never fatal in 1.35
CONTAINER_RUNTIME_VERSION_WARNING = (
    "You must update your container runtime to a version that supports the CRI method RuntimeConfig. Falling back "
    "to using cgroupDriver from kubelet config will be removed in 1.36. For more information, see "
    "https://git.k8s.io/enhancements/keps/sig-node/4033-group-driver-detection-over-cri")
CONTAINERD_RUNTIME_CONFIG_FROM = (2, 0, 0)

# ---------------------------------------------------------------- kubelet (1.35)
# KEP-5573 (#134298): failCgroupV1 defaults to true; the kubelet refuses a cgroup v1 host unless its
# configuration says failCgroupV1: false
FAIL_CGROUP_V1_DEFAULT = True

# ---------------------------------------------------------------- reset: as v1.34 (its own block)
from cli_v1_34 import RESET, RESET_ALIASES, RESET_KUBECONFIGS, RESET_PHASES  # noqa: E402,F401 pylint: disable=unused-import,wrong-import-position
# ---------------------------------------------------------------- end of reset

# ---------------------------------------------------------------- upgrade (plan | apply | node)
# No new flags or phases in 1.35 (release notes); apply and node already take --ignore-preflight-errors
# (cli_v1_30.UPGRADE: addApplyPlanFlags and node's own set), which the 1.35 preflight honours.
from cli_v1_34 import (KUBELET_MINOR_SKEW, UPGRADE, UPGRADE_BOOL, UPGRADE_MINOR_SKEW,  # noqa: F401,E402 pylint: disable=unused-import
                       UPGRADE_PHASED, UPGRADE_SHORT)

# the preflight of "upgrade apply" and "upgrade node" (RunUpgradeChecks): SystemVerification with the installed
# kubelet's minor + 1, and ContainerRuntimeVersion
UPGRADE_PREFLIGHT = True
# postupgrade.go (1.35): the flags the post-upgrade phase removes from kubeadm-flags.env
KUBELET_ENV_UNWANTED = ("pod-infra-container-image",)
# ---------------------------------------------------------------- end of upgrade

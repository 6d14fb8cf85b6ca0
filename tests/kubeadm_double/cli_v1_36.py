"""kubeadm (and kubelet) v1.36 as the doubles mirror them: what differs from v1.35 (cli_v1_35.py holds the rest).

Sources (facts read, not code copied; /work/notes/k136_facts.md and docs/kubernetes_releases.md keep the
references and revisions):
- the v1.36 release notes, kubernetes/sig-release releases/release-1.36/release-notes/
  release-notes-draft.md (@ e8dfc805), every kubeadm entry read:
  - #135773: the ControlPlaneKubeletLocalMode gate removed (GA and locked in v1.35): a name kubeadm no longer
    knows ("... is not a valid feature name.", as v1.35's removed WaitForAllControlPlaneComponents); the local
    mode (a control-plane node's kubelet talks to its own API server) is kubeadm's only behaviour;
  - #135742: NodeLocalCRISocket GA, locked on (the generated reference for v1.36, kubernetes/website#55507:
    "NodeLocalCRISocket=true|false (default=true)");
  - #136898: the preflight check ContainerRuntimeVersion stays a warning for kubelets older than v1.37; the PR
    moves the number in its text from 1.36 to 1.37 (the text below: v1.35's with that number changed - inferred
    from the PR's title, no real 1.36 output with the warning was found; the later bump to 1.38, #139122, was
    not cherry-picked to release-1.36 by v1.36.3: #139267 still open);
  - #135807: the post-upgrade phase no longer removes --pod-infra-container-image from kubeadm-flags.env
    (cmd/kubeadm/app/cmd/phases/upgrade/postupgrade.go, the 1.36 state: RemoveKubeletArgsFromFile with
    []string{}); real 1.36.1 "upgrade apply" and "upgrade node" print no env-file line;
  - #137107: etcd 3.6.8 (ETCD_TAG 3.6.8-0 from v1.36.0 to v1.36.3, docs/kubernetes_releases.md section 2);
  - #135148: "kubeadm config validate --allow-deprecated-api" (the double implements no "config validate");
  - #136423: kubeadm no longer mounts the flex-volume directory into kube-controller-manager (the double
    never did);
  - none on the init, join, reset or upgrade flags or phases.
- kubernetes/kubernetes cmd/kubeadm/app/cmd/phases/join/controlplanejoin.go @ 24102f7f (the state after the
  gate's removal, undated): control-plane-join has the sub-phases all and mark-control-plane only - the hidden,
  deprecated "control-plane-join etcd" of v1.35 is gone, so its generated name is no longer one --skip-phases
  takes ("invalid phase name", the double's rule for a name the workflow does not have; kubeadm's 1.36 reaction
  not re-read). etcd-join is a top-level phase without RunIf. Which PR deleted the sub-phase: not found (most
  likely #135773, its RunIf was the removed gate).
- kubernetes PR #138957 and its cherry-pick #138958 to release-1.36 (first in v1.36.1): apiserver-kubelet-client.crt
  is issued with CN kube-apiserver-kubelet-client and no Organization (before: O=kubeadm:cluster-admins), and the
  bootstrap-token phase of init (and of "upgrade apply") binds User kube-apiserver-kubelet-client to the built-in
  ClusterRole system:kubelet-api-admin (ClusterRoleBinding kubeadm:apiserver-kubelet-client), printing
  "[bootstrap-token] Configured RBAC rules to allow the API server kubelet client certificate to access the
  kubelet API" (real 1.36.1 output). The cherry-picks to 1.35 (#138959), 1.34 (#138960) and 1.33 (#138964) put
  the same in v1.35.5, v1.34.8 and v1.33.12: the doubles' 1.33-1.35 tables are not back-fitted (README).
- Unchanged (no entry, or the generated references show none): the v1beta4 and v1beta3 field sets (the
  kubeadm config-API reference regenerated for v1.36, kubernetes-sigs/reference-docs a643117e, differs from the
  v1.35 one only in links), the join order, the kubelet-wait-bootstrap command, SystemVerification's cgroup v1
  rule (system-validators v1.12.1 presumably still vendored - 1.36's go.mod not read), the kubelet's failCgroupV1
  default (true), PublicKeysECDSA (deprecated) and RootlessControlPlane (alpha).
- Skew: constants.MinimumControlPlaneVersion is kubeadm's minor - 1 (v1.35.0; the 1.36 constants.go not read).
"""
# the double's CLI module for v1.36: what v1.35 had unchanged is re-exported from here
from cli_v1_35 import (BOOL_FLAGS, CGROUP_V1_ERROR_FROM, CGROUP_V1_MESSAGE, CONTAINERD_RUNTIME_CONFIG_FROM,  # noqa: F401 pylint: disable=unused-import
                       DEPRECATED_APIS, ERROR_PREFIX, ETCD_HTTP_ENDPOINTS, FAIL_CGROUP_V1_DEFAULT,
                       FEATURE_GATES as _GATES, GLOBAL, INIT, JOIN, JOIN_NO_ARGS, JOIN_WORKFLOW, KUBEADM_APIS,
                       MIX_ALLOWED, POD_INFRA_FLAG, PREFLIGHT_REPORT_IN_ERROR, TOKEN, UPLOAD_API)

VERSION = "v1.36.3"
MIN_CONTROL_PLANE = (1, 35)
ETCD_TAG = "3.6.8-0"
# #135773: ControlPlaneKubeletLocalMode is no gate of 1.36 any more (its behaviour stays: LOCAL_MODE_ALWAYS)
FEATURE_GATES = _GATES - {"ControlPlaneKubeletLocalMode"}
# features.InitFeatureGates, default on: NodeLocalCRISocket, GA from 1.36 (#135742)
GATE_DEFAULTS = {"NodeLocalCRISocket": True}
# GA gates locked to their default: the double's phases follow the default whatever a configuration sets
# (kubeadm's refusal of a locked gate set to false was not found: not modelled)
LOCKED_GATES = {"NodeLocalCRISocket"}
# the kubelet's local mode without a gate (config_load.local_mode)
LOCAL_MODE_ALWAYS = True

# join: as v1.35 (JOIN has no "control-plane-join etcd" command there either), but the sub-phase is gone, not
# hidden: its name is no longer valid in --skip-phases
JOIN_HIDDEN = ()

# #138957 / #138958 (from v1.36.1): apiserver-kubelet-client.crt without an Organization, and the bootstrap-token
# phase's ClusterRoleBinding kubeadm:apiserver-kubelet-client (certs.py, cmd_init.py)
KUBELET_CLIENT_ORG = None
KUBELET_API_ADMIN_BINDING = True

# ---------------------------------------------------------------- preflight (1.36)
# #136898: still a warning for a kubelet older than 1.37; the number in the text is 1.37 (inferred, see above)
CONTAINER_RUNTIME_VERSION_WARNING = (
    "You must update your container runtime to a version that supports the CRI method RuntimeConfig. Falling back "
    "to using cgroupDriver from kubelet config will be removed in 1.37. For more information, see "
    "https://git.k8s.io/enhancements/keps/sig-node/4033-group-driver-detection-over-cri")

# ---------------------------------------------------------------- reset: as v1.35 (its own block)
from cli_v1_35 import RESET, RESET_ALIASES, RESET_KUBECONFIGS, RESET_PHASES  # noqa: E402,F401 pylint: disable=unused-import,wrong-import-position
# ---------------------------------------------------------------- end of reset

# ---------------------------------------------------------------- upgrade (plan | apply | node)
# No new flags or phases in 1.36 (release notes); the preflight as v1.35's.
from cli_v1_35 import (KUBELET_MINOR_SKEW, UPGRADE, UPGRADE_BOOL, UPGRADE_MINOR_SKEW,  # noqa: F401,E402 pylint: disable=unused-import
                       UPGRADE_PHASED, UPGRADE_PREFLIGHT, UPGRADE_SHORT)

# postupgrade.go (1.36, #135807): RemoveKubeletArgsFromFile with no flags - kubeadm-flags.env is left as it is
# (no backup, no rewrite, no output)
KUBELET_ENV_UNWANTED = ()
# ---------------------------------------------------------------- end of upgrade

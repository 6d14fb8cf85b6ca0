"""Which phase writes what, fingerprints, and the run/skip decision of kubeadm_phase."""
import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils import kubeadm_phases as kp


@pytest.mark.parametrize("version,api", [("1.28.13", "kubeadm.k8s.io/v1beta3"), ("1.30.4", "kubeadm.k8s.io/v1beta3"),
                                         ("v1.31.1", "kubeadm.k8s.io/v1beta4"), ("1.32.13", "kubeadm.k8s.io/v1beta4"),
                                         ("1.33.13", "kubeadm.k8s.io/v1beta4"), ("1.34.10", "kubeadm.k8s.io/v1beta4"),
                                         ("1.35.7", "kubeadm.k8s.io/v1beta4"), ("1.36.3", "kubeadm.k8s.io/v1beta4")])
def test_api_version_per_kubernetes_version(version, api):
    assert kp.kubeadm_api_version(version) == api


@pytest.mark.parametrize("version", ["1.27.9", "1.37.0", "latest", "1.30"])
def test_unsupported_versions_are_refused(version):
    with pytest.raises(ValueError):
        kp.kubeadm_api_version(version)


def test_super_admin_conf_from_1_29():
    assert "super-admin.conf" not in kp.phase_artifacts("init", "kubeconfig all", "1.28.13")
    assert "super-admin.conf" in kp.phase_artifacts("init", "kubeconfig all", "1.29.8")


def test_external_etcd_has_no_etcd_certificates_or_manifest():
    stacked = kp.phase_artifacts("init", "certs all", "1.30.4", stacked_etcd=True)
    external = kp.phase_artifacts("init", "certs all", "1.30.4", stacked_etcd=False)
    assert "pki/etcd/ca.crt" in stacked and "pki/apiserver-etcd-client.key" in stacked
    assert not [p for p in external if "etcd" in p]
    assert kp.phase_artifacts("join", "control-plane-join all", "1.30.4", stacked_etcd=False) == []
    # a joining master does not make the etcd CA: it is shared
    assert "pki/etcd/ca.crt" not in kp.phase_artifacts("join", "control-plane-prepare all", "1.30.4")


def test_kubelet_start_writes_kubelet_files():
    assert kp.absolute(kp.phase_artifacts("init", "kubelet-start", "1.30.4")) == [
        "/var/lib/kubelet/config.yaml", "/var/lib/kubelet/kubeadm-flags.env"]
    # NodeLocalCRISocket (on from 1.34): the node's own kubelet configuration too
    for command in ("init", "join"):
        assert "/var/lib/kubelet/instance-config.yaml" in kp.phase_artifacts(command, "kubelet-start", "1.34.10")
        assert "/var/lib/kubelet/instance-config.yaml" not in kp.phase_artifacts(command, "kubelet-start", "1.33.13")
    assert "/etc/kubernetes/kubelet.conf" in kp.absolute(kp.phase_artifacts("join", "kubelet-start", "1.30.4"))


def test_join_phases_follow_the_kubelet_local_mode_from_1_33():
    assert kp.join_phases("1.32.13", True) == ["preflight", "control-plane-prepare all", "kubelet-start",
                                               "control-plane-join all"]
    assert kp.join_phases("1.32.13", False) == ["preflight", "kubelet-start"]
    assert not kp.kubelet_local_mode("1.32.13") and kp.kubelet_local_mode("v1.33.0")
    # the local mode: the stacked etcd member joins before the kubelet's bootstrap is waited for, in the
    # hidden phases kubeadm runs only inside "kubeadm join" (the pseudo-phase local-mode)
    assert kp.join_phases("1.33.13", True) == ["preflight", "control-plane-prepare all", "kubelet-start", "local-mode",
                                               "control-plane-join all"]
    assert kp.join_phases("1.33.13", False) == ["preflight", "kubelet-start", "local-mode"]


def test_the_local_mode_phases_run_as_kubeadm_join_with_the_others_skipped():
    assert kp.argv("/k", "join", "local-mode", "/c.yaml", []) == [
        "/k", "join", "--config", "/c.yaml", "--skip-phases",
        "preflight,control-plane-prepare,kubelet-start,control-plane-join,wait-control-plane"]
    assert kp.argv("/k", "join", "control-plane-join all", "/c.yaml", []) == [
        "/k", "join", "phase", "control-plane-join", "all", "--config", "/c.yaml"]


def test_the_local_mode_moves_the_etcd_manifest_and_kubelet_conf_to_its_hidden_phases():
    assert kp.phase_artifacts("join", "control-plane-join all", "1.32.13") == ["manifests/etcd.yaml"]
    assert kp.phase_artifacts("join", "control-plane-join all", "1.33.13") == []
    assert kp.phase_artifacts("join", "local-mode", "1.33.13") == ["manifests/etcd.yaml", "kubelet.conf"]
    assert kp.phase_artifacts("join", "local-mode", "1.33.13", stacked_etcd=False) == ["kubelet.conf"]
    assert "kubelet.conf" not in kp.phase_artifacts("join", "kubelet-start", "1.33.13")
    assert kp.prerequisites("join", "local-mode") == ["kubelet-start"]
    # before 1.33 there is no such step (kubeadm runs those phases only with the gate on)
    with pytest.raises(ValueError, match="unknown phase 'kubeadm join phase local-mode'"):
        kp.phase_artifacts("join", "local-mode", "1.32.13")


def test_a_completed_join_does_not_run_its_join_only_phases():
    # a master that joined under 1.32 (control-plane-join all recorded) has no etcd-join record
    assert kp.decide([], None, "f", joined="control-plane-join all") == (
        False, "the node completed its join (control-plane-join all recorded)")
    assert kp.decide(["manifests/etcd.yaml"], None, "f") == (True, "missing: manifests/etcd.yaml")
    assert kp.decide([], None, "f", force=True, joined="control-plane-join all") == (True, "forced")
    assert {("join", "local-mode"), ("join", "preflight")} <= kp.JOIN_ONLY
    assert ("join", "kubelet-start") not in kp.JOIN_ONLY


def test_from_1_35_etcd_join_and_kubelet_wait_bootstrap_are_phases_of_their_own():
    assert kp.join_phases("1.35.7", True) == ["preflight", "control-plane-prepare all", "kubelet-start", "etcd-join",
                                              "kubelet-wait-bootstrap", "control-plane-join all"]
    assert kp.join_phases("1.35.7", False) == ["preflight", "kubelet-start", "kubelet-wait-bootstrap"]
    assert kp.argv("/k", "join", "kubelet-wait-bootstrap", "/c.yaml", []) == [
        "/k", "join", "phase", "kubelet-wait-bootstrap", "--config", "/c.yaml"]
    assert kp.phase_artifacts("join", "etcd-join", "1.35.7") == ["manifests/etcd.yaml"]
    assert kp.phase_artifacts("join", "etcd-join", "1.35.7", stacked_etcd=False) == []
    assert kp.phase_artifacts("join", "kubelet-wait-bootstrap", "1.35.7") == ["kubelet.conf"]
    assert kp.phase_artifacts("join", "control-plane-join all", "1.35.7") == []
    assert kp.prerequisites("join", "kubelet-wait-bootstrap") == ["kubelet-start"]
    assert {("join", "etcd-join"), ("join", "kubelet-wait-bootstrap")} <= kp.JOIN_ONLY


def test_a_join_is_complete_by_its_own_final_phase_or_an_earlier_releases():
    # a worker joined under 1.34 recorded local-mode, one joined under 1.35 kubelet-wait-bootstrap
    assert kp.join_completed_by(kp.join_phases("1.35.7", False)) == {"local-mode", "kubelet-wait-bootstrap"}
    assert kp.join_completed_by(kp.join_phases("1.34.10", False)) == {"local-mode", "kubelet-wait-bootstrap"}
    # up to 1.32 a worker's join ended with kubelet-start: in a later list it only starts a join
    assert kp.join_completed_by(kp.join_phases("1.32.13", False)) == {"kubelet-start", "local-mode",
                                                                      "kubelet-wait-bootstrap"}
    assert kp.join_completed_by(kp.join_phases("1.35.7", True)) == {"control-plane-join all"}


def test_1_36_joins_as_1_35_and_never_names_control_plane_join_etcd():
    """1.36 (docs/kubernetes_releases.md section 10): the join order of 1.35; control-plane-join has no etcd sub-phase."""
    for control_plane in (True, False):
        assert kp.join_phases("1.36.3", control_plane) == kp.join_phases("1.35.7", control_plane)
        assert not [p for p in kp.join_phases("1.36.3", control_plane) if "control-plane-join etcd" in p]
    assert kp.kubelet_local_mode("1.36.3")
    for phase in ("kubelet-start", "etcd-join", "kubelet-wait-bootstrap", "control-plane-join all"):
        assert kp.phase_artifacts("join", phase, "1.36.3") == kp.phase_artifacts("join", phase, "1.35.7")
    assert kp.join_completed_by(kp.join_phases("1.36.3", False)) == {"local-mode", "kubelet-wait-bootstrap"}
    assert kp.join_completed_by(kp.join_phases("1.36.3", True)) == {"control-plane-join all"}


def test_removed_kubeadm_gates_by_release():
    gates = {"ControlPlaneKubeletLocalMode": True, "WaitForAllControlPlaneComponents": True, "NodeLocalCRISocket": True}
    assert kp.removed_gates("1.34.10", gates) == []
    assert kp.removed_gates("1.35.7", gates) == ["WaitForAllControlPlaneComponents"]
    assert kp.removed_gates("1.36.3", gates) == ["ControlPlaneKubeletLocalMode", "WaitForAllControlPlaneComponents"]
    assert kp.removed_gates("1.36.3", None) == [] and kp.removed_gates("1.36.3", ["RootlessControlPlane"]) == []


def test_cgroup_v1_is_refused_from_1_35_unless_the_site_allows_it():
    assert not kp.cgroup_v1_refused("1.34.10") and kp.cgroup_v1_refused("1.35.7")
    said = kp.cgroup_v1_refusal("1.35.7", ["h1", "h2"], allowed=False)
    assert said.startswith("h1, h2: cgroup v1 (/sys/fs/cgroup is not a cgroup2 mount); the kubelet of Kubernetes "
                           "1.35.7 does not start on cgroup v1") and "tke_allow_cgroup_v1: true" in said
    assert kp.cgroup_v1_refusal("1.35.7", ["h1"], allowed=True) == ""
    assert kp.cgroup_v1_refusal("1.34.10", ["h1"], allowed=False) == ""
    assert kp.cgroup_v1_refusal("1.35.7", [], allowed=False) == ""
    # 1.36 as 1.35 (no change to the kubelet's failCgroupV1 default or to SystemVerification's rule)
    assert kp.cgroup_v1_refused("1.36.3") and kp.preflight_ignores("1.36.3", True) == ["SystemVerification"]
    assert kp.preflight_ignores("1.36.3", False) == []


def test_unknown_phase_is_refused():
    with pytest.raises(ValueError, match="unknown phase 'kubeadm init phase certs everything'"):
        kp.phase_artifacts("init", "certs everything", "1.30.4")


CONFIG = """kind: JoinConfiguration
discovery:
  bootstrapToken:
    token: abcdef.0123456789abcdef
controlPlane:
  certificateKey: %s
  localAPIEndpoint: {}
"""


def test_fingerprint_ignores_credentials_but_not_configuration():
    a = kp.fingerprint("join", "kubelet-start", CONFIG % ("a" * 64), [])
    b = kp.fingerprint("join", "kubelet-start", (CONFIG % ("b" * 64)).replace("abcdef.", "zzzzzz."), [])
    c = kp.fingerprint("join", "kubelet-start", (CONFIG % ("a" * 64)).replace("  certificateKey: " + "a" * 64 + "\n", ""), [])
    assert a == b == c
    assert a != kp.fingerprint("join", "kubelet-start", CONFIG.replace("kind:", "kind: x") % "a", [])
    assert a != kp.fingerprint("join", "kubelet-start", CONFIG % "a", ["--v=5"])
    assert a != kp.fingerprint("join", "preflight", CONFIG % "a", [])


def test_secrets_are_masked_and_redacted():
    masked = kp.mask_config(CONFIG % ("a" * 64))
    assert "abcdef.0123456789abcdef" not in masked and "a" * 64 not in masked and '"<secret>"' in masked
    assert kp.mask_args(["--token", "x", "--certificate-key=y", "--v=5"]) == [
        "--token", "<secret>", "--certificate-key=<secret>", "--v=5"]
    out = kp.redact("Using token: abcdef.0123456789abcdef\nkey " + "f" * 64)
    assert "abcdef.0123456789abcdef" not in out and "f" * 64 not in out


@pytest.mark.parametrize("missing,recorded,force,once,expected", [
    (["/etc/kubernetes/admin.conf"], "fp", False, False, (True, "missing: /etc/kubernetes/admin.conf")),
    ([], None, False, False, (True, "never ran with this tool (no fingerprint recorded)")),
    ([], "other", False, False, (True, "configuration changed (fingerprint differs)")),
    ([], "fp\n", False, False, (False, "artifacts present and configuration unchanged")),
    ([], "fp", True, False, (True, "forced")),
    ([], "other", False, True, (False, "runs only before the node's first join (recorded)")),
    ([], None, False, True, (True, "never ran with this tool (no fingerprint recorded)")),
])
def test_decide(missing, recorded, force, once, expected):
    assert kp.decide(missing, recorded, "fp", force, once) == expected


def test_decide_without_a_configuration_yet():
    # check mode: an earlier task would write the configuration; its fingerprint is unknown
    assert kp.decide([], "fp", None) == (
        True, "its configuration is not written yet (check mode: an earlier task would write it)")
    assert kp.decide(["/x"], None, None) == (True, "missing: /x")
    assert kp.decide([], "fp", None, once=True)[0] is False


def test_argv_and_state_name():
    assert kp.argv("/k", "init", "certs all", "/c.yaml", ["--v=2"]) == [
        "/k", "init", "phase", "certs", "all", "--config", "/c.yaml", "--v=2"]
    assert kp.state_name("join", "control-plane-join all") == "join-control-plane-join-all.sha256"
    assert kp.tail("\n".join(map(str, range(100))), 3) == "97\n98\n99"


def test_prerequisites():
    assert kp.prerequisites("init", "kubelet-start") == []
    assert kp.prerequisites("init", "kubeconfig all") == ["certs all"]
    assert kp.prerequisites("join", "control-plane-join all") == ["control-plane-prepare all", "kubelet-start"]

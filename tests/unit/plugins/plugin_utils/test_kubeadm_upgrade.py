from ansible_collections.offline_pot.tke.plugins.module_utils import kubeadm_phases as kp
from ansible_collections.offline_pot.tke.plugins.plugin_utils.kubeadm_upgrade import check

CONFIG = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.30.4\n"
BINS = [{"name": n, "version": v} for n in ("kubeadm", "kubelet") for v in ("1.30.4", "1.31.1")]
HOSTS = ["m1", "m2", "w1"]


def nodes(**versions):
    return [{"metadata": {"name": n}, "status": {"nodeInfo": {"kubeletVersion": v}}} for n, v in versions.items()]


def test_next_minor_is_possible_and_every_node_pending():
    r = check("1.31.1", CONFIG, nodes(m1="v1.30.4", m2="v1.30.4", w1="v1.30.4"), BINS, HOSTS, "m1")
    assert r["errors"] == [] and r["pending"] == HOSTS and r["cluster_version"] == "v1.30.4" and r["target"] == "v1.31.1"


def test_resume_leaves_only_the_nodes_not_at_the_target():
    config = CONFIG.replace("v1.30.4", "v1.31.1")
    r = check("1.31.1", config, nodes(m1="v1.31.1", m2="v1.31.1", w1="v1.30.4"), BINS, HOSTS, "m1")
    assert r["errors"] == [] and r["pending"] == ["w1"]


def test_two_minors_refused_naming_the_variable_and_the_version_found():
    r = check("1.32.0", CONFIG, nodes(m1="v1.30.4", m2="v1.30.4", w1="v1.30.4"), BINS, HOSTS, "m1")
    assert r["errors"][0] == ("all: tke_k8s_version: 1.32.0: the cluster runs v1.30.4 (kube-system/kubeadm-config "
                              "read through m1); kubeadm upgrades one minor version at a time: upgrade to 1.31 first")
    assert "the site pack (tke_site_pack) carries no kubeadm 1.32.0 (it has: 1.30.4, 1.31.1)" in r["errors"][1]


def test_downgrade_newer_kubelet_old_kubelet_and_missing_node():
    r = check("1.30.4", CONFIG.replace("v1.30.4", "v1.31.1"), nodes(m1="v1.31.1", m2="v1.26.0"), BINS, HOSTS, "m1")
    text = "\n".join(r["errors"])
    assert "1.30.4 is older than the cluster's version" in text
    assert "m1: tke_k8s_version: 1.30.4 is older than this node's kubelet v1.31.1" in text
    assert "w1: no Node named w1 in the cluster" in text
    r = check("1.31.1", CONFIG, nodes(m1="v1.30.4", m2="v1.27.0", w1="v1.30.4"), BINS, HOSTS, "m1")
    assert r["errors"] == ["m2: tke_k8s_version: 1.31.1: this node's kubelet v1.27.0 is more than 3 minor versions "
                           "older; upgrade it first"]


def test_kubectl_needed_only_when_the_pack_carries_it():
    r = check("1.31.1", CONFIG, nodes(m1="v1.30.4"), BINS + [{"name": "kubectl", "version": "1.30.4"}], ["m1"], "m1")
    assert r["errors"] == ["all: tke_k8s_version: the site pack (tke_site_pack) carries no kubectl 1.31.1 (it has: 1.30.4)"]


def test_containerd_follows_the_release_it_serves_and_a_pack_without_one_for_the_target_is_refused():
    ctrd = [{"name": "containerd", "version": "1.6.20"}, {"name": "containerd", "version": "2.1.9", "for_kubernetes": ["1.31"]}]
    r = check("1.31.1", CONFIG, nodes(m1="v1.30.4", w1="v1.31.1"), BINS + ctrd, ["m1", "w1"], "m1")
    assert r["errors"] == [] and r["binaries_changed"] == ["containerd 1.6.20 -> 2.1.9"]
    # the runtime is set up again on the nodes still to upgrade (w1, at the target already, is done)
    assert r["runtime_nodes"] == ["m1"]
    # a patch upgrade within 1.30 keeps containerd 1.6.20: nothing to say
    r = check("1.30.4", CONFIG, nodes(m1="v1.30.4"), BINS + ctrd, ["m1"], "m1")
    assert r["errors"] == [] and r["binaries_changed"] == []
    # 1.30 -> 1.31: the same containerd, pause 3.9 -> 3.10 (kube_images): the runtime is set up again;
    # 1.31 -> 1.32: nothing differs, it is left alone
    assert check("1.31.1", CONFIG, nodes(m1="v1.30.4"), BINS, ["m1"], "m1")["runtime_nodes"] == ["m1"]
    bins = [{"name": n, "version": v} for n in ("kubeadm", "kubelet") for v in ("1.31.1", "1.32.13")]
    r = check("1.32.13", CONFIG.replace("v1.30.4", "v1.31.1"), nodes(m1="v1.31.1"), bins, ["m1"], "m1")
    assert r["errors"] == [] and r["pending"] == ["m1"] and r["runtime_nodes"] == []
    only = [dict(ctrd[0], for_kubernetes=["1.30"]), ctrd[1]]
    r = check("1.31.1", CONFIG, nodes(m1="v1.30.4"), BINS + [only[0]] + [dict(ctrd[1], for_kubernetes=["1.32"])], ["m1"], "m1")
    assert r["errors"] == ["all: tke_k8s_version: the site pack carries containerd in versions 1.6.20, 2.1.9, none of "
                           "them 1.31.1 (tke_k8s_version)"]


def test_unreadable_cluster_version():
    r = check("1.31.1", "", [], BINS, [], "m1")
    assert r["errors"][0].startswith("m1: the cluster's version could not be read")


# the summary: computed from the API and the records at the end of the run (issue 21, item 10)
from ansible_collections.offline_pot.tke.plugins.plugin_utils.kubeadm_upgrade import summary  # noqa: E402

DONE = CONFIG.replace("v1.30.4", "v1.31.1")


def test_summary_of_a_run_stopped_at_an_unreachable_worker_names_it_at_its_version():
    s = summary("1.31.1", "v1.30.4", DONE, nodes(m1="v1.31.1", m2="v1.31.1", w1="v1.30.4"),
                {"m1": "v1.31.1\n", "m2": "v1.31.1\n", "w1": None}, HOSTS, ["w1"])
    assert not s["done"] and s["behind"] == ["w1"] and s["at_target"] == ["m1", "m2"]
    text = "\n".join(s["lines"])
    assert "every node upgraded" not in text
    assert s["lines"][0] == "cluster v1.30.4 -> v1.31.1: NOT done"
    assert "upgraded to v1.31.1: m1, m2" in text
    assert "not upgraded: w1 (kubelet v1.30.4, its record not read, failed or unreachable in this run)" in text


def test_summary_says_every_node_upgraded_only_when_the_api_and_every_record_say_so():
    s = summary("1.31.1", "v1.30.4", DONE, nodes(m1="v1.31.1", m2="v1.31.1", w1="v1.31.1"),
                {h: "v1.31.1\n" for h in HOSTS}, HOSTS, [])
    assert s["done"] and s["lines"] == ["cluster v1.30.4 -> v1.31.1: every node upgraded (the API reports kubelet "
                                        "v1.31.1 on m1, m2, w1)"]
    # a kubelet at the target whose node recorded nothing (its run stopped before the record): not done
    s = summary("1.31.1", "v1.30.4", DONE, nodes(m1="v1.31.1", m2="v1.31.1", w1="v1.31.1"),
                {"m1": "v1.31.1", "m2": "", "w1": "v1.31.1"}, HOSTS, [])
    assert not s["done"] and "not upgraded: m2 (kubelet v1.31.1, recorded nothing)" in s["lines"]
    # the control plane not at the target: not done, even with every kubelet there
    s = summary("1.31.1", "v1.30.4", CONFIG, nodes(m1="v1.31.1", m2="v1.31.1", w1="v1.31.1"),
                {h: "v1.31.1" for h in HOSTS}, HOSTS, [])
    assert not s["done"] and "control plane (kube-system/kubeadm-config): v1.30.4" in s["lines"]


def test_summary_when_the_api_cannot_be_read_claims_nothing():
    s = summary("1.31.1", "v1.30.4", "", None, {}, HOSTS, ["m1"])
    assert not s["done"] and "NOT known to be done" in s["lines"][0]


def test_a_target_from_1_35_refuses_the_cgroup_v1_nodes_unless_the_site_allows_them():
    config = CONFIG.replace("v1.30.4", "v1.34.10")
    bins = [{"name": n, "version": "1.35.7"} for n in ("kubeadm", "kubelet")]
    at = nodes(m1="v1.34.10", m2="v1.34.10", w1="v1.34.10")
    r = check("1.35.7", config, at, bins, HOSTS, "m1", ["w1", "m1"], False)
    assert r["errors"] == [f"m1, w1: {kp.cgroup_v1_reason('1.35.7')}"]
    assert check("1.35.7", config, at, bins, HOSTS, "m1", ["w1", "m1"], "true")["errors"] == []
    assert check("1.35.7", config, at, bins, HOSTS, "m1", [], False)["errors"] == []
    # before 1.35 the kubelet runs on cgroup v1 by default
    r = check("1.34.10", config, at, [{"name": n, "version": "1.34.10"} for n in ("kubeadm", "kubelet")], HOSTS, "m1",
              ["m1"], "false")
    assert r["errors"] == []


def test_a_target_from_1_36_refuses_a_cluster_configuration_naming_control_plane_kubelet_local_mode():
    """kubeadm 1.36 no longer knows the gate (kubernetes#135773): the stored configuration must not name it."""
    config = CONFIG.replace("v1.30.4", "v1.35.7").replace("v1beta3", "v1beta4")
    gated = config + "featureGates:\n  ControlPlaneKubeletLocalMode: true\n  NodeLocalCRISocket: true\n"
    bins = [{"name": n, "version": "1.36.3"} for n in ("kubeadm", "kubelet")]
    at = nodes(m1="v1.35.7")
    r = check("1.36.3", gated, at, bins, ["m1"], "m1")
    assert r["errors"] == [
        "m1: kube-system/kubeadm-config's ClusterConfiguration sets the kubeadm feature gate ControlPlaneKubeletLocalMode "
        "in featureGates, which the kubeadm of 1.36.3 no longer knows (removed; it refuses a configuration naming it): "
        "take it out of featureGates first (kubectl -n kube-system edit configmap kubeadm-config); the behaviour stays "
        "kubeadm's"]
    assert check("1.36.3", config, at, bins, ["m1"], "m1")["errors"] == []
    # a patch upgrade within 1.35 keeps the gate's name valid
    assert check("1.35.7", gated, at, [{"name": n, "version": "1.35.7"} for n in ("kubeadm", "kubelet")],
                 ["m1"], "m1")["errors"] == []


def test_a_1_36_target_takes_the_containerd_the_pack_carries_for_1_35_and_1_36():
    config = CONFIG.replace("v1.30.4", "v1.35.7")
    ctrd = [{"name": "containerd", "version": "1.6.20"},
            {"name": "containerd", "version": "2.1.9", "for_kubernetes": ["1.35", "1.36"]}]
    bins = [{"name": n, "version": "1.36.3"} for n in ("kubeadm", "kubelet")] + ctrd
    r = check("1.36.3", config, nodes(m1="v1.35.7"), bins, ["m1"], "m1")
    assert r["errors"] == [] and r["binaries_changed"] == []


def test_each_architecture_of_the_sites_nodes_needs_the_target_and_its_binaries_are_told_apart():
    def arm(**versions):
        return [dict(n, status={"nodeInfo": dict(n["status"]["nodeInfo"], architecture="arm64")}) for n in nodes(**versions)]
    arm_bins = [dict(b, arch="arm64") for b in BINS if b["version"] == "1.30.4"]
    # an arm64 node: the pack must carry the target's kubeadm and kubelet for arm64, naming the node
    r = check("1.31.1", CONFIG, nodes(m1="v1.30.4") + arm(w1="v1.30.4"), BINS + arm_bins, ["m1", "w1"], "m1")
    assert r["errors"] == [
        "all: tke_k8s_version: the site pack (tke_site_pack) carries no kubeadm 1.31.1 for arm64 (w1) (it has: 1.30.4)",
        "all: tke_k8s_version: the site pack (tke_site_pack) carries no kubelet 1.31.1 for arm64 (w1) (it has: 1.30.4)"]
    # a site without arm64 nodes does not need the pack's arm64 entries to serve the target
    assert check("1.31.1", CONFIG, nodes(m1="v1.30.4"), BINS + arm_bins, ["m1"], "m1")["errors"] == []
    # a pack with no binaries at all is refused as before
    empty = check("1.31.1", CONFIG, nodes(m1="v1.30.4"), [], ["m1"], "m1")
    assert "carries no kubeadm 1.31.1 (it has: none)" in " ".join(empty["errors"])
    # containerd in two versions per architecture: each arch's entries are chosen among themselves
    ctrd = [{"name": "containerd", "version": "1.6.20", **a}
            for a in ({}, {"arch": "arm64"})] + [{"name": "containerd", "version": "2.1.9", "for_kubernetes": ["1.31"], **a}
                                                 for a in ({}, {"arch": "arm64"})]
    all_arm = [dict(b, arch="arm64") for b in BINS]
    r = check("1.31.1", CONFIG, nodes(m1="v1.30.4") + arm(w1="v1.30.4"), BINS + all_arm + ctrd, ["m1", "w1"], "m1")
    assert r["errors"] == [] and r["binaries_changed"] == ["containerd 1.6.20 -> 2.1.9",
                                                           "containerd (arm64) 1.6.20 -> 2.1.9"]
    assert r["runtime_nodes"] == ["m1", "w1"]

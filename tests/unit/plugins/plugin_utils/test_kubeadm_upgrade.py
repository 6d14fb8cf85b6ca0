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


def test_unreadable_cluster_version():
    r = check("1.31.1", "", [], BINS, [], "m1")
    assert r["errors"][0].startswith("m1: the cluster's version could not be read")

"""Calico on a fresh site: the smallest site that proves it, installed from scratch with
tke_network_plugin=calico on new machines (h1 the one master, also etcd and registry; h2 a worker;
the module starts on fresh hosts, tests/integration/conftest.py). test_network.py switches an
installed flannel site to calico; this one never had flannel: install, re-run changed=0, exactly
calico's CNI configuration on each node, calico's objects and no flannel object. The kubeadm,
kubelet and kube-apiserver test doubles are on the hosts as in test_network.py.
"""
import json
from pathlib import Path

import pytest

from harness import fixture_pack, kubeadm_double
from harness.playbook import TOP
from test_network import INSTALL, TIMES, cni_dirs, kubectl, objects_of, shows, timed

NODES = ["h1", "h2"]
KINDS = "namespaces,configmaps,daemonsets,deployments,serviceaccounts,clusterroles,clusterrolebindings,poddisruptionbudgets"
CALICO = ("calico-cni-plugin", "calico-kube-controllers", "calico-node")


@pytest.fixture(scope="module")
def calico(testhosts, tmp_path_factory):
    th = testhosts
    pack = fixture_pack.ensure_pack(TOP / ".cache" / "fixture-pack" / "e2e", Path(th.info["TH_REPO"]))
    kubeadm_double.install(th, NODES)
    d = tmp_path_factory.mktemp("calico")
    inv = th.write_inventory(
        d / "hosts.yml", groups={"masters": ["h1"], "workers": ["h2"], "etcd": ["h1"], "registry": ["h1"]},
        group_vars={"tke_network_plugin": "calico", "tke_site_pack": str(pack),
                    "site_repo_packages": ["conntrack", "socat"],
                    "precheck_disk": [{"path": "/var/lib", "min_free_gb": 1}],
                    "precheck_disk_etcd": [{"path": "/var/lib/etcd", "min_free_gb": 1}]})
    run = timed("install (calico, fresh site of 2 hosts)", INSTALL, inv)
    assert run.rc == 0, run.explain()
    th.ssh("h1", "(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kubernetes-client)"
                 " >/dev/null 2>&1")
    return {"inv": inv, "run": run}


def test_fresh_site_with_calico(testhosts, calico):
    th, run = testhosts, calico["run"]
    assert "Phase network" in run.output
    for h in NODES:
        assert shows(run, f"'  {h}: Ready"), (h, run.output[-4000:])
    assert shows(run, "DaemonSet kube-system/calico-node: rolled out, 2/2 pods available"), run.explain()
    # calico's objects, and none of flannel's
    assert objects_of(th, KINDS) == sorted(
        [f"{kind} {n}" for kind in ("ClusterRole", "ClusterRoleBinding") for n in CALICO]
        + [f"ServiceAccount kube-system/{n}" for n in CALICO]
        + ["ConfigMap kube-system/calico-config", "DaemonSet kube-system/calico-node",
           "Deployment kube-system/calico-kube-controllers", "PodDisruptionBudget kube-system/calico-kube-controllers"])
    assert kubectl(th, "get namespace kube-flannel").returncode != 0
    crds = objects_of(th, "customresourcedefinitions")
    assert len(crds) == 18 and "CustomResourceDefinition ippools.crd.projectcalico.org" in crds
    pod = json.loads(kubectl(th, "-n kube-system get ds calico-node -o json").stdout)["spec"]["template"]["spec"]
    assert sorted({c["image"] for c in pod["containers"] + pod["initContainers"]}) == [
        "registry.tke.com/library/calico-cni:v3.28.2", "registry.tke.com/library/calico-node:v3.28.2"]
    # exactly calico's CNI configuration on each node, naming the node
    assert cni_dirs(th, NODES) == {h: ["10-calico.conflist"] for h in NODES}
    for h in NODES:
        conf = json.loads(th.ssh(h, "cat /etc/cni/net.d/10-calico.conflist").stdout)
        assert conf["plugins"][0]["type"] == "calico" and conf["plugins"][0]["nodename"] == h, conf
    again = timed("re-run (calico site)", INSTALL, calico["inv"])
    assert again.rc == 0 and again.changed_hosts() == {}, again.explain()
    print("\n[timings] " + json.dumps(TIMES))

"""The network phase and cluster health on the HA keepalived site of 2 masters and 1 worker.

h1 and h2 are masters holding the API VIP with keepalived, h3 a worker; etcd is external on h1
(the API server double keeps its objects there, so every master serves the same objects); the
registry on h1 serves the fixture pack's stand-in network images. The kubeadm, kubelet and
kube-apiserver test doubles are on the hosts (tests/kubeadm_double, tests/apiserver_double): the
kubelet double reports its Node Ready only with a valid CNI configuration in /etc/cni/net.d, the
API double validates every object against Kubernetes' schemas and reports a DaemonSet ready when
its images are in the registry.

One site, in this order (one 3-host install: CI budget): flannel installed, re-run
(journal) and its network phase re-converged with the journal off, both changed=0 (every phase
re-converged with the journal off: test_install_e2e.py); check mode of the network phase
with another MTU changes nothing and says what would change; status.yml; an object with a schema
error is refused naming the object and the field; then the same cluster switched to calico (the
flannel objects pruned, exactly calico's CNI config left), and to none with the site's own CNI
from a before-hook (no network object left).

Calico installed on a fresh site: the last step of tests/integration/test_reset.py.
"""
import base64
import functools
import json
import os
from pathlib import Path

import pytest

from harness import fixture_pack, kubeadm_double, playbook, sites
from harness.playbook import NO_RESUME, TOP, run_playbook
from harness.testhosts import TestHosts

INSTALL = TOP / "install.yml"
STATUS = TOP / "playbooks" / "status.yml"
NODES = ["h1", "h2", "h3"]
TIMES = {}
SITE_CNI = """- name: The site's own CNI
  hosts: masters:workers
  gather_facts: false
  tasks:
    - name: A bridge network of the site
      ansible.builtin.copy:
        dest: /etc/cni/net.d/20-site.conflist
        mode: "0644"
        content: '{"cniVersion": "0.3.1", "name": "site", "plugins": [{"type": "bridge", "bridge": "cni0"}]}'
"""


def flat(text):
    """Text with every run of white space made one space: the YAML callback folds long lines."""
    return " ".join(text.split())


def shows(run, text):
    return flat(text) in flat(run.output)


timed = functools.partial(playbook.timed, times=TIMES)


@pytest.fixture(scope="module")
def three(testhosts):
    """The session's hosts, all fresh."""
    th = TestHosts(th_id=testhosts.th_id, count=3)
    th.reset(*NODES)   # fresh machines, whatever ran on the session's hosts before
    th.up()
    return th


@pytest.fixture(scope="module")
def site(three, tmp_path_factory):
    th = three
    pack = fixture_pack.ensure_pack(TOP / ".cache" / "fixture-pack" / "e2e", Path(th.info["TH_REPO"]))
    kubeadm_double.install(th)
    # TH_NETWORK_DIR: a stable site directory (inventory, journal), to resume the scenario on hosts
    # kept with TH_KEEP=1 after a failure
    d = Path(os.environ["TH_NETWORK_DIR"]) if os.environ.get("TH_NETWORK_DIR") else tmp_path_factory.mktemp("network")
    inv = sites.ha_keepalived(th, d / "hosts.yml", pack, tke_hooks_dir=str(d / "hooks"))
    return {"inv": inv, "dir": d}


def kubectl(th, args, host="h1"):
    """Real kubectl on a master (h1 by default; the cluster's minor, put there by the `flannel`
    fixture) through the admin kubeconfig: independent of the collection's own API client."""
    return th.ssh(host, f"kubectl --kubeconfig /etc/kubernetes/admin.conf {args}", check=False)


def objects_of(th, kinds, selector="tke.offline-pot.io/part-of=network", host="h1"):
    out = kubectl(th, f"get {kinds} -A -l {selector} -o json", host)
    assert out.returncode == 0, out.stderr
    return sorted(f"{o['kind']} {o['metadata'].get('namespace', '')}/{o['metadata']['name']}".replace(" /", " ")
                  for o in json.loads(out.stdout)["items"])


def install_cni(th, host):
    """What calico's install-cni does on a node when its calico-node pod starts (calico
    cni-plugin/pkg/install/install.go): the ConfigMap's cni_network_config, its placeholders
    replaced (node name, the kubeconfig beside the file, CNI_MTU from veth_mtu), written as it is
    to 10-calico.conflist. No pod runs on the test hosts, so the test does it."""
    cm = json.loads(kubectl(th, "-n kube-system get configmap calico-config -o json").stdout)["data"]
    conf = (cm["cni_network_config"].replace("__KUBERNETES_NODE_NAME__", host)
            .replace("__KUBECONFIG_FILEPATH__", "/etc/cni/net.d/calico-kubeconfig")
            .replace("__CNI_MTU__", cm["veth_mtu"]))
    blob = base64.b64encode(conf.encode()).decode()
    th.ssh(host, f"echo {blob} | base64 -d > /etc/cni/net.d/10-calico.conflist")


def cni_dirs(th, nodes=tuple(NODES)):
    return {h: th.ssh(h, "ls /etc/cni/net.d").stdout.split() for h in nodes}


@pytest.fixture(scope="module")
def flannel(three, site):
    run = timed("install (flannel, 3 hosts)", INSTALL, site["inv"])
    assert run.rc == 0, run.explain()
    three.kubectl_client("h1")
    return run


def test_flannel_install(three, site, flannel):
    th = three
    assert "Phase network" in flannel.output
    for h in NODES:
        assert shows(flannel, f"'  {h}: Ready"), (h, flannel.output[-4000:])
    assert shows(flannel, "DaemonSet kube-flannel/kube-flannel-ds: rolled out, 3/3 pods available"), flannel.explain()
    assert objects_of(th, "namespaces,configmaps,daemonsets,serviceaccounts,clusterroles,clusterrolebindings") == [
        "ClusterRole flannel", "ClusterRoleBinding flannel", "ConfigMap kube-flannel/kube-flannel-cfg",
        "DaemonSet kube-flannel/kube-flannel-ds", "Namespace kube-flannel", "ServiceAccount kube-flannel/flannel"]
    # real kubectl's own rule (kubectl rollout status) agrees with the collection's wait
    status = kubectl(th, "-n kube-flannel rollout status ds/kube-flannel-ds --timeout=60s")
    assert status.returncode == 0 and 'daemon set "kube-flannel-ds" successfully rolled out' in status.stdout, \
        status.stdout + status.stderr
    ds = json.loads(kubectl(th, "-n kube-flannel get ds kube-flannel-ds -o json").stdout)
    images = sorted({c["image"] for c in ds["spec"]["template"]["spec"]["containers"]
                     + ds["spec"]["template"]["spec"]["initContainers"]})
    assert images == ["registry.tke.com/library/flannel-cni-plugin:v1.9.1-flannel3",
                      "registry.tke.com/library/flannel:v0.28.9"]
    cfg = json.loads(kubectl(th, "-n kube-flannel get cm kube-flannel-cfg -o json").stdout)["data"]
    assert json.loads(cfg["net-conf.json"])["Network"] == "10.244.0.0/16"
    # every node holds exactly flannel's CNI configuration, the bytes install-cni would copy
    assert cni_dirs(th) == {h: ["10-flannel.conflist"] for h in NODES}
    for h in NODES:
        assert th.ssh(h, "cat /etc/cni/net.d/10-flannel.conflist").stdout.strip() == cfg["cni-conf.json"].strip()


def test_rerun_and_reconverge_change_nothing(three, site, flannel):
    again = timed("re-run (journal)", INSTALL, site["inv"])
    assert again.rc == 0 and again.changed_hosts() == {}, again.explain()
    assert shows(again, "'  h3: Ready")
    off = timed("re-converge of the network phase (journal off)", INSTALL, site["inv"], "--tags", "network",
                *NO_RESUME)
    assert off.rc == 0 and off.changed_hosts() == {}, off.explain()
    assert "The network's objects in the cluster" in off.output and set(off.stats) == set(NODES), off.explain()
    assert "k8s_apply" not in " ".join(off.changed_tasks())


def test_check_mode_reports_and_changes_nothing(three, site, flannel):
    th = three
    before = kubectl(th, "-n kube-flannel get cm kube-flannel-cfg -o json").stdout
    run = timed("check mode (network, MTU 1400)", INSTALL, site["inv"], "--tags", "network", "--check", "--diff",
                "-e", '{"tke_network_mtu": 1400, "force_phases": "network"}')
    assert run.rc == 0, run.explain()
    assert shows(run, "ConfigMap kube-flannel/kube-flannel-cfg") and '\\"MTU\\": 1400' in run.output, run.explain()
    assert any("The network's objects in the cluster" in t for t in run.changed_tasks()), run.explain()
    after = kubectl(th, "-n kube-flannel get cm kube-flannel-cfg -o json").stdout
    assert json.loads(after)["metadata"]["resourceVersion"] == json.loads(before)["metadata"]["resourceVersion"]
    assert "MTU" not in json.loads(after)["data"]["net-conf.json"]


def test_status_lists_every_node_ready(site, flannel):
    run = timed("status.yml", STATUS, site["inv"])
    assert run.rc == 0 and run.changed_hosts() == {}, run.explain()
    for h in NODES:
        assert shows(run, f"'  {h}: Ready"), run.explain()


def test_schema_error_names_object_and_field(three, site, flannel):
    bad = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "bad", "namespace": "kube-flannel"},
           "spec": {"selector": {"matchLabels": {"app": "bad"}},
                    "template": {"metadata": {"labels": {"app": "bad"}}, "spec": {"containers": [
                        {"name": "c", "image": "registry.tke.com/library/pause:3.9",
                         "ports": [{"containerPort": 70000}]}]}}}}
    play = site["dir"] / "bad.yml"
    play.write_text(
        "- hosts: h1\n  gather_facts: false\n  tasks:\n    - offline_pot.tke.k8s_apply:\n"
        f"        objects: [{json.dumps(bad)}]\n")
    run = run_playbook(play, site["inv"])
    assert run.rc != 0
    assert shows(run, "DaemonSet kube-flannel/bad: Invalid:"), run.explain()
    # the real server's 422 for a port out of range (a wrong type would be its 400 "cannot unmarshal")
    assert shows(run, "spec.template.spec.containers[0].ports[0].containerPort"), run.explain()
    assert shows(run, "must be between 1 and 65535, inclusive"), run.explain()
    assert kubectl(three, "-n kube-flannel get ds bad").returncode != 0


def test_switch_to_calico(three, site, flannel):
    th = three
    # the whole install.yml, no --tags: a phase's inputs are the settings its roles read, so the
    # plugin switch re-runs the network phase and the offline phase (which checks that the pack has
    # the plugin's images), and no other (before, every tke_* setting was every phase's input and
    # all twelve phases ran again on every host)
    run = timed("install.yml, flannel -> calico", INSTALL, site["inv"], "-e", '{"tke_network_plugin": "calico"}')
    assert run.rc == 0, run.explain()
    ran = {phase: hosts for phase, hosts in run.phase_hosts().items() if hosts}
    assert set(ran) == {"offline", "network"} and sorted(ran["network"]) == sorted(NODES), (ran, run.explain())
    assert shows(run, "DaemonSet kube-system/calico-node: rolled out, 3/3 pods available"), run.explain()
    assert objects_of(th, "namespaces,daemonsets,deployments") == [
        "DaemonSet kube-system/calico-node", "Deployment kube-system/calico-kube-controllers"]
    crds = objects_of(th, "customresourcedefinitions")
    assert len(crds) == 23 and "CustomResourceDefinition ippools.crd.projectcalico.org" in crds
    # calico 3.32's ClusterNetworkPolicy CRD, in a group only an approved API may use
    assert "CustomResourceDefinition clusternetworkpolicies.policy.networking.k8s.io" in crds
    assert cni_dirs(th) == {h: ["10-calico.conflist"] for h in NODES}
    conf = json.loads(th.ssh("h3", "cat /etc/cni/net.d/10-calico.conflist").stdout)
    assert conf["plugins"][0]["nodename"] == "h3" and conf["plugins"][0]["mtu"] == 0
    # calico's install-cni (started with each calico-node pod) writes the node's file from the
    # ConfigMap; the role's file must be byte for byte the same, or every journal-off run rewrites it
    for h in NODES:
        install_cni(th, h)
    again = timed("network phase, calico again (journal off, after install-cni)", INSTALL, site["inv"],
                  "--tags", "network", *NO_RESUME, "-e", '{"tke_network_plugin": "calico"}')
    assert again.rc == 0 and again.changed_hosts() == {}, again.explain()


def test_none_leaves_no_network_object(three, site, flannel):
    th = three
    hook = site["dir"] / "hooks" / "network" / "before.yml"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(SITE_CNI)
    run = timed("network phase, calico -> none (site CNI in a hook)", INSTALL, site["inv"], "--tags", "network",
                "-e", '{"tke_network_plugin": "none"}')
    assert run.rc == 0, run.explain()
    assert objects_of(th, "namespaces,configmaps,daemonsets,deployments,serviceaccounts,clusterroles,"
                          "clusterrolebindings,customresourcedefinitions,poddisruptionbudgets") == []
    assert cni_dirs(th) == {h: ["20-site.conflist"] for h in NODES}
    for h in NODES:
        assert shows(run, f"'  {h}: Ready"), run.explain()
    print("\n[timings] " + json.dumps(TIMES))

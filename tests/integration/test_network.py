"""The network phase, cluster health and playbooks/reset.yml on the HA keepalived site of 2 masters
and 1 worker (one site for both: CI budget, issue 28; until 2026-11-29 the reset scenario was
test_reset.py, with a fresh install and hosts of its own).

h1 and h2 are masters holding the API VIP with keepalived, h3 a worker; etcd is external on h1
(the API server double keeps its objects there, so every master serves the same objects); the
registry on h1 serves the fixture pack's stand-in network images. The kubeadm, kubelet and
kube-apiserver test doubles are on the hosts (tests/kubeadm_double, tests/apiserver_double): the
kubelet double reports its Node Ready only with a valid CNI configuration in /etc/cni/net.d, the
API double validates every object against Kubernetes' schemas and reports a DaemonSet ready when
its images are in the registry; kubeadm's reset is the double's (its README).

On fresh hosts, in this order (one full install: CI budget): an install stopped after the etcd phase
(as a failed install leaves a site) is reset clean; the same hosts are installed from scratch with
calico (issue 13's calico on a fresh site: its objects, images and CNI configuration naming each
node, byte for byte what calico's install-cni writes; a re-run, and the network phase re-converged
with the journal off after install-cni, change nothing); the same cluster switched to flannel (only
the offline and network phases run; calico's objects and CRDs pruned, exactly flannel's CNI
configuration left), re-run (journal) and its network phase re-converged with the journal off,
both changed=0 (every phase re-converged with the journal off: test_install_e2e.py); check mode of
the network phase with another MTU changes nothing and says what would change; status.yml; an
object with a schema error is refused naming the object and the field; then to none with the
site's own CNI from a before-hook (no network object left). Then reset.yml on that site: refused
without the confirmation (nothing touched); --check --diff shows what would go and touches nothing;
one worker reset with --limit (the others untouched); the whole site reset (services, files, the
VIP, netfilter and the controller's journal checked on the hosts and the controller), and again
with no change. Flannel on a fresh site is every other scenario's install (the default plugin).
"""
import base64
import functools
import json
import os
import re
from pathlib import Path

import pytest

from harness import fixture_pack, kubeadm_double, playbook, sites
from harness.playbook import NO_RESUME, TOP, converge_twice, run_playbook
from harness.sites import left, vip
from harness.testhosts import TestHosts

INSTALL = TOP / "install.yml"
STATUS = TOP / "playbooks" / "status.yml"
RESET = TOP / "playbooks" / "reset.yml"
CONFIRM = ("-e", "reset_confirm=true")
CALICO = ("-e", "tke_network_plugin=calico")
CALICO_KINDS = ("namespaces,configmaps,daemonsets,deployments,serviceaccounts,clusterroles,clusterrolebindings,"
                "poddisruptionbudgets")
CALICO_NAMES = ("calico-cni-plugin", "calico-kube-controllers", "calico-node")
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
    """Real kubectl on a master (h1 by default; the cluster's minor, put there by the `installed`
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


def journal(site):
    return json.loads((site["dir"] / ".tke" / "journal.json").read_text())


def test_reset_cleans_an_install_stopped_after_etcd(three, site):
    th = three
    partial = timed("install up to etcd", INSTALL, site["inv"], "--tags", "precheck,offline,host_init,pki,runtime,registry,etcd")
    assert partial.rc == 0, partial.explain()
    assert th.ssh("h1", "systemctl is-active etcd tke-registry containerd").stdout.split() == ["active"] * 3
    reset = timed("reset of the partial install", RESET, site["inv"], *CONFIRM)
    assert reset.rc == 0, reset.explain()
    for h in th.names:
        assert left(th, h) == [], (h, left(th, h))
    assert journal(site)["phases"] == {}


@pytest.fixture(scope="module")
def installed(three, site):
    """The whole install, with calico, on hosts a reset left (the partial install's, first test)."""
    run = timed("install (calico, 3 hosts, after the reset)", INSTALL, site["inv"], *CALICO)
    assert run.rc == 0, run.explain()
    three.kubectl_client("h1")
    return run


def test_fresh_install_after_the_reset_with_calico(three, site, installed):
    """The reset hosts installed again from scratch, with calico (issue 13's fresh calico site)."""
    th = three
    again = installed
    # every phase ran again on every host (none was skipped as done)
    assert not re.search(r"skipping [^()]*\(done ", again.output), again.explain()
    assert th.ssh("h1", "systemctl is-active etcd tke-registry containerd kubelet").stdout.split() == ["active"] * 4
    assert th.ssh("h3", "systemctl is-active containerd kubelet").stdout.split() == ["active"] * 2
    for h in NODES:
        assert shows(again, f"'  {h}: Ready"), (h, again.output[-4000:])
    assert shows(again, f"DaemonSet kube-system/calico-node: rolled out, {len(NODES)}/{len(NODES)} pods available"), \
        again.explain()
    # calico's objects, and no other network's
    assert objects_of(th, CALICO_KINDS) == sorted(
        [f"{kind} {n}" for kind in ("ClusterRole", "ClusterRoleBinding") for n in CALICO_NAMES + ("calico-tier-getter",)]
        + [f"ServiceAccount kube-system/{n}" for n in CALICO_NAMES]
        + ["ConfigMap kube-system/calico-config", "DaemonSet kube-system/calico-node",
           "Deployment kube-system/calico-kube-controllers", "PodDisruptionBudget kube-system/calico-kube-controllers"])
    crds = objects_of(th, "customresourcedefinitions")
    assert len(crds) == 23 and "CustomResourceDefinition ippools.crd.projectcalico.org" in crds
    # calico 3.32's ClusterNetworkPolicy CRD, in a group only an approved API may use
    assert "CustomResourceDefinition clusternetworkpolicies.policy.networking.k8s.io" in crds
    pod = json.loads(kubectl(th, "-n kube-system get ds calico-node -o json").stdout)["spec"]["template"]["spec"]
    assert sorted({c["image"] for c in pod["containers"] + pod["initContainers"]}) == [
        "registry.tke.com/library/calico-cni:v3.32.1", "registry.tke.com/library/calico-node:v3.32.1"]
    # exactly calico's CNI configuration on each node, naming the node
    assert cni_dirs(th) == {h: ["10-calico.conflist"] for h in NODES}
    for h in NODES:
        conf = json.loads(th.ssh(h, "cat /etc/cni/net.d/10-calico.conflist").stdout)
        assert conf["plugins"][0]["type"] == "calico" and conf["plugins"][0]["nodename"] == h, conf
        assert conf["plugins"][0]["mtu"] == 0, conf
    rerun = timed("re-run (calico)", INSTALL, site["inv"], *CALICO)
    assert rerun.rc == 0 and rerun.changed_hosts() == {}, rerun.explain()
    # calico's install-cni (started with each calico-node pod) writes the node's file from the
    # ConfigMap; the role's file must be byte for byte the same, or every journal-off run rewrites it
    for h in NODES:
        install_cni(th, h)
    off = timed("network phase, calico (journal off, after install-cni)", INSTALL, site["inv"],
                "--tags", "network", *NO_RESUME, *CALICO)
    assert off.rc == 0 and off.changed_hosts() == {}, off.explain()


@pytest.fixture(scope="module")
def flannel(three, site, installed):
    """The same cluster switched to flannel (the inventory's plugin: the default)."""
    run = timed("install.yml, calico -> flannel", INSTALL, site["inv"])
    assert run.rc == 0, run.explain()
    return run


def test_switch_to_flannel(three, site, flannel):
    th = three
    # the whole install.yml, no --tags: a phase's inputs are the settings its roles read, so the
    # plugin switch re-runs the network phase and the offline phase (which checks that the pack has
    # the plugin's images), and no other (before, every tke_* setting was every phase's input and
    # all twelve phases ran again on every host)
    ran = {phase: hosts for phase, hosts in flannel.phase_hosts().items() if hosts}
    assert set(ran) == {"offline", "network"} and sorted(ran["network"]) == sorted(NODES), (ran, flannel.explain())
    for h in NODES:
        assert shows(flannel, f"'  {h}: Ready"), (h, flannel.output[-4000:])
    assert shows(flannel, "DaemonSet kube-flannel/kube-flannel-ds: rolled out, 3/3 pods available"), flannel.explain()
    # flannel's objects alone: calico's (and its CRDs) pruned
    assert objects_of(th, CALICO_KINDS) == [
        "ClusterRole flannel", "ClusterRoleBinding flannel", "ConfigMap kube-flannel/kube-flannel-cfg",
        "DaemonSet kube-flannel/kube-flannel-ds", "Namespace kube-flannel", "ServiceAccount kube-flannel/flannel"]
    assert objects_of(th, "customresourcedefinitions") == []
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


def test_none_leaves_no_network_object(three, site, flannel):
    th = three
    hook = site["dir"] / "hooks" / "network" / "before.yml"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(SITE_CNI)
    run = timed("network phase, flannel -> none (site CNI in a hook)", INSTALL, site["inv"], "--tags", "network",
                "-e", '{"tke_network_plugin": "none"}')
    assert run.rc == 0, run.explain()
    assert objects_of(th, "namespaces,configmaps,daemonsets,deployments,serviceaccounts,clusterroles,"
                          "clusterrolebindings,customresourcedefinitions,poddisruptionbudgets") == []
    assert cni_dirs(th) == {h: ["20-site.conflist"] for h in NODES}
    for h in NODES:
        assert shows(run, f"'  {h}: Ready"), run.explain()


def test_refused_without_confirmation_touches_nothing(three, site, installed):
    th = three
    run = run_playbook(RESET, site["inv"])
    assert run.rc != 0 and "confirm with -e reset_confirm=true" in run.output, run.explain()
    assert run.total("changed") == 0, run.explain()
    assert "TASK [offline_pot.tke.reset" not in run.output
    assert th.ssh("h1", "systemctl is-active etcd kubelet keepalived").stdout.split() == ["active"] * 3
    assert th.ssh("h3", "systemctl is-active kubelet containerd").stdout.split() == ["active"] * 2


def test_check_mode_shows_what_goes_and_touches_nothing(three, site, installed):
    th = three
    before = th.ssh("h3", "find /etc/kubernetes /etc/containerd /var/lib/offline-pot -type f | sort").stdout
    run = run_playbook(RESET, site["inv"], *CONFIRM, "--limit", "h3", "--check", "--diff")
    assert run.rc == 0 and run.changed_hosts().get("h3"), run.explain()
    assert "path /etc/systemd/system/containerd.service" in run.output and "service kubelet" in run.output
    assert th.ssh("h3", "find /etc/kubernetes /etc/containerd /var/lib/offline-pot -type f | sort").stdout == before
    assert th.ssh("h3", "systemctl is-active kubelet containerd").stdout.split() == ["active"] * 2
    assert any("h3" in hosts for hosts in journal(site)["phases"].values())


def test_reset_one_worker(three, site, installed):
    th = three
    before = {h: th.ssh(h, "find /etc/kubernetes /etc/containerd -type f | sort | xargs sha256sum").stdout
              for h in ("h1", "h2")}
    # (a second reset changing nothing is checked on the whole site below)
    first = run_playbook(RESET, site["inv"], *CONFIRM, "--limit", "h3")
    assert first.rc == 0 and set(first.changed_hosts()) == {"h3"}, first.explain()
    assert left(th, "h3") == [], left(th, "h3")
    # the masters are untouched: files, services, the VIP
    for h in ("h1", "h2"):
        assert th.ssh(h, "find /etc/kubernetes /etc/containerd -type f | sort | xargs sha256sum").stdout == before[h]
        assert th.ssh(h, "systemctl is-active kubelet containerd keepalived").stdout.split() == ["active"] * 3
    assert th.ssh("h1", f"ip -o -4 addr show to {vip(th)}/32").stdout.strip()
    j = journal(site)
    assert all("h3" not in hosts for hosts in j["phases"].values()), j
    assert "h1" in j["phases"]["control_plane"] and j["step"] > 0


def netfilter_left(th, host):
    """The cluster's netfilter chains on a host (kube-proxy's KUBE-, flannel's FLANNEL-, calico's
    cali-) and the rules that jump to them."""
    out = th.ssh(host, "iptables-save | grep -E -- '^:(KUBE-|FLANNEL-|cali-)|-j (KUBE-|FLANNEL-|cali-)'; true").stdout
    return sorted(line.split(" [")[0] for line in out.splitlines() if line)


def test_reset_whole_site(three, site, installed):
    th = three
    # what kube-proxy, flannel and calico leave on a node: no pod runs on the test hosts, so the
    # test makes a chain of each, jumped to from a built-in chain (with the host's iptables, which a
    # real node has and the worker here lacks: from the hosts' apt repository); the reset must
    # remove all of it
    for h in th.names:
        th.ssh(h, "command -v iptables >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive "
                  "apt-get install -y -qq iptables) >/dev/null 2>&1", timeout=300)
        th.ssh(h, "iptables -t nat -N KUBE-SERVICES && iptables -t nat -A PREROUTING -j KUBE-SERVICES && "
                  "iptables -N FLANNEL-FWD && iptables -A FORWARD -j FLANNEL-FWD && "
                  "iptables -N cali-INPUT && iptables -A INPUT -j cali-INPUT")
        assert len(netfilter_left(th, h)) == 6, netfilter_left(th, h)
    first, second = converge_twice(RESET, site["inv"], *CONFIRM)
    assert {"h1", "h2"} <= set(first.changed_hosts()), first.explain()
    for h in th.names:
        assert left(th, h) == [], (h, left(th, h))
        assert not th.ssh(h, f"ip -o -4 addr show to {vip(th)}/32").stdout.strip(), h
        # no netfilter chain of the cluster's (kube-proxy, flannel, calico) is left, nor a jump to one
        assert netfilter_left(th, h) == [], (h, netfilter_left(th, h))
    # the registry's storage stays (reset_registry_data false); OS packages and pack binaries stay
    assert th.ssh("h1", "test -d /var/lib/tke-registry/docker && test -x /usr/local/bin/containerd "
                  "&& dpkg -s keepalived etcd-server >/dev/null && echo kept").stdout.strip() == "kept"
    # the controller: journal empty, tke.json's step 0, the PKI store kept
    assert journal(site)["phases"] == {} and journal(site)["step"] == 0
    assert json.loads((site["dir"] / ".tke" / "tke.json").read_text())["step"] == 0
    assert (site["dir"] / ".tke" / "pki" / "ca.key").exists()
    print("\n[timings] " + json.dumps(TIMES))

"""playbooks/reset.yml on three real hosts with the HA keepalived inventory (h1, h2 masters holding
the VIP with keepalived, h3 a worker, external etcd and the registry on h1). First an install
stopped after the etcd phase (as a failed install leaves a site) is reset clean. Then the same
hosts are installed from scratch, with calico (issue 13's calico on a fresh site: its objects,
images and CNI configuration; a re-run changes nothing), and on that whole install: refused
without the confirmation (nothing touched); --check --diff shows what would go and touches
nothing; one worker reset with --limit (the others untouched); the whole site reset (services,
files, the VIP, netfilter and the controller's journal checked on the hosts and the controller),
and again with no change. One full install serves it all (CI time): the install after the partial
reset is the fresh install.

kubeadm and kubelet are the test doubles (tests/kubeadm_double), as in test_install_e2e.py; the
double's `kubeadm reset` removes what the real one removes (its README).
"""
import json
import re
from pathlib import Path

import pytest

from harness import fixture_pack, kubeadm_double, sites
from harness.playbook import TOP, converge_twice, run_playbook
from harness.sites import vip
from test_network import cni_dirs, kubectl, objects_of, shows

INSTALL = TOP / "install.yml"
RESET = TOP / "playbooks" / "reset.yml"
CONFIRM = ("-e", "reset_confirm=true")
CALICO = ("-e", "tke_network_plugin=calico")
CALICO_KINDS = ("namespaces,configmaps,daemonsets,deployments,serviceaccounts,clusterroles,clusterrolebindings,"
                "poddisruptionbudgets")
CALICO_NAMES = ("calico-cni-plugin", "calico-kube-controllers", "calico-node")
SERVICES = ["kubelet", "containerd", "etcd", "keepalived", "tke-registry", "haproxy"]
# what the install leaves on a host that a reset removes (every host of this site has each one it
# ran: the check is "none left", on every host; the CNI configuration directory is emptied, not
# removed: containerd 2 exits when it goes, roles/network/tasks/reset.yml)
PATHS = ["/etc/kubernetes", "/var/lib/kubelet", "/etc/containerd", "/var/lib/containerd", "/etc/cni/net.d/*",
         "/etc/etcd", "/var/lib/etcd", "/etc/tke", "/etc/tke-registry", "/etc/keepalived/keepalived.conf",
         "/etc/systemd/system/kubelet.service", "/etc/systemd/system/containerd.service",
         "/etc/systemd/system/etcd.service", "/etc/systemd/system/tke-registry.service",
         "/etc/systemd/system/keepalived.service.d", "/etc/crictl.yaml", "/etc/sysctl.d/90-offline-pot-tke.conf",
         "/etc/modules-load.d/offline-pot-tke.conf", "/var/lib/offline-pot",
         "/usr/local/share/ca-certificates/tke-registry-ca.crt"]


@pytest.fixture(scope="module")
def site(testhosts, tmp_path_factory):
    th = testhosts
    pack = fixture_pack.ensure_pack(TOP / ".cache" / "fixture-pack" / "e2e", Path(th.info["TH_REPO"]))
    kubeadm_double.install(th)
    d = tmp_path_factory.mktemp("reset")
    return {"inv": sites.ha_keepalived(th, d / "hosts.yml", pack), "dir": d}


@pytest.fixture(scope="module")
def installed(site):
    """The whole install, with calico, on hosts a reset left (the partial install's, first test)."""
    first = run_playbook(INSTALL, site["inv"], *CALICO)
    assert first.rc == 0, first.explain()
    return first


def journal(site):
    return json.loads((site["dir"] / ".tke" / "journal.json").read_text())


def left(th, host):
    """What of the install is still on the host: active or enabled services, paths, our /etc/hosts blocks."""
    out = th.ssh(host, "for s in " + " ".join(SERVICES) + "; do systemctl is-active -q $s && echo active:$s; "
                 "systemctl is-enabled -q $s 2>/dev/null && echo enabled:$s; done; "
                 "for p in " + " ".join(PATHS) + "; do [ -e $p ] && echo path:$p; done; "
                 "grep -o 'offline_pot.tke[a-z ]*' /etc/hosts; true").stdout.split("\n")
    return sorted(x for x in out if x)


def test_reset_cleans_an_install_stopped_after_etcd(testhosts, site):
    th = testhosts
    partial = run_playbook(INSTALL, site["inv"], "--tags", "precheck,offline,host_init,pki,runtime,registry,etcd")
    assert partial.rc == 0, partial.explain()
    assert th.ssh("h1", "systemctl is-active etcd tke-registry containerd").stdout.split() == ["active"] * 3
    reset = run_playbook(RESET, site["inv"], *CONFIRM)
    assert reset.rc == 0, reset.explain()
    for h in th.names:
        assert left(th, h) == [], (h, left(th, h))
    assert journal(site)["phases"] == {}


def test_fresh_install_after_the_reset_with_calico(testhosts, site, installed):
    """The reset hosts installed again from scratch, with calico (issue 13's fresh calico site)."""
    th = testhosts
    again = installed
    # every phase ran again on every host (none was skipped as done)
    assert not re.search(r"skipping [^()]*\(done ", again.output), again.explain()
    assert th.ssh("h1", "systemctl is-active etcd tke-registry containerd kubelet").stdout.split() == ["active"] * 4
    assert th.ssh("h3", "systemctl is-active containerd kubelet").stdout.split() == ["active"] * 2
    nodes = th.names
    for h in nodes:
        assert shows(again, f"'  {h}: Ready"), (h, again.output[-4000:])
    assert shows(again, f"DaemonSet kube-system/calico-node: rolled out, {len(nodes)}/{len(nodes)} pods available"), \
        again.explain()
    th.kubectl_client("h1")
    # calico's objects, and no other network's
    assert objects_of(th, CALICO_KINDS) == sorted(
        [f"{kind} {n}" for kind in ("ClusterRole", "ClusterRoleBinding") for n in CALICO_NAMES + ("calico-tier-getter",)]
        + [f"ServiceAccount kube-system/{n}" for n in CALICO_NAMES]
        + ["ConfigMap kube-system/calico-config", "DaemonSet kube-system/calico-node",
           "Deployment kube-system/calico-kube-controllers", "PodDisruptionBudget kube-system/calico-kube-controllers"])
    crds = objects_of(th, "customresourcedefinitions")
    assert len(crds) == 23 and "CustomResourceDefinition ippools.crd.projectcalico.org" in crds
    pod = json.loads(kubectl(th, "-n kube-system get ds calico-node -o json").stdout)["spec"]["template"]["spec"]
    assert sorted({c["image"] for c in pod["containers"] + pod["initContainers"]}) == [
        "registry.tke.com/library/calico-cni:v3.32.1", "registry.tke.com/library/calico-node:v3.32.1"]
    # exactly calico's CNI configuration on each node, naming the node
    assert cni_dirs(th, nodes) == {h: ["10-calico.conflist"] for h in nodes}
    for h in nodes:
        conf = json.loads(th.ssh(h, "cat /etc/cni/net.d/10-calico.conflist").stdout)
        assert conf["plugins"][0]["type"] == "calico" and conf["plugins"][0]["nodename"] == h, conf
    rerun = run_playbook(INSTALL, site["inv"], *CALICO)
    assert rerun.rc == 0 and rerun.changed_hosts() == {}, rerun.explain()


def test_refused_without_confirmation_touches_nothing(testhosts, site, installed):
    th = testhosts
    run = run_playbook(RESET, site["inv"])
    assert run.rc != 0 and "confirm with -e reset_confirm=true" in run.output, run.explain()
    assert run.total("changed") == 0, run.explain()
    assert "TASK [offline_pot.tke.reset" not in run.output
    assert th.ssh("h1", "systemctl is-active etcd kubelet keepalived").stdout.split() == ["active"] * 3
    assert th.ssh("h3", "systemctl is-active kubelet containerd").stdout.split() == ["active"] * 2


def test_check_mode_shows_what_goes_and_touches_nothing(testhosts, site, installed):
    th = testhosts
    before = th.ssh("h3", "find /etc/kubernetes /etc/containerd /var/lib/offline-pot -type f | sort").stdout
    run = run_playbook(RESET, site["inv"], *CONFIRM, "--limit", "h3", "--check", "--diff")
    assert run.rc == 0 and run.changed_hosts().get("h3"), run.explain()
    assert "path /etc/systemd/system/containerd.service" in run.output and "service kubelet" in run.output
    assert th.ssh("h3", "find /etc/kubernetes /etc/containerd /var/lib/offline-pot -type f | sort").stdout == before
    assert th.ssh("h3", "systemctl is-active kubelet containerd").stdout.split() == ["active"] * 2
    assert any("h3" in hosts for hosts in journal(site)["phases"].values())


def test_reset_one_worker(testhosts, site, installed):
    th = testhosts
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


def test_reset_whole_site(testhosts, site, installed):
    th = testhosts
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

"""Adding and removing nodes on one HA keepalived site (issue 15, items 1 and 2; docs/lifecycle.md).

Six hosts, one site grown and shrunk in order: 3 masters (h1-h3, keepalived VIP; external etcd and
the registry on h1) + 1 worker (h4) installed -> 2 workers added (h5, h6: install.yml with the
hosts in the inventory) -> the removal refused (no confirmation, the last etcd member, the last
master, an unreachable node without force) with nothing touched -> a worker removed (h6:
remove_node.yml, then install.yml without it) -> h6, reset by the removal, added back as a
master. (The issue's chain adds the master before removing the worker; with six hosts the
removed worker is the host that comes back as the fourth master.) Each step is followed by a
re-run with changed=0, and the Node list is read from the API right after it - with Debian's
kubectl on h1, not with the collection's own client. The kubeadm, kubelet and kube-apiserver test
doubles are on the hosts (tests/kubeadm_double, tests/apiserver_double).
"""
import functools
import json
import os
from pathlib import Path

import pytest

from harness import fixture_pack, kubeadm_double, playbook, sites
from harness.playbook import TOP, run_playbook
from harness.testhosts import TestHosts

INSTALL = TOP / "install.yml"
REMOVE = TOP / "playbooks" / "remove_node.yml"
HOSTS = ["h1", "h2", "h3", "h4", "h5", "h6"]
TIMES = {}
# pods on the workers: one of a ReplicaSet on h6 (evicted by the drain), one of a DaemonSet on h6
# (left, as kubectl drain --ignore-daemonsets leaves it), one on h5 (not touched)
PODS = [("web-1", "h6", "ReplicaSet"), ("agent-h6", "h6", "DaemonSet"), ("web-2", "h5", "ReplicaSet")]


def flat(text):
    return " ".join(text.split())


timed = functools.partial(playbook.timed, times=TIMES)


@pytest.fixture(scope="module")
def six(testhosts):
    """The session's hosts plus h4-h6, all fresh, on the same harness instance."""
    th = TestHosts(th_id=testhosts.th_id, count=6)
    th.reset(*HOSTS)
    th.up()
    yield th
    th.down("h4", "h5", "h6")


@pytest.fixture(scope="module")
def site(six, tmp_path_factory):
    pack = fixture_pack.ensure_pack(TOP / ".cache" / "fixture-pack" / "e2e", Path(six.info["TH_REPO"]))
    kubeadm_double.install(six)
    # TH_LIFECYCLE_DIR: a stable site directory (inventories, journal) to resume on hosts kept with TH_KEEP=1
    d = Path(os.environ["TH_LIFECYCLE_DIR"]) if os.environ.get("TH_LIFECYCLE_DIR") else \
        tmp_path_factory.mktemp("lifecycle")

    def inventory(masters, workers, name="hosts.yml", **host_vars):
        return sites.keepalived_site(six, d / name, pack, masters, workers, **host_vars)
    return {"dir": d, "inventory": inventory}


def kubectl(th, args, stdin=None):
    import subprocess
    argv = kubeadm_double.ssh_argv(th, "h1") + [f"kubectl --kubeconfig /etc/kubernetes/admin.conf {args}"]
    return subprocess.run(argv, input=stdin, text=True, capture_output=True, timeout=120, check=False)


def nodes(th):
    out = kubectl(th, "get nodes -o json")
    assert out.returncode == 0, out.stderr
    return {n["metadata"]["name"]: n for n in json.loads(out.stdout)["items"]}


def node_list(th):
    return sorted(nodes(th))


def pods_on(th, node):
    out = kubectl(th, f"get pods -A --field-selector spec.nodeName={node} -o json")
    assert out.returncode == 0, out.stderr
    return sorted(p["metadata"]["name"] for p in json.loads(out.stdout)["items"])


def managed_hosts(th, host):
    text = th.ssh(host, "cat /etc/hosts").stdout
    block = text.split("# BEGIN offline_pot.tke managed block", 1)[-1].split("# END offline_pot.tke managed block")[0]
    return {line.split()[-1] for line in block.splitlines() if line.strip()}


def rerun_changes_nothing(name, inv):
    again = timed(name, INSTALL, inv)
    assert again.rc == 0 and again.changed_hosts() == {}, again.explain()
    return again


def changed_by_host(run):
    out = {}
    for line in run.changed_tasks():
        host = line.rsplit("changed: [", 1)[1].split(" ->")[0].rstrip("]")
        out.setdefault(host, []).append(line)
    return out


@pytest.fixture(scope="module")
def installed(six, site):
    inv = site["inventory"](["h1", "h2", "h3"], ["h4"])
    run = timed("install: 3 masters + 1 worker", INSTALL, inv)
    assert run.rc == 0, run.explain()
    six.kubectl_client("h1")
    return inv


def test_install_three_masters_one_worker(six, site, installed):
    assert node_list(six) == ["h1", "h2", "h3", "h4"]
    rerun_changes_nothing("re-run after the install", installed)


@pytest.fixture(scope="module")
def two_workers(six, site, installed):
    inv = site["inventory"](["h1", "h2", "h3"], ["h4", "h5", "h6"])
    run = timed("add 2 workers", INSTALL, inv)
    assert run.rc == 0, run.explain()
    return inv, run


def test_add_two_workers(six, site, two_workers):
    inv, run = two_workers
    assert node_list(six) == ["h1", "h2", "h3", "h4", "h5", "h6"]
    ran = run.phase_hosts()
    # the new workers run every phase of a worker; the existing hosts only the phases whose
    # configuration names every host (precheck's peers, /etc/hosts and chrony, the PKI's members)
    for phase in ("precheck", "host_init", "pki"):
        assert sorted(ran[phase]) == HOSTS, (phase, ran)
    for phase in ("offline", "runtime", "registry", "ha", "nodes", "network"):
        assert sorted(ran[phase]) == ["h5", "h6"], (phase, ran)
    assert ran["etcd"] == [] and ran["control_plane"] == [], ran
    # and the run says why the existing hosts ran
    assert "(h1, h2, h3, h4: its configuration names h5, h6 (added); h5, h6: new)" in flat(run.output), run.explain()
    # the changes on the existing hosts are those phases' (the configuration naming h5 and h6, the records)
    for host in ("h1", "h2", "h3", "h4"):
        for line in changed_by_host(run).get(host, []):
            assert any(f"offline_pot.tke.{r} :" in line for r in ("precheck", "host_init", "pki", "tke")) or \
                "Record the phase done" in line, line
        assert {"h5", "h6"} <= managed_hosts(six, host)
    ready = {h: [c["status"] for c in n["status"].get("conditions", []) if c["type"] == "Ready"]
             for h, n in nodes(six).items()}
    assert ready["h5"] == ready["h6"] == ["True"], ready
    rerun_changes_nothing("re-run after adding 2 workers", inv)


def test_removal_refused_before_anything_is_touched(six, site, two_workers):
    inv, dummy = two_workers

    def pod(i, name, node, kind):
        owner = {"apiVersion": "apps/v1", "kind": kind, "name": name.split("-")[0], "controller": True,
                 "uid": "00000000-0000-0000-0000-00000000000" + str(i)}
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "default", "labels": {"app": name.split("-")[0]},
                             "ownerReferences": [owner]},
                "spec": {"nodeName": node, "containers": [{"name": "c", "image": "registry.tke.com/library/pause:3.9"}]}}
    pods = [pod(i, *p) for i, p in enumerate(PODS)]
    made = kubectl(six, "create --validate=false -f -", json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}))
    assert made.returncode == 0, made.stderr
    before = nodes(six)

    def refused(inventory, *args, reason):
        run = run_playbook(REMOVE, inventory, *args)
        assert run.rc != 0 and reason in flat(run.output), run.explain()
        assert run.total("changed") == 0, run.explain()
        return run

    refused(inv, "-e", "node=h6", reason="confirm with -e remove_node_confirm=true; nothing was touched")
    # h1 is the only etcd member (and a master of three)
    refused(inv, "-e", "node=h1", "-e", "remove_node_confirm=true",
            reason="not removed, nothing touched: h1: the last etcd member (the cluster's data would be gone)")
    one_master = site["inventory"](["h1"], ["h2", "h3", "h4", "h5", "h6"], name="one-master.yml")
    refused(one_master, "-e", "node=h1", "-e", "remove_node_confirm=true",
            reason="h1: the last master (the cluster would have no control plane); h1: the last etcd member")
    lost = site["inventory"](["h1", "h2", "h3"], ["h4", "h5", "h6"], name="lost.yml",
                             h6={"ansible_host": six.ip("h1").rsplit(".", 1)[0] + ".99"})
    refused(lost, "-e", "node=h6", "-e", "remove_node_confirm=true",
            reason="h6: unreachable - it can be neither drained nor reset; -e force=true removes it")
    # nothing touched: the Nodes as they were (none cordoned), the pods in place, h6's kubelet running
    after = nodes(six)
    assert sorted(after) == sorted(before) and not any(n["spec"].get("unschedulable") for n in after.values())
    assert pods_on(six, "h6") == ["agent-h6", "web-1"]
    assert six.ssh("h6", "systemctl is-active kubelet").stdout.strip() == "active"


@pytest.fixture(scope="module")
def removed(six, site, two_workers):
    inv, dummy = two_workers
    # web-1 running and Ready, under a budget that allows no disruption: the drain is held back
    # (the API's 429, retried until the timeout), the removal stops before the reset; once the
    # budget allows it, the same command removes the node
    status = {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
    made = kubectl(six, "-n default patch pod web-1 --subresource=status --type=merge -p '" + json.dumps(status) + "'")
    assert made.returncode == 0, made.stderr
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}}
    made = kubectl(six, "apply -f -", json.dumps(pdb))
    assert made.returncode == 0, made.stderr
    held = run_playbook(REMOVE, inv, "-e", "node=h6", "-e", "remove_node_confirm=true", "-e", "remove_node_drain_timeout=6")
    assert held.rc != 0 and "Node h6: timed out after 6 s waiting for pod default/web-1 to be evicted " \
        "(refused: a PodDisruptionBudget holds it)" in flat(held.output), held.explain()
    assert pods_on(six, "h6") == ["agent-h6", "web-1"] and nodes(six)["h6"]["spec"].get("unschedulable")
    assert six.ssh("h6", "systemctl is-active kubelet").stdout.strip() == "active"
    assert kubectl(six, "-n default delete pdb web").returncode == 0
    run = timed("remove worker h6", REMOVE, inv, "-e", "node=h6", "-e", "remove_node_confirm=true")
    assert run.rc == 0, run.explain()
    return inv, run


def test_remove_a_worker(six, site, removed):
    inv, run = removed
    assert "h6: Node found, evicted: default/web-1, left: default/agent-h6" in flat(run.output), run.explain()
    assert node_list(six) == ["h1", "h2", "h3", "h4", "h5"]
    assert pods_on(six, "h5") == ["web-2"]
    assert six.ssh("h6", "systemctl is-active kubelet", check=False).stdout.strip() != "active"
    assert six.ssh("h6", "ls /etc/kubernetes/kubelet.conf /var/lib/offline-pot 2>&1", check=False).returncode != 0
    journal = json.loads((site["dir"] / ".tke" / "journal.json").read_text())
    assert not [p for p, hosts in journal["phases"].items() if "h6" in hosts], journal["phases"]
    # a second run changes nothing (the Node is gone, the host reset)
    again = timed("remove worker h6 again", REMOVE, inv, "-e", "node=h6", "-e", "remove_node_confirm=true")
    assert again.rc == 0 and again.changed_hosts() == {}, again.explain()
    # h6 out of the inventory: install.yml tells the remaining hosts, and says which and why
    five = site["inventory"](["h1", "h2", "h3"], ["h4", "h5"])
    told = timed("install.yml without h6", INSTALL, five)
    assert told.rc == 0, told.explain()
    assert sorted(told.phase_hosts()["host_init"]) == ["h1", "h2", "h3", "h4", "h5"], told.explain()
    assert "its configuration names h6 (removed)" in flat(told.output), told.explain()
    assert told.phase_hosts()["network"] == [] and told.phase_hosts()["runtime"] == [], told.explain()
    for host in ("h1", "h4"):
        assert "h6" not in managed_hosts(six, host)
    assert node_list(six) == ["h1", "h2", "h3", "h4", "h5"]
    rerun_changes_nothing("re-run after removing h6", five)


@pytest.fixture(scope="module")
def master_added(six, site, removed):
    inv = site["inventory"](["h1", "h2", "h3", "h6"], ["h4", "h5"])
    run = timed("add master h6", INSTALL, inv)
    assert run.rc == 0, run.explain()
    return inv, run


def test_add_a_master(six, site, master_added):
    inv, run = master_added
    assert node_list(six) == ["h1", "h2", "h3", "h4", "h5", "h6"]
    labels = nodes(six)["h6"]["metadata"].get("labels") or {}
    assert "node-role.kubernetes.io/control-plane" in labels, labels
    ran = run.phase_hosts()
    # the masters' peers (keepalived), the workers' view of the masters (ha, nodes): named there
    assert sorted(ran["ha"]) == HOSTS and sorted(ran["control_plane"]) == ["h1", "h2", "h3", "h6"], ran
    assert "h1, h2, h3, h4, h5: its configuration names h6 (added); h6: new" in flat(run.output), run.explain()
    assert ran["runtime"] == ["h6"] and ran["network"] == ["h6"], ran
    # keepalived on every master names the new one as a peer
    for host in ("h1", "h2", "h3"):
        conf = six.ssh(host, "cat /etc/keepalived/keepalived.conf").stdout
        assert six.ip("h6") in conf, (host, conf)
    assert six.ssh("h6", "systemctl is-active keepalived").stdout.strip() == "active"
    # the API server of the new master serves, with a certificate for its own address
    assert six.ssh("h6", "python3 -c 'import ssl, urllib.request; print(urllib.request.urlopen("
                         f"\"https://{six.ip('h6')}:6443/healthz\", context=ssl.create_default_context("
                         "cafile=\"/etc/kubernetes/pki/ca.crt\")).read().decode())'").stdout.strip() == "ok"
    rerun_changes_nothing("re-run after adding master h6", inv)
    print("\n[timing] " + ", ".join(f"{k}: {v} s" for k, v in TIMES.items()))

"""playbooks/upgrade.yml on an installed 1.31 site: 2 masters (h1, h2) with the keepalived VIP, 1 worker
(h4; h3 is not part of this site: 2 masters prove the rolling order and the VIP's hand-over as 3 would,
at three quarters of the chain's work - CI budget), external etcd on h1, the fixture site pack carrying kubeadm and kubelet 1.30.4, 1.31.1,
1.32.13, 1.33.13, 1.34.10, 1.35.7 and 1.36.3 (launchers of the doubles acting as that version). In
order, on one install (CI budget; the chain 1.31 -> 1.36 step by step):

- a skew of more than one minor is refused before anything is touched, naming tke_k8s_version and
  the cluster's version (no kubeadm upgrade ran anywhere, no node records anything);
- 1.31.1 -> 1.32.13 with the worker unreachable (SSH to it dropped by an nftables rule on this
  machine; its kubelet keeps running, as on a site where a network path fails): the masters upgrade
  one at a time while the VIP's /healthz, sampled from the controller every 100 ms, never stops
  answering longer than a failover; the run fails naming h4, its summary (read from the API) names
  h4 not upgraded at v1.31.1; h4 back -> the re-run resumes at h4 (the masters run no kubeadm again:
  their double's command log is unchanged) -> every Node reports kubelet v1.32.13 (the official
  kubectl 1.32 through the API double), the kubeadm-config ConfigMap is v1beta4 at v1.32.13, etcd
  was backed up first;
- the chain goes on, one minor at a time: 1.32.13 -> 1.33.13, where kubeadm's local mode points each
  master's kubelet at its own API server, as the collection's PKI phase renders it for 1.33 (its
  check-mode run finds no host file to put back) -> 1.34.10, where NodeLocalCRISocket moves each
  node's CRI endpoint from the kubelet's flags into its instance-config.yaml -> 1.35.7: on this
  machine's cgroup v1 hosts refused first, naming every node, nothing touched; then allowed
  (tke_allow_cgroup_v1): failCgroupV1: false goes into kube-system/kubelet-config before kubeadm 1.35
  runs, so every node's config.yaml gets it at its upgrade and its 1.35 kubelet starts; kubeadm's
  SystemVerification check is ignored, and its post-upgrade drops --pod-infra-container-image from
  each node's kubeadm-flags.env (the 1.35 kubelet has no such flag); the official kubectl of each
  minor lists the nodes at its version; containerd 2.1.9, the pack's choice for 1.35, replaces 1.6.20 on
  each node after its drain (a container started under 1.6.20 keeps running) -> 1.36.3 (the same
  containerd, the sandbox image of 1.36) -> a further run changes nothing.

Then the site's day 2 at 1.36.3, on the same install (adding and removing nodes, issue 15, items 1
and 2; docs/lifecycle.md), each step followed by a re-run with changed=0 and the Node list read
right after it with the official kubectl on h1, not the collection's own client: install.yml at
the release the chain reached runs no kubeadm phase and writes only the records of its new inputs
-> 2 workers added (h5, h6: install.yml with the hosts in the inventory; containerd 2.1.9 and the
kubelet of 1.36 on them) -> the removal refused (no confirmation, the last etcd member, the last master, an unreachable node
without force) with nothing touched -> a worker removed (h6: remove_node.yml, held back by a
PodDisruptionBudget first, then install.yml without it) -> h6, reset by the removal, added back as
a master. (The issue's chain adds the master before removing the worker; with five hosts the
removed worker is the host that comes back as the third master.)
(The 1.30 -> 1.31 step, v1beta3 uploaded as v1beta4, is the double's unit test
test_kubeadm_double_upgrade.py::test_upload_moves_the_configuration_to_v1beta4.)
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from harness import fixture_pack, kubeadm_double, playbook, sites
from harness.playbook import NO_RESUME, TOP, report_changes, run_playbook
from harness.testhosts import TestHosts
import ha_support as ha

INSTALL = TOP / "install.yml"
UPGRADE = TOP / "playbooks" / "upgrade.yml"
REMOVE = TOP / "playbooks" / "remove_node.yml"
MASTERS, WORKER = ["h1", "h2"], "h4"
NODES = MASTERS + [WORKER]
TARGET = "1.36.3"   # where the chain ends, and the release of the day-2 steps after it
HOSTS = ["h1", "h2", "h4", "h5", "h6"]
# pods on the workers: one of a ReplicaSet on h6 (evicted by the drain), one of a DaemonSet on h6
# (left, as kubectl drain --ignore-daemonsets leaves it), one on h5 (not touched)
PODS = [("web-1", "h6", "ReplicaSet"), ("agent-h6", "h6", "DaemonSet"), ("web-2", "h5", "ReplicaSet")]
TIMES: dict[str, float] = {}


timed = functools.partial(playbook.timed, times=TIMES)


# TH_UPGRADE_DIR: a stable site directory; with TH_KEEP=1 the hosts stay up after the session and a
# later session with the same directory reuses the installed site (debugging: no reset, no install)
KEPT = Path(os.environ["TH_UPGRADE_DIR"]) if os.environ.get("TH_UPGRADE_DIR") else None


@pytest.fixture(scope="module")
def four(testhosts):
    th = TestHosts(th_id=testhosts.th_id, count=4)
    if not (KEPT and (KEPT / "installed").exists()):
        th.reset(*NODES)
    th.up()
    yield th
    if os.environ.get("TH_KEEP") != "1":
        th.down(WORKER)


@pytest.fixture(scope="module")
def site(four, tmp_path_factory):
    th = four
    pack = fixture_pack.ensure_pack(TOP / ".cache" / "fixture-pack" / "e2e", Path(th.info["TH_REPO"]))
    d = KEPT or tmp_path_factory.mktemp("upgrade")
    if not (d / "installed").exists():
        kubeadm_double.install(th, NODES)
    inv = sites.keepalived_site(th, d / "hosts.yml", pack, MASTERS, [WORKER], settings={"tke_k8s_version": "1.31.1", "tke_allow_eol_install": True})
    if not (d / "installed").exists():
        run = timed("install 1.31.1 (2 masters + 1 worker)", INSTALL, inv)
        assert run.rc == 0, run.explain()
        if KEPT:
            (d / "installed").write_text("")
    # the official kubectl of the cluster's minor on h1 reads it (a client independent of the collection's own)
    th.kubectl_client("h1")
    return {"inv": inv, "dir": d, "vip": sites.vip(th)}


@contextlib.contextmanager
def ssh_unreachable(th, name):
    """Drop this machine's SSH packets to one host (a table of this harness instance's own, removed
    afterwards). Stopping the host instead would not do: the harness rewrites /etc/hosts when a host
    starts, which a real machine does not."""
    table = f"upgradetest{th.th_id}"
    rule = (f"table inet {table} {{\n  chain out {{\n    type filter hook output priority 0;\n"
            f"    ip daddr {th.ip(name)} tcp dport 22 drop\n  }}\n}}\n")
    subprocess.run(["nft", "-f", "-"], input=rule, text=True, check=True)
    try:
        yield
    finally:
        subprocess.run(["nft", "delete", "table", "inet", table], check=False)


def kubectl(th, args):
    out = th.ssh("h1", f"kubectl --kubeconfig /etc/kubernetes/admin.conf {args}", check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout


def upgrade_log(th, h):
    """The kubeadm upgrade commands the double ran on a host (its command log)."""
    out = th.ssh(h, "grep '^upgrade ' /var/log/kubeadm-double.log || true").stdout
    return [line for line in out.splitlines() if line.strip()]


def kubeadm_log(th, h):
    """Every kubeadm command the double ran on a host (its command log)."""
    return th.ssh(h, "cat /var/log/kubeadm-double.log 2>/dev/null || true").stdout.splitlines()


def records(th, names=tuple(NODES)):
    return {h: th.ssh(h, "cat /var/lib/offline-pot/phases/upgrade 2>/dev/null || true").stdout.strip() for h in names}


def recorded_at(th, names) -> dict[str, float]:
    """When each node recorded the end of its upgrade (the hosts share this machine's clock)."""
    return {h: float(th.ssh(h, "stat -c %.3Y /var/lib/offline-pot/phases/upgrade").stdout) for h in names}


def snapshots(th) -> int:
    """etcd snapshots kept on h1 (playbooks/etcd_backup.yml, etcd_backup_dir)."""
    return int(th.ssh("h1", "ls /var/backups/etcd/*.db 2>/dev/null | wc -l").stdout.strip() or 0)


def test_a_skew_of_two_minors_is_refused_before_anything_is_touched(four, site):
    th = four
    run = run_playbook(UPGRADE, site["inv"], "-e", json.dumps(
        {"tke_k8s_version": "1.35.0",
         "tke_supported_k8s_versions": ["1.31.1", "1.32.13", "1.33.13", "1.34.10", "1.35.0"]}))
    assert run.rc != 0
    assert ("all: tke_k8s_version: 1.35.0: the cluster runs v1.31.1 (kube-system/kubeadm-config read through h1); "
            "kubeadm upgrades one minor version at a time: upgrade to 1.32 first") in run.output, run.explain()
    assert "carries no kubeadm 1.35.0 (it has: 1.30.4, 1.31.1, 1.32.13, 1.33.13, 1.34.10, 1.35.7, 1.36.3)" in run.output
    assert run.total("changed") == 0, run.explain()
    assert all(upgrade_log(th, h) == [] for h in NODES)
    assert records(th) == {h: "" for h in NODES}
    assert set(th.kubelet_versions().values()) == {"v1.31.1"}


def test_upgrade_fails_at_an_unreachable_worker_and_resumes_there(four, site):
    th = four
    ca = str(site["dir"] / ".tke" / "pki" / "ca.crt")
    backups_before = snapshots(th)
    w = ha.Watcher(f"https://{site['vip']}:6443/healthz", ca)
    w.start()
    started = time.time()
    try:
        with ssh_unreachable(th, WORKER):
            failed = timed("upgrade, h4 unreachable", UPGRADE, site["inv"], "-e", "tke_k8s_version=1.32.13")
    finally:
        w.stop.set()
        w.join()
    print(f"VIP /healthz during the masters' upgrade: {len(w.samples)} samples, "
          f"{sum(1 for dummy, ok in w.samples if not ok)} failed, longest gap {w.longest_gap():.2f} s")
    assert failed.rc != 0
    assert "UNREACHABLE" in failed.output and f"[{WORKER}]" in failed.output, failed.explain()
    assert failed.stats[WORKER]["unreachable"] >= 1, failed.explain()
    # the failed run's summary, read from the API and the nodes at its end, says what is not done
    assert "every node upgraded" not in failed.output, failed.explain()
    assert "cluster v1.31.1 -> v1.32.13: NOT done" in failed.output, failed.explain()
    assert "upgraded to v1.32.13: h1, h2" in failed.output, failed.explain()
    assert (f"not upgraded: {WORKER} (kubelet v1.31.1, its record not read, failed or unreachable in this run)"
            in failed.output), failed.explain()
    # the masters were upgraded one at a time, the VIP always served by a master
    assert w.longest_gap() <= 3.0, f"the VIP did not serve for {w.longest_gap():.2f} s"
    assert records(th, MASTERS) == {"h1": "v1.32.13", "h2": "v1.32.13"}
    done, prev = recorded_at(th, MASTERS), started
    for h in MASTERS:   # per node, from one record to the next (h1's share includes validate and the backup)
        print(f"[timing] {h} upgraded in {done[h] - prev:.1f} s")
        prev = done[h]
    assert upgrade_log(th, "h1")[-1].startswith("upgrade apply v1.32.13")
    assert [line.split()[:2] for line in upgrade_log(th, "h2")] == [["upgrade", "node"]]
    masters_log = {h: upgrade_log(th, h) for h in MASTERS}
    assert snapshots(th) == backups_before + 1   # etcd backed up before the first master's turn

    assert records(th, [WORKER]) == {WORKER: ""}   # h4 reachable again
    resumed = timed("upgrade, resumed", UPGRADE, site["inv"], "-e", "tke_k8s_version=1.32.13")
    assert resumed.rc == 0, resumed.explain()
    # resumed at h4: the masters ran no kubeadm again, only h4 was upgraded
    assert {h: upgrade_log(th, h) for h in MASTERS} == masters_log
    assert [line.split()[:2] for line in upgrade_log(th, WORKER)] == [["upgrade", "node"]]
    upgraded = [t for t in resumed.changed_tasks() if "kubeadm upgrade" in t]
    assert upgraded == [f"TASK [offline_pot.tke.upgrade : Upgrade this node (kubeadm upgrade node)]: changed: [{WORKER}]"], \
        resumed.explain()
    assert "nodes at another version when this run started: h4" in resumed.output
    # (the callback folds long messages: match on the output with its whitespace collapsed)
    assert ("cluster v1.32.13 -> v1.32.13: every node upgraded (the API reports kubelet v1.32.13 on h1, h2, h4)"
            in " ".join(resumed.output.split())), resumed.explain()

    assert th.kubelet_versions() == {h: "v1.32.13" for h in NODES}
    cm = json.loads(kubectl(th, "-n kube-system get configmap kubeadm-config -o json"))
    cluster = yaml.safe_load(cm["data"]["ClusterConfiguration"])
    assert (cluster["apiVersion"], cluster["kubernetesVersion"]) == ("kubeadm.k8s.io/v1beta4", "v1.32.13")
    assert json.loads(kubectl(th, "get --raw /version"))["gitVersion"] == "v1.32.13"
    for h in MASTERS:
        image = th.ssh(h, "grep 'image:' /etc/kubernetes/manifests/kube-apiserver.yaml").stdout
        assert image.strip().endswith(":v1.32.13"), (h, image)
    assert not [n["metadata"]["name"] for n in json.loads(kubectl(th, "get nodes -o json"))["items"]
                if n.get("spec", {}).get("unschedulable")], "a node is left cordoned"


def kubelet_server(th, h):
    return th.ssh(h, "sed -n 's/^ *server: //p' /etc/kubernetes/kubelet.conf").stdout.strip()


def test_the_chain_goes_on_one_minor_at_a_time_and_a_rerun_changes_nothing(four, site):
    th = four
    if th.kubelet_versions() != {h: "v1.32.13" for h in NODES}:
        pytest.skip("the site is not at 1.32.13 (the upgrade above failed)")
    # the official kubectl of each minor lists every node at its version
    assert th.kubectl_client("h1", "1.32") == "v1.32.3"
    assert json.loads(kubectl(th, "get --raw /version"))["gitVersion"] == "v1.32.13"

    # 1.32.13 -> 1.33.13: kubeadm 1.33 runs in the kubelet's local mode, its upgrade points each master's
    # kubelet at the master's own API server (the worker's keeps the endpoint)
    assert {h: kubelet_server(th, h) for h in NODES} == {h: "https://api.tke.com:6443" for h in NODES}
    step = timed("upgrade 1.32.13 -> 1.33.13", UPGRADE, site["inv"], "-e", "tke_k8s_version=1.33.13")
    assert step.rc == 0, step.explain()
    assert ("cluster v1.32.13 -> v1.33.13: every node upgraded (the API reports kubelet v1.33.13 on h1, h2, h4)"
            in " ".join(step.output.split())), step.explain()
    assert records(th) == {h: "v1.33.13" for h in NODES}
    assert th.kubectl_client("h1", "1.33") == "v1.33.9"
    assert th.kubelet_versions() == {h: "v1.33.13" for h in NODES}
    assert {h: kubelet_server(th, h) for h in NODES} == {
        **{h: f"https://{th.ip(h)}:6443" for h in MASTERS}, WORKER: "https://api.tke.com:6443"}
    # which is what the PKI phase renders for 1.33: the store would re-render the masters' kubelet.conf
    # (check mode: it keeps its old copy), and no host has a file to put back
    pki = timed("pki phase at 1.33.13, check mode", INSTALL, site["inv"], "--tags", "pki", "--check", "--diff",
                "-e", "tke_k8s_version=1.33.13")
    assert pki.rc == 0, pki.explain()
    assert [t for t in pki.changed_tasks() if "certificates on the controller" in t], pki.explain()
    assert not [t for t in pki.changed_tasks() if "pki :" in t and "on the controller" not in t], pki.explain()

    # 1.33.13 -> 1.34.10: kubeadm 1.34's NodeLocalCRISocket moves each node's CRI endpoint from the
    # kubelet's flags into the node's own kubelet configuration
    def cri_files(h):
        return th.ssh(h, "cat /var/lib/kubelet/kubeadm-flags.env /var/lib/kubelet/instance-config.yaml 2>/dev/null",
                      check=False).stdout
    assert all("--container-runtime-endpoint=unix:///run/containerd/containerd.sock" in cri_files(h) for h in NODES)
    # the plan first, in check mode (docs/lifecycle.md): every node's turn previewed, nothing changes -
    # no kubeadm upgrade, init or join command on any node, no record, every kubelet and Node as it was

    def upgrading(h):
        return [c for c in kubeadm_log(th, h) if c.startswith(("upgrade apply", "upgrade node", "init ", "join "))]
    before = {h: upgrading(h) for h in NODES}
    plan = timed("upgrade 1.33.13 -> 1.34.10, check mode", UPGRADE, site["inv"], "--check", "--diff",
                 "-e", "tke_k8s_version=1.34.10")
    assert plan.rc == 0, plan.explain()
    assert {h: upgrading(h) for h in NODES} == before and records(th) == {h: "v1.33.13" for h in NODES}
    assert th.kubelet_versions() == {h: "v1.33.13" for h in NODES}
    assert not [n["metadata"]["name"] for n in json.loads(kubectl(th, "get nodes -o json"))["items"]
                if n.get("spec", {}).get("unschedulable")], "check mode left a node cordoned"
    step = timed("upgrade 1.33.13 -> 1.34.10", UPGRADE, site["inv"], "-e", "tke_k8s_version=1.34.10")
    assert step.rc == 0, step.explain()
    assert ("cluster v1.33.13 -> v1.34.10: every node upgraded (the API reports kubelet v1.34.10 on h1, h2, h4)"
            in " ".join(step.output.split())), step.explain()
    assert th.kubectl_client("h1", "1.34") == "v1.34.5"
    assert th.kubelet_versions() == {h: "v1.34.10" for h in NODES}
    for h in NODES:
        files = cri_files(h)
        assert "--container-runtime-endpoint" not in files, (h, files)
        assert 'containerRuntimeEndpoint: "unix:///run/containerd/containerd.sock"' in files, (h, files)
    assert all("--pod-infra-container-image=" in cri_files(h) for h in NODES)

    # 1.34.10 -> 1.35.7: the kubelet of 1.35 refuses cgroup v1 unless its configuration says otherwise
    v1 = [h for h in NODES if th.ssh(h, "stat -fc %T /sys/fs/cgroup").stdout.strip() != "cgroup2fs"]
    allow = []
    if v1:
        logs = {h: upgrade_log(th, h) for h in NODES}
        refused = timed("upgrade to 1.35.7 on cgroup v1, refused", UPGRADE, site["inv"], "-e", "tke_k8s_version=1.35.7",
                        "-e", "tke_allow_cgroup_v1=false")
        said = " ".join(refused.output.split())
        assert refused.rc != 0 and refused.total("changed") == 0, refused.explain()
        assert (f"{', '.join(v1)}: cgroup v1 (/sys/fs/cgroup is not a cgroup2 mount); the kubelet of Kubernetes 1.35.7 "
                "does not start on cgroup v1") in said, refused.explain()
        assert {h: upgrade_log(th, h) for h in NODES} == logs and records(th) == {h: "v1.34.10" for h in NODES}
        allow = ["-e", "tke_allow_cgroup_v1=true"]
    # containerd goes with the release: the pack's 2.1.9 for 1.35 (for_kubernetes) replaces 1.6.20 on each
    # node after its drain; a container running on the worker then (not a pod: ctr's own) keeps running
    # and its image stays listed (2.x takes over 1.6's metadata and shims)
    assert all(" 1.6.20" in th.ssh(h, "/usr/local/bin/containerd --version").stdout for h in NODES)
    th.ssh(WORKER, "ctr -n k8s.io images pull --hosts-dir /etc/containerd/certs.d --user admin:test-admin-password "
                   "registry.tke.com/library/pause:3.10.1 >/dev/null && ctr -n k8s.io run -d "
                   "registry.tke.com/library/pause:3.10.1 upgrade-proof >/dev/null", timeout=120)
    step = timed("upgrade 1.34.10 -> 1.35.7", UPGRADE, site["inv"], "-e", "tke_k8s_version=1.35.7", *allow)
    assert step.rc == 0, step.explain()
    # the run report says so, from the nodes: the runtime phase's containerd changed on each of them
    report, changes = report_changes(step)
    assert report.name.endswith("-upgrade.html") and {(h, "runtime", "containerd") for h in NODES} <= set(changes), changes
    assert "with them containerd 1.6.20 -> 2.1.9" in " ".join(step.output.split()), step.explain()
    for h in NODES:
        server = th.ssh(h, "ctr version 2>/dev/null | sed -n '/^Server:/,$s/^ *Version: *//p'").stdout.strip()
        assert server.startswith("2.1.9"), (h, server)
        assert th.ssh(h, "sed -n 's/^version = //p' /etc/containerd/config.toml").stdout.strip() == "3", h
    assert "RUNNING" in th.ssh(WORKER, "ctr -n k8s.io tasks ls 2>/dev/null | grep upgrade-proof").stdout
    assert "registry.tke.com/library/pause:3.10.1" in th.ssh(WORKER, "ctr -n k8s.io images ls -q 2>/dev/null").stdout
    th.ssh(WORKER, "ctr -n k8s.io tasks kill -s 9 upgrade-proof; sleep 1; ctr -n k8s.io containers rm upgrade-proof",
           check=False)
    # replaced after each node's drain, before its kubeadm
    tasks = [line for line in step.output.splitlines() if line.startswith("TASK [")]
    first = next(i for i, t in enumerate(tasks) if "container_runtime :" in t)
    assert any("Drain this node" in t for t in tasks[:first]) and any("kubeadm upgrade apply" in t for t in tasks[first:])
    assert ("cluster v1.34.10 -> v1.35.7: every node upgraded (the API reports kubelet v1.35.7 on h1, h2, h4)"
            in " ".join(step.output.split())), step.explain()
    assert th.kubectl_client("h1", "1.35") == "v1.35.2"
    assert th.kubelet_versions() == {h: "v1.35.7" for h in NODES}
    kubelet_config = json.loads(kubectl(th, "-n kube-system get configmap kubelet-config -o json"))["data"]["kubelet"]
    assert (yaml.safe_load(kubelet_config).get("failCgroupV1") is False) == bool(v1), kubelet_config
    for h in NODES:
        assert "--pod-infra-container-image" not in cri_files(h), h
        assert ("failCgroupV1: false" in th.ssh(h, "cat /var/lib/kubelet/config.yaml").stdout) == (h in v1), h
    logs = {h: upgrade_log(th, h) for h in NODES}
    assert all(log[-1].split()[-1] == "--ignore-preflight-errors=SystemVerification" for log in logs.values()) == bool(v1)

    # 1.35.7 -> 1.36.3: the same containerd (2.1.9 serves both), the sandbox image of 1.36 (pause 3.10.2)
    # in its configuration; kubeadm 1.36's post-upgrade leaves kubeadm-flags.env as it is
    flags = {h: th.ssh(h, "cat /var/lib/kubelet/kubeadm-flags.env").stdout for h in NODES}
    step = timed("upgrade 1.35.7 -> 1.36.3", UPGRADE, site["inv"], "-e", "tke_k8s_version=1.36.3", *allow)
    assert step.rc == 0, step.explain()
    said = " ".join(step.output.split())
    assert ("cluster v1.35.7 -> v1.36.3: every node upgraded (the API reports kubelet v1.36.3 on h1, h2, h4)"
            in said and "with them containerd" not in said), step.explain()
    assert th.kubectl_client("h1", "1.36") == "v1.36.3"
    assert th.kubelet_versions() == {h: "v1.36.3" for h in NODES}
    for h in NODES:
        assert 'sandbox = "registry.tke.com/library/pause:3.10.2"' in th.ssh(h, "cat /etc/containerd/config.toml").stdout, h
        assert th.ssh(h, "cat /var/lib/kubelet/kubeadm-flags.env").stdout == flags[h], h
    logs = {h: upgrade_log(th, h) for h in NODES}

    again = timed("upgrade, re-run", UPGRADE, site["inv"], "-e", "tke_k8s_version=1.36.3", *allow)
    assert again.rc == 0 and again.changed_hosts() == {}, again.explain()
    assert report_changes(again)[1] == [(h, "-", "nothing") for h in NODES]
    assert {h: upgrade_log(th, h) for h in NODES} == logs
    print("[timing]", TIMES)


# --- day 2 at the release the chain reached: nodes added and removed --------------------------------
def flat(text):
    return " ".join(text.split())


@pytest.fixture(scope="module")
def six(four):
    """The upgraded site's hosts plus h5 and h6, fresh, on the same harness instance."""
    th = TestHosts(th_id=four.th_id, count=6, site_dirs=dict(four.site_dirs))
    th.reset("h5", "h6")
    th.up()
    yield th
    if os.environ.get("TH_KEEP") != "1":
        th.down("h5", "h6")


@pytest.fixture(scope="module")
def day2(six, site):
    """The upgraded site's inventories at the release the chain reached (with cgroup v1 allowed
    where the hosts have it, as the chain's last steps ran)."""
    pack = fixture_pack.ensure_pack(TOP / ".cache" / "fixture-pack" / "e2e", Path(six.info["TH_REPO"]))
    kubeadm_double.install(six, ["h5", "h6"])
    v1 = six.ssh("h1", "stat -fc %T /sys/fs/cgroup").stdout.strip() != "cgroup2fs"
    settings = {"tke_k8s_version": TARGET, **({"tke_allow_cgroup_v1": True} if v1 else {})}

    def inventory(masters, workers, name="hosts.yml", **host_vars):
        return sites.keepalived_site(six, site["dir"] / name, pack, masters, workers, settings=settings, **host_vars)
    return {"dir": site["dir"], "inventory": inventory}


def kubectl_run(th, args, stdin=None):
    import subprocess
    argv = kubeadm_double.ssh_argv(th, "h1") + [f"kubectl --kubeconfig /etc/kubernetes/admin.conf {args}"]
    return subprocess.run(argv, input=stdin, text=True, capture_output=True, timeout=120, check=False)


def nodes(th):
    out = kubectl_run(th, "get nodes -o json")
    assert out.returncode == 0, out.stderr
    return {n["metadata"]["name"]: n for n in json.loads(out.stdout)["items"]}


def node_list(th):
    return sorted(nodes(th))


def pods_on(th, node):
    out = kubectl_run(th, f"get pods -A --field-selector spec.nodeName={node} -o json")
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
def installed(six, day2):
    """install.yml at the release the chain reached, over the upgraded site: every phase runs again
    (its inputs name another release) and finds nothing of the cluster to change - what the upgrade
    left is what an install of that release makes (no kubeadm phase runs: the upgrade recorded what
    kubeadm's upgrade made). What it writes is the record of the new inputs: each phase's record on
    each host, tke.json, and the controller's PKI store (the masters' kubelet.conf in kubeadm's local
    mode from 1.33, as kubeadm's upgrade wrote it on the hosts); the re-run after it changes nothing."""
    if six.kubelet_versions() != {h: f"v{TARGET}" for h in NODES}:
        pytest.skip(f"the site is not at {TARGET} (the upgrade chain above failed)")
    inv = day2["inventory"](["h1", "h2"], ["h4"])
    logged = {h: kubeadm_log(six, h) for h in NODES}
    run = timed(f"install.yml at {TARGET} over the upgraded site", INSTALL, inv)
    ran = {h: [c for c in kubeadm_log(six, h)[len(logged[h]):] if c.startswith(("init ", "join "))] for h in NODES}
    assert ran == {h: [] for h in NODES}, ran
    records = ("TASK [offline_pot.tke.tke : Record the phase done on the host]:",
               "TASK [Render tke.json (TKEStack installer state) from the inventory]:",
               "TASK [offline_pot.tke.pki : Issue or reuse the cluster's certificates on the controller]:")
    assert run.rc == 0 and [t for t in run.changed_tasks() if not t.startswith(records)] == [], run.explain()
    return inv


def test_install_at_the_reached_release_changes_nothing(six, day2, installed):
    assert node_list(six) == ["h1", "h2", "h4"]
    rerun_changes_nothing("re-run after the install", installed)
    # containerd 2's configuration (version 3) keeps the registry credential out of a --diff: a changed
    # password previewed shows as a masked change of config.toml, the password nowhere in the output
    changed = "reg-Changed-2468-xyz"
    preview = timed("registry password change, --check --diff of the runtime phase", INSTALL, installed, "--check",
                    "--diff", "--tags", "runtime", *NO_RESUME, "-e", f"container_runtime_registry_password={changed}")
    assert preview.rc == 0 and changed not in preview.output, preview.explain()
    assert "/etc/containerd/config.toml: a secret changed (masked, not shown)" in preview.output, preview.explain()
    assert all(six.ssh(h, "sed -n 's/^version = //p' /etc/containerd/config.toml").stdout.strip() == "3" for h in NODES)


@pytest.fixture(scope="module")
def two_workers(six, day2, installed):
    inv = day2["inventory"](["h1", "h2"], ["h4", "h5", "h6"])
    run = timed("add 2 workers", INSTALL, inv)
    assert run.rc == 0, run.explain()
    return inv, run


def test_add_two_workers(six, day2, two_workers):
    inv, run = two_workers
    assert node_list(six) == ["h1", "h2", "h4", "h5", "h6"]
    ran = run.phase_hosts()
    # the new workers run every phase of a worker; the existing hosts only where their
    # configuration names every host: precheck's peers, /etc/hosts and chrony (host_init's names
    # tasks alone), the TKE server certificate of the masters and the registry host (the PKI, run
    # together: the worker h4, whose files name no other host, with them)
    for phase in ("precheck", "host_init", "pki"):
        assert sorted(ran[phase]) == HOSTS, (phase, ran)
    for phase in ("offline", "runtime", "registry", "ha", "nodes", "network"):
        assert sorted(ran[phase]) == ["h5", "h6"], (phase, ran)
    assert ran["etcd"] == [] and ran["control_plane"] == [], ran
    # and the run says why the existing hosts ran, and what
    assert ("(h1, h2, h4: its configuration names h5, h6 (added): only what names them; h5, h6: new)"
            in flat(run.output)), run.explain()
    assert "(h1, h2: its configuration names h5, h6 (added); h4: runs together with" in flat(run.output), \
        run.explain()
    names_tasks = {"offline_pot.tke.host_init : Managed /etc/hosts block (registry, API domain, nodes)",
                   "offline_pot.tke.host_init : Configure chrony (NTP servers, or the first master as the source)",
                   "offline_pot.tke.host_init : The state this role keeps on the host, for the phase's record "
                   "(a drifted one runs the phase again)"}
    for host in ("h1", "h2", "h4", "h5"):
        host_init = {t for t in run.host_tasks(host) if t.startswith("offline_pot.tke.host_init :")}
        if host == "h5":
            assert names_tasks < host_init and "offline_pot.tke.host_init : Install chrony" in host_init, host_init
        else:
            assert host_init == names_tasks, (host, host_init)
    # the changes on the existing hosts are those phases' (the configuration naming h5 and h6, the records)
    for host in ("h1", "h2", "h4"):
        for line in changed_by_host(run).get(host, []):
            assert any(f"offline_pot.tke.{r} :" in line for r in ("precheck", "host_init", "pki", "tke")) or \
                "Record the phase done" in line, line
        assert {"h5", "h6"} <= managed_hosts(six, host)
    ready = {h: [c["status"] for c in n["status"].get("conditions", []) if c["type"] == "Ready"]
             for h, n in nodes(six).items()}
    assert ready["h5"] == ready["h6"] == ["True"], ready
    rerun_changes_nothing("re-run after adding 2 workers", inv)


def test_removal_refused_before_anything_is_touched(six, day2, two_workers):
    inv, dummy = two_workers

    def pod(i, name, node, kind):
        owner = {"apiVersion": "apps/v1", "kind": kind, "name": name.split("-")[0], "controller": True,
                 "uid": "00000000-0000-0000-0000-00000000000" + str(i)}
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "default", "labels": {"app": name.split("-")[0]},
                             "ownerReferences": [owner]},
                "spec": {"nodeName": node, "containers": [{"name": "c", "image": "registry.tke.com/library/pause:3.9"}]}}
    pods = [pod(i, *p) for i, p in enumerate(PODS)]
    made = kubectl_run(six, "create --validate=false -f -", json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}))
    assert made.returncode == 0, made.stderr
    before = nodes(six)

    def refused(inventory, *args, reason, contacted=False):
        run = run_playbook(REMOVE, inventory, *args)
        assert run.rc != 0 and reason in flat(run.output), run.explain()
        assert run.total("changed") == 0, run.explain()
        # what the inventory alone decides is refused before any host is contacted (no host read)
        assert ("Read which machine this is" in run.output) == contacted, run.explain()
        return run

    refused(inv, "-e", "node=h6", reason="confirm with -e remove_node_confirm=true; nothing was touched")
    # h1 is the only etcd member (and a master of two)
    refused(inv, "-e", "node=h1", "-e", "remove_node_confirm=true",
            reason="not removed, nothing touched: h1: the last etcd member (the cluster's data would be gone)")
    one_master = day2["inventory"](["h1"], ["h2", "h4", "h5", "h6"], name="one-master.yml")
    refused(one_master, "-e", "node=h1", "-e", "remove_node_confirm=true",
            reason="h1: the last master (the cluster would have no control plane); h1: the last etcd member")
    lost = day2["inventory"](["h1", "h2"], ["h4", "h5", "h6"], name="lost.yml",
                             h6={"ansible_host": six.ip("h1").rsplit(".", 1)[0] + ".99"})
    refused(lost, "-e", "node=h6", "-e", "remove_node_confirm=true",
            reason="h6: unreachable - it can be neither drained nor reset; -e force=true removes it", contacted=True)
    # nothing touched: the Nodes as they were (none cordoned), the pods in place, h6's kubelet running
    after = nodes(six)
    assert sorted(after) == sorted(before) and not any(n["spec"].get("unschedulable") for n in after.values())
    assert pods_on(six, "h6") == ["agent-h6", "web-1"]
    assert six.ssh("h6", "systemctl is-active kubelet").stdout.strip() == "active"


@pytest.fixture(scope="module")
def removed(six, day2, two_workers):
    inv, dummy = two_workers
    # web-1 running and Ready, under a budget that allows no disruption: the drain is held back
    # (the API's 429, retried until the timeout), the removal stops before the reset; once the
    # budget allows it, the same command removes the node
    status = {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
    made = kubectl_run(six, "-n default patch pod web-1 --subresource=status --type=merge -p '" + json.dumps(status) + "'")
    assert made.returncode == 0, made.stderr
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}}
    made = kubectl_run(six, "apply -f -", json.dumps(pdb))
    assert made.returncode == 0, made.stderr
    held = run_playbook(REMOVE, inv, "-e", "node=h6", "-e", "remove_node_confirm=true", "-e", "remove_node_drain_timeout=6")
    assert held.rc != 0 and "Node h6: timed out after 6 s waiting for pod default/web-1 to be evicted " \
        "(refused: a PodDisruptionBudget holds it)" in flat(held.output), held.explain()
    assert pods_on(six, "h6") == ["agent-h6", "web-1"] and nodes(six)["h6"]["spec"].get("unschedulable")
    assert six.ssh("h6", "systemctl is-active kubelet").stdout.strip() == "active"
    assert kubectl_run(six, "-n default delete pdb web").returncode == 0
    run = timed("remove worker h6", REMOVE, inv, "-e", "node=h6", "-e", "remove_node_confirm=true")
    assert run.rc == 0, run.explain()
    return inv, run


def test_remove_a_worker(six, day2, removed):
    inv, run = removed
    assert "h6: Node found, evicted: default/web-1, left: default/agent-h6" in flat(run.output), run.explain()
    assert node_list(six) == ["h1", "h2", "h4", "h5"]
    assert pods_on(six, "h5") == ["web-2"]
    assert six.ssh("h6", "systemctl is-active kubelet", check=False).stdout.strip() != "active"
    assert six.ssh("h6", "ls /etc/kubernetes/kubelet.conf /var/lib/offline-pot 2>&1", check=False).returncode != 0
    journal = json.loads((day2["dir"] / ".tke" / "journal.json").read_text())
    assert not [p for p, hosts in journal["phases"].items() if "h6" in hosts], journal["phases"]
    # a second run changes nothing (the Node is gone, the host reset)
    # (--diff: a failure shows what the cleanup found, and h6's side of it)
    again = timed("remove worker h6 again", REMOVE, inv, "-e", "node=h6", "-e", "remove_node_confirm=true", "--diff")
    assert again.rc == 0 and again.changed_hosts() == {}, again.explain() + six.ssh(
        "h6", "ls -la --time-style=full-iso /etc/cni /etc/cni/net.d /var/lib/cni; systemctl status containerd kubelet;"
        " journalctl -b --no-pager -n 40 -u containerd", check=False).stdout
    # h6 out of the inventory: install.yml tells the remaining hosts, and says which and why
    five = day2["inventory"](["h1", "h2"], ["h4", "h5"])
    told = timed("install.yml without h6", INSTALL, five)
    assert told.rc == 0, told.explain()
    assert sorted(told.phase_hosts()["host_init"]) == ["h1", "h2", "h4", "h5"], told.explain()
    assert "its configuration names h6 (removed)" in flat(told.output), told.explain()
    assert told.phase_hosts()["network"] == [] and told.phase_hosts()["runtime"] == [], told.explain()
    for host in ("h1", "h4"):
        assert "h6" not in managed_hosts(six, host)
    assert node_list(six) == ["h1", "h2", "h4", "h5"]
    rerun_changes_nothing("re-run after removing h6", five)


@pytest.fixture(scope="module")
def master_added(six, day2, removed):
    inv = day2["inventory"](["h1", "h2", "h6"], ["h4", "h5"])
    run = timed("add master h6", INSTALL, inv)
    assert run.rc == 0, run.explain()
    return inv, run


def test_add_a_master(six, day2, master_added):
    inv, run = master_added
    assert node_list(six) == ["h1", "h2", "h4", "h5", "h6"]
    labels = nodes(six)["h6"]["metadata"].get("labels") or {}
    assert "node-role.kubernetes.io/control-plane" in labels, labels
    ran = run.phase_hosts()
    # the masters' peers (keepalived), the workers' view of the masters (ha, nodes): named there
    assert sorted(ran["ha"]) == HOSTS and sorted(ran["control_plane"]) == ["h1", "h2", "h6"], ran
    assert "h1, h2, h4, h5: its configuration names h6 (added); h6: new" in flat(run.output), run.explain()
    assert ran["runtime"] == ["h6"] and ran["network"] == ["h6"], ran
    # keepalived on every master names the new one as a peer
    for host in ("h1", "h2"):
        conf = six.ssh(host, "cat /etc/keepalived/keepalived.conf").stdout
        assert six.ip("h6") in conf, (host, conf)
    assert six.ssh("h6", "systemctl is-active keepalived").stdout.strip() == "active"
    # the API server of the new master serves, with a certificate for its own address
    assert six.ssh("h6", "python3 -c 'import ssl, urllib.request; print(urllib.request.urlopen("
                         f"\"https://{six.ip('h6')}:6443/healthz\", context=ssl.create_default_context("
                         "cafile=\"/etc/kubernetes/pki/ca.crt\")).read().decode())'").stdout.strip() == "ok"
    rerun_changes_nothing("re-run after adding master h6", inv)
    print("\n[timing] " + ", ".join(f"{k}: {v} s" for k, v in TIMES.items()))

"""playbooks/upgrade.yml on an installed 1.31 site: 3 masters with the keepalived VIP, 1 worker
(h4), external etcd on h1, the fixture site pack carrying kubeadm and kubelet 1.30.4, 1.31.1,
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
from harness.playbook import TOP, run_playbook
from harness.testhosts import TestHosts
import ha_support as ha

INSTALL = TOP / "install.yml"
UPGRADE = TOP / "playbooks" / "upgrade.yml"
MASTERS, WORKER = ["h1", "h2", "h3"], "h4"
NODES = MASTERS + [WORKER]
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
        kubeadm_double.install(th)
    inv = th.write_inventory(
        d / "hosts.yml", groups={"masters": MASTERS, "workers": [WORKER], "etcd": ["h1"], "registry": ["h1"]},
        group_vars={"tke_ha_mode": "keepalived", "tke_vip": sites.vip(th), "tke_site_pack": str(pack),
                    "tke_k8s_version": "1.31.1", "site_repo_packages": ["conntrack", "socat"],
                    "precheck_disk": [{"path": "/var/lib", "min_free_gb": 1}],
                    "precheck_disk_etcd": [{"path": "/var/lib/etcd", "min_free_gb": 1}]})
    if not (d / "installed").exists():
        run = timed("install 1.31.1 (3 masters + 1 worker)", INSTALL, inv)
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


def kubelet_versions(th):
    nodes = json.loads(kubectl(th, "get nodes -o json"))["items"]
    return {n["metadata"]["name"]: n["status"]["nodeInfo"]["kubeletVersion"] for n in nodes}


def upgrade_log(th, h):
    """The kubeadm upgrade commands the double ran on a host (its command log)."""
    out = th.ssh(h, "grep '^upgrade ' /var/log/kubeadm-double.log || true").stdout
    return [line for line in out.splitlines() if line.strip()]


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
    assert set(kubelet_versions(th).values()) == {"v1.31.1"}


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
    assert "upgraded to v1.32.13: h1, h2, h3" in failed.output, failed.explain()
    assert (f"not upgraded: {WORKER} (kubelet v1.31.1, its record not read, failed or unreachable in this run)"
            in failed.output), failed.explain()
    # the masters were upgraded one at a time, the VIP always served by a master
    assert w.longest_gap() <= 3.0, f"the VIP did not serve for {w.longest_gap():.2f} s"
    assert records(th, MASTERS) == {"h1": "v1.32.13", "h2": "v1.32.13", "h3": "v1.32.13"}
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
    assert ("cluster v1.32.13 -> v1.32.13: every node upgraded (the API reports kubelet v1.32.13 on h1, h2, h3, h4)"
            in " ".join(resumed.output.split())), resumed.explain()

    assert kubelet_versions(th) == {h: "v1.32.13" for h in NODES}
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
    if kubelet_versions(th) != {h: "v1.32.13" for h in NODES}:
        pytest.skip("the site is not at 1.32.13 (the upgrade above failed)")
    # the official kubectl of each minor lists every node at its version
    assert th.kubectl_client("h1", "1.32") == "v1.32.3"
    assert json.loads(kubectl(th, "get --raw /version"))["gitVersion"] == "v1.32.13"

    # 1.32.13 -> 1.33.13: kubeadm 1.33 runs in the kubelet's local mode, its upgrade points each master's
    # kubelet at the master's own API server (the worker's keeps the endpoint)
    assert {h: kubelet_server(th, h) for h in NODES} == {h: "https://api.tke.com:6443" for h in NODES}
    step = timed("upgrade 1.32.13 -> 1.33.13", UPGRADE, site["inv"], "-e", "tke_k8s_version=1.33.13")
    assert step.rc == 0, step.explain()
    assert ("cluster v1.32.13 -> v1.33.13: every node upgraded (the API reports kubelet v1.33.13 on h1, h2, h3, h4)"
            in " ".join(step.output.split())), step.explain()
    assert records(th) == {h: "v1.33.13" for h in NODES}
    assert th.kubectl_client("h1", "1.33") == "v1.33.9"
    assert kubelet_versions(th) == {h: "v1.33.13" for h in NODES}
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
    step = timed("upgrade 1.33.13 -> 1.34.10", UPGRADE, site["inv"], "-e", "tke_k8s_version=1.34.10")
    assert step.rc == 0, step.explain()
    assert ("cluster v1.33.13 -> v1.34.10: every node upgraded (the API reports kubelet v1.34.10 on h1, h2, h3, h4)"
            in " ".join(step.output.split())), step.explain()
    assert th.kubectl_client("h1", "1.34") == "v1.34.5"
    assert kubelet_versions(th) == {h: "v1.34.10" for h in NODES}
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
        refused = timed("upgrade to 1.35.7 on cgroup v1, refused", UPGRADE, site["inv"], "-e", "tke_k8s_version=1.35.7")
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
    assert ("cluster v1.34.10 -> v1.35.7: every node upgraded (the API reports kubelet v1.35.7 on h1, h2, h3, h4)"
            in " ".join(step.output.split())), step.explain()
    assert th.kubectl_client("h1", "1.35") == "v1.35.2"
    assert kubelet_versions(th) == {h: "v1.35.7" for h in NODES}
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
    assert ("cluster v1.35.7 -> v1.36.3: every node upgraded (the API reports kubelet v1.36.3 on h1, h2, h3, h4)"
            in said and "with them containerd" not in said), step.explain()
    assert th.kubectl_client("h1", "1.36") == "v1.36.3"
    assert kubelet_versions(th) == {h: "v1.36.3" for h in NODES}
    for h in NODES:
        assert 'sandbox = "registry.tke.com/library/pause:3.10.2"' in th.ssh(h, "cat /etc/containerd/config.toml").stdout, h
        assert th.ssh(h, "cat /var/lib/kubelet/kubeadm-flags.env").stdout == flags[h], h
    logs = {h: upgrade_log(th, h) for h in NODES}

    again = timed("upgrade, re-run", UPGRADE, site["inv"], "-e", "tke_k8s_version=1.36.3", *allow)
    assert again.rc == 0 and again.changed_hosts() == {}, again.explain()
    assert {h: upgrade_log(th, h) for h in NODES} == logs
    print("[timing]", TIMES)

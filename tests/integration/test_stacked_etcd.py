"""Stacked etcd made real: three masters with no etcd group (the collection's stacked etcd: one
member per master, in kubeadm's static pod), the API VIP held by keepalived, the registry on h1,
everything from the fixture site pack.

kubeadm and kubelet are the test doubles (tests/kubeadm_double): `init` writes the etcd static
pod, each `join --control-plane` adds its member to the cluster (a learner, then promoted) before
writing its own manifest, and the kubelet double runs the pack's real etcd with the manifest's
command line; the kube-apiserver double of every master stores its objects in that etcd through
https://127.0.0.1:2379. So every master's API answers with the same cluster, also when the VIP
holder is gone.

The site installs Kubernetes 1.36.3, the newest release the collection offers (the doubles act
as kubeadm and kubelet 1.36, the API double validates with the 1.36 schemas, the official
kubectl 1.36 reads it), with a worker (h4), on containerd 2.1.9 (the pack's choice for the release).
On this machine's cgroup v1 test hosts the release is first refused at precheck, every host named,
nothing touched (the kubelet refuses cgroup v1 by default from 1.35, KEP-5573); the site then allows it (tke_allow_cgroup_v1): every kubelet runs with
failCgroupV1: false, kubeadm's SystemVerification check is ignored at each join's preflight. kubeadm
runs in the kubelet's local mode, so a joining master adds its stacked etcd member in the phase
etcd-join and every join waits for its kubelet in kubelet-wait-bootstrap, both `join phase` commands
from 1.35 (docs/kubeadm.md); each master's kubelet talks to its own API server, the worker's to the
endpoint; with NodeLocalCRISocket each node's CRI endpoint is its own kubelet configuration
(instance-config.yaml), and from 1.35 kubeadm-flags.env carries no --pod-infra-container-image either
(the kubelet of 1.35 has no such flag); etcd's manifest names etcd 3.6.8 with 3.6's flags (the
kubelet double runs the pack's older etcd with their experimental names). A second run changes nothing.
(Kubernetes 1.33 and 1.34 join through the `local-mode` step, `kubeadm join --skip-phases ...`: the
kubeadm double's and kubeadm_phases' unit tests.)
"""
import json
import tomllib
from pathlib import Path

from harness import fixture_pack, kubeadm_double
from harness.playbook import NO_RESUME, TOP, run_playbook
from harness.sites import vip
from harness.testhosts import TestHosts

import ha_support as ha

INSTALL = TOP / "install.yml"
MASTERS = ["h1", "h2", "h3"]
WORKER = "h4"
NODES = MASTERS + [WORKER]
ETCDCTL = ("ETCDCTL_API=3 etcdctl --endpoints={ep} --cacert=/etc/kubernetes/pki/etcd/ca.crt "
           "--cert=/etc/kubernetes/pki/etcd/healthcheck-client.crt --key=/etc/kubernetes/pki/etcd/healthcheck-client.key ")


def kubectl(th, host, server, args):
    return th.ssh(host, f"kubectl --kubeconfig /etc/kubernetes/admin.conf --server https://{server}:6443 "
                        f"--request-timeout=20s {args}", timeout=120)


def node_names(th, host, server):
    return sorted(n.split("/", 1)[1] for n in kubectl(th, host, server, "get nodes -o name").stdout.split())


def members(th, host, endpoint="https://127.0.0.1:2379"):
    return json.loads(th.ssh(host, ETCDCTL.format(ep=endpoint) + "member list -w json").stdout)["members"]


def test_three_stacked_masters_share_one_etcd(testhosts, tmp_path):
    th = TestHosts(th_id=testhosts.th_id, count=4)
    th.reset(WORKER)
    th.up()
    try:
        three_stacked_masters_and_a_worker(th, tmp_path)
    finally:
        th.down(WORKER)


def three_stacked_masters_and_a_worker(th, tmp_path):
    pack = fixture_pack.ensure_pack(TOP / ".cache" / "fixture-pack" / "e2e", Path(th.info["TH_REPO"]))
    kubeadm_double.install(th)
    the_vip = vip(th)
    settings = {"tke_ha_mode": "keepalived", "tke_vip": the_vip, "tke_site_pack": str(pack),
                "tke_k8s_version": "1.36.3", "site_repo_packages": ["conntrack", "socat"],
                "precheck_disk": [{"path": "/var/lib", "min_free_gb": 1}],
                "precheck_disk_etcd": [{"path": "/var/lib/etcd", "min_free_gb": 1}]}
    groups = {"masters": MASTERS, "workers": [WORKER], "registry": ["h1"]}
    inv = th.write_inventory(tmp_path / "hosts.yml", groups=groups, group_vars={**settings, "tke_allow_cgroup_v1": False})
    # the kubelet's own test: the type of the file system at /sys/fs/cgroup
    v1 = [h for h in NODES if th.ssh(h, "stat -fc %T /sys/fs/cgroup").stdout.strip() != "cgroup2fs"]
    if v1:
        refused = run_playbook(INSTALL, inv)
        said = " ".join(refused.output.split())
        # (the controller renders the site's tke.json from the inventory before any phase)
        assert refused.rc != 0 and [t for t in refused.changed_tasks() if "tke.json" not in t] == [], refused.explain()
        for h in v1:
            assert (f"{h}: cgroup: cgroup v1 (/sys/fs/cgroup is not a cgroup2 mount); the kubelet of Kubernetes "
                    "1.36.3 does not start on cgroup v1") in said, refused.explain()
        assert "set tke_allow_cgroup_v1: true" in said, refused.explain()
        assert not [h for h in NODES if th.ssh(h, "test -e /etc/kubernetes/manifests", check=False).returncode == 0]
        inv = th.write_inventory(tmp_path / "hosts.yml", groups=groups, group_vars={**settings, "tke_allow_cgroup_v1": True})
    result = run_playbook(INSTALL, inv)
    assert result.rc == 0, result.explain()
    # the kubelet of every node runs on cgroup v1 because its configuration says so (kubeadm init
    # uploaded the KubeletConfiguration, each join wrote it to config.yaml)
    for h in v1:
        assert "failCgroupV1: false" in th.ssh(h, "cat /var/lib/kubelet/config.yaml").stdout, h

    # kubeadm's static pod brings no etcdctl to the host: the control_plane phase installed the pack's
    # on every master (etcd_backup.yml and remove_node.yml run it there); the doubles' own is elsewhere
    for h in MASTERS:
        assert th.ssh(h, "dpkg-query -W -f '${Status}\n' etcd-client; command -v etcdctl").stdout.split() == \
            ["install", "ok", "installed", "/usr/bin/etcdctl"], h
    # kubeadm's stacked etcd: one member per master, every one started and voting (no learner left)
    listed = members(th, "h1")
    assert sorted(m["name"] for m in listed) == MASTERS, listed
    assert not [m for m in listed if m.get("isLearner")], listed
    assert sorted(u for m in listed for u in m["clientURLs"]) == sorted(f"https://{th.ip(h)}:2379" for h in MASTERS)
    for h in MASTERS:
        manifest = th.ssh(h, "cat /etc/kubernetes/manifests/etcd.yaml").stdout
        assert f"--initial-advertise-peer-urls=https://{th.ip(h)}:2380" in manifest
        assert "etcd:3.6.8-0" in manifest and "--feature-gates=InitialCorruptCheck=true" in manifest
        # the first master's member started a new cluster, the others joined the existing one
        assert ("--initial-cluster-state=existing" in manifest) == (h != "h1"), (h, manifest)
        assert th.ssh(h, "pgrep -x etcd >/dev/null && echo up").stdout.strip() == "up"
        log = th.ssh(h, "journalctl -u kubelet --no-pager", timeout=60).stdout
        assert "I storage: etcd https://127.0.0.1:2379" in log and "W storage: no etcd answers" not in log, (h, log[-3000:])

    # the joins ran 1.36's phases (those of 1.35) one by one: etcd-join adds the member, kubelet-wait-bootstrap waits for
    # the kubelet, between kubelet-start and control-plane-join
    def join_steps(h):
        log = th.ssh(h, "grep '^join ' /var/log/kubeadm-double.log").stdout
        return [line.split()[2] if line.split()[1] == "phase" else "join " + line.split()[-1]
                for line in log.splitlines()]
    for h in ("h2", "h3"):
        assert join_steps(h) == ["preflight", "control-plane-prepare", "kubelet-start", "etcd-join",
                                 "kubelet-wait-bootstrap", "control-plane-join"], h
    assert join_steps(WORKER) == ["preflight", "kubelet-start", "kubelet-wait-bootstrap"]
    # the local mode: each master's kubelet talks to its own API server, the worker's to the endpoint
    for h in NODES:
        server = th.ssh(h, "sed -n 's/^ *server: //p' /etc/kubernetes/kubelet.conf").stdout.strip()
        assert server == (f"https://{th.ip(h)}:6443" if h in MASTERS else "https://api.tke.com:6443"), (h, server)

    # NodeLocalCRISocket: the node's CRI endpoint in its own kubelet configuration, not a flag
    for h in NODES:
        files = th.ssh(h, "cat /var/lib/kubelet/instance-config.yaml; cat /var/lib/kubelet/kubeadm-flags.env").stdout
        assert 'containerRuntimeEndpoint: "unix:///run/containerd/containerd.sock"' in files, (h, files)
        assert "--container-runtime-endpoint" not in files and "--pod-infra-container-image" not in files, (h, files)

    # every master's own API server lists the same four nodes, at 1.36 (the official kubectl 1.36)
    for h in MASTERS:
        assert th.kubectl_client(h) == "v1.36.3"
    for h in MASTERS:
        assert node_names(th, h, th.ip(h)) == NODES, h
    nodes = json.loads(kubectl(th, "h1", th.ip("h1"), "get nodes -o json").stdout)["items"]
    assert {n["metadata"]["name"]: n["status"]["nodeInfo"]["kubeletVersion"] for n in nodes} == \
        {h: "v1.36.3" for h in NODES}
    assert json.loads(kubectl(th, "h1", th.ip("h1"), "get --raw /version").stdout)["gitVersion"] == "v1.36.3"
    # kubeadm read every kubeconfig the PKI phase placed without a warning (its server is the expected one)
    for h in NODES:
        warned = th.ssh(h, "cat /var/log/kubeadm-double-warnings.log 2>/dev/null || true").stdout
        assert "unexpected API Server URL" not in warned, (h, warned)

    # containerd 2.1.9, the pack's choice for 1.36 (for_kubernetes), runs on every host with configuration
    # version 3 (the CRI plugin split into cri.v1.images and cri.v1.runtime), the sandbox image of 1.36;
    # it loaded every key (no "unknown key", no migration of an older version) and kubeadm's preflight
    # found the RuntimeConfig call (no ContainerRuntimeVersion warning)
    for h in NODES:
        # (the joins' preflight: h2, h3 and h4 warn of the SystemVerification check the site ignores)
        warned = th.ssh(h, "cat /var/log/kubeadm-double-preflight.log 2>/dev/null || true").stdout
        assert ("[WARNING SystemVerification]" in warned) == (h != "h1" and bool(v1)), (h, warned)
        assert "ContainerRuntimeVersion" not in warned, (h, warned)
        assert " 2.1.9" in th.ssh(h, "/usr/local/bin/containerd --version").stdout, h
        server = th.ssh(h, "ctr version 2>/dev/null | sed -n '/^Server:/,$s/^ *Version: *//p'").stdout.strip()
        assert server.startswith("2.1.9"), (h, server)
        toml = tomllib.loads(th.ssh(h, "cat /etc/containerd/config.toml").stdout)
        assert toml["version"] == 3 and "io.containerd.grpc.v1.cri" not in toml["plugins"], (h, toml)
        assert toml["plugins"]["io.containerd.cri.v1.images"]["pinned_images"]["sandbox"] == \
            "registry.tke.com/library/pause:3.10.2", h
        assert toml["plugins"]["io.containerd.cri.v1.runtime"]["cni"]["bin_dirs"] == ["/opt/cni/bin"], h
        plugins = th.ssh(h, "ctr plugins ls 2>/dev/null | grep -E 'cri'").stdout
        assert [line.split()[-1] for line in plugins.splitlines()] == ["ok"] * 3, (h, plugins)
        log = th.ssh(h, "journalctl -u containerd --no-pager", timeout=60).stdout
        assert not [w for w in ("unknown key", "Configuration migrated", "Ignoring unknown") if w in log], (h, log[-2000:])

    # a second run changes nothing: no phase runs again (etcd-join and kubelet-wait-bootstrap included)
    again = run_playbook(INSTALL, inv)
    assert again.rc == 0 and again.changed_hosts() == {}, again.explain()
    # and the runtime's tasks themselves change nothing on 2.1.9 (journal off): the configuration rendered
    # as written, the running daemon the installed binary
    runtime = run_playbook(INSTALL, inv, "--tags", "runtime", *NO_RESUME)
    assert runtime.rc == 0 and runtime.changed_hosts() == {}, runtime.explain()
    # an object written through one master is read through the others
    kubectl(th, "h2", th.ip("h2"), "-n default create configmap stacked-proof --from-literal=by=h2")
    for h in ("h1", "h3"):
        assert "h2" in kubectl(th, h, th.ip(h), "-n default get configmap stacked-proof -o jsonpath={.data.by}").stdout

    # the VIP holder goes away (keepalived, its API server and its etcd member: the kubelet stopped)
    holders = ha.holders(th, MASTERS, the_vip)
    assert len(holders) == 1, holders
    gone = holders[0]
    th.ssh(gone, "systemctl stop keepalived kubelet")
    rest = [h for h in MASTERS if h != gone]
    ha.wait_until(lambda: ha.holders(th, MASTERS, the_vip) not in ([], [gone]), 30, f"the VIP leaves {gone}")
    for h in rest:
        assert node_names(th, h, the_vip) == NODES, h
        assert "h2" in kubectl(th, h, the_vip, "-n default get configmap stacked-proof -o jsonpath={.data.by}").stdout
    # the two members left keep quorum; the third is still a member
    assert sorted(m["name"] for m in members(th, rest[0])) == MASTERS

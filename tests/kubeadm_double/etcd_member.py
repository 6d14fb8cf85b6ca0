"""Stacked etcd membership, as kubeadm manages it (the kubeadm double's etcd client).

Facts read (not code copied) from kubernetes/kubernetes: cmd/kubeadm/app/phases/etcd/local.go
(CreateStackedEtcdStaticPodManifestFile: add the member - as a learner -, write the manifest with
the returned members, promote the learner, wait for the cluster; RemoveStackedEtcdMemberFromCluster:
no removal when this is the only member, the member found by its peer URL, "already removed" is no
error; getEtcdCommand: the flags), cmd/kubeadm/app/util/etcd/etcd.go (NewFromCluster: an etcd
client on the members' client URLs with etcd/ca.crt and the healthcheck-client certificate, then
Sync to every member's client URL; AddMember/AddMemberAsLearner: the new member's name set in the
returned list, the others keep theirs; MemberPromote retried until the learner is in sync;
WaitForClusterAvailable: every endpoint's status, etcdHealthyCheckRetries (8) times
etcdHealthyCheckInterval (5 s)), cmd/kubeadm/app/features/features.go (EtcdLearnerMode: beta and
on by default in v1.29-v1.31, GA in v1.32). Member operations are retried with etcd.go's etcdBackoff:
etcd refuses a reconfiguration while a member joined just now ("etcdserver: unhealthy cluster",
its strict reconfiguration check), which a control-plane join right after another meets.

The client is etcdctl (Debian's etcd-client on the test hosts, etcd v3 API, JSON output). Where
kubeadm finds the members' client URLs on the etcd static pods' mirror Pods (the annotation
kubeadm.kubernetes.io/etcd.advertise-client-urls), the double takes the control-plane Nodes'
InternalIP addresses (the kubelet double creates no mirror Pods; kubeadm writes that annotation as
https://<advertise address>:2379, and the collection advertises the node address).
"""
from __future__ import annotations

import json
import os
import subprocess
import time

CLIENT_PORT, PEER_PORT = 2379, 2380
HEALTHY_RETRIES, HEALTHY_INTERVAL = 8, 5.0     # local.go etcdHealthyCheckRetries / etcdHealthyCheckInterval
PROMOTE_TIMEOUT, PROMOTE_INTERVAL = 120.0, 0.5  # MemberPromote: retried until the learner is in sync
# etcd.go etcdBackoff, the retries of every member operation: 18 steps from 100 ms, factor 1.5 (~200 s)
BACKOFF_STEPS, BACKOFF_FIRST, BACKOFF_FACTOR = 18, 0.1, 1.5
BACKOFF_TOTAL = sum(BACKOFF_FIRST * BACKOFF_FACTOR ** i for i in range(BACKOFF_STEPS - 1))
ETCDCTL = "etcdctl"


class EtcdError(Exception):
    pass


def client_url(address: str) -> str:
    """etcdutil.GetClientURL: https://<advertise address>:2379 (IPv6 in brackets)."""
    return f"https://{_host(address)}:{CLIENT_PORT}"


def peer_url(address: str) -> str:
    """etcdutil.GetPeerURL: https://<advertise address>:2380."""
    return f"https://{_host(address)}:{PEER_PORT}"


def _host(address: str) -> str:
    return f"[{address}]" if ":" in address else address


def learner_mode(feature_gates: dict | None) -> bool:
    """EtcdLearnerMode: on by default (beta in 1.30 and 1.31, GA in 1.32, the gate removed in 1.33,
    where a joining member is always a learner first)."""
    return bool((feature_gates or {}).get("EtcdLearnerMode", True))


def control_plane_endpoints(node_list: dict) -> list[str]:
    """The stand-in for the etcd pods' annotation: https://<InternalIP>:2379 of every Node labelled
    node-role.kubernetes.io/control-plane, in name order."""
    out = []
    for node in sorted(node_list.get("items") or [], key=lambda n: n["metadata"]["name"]):
        if "node-role.kubernetes.io/control-plane" not in (node["metadata"].get("labels") or {}):
            continue
        for a in (node.get("status") or {}).get("addresses") or []:
            if a.get("type") == "InternalIP":
                out.append(client_url(a["address"]))
                break
    return out


def initial_cluster(add_response: dict, name: str) -> list[tuple[str, str]]:
    """(name, peer URL) of every member after a member add: the new member (not started, so
    nameless) gets its node's name, as etcd.go's addMember does."""
    new_id = (add_response.get("member") or {}).get("ID")
    members = []
    for m in add_response.get("members") or []:
        members.append((name if m.get("ID") == new_id else m.get("name", ""), (m.get("peerURLs") or [""])[0]))
    return members


def member_by_peer(members: list[dict], url: str) -> dict | None:
    """GetMemberID: the member whose peer URLs hold url."""
    return next((m for m in members if url in (m.get("peerURLs") or [])), None)


def started_client_urls(members: list[dict]) -> list[str]:
    """Sync: the client URLs of every member that has started (a learner not started yet has none)."""
    return sorted({u for m in members for u in m.get("clientURLs") or []})


class Client:
    """An etcd client on endpoints with the healthcheck-client certificate (NewFromCluster)."""

    def __init__(self, endpoints: list[str], cert_dir: str, etcdctl: str | None = None):
        if not endpoints:
            raise EtcdError("etcd cluster is not reachable: no control-plane Node with an InternalIP")
        self.endpoints = list(endpoints)
        self.tls = [f"--cacert={cert_dir}/etcd/ca.crt", f"--cert={cert_dir}/etcd/healthcheck-client.crt",
                    f"--key={cert_dir}/etcd/healthcheck-client.key"]
        self.etcdctl = etcdctl or ETCDCTL

    def run(self, args: list[str], endpoints: list[str] | None = None) -> dict:
        argv = [self.etcdctl, "--endpoints=" + ",".join(endpoints or self.endpoints), "--dial-timeout=3s",
                "--command-timeout=10s", "-w", "json", *self.tls, *args]
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False,
                               env=dict(os.environ, ETCDCTL_API="3"))
        except (OSError, subprocess.TimeoutExpired) as e:
            raise EtcdError(f"etcdctl {' '.join(args)}: {e}") from None
        if r.returncode != 0:
            raise EtcdError(f"etcdctl {' '.join(args)}: {(r.stderr or r.stdout).strip()}")
        return json.loads(r.stdout or "{}")

    def retried(self, attempt):
        """attempt() until it raises no EtcdError, with etcdBackoff's waits between tries, and within
        their sum overall (BACKOFF_TOTAL, ~200 s): an etcdctl call that waits out its own timeouts
        does not stretch the retries beyond what kubeadm's backoff allows."""
        delay, deadline = BACKOFF_FIRST, time.monotonic() + BACKOFF_TOTAL
        for step in range(BACKOFF_STEPS):
            try:
                return attempt()
            except EtcdError:
                if step == BACKOFF_STEPS - 1 or time.monotonic() + delay > deadline:
                    raise
            time.sleep(delay)
            delay *= BACKOFF_FACTOR
        return None

    def sync(self) -> list[dict]:
        members = self.list_members()
        self.endpoints = started_client_urls(members) or self.endpoints
        return members

    def list_members(self) -> list[dict]:
        return self.retried(lambda: self.run(["member", "list"]).get("members") or [])

    def add_member(self, name: str, url: str, learner: bool) -> list[tuple[str, str]]:
        def attempt():
            members = self.run(["member", "list"]).get("members") or []
            if member_by_peer(members, url):
                # (a re-run of the phase, or a retry after an add whose answer was lost)
                return [(m.get("name") or name, (m.get("peerURLs") or [""])[0]) for m in members]
            resp = self.run(["member", "add", name, f"--peer-urls={url}"] + (["--learner"] if learner else []))
            return initial_cluster(resp, name)
        return self.retried(attempt)

    def member_id(self, url: str) -> int | None:
        m = member_by_peer(self.list_members(), url)
        return int(m["ID"]) if m else None

    def promote(self, member_id: int, timeout: float = PROMOTE_TIMEOUT) -> None:
        deadline, last = time.monotonic() + timeout, ""
        while True:
            m = next((m for m in self.list_members() if int(m["ID"]) == member_id), None)
            if m is not None and not m.get("isLearner"):
                return
            try:
                self.run(["member", "promote", format(member_id, "x")])
                return
            except EtcdError as e:   # "can only promote a learner member which is in sync with leader"
                last = str(e)
            if time.monotonic() > deadline:
                raise EtcdError(f"etcd member {format(member_id, 'x')} not promoted within {timeout:.0f}s: {last}")
            time.sleep(PROMOTE_INTERVAL)

    def remove(self, member_id: int) -> None:
        self.retried(lambda: self.run(["member", "remove", format(member_id, "x")]))

    def wait_available(self, retries: int = HEALTHY_RETRIES, interval: float = HEALTHY_INTERVAL) -> None:
        last = ""
        for _attempt in range(retries):
            try:
                self.sync()
                statuses = self.run(["endpoint", "status"])
                if len(statuses if isinstance(statuses, list) else [statuses]) >= len(self.endpoints):
                    return
            except EtcdError as e:
                last = str(e)
            time.sleep(interval)
        raise EtcdError(f"timeout waiting for etcd cluster to be available: {last}")

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""What playbooks/upgrade.yml may do, decided on the controller before any host is touched: the
version skew between the cluster and the target, the site pack's binaries of the target, and which
nodes still run another kubelet. Pure; unit-tested (tests/unit/plugins/plugin_utils/test_kubeadm_upgrade.py).

kubeadm's rules (cmd/kubeadm/app/phases/upgrade/policy.go, EnforceVersionPolicies): the control
plane moves at most one minor version at a time (MaximumAllowedMinorVersionUpgradeSkew = 1); the
kubeadm doing it must be of the target's minor; kubelets may be at most three minors older than
the control plane (MaximumAllowedMinorVersionKubeletSkew = 3 since v1.28) and never newer
(the Kubernetes version skew policy). A downgrade is refused here (kubeadm allows one minor only
with a restore story this collection does not have: playbooks/etcd_restore.yml is the way back).
A kubeadm feature gate the target's kubeadm no longer knows (kubeadm_phases.REMOVED_GATES: 1.36 removed
ControlPlaneKubeletLocalMode) is refused where the cluster's ClusterConfiguration names it: the collection
writes none, but a cluster whose configuration was edited could carry one, and kubeadm refuses a
configuration naming an unknown gate (docs/kubernetes_releases.md section 10; the upgrade's own reaction not read).
"""
from __future__ import annotations

import re

import yaml
from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.offline_pot.tke.plugins.module_utils import kube_images
from ansible_collections.offline_pot.tke.plugins.module_utils.kubeadm_phases import cgroup_v1_refusal, removed_gates
from ansible_collections.offline_pot.tke.plugins.module_utils.pack_manifest import BinaryChoiceError, arch_label, binary_arch, pick_binary

VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)$")
KUBELET_SKEW = 3
# the pack must carry these of the target version (kubectl too when it carries kubectl at all)
NEEDED_BINARIES = ("kubeadm", "kubelet")


def parse(version):
    m = VERSION_RE.match(str(version or "").strip())
    return tuple(int(x) for x in m.groups()) if m else None


def _cluster_doc(cluster_configuration):
    try:
        doc = yaml.safe_load(cluster_configuration or "") or {}
    except yaml.YAMLError:
        return {}
    return doc if isinstance(doc, dict) else {}


def cluster_version(cluster_configuration):
    """kubernetesVersion of the kubeadm-config ConfigMap's ClusterConfiguration text."""
    return str(_cluster_doc(cluster_configuration).get("kubernetesVersion", ""))


def cluster_feature_gates(cluster_configuration):
    """featureGates of the kubeadm-config ConfigMap's ClusterConfiguration text ({} when it has none)."""
    gates = _cluster_doc(cluster_configuration).get("featureGates")
    return gates if isinstance(gates, dict) else {}


def kubelet_versions(nodes):
    return {(n.get("metadata") or {}).get("name", ""): ((n.get("status") or {}).get("nodeInfo") or {})
            .get("kubeletVersion", "") for n in nodes or []}


def node_arches(nodes):
    """{Node name: its architecture as its kubelet reports it (status.nodeInfo.architecture, Debian's
    names: amd64, arm64)}; a node that reports none is amd64."""
    return {(n.get("metadata") or {}).get("name", ""): ((n.get("status") or {}).get("nodeInfo") or {})
            .get("architecture") or "amd64" for n in nodes or []}


def check(target, cluster_configuration, nodes, binaries, hosts, first_master, cgroup_v1_hosts=(), allow_cgroup_v1=False):
    """{target, cluster_version, kubelets, pending, errors}: target is the version as kubeadm writes it
    (v1.31.1); pending are the inventory's nodes (hosts) whose
    kubelet is not at the target yet, in the given order; errors name the variable, the host and the
    versions found, and say what to do. cgroup_v1_hosts: the nodes on cgroup v1 (a target from 1.35
    refuses them unless allow_cgroup_v1: kubeadm_phases.cgroup_v1_refusal)."""
    want = parse(target)
    current = cluster_version(cluster_configuration)
    have = parse(current)
    kubelets = kubelet_versions(nodes)
    arches = node_arches(nodes)
    errors = []
    where = f"kube-system/kubeadm-config read through {first_master}"
    if want is None:
        errors.append(f"all: tke_k8s_version: {target!r} is not a version like 1.31.1")
    if have is None:
        errors.append(f"{first_master}: the cluster's version could not be read ({where}: "
                      f"kubernetesVersion {current!r}): is the cluster installed (install.yml)?")
    if want and have:
        shown = f"the cluster runs {current} ({where})"
        if want < have:
            errors.append(f"all: tke_k8s_version: {target} is older than the cluster's version: {shown}; a downgrade "
                          "is not supported (playbooks/etcd_restore.yml restores a backup)")
        elif want[0] != have[0] or want[1] > have[1] + 1:
            errors.append(f"all: tke_k8s_version: {target}: {shown}; kubeadm upgrades one minor version at a time: "
                          f"upgrade to {have[0]}.{have[1] + 1} first")
        for host in hosts:
            v = kubelets.get(host)
            got = parse(v)
            if v is None:
                errors.append(f"{host}: no Node named {host} in the cluster (is it installed?)")
            elif got is None:
                errors.append(f"{host}: the kubelet's version {v!r} cannot be read")
            elif got > want:
                errors.append(f"{host}: tke_k8s_version: {target} is older than this node's kubelet {v}")
            elif got[1] + KUBELET_SKEW < want[1]:
                errors.append(f"{host}: tke_k8s_version: {target}: this node's kubelet {v} is more than "
                              f"{KUBELET_SKEW} minor versions older; upgrade it first")
    if want:
        t = ".".join(map(str, want))
        refusal = cgroup_v1_refusal(t, [h for h in hosts if h in set(cgroup_v1_hosts)],
                                    boolean(allow_cgroup_v1, strict=False))
        if refusal:
            errors.append(refusal)
        gone = removed_gates(t, cluster_feature_gates(cluster_configuration))
        if gone:
            errors.append(f"{first_master}: kube-system/kubeadm-config's ClusterConfiguration sets the kubeadm feature "
                          f"gate{'s' if len(gone) > 1 else ''} {', '.join(gone)} in featureGates, which the kubeadm of "
                          f"{t} no longer knows (removed; it refuses a configuration naming "
                          f"{'them' if len(gone) > 1 else 'it'}): take {'them' if len(gone) > 1 else 'it'} out of "
                          "featureGates first (kubectl -n kube-system edit configmap kubeadm-config); the behaviour "
                          "stays kubeadm's")
        needed = list(NEEDED_BINARIES)
        # every architecture the site's nodes are of (the Nodes' own word), each from its own entries
        site_arches = sorted({arches[h] for h in hosts if h in arches} or {"amd64"})
        for arch in site_arches:
            of_arch = [h for h in hosts if arches.get(h) == arch]
            carried = {}
            for b in binaries or []:
                if binary_arch(b) == arch:
                    carried.setdefault(b.get("name"), []).append(str(b.get("version", "")).lstrip("v"))
            for name in list(NEEDED_BINARIES) + (["kubectl"] if "kubectl" in carried else []):
                needed += [name] if name not in needed else []
                if t not in carried.get(name, []):
                    errors.append(f"all: tke_k8s_version: the site pack (tke_site_pack) carries no {name} {t}"
                                  f"{'' if arch == 'amd64' else ' for ' + arch + ' (' + ', '.join(of_arch) + ')'} "
                                  f"(it has: {', '.join(sorted(carried.get(name, []))) or 'none'})")
        changes, more = other_binaries(binaries, current if have else "", t, skip=needed, arches=site_arches)
        errors += more
    else:
        changes = []
    pending = [h for h in hosts if kubelets.get(h) is not None and parse(kubelets[h]) != want]
    runtime = [h for h in pending if want and runtime_changes(binaries, kubelets[h], ".".join(map(str, want)),
                                                              arches.get(h, "amd64"))]
    return {"target": "v" + ".".join(map(str, want)) if want else str(target), "cluster_version": current,
            "kubelets": kubelets, "pending": pending, "errors": errors, "binaries_changed": changes,
            "runtime_nodes": runtime}


def runtime_changes(binaries, kubelet, target, arch="amd64"):
    """Whether a node at `kubelet` (of Debian architecture arch) gets another containerd set-up with
    the target: another containerd from the pack (for_kubernetes, among its arch's entries) or another
    sandbox (pause) image. Unknown: true (the runtime role runs, and changes nothing where nothing
    differs)."""
    now = str(kubelet).lstrip("v")
    try:
        if kube_images.pinned("pause", now) != kube_images.pinned("pause", target):
            return True
    except kube_images.UnsupportedVersion:
        return True
    entries = [b for b in binaries or [] if b.get("name") == "containerd" and binary_arch(b) == arch]
    if len(entries) < 2:
        return False
    try:
        return pick_binary(entries, now) is not pick_binary(entries, target)
    except BinaryChoiceError:
        return True


def other_binaries(binaries, current, target, skip=(), arches=None):
    """The binaries the pack carries in several versions other than `skip` (containerd, chosen by
    for_kubernetes): (["containerd 1.6.20 -> 2.1.9", ...] where the target takes another version
    than the cluster's release, [errors where no entry serves the target])."""
    by_name = {}
    for b in binaries or []:   # per architecture (of arches, the site's nodes'): each host takes its own arch's
        if b.get("name") not in skip and (arches is None or binary_arch(b) in arches):
            by_name.setdefault(arch_label(b.get("name"), binary_arch(b)), []).append(b)
    changes, errors = [], []
    for name, entries in sorted(by_name.items(), key=lambda kv: str(kv[0])):
        if len(entries) < 2:
            continue
        try:
            new = pick_binary(entries, target)
        except BinaryChoiceError as e:
            errors.append(f"all: tke_k8s_version: {e}")
            continue
        try:
            old = pick_binary(entries, current) if current else None
        except BinaryChoiceError:
            old = None
        if old is not new:
            changes.append(f"{name} {old.get('version', '?') if old else '?'} -> {new.get('version', '?')}")
    return changes, errors


def summary(target, started_from, cluster_configuration, nodes, records, hosts, not_answering=()):
    """What the upgrade reached, from what the API and the hosts report at the end of the run (never
    from what the run meant to do): {done, at_target, behind, lines}. nodes are the Node objects read
    at the end (None: the API could not be read), records each host's upgrade record (None: not read,
    the host did not answer), hosts the inventory's nodes in upgrade order, not_answering the hosts
    that failed or did not answer in this run. done is true only when the control plane and every
    node's kubelet report the target and every node recorded it."""
    want = parse(target)
    shown = "v" + ".".join(map(str, want)) if want else str(target)
    if nodes is None:
        return {"done": False, "at_target": [], "behind": list(hosts), "lines": [
            f"cluster {started_from or '?'} -> {shown}: NOT known to be done - the API could not be read at the end "
            "of the run; kubectl get nodes shows each kubelet's version",
            f"re-run upgrade.yml -e tke_k8s_version={shown.lstrip('v')}: it resumes at the first node not upgraded"]}
    kubelets = kubelet_versions(nodes)
    current = cluster_version(cluster_configuration)
    down = set(not_answering or ())
    at_target, behind = [], []
    for host in hosts:
        v, rec = kubelets.get(host), (records or {}).get(host)
        if v is not None and parse(v) == want and (rec or "").strip() == shown:
            at_target.append(host)
            continue
        why = [f"kubelet {v}" if v is not None else "no Node object"]
        if rec is None:
            why.append("its record not read")
        elif (rec or "").strip() != shown:
            why.append(f"recorded {rec.strip() or 'nothing'}")
        if host in down:
            why.append("failed or unreachable in this run")
        behind.append(f"{host} ({', '.join(why)})")
    plane_ok = parse(current) == want
    done = plane_ok and not behind
    head = f"cluster {started_from or '?'} -> {shown}: "
    if done:
        head += f"every node upgraded (the API reports kubelet {shown} on {', '.join(at_target)})"
    else:
        head += "NOT done"
    lines = [head]
    if not done:
        lines.append(f"control plane (kube-system/kubeadm-config): {current or 'not read'}")
        lines.append(f"upgraded to {shown}: {', '.join(at_target) or 'none'}")
        lines.append(f"not upgraded: {', '.join(behind)}")
        lines.append(f"re-run upgrade.yml -e tke_k8s_version={shown.lstrip('v')} when every node answers: it resumes "
                     "at the first node not upgraded")
    return {"done": done, "at_target": at_target, "behind": [b.split(" ", 1)[0] for b in behind], "lines": lines}

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
"""
from __future__ import annotations

import re

import yaml

VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)$")
KUBELET_SKEW = 3
# the pack must carry these of the target version (kubectl too when it carries kubectl at all)
NEEDED_BINARIES = ("kubeadm", "kubelet")


def parse(version):
    m = VERSION_RE.match(str(version or "").strip())
    return tuple(int(x) for x in m.groups()) if m else None


def cluster_version(cluster_configuration):
    """kubernetesVersion of the kubeadm-config ConfigMap's ClusterConfiguration text."""
    try:
        doc = yaml.safe_load(cluster_configuration or "") or {}
    except yaml.YAMLError:
        return ""
    return str(doc.get("kubernetesVersion", "")) if isinstance(doc, dict) else ""


def kubelet_versions(nodes):
    return {(n.get("metadata") or {}).get("name", ""): ((n.get("status") or {}).get("nodeInfo") or {})
            .get("kubeletVersion", "") for n in nodes or []}


def check(target, cluster_configuration, nodes, binaries, hosts, first_master):
    """{target, cluster_version, kubelets, pending, errors}: target is the version as kubeadm writes it
    (v1.31.1); pending are the inventory's nodes (hosts) whose
    kubelet is not at the target yet, in the given order; errors name the variable, the host and the
    versions found, and say what to do."""
    want = parse(target)
    current = cluster_version(cluster_configuration)
    have = parse(current)
    kubelets = kubelet_versions(nodes)
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
        carried = {}
        for b in binaries or []:
            carried.setdefault(b.get("name"), []).append(str(b.get("version", "")).lstrip("v"))
        needed = list(NEEDED_BINARIES) + (["kubectl"] if "kubectl" in carried else [])
        for name in needed:
            if t not in carried.get(name, []):
                errors.append(f"all: tke_k8s_version: the site pack (tke_site_pack) carries no {name} {t} "
                              f"(it has: {', '.join(sorted(carried.get(name, []))) or 'none'})")
    pending = [h for h in hosts if kubelets.get(h) is not None and parse(kubelets[h]) != want]
    return {"target": "v" + ".".join(map(str, want)) if want else str(target), "cluster_version": current,
            "kubelets": kubelets, "pending": pending, "errors": errors}

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""When an object is ready (pure rules, tests/unit/plugins/module_utils/k8s/test_waiter.py) and
the polling wait. The rules are kubectl's: `kubectl rollout status` for DaemonSets and
Deployments (k8s.io/kubectl/pkg/polymorphichelpers/rollout_status.go: observedGeneration caught
up, every pod updated and available; for StatefulSets isStatefulSetRolloutDone's rule: ready replicas,
the partitioned roll out or the update revision) and the node lifecycle's Ready condition for Nodes
(k8s.io/api/core/v1 types.go NodeReady)."""
from __future__ import annotations

import time


def _generation_seen(obj):
    status = obj.get("status") or {}
    return status.get("observedGeneration", 0) >= (obj.get("metadata") or {}).get("generation", 0)


def daemonset_rolled_out(ds):
    s = ds.get("status") or {}
    want = s.get("desiredNumberScheduled", 0)
    updated, available = s.get("updatedNumberScheduled", 0), s.get("numberAvailable", 0)
    ok = _generation_seen(ds) and want > 0 and updated >= want and available >= want
    return ok, f"{available}/{want} pods available, {updated} updated"


def deployment_available(dep):
    s = dep.get("status") or {}
    want = (dep.get("spec") or {}).get("replicas", 1)
    updated, available = s.get("updatedReplicas", 0), s.get("availableReplicas", 0)
    ok = _generation_seen(dep) and updated >= want and available >= want
    return ok, f"{available}/{want} replicas available, {updated} updated"


def statefulset_rolled_out(sts):
    """kubectl rollout status's rule for StatefulSets (rollout_status.go, StatefulSetStatusViewer):
    only a RollingUpdate strategy has a roll out (the API's default strategy: k8s.io/api apps/v1
    StatefulSetUpdateStrategy); the spec observed; readyReplicas up to spec.replicas (default 1);
    with rollingUpdate settings, updatedReplicas >= replicas - partition, else the current
    revision is the update revision."""
    spec, s = sts.get("spec") or {}, sts.get("status") or {}
    strategy = spec.get("updateStrategy") or {}
    want = spec.get("replicas", 1)
    ready, updated = s.get("readyReplicas", 0), s.get("updatedReplicas", 0)
    detail = f"{ready}/{want} replicas ready, {updated} updated"
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return True, detail
    if not s.get("observedGeneration") or not _generation_seen(sts) or ready < want:
        return False, detail
    if strategy.get("rollingUpdate") is not None:
        partition = strategy["rollingUpdate"].get("partition")
        return (partition is None or updated >= want - partition), detail
    return s.get("updateRevision") == s.get("currentRevision"), detail


def node_ready(node):
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            ok = cond.get("status") == "True"
            why = cond.get("reason") or ""
            return ok, f"Ready={cond.get('status')}{': ' + why if why and not ok else ''}"
    return False, "no Ready condition yet"


RULES = {
    "DaemonSet": ("rolled out", daemonset_rolled_out),
    "Deployment": ("available", deployment_available),
    "StatefulSet": ("rolled out", statefulset_rolled_out),
    "Node": ("Ready", node_ready),
}


def pending(items, expected_names=()):
    """[(identity, what it waits for, state)] of items not ready, plus expected names not listed."""
    out = []
    seen = set()
    for obj in items:
        meta = obj.get("metadata") or {}
        seen.add(meta.get("name"))
        what, rule = RULES[obj.get("kind")]
        ok, detail = rule(obj)
        if not ok:
            ns = meta.get("namespace")
            out.append((f"{obj['kind']} {ns + '/' if ns else ''}{meta.get('name')}", what, detail))
    for name in sorted(set(expected_names) - seen):
        out.append((name, "to exist", "not found"))
    return out


def describe(waiting):
    return "; ".join(f"{ident} to be {what} ({state})" if what != "to exist" else f"{ident} {what} ({state})"
                     for ident, what, state in waiting)


def wait(poll, timeout, delay, clock=time.monotonic, sleep=time.sleep):
    """Call poll() -> list of pending until it is empty or timeout seconds pass; return
    (pending list, seconds waited)."""
    start = clock()
    while True:
        waiting = poll()
        elapsed = clock() - start
        if not waiting or elapsed >= timeout:
            return waiting, elapsed
        sleep(min(delay, max(0.0, timeout - elapsed)))

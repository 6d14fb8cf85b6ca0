# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""When an object is ready (pure rules, tests/unit/plugins/module_utils/k8s/test_waiter.py) and
the polling wait. The rules are kubectl's: `kubectl rollout status` for DaemonSets and
Deployments (k8s.io/kubectl/pkg/polymorphichelpers/rollout_status.go: observedGeneration caught
up, every pod updated and available, no old replica left, a Deployment past its progress
deadline failed at once; a DaemonSet that no node fits has nothing to roll out; for StatefulSets isStatefulSetRolloutDone's rule: ready replicas,
the partitioned roll out or the update revision) and the node lifecycle's Ready condition for Nodes
(k8s.io/api/core/v1 types.go NodeReady)."""
from __future__ import annotations

import time


class RolloutFailed(Exception):
    """An object that will not become ready by waiting (a Deployment past its progress deadline)."""


def _generation_seen(obj):
    status = obj.get("status") or {}
    return status.get("observedGeneration", 0) >= (obj.get("metadata") or {}).get("generation", 0)


def daemonset_rolled_out(ds):
    """DaemonSetStatusViewer: the spec observed, every scheduled pod updated and available (none
    scheduled - no node fits - is done; an OnDelete strategy has no roll out to wait for)."""
    s = ds.get("status") or {}
    want = s.get("desiredNumberScheduled", 0)
    updated, available = s.get("updatedNumberScheduled", 0), s.get("numberAvailable", 0)
    detail = f"{available}/{want} pods available, {updated} updated"
    if ((ds.get("spec") or {}).get("updateStrategy") or {}).get("type", "RollingUpdate") != "RollingUpdate":
        return True, detail
    return _generation_seen(ds) and updated >= want and available >= want, detail


def deployment_available(dep):
    """DeploymentStatusViewer: the spec observed; the Progressing condition's
    ProgressDeadlineExceeded fails at once; spec.replicas updated, no old replica pending
    termination (status.replicas > updatedReplicas), the updated ones available."""
    s = dep.get("status") or {}
    want = (dep.get("spec") or {}).get("replicas", 1)
    updated, available = s.get("updatedReplicas", 0), s.get("availableReplicas", 0)
    old = s.get("replicas", 0) - updated
    detail = f"{available}/{want} replicas available, {updated} updated" + \
        (f", {old} old pending termination" if old > 0 else "")
    if not _generation_seen(dep):
        return False, detail
    progressing = next((c for c in s.get("conditions") or [] if c.get("type") == "Progressing"), {})
    if progressing.get("reason") == "ProgressDeadlineExceeded":
        name = (dep.get("metadata") or {}).get("name")
        raise RolloutFailed(f'deployment "{name}" exceeded its progress deadline ({detail}'
                            + (f": {progressing['message']}" if progressing.get("message") else "") + ")")
    return updated >= want and old <= 0 and available >= updated, detail


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

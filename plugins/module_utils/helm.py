# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Helm 3's command line as the collection drives it (docs/components.md, "Helm charts"): the
argument lists of `helm template`, `upgrade --install`, `rollback`, `uninstall` and the
read-only `history` and `get values`, helm's private directories, and how a release's record is
read. Used on the controller (components_render renders a chart) and on the API host
(helm_release). Pure: the callers run the commands.

A release is ours and unchanged when its newest revision is deployed, from the same chart name and
version, with the same chart file (its sha256, which the collection writes into the revision's
description, DESCRIPTION) and the same values (`helm get values`, what the upgrade was given)."""
from __future__ import annotations

import json
import os
import re

# The revision description the collection writes: the chart file's digest (the version alone does
# not tell a rebuilt chart apart).
DESCRIPTION = "offline_pot.tke chart sha256 {sha256}"
DESCRIPTION_RE = re.compile(r"offline_pot\.tke chart sha256 ([0-9a-f]{64})")
# `helm history` statuses of a revision an interrupted helm left (helm refuses to upgrade them)
PENDING = ("pending-install", "pending-upgrade", "pending-rollback")
NOT_FOUND = "not found"


def env(home: str) -> dict:
    """helm's cache, configuration and data directories under home (none of the user's
    repositories or plugins; nothing left in root's home)."""
    return {"HELM_CACHE_HOME": os.path.join(home, "cache"), "HELM_CONFIG_HOME": os.path.join(home, "config"),
            "HELM_DATA_HOME": os.path.join(home, "data")}


def _target(kubeconfig=None, context=None) -> list[str]:
    out = ["--kubeconfig", kubeconfig] if kubeconfig else []
    return out + (["--kube-context", context] if context else [])


def template_argv(helm, release, chart, namespace, values_file, kube_version=None) -> list[str]:
    """Render a chart offline (no cluster): what an install with these values would apply."""
    argv = [helm, "template", release, chart, "--namespace", namespace, "--values", values_file]
    return argv + (["--kube-version", kube_version] if kube_version else [])


def upgrade_argv(helm, release, chart, namespace, values_file, sha256, timeout, kubeconfig=None, context=None):
    """Install or upgrade, no wait (the caller waits for the component's workloads and rolls back
    itself, naming what did not become ready); the release record as JSON on stdout."""
    return [helm, "upgrade", release, chart, "--install", "--namespace", namespace, "--values", values_file,
            "--reset-values", "--description", DESCRIPTION.format(sha256=sha256), "--timeout", f"{timeout}s",
            "--output", "json"] + _target(kubeconfig, context)


def history_argv(helm, release, namespace, kubeconfig=None, context=None) -> list[str]:
    return [helm, "history", release, "--namespace", namespace, "--output", "json"] + _target(kubeconfig, context)


def values_argv(helm, release, namespace, kubeconfig=None, context=None) -> list[str]:
    return [helm, "get", "values", release, "--namespace", namespace, "--output", "json"] + _target(kubeconfig, context)


def rollback_argv(helm, release, namespace, revision, timeout, kubeconfig=None, context=None) -> list[str]:
    return [helm, "rollback", release, str(revision), "--namespace", namespace, "--timeout", f"{timeout}s"] \
        + _target(kubeconfig, context)


def uninstall_argv(helm, release, namespace, timeout, kubeconfig=None, context=None) -> list[str]:
    return [helm, "uninstall", release, "--namespace", namespace, "--timeout", f"{timeout}s"] \
        + _target(kubeconfig, context)


def parse_history(rc: int, out: str, err: str):
    """`helm history -o json` as a list of revisions, oldest first; [] for no such release;
    ValueError for any other failure."""
    if rc != 0:
        if NOT_FOUND in err:
            return []
        raise ValueError(err.strip() or out.strip())
    revisions = json.loads(out or "[]") or []
    return sorted(revisions, key=lambda r: r.get("revision", 0))


def last_deployed(revisions) -> int | None:
    """The newest revision whose status is deployed or superseded (what a rollback returns to)."""
    done = [r["revision"] for r in revisions if r.get("status") in ("deployed", "superseded")]
    return max(done) if done else None


def differences(revisions, chart_name, chart_version, sha256, values, live_values) -> list[str]:
    """Why the release is not what is asked for (empty: unchanged)."""
    if not revisions:
        return ["not installed"]
    last = revisions[-1]
    out = []
    if last.get("status") != "deployed":
        out.append(f"revision {last.get('revision')} is {last.get('status')}")
    if last.get("chart") != f"{chart_name}-{chart_version}":
        out.append(f"chart {last.get('chart')} -> {chart_name}-{chart_version}")
    else:
        found = DESCRIPTION_RE.search(last.get("description") or "")
        if not found or found.group(1) != sha256:
            out.append("chart file changed (same version, another sha256)")
    if canonical(live_values) != canonical(values):
        out.append("values changed")
    return out


def canonical(values) -> str:
    """Values as helm holds them: parsed from YAML/JSON into Go's types, where every number is a
    float64 (1 and 1.0 are one value) and null or {} is no value."""
    def norm(v):
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return v
        if isinstance(v, (int, float)):
            return float(v)
        if isinstance(v, dict):
            return {str(k): norm(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [norm(x) for x in v]
        return v
    return json.dumps(norm(values or {}), sort_keys=True)

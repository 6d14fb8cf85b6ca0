"""Table output (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), what `kubectl get` asks for.

Sources: the meta.k8s.io/v1 Table type (staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go:
columnDefinitions, rows[].cells, rows[].object as PartialObjectMetadata unless `includeObject=Object`
or `None`); the column sets of pkg/printers/internalversion/printers.go (AddHandlers) for the kinds
below; for any other kind the default convertor of
staging/src/k8s.io/apiserver/pkg/registry/rest/table.go (Name, Created At); for custom resources
the CRD version's additionalPrinterColumns, else Name and Age
(apiextensions-apiserver/pkg/registry/customresource/tableconvertor). Ages are
apimachinery/pkg/util/duration.HumanDuration.
"""
from __future__ import annotations

import datetime


def human_duration(seconds: float) -> str:
    """apimachinery/pkg/util/duration.HumanDuration."""
    s = int(seconds)
    if s < 0:
        return "<invalid>"
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        rs = s % 60
        return f"{m}m{rs}s" if rs else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = s // 3600
    if h < 8:
        rm = m % 60
        return f"{h}h{rm}m" if rm else f"{h}h"
    if h < 48:
        return f"{h}h"
    if h < 24 * 8:
        rh = h % 24
        return f"{h // 24}d{rh}h" if rh else f"{h // 24}d"
    if h < 24 * 365 * 2:
        return f"{h // 24}d"
    if h < 24 * 365 * 8:
        dy = (h // 24) % 365
        return f"{h // 24 // 365}y{dy}d" if dy else f"{h // 24 // 365}y"
    return f"{h // 24 // 365}y"


def age(obj, now=None) -> str:
    ts = (obj.get("metadata") or {}).get("creationTimestamp")
    if not ts:
        return "<unknown>"
    t = datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return human_duration((now - t).total_seconds())


def _col(name, typ="string", priority=0, fmt="", desc=""):
    return {"name": name, "type": typ, "format": fmt, "description": desc or name, "priority": priority}


def _containers(o):
    cs = (((o.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
    return ",".join(c.get("name", "") for c in cs), ",".join(c.get("image", "") for c in cs)


def _selector(o):
    sel = (o.get("spec") or {}).get("selector") or {}
    parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for e in sel.get("matchExpressions") or []:
        parts.append(f"{e.get('key')} {e.get('operator', '').lower()} ({','.join(e.get('values') or [])})")
    return ",".join(parts) or "<none>"


def _node_status(o):
    conds = {c.get("type"): c.get("status") for c in (o.get("status") or {}).get("conditions") or []}
    st = {"True": "Ready", "False": "NotReady"}.get(conds.get("Ready"), "Unknown")
    if (o.get("spec") or {}).get("unschedulable"):
        st += ",SchedulingDisabled"
    return st


def _node_roles(o):
    """printers.go findNodeRoles: node-role.kubernetes.io/<role> labels and kubernetes.io/role."""
    labels = (o.get("metadata") or {}).get("labels") or {}
    roles = set()
    for k, v in labels.items():
        if k.startswith("node-role.kubernetes.io/") and k[len("node-role.kubernetes.io/"):]:
            roles.add(k[len("node-role.kubernetes.io/"):])
        elif k == "kubernetes.io/role" and v:
            roles.add(v)
    return ",".join(sorted(roles)) or "<none>"


def _addr(o, kind):
    return next((a.get("address") for a in (o.get("status") or {}).get("addresses") or []
                 if a.get("type") == kind), "<none>")


def _ports(o):
    out = []
    for p in (o.get("spec") or {}).get("ports") or []:
        s = f"{p.get('port')}"
        if p.get("nodePort"):
            s += f":{p['nodePort']}"
        out.append(f"{s}/{p.get('protocol', 'TCP')}")
    return ",".join(out) or "<none>"


def _st(o):
    return o.get("status") or {}


def _sp(o):
    return o.get("spec") or {}


# kind -> (columns, cells(obj)); "Age" is appended to the cells where printers.go puts it
COLUMNS = {
    "Node": ([_col("Name"), _col("Status"), _col("Roles"), _col("Age"), _col("Version"),
              _col("Internal-IP", priority=1), _col("External-IP", priority=1), _col("OS-Image", priority=1),
              _col("Kernel-Version", priority=1), _col("Container-Runtime", priority=1)],
             lambda o: [o["metadata"]["name"], _node_status(o), _node_roles(o), age(o),
                        ((_st(o).get("nodeInfo") or {}).get("kubeletVersion") or ""),
                        _addr(o, "InternalIP"), _addr(o, "ExternalIP"),
                        (_st(o).get("nodeInfo") or {}).get("osImage", "<unknown>"),
                        (_st(o).get("nodeInfo") or {}).get("kernelVersion", "<unknown>"),
                        (_st(o).get("nodeInfo") or {}).get("containerRuntimeVersion", "<unknown>")]),
    "Deployment": ([_col("Name"), _col("Ready"), _col("Up-to-date", "integer"), _col("Available", "integer"),
                    _col("Age"), _col("Containers", priority=1), _col("Images", priority=1),
                    _col("Selector", priority=1)],
                   lambda o: [o["metadata"]["name"],
                              f"{_st(o).get('readyReplicas', 0)}/{_sp(o).get('replicas', 1)}",
                              _st(o).get("updatedReplicas", 0), _st(o).get("availableReplicas", 0), age(o),
                              *_containers(o), _selector(o)]),
    "DaemonSet": ([_col("Name"), _col("Desired", "integer"), _col("Current", "integer"), _col("Ready", "integer"),
                   _col("Up-to-date", "integer"), _col("Available", "integer"), _col("Node Selector"), _col("Age"),
                   _col("Containers", priority=1), _col("Images", priority=1), _col("Selector", priority=1)],
                  lambda o: [o["metadata"]["name"], _st(o).get("desiredNumberScheduled", 0),
                             _st(o).get("currentNumberScheduled", 0), _st(o).get("numberReady", 0),
                             _st(o).get("updatedNumberScheduled", 0), _st(o).get("numberAvailable", 0),
                             ",".join(f"{k}={v}" for k, v in sorted(
                                 (((_sp(o).get("template") or {}).get("spec") or {}).get("nodeSelector")
                                  or {}).items())) or "<none>",
                             age(o), *_containers(o), _selector(o)]),
    "StatefulSet": ([_col("Name"), _col("Ready"), _col("Age"), _col("Containers", priority=1),
                     _col("Images", priority=1)],
                    lambda o: [o["metadata"]["name"], f"{_st(o).get('readyReplicas', 0)}/{_sp(o).get('replicas', 1)}",
                               age(o), *_containers(o)]),
    "ReplicaSet": ([_col("Name"), _col("Desired", "integer"), _col("Current", "integer"), _col("Ready", "integer"),
                    _col("Age")],
                   lambda o: [o["metadata"]["name"], _sp(o).get("replicas", 1), _st(o).get("replicas", 0),
                              _st(o).get("readyReplicas", 0), age(o)]),
    "Pod": ([_col("Name"), _col("Ready"), _col("Status"), _col("Restarts"), _col("Age"),
             _col("IP", priority=1), _col("Node", priority=1)],
            lambda o: [o["metadata"]["name"],
                       f"{sum(1 for c in _st(o).get('containerStatuses') or [] if c.get('ready'))}/"
                       f"{len(_sp(o).get('containers') or [])}",
                       _st(o).get("reason") or _st(o).get("phase") or "Pending",
                       str(sum(c.get("restartCount", 0) for c in _st(o).get("containerStatuses") or [])),
                       age(o), _st(o).get("podIP") or "<none>", _sp(o).get("nodeName") or "<none>"]),
    "Service": ([_col("Name"), _col("Type"), _col("Cluster-IP"), _col("External-IP"), _col("Port(s)"), _col("Age"),
                 _col("Selector", priority=1)],
                lambda o: [o["metadata"]["name"], _sp(o).get("type", "ClusterIP"), _sp(o).get("clusterIP") or "<none>",
                           ",".join(_sp(o).get("externalIPs") or []) or "<none>", _ports(o), age(o),
                           ",".join(f"{k}={v}" for k, v in sorted((_sp(o).get("selector") or {}).items()))
                           or "<none>"]),
    "Namespace": ([_col("Name"), _col("Status"), _col("Age")],
                  lambda o: [o["metadata"]["name"], _st(o).get("phase", "Active"), age(o)]),
    "ConfigMap": ([_col("Name"), _col("Data", "integer"), _col("Age")],
                  lambda o: [o["metadata"]["name"], len(o.get("data") or {}) + len(o.get("binaryData") or {}),
                             age(o)]),
    "Secret": ([_col("Name"), _col("Type"), _col("Data", "integer"), _col("Age")],
               lambda o: [o["metadata"]["name"], o.get("type", "Opaque"), len(o.get("data") or {}), age(o)]),
    "ServiceAccount": ([_col("Name"), _col("Secrets", "integer"), _col("Age")],
                       lambda o: [o["metadata"]["name"], len(o.get("secrets") or []), age(o)]),
}


def _jsonpath(obj, path):
    """The simple `.a.b` JSONPaths of additionalPrinterColumns."""
    cur = obj
    for p in [x for x in path.strip().lstrip(".").split(".") if x]:
        if not isinstance(cur, dict) or p not in cur:
            return None
        cur = cur[p]
    return cur


def _crd_columns(res, crd_columns):
    cols = [_col("Name", desc="Name must be unique within a namespace.")]
    getters = [lambda o: o["metadata"]["name"]]
    given = crd_columns or [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]
    for c in given:
        cols.append(_col(c["name"], c.get("type", "string"), c.get("priority", 0), c.get("format", ""),
                         c.get("description", "")))

        def get(o, c=c):
            v = _jsonpath(o, c.get("jsonPath", ""))
            if c.get("type") == "date" and isinstance(v, str):
                return age({"metadata": {"creationTimestamp": v}})
            return v
        getters.append(get)
    return cols, lambda o: [g(o) for g in getters]


def table(res, objs, list_meta, include="Metadata", crd_columns=None) -> dict:
    if res.crd:
        cols, cells = _crd_columns(res, crd_columns)
    elif res.kind in COLUMNS:
        cols, cells = COLUMNS[res.kind]
    else:
        cols = [_col("Name", desc="Name must be unique within a namespace."),
                _col("Created At", "date",
                     desc="CreationTimestamp is a timestamp representing the server time when this object was created.")]

        def cells(o):
            return [o["metadata"]["name"], o["metadata"].get("creationTimestamp")]
    rows = []
    for o in objs:
        row = {"cells": cells(o)}
        if include == "Object":
            row["object"] = o
        elif include != "None":
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                             "metadata": o.get("metadata") or {}}
        rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta,
            "columnDefinitions": cols, "rows": rows}


def wants_table(accept: str) -> bool:
    """The first acceptable media type of the Accept header is a meta.k8s.io Table (v1 or v1beta1)."""
    for part in (accept or "").split(","):
        params = dict(p.strip().split("=", 1) for p in part.split(";")[1:] if "=" in p)
        if params.get("as") == "Table" and params.get("g") == "meta.k8s.io":
            return True
        if part.strip().split(";")[0].strip() in ("application/json", "*/*"):
            return False
    return False

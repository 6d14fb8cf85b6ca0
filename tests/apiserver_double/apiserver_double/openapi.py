"""/openapi/v3 (and /openapi/v2 in JSON) built from the same upstream schemas the double validates
with: kubernetes-validate's `_definitions.json` for the cluster's version (generated from
Kubernetes' own OpenAPI), plus each CRD version's openAPIV3Schema.

What clients read there (sources: k8s.io/kube-openapi pkg/handler3 - the discovery document
`{"paths": {"apis/<g>/<v>": {"serverRelativeURL": "/openapi/v3/apis/<g>/<v>?hash=<SHA512>"}}}`;
k8s.io/cli-runtime pkg/resource/query_param_verifier_v3.go - kubectl checks that the PATCH
operation carrying `x-kubernetes-group-version-kind` of the object's kind lists the `fieldValidation`
query parameter, and then leaves validation to the server instead of downloading /openapi/v2;
kubectl apply's strategic merge patch reads `x-kubernetes-patch-merge-key`/`-strategy` of the
schemas in `components.schemas`, whose kinds carry `x-kubernetes-group-version-kind`).
"""
from __future__ import annotations

import copy
import functools
import hashlib
import json
import os

VERBS_QUERY = ("dryRun", "fieldManager", "fieldValidation", "pretty")


def _schemas_file(version: str) -> str:
    import kubernetes_validate.utils as kvu
    mm = kvu.major_minor(version)
    found = [v for v in kvu.all_versions() if kvu.major_minor(v) <= mm][-1]
    return os.path.join(os.path.dirname(kvu.__file__), "kubernetes-json-schema", f"v{found}-local",
                        "_definitions.json")


@functools.lru_cache(maxsize=4)
def definitions(version: str) -> dict:
    """name -> schema in OpenAPI form: `$ref`s to `#/components/schemas/`, JSON Schema's `["t",
    "null"]` types back to the single OpenAPI type (kubernetes-validate added the null)."""
    with open(_schemas_file(version)) as f:
        defs = json.load(f)["$defs"]
    return {k: _to_openapi(v) for k, v in defs.items()}


def _to_openapi(s):
    if isinstance(s, list):
        return [_to_openapi(x) for x in s]
    if not isinstance(s, dict):
        return s
    out = {}
    for k, v in s.items():
        if k == "$ref" and isinstance(v, str):
            out[k] = v.replace("#/$defs/", "#/components/schemas/")
        elif k == "type" and isinstance(v, list):
            out[k] = next((t for t in v if t != "null"), v[0])
        elif k in ("properties", "$defs", "definitions", "patternProperties") and isinstance(v, dict):
            out[k] = {n: _to_openapi(x) for n, x in v.items()}
        else:
            out[k] = _to_openapi(v)
    return out


def _refs(s, acc):
    if isinstance(s, dict):
        r = s.get("$ref")
        if isinstance(r, str) and r.startswith("#/components/schemas/"):
            acc.add(r.rsplit("/", 1)[1])
        for v in s.values():
            _refs(v, acc)
    elif isinstance(s, list):
        for v in s:
            _refs(v, acc)


def _closure(defs, names):
    todo, seen = list(names), set()
    while todo:
        n = todo.pop()
        if n in seen or n not in defs:
            continue
        seen.add(n)
        acc = set()
        _refs(defs[n], acc)
        todo.extend(acc - seen)
    return seen


def _schema_name(defs, res):
    for name, s in defs.items():
        for g in s.get("x-kubernetes-group-version-kind") or []:
            if g.get("group", "") == res.group and g.get("version") == res.version and g.get("kind") == res.kind:
                return name
    return None


def crd_schema_name(res):
    """A custom resource's schema name as the apiextensions-apiserver builds it: the group reversed,
    then version and kind (`com.example.stable.v1.CronTab`)."""
    return ".".join(reversed(res.group.split("."))) + f".{res.version}.{res.kind}"


SCALE = ("io.k8s.api.autoscaling.v1.Scale", {"group": "autoscaling", "version": "v1", "kind": "Scale"})


def _op(res, action, desc, params, body=None, gvk=None):
    op = {"description": desc, "operationId": f"{action}{res.kind}", "tags": [res.group or "core"],
          "parameters": [{"name": p, "in": "query", "schema": {"type": "string"}, "uniqueItems": True}
                         for p in params],
          "responses": {"200": {"description": "OK"}},
          "x-kubernetes-action": action,
          "x-kubernetes-group-version-kind": gvk or {"group": res.group, "version": res.version, "kind": res.kind}}
    if body:
        op["requestBody"] = {"content": {"*/*": {"schema": {"$ref": f"#/components/schemas/{body}"}}},
                             "required": True}
    return op


def group_version_doc(version: str, rs: list, group: str, gv: str) -> dict:
    """The OpenAPI v3 document of one group/version: paths of its resources, the schemas they use."""
    defs = definitions(version)
    schemas, paths = {}, {}
    wanted = {"io.k8s.apimachinery.pkg.apis.meta.v1.Status", "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"}
    for r in rs:
        if r.crd:
            name = crd_schema_name(r)
            s = _crd_openapi(r)
            schemas[name] = s
            _refs(s, wanted)
        else:
            name = _schema_name(defs, r)
            if name is None:
                continue
            wanted.add(name)
        prefix = f"/{'api' if not group else 'apis/' + group}/{r.version}/"
        coll = prefix + ("namespaces/{namespace}/" if r.namespaced else "") + r.plural
        paths[coll] = {
            "get": _op(r, "list", f"list or watch objects of kind {r.kind}",
                       ("labelSelector", "fieldSelector", "limit", "continue", "resourceVersion",
                        "timeoutSeconds", "watch", "allowWatchBookmarks")),
            "post": _op(r, "post", f"create a {r.kind}", VERBS_QUERY, body=name)}
        paths[coll + "/{name}"] = {
            "get": _op(r, "get", f"read the specified {r.kind}", ("pretty",)),
            "put": _op(r, "put", f"replace the specified {r.kind}", VERBS_QUERY, body=name),
            "patch": _op(r, "patch", f"partially update the specified {r.kind}", VERBS_QUERY + ("force",),
                         body=name),
            "delete": _op(r, "delete", f"delete a {r.kind}",
                          ("dryRun", "gracePeriodSeconds", "propagationPolicy"))}
        for sub in r.subresources:
            # the scale subresource reads and writes an autoscaling/v1 Scale
            body, gvk = SCALE if sub == "scale" else (name, None)
            if sub == "scale":
                wanted.add(body)
            paths[coll + "/{name}/" + sub] = {
                "get": _op(r, "get", f"read {sub} of the specified {r.kind}", ("pretty",), gvk=gvk),
                "put": _op(r, "put", f"replace {sub} of the specified {r.kind}", VERBS_QUERY, body=body, gvk=gvk),
                "patch": _op(r, "patch", f"partially update {sub} of the specified {r.kind}",
                             VERBS_QUERY + ("force",), body=body, gvk=gvk)}
    for n in _closure(defs, wanted):
        schemas.setdefault(n, defs[n])
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": f"v{version}"},
            "paths": paths, "components": {"schemas": schemas}}


def _crd_openapi(r):
    s = copy.deepcopy(r.schema or {"type": "object", "x-kubernetes-preserve-unknown-fields": True})
    props = s.setdefault("properties", {})
    props["apiVersion"] = {"type": "string"}
    props["kind"] = {"type": "string"}
    props["metadata"] = {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
    s["x-kubernetes-group-version-kind"] = [{"group": r.group, "version": r.version, "kind": r.kind}]
    return s


def gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def digest(doc: dict) -> str:
    return hashlib.sha512(json.dumps(doc, sort_keys=True).encode()).hexdigest().upper()


def swagger_v2(version: str, all_resources: list) -> dict:
    """/openapi/v2 in JSON (the real server also serves it as protobuf, which the double does not:
    kubectl reads v3 first, and v2 only where v3 says fieldValidation is not supported)."""
    defs = definitions(version)
    paths = {}
    by_gv = {}
    for r in all_resources:
        by_gv.setdefault((r.group, r.version), []).append(r)
    schemas = {}
    for (g, v), rs in by_gv.items():
        d = group_version_doc(version, rs, g, v)
        paths.update(d["paths"])
        schemas.update(d["components"]["schemas"])
    schemas = {**dict(defs.items()), **schemas}
    text = json.dumps({"swagger": "2.0", "info": {"title": "Kubernetes", "version": f"v{version}"},
                       "paths": paths, "definitions": schemas})
    return json.loads(text.replace("#/components/schemas/", "#/definitions/"))

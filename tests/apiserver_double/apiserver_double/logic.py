"""Pure logic of the kube-apiserver double: Status objects, names, selectors, patches, object
metadata, schema validation -> Status, and the documented status rules (Node Ready, workloads).

Facts (wording, reasons, codes) come from kubernetes/kubernetes: staging/src/k8s.io/apimachinery
pkg/api/errors/errors.go (NewNotFound, NewAlreadyExists, NewConflict, NewInvalid, NewForbidden),
pkg/util/validation/field/errors.go (Invalid value / Required value / Unsupported value),
pkg/util/validation/validation.go (RFC 1123 messages), pkg/labels/selector.go (label selector
syntax), apiextensions-apiserver's schema validation ("in body must be of type"), and
pkg/kubelet/kubelet_network.go + container runtime status (NetworkReady message)."""
from __future__ import annotations

import copy
import json
import os
import re

from . import structural

# ------------------------------------------------------------------------------ Status objects
REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
           406: "NotAcceptable", 409: "AlreadyExists", 415: "UnsupportedMediaType", 422: "Invalid",
           500: "InternalError", 503: "ServiceUnavailable"}


class ApiError(Exception):
    """An error answered as a Kubernetes Status (kind Status, apiVersion v1, status Failure)."""

    def __init__(self, code: int, message: str, reason: str | None = None, details: dict | None = None):
        super().__init__(message)
        self.code, self.message, self.reason, self.details = code, message, reason or REASONS.get(code, ""), details

    def status(self) -> dict:
        return status_obj(self.code, self.message, self.reason, self.details)


def status_obj(code, message, reason, details=None, success=False):
    s = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success" if success else "Failure",
         "message": message, "reason": reason, "code": code}
    if details is not None:
        s["details"] = details
    if success:
        s.pop("message"), s.pop("reason")
    return s


def _details(res, name, **kw):
    d = {"name": name, "kind": res.plural}
    if res.group:
        d["group"] = res.group
    d.update(kw)
    return d


def not_found(res, name):
    return ApiError(404, f'{res.qualified} "{name}" not found', "NotFound", _details(res, name))


def namespace_not_found(ns):
    return ApiError(404, f'namespaces "{ns}" not found', "NotFound", {"name": ns, "kind": "namespaces"})


def already_exists(res, name):
    return ApiError(409, f'{res.qualified} "{name}" already exists', "AlreadyExists", _details(res, name))


def conflict(res, name):
    return ApiError(409, f'Operation cannot be fulfilled on {res.qualified} "{name}": the object has been modified; '
                         "please apply your changes to the latest version and try again", "Conflict",
                    _details(res, name))


def namespace_terminating(res, name, ns):
    """A create in a namespace being deleted (the NamespaceLifecycle admission plugin,
    apiserver/pkg/admission/plugin/namespace/lifecycle/admission.go)."""
    return ApiError(403, f'{res.qualified} "{name}" is forbidden: unable to create new content in namespace {ns} '
                         "because it is being terminated", "Forbidden",
                    {**_details(res, name), "causes": [{"reason": "NamespaceTerminating", "field": "metadata.namespace",
                                                        "message": f"namespace {ns} is being terminated"}]})


def namespace_purging(name):
    """A second DELETE of a namespace already Terminating (pkg/registry/core/namespace/storage)."""
    return ApiError(409, f'Operation cannot be fulfilled on namespaces "{name}": The system is ensuring all content '
                         "is removed from this namespace.  Upon completion, this namespace will automatically be "
                         "purged by the system.", "Conflict", {"name": name, "kind": "namespaces"})


def forbidden(user, verb, res_plural, group, name=None, ns=None, sub=None):
    what = res_plural + (f"/{sub}" if sub else "")
    scope = f' in the namespace "{ns}"' if ns else " at the cluster scope"
    head = f'{res_plural}{"." + group if group else ""} "{name}" is forbidden' if name else \
        f'{res_plural}{"." + group if group else ""} is forbidden'
    d = {"kind": res_plural}
    if name:
        d["name"] = name
    if group:
        d["group"] = group
    return ApiError(403, f'{head}: User "{user}" cannot {verb} resource "{what}" in API group "{group}"{scope}',
                    "Forbidden", d)


def invalid(res, name, causes):
    """causes: [(field, reason, message)]; message as NewInvalid builds it."""
    msgs = [f"{f}: {m}" if f else m for f, dummy, m in causes]
    joined = msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]"
    d = {"name": name, "kind": res.kind, "causes": [{"reason": r, "message": m, "field": f} for f, r, m in causes]}
    if res.group:
        d["group"] = res.group
    return ApiError(422, f'{res.kind_qualified} "{name}" is invalid: {joined}', "Invalid", d)


# ------------------------------------------------------------------------------ semantic validation
# Rules of pkg/apis/*/validation/validation.go that the OpenAPI schemas cannot express, for the
# kinds the collection and its components write. Values are shown as field.Error shows them (Go's
# %#v of the internal type; strings quoted, numbers plain).
ANNOTATIONS_LIMIT = 256 * 1024     # apimachinery/pkg/api/validation/objectmeta.go TotalAnnotationSizeLimitB
APPS_SELECTED = ("Deployment", "DaemonSet", "StatefulSet", "ReplicaSet")
STATEFULSET_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy",
                       "minReadySeconds")


def _go_map(m):
    return "map[string]string{" + ", ".join(f'"{k}":"{v}"' for k, v in sorted((m or {}).items())) + "}"


def _go_selector(sel):
    sel = sel or {}
    exprs = sel.get("matchExpressions")
    shown = "[]v1.LabelSelectorRequirement(nil)" if not exprs else "[]v1.LabelSelectorRequirement{" + ", ".join(
        f'v1.LabelSelectorRequirement{{Key:"{e.get("key")}", Operator:"{e.get("operator")}", Values:'
        + ("[]string(nil)" if not e.get("values") else "[]string{" + ", ".join(f'"{x}"' for x in e["values"]) + "}")
        + "}" for e in exprs) + "}"
    labels = "map[string]string(nil)" if not sel.get("matchLabels") else _go_map(sel["matchLabels"])
    return f"v1.LabelSelector{{MatchLabels:{labels}, MatchExpressions:{shown}}}"


def _ports(obj):
    """(field path, value) of every port number the kind's validation ranges over."""
    spec = obj.get("spec") or {}
    if obj.get("kind") == "Pod":
        pod, base = spec, "spec"
    else:
        pod, base = (spec.get("template") or {}).get("spec") or {}, "spec.template.spec"
    for key in ("initContainers", "containers"):
        for i, c in enumerate(pod.get(key) or []):
            for j, p in enumerate(c.get("ports") or []):
                for f in ("containerPort", "hostPort"):
                    if f in p and not (f == "hostPort" and p[f] == 0):
                        yield f"{base}.{key}[{i}].ports[{j}].{f}", p[f]
    if obj.get("kind") == "Service":
        for j, p in enumerate(spec.get("ports") or []):
            yield f"spec.ports[{j}].port", p.get("port")
            if isinstance(p.get("targetPort"), int):
                yield f"spec.ports[{j}].targetPort", p["targetPort"]
            if p.get("nodePort"):
                yield f"spec.ports[{j}].nodePort", p["nodePort"]


def semantic_problems(obj, old=None):
    """[(field, reason, message)] of the rules above; old: the stored object of an update."""
    out = []
    meta = obj.get("metadata") or {}
    size = sum(len(str(k).encode()) + len(str(v).encode()) for k, v in (meta.get("annotations") or {}).items())
    if size > ANNOTATIONS_LIMIT:
        out.append(("metadata.annotations", "FieldValueTooLong", f"Too long: must have at most {ANNOTATIONS_LIMIT} bytes"))
    kind, spec = obj.get("kind"), obj.get("spec") or {}
    for path, value in _ports(obj):
        if isinstance(value, int) and not 1 <= value <= 65535:
            out.append((path, "FieldValueInvalid", f"Invalid value: {value}: must be between 1 and 65535, inclusive"))
    if kind in APPS_SELECTED:
        sel = spec.get("selector")
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if not sel or not (sel.get("matchLabels") or sel.get("matchExpressions")):
            out.append(("spec.selector", "FieldValueRequired", "Required value"))
        elif not match_expressions_match(sel, labels):
            out.append(("spec.template.metadata.labels", "FieldValueInvalid",
                        f"Invalid value: {_go_map(labels)}: `selector` does not match template `labels`"))
    if old is not None and kind in ("Deployment", "DaemonSet", "ReplicaSet"):
        if spec.get("selector") != (old.get("spec") or {}).get("selector"):
            out.append(("spec.selector", "FieldValueInvalid",
                        f"Invalid value: {_go_selector(spec.get('selector'))}: field is immutable"))
    if old is not None and kind == "StatefulSet":
        was = old.get("spec") or {}
        if any(spec.get(k) != was.get(k) for k in set(spec) | set(was) if k not in STATEFULSET_MUTABLE):
            out.append(("spec", "FieldValueForbidden", "Forbidden: updates to statefulset spec for fields other than "
                        "'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' "
                        "and 'minReadySeconds' are forbidden"))
    if kind == "CustomResourceDefinition" and str(obj.get("apiVersion", "")).startswith("apiextensions.k8s.io/"):
        out.extend(structural.crd_problems(obj))
        out.extend(structural.api_approval_problems(obj, old))
    if old is not None and kind in ("RoleBinding", "ClusterRoleBinding") and obj.get("roleRef") != old.get("roleRef"):
        ref = obj.get("roleRef") or {}
        out.append(("roleRef", "FieldValueInvalid", f'Invalid value: rbac.RoleRef{{APIGroup:"{ref.get("apiGroup", "")}", '
                    f'Kind:"{ref.get("kind", "")}", Name:"{ref.get("name", "")}"}}: cannot change roleRef'))
    return out


# ------------------------------------------------------------------------------ names
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                 "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
             "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


def name_problems(name, label=False):
    """[(field, reason, message)] for metadata.name (Namespaces: an RFC 1123 label, else a subdomain)."""
    if not name:
        return [("metadata.name", "FieldValueRequired", "Required value: name or generateName is required")]
    rx, msg, limit = (DNS1123_LABEL, LABEL_MSG, 63) if label else (DNS1123_SUBDOMAIN, SUBDOMAIN_MSG, 253)
    out = []
    if len(name) > limit:
        out.append(("metadata.name", "FieldValueInvalid",
                    f'Invalid value: "{name}": must be no more than {limit} characters'))
    if not rx.match(name):
        out.append(("metadata.name", "FieldValueInvalid", f'Invalid value: "{name}": {msg}'))
    return out


# ------------------------------------------------------------------------------ selectors
_SET_RX = re.compile(r"^\s*(!?)\s*([A-Za-z0-9_./-]+)\s*(?:(notin|in)\s*\(([^)]*)\)|(==|!=|=)\s*([A-Za-z0-9_.-]*))?\s*$")


def _split_top(s):
    """Split a selector at commas outside parentheses."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return out


def parse_label_selector(s: str) -> list:
    """labelSelector (pkg/labels/selector.go syntax): `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`,
    `a`, `!a`. Returns [(op, key, values)]; ApiError 400 on a bad one."""
    reqs = []
    for part in _split_top(s or ""):
        m = _SET_RX.match(part)
        if not m or (m.group(1) and (m.group(3) or m.group(5))):
            raise ApiError(400, f'unable to parse requirement: found \'{part.strip()}\', expected: in, notin, =, ==, '
                                "!=, gt, lt", "BadRequest")
        neg, key, setop, setvals, op, val = m.groups()
        if setop:
            reqs.append((setop, key, {v.strip() for v in setvals.split(",") if v.strip()}))
        elif op:
            reqs.append(("!=" if op == "!=" else "=", key, {val}))
        else:
            reqs.append(("!exists" if neg else "exists", key, set()))
    return reqs


def labels_match(reqs, labels: dict) -> bool:
    labels = labels or {}
    for op, key, vals in reqs:
        has, v = key in labels, labels.get(key)
        ok = {"=": has and v in vals, "in": has and v in vals, "!=": not has or v not in vals,
              "notin": not has or v not in vals, "exists": has, "!exists": not has}[op]
        if not ok:
            return False
    return True


def match_expressions_match(sel: dict, labels: dict) -> bool:
    """A LabelSelector object (matchLabels + matchExpressions) against labels."""
    labels = labels or {}
    for k, v in ((sel or {}).get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in (sel or {}).get("matchExpressions") or []:
        k, op, vals = e.get("key"), e.get("operator"), set(e.get("values") or [])
        if (op == "In" and labels.get(k) not in vals) or (op == "NotIn" and k in labels and labels[k] in vals) \
                or (op == "Exists" and k not in labels) or (op == "DoesNotExist" and k in labels):
            return False
    return True


FIELD_OK = ("metadata.name", "metadata.namespace")
# --- node drain support (k8s_drain, playbooks/remove_node.yml) ---------------------------------
# Fields a kind adds to the selectable ones: a Pod's spec.nodeName (and the others its registry
# declares: pkg/registry/core/pod/strategy.go ToSelectableFields), what kubectl drain lists a
# node's pods by.
KIND_FIELDS = {"pods": ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
                        "spec.serviceAccountName", "status.phase", "status.podIP")}


def parse_field_selector(s: str, plural: str = "") -> list:
    """fieldSelector: metadata.name / metadata.namespace (every kind) and the kind's own fields
    (KIND_FIELDS) with =, ==, !=."""
    known = FIELD_OK + KIND_FIELDS.get(plural, ())
    out = []
    for part in [p for p in (s or "").split(",") if p.strip()]:
        m = re.match(r"^\s*([A-Za-z.]+)\s*(==|!=|=)\s*(.*?)\s*$", part)
        if not m:
            raise ApiError(400, f'invalid selector: \'{s}\'; can\'t understand \'{part}\'', "BadRequest")
        if m.group(1) not in known:
            raise ApiError(400, f'"{m.group(1)}" is not a known field selector: only '
                                + ", ".join(f'"{f}"' for f in known), "BadRequest")
        out.append((m.group(1), m.group(2) != "!=", m.group(3)))
    return out


def fields_match(reqs, obj) -> bool:
    for f, eq, v in reqs:
        actual = obj
        for part in f.split("."):
            actual = actual.get(part) if isinstance(actual, dict) else None
        if (str(actual if actual is not None else "") == v) != eq:
            return False
    return True


def eviction_target(body, ns, name):
    """The pod an Eviction (policy/v1, or the older policy/v1beta1) names, checked against the URL
    as the real server checks it (pkg/registry/core/pod/storage/eviction.go: the body's name must be
    the pod's); raises the API's 400 otherwise."""
    if not isinstance(body, dict) or body.get("kind") != "Eviction" or \
            body.get("apiVersion") not in ("policy/v1", "policy/v1beta1"):
        raise ApiError(400, "the body of an eviction must be a policy/v1 Eviction", "BadRequest")
    meta = body.get("metadata") or {}
    if meta.get("name") != name:
        raise ApiError(400, "name in URL does not match name in Eviction object", "BadRequest")
    if meta.get("namespace") not in (None, "", ns):
        raise ApiError(400, "namespace in URL does not match namespace in Eviction object", "BadRequest")
    return ns, name
# --- end of node drain support ------------------------------------------------------------------


# ------------------------------------------------------------------------------ patches
def merge_patch(target, patch):
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


# patchMergeKey of the lists most manifests touch (k8s.io/api types.go `patchStrategy:"merge"` tags)
MERGE_KEYS = {"containers": "name", "initContainers": "name", "ephemeralContainers": "name", "volumes": "name",
              "env": "name", "volumeMounts": "mountPath", "volumeDevices": "devicePath", "ports": "containerPort",
              "imagePullSecrets": "name", "conditions": "type", "addresses": "type", "hostAliases": "ip",
              "ownerReferences": "uid", "topologySpreadConstraints": "topologyKey", "resourceClaims": "name"}
MERGE_SETS = {"finalizers"}


def strategic_merge_patch(target, patch, key=None):
    """Strategic merge patch for the common cases: maps merge like RFC 7386; lists named in MERGE_KEYS
    merge by their key (`$patch: delete` on an item removes it, `$patch: replace` on the list's
    directive item replaces it); finalizers merge as a set; other lists replace; `$patch: replace` /
    `$patch: delete` on a map. Not supported: $retainKeys, $setElementOrder, $deleteFromPrimitiveList."""
    if isinstance(patch, dict):
        directive = patch.get("$patch")
        if directive == "delete":
            return None
        body = {k: v for k, v in patch.items() if not k.startswith("$")}
        if directive == "replace":
            return copy.deepcopy(body)
        out = copy.deepcopy(target) if isinstance(target, dict) else {}
        for k, v in body.items():
            if v is None:
                out.pop(k, None)
                continue
            merged = strategic_merge_patch(out.get(k), v, k)
            if merged is None:
                out.pop(k, None)
            else:
                out[k] = merged
        return out
    if isinstance(patch, list) and key in MERGE_SETS and isinstance(target, list):
        return list(target) + [x for x in patch if x not in target]
    if isinstance(patch, list) and key in MERGE_KEYS and isinstance(target, list):
        mk = MERGE_KEYS[key]
        if any(isinstance(i, dict) and i.get("$patch") == "replace" for i in patch):
            return [copy.deepcopy(i) for i in patch if not (isinstance(i, dict) and "$patch" in i)]
        out = copy.deepcopy(target)
        for item in patch:
            if not isinstance(item, dict) or mk not in item:
                return copy.deepcopy(patch)
            idx = next((n for n, t in enumerate(out) if isinstance(t, dict) and t.get(mk) == item[mk]), None)
            if item.get("$patch") == "delete":
                if idx is not None:
                    out.pop(idx)
            elif idx is None:
                out.append({k: v for k, v in item.items() if not k.startswith("$")})
            else:
                out[idx] = strategic_merge_patch(out[idx], item)
        return out
    return copy.deepcopy(patch)


def json_patch(target, ops):
    """RFC 6902 JSON patch: add, remove, replace, test, copy, move."""
    doc = copy.deepcopy(target)

    def walk(path):
        if not path.startswith("/"):
            raise ApiError(422, f"invalid JSON pointer {path!r}", "Invalid")
        parts = [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]
        parent = doc
        for p in parts[:-1]:
            parent = parent[int(p)] if isinstance(parent, list) else parent[p]
        return parent, parts[-1]

    def get(path):
        parent, last = walk(path)
        return parent[int(last)] if isinstance(parent, list) else parent[last]

    if not isinstance(ops, list):
        raise ApiError(400, "the JSON patch must be a list of operations", "BadRequest")
    for op in ops:
        try:
            kind, path = op["op"], op["path"]
            if kind == "test":
                if get(path) != op.get("value"):
                    raise ApiError(422, f"the test at {path} failed", "Invalid")
                continue
            value = copy.deepcopy(get(op["from"])) if kind in ("copy", "move") else op.get("value")
            if kind == "move":
                p, last = walk(op["from"])
                p.pop(int(last)) if isinstance(p, list) else p.pop(last)
            if kind in ("remove", "replace"):
                get(path)
            parent, last = walk(path)
            if kind == "remove":
                parent.pop(int(last)) if isinstance(parent, list) else parent.pop(last)
            elif isinstance(parent, list):
                i = len(parent) if last == "-" else int(last)
                if kind == "replace":
                    parent[i] = value
                else:
                    parent.insert(i, value)
            else:
                parent[last] = value
        except (KeyError, IndexError, ValueError, TypeError) as e:
            raise ApiError(422, f"the server rejected our request due to an error in our request: {op}: {e}",
                           "Invalid") from None
    return doc


# ------------------------------------------------------------------------------ metadata
def spec_part(obj):
    """What bumps metadata.generation: everything but metadata and status."""
    return {k: v for k, v in (obj or {}).items() if k not in ("metadata", "status", "apiVersion", "kind")}


def prepare_create(obj, res, uid, now, keep_status=False):
    obj = copy.deepcopy(obj)
    meta = obj.setdefault("metadata", {})
    for k in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
        meta.pop(k, None)
    meta["uid"] = uid
    meta["creationTimestamp"] = now
    if "spec" in obj or res.crd:
        meta["generation"] = 1
    else:
        meta.pop("generation", None)
    if "status" in obj and not keep_status and "status" in res.subresources:
        obj.pop("status")
    return obj


def prepare_update(new, old, res, keep_status=False):
    """Server-owned fields come from the stored object; status too when the resource has a status
    subresource (it is written through /status only). The generation is the stored one here:
    bump_generation decides, once the object is decoded and defaulted."""
    new = copy.deepcopy(new)
    meta, ometa = new.setdefault("metadata", {}), old.get("metadata") or {}
    for k in ("uid", "creationTimestamp", "deletionTimestamp", "generation"):
        if k in ometa:
            meta[k] = ometa[k]
        else:
            meta.pop(k, None)
    meta.pop("resourceVersion", None)
    if "status" in res.subresources and not keep_status:
        if "status" in old:
            new["status"] = copy.deepcopy(old["status"])
        else:
            new.pop("status", None)
    return new


def bump_generation(new, old):
    """metadata.generation + 1 when the spec changed: compared after decoding and defaulting, as the
    strategies' PrepareForUpdate compares internal objects (apiequality.Semantic.DeepEqual of the
    old and new Spec, e.g. pkg/registry/apps/deployment/strategy.go), so what only the server's
    normalisation rewrites (a quantity "1000m" stored as "1", defaults) is no change."""
    meta, ometa = new.setdefault("metadata", {}), old.get("metadata") or {}
    if "generation" in ometa and spec_part(new) != spec_part(old):
        meta["generation"] = int(ometa["generation"]) + 1


# ------------------------------------------------------------------------------ schema validation
_GO_TYPES = {str: "string", bool: "boolean", int: "integer", float: "number", dict: "object", list: "array",
             type(None): "null"}


def field_path(parts) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (("." if out else "") + str(p))
    return out


def _shown(v):
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (dict, list)):
        return "\"" + _GO_TYPES[type(v)] + "\""
    return json.dumps(v)


def strict_decoding_error(res, fields):
    """fieldValidation=Strict and unknown fields: 400, the decoder's strict error wrapped as the
    handlers wrap a decoding error (apiserver endpoints/handlers/rest.go transformDecodeError;
    runtime.NewStrictDecodingError joins the fields' errors with ", ")."""
    msg = "strict decoding error: " + ", ".join(f'unknown field "{f}"' for f in fields)
    return ApiError(400, f'{res.kind} in version "{res.version}" cannot be handled as a {res.kind}: {msg}',
                    "BadRequest", {"causes": [{"reason": "FieldValueInvalid", "message": f'unknown field "{f}"',
                                               "field": f} for f in fields]})


def schema_error_to_api(res, name, err):
    """A jsonschema ValidationError (kubernetes-validate's or a CRD schema's) -> ApiError as the real
    API server words it: unknown fields are a strict decoding error (400 BadRequest, the server's
    fieldValidation=Strict), everything else 422 Invalid naming the field path."""
    parts = list(err.path)
    path = field_path(parts)
    if err.validator == "additionalProperties":
        m = re.search(r"\((.*) (?:was|were) unexpected\)", err.message)
        extra = [x.strip().strip("'") for x in (m.group(1).split(",") if m else [])] or ["?"]
        return strict_decoding_error(res, [field_path(parts + [x]) for x in extra])
    if err.validator == "required":
        m = re.match(r"'(.*)' is a required property", err.message)
        f = field_path(parts + [m.group(1) if m else "?"])
        return invalid(res, name, [(f, "FieldValueRequired", "Required value")])
    if err.validator == "type":
        want = err.validator_value
        want = next((t for t in want if t != "null"), want[0]) if isinstance(want, list) else want
        got = _GO_TYPES.get(type(err.instance), "unknown")
        return invalid(res, name, [(path, "FieldValueTypeInvalid",
                                    f'Invalid value: "{got}": {path} in body must be of type {want}: "{got}"')])
    if err.validator == "enum":
        vals = ", ".join(json.dumps(v) for v in err.validator_value)
        return invalid(res, name, [(path, "FieldValueNotSupported",
                                    f"Unsupported value: {_shown(err.instance)}: supported values: {vals}")])
    return invalid(res, name, [(path, "FieldValueInvalid", f"Invalid value: {_shown(err.instance)}: {err.message}")])


def crd_schema(schema):
    """A CRD's openAPIV3Schema as JSON Schema (draft 4) for jsonschema: `nullable: true` admits null,
    `x-kubernetes-int-or-string` admits an integer or a string; other x-kubernetes-* are ignored."""
    if isinstance(schema, list):
        return [crd_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: crd_schema(v) for k, v in schema.items() if not k.startswith("x-kubernetes-") and k != "nullable"}
    if schema.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if schema.get("nullable") and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


# ------------------------------------------------------------------------------ Node Ready rule
NOT_READY_MESSAGE = ("container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady "
                     "message:Network plugin returns error: cni plugin not initialized")


def cni_config_ok(conf_dir="/etc/cni/net.d"):
    """Like containerd's CRI (go-cni): the first *.conflist/*.conf/*.json in the directory (sorted) that
    parses as JSON with a `type` (a .conf) or `plugins` (a .conflist) makes the network ready."""
    try:
        names = sorted(os.listdir(conf_dir))
    except OSError:
        return False
    for n in names:
        if not n.endswith((".conflist", ".conf", ".json")):
            continue
        try:
            with open(os.path.join(conf_dir, n)) as f:
                doc = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and (doc.get("plugins") if n.endswith(".conflist") else doc.get("type")):
            if n.endswith(".conflist") and not all(isinstance(p, dict) and p.get("type") for p in doc["plugins"]):
                continue
            return True
    return False


def ready_condition(ok, now, previous=None):
    status = "True" if ok else "False"
    reason, message = ("KubeletReady", "kubelet is posting ready status") if ok else \
        ("KubeletNotReady", NOT_READY_MESSAGE)
    since = previous.get("lastTransitionTime") if previous and previous.get("status") == status else now
    return {"type": "Ready", "status": status, "lastHeartbeatTime": now, "lastTransitionTime": since,
            "reason": reason, "message": message}


def node_is_ready(node) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in ((node.get("status") or {}).get("conditions") or []))


# ------------------------------------------------------------------------------ workload status rule
def tolerates(tolerations, taint) -> bool:
    for t in tolerations or []:
        if t.get("effect") and t.get("effect") != taint.get("effect"):
            continue
        if not t.get("key"):
            if t.get("operator") == "Exists":
                return True
            continue
        if t.get("key") != taint.get("key"):
            continue
        if t.get("operator") == "Exists" or t.get("value", "") == taint.get("value", ""):
            return True
    return False


def fits(pod_spec, node) -> bool:
    """The pod template's nodeSelector matches the node's labels and it tolerates the node's
    NoSchedule/NoExecute taints (required node affinity is not evaluated)."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    if any(labels.get(k) != v for k, v in (pod_spec.get("nodeSelector") or {}).items()):
        return False
    return all(tolerates(pod_spec.get("tolerations"), t) for t in (node.get("spec") or {}).get("taints") or []
               if t.get("effect") in ("NoSchedule", "NoExecute"))


def template_images(pod_spec) -> list:
    return [c.get("image", "") for key in ("initContainers", "containers") for c in pod_spec.get(key) or []]


def workload_status(obj, nodes, image_ok) -> dict:
    """The status a controller would write, by the double's rule: desired = spec.replicas
    (Deployment/StatefulSet/ReplicaSet) or the nodes the template fits (DaemonSet); pods are ready
    where every image of the template exists in its registry (image_ok) and, without hostNetwork,
    on Ready nodes (a Deployment/StatefulSet: all of them if one fitting node is Ready)."""
    kind = obj.get("kind")
    spec = obj.get("spec") or {}
    pod = (spec.get("template") or {}).get("spec") or {}
    gen = (obj.get("metadata") or {}).get("generation", 1)
    images = all(image_ok(i) for i in template_images(pod))
    host_net = bool(pod.get("hostNetwork"))
    if kind == "DaemonSet":
        fit = [n for n in nodes if fits(pod, n)]
        ready = [n for n in fit if images and (host_net or node_is_ready(n))]
        d, r = len(fit), len(ready)
        return {"currentNumberScheduled": d, "desiredNumberScheduled": d, "numberMisscheduled": 0,
                "numberReady": r, "numberAvailable": r, **({"numberUnavailable": d - r} if d - r else {}),
                "updatedNumberScheduled": d, "observedGeneration": gen}
    want = spec.get("replicas", 1)
    want = want if isinstance(want, int) else 1
    placeable = any(fits(pod, n) and (host_net or node_is_ready(n)) for n in nodes)
    r = want if (images and placeable) else 0
    if kind == "StatefulSet":
        return {"replicas": want, "readyReplicas": r, "currentReplicas": want, "updatedReplicas": want,
                "availableReplicas": r, "observedGeneration": gen, "collisionCount": 0}
    st = {"observedGeneration": gen, "replicas": want, "updatedReplicas": want, "readyReplicas": r,
          "availableReplicas": r}
    if kind == "Deployment":
        if want - r:
            st["unavailableReplicas"] = want - r
        st["conditions"] = [
            {"type": "Available", "status": "True" if r >= want else "False",
             "reason": "MinimumReplicasAvailable" if r >= want else "MinimumReplicasUnavailable",
             "message": "Deployment has minimum availability." if r >= want else
             "Deployment does not have minimum availability."},
            {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable" if r >= want else
             "ReplicaSetUpdated", "message": f'ReplicaSet "{(obj.get("metadata") or {}).get("name")}" '
             + ("has successfully progressed." if r >= want else "is progressing.")}]
    else:
        st["fullyLabeledReplicas"] = want
    return {k: v for k, v in st.items() if v != 0 or k in ("replicas", "observedGeneration")}


# ------------------------------------------------------------------------------ disruption budgets
def pod_ready(pod) -> bool:
    """A Pod's Ready condition is True (podutil.IsPodReady, what the disruption controller counts)."""
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in ((pod.get("status") or {}).get("conditions") or []))


def _scaled(value, total, round_up):
    """An IntOrString against a total (apimachinery intstr.GetScaledValueFromIntOrPercent)."""
    if isinstance(value, int):
        return value
    pct = int(str(value).rstrip("%"))
    return -(-pct * total // 100) if round_up else pct * total // 100


def _expected_scale(pods, owner):
    """The disruption controller's getExpectedScale: the replicas of each pod's controller (a
    ReplicaSet owned by a Deployment counts as that Deployment), each controller once; a pod with
    no controller, or one the store lacks, fails the sync. owner(kind, namespace, name) -> the
    stored object or None."""
    seen, total = set(), 0
    for pod in pods:
        meta = pod.get("metadata") or {}
        ref = next((r for r in meta.get("ownerReferences") or [] if r.get("controller")), None)
        if ref is None:
            raise ValueError(f'found no controller ref for pod "{meta.get("name")}"')
        ctl = owner(ref.get("kind"), meta.get("namespace"), ref.get("name")) \
            if ref.get("kind") in ("ReplicaSet", "Deployment", "StatefulSet", "ReplicationController") else None
        if ctl is not None and ctl.get("kind") == "ReplicaSet":
            up = next((r for r in (ctl.get("metadata") or {}).get("ownerReferences") or []
                       if r.get("controller") and r.get("kind") == "Deployment"), None)
            ctl = owner("Deployment", meta.get("namespace"), up["name"]) if up else ctl
        if ctl is None:
            raise ValueError(f'found no controllers for pod "{meta.get("name")}"')
        uid = (ctl.get("metadata") or {}).get("uid")
        if uid not in seen:
            seen.add(uid)
            replicas = (ctl.get("spec") or {}).get("replicas", 1)
            total += replicas if isinstance(replicas, int) else 1
    return total


def pdb_status(pdb, pods, owner) -> dict:
    """A PodDisruptionBudget's status as the disruption controller computes it
    (pkg/controller/disruption/disruption.go trySync/getExpectedPodCount/countHealthyPods;
    pkg/apis/policy/v1 helper UpdateDisruptionAllowedCondition). The double has no controller: the
    status is computed when the budget is read. pods: the namespace's pods."""
    spec = pdb.get("spec") or {}
    sel = spec.get("selector")
    mine = [] if sel is None else [p for p in pods if match_expressions_match(sel, (p.get("metadata") or {}).get("labels"))]
    gen = (pdb.get("metadata") or {}).get("generation", 1)
    try:
        if spec.get("maxUnavailable") is not None:
            expected = _expected_scale(mine, owner)
            desired = max(0, expected - _scaled(spec["maxUnavailable"], expected, True))
        elif isinstance(spec.get("minAvailable"), int):
            expected, desired = len(mine), spec["minAvailable"]
        elif spec.get("minAvailable") is not None:
            expected = _expected_scale(mine, owner)
            desired = _scaled(spec["minAvailable"], expected, True)
        else:
            expected, desired = 0, 0
    except ValueError as e:
        # failSafe: no disruption allowed, the reason in the condition
        return {"observedGeneration": gen, "disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0,
                "expectedPods": 0, "conditions": [{"type": "DisruptionAllowed", "status": "False",
                                                   "reason": "SyncFailed", "message": str(e),
                                                   "observedGeneration": gen}]}
    healthy = sum(1 for p in mine if not (p.get("metadata") or {}).get("deletionTimestamp") and pod_ready(p))
    allowed = max(0, healthy - desired)
    return {"observedGeneration": gen, "disruptionsAllowed": allowed, "currentHealthy": healthy,
            "desiredHealthy": desired, "expectedPods": expected,
            "conditions": [{"type": "DisruptionAllowed", "status": "True" if allowed else "False",
                            "reason": "SufficientPods" if allowed else "InsufficientPods", "message": "",
                            "observedGeneration": gen}]}


def eviction_refusal(pod, pdbs):
    """None when the eviction may delete the pod, else the ApiError the real server answers
    (pkg/registry/core/pod/storage/eviction.go): a pod that is Pending, Succeeded, Failed or being
    deleted is deleted whatever the budgets (canIgnorePDB); more than one budget: 500; an unready pod
    goes when the budget is met (IfHealthyBudget, the default) or its unhealthyPodEvictionPolicy is
    AlwaysAllow; otherwise a budget with no disruption allowed: 429 naming it. pdbs: the budgets
    whose selector matches the pod, with their computed status."""
    status = pod.get("status") or {}
    if status.get("phase") in ("Pending", "Succeeded", "Failed") or (pod.get("metadata") or {}).get("deletionTimestamp"):
        return None
    if len(pdbs) > 1:
        return ApiError(500, "This pod has more than one PodDisruptionBudget, which the eviction subresource does "
                             "not support.", "InternalError", {})
    if not pdbs:
        return None
    pdb = pdbs[0]
    st, name = pdb.get("status") or {}, pdb["metadata"]["name"]
    if not pod_ready(pod):
        if (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy") == "AlwaysAllow":
            return None
        if st.get("currentHealthy", 0) >= st.get("desiredHealthy", 0) > 0:
            return None
    if st.get("disruptionsAllowed", 0) > 0:
        return None
    cond = next((c for c in st.get("conditions") or [] if c.get("type") == "DisruptionAllowed"), {})
    if cond.get("status") == "False" and cond.get("reason") == "SyncFailed" and cond.get("message"):
        why = f"The disruption budget {name} does not allow evicting pods currently because it failed sync: " \
              f"{cond['message']}"
    elif st.get("currentHealthy", 0) <= st.get("desiredHealthy", 0):
        why = f"The disruption budget {name} needs {st.get('desiredHealthy', 0)} healthy pods and has " \
              f"{st.get('currentHealthy', 0)} currently"
    else:
        why = f"The disruption budget {name} does not allow evicting pods currently"
    return ApiError(429, "Cannot evict pod as it would violate the pod's disruption budget.", "TooManyRequests",
                    {"causes": [{"reason": "DisruptionBudget", "message": why}]})


def parse_image(ref: str):
    """registry host, repository, tag-or-digest of an image reference (docker.io defaults)."""
    name, digest = (ref.split("@", 1) + [None])[:2]
    first = name.split("/", 1)[0]
    if "/" in name and ("." in first or ":" in first or first == "localhost"):
        host, repo = name.split("/", 1)
    else:
        host, repo = "docker.io", name if "/" in name else f"library/{name}"
    tag = None
    if ":" in repo.rsplit("/", 1)[-1]:
        repo, tag = repo.rsplit(":", 1)
    return host, repo, digest or tag or "latest"

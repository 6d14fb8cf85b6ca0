"""Server-side apply and field management (managedFields), as kube-apiserver does them.

Sources (read for their rules; nothing copied):
- sigs.k8s.io/structured-merge-diff (SMD) v4/v6: fieldpath/element.go (path elements, their order and
  String form), fieldpath/serialize.go + serialize-pe.go (the FieldsV1 encoding), typed/tofieldset.go
  (the fields a value sets), typed/compare.go (added / modified / removed), typed/merge.go (merging
  the applied configuration into the live object), merge/update.go (Updater.Apply / Update: conflicts,
  force, pruning what a manager no longer applies);
- k8s.io/apimachinery pkg/util/managedfields/internal: conflict.go (the 409 Status and its message),
  managedfields.go (manager identifiers: manager + operation + apiVersion for Update, without it for
  Apply, + subresource), managedfieldsupdater.go (an Update's fields are added to the same manager's
  previous ones; times change only when something changed), stripmeta.go (apiVersion, kind and the
  server's metadata fields are never managed), fieldmanager.go (an Update that sends managedFields
  sets them; an empty list or none keeps the stored ones), structuredmerge.go (an apply patch must
  not carry managedFields, and must be of the URL's apiVersion);
- k8s.io/kube-openapi pkg/schemaconv/smd.go (the list and map types from the OpenAPI extensions:
  `x-kubernetes-list-type` set/map + `x-kubernetes-list-map-keys`, else a `merge`
  `x-kubernetes-patch-strategy` with its `x-kubernetes-patch-merge-key`, else atomic; maps granular
  unless `x-kubernetes-map-type: atomic`);
- k8s.io/apiserver pkg/endpoints/handlers/patch.go, rest.go (fieldManager defaults to the User-Agent
  up to its first "/"), k8s.io/apimachinery pkg/apis/meta/v1/validation (PatchOptions: fieldManager
  required for apply, force only for apply).

A path is a tuple of path elements, each kept in its serialized FieldsV1 form: `f:<name>`,
`k:{"name":"c"}` (an associative list item by its keys, sorted by key name, compact JSON),
`v:<json>` (a set item), `i:<n>` (an index; never made here). A field set is a Python set of paths.
"""
from __future__ import annotations

import copy
import json

from .logic import ApiError

# stripmeta.go: never part of a manager's set
STRIPPED = {("f:apiVersion",), ("f:kind",), ("f:metadata",)} | {
    ("f:metadata", f"f:{k}") for k in ("name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName",
                                       "generation", "managedFields", "resourceVersion")}
# k8s.io/api core/v1 types.go: `+default="TCP"` on the protocol of ContainerPort/ServicePort/EndpointPort,
# which the real type converter puts into a list map key left out (the double's schemas lack defaults)
KEY_DEFAULTS = {"protocol": "TCP"}


# ------------------------------------------------------------------ schemas
class Schema:
    """The list / map types of a kind, read from its OpenAPI schema (the definitions of openapi.py or a
    CRD version's openAPIV3Schema); a missing or free-form schema deduces the type from the value
    (SMD's deduced type: maps granular, lists atomic)."""

    def __init__(self, root, defs=None):
        self.root, self.defs = root or {}, defs or {}

    def resolve(self, s):
        for dummy in range(20):
            if not isinstance(s, dict):
                return {}
            ref = s.get("$ref")
            if not ref:
                if "allOf" in s and len(s["allOf"]) == 1 and not s.get("properties"):
                    s = {**s["allOf"][0], **{k: v for k, v in s.items() if k != "allOf"}}
                    continue
                return s
            s = {**self.defs.get(ref.rsplit("/", 1)[1], {}), **{k: v for k, v in s.items() if k not in ("$ref",)}}
        return s

    def field(self, s, name):
        """(sub-schema, declared) of a map's key."""
        s = self.resolve(s)
        props = s.get("properties") or {}
        if name in props:
            return props[name], True
        ap = s.get("additionalProperties")
        return (ap if isinstance(ap, dict) else {}), False

    def items(self, s):
        return self.resolve(s).get("items") or {}

    def list_kind(self, s):
        """("atomic" | "set" | "map", keys) by kube-openapi schemaconv's rules."""
        s = self.resolve(s)
        lt = s.get("x-kubernetes-list-type")
        if lt == "set":
            return "set", ()
        if lt == "map":
            return "map", tuple(s.get("x-kubernetes-list-map-keys") or ())
        if lt is None and s.get("x-kubernetes-patch-strategy", "").split(",")[0] == "merge" and \
                s.get("x-kubernetes-patch-merge-key"):
            return "map", (s["x-kubernetes-patch-merge-key"],)
        return "atomic", ()

    def map_atomic(self, s):
        return self.resolve(s).get("x-kubernetes-map-type") == "atomic"


def _json(v):
    # Go's encoding (jsoniter's standard-library-compatible config): compact, HTML characters escaped
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False, sort_keys=True).replace(
        "<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def item_pe(schema, lst_schema, item):
    """The path element of a list item: `k:{...}` by its keys (map), `v:<json>` (set)."""
    kind, keys = schema.list_kind(lst_schema)
    if kind == "map" and isinstance(item, dict):
        kv = {}
        for k in keys:
            if k in item:
                kv[k] = item[k]
            elif k in KEY_DEFAULTS:
                kv[k] = KEY_DEFAULTS[k]
        return "k:" + _json(dict(sorted(kv.items())))
    return "v:" + _json(item)


def _is_map(v):
    return isinstance(v, dict)


# ------------------------------------------------------------------ the fields a value sets (tofieldset.go)
def field_set(obj, schema, s=None, path=()):
    out = set()
    s = schema.root if s is None and not path else s
    _fields(obj, schema, s, path, out)
    return out


def _fields(v, schema, s, path, out):
    if _is_map(v):
        if schema.map_atomic(s):
            out.add(path)
            return
        for k, x in v.items():
            sub, declared = schema.field(s, k)
            p = path + (f"f:{k}",)
            _fields(x, schema, sub, p, out)
            if x is None or (_is_map(x) and not x) or not declared:
                out.add(p)
    elif isinstance(v, list):
        kind, dummy = schema.list_kind(s)
        if kind == "atomic":
            out.add(path)
            return
        seen, dup = set(), set()
        for it in v:
            pe = item_pe(schema, s, it)
            (dup if pe in seen else seen).add(pe)
        for pe in dup:
            out.add(path + (pe,))
        for it in v:
            pe = item_pe(schema, s, it)
            if pe in dup:
                continue
            _fields(it, schema, schema.items(s), path + (pe,), out)
            out.add(path + (pe,))
    else:
        out.add(path)


# ------------------------------------------------------------------ compare (typed/compare.go)
def compare(lhs, rhs, schema):
    """(added, modified, removed) from lhs to rhs."""
    acc = (set(), set(), set())
    _cmp(lhs, rhs, schema, schema.root, (), acc)
    return acc


_ABSENT = object()


def _shape(v):
    return None if v is _ABSENT else "map" if _is_map(v) else "list" if isinstance(v, list) else "scalar"


def _cmp(lhs, rhs, schema, s, path, acc):
    added, modified, removed = acc
    in_leaf = True
    shapes = {_shape(lhs), _shape(rhs)} - {None}
    if shapes == {"map"}:
        lm = lhs if _is_map(lhs) else {}
        rm = rhs if _is_map(rhs) else {}
        if not schema.map_atomic(s) and (lm or rm):       # an empty map on both sides is a leaf
            in_leaf = False
            for k in list(lm) + [k for k in rm if k not in lm]:
                sub, dummy = schema.field(s, k)
                _cmp(lm.get(k, _ABSENT), rm.get(k, _ABSENT), schema, sub, path + (f"f:{k}",), acc)
    elif shapes == {"list"}:
        ll = lhs if isinstance(lhs, list) else []
        rl = rhs if isinstance(rhs, list) else []
        if schema.list_kind(s)[0] != "atomic" and (ll or rl):
            in_leaf = False
            li = {item_pe(schema, s, it): it for it in ll}
            ri = {item_pe(schema, s, it): it for it in rl}
            for pe in list(li) + [p for p in ri if p not in li]:
                _cmp(li.get(pe, _ABSENT), ri.get(pe, _ABSENT), schema, schema.items(s), path + (pe,), acc)
    if in_leaf:
        if lhs is _ABSENT:
            added.add(path)
        elif rhs is _ABSENT:
            removed.add(path)
        elif lhs != rhs:
            modified.add(path)
    elif lhs is _ABSENT:
        added.add(path)
    elif rhs is _ABSENT:
        removed.add(path)


# ------------------------------------------------------------------ merge (typed/merge.go)
def merge(live, config, schema, s=None, top=True):
    """The applied configuration merged into the live object: maps by key, associative lists by
    their keys (shared items in the configuration's order, live-only items where they were), atomic
    lists and maps and scalars replaced."""
    s = schema.root if top else s
    if _is_map(live) and _is_map(config) and not schema.map_atomic(s):
        out = dict(live)
        for k, v in config.items():
            sub, dummy = schema.field(s, k)
            out[k] = merge(live[k], v, schema, sub, False) if k in live else copy.deepcopy(v)
        return out
    if isinstance(live, list) and isinstance(config, list) and schema.list_kind(s)[0] != "atomic":
        isch = schema.items(s)
        lpe = [item_pe(schema, s, it) for it in live]
        rpe = [item_pe(schema, s, it) for it in config]
        lmap, rmap = dict(zip(lpe, live)), dict(zip(rpe, config))
        out, done, ri = [], set(), 0
        for pe, it in zip(lpe, live):
            if pe in done:
                continue
            if pe not in rmap:
                out.append(copy.deepcopy(it))
                done.add(pe)
                continue
            # a shared item: the configuration's items up to it come first, in its order
            while ri < len(rpe):
                r = rpe[ri]
                ri += 1
                if r not in done:
                    out.append(merge(lmap[r], rmap[r], schema, isch, False) if r in lmap else copy.deepcopy(rmap[r]))
                    done.add(r)
                if r == pe:
                    break
        for r in rpe[ri:]:
            if r not in done:
                out.append(merge(lmap[r], rmap[r], schema, isch, False) if r in lmap else copy.deepcopy(rmap[r]))
                done.add(r)
        return out
    return copy.deepcopy(config)


# ------------------------------------------------------------------ removing fields (typed/remove.go)
def _owned_below(path, sets):
    n = len(path)
    return any(p[:n] == path for st in sets for p in st)


def remove_paths(obj, paths, schema):
    """obj without the fields at paths (a map key, a list item, a leaf; a path under another one goes
    with it). A list or map left empty goes too: the Go types' `omitempty` slices and maps, which the
    real server's decoding drops."""
    obj = copy.deepcopy(obj)
    for path in sorted(paths, key=len):
        if path and not any(path[:n] in paths for n in range(1, len(path))):
            _remove(obj, path, schema, schema.root)
    return obj


def _remove(v, path, schema, s):
    head, rest = path[0], path[1:]
    if _is_map(v) and head.startswith("f:"):
        k = head[2:]
        if k not in v:
            return
        if rest:
            _remove(v[k], rest, schema, schema.field(s, k)[0])
        if not rest or (isinstance(v[k], (list, dict)) and not v[k]):
            del v[k]
    elif isinstance(v, list):
        for i, it in enumerate(v):
            if item_pe(schema, s, it) == head:
                if not rest:
                    del v[i]
                else:
                    _remove(it, rest, schema, schema.items(s))
                return


# ------------------------------------------------------------------ the FieldsV1 encoding
_ORDER = {"f": 0, "k": 1, "v": 2, "i": 3}


def _pe_key(pe):
    # fieldpath/element.go Compare: field names before keys before values before indexes
    return (_ORDER.get(pe[0], 4), int(pe[2:]) if pe[0] == "i" else 0, pe)


def encode(paths):
    """A field set as FieldsV1 (serialize.go): a path that is both owned and a parent gets `.: {}`."""
    tree = {}
    for p in paths:
        node = tree
        for pe in p:
            node = node.setdefault(pe, {})
        node["."] = True

    def emit(node, top):
        out = {}
        if not top and node.get(".") and len(node) > 1:
            out["."] = {}
        for pe in sorted((k for k in node if k != "."), key=_pe_key):
            out[pe] = emit(node[pe], False)
        return out
    return emit(tree, True)


def decode(fields, prefix=()):
    out = set()
    for pe, sub in (fields or {}).items():
        if pe == ".":
            out.add(prefix)
            continue
        p = prefix + (pe,)
        if not sub:
            out.add(p)
        else:
            out |= decode(sub, p)
    return out


def path_string(path):
    """fieldpath Path.String(): `.spec.replicas`, `[name="c"]`, `[="x"]`, `[0]`."""
    out = []
    for pe in path:
        t, body = pe[0], pe[2:]
        if t == "f":
            out.append("." + body)
        elif t == "k":
            out.append("[" + ",".join(f"{k}={_go_str(v)}" for k, v in json.loads(body).items()) + "]")
        elif t == "v":
            out.append(f"[={_go_str(json.loads(body))}]")
        else:
            out.append(f"[{body}]")
    return "".join(out)


def _go_str(v):
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    return str(v)


# ------------------------------------------------------------------ managers (managedFields)
class Managers:
    """The managedFields of an object: entries keyed by (manager, operation, apiVersion for Update
    only, subresource) as managedfields.go's identifiers, each with its field set."""

    def __init__(self, entries=None):
        self.entries = []       # dicts: manager, operation, apiVersion, subresource, time, set
        for e in entries or []:
            if not isinstance(e, dict) or not e.get("manager") and not e.get("operation"):
                continue
            self.entries.append({"manager": e.get("manager", ""), "operation": e.get("operation", "Update"),
                                 "apiVersion": e.get("apiVersion", ""), "subresource": e.get("subresource", ""),
                                 "time": e.get("time"), "set": decode(e.get("fieldsV1"))})

    @staticmethod
    def ident(e):
        return (e["manager"], e["operation"], e["apiVersion"] if e["operation"] == "Update" else "",
                e["subresource"])

    def find(self, ident):
        return next((e for e in self.entries if self.ident(e) == ident), None)

    def to_list(self):
        out = []
        for e in self.entries:
            st = e["set"] - STRIPPED
            if not st:
                continue
            d = {"manager": e["manager"], "operation": e["operation"], "apiVersion": e["apiVersion"]}
            if e.get("time"):
                d["time"] = e["time"]
            d["fieldsType"] = "FieldsV1"
            d["fieldsV1"] = encode(st)
            if e["subresource"]:
                d["subresource"] = e["subresource"]
            out.append(d)
        return out


def describe(e):
    """conflict.go printManager: `"m"`, with ` with subresource "s"`, and ` using <apiVersion>` for
    an Update (its identifier carries no time, so no ` at <time>`)."""
    s = json.dumps(e["manager"])
    if e["subresource"]:
        s += f' with subresource {json.dumps(e["subresource"])}'
    if e["operation"] == "Update":
        s += f' using {e["apiVersion"]}'
    return s


def conflict_error(conflicts):
    """conflict.go NewConflictError: 409 Conflict, a FieldManagerConflict cause per field."""
    causes = [{"type": "FieldManagerConflict", "message": f"conflict with {describe(e)}", "field": path_string(p)}
              for e, p in conflicts]
    if len(conflicts) == 1:
        e, p = conflicts[0]
        msg = f"Apply failed with 1 conflict: conflict with {describe(e)}: {path_string(p)}"
    else:
        by = {}
        for e, p in conflicts:
            by.setdefault(describe(e), []).append(path_string(p))
        lines = []
        for who in sorted(by):
            lines.append(f"conflicts with {who}:")
            lines.extend(f"- {p}" for p in by[who])
        msg = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return ApiError(409, msg, "Conflict", {"causes": causes})


def _ignored(res_sub, subresources):
    """The reset fields of the strategies (GetResetFields, e.g. pkg/registry/apps/deployment/strategy.go):
    through the main resource a kind with a status subresource does not own status; through
    /status only status is owned."""
    if res_sub == "status":
        return lambda p: not p or p[0] != "f:status"
    if "status" in subresources:
        return lambda p: bool(p) and p[0] == "f:status"
    return lambda p: False


def _keep(st, ign):
    return {p for p in st if not ign(p)} - STRIPPED


# the fields a Go type's zero value already has (its non-pointer struct fields), which an Update that
# creates the object does not own as maps (no `.`): only metadata, spec and status are modelled
ZERO_VALUE_PATHS = {("f:metadata",), ("f:spec",), ("f:status",)}


def update(live, new, schema, managers, manager, api_version, now, sub="", subresources=()):
    """An Update (create, update, every non-apply patch) by `manager` (merge/update.go Update +
    managedfieldsupdater.go): other managers lose what changed under them (removed fields), the
    manager gets what it added or modified, on top of its previous Update set."""
    ign = _ignored(sub, subresources)
    added, modified, removed = compare(live if live is not None else {}, new, schema)
    if live is None:
        added -= ZERO_VALUE_PATHS
    ident = (manager, "Update", api_version, sub)
    took = _keep(added | modified, ign)
    for e in managers.entries:
        if Managers.ident(e) != ident:
            # Updater.Update forces: what it changed is taken from the others; what it removed too
            e["set"] -= took | removed
    mine = managers.find(ident)
    if took:
        if mine is None:
            mine = {"manager": manager, "operation": "Update", "apiVersion": api_version, "subresource": sub,
                    "set": set()}
            managers.entries.append(mine)
        mine["set"] = (mine["set"] - removed) | took
        mine["time"] = now
    elif mine is not None:
        mine["set"] -= removed
    managers.entries = [e for e in managers.entries if e["set"] - STRIPPED]
    return managers


def apply(live, config, schema, managers, manager, api_version, now, force=False, sub="", subresources=()):
    """An Apply (merge/update.go Apply): merge, own what the configuration sets, drop what this manager
    applied before and nobody owns now, conflicts with other managers' fields whose value changes
    (force takes them over). Returns (new object, managers)."""
    ign = _ignored(sub, subresources)
    base = live if live is not None else {}
    merged = merge(base, config, schema)
    ident = (manager, "Apply", "", sub)
    mine = managers.find(ident)
    last = set(mine["set"]) if mine else set()
    applied = _keep(field_set(config, schema), ign)
    others = [e for e in managers.entries if Managers.ident(e) != ident]
    # prune (Updater.prune): what this manager applied last time and applies no more, when no one
    # else owns it (or anything below it)
    gone = {p for p in last - applied if not _owned_below(p, [applied] + [e["set"] for e in others])}
    new = remove_paths(merged, gone, schema) if gone else merged
    added, modified, removed = compare(base, new, schema)
    conflicts = []
    for e in others:
        hit = e["set"] & (added | modified)
        conflicts.extend((e, p) for p in sorted(hit, key=lambda p: [_pe_key(x) for x in p]))
    if conflicts and not force:
        raise conflict_error(conflicts)
    for e in others:
        e["set"] = e["set"] - (added | modified) - removed
    if mine is None:
        mine = {"manager": manager, "operation": "Apply", "subresource": sub, "set": set()}
        managers.entries.append(mine)
    mine["set"], mine["apiVersion"] = applied, api_version
    if new != base or not mine.get("time"):
        mine["time"] = now
    managers.entries = [e for e in managers.entries if e["set"] - STRIPPED]
    return new, managers


def default_manager(user_agent):
    """handlers/rest.go prefixFromUserAgent: the User-Agent before its first "/", printable
    characters only, at most 128 bytes."""
    m = (user_agent or "").split("/")[0]
    out = ""
    for ch in m:
        if not ch.isprintable():
            continue
        if len((out + ch).encode()) > 128:
            break
        out += ch
    return out


def patch_options_invalid(field, reason, detail):
    """A PatchOptions refusal (meta/v1/validation ValidatePatchOptions through patch.go): 422."""
    what = {"FieldValueRequired": "Required value", "FieldValueForbidden": "Forbidden"}[reason]
    return ApiError(422, f'PatchOptions.meta.k8s.io "" is invalid: {field}: {what}: {detail}', "Invalid",
                    {"group": "meta.k8s.io", "kind": "PatchOptions",
                     "causes": [{"reason": reason, "message": f"{what}: {detail}", "field": field}]})


# ------------------------------------------------------------------ the double's resources
_SCHEMAS = {}


def schema_for(res, version):
    """The Schema of a resource: its kind's definition (openapi.py, the double's OpenAPI), or a custom
    resource's openAPIV3Schema with the ObjectMeta of the definitions."""
    from . import openapi
    defs = openapi.definitions(version)
    if res.crd:
        return Schema(openapi._crd_openapi(res), defs)   # pylint: disable=protected-access
    key = (version, res.group, res.version, res.kind)
    if key not in _SCHEMAS:
        name = openapi._schema_name(defs, res)           # pylint: disable=protected-access
        _SCHEMAS[key] = Schema(defs.get(name) if name else None, defs)
    return _SCHEMAS[key]


def base_managers(sent, stored, sub):
    """fieldmanager.go Update: the managedFields a request sends replace the stored ones when the
    list is not empty and the request is not to a subresource; otherwise the stored ones stay."""
    if not sub and isinstance(sent, list) and sent:
        return Managers(sent)
    return Managers(stored if isinstance(stored, list) else [])


def record_update(res, version, cur, new, manager, sub, now):
    """Set new's managedFields after an Update-type write (create: cur None) by manager."""
    meta = new.setdefault("metadata", {})
    mgrs = base_managers(meta.get("managedFields"), ((cur or {}).get("metadata") or {}).get("managedFields"), sub)
    old = copy.deepcopy(cur) if cur is not None else None
    mgrs = update(old, new, schema_for(res, version), mgrs, manager, res.api_version, now, sub or "", res.subresources)
    set_managed(new, mgrs)


def exists(obj, path, schema):
    """Whether obj has something at path."""
    v, s = obj, schema.root
    for pe in path:
        if pe.startswith("f:") and _is_map(v) and pe[2:] in v:
            v, s = v[pe[2:]], schema.field(s, pe[2:])[0]
        elif isinstance(v, list):
            v = next((it for it in v if item_pe(schema, s, it) == pe), _ABSENT)
            s = schema.items(s)
            if v is _ABSENT:
                return False
        else:
            return False
    return True


def set_managed(obj, mgrs, schema=None):
    """obj's managedFields from mgrs; with schema, an applier's fields the server did not keep (an
    unknown field dropped by fieldValidation Warn/Ignore, a status reset) are not recorded."""
    if schema is not None:
        for e in mgrs.entries:
            if e["operation"] == "Apply":
                e["set"] = {p for p in e["set"] if exists(obj, p, schema)}
    lst = mgrs.to_list()
    if lst:
        obj["metadata"]["managedFields"] = lst
    else:
        obj["metadata"].pop("managedFields", None)

"""CustomResourceDefinition schemas as apiextensions-apiserver treats them: the structural-schema
rules a CRD must meet, and what a custom resource goes through with its version's schema
(pruning of unknown fields, ObjectMeta coercion, defaulting).

Facts read from kubernetes/kubernetes staging/src/k8s.io/apiextensions-apiserver:
- pkg/apis/apiextensions/validation/validation.go (validateCustomResourceDefinitionSpec,
  validateCustomResourceDefinitionValidation, ValidateCustomResourceDefinitionOpenAPISchema,
  specStandardValidatorV3.validate, requireStructuralSchema, validateAPIApproval) and
  pkg/apihelpers/helpers.go (IsProtectedCommunityGroup, GetAPIApprovalState);
- pkg/apiserver/schema/validation.go (ValidateStructural: validateStructuralInvariants,
  validateStructuralMetadataInvariants, validateExtensions, validateNestedValueValidation);
- pkg/apiserver/schema/pruning/algorithm.go (PruneWithOptions, prune, skipPrune) and
  pkg/apiserver/schema/options.go (the unknown field paths: `a.b[0].c`);
- pkg/apiserver/schema/objectmeta/coerce.go (GetObjectMetaWithOptions: metadata decoded strictly
  into metav1.ObjectMeta, unknown fields reported as `metadata.<f>`);
- pkg/apiserver/schema/defaulting/algorithm.go (Default) and prunenulls.go
  (PruneNonNullableNullsWithoutDefaults);
- pkg/apiserver/customresource_handler.go (unstructuredSchemaCoercer.apply: metadata, then
  pruning, then the nulls, then embedded ObjectMeta; unstructuredDefaulter: defaulting after
  decoding, for request bodies and for objects read from storage).
Schemas here are the CRD's JSON (dicts), not Go's Structural type: a key present is a field set."""
from __future__ import annotations

import copy
import json
from urllib.parse import urlsplit

# ------------------------------------------------------------------------------ field errors
# (field, reason, message) as apimachinery pkg/util/validation/field/errors.go words them


def _shown(value):
    """A value as field.Invalid prints it (Go's %#v for strings, plain for bools/numbers)."""
    return json.dumps(value)


def _required(path, detail):
    return (path, "FieldValueRequired", f"Required value: {detail}" if detail else "Required value")


def _forbidden(path, detail):
    return (path, "FieldValueForbidden", f"Forbidden: {detail}")


def _invalid(path, value, detail):
    return (path, "FieldValueInvalid", f"Invalid value: {_shown(value)}: {detail}")


def _not_supported(path, value, allowed):
    return (path, "FieldValueNotSupported",
            f"Unsupported value: {_shown(value)}: supported values: " + ", ".join(f'"{a}"' for a in allowed))


def _key(path, k):
    return f"{path}[{k}]"        # field.Path.Key


# ------------------------------------------------------------------------------ CRD validation
OPENAPI_V3_TYPES = ("array", "boolean", "integer", "number", "object", "string")   # sorted, as sets.List()
META_FIELDS = ("apiVersion", "kind", "metadata")
_NESTED = ("allOf", "oneOf", "anyOf")
_INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]


def _sub_schemas(s, path):
    """(schema, path, is-property-of-s) of the schemas validation.go recurses into (properties sorted:
    Go ranges over a map in random order)."""
    props = s.get("properties") if isinstance(s.get("properties"), dict) else {}
    add = s.get("additionalProperties")
    if isinstance(add, dict):
        yield add, f"{path}.additionalProperties", None
    for k in sorted(props):
        yield props[k], f"{_key(path + '.properties', k)}", k
    if isinstance(s.get("not"), dict):
        yield s["not"], f"{path}.not", None
    for j in _NESTED:
        for i, sub in enumerate(s.get(j) or []):
            yield sub, f"{path}.{j}[{i}]", None
    if isinstance(s.get("items"), dict):
        yield s["items"], f"{path}.items", None


def _openapi_problems(s, path, root, defaults_forbidden=None):
    """validation.go ValidateCustomResourceDefinitionOpenAPISchema and specStandardValidatorV3.validate:
    the rules that hold for every schema, structural or not (the common ones)."""
    if not isinstance(s, dict):
        return []
    out = []
    t = s.get("type")
    if t and t not in OPENAPI_V3_TYPES:
        out.append(_not_supported(f"{path}.type", t, OPENAPI_V3_TYPES))
    if "default" in s and defaults_forbidden:
        out.append(_forbidden(f"{path}.default", f"must not be set {defaults_forbidden}"))
    for key in ("id", "additionalItems", "patternProperties", "definitions", "dependencies", "$ref"):
        if s.get(key):
            out.append(_forbidden(f"{path}.{key}", f"{key} is not supported"))
    if t == "null":
        out.append(_forbidden(f"{path}.type", "type cannot be set to null, use nullable as an alternative"))
    if isinstance(s.get("items"), list) and s["items"]:
        out.append(_forbidden(f"{path}.items", "items must be a schema object and not an array"))
    if s.get("uniqueItems") is True:
        out.append(_forbidden(f"{path}.uniqueItems",
                              "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"))
    add = s.get("additionalProperties")
    if add is not None and s.get("properties") and (add is False or isinstance(add, dict)):
        # properties are for structs, additionalProperties for maps: both would contradict the
        # convention of ignoring unknown fields
        out.append(_forbidden(f"{path}.additionalProperties", "additionalProperties and properties are mutual exclusive"))
    for sub, sub_path, prop in _sub_schemas(s, path):
        reason = defaults_forbidden
        if root and prop in META_FIELDS:
            reason = f"in top-level {prop}"      # defaults in the resource's own TypeMeta/ObjectMeta
        out.extend(_openapi_problems(sub, sub_path, False, reason))
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        out.append(_invalid(f"{path}.x-kubernetes-preserve-unknown-fields", False, "must be true or undefined"))
    return out


def _nested_problems(v, path, lvl):
    """schema/validation.go validateNestedValueValidation: inside allOf/anyOf/oneOf/not a schema only
    validates values; it may not declare the structure (type, defaults, extensions...)."""
    if not isinstance(v, dict):
        return []
    out = _value_validation_problems(v, path, lvl)
    if isinstance(v.get("items"), dict):
        out += _nested_problems(v["items"], f"{path}.items", lvl)
    for k, sub in sorted((v.get("properties") or {}).items()):
        out += _nested_problems(sub, _key(f"{path}.properties", k), "field")
    if v.get("type"):
        out.append(_forbidden(f"{path}.type", "must be empty to be structural"))
    if "additionalProperties" in v:
        out.append(_forbidden(f"{path}.additionalProperties", "must be undefined to be structural"))
    if "default" in v:
        out.append(_forbidden(f"{path}.default", "must be undefined to be structural"))
    for key, want in (("title", "empty"), ("description", "empty"), ("nullable", "false"),
                      ("x-kubernetes-preserve-unknown-fields", "false"), ("x-kubernetes-embedded-resource", "false"),
                      ("x-kubernetes-int-or-string", "false"), ("x-kubernetes-list-map-keys", "empty"),
                      ("x-kubernetes-list-type", "undefined"), ("x-kubernetes-map-type", "undefined"),
                      ("x-kubernetes-validations", "empty")):
        if v.get(key):
            out.append(_forbidden(f"{path}.{key}", f"must be {want} to be structural"))
    if "metadata" in (v.get("properties") or {}):
        out.append(_forbidden(_key(f"{path}.properties", "metadata"), "must not be specified in a nested context"))
    return out


def _value_validation_problems(s, path, lvl):
    """validateValueValidation: the nested schemas of allOf/anyOf/oneOf/not, but the two
    x-kubernetes-int-or-string forms (anyOf [integer, string], or allOf whose first item is that)."""
    out = []
    any_of, all_of = s.get("anyOf") or [], s.get("allOf") or []
    skip_any_of = any_of == _INT_OR_STRING_ANY_OF
    skip_first_all_of = bool(all_of) and isinstance(all_of[0], dict) and all_of[0].get("anyOf") == _INT_OR_STRING_ANY_OF
    if not skip_any_of:
        for i, v in enumerate(any_of):
            out += _nested_problems(v, f"{path}.anyOf[{i}]", lvl)
    for i, v in enumerate(all_of):
        if i == 0 and skip_first_all_of:
            v = {k: x for k, x in v.items() if k != "anyOf"}
        out += _nested_problems(v, f"{path}.allOf[{i}]", lvl)
    for i, v in enumerate(s.get("oneOf") or []):
        out += _nested_problems(v, f"{path}.oneOf[{i}]", lvl)
    if isinstance(s.get("not"), dict):
        out += _nested_problems(s["not"], f"{path}.not", lvl)
    return out


_EMPTY_FOR_LEVEL = {"root": "must not be empty at the root", "item": "must not be empty for specified array items",
                    "field": "must not be empty for specified object fields"}


def _extension_problems(s, path):
    """validateExtensions: x-kubernetes-int-or-string excludes preserve-unknown-fields and
    embedded-resource."""
    out = []
    if s.get("x-kubernetes-int-or-string"):
        for key in ("x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource"):
            if s.get(key):
                out.append(_invalid(f"{path}.{key}", True, "must be false if x-kubernetes-int-or-string is true"))
    return out


def _type_problems(s, lvl, path):
    """The type of a structural schema: set (but under int-or-string or preserve-unknown-fields),
    object for an embedded resource (which has no additionalProperties) and at the root."""
    out = []
    t = s.get("type") or ""
    embedded = bool(s.get("x-kubernetes-embedded-resource"))
    if embedded and t != "object":
        detail = "must be object if x-kubernetes-embedded-resource is true"
        out.append(_invalid(f"{path}.type", t, detail) if t else _required(f"{path}.type", detail))
    elif not t and not s.get("x-kubernetes-int-or-string") and not s.get("x-kubernetes-preserve-unknown-fields"):
        out.append(_required(f"{path}.type", _EMPTY_FOR_LEVEL[lvl]))
    if embedded and "additionalProperties" in s:
        out.append(_forbidden(f"{path}.additionalProperties", "must not be used if x-kubernetes-embedded-resource is set"))
    if lvl == "root" and t and t != "object":
        out.append(_invalid(f"{path}.type", t, "must be object at the root"))
    return out


def _structural_problems(s, lvl, path):
    """schema/validation.go validateStructuralInvariants (lvl: root, item, field)."""
    if not isinstance(s, dict):
        return []
    out = []
    t = s.get("type") or ""
    props = s.get("properties") if isinstance(s.get("properties"), dict) else {}
    embedded = bool(s.get("x-kubernetes-embedded-resource"))
    preserve = bool(s.get("x-kubernetes-preserve-unknown-fields"))
    if t == "array" and s.get("items") is None:
        out.append(_required(f"{path}.items", "must be specified"))
    if isinstance(s.get("items"), dict):
        out += _structural_problems(s["items"], "item", f"{path}.items")
    for k in sorted(props):
        out += _structural_problems(props[k], "field", _key(f"{path}.properties", k))
    if "additionalProperties" in s:
        if lvl == "root":
            out.append(_forbidden(f"{path}.additionalProperties", "must not be used at the root"))
        if isinstance(s["additionalProperties"], dict):
            out += _structural_problems(s["additionalProperties"], "field", f"{path}.additionalProperties")
    out += _extension_problems(s, path)
    out += _value_validation_problems(s, path, lvl)
    out += _type_problems(s, lvl, path)
    check_metadata = lvl == "root" or embedded
    for k in ("kind", "apiVersion"):
        if k in props and check_metadata and (props[k] or {}).get("type", "") != "string":
            out.append(_invalid(f"{_key(path + '.properties', k)}.type", (props[k] or {}).get("type", ""), "must be string"))
    if "metadata" in props:
        out += _metadata_problems(props["metadata"] or {}, check_metadata, lvl, _key(f"{path}.properties", "metadata"))
    if embedded and not preserve and not props:
        out.append(_required(f"{path}.properties", "must not be empty if x-kubernetes-embedded-resource is true without "
                                                   "x-kubernetes-preserve-unknown-fields"))
    return out


def _metadata_problems(m, check_metadata, lvl, path):
    """validateStructuralMetadataInvariants: at the root, metadata may restrict name and
    generateName only (anything else: Forbidden)."""
    out = []
    if check_metadata and m.get("type", "") != "object":
        out.append(_invalid(f"{path}.type", m.get("type", ""), "must be object"))
    if lvl == "root":
        # what is left of the Structural once name/generateName, type and default are taken out
        # must be empty: Go's zero values (false, "", empty lists and maps) are nothing, as are
        # example and externalDocs, which NewStructural (schema/convert.go) does not keep
        rest = {k: v for k, v in m.items() if k not in ("type", "default", "example", "externalDocs")
                and v not in (None, False, "", [], {})}
        if "properties" in rest and set(rest["properties"]) <= {"name", "generateName"}:
            rest.pop("properties")
        if rest:
            out.append(_forbidden(path, "must not specify anything other than name and generateName, but metadata is "
                                        "implicitly specified"))
    return out


_UNSUPPORTED = ("id", "$schema", "$ref", "patternProperties", "dependencies", "additionalItems", "definitions")


def _convertible(s):
    """schema/convert.go NewStructural succeeds: no field it does not support, no
    x-kubernetes-preserve-unknown-fields: false, items not a list. When it fails, validation.go
    reports the generic rules only (the structural ones are not run)."""
    if not isinstance(s, dict):
        return True
    if any(s.get(k) for k in _UNSUPPORTED) or s.get("x-kubernetes-preserve-unknown-fields") is False \
            or isinstance(s.get("items"), list):
        return False
    return all(_convertible(sub) for sub, dummy, dummy2 in _sub_schemas(s, ""))


def structural_problems(schema, path):
    """ValidateStructural: the invariants, sorted by their message as the real function sorts them
    (the completeness rule - every field of a value validation also specified outside it - is not
    checked)."""
    return sorted(_structural_problems(schema, "root", path), key=lambda e: f"{e[0]}: {e[2]}")


def crd_problems(crd):
    """[(field, reason, message)] of a CustomResourceDefinition's version schemas
    (validateCustomResourceDefinitionSpec -> validateCustomResourceDefinitionVersion ->
    validateCustomResourceDefinitionValidation), under `spec.versions[i].schema`. A v1 CRD never
    preserves unknown fields (spec.preserveUnknownFields is false), so its schemas must be
    structural on create and update alike (requireStructuralSchema's ratchet only spares the
    v1beta1 CRDs stored before)."""
    spec = crd.get("spec") or {}
    out = []
    for i, v in enumerate(spec.get("versions") or []):
        path = f"spec.versions[{i}].schema"
        schema = ((v or {}).get("schema") or {}).get("openAPIV3Schema")
        if schema is None:
            out.append(_required(f"{path}.openAPIV3Schema", "schemas are required"))
            continue
        if schema.get("nullable"):
            out.append(_forbidden(f"{path}.openAPIV3Schema.nullable", "nullable cannot be true at the root"))
        out += _openapi_problems(schema, f"{path}.openAPIV3Schema", True)
        if _convertible(schema):
            out += structural_problems(schema, f"{path}.openAPIV3Schema")
    return out


API_APPROVED = "api-approved.kubernetes.io"
API_APPROVAL_PR = "see https://github.com/kubernetes/enhancements/pull/1111"


def _approval_state(annotations):
    """(state, reason) of a CRD's approval annotation (apihelpers GetAPIApprovalState): missing,
    bypassed (a reason starting "unapproved"), approved (a request URI with a scheme and a host,
    as url.ParseRequestURI takes it) or invalid."""
    value = str((annotations or {}).get(API_APPROVED) or "")
    if not value:
        return "missing", f'protected groups must have approval annotation "{API_APPROVED}", {API_APPROVAL_PR}'
    if value.startswith("unapproved"):
        return "bypassed", f"not approved: {json.dumps(value)}"
    url = urlsplit(value) if not any(c.isspace() for c in value) else None
    if url and url.scheme and url.netloc:
        return "approved", f"approved in {value}"
    return "invalid", (f'protected groups must have approval annotation "{API_APPROVED}" with either a URL or '
                       f'a reason starting with "unapproved", {API_APPROVAL_PR}')


def api_approval_problems(crd, old=None):
    """[(field, reason, message)] of validateAPIApproval: a CRD of a group the Kubernetes community
    protects (k8s.io, kubernetes.io and their subdomains: apihelpers IsProtectedCommunityGroup) needs
    the approval annotation; an update that keeps its state (even missing or invalid) passes."""
    group = str((crd.get("spec") or {}).get("group") or "")
    if not any(group == d or group.endswith("." + d) for d in ("k8s.io", "kubernetes.io")):
        return []
    annotations = (crd.get("metadata") or {}).get("annotations")
    state, reason = _approval_state(annotations)
    if old is not None and _approval_state((old.get("metadata") or {}).get("annotations"))[0] == state:
        return []
    path = _key("metadata.annotations", API_APPROVED)
    if state == "missing":
        return [_required(path, reason)]
    if state == "invalid":
        return [_invalid(path, annotations.get(API_APPROVED), reason)]
    return []


# ------------------------------------------------------------------------------ custom resources
# metav1.ObjectMeta's JSON fields (k8s.io/apimachinery pkg/apis/meta/v1/types.go)
OBJECT_META_FIELDS = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
                      "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
                      "ownerReferences", "finalizers", "managedFields")


def _path(parent, key=None, index=None):
    if index is not None:
        return f"{parent}[{index}]"
    return f"{parent}.{key}" if parent else key


def _coerce_meta(meta, parent):
    """The metadata decoded into ObjectMeta: fields it does not have are dropped and reported as
    `<parent>.metadata.<f>` (objectmeta GetObjectMetaWithOptions / CoerceWithOptions)."""
    if not isinstance(meta, dict):
        return []
    unknown = sorted(k for k in meta if k not in OBJECT_META_FIELDS)
    for k in unknown:
        meta.pop(k)
    return [_path(_path(parent, "metadata"), k) for k in unknown]


def _prune(x, s, parent, found, embedded_meta):
    """pruning/algorithm.go prune: x in place; found: the paths of the fields dropped."""
    if s is not None and s.get("x-kubernetes-preserve-unknown-fields"):
        return _skip_prune(x, s, parent, found, embedded_meta)
    if isinstance(x, dict):
        if s is None:
            for k in list(x):
                found.append(_path(parent, k))
                del x[k]
            return None
        props = s.get("properties") or {}
        for k in list(x):
            if s.get("x-kubernetes-embedded-resource") and k in META_FIELDS:
                if k == "metadata" and parent:
                    embedded_meta.extend(_coerce_meta(x[k], parent))
                continue
            if k in props:
                _prune(x[k], props[k], _path(parent, k), found, embedded_meta)
            elif "additionalProperties" in s:
                add = s["additionalProperties"]
                _prune(x[k], add if isinstance(add, dict) else None, _path(parent, k), found, embedded_meta)
            else:
                found.append(_path(parent, k))
                del x[k]
    elif isinstance(x, list):
        items = None if s is None else s.get("items")
        for i, v in enumerate(x):
            _prune(v, items if isinstance(items, dict) else None, _path(parent, index=i), found, embedded_meta)
    return None


def _skip_prune(x, s, parent, found, embedded_meta):
    """skipPrune: unknown fields stay (x-kubernetes-preserve-unknown-fields), known ones are pruned
    by their own schema."""
    if isinstance(x, dict):
        props = s.get("properties") or {}
        for k, v in x.items():
            if s.get("x-kubernetes-embedded-resource") and k in META_FIELDS:
                if k == "metadata" and parent:
                    embedded_meta.extend(_coerce_meta(v, parent))
                continue
            if k in props:
                _prune(v, props[k], _path(parent, k), found, embedded_meta)
            elif "additionalProperties" in s:
                add = s["additionalProperties"]
                _prune(v, add if isinstance(add, dict) else None, _path(parent, k), found, embedded_meta)
    elif isinstance(x, list):
        items = s.get("items")
        for i, v in enumerate(x):
            if isinstance(items, dict):
                _skip_prune(v, items, _path(parent, index=i), found, embedded_meta)


def _prune_nulls(x, s):
    """prunenulls.go PruneNonNullableNullsWithoutDefaults: a null where the schema is not nullable
    and has no default is dropped (one with a default is defaulted next)."""
    if isinstance(x, dict):
        for k in list(x):
            sub = None
            if s is not None:
                sub = (s.get("properties") or {}).get(k)
                if sub is None and isinstance(s.get("additionalProperties"), dict):
                    sub = s["additionalProperties"]
            if x[k] is None and sub is not None and not sub.get("nullable") and "default" not in sub:
                del x[k]
            else:
                _prune_nulls(x[k], sub)
    elif isinstance(x, list):
        for v in x:
            _prune_nulls(v, None if s is None else s.get("items"))


def prune(obj, schema):
    """What decoding a custom resource drops, in the order the real coercer reports it: the root
    metadata's fields that ObjectMeta lacks, then the fields the structural schema does not specify
    (sorted), then those of embedded resources' metadata. The root is treated as an embedded
    resource (apiVersion, kind and metadata are not pruned by the schema). obj is changed in place;
    returns the paths dropped."""
    found, embedded_meta = [], []
    meta_unknown = _coerce_meta(obj.get("metadata"), "")
    root = dict(schema or {})
    root["x-kubernetes-embedded-resource"] = True
    _prune(obj, root, "", found, embedded_meta)
    _prune_nulls(obj, schema or {})
    return meta_unknown + sorted(found) + embedded_meta


def default(x, s):
    """defaulting/algorithm.go Default: an object's missing properties (or non-nullable nulls) get
    their schema's `default` (deep-copied), then every present value is defaulted by its own schema
    - so the defaults of an object's properties apply only where that object exists; items of
    arrays and values of additionalProperties likewise."""
    if not isinstance(s, dict):
        return x
    if isinstance(x, dict):
        props = s.get("properties") or {}
        for k, prop in props.items():
            if isinstance(prop, dict) and "default" in prop and prop["default"] is not None:
                if k not in x or (x[k] is None and not prop.get("nullable")):
                    x[k] = copy.deepcopy(prop["default"])
        add = s.get("additionalProperties")
        for k in list(x):
            if k in props:
                default(x[k], props[k])
            elif isinstance(add, dict):
                if x[k] is None and not add.get("nullable") and add.get("default") is not None:
                    x[k] = copy.deepcopy(add["default"])
                default(x[k], add)
    elif isinstance(x, list) and isinstance(s.get("items"), dict):
        items = s["items"]
        for i, v in enumerate(x):
            if v is None and not items.get("nullable") and items.get("default") is not None:
                x[i] = copy.deepcopy(items["default"])
            default(x[i], items)
    return x

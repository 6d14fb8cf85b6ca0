# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Pure object logic of idempotent apply (tests/unit/plugins/module_utils/k8s/test_objects.py).

A live object is "as desired" when the desired object is a recursive subset of it (the API server
adds defaults and status, which are no difference) and no field the collection applied last time
(the last-applied annotation) and no longer wants is still there. An update is a JSON merge patch
(RFC 7386, Content-Type application/merge-patch+json): the whole desired object, null for every
field that disappeared since the last apply, and the new last-applied annotation. Lists are
replaced whole by a merge patch, so a list compares element by element, same length.
"""
from __future__ import annotations

import copy
import json

LAST_APPLIED = "tke.offline-pot.io/last-applied"
REDACTED = "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"
SECRET_FIELDS = ("data", "stringData")


def identity(obj):
    """'Kind namespace/name' (or 'Kind name') for messages."""
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return f"{obj.get('kind', '?')} {ns + '/' if ns else ''}{meta.get('name', '?')}"


def key(obj):
    meta = obj.get("metadata") or {}
    return (obj.get("apiVersion"), obj.get("kind"), meta.get("namespace") or "", meta.get("name"))


def is_subset(desired, live):
    """Every field of desired is in live with the same value (recursively)."""
    if isinstance(desired, dict):
        if not isinstance(live, dict):
            return False
        return all((v is None and live.get(k) is None) or (k in live and is_subset(v, live[k]))
                   for k, v in desired.items())
    if isinstance(desired, list):
        return isinstance(live, list) and len(desired) == len(live) and \
            all(is_subset(d, v) for d, v in zip(desired, live))
    if isinstance(desired, bool) or isinstance(live, bool):
        return desired is live
    return desired == live


def removed(last, desired):
    """The merge-patch nulls of fields in last (dict) that desired no longer has."""
    out = {}
    for k, v in (last or {}).items():
        if k not in desired:
            out[k] = None
        elif isinstance(v, dict) and isinstance(desired[k], dict):
            sub = removed(v, desired[k])
            if sub:
                out[k] = sub
    return out


def _still_present(nulls, live):
    for k, v in nulls.items():
        if not isinstance(live, dict) or k not in live:
            continue
        if v is None or _still_present(v, live[k]):
            return True
    return False


def last_applied(live):
    text = ((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def annotated(desired):
    """desired with its own last-applied annotation (compact, sorted: stable across runs). A
    Secret's record names its keys, not their values: the record serves to find keys dropped since
    (removed()), and annotations are shown where data is not (`kubectl describe`, lists)."""
    out = copy.deepcopy(desired)
    annotations = out.setdefault("metadata", {}).setdefault("annotations", {})
    annotations.pop(LAST_APPLIED, None)
    annotations[LAST_APPLIED] = json.dumps(redact(desired), sort_keys=True, separators=(",", ":"))
    return out


def needs_update(desired, live):
    """(bool, merge patch): whether live differs from desired, and the patch that makes it so. A
    Secret whose last-applied record is not the one this apply writes differs too: a record written
    before records named keys only held the values, and is rewritten once."""
    target = annotated(desired)
    nulls = removed(last_applied(live), target)
    differs = not is_subset(desired, live) or _still_present(nulls, live)
    if desired.get("kind") == "Secret":
        record = ((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
        differs = differs or record != target["metadata"]["annotations"][LAST_APPLIED]
    return differs, overlay(nulls, target)


def split_secrets(objs):
    """(objects, values): the objects with every Secret's data and stringData taken out, and those
    values by "namespace/name" (k8s_apply's no_log option `secrets`, so that no log of the module's
    invocation holds them)."""
    out, values = [], {}
    for obj in objs:
        if isinstance(obj, dict) and obj.get("kind") == "Secret" and any(f in obj for f in SECRET_FIELDS):
            values[secret_key(obj)] = {f: obj[f] for f in SECRET_FIELDS if f in obj}
            obj = {k: v for k, v in obj.items() if k not in SECRET_FIELDS}
        out.append(obj)
    return out, values


def join_secrets(objs, values):
    """The objects with their Secrets' values put back (split_secrets' inverse). Raises ValueError
    naming a key of values that no Secret of objects has."""
    secrets = {secret_key(o): o for o in objs if isinstance(o, dict) and o.get("kind") == "Secret"}
    unknown = sorted(set(values) - set(secrets))
    if unknown:
        raise ValueError(f"secrets: {', '.join(unknown)} is no Secret of objects (keys are namespace/name)")
    return [dict(o, **values[secret_key(o)]) if isinstance(o, dict) and o.get("kind") == "Secret"
            and secret_key(o) in values else o for o in objs]


def secret_key(obj):
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name')}"


# What a write changes on every store whatever it holds: the version, the write's bookkeeping.
VOLATILE_META = ("resourceVersion", "managedFields")


def stored(obj):
    """An object as the comparison of two stored states sees it (a dry run's answer against the
    live object): without what every write changes (VOLATILE_META) and without status."""
    if not isinstance(obj, dict):
        return obj
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in VOLATILE_META}
    return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}


def overlay(base, top):
    """top laid over base, recursively (top wins)."""
    out = copy.deepcopy(base)
    for k, v in top.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = overlay(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def merge(target, patch):
    """RFC 7386: patch merged into a copy of target (None deletes a field)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge(out.get(k), v)
    return out


def project(live, shape):
    """The part of live that shape (a dict of the fields of interest) covers: the diff's 'before'."""
    if not isinstance(shape, dict) or not isinstance(live, dict):
        return copy.deepcopy(live)
    return {k: project(live[k], v) for k, v in shape.items() if k in live}


def with_labels(obj, labels):
    out = copy.deepcopy(obj)
    if labels:
        out.setdefault("metadata", {}).setdefault("labels", {}).update(labels)
    return out


def redact(obj):
    """A Secret's values hidden (for results and diffs); other objects unchanged."""
    if not isinstance(obj, dict) or obj.get("kind") != "Secret":
        return obj
    out = copy.deepcopy(obj)
    for field in SECRET_FIELDS:
        if isinstance(out.get(field), dict):
            out[field] = {k: REDACTED for k in out[field]}
    annotations = (out.get("metadata") or {}).get("annotations") or {}
    if LAST_APPLIED in annotations:
        annotations[LAST_APPLIED] = REDACTED
    return out


def for_display(obj):
    """The object as a diff shows it: no server bookkeeping, no last-applied copy, secrets hidden."""
    out = copy.deepcopy(redact(obj))
    meta = out.get("metadata") or {}
    for field in ("managedFields", "resourceVersion", "uid", "creationTimestamp", "generation"):
        meta.pop(field, None)
    annotations = meta.get("annotations") or {}
    annotations.pop(LAST_APPLIED, None)
    if "annotations" in meta and not annotations:
        meta.pop("annotations")
    return out


def display_shape(desired, live):
    """The fields a diff shows of an object: desired's, the ones dropped since the last apply, and
    a Secret's whole data (given as stringData, values land there)."""
    shape = overlay(removed(last_applied(live), desired), desired)
    if desired.get("kind") == "Secret":
        shape["data"] = None
    return shape


def display_pair(before, after):
    """before and after as a diff shows them (for_display): a Secret's values hidden in both, the
    ones that differ marked so in after - a changed secret shows as changed, never as itself."""
    shown_before, shown_after = for_display(before), for_display(after)
    if isinstance(after, dict) and after.get("kind") == "Secret":
        for field in SECRET_FIELDS:
            old, new = (before or {}).get(field) or {}, after.get(field) or {}
            for k in (shown_after.get(field) or {}):
                if k in old and old[k] != new.get(k):
                    shown_after[field][k] = REDACTED + " (changed)"
    return shown_before, shown_after


def to_text(obj):
    return json.dumps(obj, indent=2, sort_keys=True) + "\n" if obj is not None else ""


def selector(labels):
    """A labelSelector query value from a mapping, or the string as given."""
    if isinstance(labels, dict):
        return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    return labels or ""


def parse_label(text):
    """'key=value' -> {key: value}; raises ValueError naming the problem."""
    if not isinstance(text, str) or text.count("=") != 1 or not all(text.split("=")):
        raise ValueError(f"{text!r} is not a label key=value")
    k, v = text.split("=")
    return {k.strip(): v.strip()}


def api_failure(obj_identity, error):
    """A message naming the object, the API's reason and each field at fault."""
    fields = [f"{c.get('field')}: {c.get('message', '')}".strip() if c.get("field") else c.get("message", "")
              for c in error.causes]
    detail = f" (fields: {'; '.join(fields)})" if fields else ""
    return f"{obj_identity}: {error.describe()}{detail}"


def validate_shape(obj):
    """Problems of a desired object before any request: the fields apply needs."""
    if not isinstance(obj, dict):
        return [f"{obj!r} is not an object"]
    out = [f"{identity(obj)}: {field} is missing" for field in ("apiVersion", "kind")
           if not obj.get(field)]
    if not (obj.get("metadata") or {}).get("name"):
        out.append(f"{identity(obj)}: metadata.name is missing")
    return out

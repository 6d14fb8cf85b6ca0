# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Objects over the REST protocol: GET, POST, PATCH (application/merge-patch+json), DELETE, lists
with labelSelector/fieldSelector, and dryRun=All for what check mode would write and for what a
patch would store (the API server validates, defaults and normalises it and stores nothing).
Decisions are objects.py's; this file only talks."""
from __future__ import annotations

from ansible_collections.offline_pot.tke.plugins.module_utils.k8s import objects, waiter
from ansible_collections.offline_pot.tke.plugins.module_utils.k8s.client import ApiError
from ansible_collections.offline_pot.tke.plugins.module_utils.k8s.resource import Discovery

MERGE_PATCH = "application/merge-patch+json"
DRY_RUN = {"dryRun": "All"}
STRICT = {"fieldValidation": "Strict"}


class ObjectError(Exception):
    """A failure already worded with the object it concerns."""


def being_deleted(obj):
    """The object has a deletionTimestamp: its finalizers hold it until its deletion completes (a
    Namespace Terminating while the namespace controller removes its content)."""
    return bool(((obj or {}).get("metadata") or {}).get("deletionTimestamp"))


class Objects:
    def __init__(self, client, check_mode=False, gone_timeout=120):
        self.client = client
        self.discovery = Discovery(client)
        self.check_mode = check_mode
        self.gone_timeout = gone_timeout

    def wait_gone(self, obj, delay=1.0):
        """Wait until an object being deleted is gone; ObjectError naming it after gone_timeout s."""
        def poll():
            live = self.get(obj)
            return [] if live is None else [(objects.identity(obj), "gone", "Terminating" if being_deleted(live)
                                             else "still there")]
        waiting, dummy = waiter.wait(poll, self.gone_timeout, delay)
        if waiting:
            raise ObjectError(f"timed out after {self.gone_timeout} s waiting for {waiter.describe(waiting)}")

    def _target(self, obj):
        meta = obj.get("metadata") or {}
        res = self.discovery.resource(obj["apiVersion"], obj["kind"])
        ns = (meta.get("namespace") or "default") if res.namespaced else None
        return res, ns, meta.get("name")

    def _call(self, obj, method, path, **kw):
        try:
            return self.client.request(method, path, **kw)
        except ApiError as e:
            raise ObjectError(objects.api_failure(objects.identity(obj), e)) from None

    def get(self, obj):
        try:
            res, ns, name = self._target(obj)
        except ApiError as e:
            raise ObjectError(objects.api_failure(objects.identity(obj), e)) from None
        try:
            return self.client.request("GET", res.path(ns, name))
        except ApiError as e:
            if e.code == 404:
                return None
            raise ObjectError(objects.api_failure(objects.identity(obj), e)) from None

    def list(self, api_version, kind, namespace=None, label_selector=None, field_selector=None):
        ref = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "*", "namespace": namespace}}
        try:
            res = self.discovery.resource(api_version, kind)
        except ApiError as e:
            raise ObjectError(objects.api_failure(objects.identity(ref), e)) from None
        answer = self._call(ref, "GET", res.path(namespace if res.namespaced else None),
                            query={"labelSelector": objects.selector(label_selector),
                                   "fieldSelector": field_selector})
        items = answer.get("items") or []
        for item in items:  # list items carry no apiVersion/kind of their own
            item.setdefault("apiVersion", api_version)
            item.setdefault("kind", kind)
        return items

    def apply(self, desired, skip_dry_run=False):
        """{"action": created|updated|unchanged, "before", "after"}; in check mode the write is a
        dry run (skip_dry_run: the object's namespace is itself only about to be created). Writes
        are fieldValidation=Strict: a field the server does not know fails, naming it, instead of
        being dropped with a warning."""
        live = self.get(desired)
        res, ns, name = self._target(desired)
        query = dict(STRICT, **DRY_RUN) if self.check_mode else dict(STRICT)
        if being_deleted(live):
            # still being deleted (a namespace pruned earlier, Terminating): created again once it
            # is gone - the server refuses new content in a terminating namespace
            if self.check_mode:
                skip_dry_run = True
            else:
                self.wait_gone(desired)
            live = None
        if live is None:
            body = objects.annotated(desired)
            if not (self.check_mode and skip_dry_run):
                self._call(desired, "POST", res.path(ns), body=body, query=query)
            return {"action": "created", "before": None, "after": objects.for_display(desired)}
        differs, patch = objects.needs_update(desired, live)
        shape = objects.display_shape(desired, live)
        before = objects.project(live, shape)
        trial = None
        if differs:
            # what the server would store: its normalisation of what it is given (a Secret's
            # stringData moved into data, quantities in canonical form, defaults) is no change
            trial = self._call(desired, "PATCH", res.path(ns, name), body=patch, query=dict(STRICT, **DRY_RUN),
                               content_type=MERGE_PATCH)
            differs = objects.stored(trial) != objects.stored(live)
        if not differs:
            shown = objects.for_display(before)
            return {"action": "unchanged", "before": shown, "after": shown}
        after = trial if self.check_mode else self._call(desired, "PATCH", res.path(ns, name), body=patch,
                                                         query=query, content_type=MERGE_PATCH)
        before, after = objects.display_pair(before, objects.project(after, shape) if after else objects.merge(live, patch))
        return {"action": "updated", "before": before, "after": after}

    def delete(self, obj):
        """True when the object existed (and is deleted, or would be in check mode); an object
        already being deleted is left to finish (False)."""
        live = self.get(obj)
        if live is None or being_deleted(live):
            return False
        res, ns, name = self._target(obj)
        query = dict(DRY_RUN) if self.check_mode else None
        try:
            self.client.request("DELETE", res.path(ns, name), query=query,
                                body={"kind": "DeleteOptions", "apiVersion": "v1",
                                      "propagationPolicy": "Background"})
        except ApiError as e:
            if e.code == 404:
                return False
            raise ObjectError(objects.api_failure(objects.identity(obj), e)) from None
        return True

    def patch(self, obj, body):
        """A merge patch of an existing object (a dry run in check mode); the object after it."""
        res, ns, name = self._target(obj)
        query = dict(DRY_RUN) if self.check_mode else None
        return self._call(obj, "PATCH", res.path(ns, name), body=body, query=query, content_type=MERGE_PATCH)

    def evict(self, pod, body):
        """POST the pod's eviction subresource (a dry run in check mode). False when the pod is
        gone already; an ApiError with code 429 when a PodDisruptionBudget forbids it now."""
        res, ns, name = self._target(pod)
        query = dict(DRY_RUN) if self.check_mode else None
        try:
            self.client.request("POST", res.path(ns, name) + "/eviction", body=body, query=query)
        except ApiError as e:
            if e.code == 404:
                return False
            raise
        return True

    def stale(self, desired, kinds, labels):
        """Live objects of kinds (apiVersion, kind) carrying labels that desired does not list."""
        wanted = {objects.key(d) for d in desired}
        out = []
        for api_version, kind in kinds:
            try:
                self.discovery.resource(api_version, kind)
            except ApiError:
                continue  # the API does not serve the kind (a CRD never installed): nothing to prune
            for item in self.list(api_version, kind, label_selector=labels):
                if objects.key(item) not in wanted:
                    out.append(item)
        return out

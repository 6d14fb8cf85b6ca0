"""The kube-apiserver double's HTTP side: authentication, authorization, discovery and the generic
object store (see ../README.md for the contract and what is not done)."""
from __future__ import annotations

import base64
import copy
import datetime
import hashlib
import http.server
import json
import os
import socket
import ssl
import sys
import threading
import time
import urllib.parse
import uuid

from . import defaults, logic, openapi, protobuf, resources, structural, tables
from .logic import ApiError
from .resources import BUILTIN, Resource

from . import apply as fields     # server-side apply, managedFields

ADMIN_GROUPS = {"system:masters", "kubeadm:cluster-admins"}   # kubeadm binds kubeadm:cluster-admins to cluster-admin
READ_VERBS = {"get", "list", "watch"}
PUBLIC_PATHS = {"/healthz", "/readyz", "/livez", "/version"}   # system:public-info-viewer
CRD_RES = next(r for r in BUILTIN if r.plural == "customresourcedefinitions")
NS_RES = next(r for r in BUILTIN if r.plural == "namespaces")
NODE_RES = next(r for r in BUILTIN if r.plural == "nodes")
POD_RES = next(r for r in BUILTIN if r.plural == "pods")
PDB_RES = next(r for r in BUILTIN if r.plural == "poddisruptionbudgets")
CM_RES = next(r for r in BUILTIN if r.plural == "configmaps")
SECRET_RES = next(r for r in BUILTIN if r.plural == "secrets")
WORKLOADS = {"Deployment", "DaemonSet", "StatefulSet", "ReplicaSet"}


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def log(msg):
    print(msg, file=sys.stderr if msg.startswith("E") else sys.stdout, flush=True)


class User:
    def __init__(self, name, groups):
        self.name, self.groups = name, set(groups) | ({"system:authenticated"} if name != "system:anonymous" else set())

    @property
    def admin(self):
        return bool(self.groups & ADMIN_GROUPS)

    @property
    def node(self):
        return self.name[len("system:node:"):] if self.name.startswith("system:node:") and \
            "system:nodes" in self.groups else None


class Api:
    def __init__(self, store, version, kubeadm_state=None, images=None):
        self.store, self.version = store, version.lstrip("v")
        self.kubeadm_state, self._state_stamp = kubeadm_state, None
        self.images = images
        self._crds, self._crds_at = [], 0.0
        self._validate = None
        self._sync_lock = threading.Lock()
        self.marked = []          # nodes this host's kubeadm marked as control-plane
        self.terminating = {}     # namespace -> monotonic time its deletion completes (this double's)

    # ---------------------------------------------------------------- keys and resources
    @staticmethod
    def key(res: Resource, ns, name=None):
        base = f"/registry/{res.group or 'core'}/{res.plural}/"
        if res.namespaced and ns:
            base += f"{ns}/"
        return base + name if name else base

    def crd_resources(self, fresh=False):
        if fresh or time.monotonic() - self._crds_at > 2:
            crds, dummy = self.store.list(self.key(CRD_RES, None))
            self._crds = [r for obj, dummy in crds for r in resources.crd_resources(obj)]
            self._crds_at = time.monotonic()
        return self._crds

    def all_resources(self):
        return BUILTIN + self.crd_resources()

    def find(self, group, version, plural):
        # a built-in resource first, without reading the CRDs (a read of etcd): the real server's
        # handler chain serves the built-in APIs before it delegates to apiextensions-apiserver's CRDs
        for r in BUILTIN:
            if r.group == group and r.version == version and r.plural == plural:
                return r
        for r in self.crd_resources():
            if r.group == group and r.version == version and r.plural == plural:
                return r
        for r in self.crd_resources(fresh=True):
            if r.group == group and r.version == version and r.plural == plural:
                return r
        return None

    # ---------------------------------------------------------------- discovery
    def groups(self):
        seen = {}
        for r in self.all_resources():
            if r.group:
                seen.setdefault(r.group, [])
                if r.version not in seen[r.group]:
                    seen[r.group].append(r.version)
        out = []
        for g, vs in seen.items():
            gv = [{"groupVersion": f"{g}/{v}", "version": v} for v in vs]
            out.append({"name": g, "versions": gv, "preferredVersion": gv[0]})
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": out}

    def resource_list(self, group, version):
        rs = [r for r in self.all_resources() if r.group == group and r.version == version]
        if not rs:
            return None
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": rs[0].api_version,
                "resources": [e for r in rs for e in resources.api_resource(r)]}

    def version_info(self):
        major, minor = self.version.split(".")[:2]
        return {"major": major, "minor": minor, "gitVersion": f"v{self.version}", "gitCommit": "",
                "gitTreeState": "clean", "buildDate": "", "goVersion": "go1.22", "compiler": "gc",
                "platform": "linux/amd64"}

    # ---------------------------------------------------------------- OpenAPI (see openapi.py)
    def _gv_docs(self):
        by_gv = {}
        for r in self.all_resources():
            by_gv.setdefault((r.group, r.version), []).append(r)
        key = tuple(sorted((g, v, tuple(rs), json.dumps([r.schema for r in rs if r.crd], sort_keys=True))
                           for (g, v), rs in by_gv.items()))
        if getattr(self, "_openapi_key", None) != key:
            docs = {openapi.gv_path(g, v): openapi.group_version_doc(self.version, rs, g, v)
                    for (g, v), rs in by_gv.items()}
            self._openapi = {p: (d, openapi.digest(d)) for p, d in docs.items()}
            self._openapi_key = key
        return self._openapi

    def openapi_v3(self, gvpath):
        docs = self._gv_docs()
        if not gvpath:
            return {"paths": {p: {"serverRelativeURL": f"/openapi/v3/{p}?hash={h}"} for p, (d, h) in docs.items()}}
        if gvpath not in docs:
            raise ApiError(404, "the server could not find the requested resource", "NotFound", {})
        return docs[gvpath][0]

    def openapi_v2(self):
        return openapi.swagger_v2(self.version, self.all_resources())

    # ---------------------------------------------------------------- Table (see tables.py)
    def table(self, res, objs, list_meta, include):
        cols = None
        if res.crd:
            got = self.store.get(self.key(CRD_RES, None, f"{res.plural}.{res.group}"))
            ver = next((v for v in ((got[0].get("spec") or {}).get("versions") or []) if v.get("name") == res.version),
                       {}) if got else {}
            cols = ver.get("additionalPrinterColumns")
        return tables.table(res, objs, list_meta, include, cols)

    # ---------------------------------------------------------------- watch
    def watch(self, res, ns, q, timeout, poll=0.5):
        """Events after `resourceVersion` (none or "0": ADDED for every current object first, as the
        real server's watch cache sends), then ADDED/MODIFIED/DELETED as the store changes, found by
        polling the store twice a second (its reads come from the store's watch-fed cache).
        Objects whose read-time status changes (the workload rule) are sent as MODIFIED too.
        The selectors are parsed and the starting state read here, before the stream is answered:
        a bad selector is an error status, not a broken stream, and every change after the
        response's headers is an event (the real server also starts its watcher before it answers)."""
        labels = logic.parse_label_selector(q.get("labelSelector", ""))
        fields = logic.parse_field_selector(q.get("fieldSelector", ""), res.plural)
        # a streaming list (sendInitialEvents=true: kubectl from 1.35, client-go's WatchListClient):
        # the current objects as ADDED, then a BOOKMARK at the revision they were read at, annotated
        # k8s.io/initial-events-end, then the changes; only with resourceVersionMatch=NotOlderThan,
        # else Invalid (the API reference's sendInitialEvents parameter; apimachinery's ListOptions
        # validation)
        initial = q.get("sendInitialEvents") == "true"
        if initial and q.get("resourceVersionMatch") != "NotOlderThan":
            raise ApiError(422, 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
                           "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan", "Invalid",
                           {"group": "meta.k8s.io", "kind": "ListOptions",
                            "causes": [{"reason": "FieldValueForbidden", "field": "resourceVersionMatch",
                                        "message": "Forbidden: sendInitialEvents requires setting "
                                                   "resourceVersionMatch to NotOlderThan"}]})

        def snapshot():
            items, dummy = self.store.list(self.key(res, ns))
            out = {}
            for o, r in items:
                if logic.labels_match(labels, (o.get("metadata") or {}).get("labels")) and logic.fields_match(fields, o):
                    full = self.out(res, o, r)
                    out[(full["metadata"].get("namespace"), full["metadata"]["name"])] = full
            return out
        since = q.get("resourceVersion") or "0"
        since = 0 if initial or not since.isdigit() else int(since)
        revision = self.store.revision() if initial else 0
        start = snapshot()

        def events():
            cur = start
            for dummy, o in sorted(cur.items()):
                if since == 0 or int(o["metadata"]["resourceVersion"]) > since:
                    yield {"type": "ADDED" if since == 0 else "MODIFIED", "object": o}
            if initial:
                newest = max([revision] + [int(o["metadata"]["resourceVersion"]) for o in start.values()])
                yield {"type": "BOOKMARK", "object": {
                    "kind": res.kind, "apiVersion": res.api_version,
                    "metadata": {"resourceVersion": str(newest),
                                 "annotations": {"k8s.io/initial-events-end": "true"}}}}
            end = time.monotonic() + timeout
            while time.monotonic() < end:
                time.sleep(poll)
                new = snapshot()
                for k, o in sorted(new.items()):
                    if k not in cur:
                        yield {"type": "ADDED", "object": o}
                    elif o != cur[k]:
                        yield {"type": "MODIFIED", "object": o}
                for k, o in sorted(cur.items()):
                    if k not in new:
                        yield {"type": "DELETED", "object": o}
                cur = new
        return events()

    # ---------------------------------------------------------------- authentication
    def authenticate(self, peercert, authorization):
        if authorization:
            if not authorization.startswith("Bearer "):
                raise ApiError(401, "Unauthorized")
            tok = authorization[7:].strip()
            tid, dummy, secret = tok.partition(".")
            found = self.store.get(self.key(SECRET_RES, "kube-system", f"bootstrap-token-{tid}")) if tid else None
            data = {k: base64.b64decode(v).decode() for k, v in ((found[0].get("data") or {}) if found else {}).items()}
            if not found or data.get("token-secret") != secret or data.get("usage-bootstrap-authentication") != "true" \
                    or (data.get("expiration") and data["expiration"] < now()):
                raise ApiError(401, "Unauthorized")
            extra = [g for g in data.get("auth-extra-groups", "").split(",") if g]
            return User(f"system:bootstrap:{tid}", ["system:bootstrappers"] + extra)
        if peercert:
            subj = [x for rdn in peercert.get("subject", ()) for x in rdn]
            cn = next((v for k, v in subj if k == "commonName"), "")
            return User(cn, [v for k, v in subj if k == "organizationName"])
        return User("system:anonymous", ["system:unauthenticated"])

    # ---------------------------------------------------------------- authorization
    @staticmethod
    def authorize(user, verb, res, ns, name, sub):
        """system:masters / kubeadm:cluster-admins: everything. A node (system:node:<n>, O=system:nodes):
        read everything, create/update/patch its own Node and its status, create events and leases.
        A bootstrap token: get nodes and the kubeadm-config/kubelet-config ConfigMaps in kube-system.
        Anonymous: get kube-public/cluster-info (kubeadm's bootstrap-signer-clusterinfo Role)."""
        if user.admin:
            return
        if res.plural == "configmaps" and verb == "get" and ns == "kube-public" and name == "cluster-info":
            return
        if user.node is not None:
            if verb in READ_VERBS:
                return
            if res.plural == "nodes" and (name == user.node or (verb == "create" and name is None)):
                return
            if res.plural in ("events", "leases"):
                return
        if "system:bootstrappers" in user.groups and verb == "get" and (
                res.plural == "nodes" or (res.plural == "configmaps" and ns == "kube-system"
                                          and name in ("kubeadm-config", "kubelet-config"))):
            return
        raise logic.forbidden(user.name, verb, res.plural, res.group, name, ns if res.namespaced else None, sub)

    # ---------------------------------------------------------------- validation
    warnings = threading.local()      # the Warning headers of the request being answered

    def _kv(self):
        if self._validate is None:
            import functools
            import kubernetes_validate
            import kubernetes_validate.utils as kvu
            # kubernetes-validate reads the schema files for every call; read each once
            kvu.schema_contents = functools.lru_cache(maxsize=64)(kvu.schema_contents)
            self._validate = kubernetes_validate
        return self._validate

    def _field_validation(self, res, dropped, field_validation):
        """What the request's fieldValidation makes of the unknown fields its body's decoding
        dropped (KEP-2885; staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go /
        update.go / patch.go): `Strict` answers 400 "strict decoding error: unknown field ...",
        `Warn` - the default when the request names none - keeps them dropped and answers with a
        `Warning: 299 - "unknown field \"spec.x\""` header each, `Ignore` drops them silently. The
        same for built-in kinds (_unknown_fields) and custom resources (structural.prune)."""
        if dropped and field_validation == "Strict":
            raise logic.strict_decoding_error(res, dropped)
        if field_validation != "Ignore":
            w = getattr(self.warnings, "items", None)
            if w is not None:
                w.extend(f'unknown field "{f}"' for f in dropped)
        return dropped

    def _unknown_fields(self, res, obj, field_validation):
        """The real server's decoding of a built-in kind into its Go type: the fields the type
        lacks (by the kind's OpenAPI schema) are dropped, then _field_validation."""
        kv = self._kv()
        dropped = []
        for dummy in range(200):
            try:
                kv.validate(obj, self.version, strict=True)
                break
            except kv.ValidationError as e:
                if e.validator != "additionalProperties" or not isinstance(e.instance, dict):
                    break
                known = set((e.schema or {}).get("properties") or {})
                extra = [k for k in e.instance if k not in known]
                if not extra:
                    break
                for k in extra:
                    dropped.append(logic.field_path(list(e.path) + [k]))
                    e.instance.pop(k)
            except (kv.SchemaNotFoundError, IndexError, kv.utils.VersionNotSupportedError):
                break
        return self._field_validation(res, dropped, field_validation)

    def admit(self, res, obj, field_validation="Warn", old=None):
        """Decode (unknown fields by fieldValidation), default, validate: the order of the real
        server's handlers (decode -> defaulting in the conversion to the internal version ->
        admission -> validation: the schema's, then the kind's rules; old: the stored object of an
        update, for the rules on changes)."""
        if not res.crd and isinstance(obj.get("metadata"), dict):
            self._unknown_fields(res, obj, field_validation)
            defaults.apply(obj)
        if res.crd and res.schema and isinstance(obj.get("metadata"), dict):
            # a custom resource decoded with its version's structural schema: metadata coerced to
            # ObjectMeta, unknown fields pruned (customresource_handler.go unstructuredSchemaCoercer),
            # then defaulted (unstructuredDefaulter)
            self._field_validation(res, structural.prune(obj, res.schema), field_validation)
            structural.default(obj, res.schema)
        self.validate(res, obj, "Ignore" if not res.crd else field_validation)
        if not res.crd:
            probs = logic.semantic_problems(obj, old)
            if probs:
                raise logic.invalid(res, obj["metadata"].get("name", ""), probs)

    def validate(self, res, obj, field_validation="Strict"):
        name = (obj.get("metadata") or {}).get("name", "")
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            raise logic.invalid(res, name, [("metadata", "FieldValueRequired", "Required value")])
        probs = logic.name_problems(name, label=res.plural == "namespaces")
        if probs:
            raise logic.invalid(res, name, probs)
        if res.crd:
            return self._validate_cr(res, obj)
        kv = self._kv()
        strict = field_validation not in ("Ignore", "Warn")
        try:
            kv.validate(obj, self.version, strict=strict)
        except kv.ValidationError as e:
            raise logic.schema_error_to_api(res, name, e) from None
        except kv.SchemaNotFoundError as e:
            raise ApiError(400, e.message, "BadRequest") from None
        except (IndexError, kv.utils.VersionNotSupportedError):
            raise ApiError(500, f"the double has no Kubernetes schemas for v{self.version} (the harness ships "
                                "SCHEMA_VERSIONS of tests/harness/kubeadm_double.py)", "InternalError") from None

    @staticmethod
    def _validate_cr(res, obj):
        if not res.schema:
            return
        import jsonschema
        schema = logic.crd_schema(res.schema)
        props = schema.setdefault("properties", {})
        for k in ("apiVersion", "kind", "metadata"):
            props.pop(k, None)
        err = jsonschema.exceptions.best_match(jsonschema.Draft4Validator(schema).iter_errors(obj))
        if err is not None and err.validator != "additionalProperties":
            raise logic.schema_error_to_api(res, obj["metadata"]["name"], err)

    # ---------------------------------------------------------------- objects
    def out(self, res, obj, rev, in_list=False):
        obj = copy.deepcopy(obj)
        obj.setdefault("metadata", {})["resourceVersion"] = str(rev)
        if res.crd and res.schema:
            # the real server defaults a custom resource read from storage too (its storage
            # decoder has the unstructuredDefaulter): a default added to the CRD later shows
            structural.default(obj, res.schema)
        if obj.get("kind") in WORKLOADS and self.images is not None and res.group == "apps":
            nodes = [o for o, dummy in self.store.list(self.key(NODE_RES, None))[0]]
            obj["status"] = logic.workload_status(obj, nodes, self.images.exists)
        if res.plural == "poddisruptionbudgets" and res.group == "policy":
            obj["status"] = self.pdb_status(obj)
        if in_list and not res.crd:
            obj.pop("kind", None), obj.pop("apiVersion", None)
        return obj

    def pdb_status(self, pdb):
        """A budget's status, computed from its namespace's pods and their controllers as the
        disruption controller would write it (logic.pdb_status)."""
        ns = pdb["metadata"].get("namespace")
        pods = [o for o, dummy in self.store.list(self.key(POD_RES, ns))[0]]

        def owner(kind, namespace, name):
            res = next((r for r in BUILTIN if r.kind == kind and r.group in ("", "apps")), None)
            got = self.store.get(self.key(res, namespace, name)) if res else None
            return {**got[0], "kind": kind} if got else None
        return logic.pdb_status(pdb, pods, owner)

    def eviction_refusal(self, ns, name):
        """What the eviction of pod ns/name is refused with (logic.eviction_refusal), or None."""
        got = self.current(self.key(POD_RES, ns, name))
        if not got:
            raise logic.not_found(POD_RES, name)
        pod = got[0]
        labels = (pod.get("metadata") or {}).get("labels")
        pdbs = [{**o, "status": self.pdb_status(o)} for o, dummy in self.store.list(self.key(PDB_RES, ns))[0]
                if (o.get("spec") or {}).get("selector") is not None
                and logic.match_expressions_match(o["spec"]["selector"], labels)]
        return logic.eviction_refusal(pod, pdbs)

    def check_namespace(self, res, ns, creating=None):
        """404 for a missing namespace; creating (the new object's name): 403 while it terminates."""
        if res.namespaced and ns:
            got = self.current(self.key(NS_RES, None, ns))
            if not got:
                raise logic.namespace_not_found(ns)
            if creating is not None and got[0].get("metadata", {}).get("deletionTimestamp"):
                raise logic.namespace_terminating(res, creating, ns)

    # -------------------------------------------------------------- namespace deletion (Terminating)
    # DELETE of a namespace (pkg/registry/core/namespace/storage/storage.go): its "kubernetes"
    # finalizer keeps it, with a deletionTimestamp and phase Terminating, while the namespace
    # controller (pkg/controller/namespace/deletion) deletes its content; then it is purged. The
    # double removes the content at once and the namespace NS_TERMINATING_SECONDS later (the real
    # controller's time depends on the content and its finalizers: seconds, at least).
    NS_TERMINATING_SECONDS = 3.0

    def terminate_namespace(self, obj, name, dry):
        if obj["metadata"].get("deletionTimestamp"):
            raise logic.namespace_purging(name)
        obj = copy.deepcopy(obj)
        obj["metadata"]["deletionTimestamp"] = now()
        obj["status"] = {**(obj.get("status") or {}), "phase": "Terminating"}
        if dry:
            return self.out(NS_RES, obj, self.store.revision())
        key = self.key(NS_RES, None, name)
        for attempt in range(5):
            got = self.current(key, retry=attempt > 0)
            if not got:
                raise logic.not_found(NS_RES, name)
            if got[0]["metadata"].get("deletionTimestamp"):
                raise logic.namespace_purging(name)
            marked = {**got[0], "metadata": obj["metadata"], "status": obj["status"]}
            rev = self.store.update(key, marked, got[1])
            if rev is not None:
                break
        else:
            raise logic.conflict(NS_RES, name)
        self.purge_content(name)
        self.terminating[name] = time.monotonic() + self.NS_TERMINATING_SECONDS
        return self.out(NS_RES, obj, rev)

    def purge_content(self, ns):
        for r in self.all_resources():
            if r.namespaced:
                self.store.delete_prefix(self.key(r, ns))

    def finish_terminations(self, at_start=False):
        """Purge the namespaces whose deletion this double began, once their time is up; at start,
        take over any namespace left Terminating (a restart)."""
        if at_start:
            for o, dummy in self.store.list(self.key(NS_RES, None))[0]:
                if o["metadata"].get("deletionTimestamp"):
                    self.terminating.setdefault(o["metadata"]["name"], time.monotonic())
        for name, due in list(self.terminating.items()):
            if time.monotonic() >= due:
                self.purge_content(name)
                self.store.delete(self.key(NS_RES, None, name))
                self.terminating.pop(name, None)

    def body_identity(self, res, obj, ns, name=None):
        if not isinstance(obj, dict):
            raise ApiError(400, "the body of the request is not a JSON object", "BadRequest")
        obj.setdefault("apiVersion", res.api_version)
        obj.setdefault("kind", res.kind)
        if obj["apiVersion"] != res.api_version or obj["kind"] != res.kind:
            raise ApiError(400, f"the API version in the data ({obj['apiVersion']}) does not match the expected API "
                                f"version ({res.api_version})" if obj["apiVersion"] != res.api_version else
                           f"the kind in the data ({obj['kind']}) does not match the expected kind ({res.kind})",
                           "BadRequest")
        meta = obj.setdefault("metadata", {}) if isinstance(obj.get("metadata", {}), dict) else obj["metadata"]
        if isinstance(meta, dict):
            if res.namespaced:
                if meta.get("namespace") and meta["namespace"] != ns:
                    raise ApiError(400, "the namespace of the provided object does not match the namespace sent on "
                                        "the request", "BadRequest")
                meta["namespace"] = ns
            else:
                meta.pop("namespace", None)
            if name is not None and meta.get("name") and meta["name"] != name:
                raise ApiError(400, f"the name of the object ({meta['name']}) does not match the name on the URL "
                                    f"({name})", "BadRequest")
            if name is not None:
                meta.setdefault("name", name)
            if not meta.get("name") and meta.get("generateName"):
                meta["name"] = meta["generateName"] + uuid.uuid4().hex[:5]
        return obj

    def create(self, res, ns, obj, dry=False, fv="Warn", internal=False, manager=None, applied=None):
        """manager: the field manager of an Update (apply.py); applied: the Managers of an apply that creates."""
        obj = self.body_identity(res, obj, ns)
        self.check_namespace(res, ns, creating=obj["metadata"].get("name") or "")
        obj = logic.prepare_create(obj, res, str(uuid.uuid4()), now(), keep_status=res.plural == "nodes" or internal)
        if res.plural == "namespaces":
            obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
            obj["status"] = {"phase": "Active"}
            obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
            obj["metadata"].pop("generation", None)
        if res.plural == "customresourcedefinitions":
            obj["status"] = resources.established(obj)
        if res.plural == "pods" and not internal:
            # a new Pod is Pending until a kubelet reports on it (pkg/registry/core/pod/strategy.go
            # PrepareForCreate; the QoS class it also sets is not computed here)
            obj["status"] = {"phase": "Pending"}
        self.admit(res, obj, fv)
        if applied is not None:
            fields.set_managed(obj, applied, fields.schema_for(res, self.version))
        elif manager is not None:
            fields.record_update(res, self.version, None, obj, manager, "", now())
        name = obj["metadata"]["name"]
        if dry:
            if self.store.get(self.key(res, ns, name)):
                raise logic.already_exists(res, name)
            return self.out(res, obj, self.store.revision())
        rev = self.store.create(self.key(res, ns, name), obj)
        if rev is None:
            raise logic.already_exists(res, name)
        if res.plural == "customresourcedefinitions":
            self.crd_resources(fresh=True)
        if res.plural == "nodes":
            self.apply_marks(name)
            got = self.store.get(self.key(res, ns, name))
            obj, rev = got if got else (obj, rev)
        return self.out(res, obj, rev)

    def current(self, key, retry=False):
        """The object as this server's cache has it, else as etcd has it: a write, a deletion or an
        admission check never fails on an object that another master's cache has not seen yet (the
        real server's GuaranteedUpdate reads etcd when its cache has no object, and after a conflict;
        NamespaceLifecycle looks a namespace up live when its informer misses it). retry: a write's
        next try, after a conflict or a copy that may be stale: etcd's copy at once."""
        if retry:
            return self.store.get(key, fresh=True)
        return self.store.get(key) or self.store.get(key, fresh=True)

    def get(self, res, ns, name, fresh=False):
        """fresh: as etcd has it now (a client's GET without resourceVersion=0: the real cacher
        sends it to etcd), else from the cache (resourceVersion=0: "any", what the kubelet asks first)."""
        self.check_namespace(res, ns)
        got = self.store.get(self.key(res, ns, name), fresh=fresh)
        if not got:
            raise logic.not_found(res, name)
        return self.out(res, *got)

    def list(self, res, ns, q, fresh=False):
        """fresh: every write made before it, on any master (a LIST without resourceVersion=0 is a
        consistent read: the real server answers it from etcd, or with ConsistentListFromCache
        from its cache once the cache has caught up with etcd's current revision)."""
        if ns:
            self.check_namespace(res, ns)
        labels = logic.parse_label_selector(q.get("labelSelector", ""))
        fields = logic.parse_field_selector(q.get("fieldSelector", ""), res.plural)
        items, rev = self.store.list(self.key(res, ns), fresh=fresh)
        items = [self.out(res, o, r, in_list=True) for o, r in items
                 if logic.labels_match(labels, (o.get("metadata") or {}).get("labels"))
                 and logic.fields_match(fields, o)]
        return {"kind": f"{res.kind}List", "apiVersion": res.api_version,
                "metadata": {"resourceVersion": str(rev)}, "items": items}

    def update(self, res, ns, name, obj, sub=None, dry=False, fv="Warn", patcher=None, manager=None, applied=None):
        """PUT (obj) or PATCH (patcher(current) -> new); sub "status" writes only the status. manager:
        the field manager of an Update; applied: {"managers": ...} that a server-side apply's patcher fills."""
        self.check_namespace(res, ns)
        key = self.key(res, ns, name)
        for attempt in range(5):
            got = self.current(key, retry=attempt > 0)
            if not got:
                raise logic.not_found(res, name)
            cur, rev = got
            if res.crd and res.schema:
                cur = structural.default(copy.deepcopy(cur), res.schema)    # read as the storage decoder reads it
            rv = None
            if patcher is not None:
                new = patcher(self.out(res, cur, rev) if sub != "status" else copy.deepcopy(cur))
                if isinstance(new, dict):
                    new.setdefault("metadata", {}).pop("resourceVersion", None)
                want_rev = rev
            else:
                new = obj
                rv = (new.get("metadata") or {}).get("resourceVersion") if isinstance(new, dict) else None
                want_rev = int(rv) if rv and str(rv).isdigit() else rev
                if rv and want_rev != rev:
                    if attempt == 0:
                        continue   # the cache's copy may be behind: decided on etcd's (GuaranteedUpdate)
                    raise logic.conflict(res, name)
            new = self.body_identity(res, new, ns, name)
            if sub == "status":
                merged = copy.deepcopy(cur)
                merged["status"] = new.get("status")
                if merged["status"] is None:
                    merged.pop("status")
                new = merged
            else:
                new = logic.prepare_update(new, cur, res)
            if res.plural == "customresourcedefinitions":
                new["status"] = resources.established(new)
            self.admit(res, new, fv, old=cur if sub != "status" else None)
            if sub != "status":
                logic.bump_generation(new, cur)
            if applied is not None:
                fields.set_managed(new, applied["managers"], fields.schema_for(res, self.version))
            elif manager is not None:
                fields.record_update(res, self.version, cur, new, manager, sub, now())
            if new == cur:
                # nothing changed: no write, the same resourceVersion (apiserver/pkg/storage/etcd3/store.go
                # GuaranteedUpdate stops when the new data is the stored data)
                return self.out(res, cur, rev)
            if dry:
                return self.out(res, new, rev)
            new_rev = self.store.update(key, new, want_rev)
            if new_rev is not None:
                if res.plural == "customresourcedefinitions":
                    self.crd_resources(fresh=True)
                return self.out(res, new, new_rev)
            if rv:
                raise logic.conflict(res, name)   # the resourceVersion asked for is not etcd's now
        raise logic.conflict(res, name)

    def apply_patch(self, res, ns, name, config, sub=None, dry=False, fv="Warn", manager="", force=False):
        """PATCH application/apply-patch+yaml (server-side apply, apply.py): merged into the stored
        object, or created when there is none (patch.go: apply may create; 201 then).
        -> (code, object)"""
        if not isinstance(config, dict):
            raise ApiError(400, "the body of the request is not a JSON object", "BadRequest")
        if config.get("apiVersion") != res.api_version:
            # structuredmerge.go: the patch must be of the resource's version
            raise ApiError(400, f"Incorrect version specified in apply patch. Specified patch version: "
                                f"{config.get('apiVersion') or ''}, expected: {res.api_version}", "BadRequest")
        if (config.get("metadata") or {}).get("managedFields"):
            raise ApiError(400, "metadata.managedFields must be nil", "BadRequest")
        self.body_identity(res, config, ns, name)
        schema = fields.schema_for(res, self.version)

        applied = {}

        def applier(live):
            mgrs = fields.Managers((live.get("metadata") or {}).get("managedFields"))
            new, applied["managers"] = fields.apply(live, config, schema, mgrs, manager, res.api_version, now(), force,
                                                    sub or "", res.subresources)
            return new
        self.check_namespace(res, ns)
        if self.current(self.key(res, ns, name)) is None and not sub:
            obj, mgrs = fields.apply(None, config, schema, fields.Managers(), manager, res.api_version, now(), force,
                                     "", res.subresources)
            try:
                return 201, self.create(res, ns, obj, dry, fv, applied=mgrs)
            except ApiError as e:
                if e.reason != "AlreadyExists":
                    raise
        return 200, self.update(res, ns, name, None, sub, dry, fv, patcher=applier, applied=applied)

    def delete(self, res, ns, name, dry=False):
        self.check_namespace(res, ns)
        got = self.current(self.key(res, ns, name))
        if not got:
            raise logic.not_found(res, name)
        obj, dummy = got
        if res.plural == "namespaces":
            return self.terminate_namespace(obj, name, dry)
        if not dry:
            if not self.store.delete(self.key(res, ns, name)):
                raise logic.not_found(res, name)
            if res.plural == "customresourcedefinitions":
                for r in resources.crd_resources(obj):
                    self.store.delete_prefix(self.key(r, None))
                self.crd_resources(fresh=True)
        d = {"name": name, "kind": res.plural, "uid": obj["metadata"].get("uid")}
        if res.group:
            d["group"] = res.group
        return logic.status_obj(200, "", "", d, success=True)

    # ---------------------------------------------------------------- bootstrap and kubeadm's state
    def ensure_system(self):
        for ns in resources.SYSTEM_NAMESPACES:
            try:
                self.create(NS_RES, None, {"metadata": {"name": ns}}, internal=True)
            except ApiError:
                pass
        self.sync_kubeadm_state()

    def _upsert(self, res, ns, obj):
        """One object kubeadm wrote (its state file on this host), written to the store when kubeadm
        wrote something new for it: what this host's state held when it was last synced is recorded (a
        digest per host and object), so an unchanged entry is not written again - an object changed or
        deleted through the API since (an operator's edit of kube-system/kubelet-config before an
        upgrade) stays as it is when this API server restarts, as it does with the real one, where
        kubeadm writes an object once and the API server keeps it."""
        name = obj["metadata"]["name"]
        body = {k: v for k, v in obj.items() if k != "metadata"}
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        mark = f"/registry/double/kubeadm-synced/{socket.gethostname()}/{res.plural}/{ns}/{name}"
        seen = self.store.get(mark)
        if seen is not None and seen[0] == digest:
            return
        got = self.store.get(self.key(res, ns, name))
        if got is None:
            try:
                self.create(res, ns, obj, internal=True)
            except ApiError as e:
                log(f"E sync {res.plural} {name}: {e.message}")
                return
        elif any(got[0].get(k) != v for k, v in body.items()):
            new = copy.deepcopy(got[0])
            new.update(body)
            self.store.update(self.key(res, ns, name), new, got[1])
        if seen is None:
            self.store.create(mark, digest)
        else:
            self.store.update(mark, digest, seen[1])

    def sync_kubeadm_state(self):
        """What kubeadm wrote "to the API" (the kubeadm double's state file on this host) becomes API
        objects: its ConfigMaps, bootstrap-token Secrets, and its control-plane marks for Nodes.
        Called for every request (a stat when nothing changed) and every 5 s."""
        with self._sync_lock:
            self._sync_kubeadm_state()

    def _sync_kubeadm_state(self):
        path = self.kubeadm_state
        try:
            stamp = os.stat(path).st_mtime_ns if path else None
        except OSError:
            stamp = None
        if stamp is None or stamp == self._state_stamp:
            return
        try:
            with open(path) as f:
                st = json.load(f)
        except (OSError, ValueError):
            return
        self._state_stamp = stamp
        for name, data in (st.get("configmaps") or {}).items():
            ns = "kube-public" if name == "cluster-info" else "kube-system"
            self._upsert(CM_RES, ns, {"apiVersion": "v1", "kind": "ConfigMap",
                                      "metadata": {"name": name, "namespace": ns}, "data": data})
        for tok, t in (st.get("tokens") or {}).items():
            tid, dummy, secret = tok.partition(".")
            data = {"token-id": tid, "token-secret": secret, "description": t.get("description") or "",
                    "auth-extra-groups": ",".join(t.get("groups") or [])}
            if t.get("expires"):
                data["expiration"] = t["expires"]
            for u in t.get("usages") or []:
                data[f"usage-bootstrap-{u}"] = "true"
            self._upsert(SECRET_RES, "kube-system", {
                "apiVersion": "v1", "kind": "Secret", "type": "bootstrap.kubernetes.io/token",
                "metadata": {"name": f"bootstrap-token-{tid}", "namespace": "kube-system"},
                "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}})
        self.marked = sorted(st.get("nodes") or {})
        for node, mark in (st.get("nodes") or {}).items():
            key = f"/registry/double/control-plane-marks/{node}"
            got = self.store.get(key)
            if got is None:
                self.store.create(key, mark)
            elif got[0] != mark:
                self.store.update(key, mark, got[1])
            self.apply_marks(node)

    def apply_marks(self, node):
        """kubeadm's mark-control-plane (labels and taints) on the Node, once it is registered; retried
        on a conflict (the kubelet's heartbeats write the same Node), as kubeadm's patch is."""
        for dummy in range(10):
            mark = self.store.get(f"/registry/double/control-plane-marks/{node}")
            got = self.store.get(self.key(NODE_RES, None, node))
            if not mark or not got:
                return
            obj, rev = got
            new = copy.deepcopy(obj)
            labels = new["metadata"].setdefault("labels", {})
            for lab in mark[0].get("labels") or []:
                labels[lab] = ""
            taints = new.setdefault("spec", {}).setdefault("taints", [])
            for t in mark[0].get("taints") or []:
                if not any(x.get("key") == t.get("key") and x.get("effect") == t.get("effect") for x in taints):
                    taints.append(t)
            if not taints:
                new["spec"].pop("taints")
            if new == obj or self.store.update(self.key(NODE_RES, None, node), new, rev) is not None:
                return
        log(f"E could not mark node {node} as control-plane: it kept changing")


def scale_writer(res, name, change):
    """A patcher for the scale subresource: change(Scale) -> Scale, whose replicas go to the object;
    a Scale's resourceVersion, when given, must be the object's (409 otherwise)."""
    def patcher(cur):
        new = change(resources.scale_of(cur))
        rv = ((new.get("metadata") or {}).get("resourceVersion") if isinstance(new, dict) else None)
        if rv and rv != cur["metadata"].get("resourceVersion"):
            raise logic.conflict(res, name)
        return resources.from_scale(cur, new)
    return patcher


# -------------------------------------------------------------------- HTTP
def parse_path(path):
    """(group, version, ns, plural, name, sub) of a resource path, or None."""
    parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")]
    if parts[:2] == ["api", "v1"]:
        group, version, rest = "", "v1", parts[2:]
    elif parts[0] == "apis" and len(parts) >= 3:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    if not rest or not rest[0]:
        return None
    ns = None
    if rest[0] == "namespaces" and len(rest) >= 3:
        ns, rest = rest[1], rest[2:]
    plural, name, sub = (rest + [None, None])[:3]
    if len(rest) > 3:
        return None
    return group, version, ns, plural, name, sub


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 120
    api: Api = None

    def log_message(self, *a):
        pass

    def send_json(self, code, obj, extra=None):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra.items() if isinstance(extra, dict) else extra or []):
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_watch(self, events):
        """A watch stream: chunked JSON, one `{"type": ..., "object": ...}` per line until
        timeoutSeconds (the real server's default is a random 30-60 min, --min-request-timeout)
        (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/watch.go, apimachinery's
        pkg/apis/meta/v1 WatchEvent)."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for ev in events:
                data = (json.dumps(ev) + "\n").encode()
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (OSError, ssl.SSLError):
            self.close_connection = True

    def send_text(self, code, text):
        body = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        raw = self._raw
        if not raw:
            raise ApiError(400, "the request body is empty", "BadRequest")
        ctype = (self.headers.get("Content-Type") or "application/json").split(";")[0].strip()
        if ctype == "application/vnd.kubernetes.protobuf":
            try:
                return protobuf.decode(raw), ctype
            except protobuf.Unsupported as e:
                raise ApiError(415, f"the body of the request was in an unknown format - the double decodes "
                                    f"protobuf only for {', '.join(k for v, k in protobuf.KINDS)} ({e})",
                               "UnsupportedMediaType", {}) from None
        try:
            if ctype.endswith("yaml"):
                import yaml
                return yaml.safe_load(raw), ctype
            return json.loads(raw), ctype
        except ValueError as e:
            raise ApiError(400, f"error decoding the request body: {e}", "BadRequest") from None

    def handle_one(self):
        api = self.api
        url = urllib.parse.urlsplit(self.path)
        q = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
        path = url.path.rstrip("/") or "/"
        if path in PUBLIC_PATHS or path.startswith(("/healthz/", "/readyz/", "/livez/")):
            # answered before the kubeadm state sync below, which writes to etcd under a lock and
            # can take seconds on a loaded host: a health probe (keepalived's, with its 0.5 s
            # timeout) must not wait behind it, as a real API server's /healthz waits behind no write
            if self.command != "GET":
                raise ApiError(405, "the server does not allow this method on the requested resource", "MethodNotAllowed")
            return ("json", 200, api.version_info()) if path == "/version" else ("text", 200, "ok")
        api.sync_kubeadm_state()
        user = api.authenticate(self.connection.getpeercert() if hasattr(self.connection, "getpeercert") else None,
                                self.headers.get("Authorization"))
        if user.name == "system:anonymous" and parse_path(path) is None:
            # discovery is for system:authenticated (the system:discovery ClusterRoleBinding)
            raise ApiError(403, f'forbidden: User "system:anonymous" cannot {self.command.lower()} path "{path}"',
                           "Forbidden", {})
        if self.command == "GET":
            if path == "/api":
                return "json", 200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
                    {"clientCIDR": "0.0.0.0/0", "serverAddress": f"{self.server.server_address[0]}:"
                                                                 f"{self.server.server_address[1]}"}]}
            if path == "/apis":
                return "json", 200, api.groups()
            if path == "/openapi/v3" or path.startswith("/openapi/v3/"):
                return "json", 200, api.openapi_v3(path[len("/openapi/v3/"):] if path != "/openapi/v3" else "")
            if path == "/openapi/v2":
                accept = self.headers.get("Accept") or "*/*"
                if not any(x.split(";")[0].strip() in ("application/json", "*/*") for x in accept.split(",")):
                    # the real server also serves the protobuf form (gnostic's OpenAPIv2 Document)
                    raise ApiError(406, "only application/json is served by the double for /openapi/v2",
                                   "NotAcceptable", {})
                return "json", 200, api.openapi_v2()
            parts = path.strip("/").split("/")
            if parts == ["api", "v1"] or (parts[0] == "apis" and len(parts) == 3):
                gv = ("", "v1") if parts[0] == "api" else (parts[1], parts[2])
                lst = api.resource_list(*gv)
                if lst is None:
                    raise ApiError(404, "the server could not find the requested resource", "NotFound", {})
                return "json", 200, lst
            if parts[0] == "apis" and len(parts) == 2:
                g = next((x for x in api.groups()["groups"] if x["name"] == parts[1]), None)
                if g is None:
                    raise ApiError(404, "the server could not find the requested resource", "NotFound", {})
                return "json", 200, {"kind": "APIGroup", "apiVersion": "v1", **g}
        pp = parse_path(path)
        if pp is None:
            raise ApiError(404, "the server could not find the requested resource", "NotFound", {})
        group, version, ns, plural, name, sub = pp
        # /api/v1/namespaces/<name>[/status]: the namespace itself
        if plural is None and ns is not None:
            pass
        if group == "" and ns is not None and plural in ("status", "finalize") and name is None:
            plural, name, sub, ns = "namespaces", ns, plural, None
        res = api.find(group, version, plural)
        if res is None and group == "" and ns is not None and plural is None:
            res = NS_RES
        if res is None:
            raise ApiError(404, "the server could not find the requested resource", "NotFound", {})
        if not res.namespaced and ns is not None:
            raise ApiError(404, "the server could not find the requested resource", "NotFound", {})
        if sub == "eviction" and res.plural == "pods" and name and self.command == "POST":
            return self.evict(api, user, res, ns, name, q.get("dryRun") == "All")
        if sub and sub not in res.subresources:
            raise ApiError(404, "the server could not find the requested resource", "NotFound", {})
        dry = q.get("dryRun") == "All"
        fv = q.get("fieldValidation") or "Warn"
        if fv not in ("Strict", "Warn", "Ignore"):
            raise ApiError(400, f'fieldValidation parameter unsupported: "{fv}"', "BadRequest", {})
        verb = {"GET": "get" if name else "list", "POST": "create", "PUT": "update", "PATCH": "patch",
                "DELETE": "delete" if name else "deletecollection"}.get(self.command)
        if verb is None:
            raise ApiError(405, "the server does not allow this method on the requested resource",
                           "MethodNotAllowed", {})
        api.authorize(user, verb, res, ns, name, sub)
        if res.namespaced and ns is None and verb not in ("list",):
            raise ApiError(404, "the server could not find the requested resource", "NotFound", {})
        watch = q.get("watch") in ("true", "1")
        if watch and verb in ("get", "list"):
            if verb == "get":
                # the legacy GET /watch/... form is not served; a single-object watch is a
                # list+watch with fieldSelector=metadata.name=<n> (what client-go sends)
                q = {**q, "fieldSelector": f"metadata.name={name}"}
            api.authorize(user, "watch", res, ns, None, sub)
            try:
                timeout = min(float(q.get("timeoutSeconds") or 1800), 3600)
            except ValueError:
                timeout = 1800
            return "watch", 200, api.watch(res, ns, q, timeout)
        table = tables.wants_table(self.headers.get("Accept"))
        fresh = q.get("resourceVersion") != "0"
        if verb == "get":
            got = api.get(res, ns, name, fresh)
            if sub == "scale":
                return "json", 200, resources.scale_of(got)
            if table:
                return "json", 200, api.table(res, [got], {"resourceVersion": got["metadata"]["resourceVersion"]},
                                              q.get("includeObject") or "Metadata")
            return "json", 200, got
        if verb == "list":
            lst = api.list(res, ns, q, fresh)
            if table:
                for o in lst["items"]:
                    o.setdefault("kind", res.kind), o.setdefault("apiVersion", res.api_version)
                return "json", 200, api.table(res, lst["items"], lst["metadata"], q.get("includeObject") or "Metadata")
            return "json", 200, lst
        ua_manager = q.get("fieldManager") or fields.default_manager(self.headers.get("User-Agent"))
        if verb == "create":
            if name:
                raise ApiError(405, "the server does not allow this method on the requested resource",
                               "MethodNotAllowed", {})
            obj, dummy = self.body()
            want = (obj.get("metadata") or {}).get("name") if isinstance(obj, dict) else None
            if res.plural == "nodes" and user.node is not None and want != user.node:
                # the NodeRestriction admission plugin (plugin/pkg/admission/noderestriction)
                raise ApiError(403, f'nodes "{want}" is forbidden: node "{user.node}" is not allowed to modify '
                                    f'node "{want}"', "Forbidden", {"name": want, "kind": "nodes"})
            return "json", 201, api.create(res, ns, obj, dry, fv, manager=ua_manager)
        if verb == "update":
            obj, dummy = self.body()
            if sub == "scale":
                got = api.update(res, ns, name, None, sub, dry, fv, patcher=scale_writer(res, name, lambda s: obj),
                                 manager=ua_manager)
                return "json", 200, resources.scale_of(got)
            return "json", 200, api.update(res, ns, name, obj, sub, dry, fv, manager=ua_manager)
        if verb == "patch":
            patch, ctype = self.body()
            if ctype == "application/apply-patch+yaml":
                # patch.go validates the PatchOptions first (meta/v1/validation ValidatePatchOptions)
                if not q.get("fieldManager"):
                    raise fields.patch_options_invalid("fieldManager", "FieldValueRequired", "is required for apply patch")
                code, got = api.apply_patch(res, ns, name, patch, sub, dry, fv, q["fieldManager"],
                                            q.get("force") in ("true", "1"))
                return "json", code, got
            if "force" in q:
                raise fields.patch_options_invalid("force", "FieldValueForbidden", "may not be specified for non-apply patch")
            if ctype == "application/merge-patch+json":
                def patcher(cur):
                    return logic.merge_patch(cur, patch)
            elif ctype == "application/strategic-merge-patch+json" and not res.crd:
                def patcher(cur):
                    return logic.strategic_merge_patch(cur, patch)
            elif ctype == "application/json-patch+json":
                def patcher(cur):
                    return logic.json_patch(cur, patch)
            else:
                accepted = "application/json-patch+json, application/merge-patch+json, " + \
                    ("" if res.crd else "application/strategic-merge-patch+json, ") + "application/apply-patch+yaml"
                raise ApiError(415, f"the body of the request was in an unknown format - accepted media types "
                                    f"include: {accepted}", "UnsupportedMediaType", {})
            if sub == "scale":
                got = api.update(res, ns, name, None, sub, dry, fv, patcher=scale_writer(res, name, patcher),
                                 manager=ua_manager)
                return "json", 200, resources.scale_of(got)
            return "json", 200, api.update(res, ns, name, None, sub, dry, fv, patcher=patcher, manager=ua_manager)
        if verb == "delete":
            return "json", 200, api.delete(res, ns, name, dry)
        raise ApiError(405, "deletecollection is not served by the double", "MethodNotAllowed", {})

    # --- node drain support (k8s_drain, playbooks/remove_node.yml) -----------------------------
    def evict(self, api, user, res, ns, name, dry):
        """POST pods/<name>/eviction: unless the pod's PodDisruptionBudget forbids it (429, the
        real wording), the pod is deleted and 201 answers a Success Status, as the real server
        (pkg/registry/core/pod/storage/eviction.go)."""
        body, dummy = self.body()
        logic.eviction_target(body, ns, name)
        api.authorize(user, "create", res, ns, name, "eviction")
        api.check_namespace(res, ns)
        refusal = api.eviction_refusal(ns, name)
        if refusal is not None:
            raise refusal
        api.delete(res, ns, name, dry)
        return "json", 201, logic.status_obj(201, "", "", success=True)
    # --- end of node drain support -------------------------------------------------------------

    def dispatch(self):
        n = int(self.headers.get("Content-Length") or 0)
        self._raw = self.rfile.read(n) if n else b""     # always read: the connection is kept alive
        Api.warnings.items = []
        try:
            kind, code, obj = self.handle_one()
        except ApiError as e:
            kind, code, obj = "json", e.code, e.status()
        except Exception as e:  # noqa: BLE001  (answered as the real server does: a 500 Status)
            log(f"E {self.command} {self.path}: {type(e).__name__}: {e}")
            kind, code, obj = "json", 500, logic.status_obj(500, f"Internal error occurred: {e}", "InternalError", {})
        heartbeat = code == 200 and self.path.startswith("/api/v1/nodes/") and self.path.endswith("/status")
        if (self.command in ("POST", "PUT", "PATCH", "DELETE") and not heartbeat) or code >= 500:
            log(f"I {self.command} {self.path} {code}")
        if kind == "text":
            self.send_text(code, obj)
        elif kind == "watch":
            self.send_watch(obj)
        else:
            # Warning headers: RFC 7234 form, code 299, agent "-" (the real server's
            # staging/src/k8s.io/apiserver/pkg/warning and endpoints/filters/warning.go)
            warn = Api.warnings.items
            self.send_json(code, obj, [("Warning", '299 - ' + json.dumps(w)) for w in warn] if warn else None)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = dispatch


class TLSServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, addr, handler, ctx):
        self.ctx = ctx
        super().__init__(addr, handler)

    def finish_request(self, request, client_address):
        request.settimeout(30)
        try:
            tls = self.ctx.wrap_socket(request, server_side=True)
        except (OSError, ssl.SSLError):
            return
        tls.settimeout(None)
        self.RequestHandlerClass(tls, client_address, self)

    def handle_error(self, request, client_address):
        pass


def start_namespace_controller(api, log_fn=log):
    """The thread that purges namespaces at the end of their Terminating time (Api.finish_terminations)."""
    def loop():
        first = True
        while True:
            try:
                api.finish_terminations(at_start=first)
                first = False
            except Exception as e:  # noqa: BLE001  (the store not answering yet: tried again)
                log_fn(f"E namespace deletion: {e}")
            time.sleep(0.5)
    threading.Thread(target=loop, daemon=True).start()


def serve(args, api, log_fn=log):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args["tls-cert-file"], args["tls-private-key-file"])
    if args.get("client-ca-file"):
        ctx.load_verify_locations(args["client-ca-file"])
        ctx.verify_mode = ssl.CERT_OPTIONAL
    Handler.api = api
    bind = args.get("bind-address", "0.0.0.0")
    server = TLSServer((bind, int(args.get("secure-port", 6443))), Handler, ctx)
    server.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)

    def housekeeping():
        tick = 0
        while True:
            time.sleep(5)
            tick += 1
            try:
                api.sync_kubeadm_state()
                if tick % 6 == 0:         # every 30 s: the marks hold (a Node re-registered, a lost race)
                    for node in api.marked:
                        api.apply_marks(node)
            except Exception as e:  # noqa: BLE001
                log_fn(f"E sync: {e}")
    threading.Thread(target=housekeeping, daemon=True).start()
    start_namespace_controller(api, log_fn)
    log_fn(f"I kube-apiserver double v{api.version} serving on {bind}:{args.get('secure-port', 6443)} "
           f"(storage: {api.store.kind})")
    server.serve_forever()

"""The built-in resources the double serves, as discovery lists them, and a CRD's resources.

Names, kinds, scopes, short names and verbs are those of the real API server's discovery
(kubernetes/kubernetes pkg/registry/*/rest storage, as `kubectl api-resources -o wide` prints
them). Group "" is the core group (/api/v1)."""
from __future__ import annotations

from dataclasses import dataclass, field

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
NS_VERBS = ("create", "delete", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool
    short: tuple = ()
    verbs: tuple = tuple(ALL_VERBS)
    subresources: tuple = ()          # e.g. ("status",)
    crd: bool = False
    schema: dict = field(default=None, compare=False, hash=False)   # a CRD version's openAPIV3Schema

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """`deployments.apps`, `configmaps` (the name in error messages)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def kind_qualified(self) -> str:
        """`Deployment.apps`, `ConfigMap` (the kind in Invalid messages)."""
        return f"{self.kind}.{self.group}" if self.group else self.kind


def _r(group, version, plural, kind, namespaced, short=(), sub=("status",), verbs=ALL_VERBS):
    return Resource(group, version, plural, kind.lower(), kind, namespaced, tuple(short), tuple(verbs), tuple(sub))


BUILTIN = [
    _r("", "v1", "namespaces", "Namespace", False, ("ns",), verbs=NS_VERBS),
    _r("", "v1", "nodes", "Node", False, ("no",)),
    _r("", "v1", "pods", "Pod", True, ("po",)),
    _r("", "v1", "services", "Service", True, ("svc",), verbs=NS_VERBS),
    _r("", "v1", "endpoints", "Endpoints", True, ("ep",), sub=()),
    _r("", "v1", "configmaps", "ConfigMap", True, ("cm",), sub=()),
    _r("", "v1", "secrets", "Secret", True, (), sub=()),
    _r("", "v1", "serviceaccounts", "ServiceAccount", True, ("sa",), sub=()),
    _r("", "v1", "events", "Event", True, ("ev",), sub=()),
    _r("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, ("pvc",)),
    _r("", "v1", "persistentvolumes", "PersistentVolume", False, ("pv",)),
    _r("apps", "v1", "deployments", "Deployment", True, ("deploy",), sub=("status", "scale")),
    _r("apps", "v1", "daemonsets", "DaemonSet", True, ("ds",)),
    _r("apps", "v1", "statefulsets", "StatefulSet", True, ("sts",), sub=("status", "scale")),
    _r("apps", "v1", "replicasets", "ReplicaSet", True, ("rs",), sub=("status", "scale")),
    _r("batch", "v1", "jobs", "Job", True),
    _r("batch", "v1", "cronjobs", "CronJob", True, ("cj",)),
    _r("rbac.authorization.k8s.io", "v1", "roles", "Role", True, sub=()),
    _r("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True, sub=()),
    _r("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False, sub=()),
    _r("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False, sub=()),
    _r("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, ("pdb",)),
    _r("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True, ("netpol",), sub=()),
    _r("networking.k8s.io", "v1", "ingresses", "Ingress", True, ("ing",)),
    _r("networking.k8s.io", "v1", "ingressclasses", "IngressClass", False, sub=()),
    _r("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, ("sc",), sub=()),
    _r("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False, ("crd", "crds")),
    _r("coordination.k8s.io", "v1", "leases", "Lease", True, sub=()),
    _r("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, ("pc",), sub=()),
    _r("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
       "MutatingWebhookConfiguration", False, sub=()),
    _r("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
       "ValidatingWebhookConfiguration", False, sub=()),
    _r("certificates.k8s.io", "v1", "certificatesigningrequests", "CertificateSigningRequest", False, ("csr",)),
    _r("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True, sub=()),
]

# the kinds `kubectl get all` lists: the `all` category of their REST storage (pkg/registry/*/storage:
# CategoriesProvider returns []string{"all"})
ALL_CATEGORY = ("pods", "services", "deployments", "daemonsets", "statefulsets", "replicasets", "jobs",
                "cronjobs")

# Namespaces every cluster has (kube-apiserver's system namespaces controller + kubeadm).
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def crd_resources(crd: dict) -> list[Resource]:
    """The served versions of a CustomResourceDefinition (apiextensions.k8s.io/v1) as resources."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    out = []
    for v in spec.get("versions") or []:
        if not v.get("served", True):
            continue
        sub = tuple(k for k in ("status", "scale") if k in ((v.get("subresources") or {})))
        out.append(Resource(spec.get("group", ""), v.get("name", ""), names.get("plural", ""),
                            names.get("singular") or names.get("kind", "").lower(), names.get("kind", ""),
                            spec.get("scope", "Namespaced") == "Namespaced", tuple(names.get("shortNames") or ()),
                            tuple(ALL_VERBS), sub, True, (v.get("schema") or {}).get("openAPIV3Schema")))
    return out


def established(crd: dict) -> dict:
    """The status the real apiextensions controllers give an accepted CRD (NamesAccepted, Established)."""
    names = (crd.get("spec") or {}).get("names") or {}
    acc = {"plural": names.get("plural"), "singular": names.get("singular") or str(names.get("kind", "")).lower(),
           "kind": names.get("kind"), "listKind": names.get("listKind") or f"{names.get('kind')}List"}
    if names.get("shortNames"):
        acc["shortNames"] = names["shortNames"]
    cond = [{"type": t, "status": "True", "reason": r, "message": m, "lastTransitionTime": None}
            for t, r, m in (("NamesAccepted", "NoConflicts", "no conflicts found"),
                            ("Established", "InitialNamesAccepted", "the initial names have been accepted"))]
    return {"acceptedNames": acc, "conditions": cond,
            "storedVersions": [v["name"] for v in (crd.get("spec") or {}).get("versions") or [] if v.get("storage")]}


def api_resource(r: Resource) -> list[dict]:
    """APIResource entries (the resource and its subresources) of an APIResourceList."""
    e = {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced, "kind": r.kind,
         "verbs": list(r.verbs)}
    if r.short:
        e["shortNames"] = list(r.short)
    if not r.crd and r.plural in ALL_CATEGORY:
        e["categories"] = ["all"]
    out = [e]
    for s in r.subresources:
        e = {"name": f"{r.plural}/{s}", "singularName": "", "namespaced": r.namespaced,
             "kind": r.kind if s == "status" else "Scale", "verbs": ["get", "patch", "update"]}
        if s == "scale":
            e.update(group="autoscaling", version="v1")
        out.append(e)
    if r.plural == "pods" and not r.group:
        # the eviction subresource, served in policy/v1: kubectl drain looks for it here and falls
        # back to deleting pods when it is not listed (k8s.io/kubectl pkg/drain CheckEvictionSupport)
        out.append({"name": "pods/eviction", "singularName": "", "namespaced": True, "group": "policy",
                    "version": "v1", "kind": "Eviction", "verbs": ["create"]})
    return out


def scale_of(obj: dict) -> dict:
    """The autoscaling/v1 Scale of a workload (the scale subresource: pkg/registry/apps/deployment/storage
    scaleFromDeployment, and the same for StatefulSets, ReplicaSets and a CRD's `.spec.replicas`):
    the object's identity, spec.replicas, status.replicas and the selector as a string."""
    meta = obj.get("metadata") or {}
    sel = ((obj.get("spec") or {}).get("selector") or {})
    parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for e in sel.get("matchExpressions") or []:
        op, vals = e.get("operator"), ",".join(sorted(e.get("values") or []))
        parts.append({"In": f"{e.get('key')} in ({vals})", "NotIn": f"{e.get('key')} notin ({vals})",
                      "Exists": f"{e.get('key')}", "DoesNotExist": f"!{e.get('key')}"}.get(op, ""))
    return {"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                         if k in meta},
            "spec": {"replicas": (obj.get("spec") or {}).get("replicas", 0)},
            "status": {"replicas": (obj.get("status") or {}).get("replicas", 0), "selector": ",".join(parts)}}


def from_scale(obj: dict, scale) -> dict:
    """The object with the replicas of a Scale written to it (nothing else of the Scale is taken)."""
    import copy
    out = copy.deepcopy(obj)
    if isinstance(scale, dict) and isinstance(scale.get("spec"), dict) and "replicas" in scale["spec"]:
        out.setdefault("spec", {})["replicas"] = scale["spec"]["replicas"]
    return out

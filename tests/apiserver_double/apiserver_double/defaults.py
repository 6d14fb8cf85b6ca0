"""Defaulting and normalisation the real API server applies to an object before it validates and
stores it (on create, update, patch and dry run), for the kinds the collection and its sample
components write. Read from (facts, not code):
- pkg/apis/core/v1/defaults.go (SetDefaults_PodSpec, _Container, _Probe, _Service, _ServicePort,
  _Secret, _ConfigMapVolumeSource, _SecretVolumeSource, _ObjectFieldSelector, _HostPathVolumeSource);
- pkg/apis/core/v1/conversion.go (Convert_v1_Secret_To_core_Secret: `stringData` is merged into
  `data`, overriding, and never stored);
- pkg/apis/apps/v1/defaults.go (SetDefaults_Deployment, _DaemonSet, _StatefulSet);
- staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go (a Quantity is stored in its
  canonical form: `1000m` -> `1`, `0.5` -> `500m`, `1024Mi` -> `1Gi`, `1000` -> `1k`; precision
  rounded up to nano).
"""
from __future__ import annotations

import base64
import re
from fractions import Fraction

_DEC = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BIN = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_QTY = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")


def canonical_quantity(q):
    """The canonical string of a Quantity (quantity.go CanonicalizeBytes), or q unchanged when it
    does not parse (validation reports it)."""
    if isinstance(q, bool) or not isinstance(q, (int, float, str)):
        return q
    m = _QTY.match(str(q).strip())
    if not m:
        return q
    num, suf = Fraction(m.group(1)), m.group(2) or ""
    if suf in _BIN:
        value, fmt = num * (2 ** _BIN[suf]), "bin"
    elif suf[:1] in ("e", "E"):
        value, fmt = num * Fraction(10) ** int(suf[1:]), "exp"
    else:
        value, fmt = num * Fraction(10) ** _DEC[suf], "dec"
    # rounded up (away from zero) to nano
    nanos = value * 10 ** 9
    if nanos.denominator != 1:
        up = -((-abs(nanos.numerator)) // nanos.denominator)
        nanos = Fraction(up if value >= 0 else -up)
    value = nanos / 10 ** 9
    sign = "-" if value < 0 else ""
    a = abs(value)
    if fmt == "bin" and (a < 1024 or a.denominator != 1):
        fmt = "dec"          # small or fractional binary quantities print in DecimalSI
    if a == 0:
        return "0"
    if fmt == "bin":
        n, exp = int(a), 0
        while n % 1024 == 0 and exp < 60:
            n //= 1024
            exp += 10
        suffix = {0: ""} | {v: k for k, v in _BIN.items()}
        return f"{sign}{n}{suffix[exp]}"
    # DecimalSI / DecimalExponent: the largest exponent (multiple of 3) leaving an integer mantissa
    exp = 18
    while exp > -9 and (a / Fraction(10) ** exp).denominator != 1:
        exp -= 3
    mant = int(a / Fraction(10) ** exp)
    if fmt == "exp":
        return f"{sign}{mant}" + (f"e{exp}" if exp else "")
    return f"{sign}{mant}{next(k for k, v in _DEC.items() if v == exp)}"


def _resources(c):
    for part in ("requests", "limits"):
        r = (c.get("resources") or {}).get(part)
        if isinstance(r, dict):
            for k, v in list(r.items()):
                r[k] = canonical_quantity(v)


def _probe(p):
    if isinstance(p, dict):
        p.setdefault("timeoutSeconds", 1)
        p.setdefault("periodSeconds", 10)
        p.setdefault("successThreshold", 1)
        p.setdefault("failureThreshold", 3)
        if isinstance(p.get("httpGet"), dict):
            p["httpGet"].setdefault("path", "/")
            p["httpGet"].setdefault("scheme", "HTTP")


def _container(c):
    if not isinstance(c, dict):
        return
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    image = c.get("image") or ""
    if "imagePullPolicy" not in c:
        # SetDefaults_Container: Always for the :latest tag or no tag (digests: IfNotPresent)
        tail = image.rsplit("/", 1)[-1]
        tag = tail.split(":", 1)[1] if ":" in tail and "@" not in tail else ("" if "@" not in tail else "digest")
        c["imagePullPolicy"] = "Always" if tag in ("", "latest") else "IfNotPresent"
    for p in c.get("ports") or []:
        if isinstance(p, dict):
            p.setdefault("protocol", "TCP")
    for e in c.get("env") or []:
        fr = ((e or {}).get("valueFrom") or {}).get("fieldRef") if isinstance(e, dict) else None
        if isinstance(fr, dict):
            fr.setdefault("apiVersion", "v1")
    for k in ("livenessProbe", "readinessProbe", "startupProbe"):
        _probe(c.get(k))
    _resources(c)


def pod_spec(ps):
    """SetDefaults_PodSpec and its parts."""
    if not isinstance(ps, dict):
        return
    ps.setdefault("dnsPolicy", "ClusterFirst")
    ps.setdefault("restartPolicy", "Always")
    ps.setdefault("terminationGracePeriodSeconds", 30)
    ps.setdefault("securityContext", {})
    ps.setdefault("schedulerName", "default-scheduler")
    if ps.get("hostNetwork"):
        # SetDefaults_Pod: with hostNetwork, container ports' hostPort defaults to containerPort
        for c in (ps.get("containers") or []) + (ps.get("initContainers") or []):
            for p in (c or {}).get("ports") or []:
                if isinstance(p, dict) and "containerPort" in p:
                    p.setdefault("hostPort", p["containerPort"])
    for c in (ps.get("containers") or []) + (ps.get("initContainers") or []):
        _container(c)
    for v in ps.get("volumes") or []:
        if not isinstance(v, dict):
            continue
        for src in ("configMap", "secret"):
            if isinstance(v.get(src), dict):
                v[src].setdefault("defaultMode", 0o644)
        if isinstance(v.get("hostPath"), dict):
            v["hostPath"].setdefault("type", "")
        if isinstance(v.get("emptyDir"), dict) and "sizeLimit" in v["emptyDir"]:
            v["emptyDir"]["sizeLimit"] = canonical_quantity(v["emptyDir"]["sizeLimit"])


def _template(spec):
    t = spec.get("template")
    if isinstance(t, dict):
        pod_spec(t.get("spec"))


def apply(obj: dict) -> dict:
    """Default obj in place (and return it) by its kind."""
    kind, spec = obj.get("kind"), obj.get("spec")
    if kind == "Secret":
        sd = obj.pop("stringData", None)
        if isinstance(sd, dict):
            data = obj.setdefault("data", {}) if isinstance(obj.get("data"), dict) or "data" not in obj \
                else obj["data"]
            if isinstance(data, dict):
                for k, v in sd.items():
                    data[k] = base64.b64encode(str(v).encode()).decode()
        obj.setdefault("type", "Opaque")
    elif kind == "Deployment" and isinstance(spec, dict):
        spec.setdefault("replicas", 1)
        st = spec.setdefault("strategy", {})
        if isinstance(st, dict):
            st.setdefault("type", "RollingUpdate")
            if st["type"] == "RollingUpdate":
                ru = st.setdefault("rollingUpdate", {})
                if isinstance(ru, dict):
                    ru.setdefault("maxUnavailable", "25%")
                    ru.setdefault("maxSurge", "25%")
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
        _template(spec)
    elif kind == "DaemonSet" and isinstance(spec, dict):
        us = spec.setdefault("updateStrategy", {})
        if isinstance(us, dict):
            us.setdefault("type", "RollingUpdate")
            if us["type"] == "RollingUpdate":
                ru = us.setdefault("rollingUpdate", {})
                if isinstance(ru, dict):
                    ru.setdefault("maxUnavailable", 1)
                    ru.setdefault("maxSurge", 0)
        spec.setdefault("revisionHistoryLimit", 10)
        _template(spec)
    elif kind == "StatefulSet" and isinstance(spec, dict):
        spec.setdefault("replicas", 1)
        spec.setdefault("podManagementPolicy", "OrderedReady")
        us = spec.setdefault("updateStrategy", {})
        if isinstance(us, dict):
            us.setdefault("type", "RollingUpdate")
            if us["type"] == "RollingUpdate":
                us.setdefault("rollingUpdate", {}).setdefault("partition", 0)
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain", "whenScaled": "Retain"})
        _template(spec)
    elif kind in ("ReplicaSet", "Job") and isinstance(spec, dict):
        _template(spec)
    elif kind == "Pod":
        pod_spec(spec)
    elif kind == "Service" and isinstance(spec, dict):
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        for p in spec.get("ports") or []:
            if isinstance(p, dict):
                p.setdefault("protocol", "TCP")
                if "port" in p:
                    p.setdefault("targetPort", p["port"])
        if spec["type"] in ("ClusterIP", "NodePort", "LoadBalancer"):
            spec.setdefault("internalTrafficPolicy", "Cluster")
        if spec["type"] in ("NodePort", "LoadBalancer"):
            spec.setdefault("externalTrafficPolicy", "Cluster")
    elif kind == "PersistentVolumeClaim" and isinstance(spec, dict):
        spec.setdefault("volumeMode", "Filesystem")
        _resources(spec)
    return obj

"""Field sets of kubeadm's configuration types, per API version, and the decoding kubeadm does.

Sources (facts read, not code copied):
- cmd/kubeadm/app/apis/kubeadm/v1beta3/types.go (stable through v1.30; the revision stored in
  the search index, 008b3652) and v1beta4/types.go of v1.31 (the revision with Timeouts'
  seven fields, EncryptionAlgorithm RSA-2048/3072/4096/ECDSA-P256, no
  apiServer.timeoutForControlPlane, no discovery.timeout); bootstrap tokens from
  cmd/kubeadm/app/apis/bootstraptoken/v1 (token, description, ttl, expires, usages, groups);
  taints and env vars are k8s.io/api core/v1 Taint (key, value, effect, timeAdded) and EnvVar
  (name, value, valueFrom).
- decoding: cmd/kubeadm/app/util/config/{initconfiguration,joinconfiguration}.go run
  strict.VerifyUnmarshalStrict on every document and, when loading a file for init/join, only
  log its error as a klog warning ("error unmarshaling configuration schema.GroupVersionKind{...}:
  strict decoding error: unknown field \"...\""), then decode leniently: unknown fields are
  dropped. A value of the wrong JSON type is a decoding error (encoding/json's
  "json: cannot unmarshal X into Go struct field S.path of type T").
- k8s.io/apimachinery field.Error formatting ("path: Invalid value: <value>: detail"; strings
  quoted, lists and maps in Go syntax) and utilerrors.Aggregate ("[a, b]" for several errors).
"""
import copy
import json
import re

S, I, B, D = "string", "int32", "bool", "duration"
MAP_SS, MAP_SB = "map[string]string", "map[string]bool"
ANY = "any"


def L(item):
    return ("list", item)


def struct(_name, **fields):
    return {"__struct__": _name, **fields}


TYPEMETA = {"apiVersion": S, "kind": S}
TAINT = struct("Taint", key=S, value=S, effect=S, timeAdded=S)
BOOTSTRAP_TOKEN = struct("BootstrapToken", token=S, description=S, ttl=D, expires=S, usages=L(S), groups=L(S))
API_ENDPOINT = struct("APIEndpoint", advertiseAddress=S, bindPort=I)
PATCHES = struct("Patches", directory=S)
HOST_PATH = struct("HostPathMount", name=S, hostPath=S, mountPath=S, readOnly=B, pathType=S)
IMAGE_META = {"imageRepository": S, "imageTag": S}
NETWORKING = struct("Networking", serviceSubnet=S, podSubnet=S, dnsDomain=S)
EXTERNAL_ETCD = struct("ExternalEtcd", endpoints=L(S), caFile=S, certFile=S, keyFile=S)
BT_DISCOVERY = struct("BootstrapTokenDiscovery", token=S, apiServerEndpoint=S, caCertHashes=L(S),
                      unsafeSkipCAVerification=B)
FILE_DISCOVERY = struct("FileDiscovery", kubeConfigPath=S)
JOIN_CONTROL_PLANE = struct("JoinControlPlane", localAPIEndpoint=API_ENDPOINT, certificateKey=S)


def _v1beta3():
    node_reg = struct("NodeRegistrationOptions", name=S, criSocket=S, taints=L(TAINT), kubeletExtraArgs=MAP_SS,
                      ignorePreflightErrors=L(S), imagePullPolicy=S)
    component = {"extraArgs": MAP_SS, "extraVolumes": L(HOST_PATH)}
    etcd = struct("Etcd", local=struct("LocalEtcd", **IMAGE_META, dataDir=S, extraArgs=MAP_SS, serverCertSANs=L(S),
                                       peerCertSANs=L(S)), external=EXTERNAL_ETCD)
    return {
        "InitConfiguration": struct("InitConfiguration", **TYPEMETA, bootstrapTokens=L(BOOTSTRAP_TOKEN),
                                    nodeRegistration=node_reg, localAPIEndpoint=API_ENDPOINT, certificateKey=S,
                                    skipPhases=L(S), patches=PATCHES),
        "ClusterConfiguration": struct(
            "ClusterConfiguration", **TYPEMETA, etcd=etcd, networking=NETWORKING, kubernetesVersion=S,
            controlPlaneEndpoint=S,
            apiServer=struct("APIServer", **component, certSANs=L(S), timeoutForControlPlane=D),
            controllerManager=struct("ControlPlaneComponent", **component),
            scheduler=struct("ControlPlaneComponent", **component),
            dns=struct("DNS", **IMAGE_META), certificatesDir=S, imageRepository=S, featureGates=MAP_SB,
            clusterName=S),
        "JoinConfiguration": struct(
            "JoinConfiguration", **TYPEMETA, nodeRegistration=node_reg, caCertPath=S,
            discovery=struct("Discovery", bootstrapToken=BT_DISCOVERY, file=FILE_DISCOVERY, tlsBootstrapToken=S,
                             timeout=D),
            controlPlane=JOIN_CONTROL_PLANE, skipPhases=L(S), patches=PATCHES),
    }


def _v1beta4():
    arg = struct("Arg", name=S, value=S)
    env = struct("EnvVar", name=S, value=S, valueFrom=ANY)
    node_reg = struct("NodeRegistrationOptions", name=S, criSocket=S, taints=L(TAINT), kubeletExtraArgs=L(arg),
                      ignorePreflightErrors=L(S), imagePullPolicy=S, imagePullSerial=B)
    component = {"extraArgs": L(arg), "extraVolumes": L(HOST_PATH), "extraEnvs": L(env)}
    timeouts = struct("Timeouts", controlPlaneComponentHealthCheck=D, kubeletHealthCheck=D, kubernetesAPICall=D,
                      etcdAPICall=D, tlsBootstrap=D, discovery=D, upgradeManifests=D)
    etcd = struct("Etcd", local=struct("LocalEtcd", **IMAGE_META, dataDir=S, extraArgs=L(arg), extraEnvs=L(env),
                                       serverCertSANs=L(S), peerCertSANs=L(S)), external=EXTERNAL_ETCD)
    return {
        "InitConfiguration": struct("InitConfiguration", **TYPEMETA, bootstrapTokens=L(BOOTSTRAP_TOKEN), dryRun=B,
                                    nodeRegistration=node_reg, localAPIEndpoint=API_ENDPOINT, certificateKey=S,
                                    skipPhases=L(S), patches=PATCHES, timeouts=timeouts),
        "ClusterConfiguration": struct(
            "ClusterConfiguration", **TYPEMETA, etcd=etcd, networking=NETWORKING, kubernetesVersion=S,
            controlPlaneEndpoint=S, apiServer=struct("APIServer", **component, certSANs=L(S)),
            controllerManager=struct("ControlPlaneComponent", **component),
            scheduler=struct("ControlPlaneComponent", **component),
            dns=struct("DNS", **IMAGE_META, disabled=B), proxy=struct("Proxy", disabled=B), certificatesDir=S,
            imageRepository=S, featureGates=MAP_SB, clusterName=S, encryptionAlgorithm=S,
            certificateValidityPeriod=D, caCertificateValidityPeriod=D),
        "JoinConfiguration": struct(
            "JoinConfiguration", **TYPEMETA, dryRun=B, nodeRegistration=node_reg, caCertPath=S,
            discovery=struct("Discovery", bootstrapToken=BT_DISCOVERY, file=FILE_DISCOVERY, tlsBootstrapToken=S),
            controlPlane=JOIN_CONTROL_PLANE, skipPhases=L(S), patches=PATCHES, timeouts=timeouts),
    }


TYPES = {"kubeadm.k8s.io/v1beta3": _v1beta3(), "kubeadm.k8s.io/v1beta4": _v1beta4()}
# bootstrapTokenDiscovery.token, bootstrapTokens[].token and the discovery file path are required
# json tags without omitempty; kubeadm does not fail on their absence at decoding time.

# Go's time.ParseDuration: an optional sign, then "0" or number-unit pairs ("24h0m0s", "1.5h", "300ms")
_DURATION = re.compile(r"^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$|^0$")
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}


def _json_kind(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


class DecodeError(Exception):
    pass


def duration_seconds(text):
    """Seconds of a Go duration (the configuration's durations, kubeadm's "--ttl"); DecodeError with
    Go's 'time: invalid duration "<text>"' for anything else."""
    text = str(text)
    if not _DURATION.match(text):
        raise DecodeError(f'time: invalid duration "{text}"')
    seconds = sum((float(n) * _UNIT_SECONDS[u] for n, u in _DURATION_PART.findall(text)), 0.0)
    return -seconds if text.startswith("-") else seconds


def _type_name(schema):
    if isinstance(schema, tuple):
        return "[]" + _type_name(schema[1])
    if isinstance(schema, dict):
        return "v1beta.%s" % schema["__struct__"]
    return {D: "v1.Duration", I: "int32"}.get(schema, schema)


def decode(value, schema, path, struct_name, unknown):
    """Check value against schema; return it without unknown fields; collect their paths in unknown."""
    where = f"Go struct field {struct_name}.{path}" if path else "Go value"

    def mismatch():
        return DecodeError(f"json: cannot unmarshal {_json_kind(value)} into {where} of type {_type_name(schema)}")

    if value is None or schema == ANY:
        return value
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            raise mismatch()
        out = {}
        for k, v in value.items():
            sub = f"{path}.{k}" if path else str(k)
            if k not in schema or k == "__struct__":
                unknown.append(sub)
                continue
            out[k] = decode(v, schema[k], sub, schema["__struct__"], unknown)
        return out
    if isinstance(schema, tuple):
        if not isinstance(value, list):
            raise mismatch()
        return [decode(v, schema[1], f"{path}[{i}]", struct_name, unknown) for i, v in enumerate(value)]
    if schema in (S, D):
        if not isinstance(value, str):
            raise mismatch()
        if schema == D:
            duration_seconds(value)
        return value
    if schema == I:
        if isinstance(value, bool) or not isinstance(value, int):
            raise mismatch()
        return value
    if schema == B:
        if not isinstance(value, bool):
            raise mismatch()
        return value
    if schema in (MAP_SS, MAP_SB):
        if not isinstance(value, dict):
            raise mismatch()
        want = str if schema == MAP_SS else bool
        for k, v in value.items():
            if not isinstance(v, want) or (want is str and isinstance(v, bool)):
                raise DecodeError(f"json: cannot unmarshal {_json_kind(v)} into {where} of type "
                                  f"{'string' if want is str else 'bool'}")
        return value
    raise AssertionError(schema)


def strict_warning(api, kind, unknown):
    """The text kubeadm's strict verification logs (a warning for init/join) for unknown fields."""
    group, dummy, version = api.partition("/")
    fields = ", ".join(f'unknown field "{u}"' for u in unknown)
    return (f'error unmarshaling configuration schema.GroupVersionKind{{Group:"{group}", Version:"{version}", '
            f'Kind:"{kind}"}}: strict decoding error: {fields}')


# ---------------------------------------------------------------- apimachinery field errors
def go_value(v):
    """fmt %#v / %q as field.Error prints a bad value."""
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, list):
        return "[]string{" + ", ".join(json.dumps(str(x)) for x in v) + "}"
    if isinstance(v, dict):
        kind = "bool" if all(isinstance(x, bool) for x in v.values()) else "string"
        return f"map[string]{kind}{{" + ", ".join(f"{json.dumps(k)}:{go_value(v[k])}" for k in sorted(v)) + "}"
    return json.dumps(v)


def invalid(path, value, detail):
    return f"{path}: Invalid value: {go_value(value)}: {detail}"


def aggregate(errs):
    """utilerrors.NewAggregate(errs).Error(): one message as is, several as "[a, b]" (duplicates once)."""
    seen = list(dict.fromkeys(errs))
    return seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"


# ---------------------------------------------------------------- reset (its own block)
# v1beta4's ResetConfiguration (cmd/kubeadm/app/apis/kubeadm/v1beta4/types.go of v1.31: cleanupTmpDir,
# certificatesDir, criSocket, dryRun, force, ignorePreflightErrors, skipPhases, unmountFlags); v1beta3
# has no such kind.
TYPES["kubeadm.k8s.io/v1beta4"]["ResetConfiguration"] = struct(
    "ResetConfiguration", **TYPEMETA, cleanupTmpDir=B, certificatesDir=S, criSocket=S, dryRun=B, force=B,
    ignorePreflightErrors=L(S), skipPhases=L(S), unmountFlags=L(S))
# ---------------------------------------------------------------- end of reset

# ---------------------------------------------------------------- v1.35 (its own block)
# kubeadm v1.35 (#134890) adds ClusterConfiguration.etcd.external.httpEndpoints (Go HTTPEndpoints []string,
# optional: the etcd HTTP endpoints for /metrics and /health) to v1beta4; the API version is not bumped, so
# the field set depends on the release the double acts as (cli_v1_35.ETCD_HTTP_ENDPOINTS).
_V1BETA4_HTTP_ENDPOINTS = copy.deepcopy(TYPES["kubeadm.k8s.io/v1beta4"])
_V1BETA4_HTTP_ENDPOINTS["ClusterConfiguration"]["etcd"]["external"]["httpEndpoints"] = L(S)


def types_for(api, etcd_http_endpoints=False):
    """The kinds and field sets of a kubeadm API version for the release the double acts as."""
    if etcd_http_endpoints and api == "kubeadm.k8s.io/v1beta4":
        return _V1BETA4_HTTP_ENDPOINTS
    return TYPES.get(api, {})
# ---------------------------------------------------------------- end of v1.35

"""Configuration loading and validation, shared by init, join and reset: the documents decoded against
the release's types (kubeadm_types: apiVersion/kind, an unknown field warned about and dropped, the wrong
JSON type refused; util/config: a CRI socket without scheme prefixed with a warning, a kind of another
group ignored), validation.go's checks (ValidateNodeRegistrationOptions, ValidateBootstrapTokens,
ValidateCertSANs, ValidateFeatureGates, ValidateEtcd, ValidateDiscovery, ...), ignorePreflightErrors
merged with the flag, and what the phases read from a configuration: the node (node_ctx) and the
kubeadm feature gates (gate_on, local_mode)."""
import ipaddress
import json
import os
import re

import yaml

import common
from common import CLI, STACK_HINT, DataFail, out, warn
import kubeadm_types as T


COMPONENT = {"KubeletConfiguration": "kubelet.config.k8s.io/v1beta1",
             "KubeProxyConfiguration": "kubeproxy.config.k8s.io/v1alpha1"}
invalid = T.invalid


def load_config(path, want):
    try:
        text = open(path).read()
    except OSError as e:
        raise DataFail(f"unable to read config from \"{path}\" : {e}")
    docs = {}
    for raw in re.split(r"^---\s*$", text, flags=re.M):
        try:
            doc = yaml.safe_load(raw)
        except yaml.YAMLError as e:
            raise DataFail(f"error converting YAML to JSON: {e}")
        if doc is None:
            continue
        if not isinstance(doc, dict) or "kind" not in doc or "apiVersion" not in doc:
            raise DataFail("Object 'Kind' is missing in '" + raw.strip()[:80] + "'")
        kind, api = doc["kind"], doc["apiVersion"]
        if api.startswith("kubeadm.k8s.io/"):
            types = T.types_for(api, getattr(CLI, "ETCD_HTTP_ENDPOINTS", False)) if api in CLI.KUBEADM_APIS else {}
            if kind not in types:
                raise DataFail(f'no kind "{kind}" is registered for version "{api}" in scheme '
                               '"k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/scheme/scheme.go:31"')
            if api in CLI.DEPRECATED_APIS:
                warn(f'your configuration file uses a deprecated API spec: "{api}" (kind: "{kind}"). Please use '
                     "'kubeadm config migrate --old-config old-config-file --new-config new-config-file', which "
                     "will write the new, similar spec using a newer API version.")
            unknown = []
            try:
                doc = T.decode(doc, types[kind], "", kind, unknown)
            except T.DecodeError as e:
                raise DataFail(str(e))
            if unknown:  # kubeadm init/join only warn, and drop the fields
                warn(T.strict_warning(api, kind, unknown))
        elif kind in COMPONENT:
            if api != COMPONENT[kind]:
                raise DataFail(f'no kind "{kind}" is registered for version "{api}"')
        else:
            out(f"[config] WARNING: Ignored YAML document with GroupVersionKind {api}, Kind={kind}")
            continue
        docs[kind] = doc
    if want == "init" and "InitConfiguration" not in docs and "ClusterConfiguration" not in docs:
        raise DataFail("no InitConfiguration or ClusterConfiguration kind was found in the YAML file")
    if want == "join" and "JoinConfiguration" not in docs:
        raise DataFail("no JoinConfiguration kind was found in the YAML file")
    for d in (docs.get("InitConfiguration"), docs.get("JoinConfiguration")):
        if d:
            sock = (d.get("nodeRegistration") or {}).get("criSocket", "")
            if sock and not sock.startswith("unix"):
                # util/config: dynamic defaulting prepends the scheme and only warns
                warn('Usage of CRI endpoints without URL scheme is deprecated and can cause kubelet errors in the '
                     f'future. Automatically prepending scheme "unix" to the "criSocket" with value "{sock}". '
                     "Please update your configuration!")
                d["nodeRegistration"]["criSocket"] = "unix://" + sock
    errs = validate(docs)
    if errs:
        raise DataFail(T.aggregate(errs) + STACK_HINT)
    return docs


def ignore_preflight_errors(flag_values, docs):
    """validation.ValidateIgnorePreflightErrors, run by every init/join phase's data initialization:
    flag and configuration values merged, lower-cased; 'all' may not come with anything else."""
    reg = ((docs.get("InitConfiguration") or docs.get("JoinConfiguration") or {}).get("nodeRegistration") or {})
    items = {x.lower() for x in reg.get("ignorePreflightErrors") or []}
    items |= {x.lower() for v in flag_values for x in v.split(",") if x}
    if "all" in items and len(items) > 1:
        raise DataFail(invalid("ignore-preflight-errors", ",".join(sorted(items)),
                               "don't specify individual checks if 'all' is used") + STACK_HINT)
    return items


def ip_ok(v):
    try:
        ipaddress.ip_address(v)
        return True
    except ValueError:
        return False


def _subnet(path, v, errs):
    try:
        net = ipaddress.ip_network(v, strict=False)
    except ValueError:
        errs.append(invalid(path, v, "couldn't parse subnet"))
        return None
    return net


DNS1123_SUB = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1123_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
               "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
               "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
WILDCARD_MSG = ("a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must "
                "consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character "
                "(e.g. '*.example.com', regex used for validation is "
                "'\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


TOKEN_RE = re.compile(r"^[a-z0-9]{6}\.[a-z0-9]{16}$")


# k8s.io/cluster-bootstrap token/api KnownTokenUsages and token/util BootstrapGroupPattern
TOKEN_USAGES = ("signing", "authentication")
GROUP_RE = re.compile(r"^system:bootstrappers(:[a-z0-9:-]{0,255}[a-z0-9])?$")


def validate_cert_sans(path, sans, errs):
    """validation.ValidateCertSANs: the path is the list's, without an index."""
    for san in sans or []:
        if not DNS1123_SUB.match(san) and not (san.startswith("*.") and DNS1123_SUB.match(san[2:])) \
                and not ip_ok(san):
            errs.append(invalid(path, san, "altname is not a valid IP address, DNS label or a DNS label with "
                                           f"subdomain wildcards: {DNS1123_MSG}; {WILDCARD_MSG}"))


def validate_node_registration(path, reg, errs):
    if reg.get("imagePullPolicy", "") not in ("", "Always", "IfNotPresent", "Never"):
        errs.append(invalid(f"{path}.imagePullPolicy", reg["imagePullPolicy"], "invalid pull policy"))
    name = reg.get("name", "")
    if name and (len(name) > 253 or not DNS1123_SUB.match(name)):
        errs.append(invalid(f"{path}.name", name, DNS1123_MSG))
    args = reg.get("kubeletExtraArgs")
    if isinstance(args, list):
        validate_extra_args(f"{path}.kubeletExtraArgs", args, errs)


def validate_extra_args(path, args, errs):
    """validation.ValidateExtraArgs (v1beta4 lists): every argument needs a name."""
    for i, a in enumerate(args or []):
        if isinstance(args, list) and not a.get("name"):
            errs.append(invalid(path, f"index {i}", "argument has no name"))


def validate_bootstrap_tokens(tokens, errs):
    """validation.ValidateBootstrapTokens: token format, usages, groups (paths bootstrapTokens.<i>.x)."""
    for i, t in enumerate(tokens or []):
        p = f"bootstrapTokens.{i}"
        if t.get("token") and not TOKEN_RE.match(t["token"]):
            errs.append(invalid(f"{p}.token", t["token"], "the bootstrap token is invalid"))
        usages = t.get("usages") or []
        bad = sorted(set(u for u in usages if u not in TOKEN_USAGES))
        if bad:
            errs.append(invalid(f"{p}.usages", usages, f"invalid bootstrap token usage string: {','.join(bad)}, "
                                                       f"valid usage options: {','.join(TOKEN_USAGES)}"))
        groups = t.get("groups") or []
        if groups and "authentication" not in usages:
            errs.append(invalid(f"{p}.groups", groups,
                                'token groups cannot be specified unless --usages includes "authentication"'))
        for g in groups:
            if not GROUP_RE.match(g):
                errs.append(invalid(f"{p}.groups", groups,
                                    f"bootstrap group {json.dumps(g)} is invalid (must match {GROUP_RE.pattern})"))
        if t.get("ttl") and t.get("expires"):
            errs.append(invalid(p, "", "the BootstrapToken .TTL and .Expires fields are mutually exclusive"))


def validate_certificate_key(path, key, errs):
    """validation.ValidateCertificateKey: hex (Go's encoding/hex errors), 32 bytes."""
    if not key:
        return
    bad = next((c for c in key if c not in "0123456789abcdefABCDEF"), None)
    if bad is not None:
        errs.append(invalid(path, key, f"certificate key decoding error: encoding/hex: invalid byte: "
                                       f"U+{ord(bad):04X} {json.dumps(bad)[1:-1]!r}".replace('"', "'")))
    elif len(key) % 2:
        errs.append(invalid(path, key, "certificate key decoding error: encoding/hex: odd length hex string"))
    elif len(key) != 64:
        errs.append(invalid(path, key, f"invalid certificate key size {len(key) // 2}, the key must be an AES key "
                                       "of size 32"))


def validate(docs):
    """cmd/kubeadm/app/apis/kubeadm/validation/validation.go, the checks the double mirrors."""
    errs = []
    init, cluster, join = docs.get("InitConfiguration"), docs.get("ClusterConfiguration"), docs.get("JoinConfiguration")
    for d in filter(None, (init, join)):
        validate_node_registration("nodeRegistration", d.get("nodeRegistration") or {}, errs)
    if init:
        validate_bootstrap_tokens(init.get("bootstrapTokens"), errs)
        ep = init.get("localAPIEndpoint") or {}
        if ep.get("advertiseAddress") and not ip_ok(ep["advertiseAddress"]):
            errs.append(invalid("localAPIEndpoint.advertiseAddress", ep["advertiseAddress"], "ip address is not valid"))
        port = ep.get("bindPort", 6443)
        if not 0 < port < 65536:
            errs.append(invalid("localAPIEndpoint.bindPort", port, "port number is not valid"))
        validate_certificate_key("certificateKey", init.get("certificateKey"), errs)
    if cluster:
        net = cluster.get("networking") or {}
        svc = _subnet("networking.serviceSubnet", net.get("serviceSubnet", "10.96.0.0/12"), errs)
        pod = _subnet("networking.podSubnet", net["podSubnet"], errs) if net.get("podSubnet") else None
        if svc and svc.version == 4 and svc.prefixlen < 12:
            errs.append(invalid("networking.serviceSubnet", str(svc), "specified service subnet is too large; "
                                "for 32-bit addresses, the mask must be >= 12"))
        if svc and pod and svc.overlaps(pod):
            errs.append(invalid("networking.podSubnet", str(pod), "pod subnet overlaps with service subnet"))
        ver = str(cluster.get("kubernetesVersion", ""))
        m = re.match(r"^v?(\d+)\.(\d+)\.(\d+)$", ver)
        if not m:
            errs.append(f'couldn\'t parse Kubernetes version "{ver}"')
        elif (int(m.group(1)), int(m.group(2))) < CLI.MIN_CONTROL_PLANE:
            errs.append(f"this version of kubeadm only supports deploying clusters with the control plane version "
                        f">= {CLI.MIN_CONTROL_PLANE[0]}.{CLI.MIN_CONTROL_PLANE[1]}.0. Current version: {ver}")
        cpe = cluster.get("controlPlaneEndpoint", "")
        if cpe and not re.match(r"^[A-Za-z0-9.\-]+(:\d{1,5})?$|^\[[0-9a-fA-F:]+\](:\d{1,5})?$", cpe):
            errs.append(invalid("controlPlaneEndpoint", cpe, "endpoint is not valid"))
        validate_cert_sans("apiServer.certSANs", (cluster.get("apiServer") or {}).get("certSANs"), errs)
        for comp in ("apiServer", "controllerManager", "scheduler"):
            validate_extra_args(f"{comp}.extraArgs", (cluster.get(comp) or {}).get("extraArgs"), errs)
        gates = cluster.get("featureGates") or {}
        for gate in sorted(gates):
            if gate not in CLI.FEATURE_GATES:
                errs.append(invalid("featureGates", gates, f"{gate} is not a valid feature name."))
        algo = cluster.get("encryptionAlgorithm")
        if algo is not None and algo not in ("ECDSA-P256", "RSA-2048", "RSA-3072", "RSA-4096"):
            errs.append(invalid("encryptionAlgorithm", algo, f'Invalid encryption algorithm "{algo}". Must be one of '
                                                             "[ECDSA-P256 RSA-2048 RSA-3072 RSA-4096]"))
        etcd = cluster.get("etcd") or {}
        if etcd.get("local") and etcd.get("external"):
            errs.append(invalid("etcd", "", ".Etcd.Local and .Etcd.External are mutually exclusive"))
        elif etcd.get("external"):
            ext = etcd["external"]
            tls = any(ext.get(k) for k in ("caFile", "certFile", "keyFile"))
            if bool(ext.get("certFile")) != bool(ext.get("keyFile")):
                errs.append(invalid("etcd.external", "", "either both or none of .Etcd.External.CertFile and "
                                                         ".Etcd.External.KeyFile must be set"))
            if ext.get("certFile") and ext.get("keyFile") and not ext.get("caFile"):
                errs.append(invalid("etcd.external", "", "setting .Etcd.External.CertFile and .Etcd.External.KeyFile "
                                                         "requires .Etcd.External.CAFile"))
            for e in ext.get("endpoints") or []:
                scheme = e.split("://", 1)[0] if "://" in e else ""
                if tls and scheme != "https":
                    errs.append(invalid("etcd.external.endpoints", e, "the URL must be using the HTTPS scheme"))
                if not scheme:
                    errs.append(invalid("etcd.external.endpoints", e, "the URL without scheme is not allowed"))
            for k in ("caFile", "certFile", "keyFile"):
                if ext.get(k) and not ext[k].startswith("/"):
                    errs.append(invalid(f"etcd.external.{k}", ext[k], "path is not absolute"))
        elif etcd.get("local"):
            local = etcd["local"]
            validate_cert_sans("etcd.local.serverCertSANs", local.get("serverCertSANs"), errs)
            validate_cert_sans("etcd.local.peerCertSANs", local.get("peerCertSANs"), errs)
            validate_extra_args("etcd.local.extraArgs", local.get("extraArgs"), errs)
    kubelet = docs.get("KubeletConfiguration")
    if kubelet:
        if not isinstance(kubelet.get("maxPods", 110), int) or kubelet.get("maxPods", 110) <= 0:
            errs.append(f"invalid configuration: maxPods ({kubelet.get('maxPods')}) must not be a negative number")
        if kubelet.get("cgroupDriver", "systemd") not in ("systemd", "cgroupfs"):
            errs.append(f"invalid configuration: cgroupDriver ({kubelet['cgroupDriver']}) must be systemd or cgroupfs")
        for ip in kubelet.get("clusterDNS") or []:
            if not ip_ok(ip):
                errs.append(invalid("KubeletConfiguration.clusterDNS", ip, "must be a valid IP address"))
    proxy = docs.get("KubeProxyConfiguration")
    if proxy:
        if proxy.get("mode", "") not in ("", "iptables", "ipvs", "nftables"):
            errs.append(invalid("KubeProxyConfiguration.Mode", proxy["mode"], "must be iptables,ipvs,nftables or blank"))
        for i, c in enumerate((proxy.get("ipvs") or {}).get("excludeCIDRs") or []):
            try:
                ipaddress.ip_network(c, strict=False)
            except ValueError:
                errs.append(invalid(f"KubeProxyConfiguration.IPVS.ExcludeCIDRs[{i}]", c, "must be a valid CIDR"))
    if join:
        disc = join.get("discovery") or {}
        bt = disc.get("bootstrapToken")
        if not bt and not disc.get("file"):
            errs.append(invalid("discovery", "", "bootstrapToken or file must be set"))
        if bt and disc.get("file"):
            errs.append(invalid("discovery", "", "bootstrapToken and file cannot both be set"))
        if bt:
            if not bt.get("apiServerEndpoint"):
                errs.append("discovery.bootstrapToken: Required value: APIServerEndpoint is not set")
            if not bt.get("caCertHashes") and not bt.get("unsafeSkipCAVerification"):
                errs.append(invalid("discovery.bootstrapToken.caCertHashes", "", "using token-based discovery without "
                                    "caCertHashes can be unsafe. Set unsafeSkipCAVerification as true in your kubeadm "
                                    "config file or pass --discovery-token-unsafe-skip-ca-verification flag to continue"))
            if not TOKEN_RE.match(str(bt.get("token", ""))):
                errs.append(invalid("discovery.bootstrapToken.token", str(bt.get("token", "")),
                                    "the bootstrap token is invalid"))
            tls = disc.get("tlsBootstrapToken", bt.get("token", ""))
            if not TOKEN_RE.match(str(tls)):
                errs.append(invalid("discovery.tlsBootstrapToken", str(tls), "the bootstrap token is invalid"))
        cp = join.get("controlPlane") or {}
        validate_certificate_key("controlPlane.certificateKey", cp.get("certificateKey"), errs)
        ep = cp.get("localAPIEndpoint") or {}
        if ep.get("advertiseAddress") and not ip_ok(ep["advertiseAddress"]):
            errs.append(invalid("controlPlane.localAPIEndpoint.advertiseAddress", ep["advertiseAddress"],
                                "ip address is not valid"))
        ca = join.get("caCertPath", f"{common.PKI}/ca.crt")
        if not ca.startswith("/") or not ca.endswith(".crt"):
            errs.append(invalid("caCertPath", ca, "the ca certificate path must be an absolute path"))
    return errs


def node_ctx(docs):
    init, join = docs.get("InitConfiguration"), docs.get("JoinConfiguration")
    src = init or join
    reg = src.get("nodeRegistration") or {}
    ep = (init or {}).get("localAPIEndpoint") or ((join or {}).get("controlPlane") or {}).get("localAPIEndpoint") or {}
    return {"name": reg.get("name") or os.uname().nodename, "address": ep.get("advertiseAddress", "127.0.0.1"),
            "port": ep.get("bindPort", 6443), "cri": reg.get("criSocket", "unix:///var/run/containerd/containerd.sock"),
            "kubelet_args": reg.get("kubeletExtraArgs") or {}}


def gate_on(cluster, name):
    """A kubeadm feature gate as the ClusterConfiguration sets it, else this release's default
    (features.InitFeatureGates: cli_v1_<minor>.GATE_DEFAULTS lists the gates on by default); a GA gate
    locked to its default (cli_v1_35.LOCKED_GATES) is its default whatever the configuration says."""
    gates = cluster.get("featureGates") or {}
    default = getattr(CLI, "GATE_DEFAULTS", {}).get(name, False)
    if name in getattr(CLI, "LOCKED_GATES", ()):
        return bool(default)
    return bool(gates.get(name, default))


def local_mode(cluster):
    """ControlPlaneKubeletLocalMode: a control-plane node's kubelet talks to its own API server. From v1.36
    (#135773, cli_v1_36.LOCAL_MODE_ALWAYS) no gate any more: kubeadm's only behaviour."""
    if getattr(CLI, "LOCAL_MODE_ALWAYS", False):
        return True
    return gate_on(cluster, "ControlPlaneKubeletLocalMode")

"""Talking to "the cluster" (the kube-apiserver double on the hosts, over HTTPS): a GET with a
bootstrap token or none (api_get), with a kubeconfig's client certificate (cluster_get), the API server's
readiness, and token discovery (cluster-info from the endpoint, the CA pinned by its hash, the
kubeadm-config and kubelet-config ConfigMaps read with the token)."""
import base64
import json
import os
import ssl
import tempfile
import time
import urllib.request

import yaml

import certs
import common
from common import Fail, out


def tls_context(ca_pem=None):
    c = ssl.create_default_context()
    if ca_pem is None:
        c.check_hostname, c.verify_mode = False, ssl.CERT_NONE
    else:
        c.load_verify_locations(cadata=ca_pem.decode() if isinstance(ca_pem, bytes) else ca_pem)
    return c


def api_get(server, path, ca_pem=None, token=None, what="the cluster"):
    req = urllib.request.Request(server.rstrip("/") + path)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, context=tls_context(ca_pem), timeout=10) as r:
            body = r.read()
            return json.loads(body) if r.headers.get("Content-Type") == "application/json" else body.decode()
    except urllib.error.HTTPError as e:
        raise Fail(f"unable to fetch {what}: Get \"{server}{path}\": {e.code} {e.reason}")
    except (urllib.error.URLError, OSError) as e:
        raise Fail(f"unable to fetch {what}: Get \"{server}{path}\": {getattr(e, 'reason', e)}")


def admin_server(kubeconfig):
    try:
        cfg = yaml.safe_load(open(kubeconfig))
    except OSError:
        raise Fail(f"couldn't read kubeconfig file \"{kubeconfig}\": no such file or directory")
    cl = cfg["clusters"][0]["cluster"]
    return cl["server"], base64.b64decode(cl["certificate-authority-data"])


# kubeadm's writes to the API (apiclient CreateOrUpdate, CreateOrMutate, CreateOrRetain, PatchNode, and
# the bootstrap tokens' UpdateOrCreateTokens) are polled: a failed call is made again every
# KubernetesAPICallRetryInterval (constants.go: 500 ms) until the KubernetesAPICall timeout
# (InitConfiguration timeouts.kubernetesAPICall, v1beta4; default 1m0s), then the last error is the
# command's. cmd/kubeadm/app/util/apiclient/idempotency.go, phases/bootstraptoken/node/token.go.
API_CALL_RETRY_INTERVAL = 0.5
API_CALL_TIMEOUT = "1m0s"


def api_call_timeout(docs=None):
    """The KubernetesAPICall timeout in seconds: the InitConfiguration's timeouts.kubernetesAPICall, or
    kubeadm's default."""
    init = (docs or {}).get("InitConfiguration") or {}
    return common.go_duration((init.get("timeouts") or {}).get("kubernetesAPICall") or API_CALL_TIMEOUT)


def retried(call, timeout, interval=API_CALL_RETRY_INTERVAL):
    """call() again every interval while it fails, until timeout seconds have passed
    (wait.PollUntilContextTimeout, immediate first try); the last failure is raised."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return call()
        except Fail:
            if time.monotonic() + interval >= deadline:
                raise
            time.sleep(interval)


def require_cluster(flags_, docs=None):
    """The API call of a phase that writes to the cluster (the double keeps what it writes in its state
    file: the API server's readiness stands for the write), polled as kubeadm polls its writes."""
    kubeconfig = (flags_.get("kubeconfig") or [f"{common.K8S}/admin.conf"])[-1]
    server, ca = admin_server(kubeconfig)
    retried(lambda: api_get(server, "/readyz", ca, what="the API server's readiness"), api_call_timeout(docs))


# kubeadm's discovery asks for cluster-info again every DiscoveryRetryInterval until the discovery
# timeout (cmd/kubeadm/app/discovery/token/token.go getClusterInfo: wait.PollUntilContextTimeout, a
# failed GET logged at V(1) and retried; constants.go DiscoveryRetryInterval = 5 s, the timeout
# JoinConfiguration timeouts.discovery (v1beta4; discovery.timeout in v1beta3), default 5m0s), so an
# endpoint that does not answer for a moment (a VIP moving) is waited out, not an error
DISCOVERY_RETRY_INTERVAL = 5.0
DISCOVERY_TIMEOUT = "5m0s"


def cluster_info(server, join):
    timeout = common.go_duration((join.get("timeouts") or {}).get("discovery")
                                 or (join.get("discovery") or {}).get("timeout") or DISCOVERY_TIMEOUT)
    return retried(lambda: api_get(server, "/api/v1/namespaces/kube-public/configmaps/cluster-info", what="cluster-info"),
                   timeout, DISCOVERY_RETRY_INTERVAL)


def discover(join):
    """Token discovery: cluster-info from the endpoint (asked again until the discovery timeout, as
    kubeadm does), CA pinned by hash, configs read with the token."""
    bt = join["discovery"]["bootstrapToken"]
    server = "https://" + bt["apiServerEndpoint"]
    info = cluster_info(server, join)
    kc = yaml.safe_load(info["data"]["kubeconfig"])
    ca_pem = base64.b64decode(kc["clusters"][0]["cluster"]["certificate-authority-data"])
    if not bt.get("unsafeSkipCAVerification"):
        actual = certs.ca_hash(ca_pem)
        if actual not in (bt.get("caCertHashes") or []):
            raise Fail(f"cluster CA found in cluster-info ConfigMap is invalid: none of the public keys \"{actual}\" "
                       "are pinned")
    out(f"[discovery] Cluster info signature and contents are valid and TLS certificate validates against pinned "
        f"roots, will use API Server \"{bt['apiServerEndpoint']}\"")
    token = bt["token"]
    cm = api_get(server, "/api/v1/namespaces/kube-system/configmaps/kubeadm-config", ca_pem, token, "the kubeadm-config ConfigMap")
    kl = api_get(server, "/api/v1/namespaces/kube-system/configmaps/kubelet-config", ca_pem, token, "the kubelet-config ConfigMap")
    out("[preflight] Reading configuration from the cluster...")
    return server, ca_pem, yaml.safe_load(cm["data"]["ClusterConfiguration"]), yaml.safe_load(kl["data"]["kubelet"])


def kubeconfig_context(kubeconfig):
    """(server, ssl context with the kubeconfig's CA and client certificate) - admin.conf or
    kubelet.conf, inline data or file paths."""
    try:
        cfg = yaml.safe_load(open(kubeconfig))
    except OSError:
        raise Fail(f"couldn't read kubeconfig file \"{kubeconfig}\": no such file or directory")
    cl = cfg["clusters"][0]["cluster"]
    user = cfg["users"][0]["user"]
    ctx = tls_context(base64.b64decode(cl["certificate-authority-data"]) if "certificate-authority-data" in cl
                      else open(cl["certificate-authority"], "rb").read())
    if "client-certificate-data" in user:
        with tempfile.TemporaryDirectory() as d:
            for name, key in (("c.pem", "client-certificate-data"), ("k.pem", "client-key-data")):
                fd = os.open(os.path.join(d, name), os.O_WRONLY | os.O_CREAT, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(base64.b64decode(user[key]))
            ctx.load_cert_chain(os.path.join(d, "c.pem"), os.path.join(d, "k.pem"))
    elif user.get("client-certificate"):
        ctx.load_cert_chain(user["client-certificate"], user.get("client-key") or user["client-certificate"])
    return cl["server"], ctx


def cluster_get(kubeconfig, path, what):
    server, ctx = kubeconfig_context(kubeconfig)
    try:
        with urllib.request.urlopen(server.rstrip("/") + path, context=ctx, timeout=10) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        raise Fail(f"unable to fetch {what}: Get \"{server}{path}\": {e.code} {e.reason}")
    except (urllib.error.URLError, OSError) as e:
        raise Fail(f"unable to fetch {what}: Get \"{server}{path}\": {getattr(e, 'reason', e)}")

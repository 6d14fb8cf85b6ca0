"""The kubelet double's part in the API: it registers its Node through its kubelet.conf (as the real
kubelet's registerWithAPIServer does, pkg/kubelet/kubelet_node_status.go) and keeps the Node's
status, its Ready condition by the double's rule: the CNI configuration directory holds a valid
network config (logic.cni_config_ok), as the real kubelet reports the runtime's NetworkReady.
As the real kubelet's tryUpdateNodeStatus: every nodeStatusUpdateFrequency (10 s) it reads its Node
and computes the status; it posts it only when it changed (heartbeat times aside) or
nodeStatusReportFrequency (5 min) has passed since the last post (KubeletConfiguration v1beta1,
k8s.io/kubelet/config/v1beta1/types.go: defaults 10s and 5m; the Node Lease it renews every 10 s is
not modelled)."""
from __future__ import annotations

import base64
import json
import os
import platform
import socket
import ssl
import tempfile
import time
import urllib.error
import urllib.request

from . import logic

ARCH = {"x86_64": "amd64", "aarch64": "arm64"}


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class KubeconfigClient:
    """A tiny client for one kubeconfig (first cluster/user): server URL, CA, client certificate."""

    def __init__(self, path):
        import yaml
        with open(path) as f:
            cfg = yaml.safe_load(f)
        cluster = cfg["clusters"][0]["cluster"]
        user = cfg["users"][0]["user"]
        self.server = cluster["server"].rstrip("/")
        if cluster.get("certificate-authority-data"):
            self.ctx = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
        else:
            self.ctx = ssl.create_default_context(cafile=cluster.get("certificate-authority"))
        if user.get("client-certificate-data"):
            d = tempfile.mkdtemp(prefix="kubelet-double-")
            cert, key = os.path.join(d, "c.pem"), os.path.join(d, "k.pem")
            for p, k in ((cert, "client-certificate-data"), (key, "client-key-data")):
                fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(base64.b64decode(user[k]))
            try:
                self.ctx.load_cert_chain(cert, key)
            finally:
                os.unlink(cert), os.unlink(key), os.rmdir(d)
        else:
            self.ctx.load_cert_chain(user["client-certificate"], user.get("client-key"))

    def call(self, method, path, body=None, ctype="application/json"):
        req = urllib.request.Request(self.server + path, None if body is None else json.dumps(body).encode(),
                                     {"Content-Type": ctype, "Accept": "application/json"}, method=method)
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=10) as r:
                return r.status, json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            try:
                return e.code, json.loads(e.read())
            except ValueError:
                return e.code, {}


def node_object(name, node_ip, labels, taints, max_pods, version, ready, previous=None):
    cpus, mem_kib = os.cpu_count() or 1, 0
    try:
        with open("/proc/meminfo") as f:
            mem_kib = int(next(line.split()[1] for line in f if line.startswith("MemTotal:")))
    except (OSError, StopIteration, ValueError):
        pass
    arch = ARCH.get(platform.machine(), platform.machine())
    os_image = "Linux"
    try:
        with open("/etc/os-release") as f:
            os_image = next(line.split("=", 1)[1].strip().strip('"') for line in f if line.startswith("PRETTY_NAME="))
    except (OSError, StopIteration):
        pass
    t = now()
    prev = {c["type"]: c for c in ((previous or {}).get("status") or {}).get("conditions") or []}

    def cond(kind, reason, message):
        since = prev.get(kind, {}).get("lastTransitionTime") if prev.get(kind, {}).get("status") == "False" else t
        return {"type": kind, "status": "False", "lastHeartbeatTime": t, "lastTransitionTime": since,
                "reason": reason, "message": message}
    cap = {"cpu": str(cpus), "memory": f"{mem_kib}Ki", "pods": str(max_pods), "ephemeral-storage": "0"}
    addrs = ([{"type": "InternalIP", "address": node_ip}] if node_ip else []) + [{"type": "Hostname", "address": name}]
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"beta.kubernetes.io/arch": arch, "beta.kubernetes.io/os": "linux",
                                                  "kubernetes.io/arch": arch, "kubernetes.io/hostname": name,
                                                  "kubernetes.io/os": "linux", **labels}},
            "spec": {"taints": taints} if taints else {},
            "status": {"capacity": cap, "allocatable": cap, "addresses": addrs,
                       "conditions": [cond("MemoryPressure", "KubeletHasSufficientMemory",
                                           "kubelet has sufficient memory available"),
                                      cond("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                                      cond("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                                      logic.ready_condition(ready, t, prev.get("Ready"))],
                       "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                       "nodeInfo": {"architecture": arch, "operatingSystem": "linux", "osImage": os_image,
                                    "kernelVersion": platform.release(), "kubeletVersion": version,
                                    "kubeProxyVersion": version, "containerRuntimeVersion": "containerd://unknown",
                                    "machineID": "", "systemUUID": "", "bootID": ""}}}


def host_ip(name):
    """The kubelet's node IP without --node-ip (k8s.io/component-helpers node/util GetNodeHostIPs ->
    nodeutil.ChooseHostInterface): the first non-loopback address the node name resolves to, else
    the address of the interface that holds the default route."""
    try:
        for info in socket.getaddrinfo(name, None, socket.AF_INET):
            if not info[4][0].startswith("127."):
                return info[4][0]
    except OSError:
        pass
    try:
        with open("/proc/net/route") as f:
            default = next((line.split() for line in f if line.split()[1:2] == ["00000000"]), None)
        if default:
            gw = socket.inet_ntoa(int(default[2], 16).to_bytes(4, "little"))
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.connect((gw, 9))           # no packet is sent: this only picks the source address
                return s.getsockname()[0]
    except (OSError, ValueError):
        pass
    return None


def parse_labels(s):
    return dict(kv.split("=", 1) if "=" in kv else (kv, "") for kv in (s or "").split(",") if kv)


def parse_taints(s):
    out = []
    for t in [x for x in (s or "").split(",") if x]:
        kv, dummy, effect = t.partition(":")
        k, dummy, v = kv.partition("=")
        out.append({"key": k, **({"value": v} if v else {}), "effect": effect})
    return out


def _without_heartbeats(status):
    """A Node status with its conditions' lastHeartbeatTime left out: what "changed" compares."""
    out = dict(status or {})
    out["conditions"] = [{k: v for k, v in c.items() if k != "lastHeartbeatTime"} for c in out.get("conditions") or []]
    return out


def run(flags, cfg, version, log, cni_dir="/etc/cni/net.d", every=10, stop=None, tick=2.0, report=300):
    """Register the Node, then keep its status posted: on a change of the Ready rule at once
    (checked every `tick` seconds), else every `every` seconds. Never returns (unless stop() says so)."""
    name = (flags.get("hostname-override") or socket.gethostname()).lower()
    labels, taints = parse_labels(flags.get("node-labels")), parse_taints(flags.get("register-with-taints"))
    node_ip = flags.get("node-ip") or host_ip(name)
    client, registered, last_ready, last_post, reported = None, False, None, 0.0, None
    last_report = None   # when the status was last posted (monotonic), None: not yet
    while not (stop and stop()):
        ready = logic.cni_config_ok(cni_dir)
        due = ready != last_ready or time.monotonic() - last_post >= every
        if due:
            try:
                if client is None:
                    client = KubeconfigClient(flags.get("kubeconfig") or "/etc/kubernetes/kubelet.conf")
                if not registered:
                    obj = node_object(name, node_ip, labels, taints, cfg.get("maxPods", 110), version,
                                      ready)
                    code, body = client.call("POST", "/api/v1/nodes", obj)
                    if code in (201, 409):
                        registered = True
                        log(f"I Successfully registered node {name}" if code == 201 else
                            f"I node {name} already registered")
                    else:
                        raise RuntimeError(f"Unable to register node with API server: {body.get('message', code)}")
                # from the API server's cache (resourceVersion=0), as the real kubelet's first try
                # does (kubelet_node_status.go tryUpdateNodeStatus: util.FromApiserverCache)
                code, cur = client.call("GET", f"/api/v1/nodes/{name}?resourceVersion=0")
                if code == 404:
                    registered = False
                    continue
                if code != 200:
                    raise RuntimeError(cur.get("message", code))
                obj = node_object(name, node_ip, labels, taints, cfg.get("maxPods", 110), version,
                                  ready, cur)
                if (last_report is None or time.monotonic() - last_report >= report
                        or _without_heartbeats(obj["status"]) != _without_heartbeats(cur.get("status"))):
                    code, body = client.call("PATCH", f"/api/v1/nodes/{name}/status", {"status": obj["status"]},
                                             "application/merge-patch+json")
                    if code != 200:
                        raise RuntimeError(f"Error updating node status: {body.get('message', code)}")
                    last_report = time.monotonic()
                if ready != reported:
                    log(f"I node {name} Ready={ready}")
                last_ready, last_post, reported = ready, time.monotonic(), ready
            except (OSError, ValueError, KeyError, RuntimeError, ssl.SSLError) as e:
                log(f"E node status: {e}")
                if not isinstance(e, RuntimeError):
                    client = None                 # re-read kubelet.conf next time
                last_post = time.monotonic()      # retry after `every` seconds
                last_ready = ready
        time.sleep(tick)

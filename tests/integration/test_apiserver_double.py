"""The kube-apiserver test double on real hosts, behind the collection's own install.

h1 and h2 are masters (the endpoint api.tke.com resolves to h1, as in test_kubeadm), h3 a worker;
etcd is external and real (the collection's etcd phase on h1), so the API doubles of both masters
keep their objects in it. After pki, etcd, control_plane and nodes, the test talks to the API
from the controller with the admin kubeconfig, as the collection's API client will: objects,
Kubernetes' schema validation, the Nodes the kubelet doubles registered and their Ready rule."""
import base64
import concurrent.futures
import json
import shlex
import sys
import time

import pytest
import yaml

from harness import kubeadm_double
from harness.playbook import TOP, run_playbook

sys.path.insert(0, str(TOP / "tests" / "apiserver_double"))
from apiserver_double.kubelet_node import KubeconfigClient  # noqa: E402
from apiserver_double.logic import NOT_READY_MESSAGE  # noqa: E402

PLAY = TOP / "playbooks" / "install.yml"
FLANNEL = {"name": "cbr0", "cniVersion": "0.3.1",
           "plugins": [{"type": "flannel", "delegate": {"hairpinMode": True, "isDefaultGateway": True}},
                       {"type": "portmap", "capabilities": {"portMappings": True}}]}


@pytest.fixture(scope="module")
def cluster(testhosts, tmp_path_factory):
    th = testhosts
    t0 = time.monotonic()
    kubeadm_double.install(th, api_domain_ip=th.ip("h1"))
    d = tmp_path_factory.mktemp("apiserver")
    inv = th.write_inventory(d / "hosts.yml", groups={"masters": ["h1", "h2"], "workers": ["h3"], "etcd": ["h1"]},
                             group_vars={"tke_k8s_version": "1.30.4", "tke_allow_eol_install": True,
                                         "tke_ha_mode": "thirdparty", "tke_vip": "172.30.99.100"})
    t1 = time.monotonic()
    run = run_playbook(PLAY, inv, "--tags", "pki,etcd,control_plane,nodes")
    assert run.rc == 0, run.explain()
    print(f"doubles installed in {t1 - t0:.0f}s; pki,etcd,control_plane,nodes in {time.monotonic() - t1:.0f}s")
    admin = yaml.safe_load(th.ssh("h1", "cat /etc/kubernetes/admin.conf").stdout)

    def client(host):
        cfg = json.loads(json.dumps(admin))
        cfg["clusters"][0]["cluster"]["server"] = f"https://{th.ip(host)}:6443"
        path = d / f"admin-{host}.conf"
        path.write_text(yaml.safe_dump(cfg))
        path.chmod(0o600)
        return KubeconfigClient(str(path))
    return {"h1": client("h1"), "h2": client("h2")}


def wait_for(fn, timeout=60, every=2):
    end = time.monotonic() + timeout
    while True:
        got = fn()
        if got or time.monotonic() > end:
            return got
        time.sleep(every)


def ready(node):
    return next(c for c in node["status"]["conditions"] if c["type"] == "Ready")


def test_objects_are_shared_by_the_masters_and_validated(cluster):
    h1, h2 = cluster["h1"], cluster["h2"]
    code, v = h1.call("GET", "/version")
    assert code == 200 and v["gitVersion"] == "v1.30.4"
    code, ns = h1.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                      "metadata": {"name": "demo"}})
    assert code == 201, ns
    code, cm = h1.call("POST", "/api/v1/namespaces/demo/configmaps",
                       {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": {"a": "1"}})
    assert code == 201, cm
    # the other master's API double reads it from the same etcd
    code, seen = h2.call("GET", "/api/v1/namespaces/demo/configmaps/settings")
    assert code == 200 and seen["metadata"]["uid"] == cm["metadata"]["uid"] and seen["data"] == {"a": "1"}
    # every write on one master is read at once on the other (both read the same etcd)
    for i in range(2, 7):
        code, cm = h1.call("PUT", "/api/v1/namespaces/demo/configmaps/settings",
                           {**cm, "data": {"a": str(i)}})
        assert code == 200, cm
        code, seen = h2.call("GET", "/api/v1/namespaces/demo/configmaps/settings")
        want = (200, {"a": str(i)}, cm["metadata"]["resourceVersion"])
        assert (code, seen["data"], seen["metadata"]["resourceVersion"]) == want, seen
    code, again = h2.call("POST", "/api/v1/namespaces/demo/configmaps",
                          {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}})
    assert (code, again["reason"]) == (409, "AlreadyExists")
    # a string where Kubernetes wants an integer: refused as the API server refuses it, naming the field
    bad = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "demo"},
           "spec": {"replicas": "two", "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                                 "spec": {"containers": [{"name": "web", "image": "registry.tke.com/library/nginx:1"}]}}}}
    code, s = h1.call("POST", "/apis/apps/v1/namespaces/demo/deployments", bad)
    assert (code, s["kind"], s["status"], s["reason"]) == (422, "Status", "Failure", "Invalid"), s
    assert s["message"].startswith('Deployment.apps "web" is invalid: spec.replicas: '), s
    assert [c["field"] for c in s["details"]["causes"]] == ["spec.replicas"]
    assert h2.call("GET", "/apis/apps/v1/namespaces/demo/deployments/web")[0] == 404
    # kubeadm's uploaded configuration is an API object (kubeadm join read it through the endpoint)
    code, kc = h2.call("GET", "/api/v1/namespaces/kube-system/configmaps/kubeadm-config")
    assert code == 200 and "kubernetesVersion: v1.30.4" in kc["data"]["ClusterConfiguration"]


KUBECTL_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: demo}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "registry.tke.com/library/nginx:1", ports: [{containerPort: 80}]}]
"""


def test_kubectl_speaks_to_it(testhosts, cluster):
    """Real kubectl of the cluster's minor (tests/harness/real_clients.py) on a master with
    admin.conf: `get nodes` as a Table (STATUS, ROLES, VERSION), client-side apply with kubectl's
    default validation (the server's fieldValidation, found in /openapi/v3), create or a strategic
    merge patch, and delete; server-side apply with its field manager, a conflict and its force."""
    th = testhosts
    th.kubectl_client("h1")
    k = "KUBECONFIG=/etc/kubernetes/admin.conf kubectl "
    assert th.ssh("h1", k + "get nodes -o name").stdout.split() == ["node/h1", "node/h2", "node/h3"]
    table = th.ssh("h1", k + "get nodes").stdout.splitlines()
    assert table[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"], table
    h1 = table[1].split()
    assert h1[0] == "h1" and h1[1] in ("Ready", "NotReady") and h1[4] == "v1.30.4", table
    th.ssh("h1", f"cat > /tmp/web.yaml <<'EOF'\n{KUBECTL_DEPLOYMENT}EOF")
    apply = k + "apply -f /tmp/web.yaml"
    assert th.ssh("h1", apply).stdout.strip() == "deployment.apps/web created"
    assert th.ssh("h1", apply).stdout.strip() == "deployment.apps/web unchanged"
    th.ssh("h1", "sed -i 's/replicas: 2/replicas: 3/' /tmp/web.yaml")
    assert th.ssh("h1", apply).stdout.strip() == "deployment.apps/web configured"
    assert th.ssh("h1", k + "-n demo get deploy web -o jsonpath='{.spec.replicas} {.metadata.generation}'"
                  ).stdout.strip() == "3 2"
    assert th.ssh("h1", k + "-n demo delete deploy web").stdout.strip() == 'deployment.apps "web" deleted'
    # server-side apply: kubectl's field manager owns what it applied; a value another manager set
    # conflicts until forced
    th.ssh("h1", "cat > /tmp/ssa.yaml <<'EOF'\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: ssa, namespace: demo}\n"
                 "data: {a: '1'}\nEOF\n")
    ssa = k + "apply --server-side -f /tmp/ssa.yaml"
    assert th.ssh("h1", ssa).stdout.strip() == "configmap/ssa serverside-applied"
    managers = th.ssh("h1", k + "-n demo get cm ssa --show-managed-fields -o jsonpath="
                      "'{range .metadata.managedFields[*]}{.manager}/{.operation} {end}'").stdout.split()
    assert managers == ["kubectl/Apply"], managers
    th.ssh("h1", k + "-n demo patch cm ssa --type merge -p '{\"data\":{\"a\":\"2\"}}'")
    conflict = th.ssh("h1", ssa, check=False)
    assert conflict.returncode != 0 and "conflict with" in conflict.stderr and ".data.a" in conflict.stderr, conflict.stderr
    assert th.ssh("h1", ssa + " --force-conflicts").stdout.strip() == "configmap/ssa serverside-applied"
    assert th.ssh("h1", k + "-n demo get cm ssa -o jsonpath='{.data.a}'").stdout.strip() == "1"
    th.ssh("h1", k + "-n demo delete cm ssa")


def test_nodes_registered_not_ready_until_a_cni_config_appears(testhosts, cluster):
    th, h1 = testhosts, cluster["h1"]

    def nodes():
        code, lst = h1.call("GET", "/api/v1/nodes")
        assert code == 200, lst
        return {n["metadata"]["name"]: n for n in lst["items"]}

    def all_three():
        n = nodes()
        return n if set(n) == {"h1", "h2", "h3"} else None
    got = wait_for(all_three)
    assert got, nodes()
    for name, n in got.items():
        r = ready(n)
        assert (r["status"], r["reason"], r["message"]) == ("False", "KubeletNotReady", NOT_READY_MESSAGE), name
        assert {"type": "InternalIP", "address": th.ip(name)} in n["status"]["addresses"]
        assert n["metadata"]["labels"]["kubernetes.io/hostname"] == name
    # kubeadm's mark-control-plane: the masters are labelled and tainted, the worker is not
    for name in ("h1", "h2"):
        assert "node-role.kubernetes.io/control-plane" in got[name]["metadata"]["labels"], name
        assert {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"} in got[name]["spec"]["taints"]
    assert "node-role.kubernetes.io/control-plane" not in got["h3"]["metadata"]["labels"]
    # a network config on h3: its kubelet reports Ready within a few seconds; the others stay NotReady
    conf = base64.b64encode(json.dumps(FLANNEL).encode()).decode()
    th.ssh("h3", f"mkdir -p /etc/cni/net.d && echo {conf} | base64 -d > /etc/cni/net.d/10-flannel.conflist")
    t0 = time.monotonic()
    assert wait_for(lambda: ready(nodes()["h3"])["status"] == "True", timeout=30, every=1), nodes()["h3"]
    print(f"h3 Ready {time.monotonic() - t0:.1f}s after its CNI config appeared")
    now = nodes()
    assert ready(now["h3"])["reason"] == "KubeletReady"
    assert ready(now["h1"])["status"] == "False" and ready(now["h2"])["status"] == "False"
    # a DaemonSet's status by the documented rule: it fits the untainted worker only; its image is
    # not in any registry the host reaches, so nothing is ready
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "kube-system"},
          "spec": {"selector": {"matchLabels": {"app": "agent"}},
                   "template": {"metadata": {"labels": {"app": "agent"}},
                                "spec": {"containers": [{"name": "a", "image": "registry.tke.com/library/agent:1"}]}}}}
    code, made = h1.call("POST", "/apis/apps/v1/namespaces/kube-system/daemonsets", ds)
    assert code == 201, made
    assert (made["status"]["desiredNumberScheduled"], made["status"]["numberReady"]) == (1, 0), made["status"]


CPU = """
import os, time
def ticks():
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read()
            if b"/usr/local/bin/kubelet" in cmd or b"apiserver-double/kube-apiserver" in cmd:
                f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
                total += sum(int(x) for x in f[11:15])   # utime stime cutime cstime (etcdctl children too)
        except OSError:
            pass
    return total
t = ticks(); time.sleep(30); print((ticks() - t) / os.sysconf("SC_CLK_TCK") / 30)
"""


def test_the_doubles_cost_little_cpu(testhosts, cluster):
    """Idle (heartbeats only), a host's kubelet double and kube-apiserver double, with the etcdctl
    they run, use a few percent of one core. The three hosts are measured over the same 30 s."""
    hosts = ("h1", "h2", "h3")
    with concurrent.futures.ThreadPoolExecutor(len(hosts)) as pool:
        runs = list(pool.map(lambda h: testhosts.ssh(h, "python3 -c " + shlex.quote(CPU), timeout=90), hosts))
    for h, run in zip(hosts, runs):
        share = float(run.stdout.strip())
        print(f"{h}: {share:.1%} of a core")
        assert share < 0.08, f"{h}: {share:.1%} of a core while idle"

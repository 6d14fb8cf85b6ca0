"""The kube-apiserver test double (tests/apiserver_double): its pure parts (selectors, patches,
validation -> Status, the status rules) and the server itself, run here in-process over real TLS
with client certificates and a file store (no test hosts)."""
import base64
import datetime
import json
import ssl
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "apiserver_double"))
from apiserver_double import logic, server, store, structural  # noqa: E402
from apiserver_double.logic import ApiError  # noqa: E402
from apiserver_double.resources import BUILTIN  # noqa: E402

DEPLOY = next(r for r in BUILTIN if r.kind == "Deployment")
# How long a request may take: no test here is about speed, and ansible-test runs these forked, each
# test on a fresh server, at nice 19 beside the scenarios, where a 0.06 s request once took over 10 s.
WAIT = 120


# ------------------------------------------------------------------ pure parts
@pytest.mark.parametrize("sel,labels,want", [
    ("app=web", {"app": "web"}, True), ("app==web", {"app": "db"}, False), ("app!=web", {}, True),
    ("app!=web", {"app": "web"}, False), ("tier in (a, b)", {"tier": "b"}, True),
    ("tier notin (a,b)", {"tier": "a"}, False), ("tier notin (a,b)", {}, True), ("app", {"app": ""}, True),
    ("!app", {"app": "x"}, False), ("app=web,tier in (a)", {"app": "web", "tier": "a"}, True),
    ("app=web,tier in (a)", {"app": "web", "tier": "c"}, False), ("", {"x": "y"}, True)])
def test_label_selectors(sel, labels, want):
    assert logic.labels_match(logic.parse_label_selector(sel), labels) is want


def test_bad_selectors_are_400():
    with pytest.raises(ApiError) as e:
        logic.parse_label_selector("a in b")
    assert e.value.code == 400
    with pytest.raises(ApiError) as e:
        logic.parse_field_selector("spec.nodeName=x")
    assert e.value.code == 400
    # a Pod's own selectable fields (pkg/registry/core/pod/strategy.go)
    f = logic.parse_field_selector("spec.nodeName=w1,status.phase!=Succeeded", "pods")
    assert logic.fields_match(f, {"spec": {"nodeName": "w1"}, "status": {"phase": "Running"}})
    assert not logic.fields_match(f, {"spec": {"nodeName": "w2"}, "status": {"phase": "Running"}})
    f = logic.parse_field_selector("metadata.name=a")
    assert logic.fields_match(f, {"metadata": {"name": "a"}}) and not logic.fields_match(f, {"metadata": {"name": "b"}})


def test_merge_patch_is_rfc7386():
    # the RFC's appendix A example
    target = {"title": "Goodbye!", "author": {"givenName": "John", "familyName": "Doe"}, "tags": ["example", "sample"],
              "content": "This will be unchanged"}
    patch = {"title": "Hello!", "phoneNumber": "+01-123-456-7890", "author": {"familyName": None}, "tags": ["example"]}
    assert logic.merge_patch(target, patch) == {
        "title": "Hello!", "author": {"givenName": "John"}, "tags": ["example"], "content": "This will be unchanged",
        "phoneNumber": "+01-123-456-7890"}


def test_strategic_merge_patch_merges_named_lists():
    cur = {"spec": {"containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}],
                    "tolerations": [{"key": "x"}]}, "metadata": {"finalizers": ["f1"]}}
    patch = {"spec": {"containers": [{"name": "b", "image": "b:2"}, {"name": "c", "image": "c:1"},
                                     {"name": "a", "$patch": "delete"}], "tolerations": [{"key": "y"}]},
             "metadata": {"finalizers": ["f2"]}}
    out = logic.strategic_merge_patch(cur, patch)
    assert out["spec"]["containers"] == [{"name": "b", "image": "b:2"}, {"name": "c", "image": "c:1"}]
    assert out["spec"]["tolerations"] == [{"key": "y"}]          # no merge key: replaced
    assert out["metadata"]["finalizers"] == ["f1", "f2"]


def test_json_patch():
    assert logic.json_patch({"a": [1, 2]}, [{"op": "add", "path": "/a/-", "value": 3},
                                            {"op": "add", "path": "/b", "value": 1}, {"op": "replace", "path": "/b", "value": 2}]) == {"a": [1, 2, 3], "b": 2}
    with pytest.raises(ApiError):
        logic.json_patch({"a": 1}, [{"op": "remove", "path": "/x"}])


def _schema_error(obj):
    import kubernetes_validate as kv
    try:
        kv.validate(obj, "1.30.4", strict=True)
    except kv.ValidationError as e:
        return logic.schema_error_to_api(DEPLOY, obj["metadata"]["name"], e)
    return None


def deployment(name="web", replicas=2, image="registry.tke.com/library/nginx:1.25", **pod):
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": image}], **pod}}}}


def test_validation_errors_become_kubernetes_status():
    s = _schema_error(deployment(replicas="two")).status()
    assert (s["kind"], s["status"], s["code"], s["reason"]) == ("Status", "Failure", 422, "Invalid")
    assert s["message"].startswith('Deployment.apps "web" is invalid: spec.replicas: Invalid value: "string": '
                                   "spec.replicas in body must be of type integer")
    assert s["details"]["causes"][0]["field"] == "spec.replicas" and s["details"]["group"] == "apps"
    d = deployment()
    d["spec"]["template"]["spec"]["containers"][0]["ports"] = [{}]
    s = _schema_error(d).status()
    assert s["details"]["causes"] == [{"reason": "FieldValueRequired", "message": "Required value",
                                       "field": "spec.template.spec.containers[0].ports[0].containerPort"}]
    d = deployment()
    d["spec"]["bogus"] = 1
    s = _schema_error(d).status()
    assert s["code"] == 400 and s["reason"] == "BadRequest"
    assert 'strict decoding error: unknown field "spec.bogus"' in s["message"]
    assert _schema_error(deployment()) is None


def test_crd_schema_admits_what_kubernetes_admits():
    import jsonschema
    s = logic.crd_schema({"type": "object", "properties": {
        "a": {"type": "string", "nullable": True}, "b": {"x-kubernetes-int-or-string": True},
        "c": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}})
    v = jsonschema.Draft4Validator(s)
    assert v.is_valid({"a": None, "b": 1, "c": {}}) and v.is_valid({"b": "50%"})
    assert not v.is_valid({"b": [1]}) and not v.is_valid({"a": 1})


def test_cni_ready_rule(tmp_path):
    assert not logic.cni_config_ok(str(tmp_path / "missing"))
    assert not logic.cni_config_ok(str(tmp_path))
    (tmp_path / "10-x.conflist").write_text("{not json")
    assert not logic.cni_config_ok(str(tmp_path))
    (tmp_path / "20-y.conflist").write_text(json.dumps({"cniVersion": "0.3.1", "name": "n", "plugins": []}))
    assert not logic.cni_config_ok(str(tmp_path))
    (tmp_path / "30-flannel.conflist").write_text(json.dumps({"name": "cbr0", "plugins": [{"type": "flannel"}]}))
    assert logic.cni_config_ok(str(tmp_path))
    c = logic.ready_condition(False, "t1")
    assert (c["status"], c["reason"]) == ("False", "KubeletNotReady") and "cni plugin not initialized" in c["message"]
    assert logic.ready_condition(True, "t2", c)["lastTransitionTime"] == "t2"
    assert logic.ready_condition(False, "t2", c)["lastTransitionTime"] == "t1"


def node(name, ready, labels=None, taints=None):
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": {"taints": taints or []},
            "status": {"conditions": [logic.ready_condition(ready, "t")]}}


def test_workload_status_rule():
    cp_taint = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}
    nodes = [node("m1", False, {"role": "m"}, [cp_taint]), node("w1", True), node("w2", False)]
    ds = {"kind": "DaemonSet", "metadata": {"generation": 3},
          "spec": {"template": {"spec": {"containers": [{"image": "r/i:1"}]}}}}
    st = logic.workload_status(ds, nodes, lambda i: True)
    assert (st["desiredNumberScheduled"], st["numberReady"], st["observedGeneration"]) == (2, 1, 3)
    ds["spec"]["template"]["spec"].update(tolerations=[{"operator": "Exists"}], hostNetwork=True)
    st = logic.workload_status(ds, nodes, lambda i: True)
    assert (st["desiredNumberScheduled"], st["numberReady"]) == (3, 3)
    assert logic.workload_status(ds, nodes, lambda i: False)["numberReady"] == 0
    dep = {"kind": "Deployment", **deployment(nodeSelector={"role": "m"})}
    dep["metadata"]["generation"] = 1
    assert "readyReplicas" not in logic.workload_status(dep, nodes, lambda i: True)   # the only fit is NotReady
    dep["spec"]["template"]["spec"] = {"containers": [{"image": "x"}]}
    st = logic.workload_status(dep, nodes, lambda i: True)
    assert (st["readyReplicas"], st["availableReplicas"], st["updatedReplicas"]) == (2, 2, 2)
    assert st["conditions"][0] == {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                                   "message": "Deployment has minimum availability."}


def test_image_references():
    assert logic.parse_image("registry.tke.com/library/pause:3.9") == ("registry.tke.com", "library/pause", "3.9")
    assert logic.parse_image("nginx") == ("docker.io", "library/nginx", "latest")
    assert logic.parse_image("reg:5000/a/b@sha256:ab") == ("reg:5000", "a/b", "sha256:ab")


# ------------------------------------------------------------------ the server, in-process
def _pki(d: Path):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    import ipaddress
    now = datetime.datetime.now(datetime.timezone.utc)

    def name(cn, org=None):
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]
                         + ([x509.NameAttribute(NameOID.ORGANIZATION_NAME, org)] if org else []))

    def cert(subject, key, issuer, ca_key, ca=False, sans=None):
        b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
             .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
             .not_valid_after(now + datetime.timedelta(days=1))
             .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if sans:
            b = b.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        return b.sign(ca_key, hashes.SHA256())

    def write(base, c, k):
        (d / f"{base}.crt").write_bytes(c.public_bytes(serialization.Encoding.PEM))
        (d / f"{base}.key").write_bytes(k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                        serialization.NoEncryption()))
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = cert(name("kubernetes"), ca_key, name("kubernetes"), ca_key, ca=True)
    write("ca", ca, ca_key)
    for base, cn, org, sans in (("apiserver", "kube-apiserver", None, [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                ("admin", "kubernetes-admin", "kubeadm:cluster-admins", None),
                                ("node1", "system:node:n1", "system:nodes", None),
                                ("stranger", "jane", "devs", None)):
        k = ec.generate_private_key(ec.SECP256R1())
        write(base, cert(name(cn, org), k, name("kubernetes"), ca_key, sans=sans), k)
    return d


@pytest.fixture(scope="module")
def apiserver(tmp_path_factory):
    d = _pki(tmp_path_factory.mktemp("pki"))
    state = d / "state.json"
    state.write_text(json.dumps({"configmaps": {"kubeadm-config": {"ClusterConfiguration": "kubernetesVersion: v1.30.4\n"},
                                                "cluster-info": {"kubeconfig": "x"}},
                                 "tokens": {"abcdef.0123456789abcdef": {"expires": None, "groups": [
                                     "system:bootstrappers:kubeadm:default-node-token"],
                                     "usages": ["authentication", "signing"]}},
                                 "nodes": {"n1": {"labels": ["node-role.kubernetes.io/control-plane"],
                                                  "taints": [{"key": "node-role.kubernetes.io/control-plane",
                                                              "effect": "NoSchedule"}]}}}))

    class Images:
        @staticmethod
        def exists(ref):
            return "missing" not in ref

    api = server.Api(store.FileStore(str(d / "store" / "store.json")), "v1.30.4", str(state), Images())
    api.ensure_system()
    server.start_namespace_controller(api, lambda msg: None)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(d / "apiserver.crt", d / "apiserver.key")
    ctx.load_verify_locations(d / "ca.crt")
    ctx.verify_mode = ssl.CERT_OPTIONAL
    server.Handler.api = api
    srv = server.TLSServer(("127.0.0.1", 0), server.Handler, ctx)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield {"url": f"https://127.0.0.1:{srv.server_address[1]}", "pki": d, "api": api}
    srv.shutdown()


def call(apiserver, method, path, body=None, who="admin", ctype="application/json", token=None):
    ctx = ssl.create_default_context(cafile=str(apiserver["pki"] / "ca.crt"))
    if who:
        ctx.load_cert_chain(apiserver["pki"] / f"{who}.crt", apiserver["pki"] / f"{who}.key")
    headers = {"Content-Type": ctype}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(apiserver["url"] + path, None if body is None else json.dumps(body).encode(),
                                 headers, method=method)
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=WAIT) as r:
            raw = r.read()
            return r.status, (json.loads(raw) if r.headers.get("Content-Type") == "application/json" else raw.decode())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_server_discovery_version_health(apiserver):
    assert call(apiserver, "GET", "/healthz", who=None) == (200, "ok")
    code, v = call(apiserver, "GET", "/version", who=None)
    assert code == 200 and v["gitVersion"] == "v1.30.4" and v["minor"] == "30"
    code, core = call(apiserver, "GET", "/api/v1")
    assert code == 200 and core["kind"] == "APIResourceList"
    cms = next(r for r in core["resources"] if r["name"] == "configmaps")
    assert cms["namespaced"] and cms["kind"] == "ConfigMap" and "patch" in cms["verbs"]
    assert any(r["name"] == "nodes/status" for r in core["resources"])
    code, groups = call(apiserver, "GET", "/apis")
    assert {"apps", "rbac.authorization.k8s.io", "apiextensions.k8s.io"} <= {g["name"] for g in groups["groups"]}
    code, apps = call(apiserver, "GET", "/apis/apps/v1")
    assert {"deployments", "daemonsets", "statefulsets", "replicasets"} <= {r["name"] for r in apps["resources"]}


def test_server_authentication_and_authorization(apiserver):
    code, s = call(apiserver, "GET", "/api/v1/namespaces", who=None)
    assert code == 403 and s["message"] == ('namespaces is forbidden: User "system:anonymous" cannot list resource '
                                            '"namespaces" in API group "" at the cluster scope')
    code, s = call(apiserver, "GET", "/apis", who=None)
    assert (code, s["message"]) == (403, 'forbidden: User "system:anonymous" cannot get path "/apis"')
    code, s = call(apiserver, "GET", "/api/v1/namespaces/kube-public/configmaps/cluster-info", who=None)
    assert code == 200 and s["data"]["kubeconfig"] == "x"
    assert call(apiserver, "GET", "/api/v1/namespaces", who=None, token="abcdef.wrongwrongwrong1")[0] == 401
    code, cm = call(apiserver, "GET", "/api/v1/namespaces/kube-system/configmaps/kubeadm-config", who=None,
                    token="abcdef.0123456789abcdef")
    assert code == 200 and "v1.30.4" in cm["data"]["ClusterConfiguration"]
    assert call(apiserver, "GET", "/api/v1/namespaces/default/secrets", who=None, token="abcdef.0123456789abcdef")[0] == 403
    code, s = call(apiserver, "POST", "/api/v1/namespaces", {"metadata": {"name": "x"}}, who="stranger")
    assert code == 403 and s["message"] == ('namespaces is forbidden: User "jane" cannot create resource "namespaces" '
                                            'in API group "" at the cluster scope')
    code, s = call(apiserver, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "x"}}, who="node1")
    assert code == 403


def test_server_objects_crud(apiserver, monkeypatch):
    monkeypatch.setattr(apiserver["api"], "NS_TERMINATING_SECONDS", 10 * WAIT)   # ended by the test
    code, ns = call(apiserver, "GET", "/api/v1/namespaces")
    assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= {i["metadata"]["name"] for i in ns["items"]}
    assert ns["kind"] == "NamespaceList"
    code, s = call(apiserver, "POST", "/api/v1/namespaces/nope/configmaps", {"metadata": {"name": "a"}})
    assert (code, s["message"]) == (404, 'namespaces "nope" not found')
    assert call(apiserver, "POST", "/api/v1/namespaces", {"metadata": {"name": "demo"}})[0] == 201
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "labels": {"app": "x"}}, "data": {"k": "v"}}
    code, made = call(apiserver, "POST", "/api/v1/namespaces/demo/configmaps", cm)
    assert code == 201 and made["metadata"]["uid"] and made["metadata"]["namespace"] == "demo"
    code, s = call(apiserver, "POST", "/api/v1/namespaces/demo/configmaps", cm)
    assert (code, s["reason"], s["message"]) == (409, "AlreadyExists", 'configmaps "a" already exists')
    code, s = call(apiserver, "GET", "/api/v1/namespaces/demo/configmaps/zz")
    assert (code, s["reason"], s["message"], s["details"]["kind"]) == (404, "NotFound", 'configmaps "zz" not found',
                                                                       "configmaps")
    call(apiserver, "POST", "/api/v1/namespaces/demo/configmaps", {"metadata": {"name": "b"}})
    code, lst = call(apiserver, "GET", "/api/v1/namespaces/demo/configmaps?labelSelector=app%3Dx")
    assert [i["metadata"]["name"] for i in lst["items"]] == ["a"] and lst["kind"] == "ConfigMapList"
    code, lst = call(apiserver, "GET", "/api/v1/configmaps?fieldSelector=metadata.name%3Db")
    assert [i["metadata"]["name"] for i in lst["items"]] == ["b"]
    # PUT with a stale resourceVersion conflicts; with the current one it succeeds and bumps it
    stale = dict(made, data={"k": "w"})
    code, upd = call(apiserver, "PUT", "/api/v1/namespaces/demo/configmaps/a", stale)
    assert code == 200 and int(upd["metadata"]["resourceVersion"]) > int(made["metadata"]["resourceVersion"])
    code, s = call(apiserver, "PUT", "/api/v1/namespaces/demo/configmaps/a", stale)
    assert (code, s["reason"]) == (409, "Conflict")
    code, p = call(apiserver, "PATCH", "/api/v1/namespaces/demo/configmaps/a", {"data": {"k2": "v2", "k": None}},
                   ctype="application/merge-patch+json")
    assert code == 200 and p["data"] == {"k2": "v2"} and p["metadata"]["uid"] == made["metadata"]["uid"]
    code, s = call(apiserver, "PATCH", "/api/v1/namespaces/demo/configmaps/a", {"data": {}},
                   ctype="application/apply-patch+yaml")
    assert (code, s["reason"], s["message"]) == (422, "Invalid", 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: '
                                                 "Required value: is required for apply patch")
    code, dry = call(apiserver, "POST", "/api/v1/namespaces/demo/configmaps?dryRun=All", {"metadata": {"name": "c"}})
    assert code == 201 and call(apiserver, "GET", "/api/v1/namespaces/demo/configmaps/c")[0] == 404
    # deleting the namespace: it answers the Namespace, Terminating, its objects go; nothing new
    # may be created in it, a second delete is a conflict; then it is purged
    code, gone = call(apiserver, "DELETE", "/api/v1/namespaces/demo")
    assert code == 200 and gone["status"]["phase"] == "Terminating" and gone["metadata"]["deletionTimestamp"], gone
    assert call(apiserver, "GET", "/api/v1/configmaps?fieldSelector=metadata.namespace%3Ddemo")[1]["items"] == []
    code, s = call(apiserver, "POST", "/api/v1/namespaces/demo/configmaps", {"metadata": {"name": "late"}})
    assert (code, s["reason"], s["message"]) == (403, "Forbidden", 'configmaps "late" is forbidden: unable to create new '
                                                 "content in namespace demo because it is being terminated"), s
    assert s["details"]["causes"] == [{"reason": "NamespaceTerminating", "field": "metadata.namespace",
                                       "message": "namespace demo is being terminated"}]
    code, s = call(apiserver, "DELETE", "/api/v1/namespaces/demo")
    assert (code, s["reason"]) == (409, "Conflict") and "The system is ensuring all content is removed" in s["message"]
    assert call(apiserver, "GET", "/api/v1/namespaces/demo")[1]["status"]["phase"] == "Terminating"
    end_termination(apiserver, "demo")
    deadline = time.monotonic() + WAIT
    while call(apiserver, "GET", "/api/v1/namespaces/demo")[0] != 404:
        assert time.monotonic() < deadline, "the namespace was never purged"
        time.sleep(0.2)
    assert call(apiserver, "POST", "/api/v1/namespaces", {"metadata": {"name": "demo"}})[0] == 201
    call(apiserver, "DELETE", "/api/v1/namespaces/demo")
    end_termination(apiserver, "demo")


def test_server_evicts_pods_listed_by_node(apiserver):
    def pod(name, node):
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"nodeName": node, "containers": [{"name": "c", "image": "r/i:1"}]}}
    for name, node in (("p1", "w1"), ("p2", "w1"), ("p3", "w2")):
        assert call(apiserver, "POST", "/api/v1/namespaces/default/pods", pod(name, node))[0] == 201
    code, lst = call(apiserver, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dw1")
    assert sorted(i["metadata"]["name"] for i in lst["items"]) == ["p1", "p2"]
    ev = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p1", "namespace": "default"}}
    code, s = call(apiserver, "POST", "/api/v1/namespaces/default/pods/p1/eviction?dryRun=All", ev)
    assert (code, s["status"]) == (201, "Success")
    assert call(apiserver, "GET", "/api/v1/namespaces/default/pods/p1")[0] == 200
    assert call(apiserver, "POST", "/api/v1/namespaces/default/pods/p1/eviction", ev)[0] == 201
    assert call(apiserver, "GET", "/api/v1/namespaces/default/pods/p1")[0] == 404
    # the body names the pod of the URL; a missing pod is 404; a node may not evict
    code, s = call(apiserver, "POST", "/api/v1/namespaces/default/pods/p2/eviction", ev)
    assert (code, s["reason"]) == (400, "BadRequest")
    assert call(apiserver, "POST", "/api/v1/namespaces/default/pods/p1/eviction", ev)[0] == 404
    ev2 = dict(ev, metadata={"name": "p2"})
    assert call(apiserver, "POST", "/api/v1/namespaces/default/pods/p2/eviction", ev2, who="node1")[0] == 403
    for name in ("p2", "p3"):
        call(apiserver, "DELETE", f"/api/v1/namespaces/default/pods/{name}")


def test_server_eviction_keeps_pod_disruption_budgets(apiserver, tmp_path):
    """Eviction as pkg/registry/core/pod/storage/eviction.go, against budgets whose status is the
    disruption controller's (pkg/controller/disruption): 429 with the real wording while a budget
    allows no disruption, allowed once it does; Pending pods and unready pods of a met budget go;
    a budget that cannot count its pods' controllers fails its sync; two budgets: 500. Then real
    kubectl drain: held by the budget until its timeout, done once the budget allows it."""
    ns, base = "drain", "/api/v1/namespaces/drain"
    assert call(apiserver, "POST", "/api/v1/namespaces", {"metadata": {"name": ns}})[0] == 201
    code, rs = call(apiserver, "POST", f"/apis/apps/v1/namespaces/{ns}/replicasets", {
        "metadata": {"name": "web"}, "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": {
            "metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "r/i:1"}]}}}})
    assert code == 201, rs
    call(apiserver, "POST", "/api/v1/nodes", {"metadata": {"name": "dn1"}, "status": {
        "conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": node_info()}})

    def pod(name, ready=True, owned=True, labels=None):
        meta = {"name": name, "labels": labels or {"app": "web"}}
        if owned:
            meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "controller": True,
                                        "uid": rs["metadata"]["uid"]}]
        code, made = call(apiserver, "POST", f"{base}/pods", {"metadata": meta, "spec": {
            "nodeName": "dn1", "containers": [{"name": "c", "image": "r/i:1"}]}})
        assert (code, made["status"]) == (201, {"phase": "Pending"}), made   # as PrepareForCreate
        if ready is not None:
            st = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
            assert call(apiserver, "PATCH", f"{base}/pods/{name}/status", {"status": st},
                        ctype="application/merge-patch+json")[0] == 200

    def evict(name):
        return call(apiserver, "POST", f"{base}/pods/{name}/eviction", {
            "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": ns}})

    def budget(name, **spec):
        body = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name},
                "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec}}
        assert call(apiserver, "POST", f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets", body)[0] == 201

    def status(name):
        return call(apiserver, "GET", f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/{name}")[1]["status"]
    pod("w1"), pod("w2")
    budget("web", minAvailable=2)
    st = status("web")
    assert (st["currentHealthy"], st["desiredHealthy"], st["expectedPods"], st["disruptionsAllowed"]) == (2, 2, 2, 0)
    assert st["conditions"][0]["reason"] == "InsufficientPods", st
    code, s = evict("w1")
    assert (code, s["reason"]) == (429, "TooManyRequests")
    assert s["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    assert s["details"]["causes"] == [{"reason": "DisruptionBudget",
                                       "message": "The disruption budget web needs 2 healthy pods and has 2 currently"}]
    # a Pending pod is not guarded (canIgnorePDB)
    pod("w-new", ready=None)
    assert evict("w-new")[0] == 201
    # the budget allows one: one eviction, then none
    assert call(apiserver, "PATCH", f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/web",
                {"spec": {"minAvailable": 1}}, ctype="application/merge-patch+json")[0] == 200
    assert status("web")["disruptionsAllowed"] == 1
    assert evict("w1")[0] == 201 and call(apiserver, "GET", f"{base}/pods/w1")[0] == 404
    assert evict("w2")[0] == 429
    # an unready pod goes while the budget is met (IfHealthyBudget)
    pod("w3", ready=False)
    assert evict("w3")[0] == 201
    # maxUnavailable counts the controllers' replicas: a pod without a controller fails the sync
    pod("stray", owned=False, labels={"app": "stray"})
    body = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "stray"},
            "spec": {"selector": {"matchLabels": {"app": "stray"}}, "maxUnavailable": "50%"}}
    assert call(apiserver, "POST", f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets", body)[0] == 201
    code, s = evict("stray")
    assert code == 429 and s["details"]["causes"][0]["message"] == (
        'The disruption budget stray does not allow evicting pods currently because it failed sync: '
        'found no controller ref for pod "stray"'), s
    # two budgets for one pod: the server cannot choose
    budget("web-too", minAvailable=0)
    code, s = evict("w2")
    assert (code, s["message"]) == (500, "This pod has more than one PodDisruptionBudget, which the eviction "
                                         "subresource does not support."), s
    call(apiserver, "DELETE", f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/web-too")
    # real kubectl drain: held by the budget (it retries the 429 until --timeout, saying why each
    # time; stopped here once it has said it), then done
    import subprocess
    kubectl, env = _real_kubectl(apiserver, tmp_path)
    drain = ("drain", "dn1", "--ignore-daemonsets", "--delete-emptydir-data", "--force", f"--timeout={WAIT}s")
    held = subprocess.Popen([kubectl.binary, *drain], env=env, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    said = None
    try:
        for line in held.stderr:
            if "Cannot evict pod as it would violate the pod's disruption budget" in line:
                said = line
                break
    finally:
        held.kill()
        held.wait(WAIT)
    assert said, "kubectl drain was not held by the disruption budget"
    assert call(apiserver, "GET", f"{base}/pods/w2")[0] == 200
    for name in ("web", "stray"):
        call(apiserver, "DELETE", f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/{name}")
    done = kubectl(*drain, check=False)
    assert done.returncode == 0 and "node/dn1 drained" in done.stdout, (done.stdout, done.stderr)
    assert call(apiserver, "GET", f"{base}/pods?fieldSelector=spec.nodeName%3Ddn1")[1]["items"] == []
    call(apiserver, "DELETE", "/api/v1/namespaces/drain"), call(apiserver, "DELETE", "/api/v1/nodes/dn1")


def test_server_refuses_invalid_objects(apiserver):
    code, s = call(apiserver, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment(replicas="two"))
    assert (code, s["kind"], s["status"], s["reason"]) == (422, "Status", "Failure", "Invalid")
    assert s["message"].startswith('Deployment.apps "web" is invalid: spec.replicas:')
    assert s["details"]["causes"][0]["field"] == "spec.replicas"
    assert call(apiserver, "GET", "/apis/apps/v1/namespaces/default/deployments/web")[0] == 404
    code, s = call(apiserver, "POST", "/api/v1/namespaces", {"metadata": {"name": "Bad_Name"}})
    assert code == 422 and s["details"]["causes"][0]["field"] == "metadata.name"
    # dry run validates too
    assert call(apiserver, "POST", "/apis/apps/v1/namespaces/default/deployments?dryRun=All",
                deployment(replicas="two"))[0] == 422


def test_server_generation_status_and_workload_rule(apiserver):
    code, d = call(apiserver, "POST", "/apis/apps/v1/namespaces/default/deployments",
                   {**deployment("gen"), "status": {"replicas": 99}})
    assert code == 201 and d["metadata"]["generation"] == 1
    assert d["status"]["observedGeneration"] == 1 and "readyReplicas" not in d["status"]    # no Ready node yet
    code, d = call(apiserver, "PATCH", "/apis/apps/v1/namespaces/default/deployments/gen",
                   {"metadata": {"labels": {"a": "b"}}}, ctype="application/strategic-merge-patch+json")
    assert d["metadata"]["generation"] == 1
    code, d = call(apiserver, "PATCH", "/apis/apps/v1/namespaces/default/deployments/gen",
                   {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "r.io/x:2"}]}}}},
                   ctype="application/strategic-merge-patch+json")
    assert code == 200 and d["metadata"]["generation"] == 2
    assert [(c["name"], c["image"]) for c in d["spec"]["template"]["spec"]["containers"]] == [("c", "r.io/x:2")]


def test_server_nodes_register_and_get_kubeadm_marks(apiserver):
    n = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
         "status": {"conditions": [logic.ready_condition(False, "2026-01-01T00:00:00Z")],
                    "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}]}}
    code, s = call(apiserver, "POST", "/api/v1/nodes", dict(n, metadata={"name": "n2"}), who="node1")
    assert code == 403      # a kubelet registers its own Node only
    code, made = call(apiserver, "POST", "/api/v1/nodes", n, who="node1")
    assert code == 201 and made["status"]["conditions"][0]["status"] == "False"
    assert "node-role.kubernetes.io/control-plane" in made["metadata"]["labels"]
    assert made["spec"]["taints"][0]["effect"] == "NoSchedule"
    # status only through /status; the main resource keeps it
    code, s = call(apiserver, "PATCH", "/api/v1/nodes/n1", {"status": {"conditions": []}},
                   ctype="application/merge-patch+json", who="node1")
    assert code == 200 and s["status"]["conditions"][0]["type"] == "Ready"
    code, s = call(apiserver, "PATCH", "/api/v1/nodes/n1/status",
                   {"status": {"conditions": [logic.ready_condition(True, "2026-01-01T00:01:00Z")]}},
                   ctype="application/strategic-merge-patch+json", who="node1")
    assert code == 200 and s["status"]["conditions"][0]["status"] == "True"
    assert s["status"]["addresses"] == n["status"]["addresses"]
    # a Ready node makes the Deployment ready (its images exist); a missing image keeps it at 0
    code, d = call(apiserver, "POST", "/apis/apps/v1/namespaces/default/deployments",
                   deployment("ok", tolerations=[{"operator": "Exists"}]))
    assert d["status"]["readyReplicas"] == 2 and d["status"]["availableReplicas"] == 2
    code, d = call(apiserver, "POST", "/apis/apps/v1/namespaces/default/deployments",
                   deployment("bad", image="r.io/missing:1", tolerations=[{"operator": "Exists"}]))
    assert "readyReplicas" not in d["status"]


def test_server_custom_resources(apiserver):
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "ippools.crd.projectcalico.org"},
           "spec": {"group": "crd.projectcalico.org", "scope": "Cluster",
                    "names": {"kind": "IPPool", "plural": "ippools", "singular": "ippool", "listKind": "IPPoolList"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "properties": {"spec": {"type": "object", "properties": {
                            "cidr": {"type": "string"}, "blockSize": {"type": "integer"}}}}}}}]}}
    code, made = call(apiserver, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert code == 201, made
    code, lst = call(apiserver, "GET", "/apis/crd.projectcalico.org/v1")
    assert code == 200 and lst["resources"][0]["name"] == "ippools" and not lst["resources"][0]["namespaced"]
    pool = {"apiVersion": "crd.projectcalico.org/v1", "kind": "IPPool", "metadata": {"name": "p"},
            "spec": {"cidr": "10.244.0.0/16", "blockSize": 26}}
    assert call(apiserver, "POST", "/apis/crd.projectcalico.org/v1/ippools", pool)[0] == 201
    code, s = call(apiserver, "POST", "/apis/crd.projectcalico.org/v1/ippools",
                   dict(pool, metadata={"name": "q"}, spec={"blockSize": "big"}))
    assert code == 422 and s["details"]["causes"][0]["field"] == "spec.blockSize"
    code, s = call(apiserver, "PATCH", "/apis/crd.projectcalico.org/v1/ippools/p", {},
                   ctype="application/strategic-merge-patch+json")
    assert code == 415
    code, dummy = call(apiserver, "DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                                            "ippools.crd.projectcalico.org")
    assert call(apiserver, "GET", "/apis/crd.projectcalico.org/v1")[0] == 404


def test_bootstrap_token_secret_shape(apiserver):
    code, s = call(apiserver, "GET", "/api/v1/namespaces/kube-system/secrets/bootstrap-token-abcdef")
    assert code == 200 and s["type"] == "bootstrap.kubernetes.io/token"
    assert base64.b64decode(s["data"]["token-secret"]).decode() == "0123456789abcdef"


def test_kubelet_registers_and_posts_ready_by_the_cni_rule(apiserver, tmp_path):
    from apiserver_double import kubelet_node
    import yaml
    pki = apiserver["pki"]

    def b64(p):
        return base64.b64encode(p.read_bytes()).decode()
    kc = tmp_path / "kubelet.conf"
    kc.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config",
                                  "clusters": [{"name": "k", "cluster": {"server": apiserver["url"],
                                                                         "certificate-authority-data": b64(pki / "ca.crt")}}],
                                  "users": [{"name": "u", "user": {"client-certificate-data": b64(pki / "node1.crt"),
                                                                   "client-key-data": b64(pki / "node1.key")}}]}))
    cni = tmp_path / "net.d"
    cni.mkdir()
    logs = []
    calls = []

    def once():
        calls.append(1)
        return len(calls) > 1
    flags = {"kubeconfig": str(kc), "hostname-override": "n1", "node-ip": "10.0.0.1"}
    kubelet_node.run(flags, {"maxPods": 50}, "v1.30.4", logs.append, str(cni), stop=once, tick=0.01)
    code, n = call(apiserver, "GET", "/api/v1/nodes/n1")
    ready = next(c for c in n["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "False" and ready["message"] == logic.NOT_READY_MESSAGE, logs
    assert n["status"]["nodeInfo"]["kubeletVersion"] == "v1.30.4" and n["status"]["capacity"]["pods"] == "50"
    assert {"type": "InternalIP", "address": "10.0.0.1"} in n["status"]["addresses"]
    (cni / "10-flannel.conflist").write_text(json.dumps({"name": "cbr0", "plugins": [{"type": "flannel"}]}))
    kubelet_node.run(flags, {}, "v1.30.4", logs.append, str(cni), stop=lambda n=[0]: (n.append(1), len(n) > 2)[1], tick=0.01)
    code, n = call(apiserver, "GET", "/api/v1/nodes/n1")
    assert next(c for c in n["status"]["conditions"] if c["type"] == "Ready")["status"] == "True", logs
    # as the real kubelet (nodeStatusReportFrequency): an unchanged status is read every
    # nodeStatusUpdateFrequency (here every round) but posted only at a run's start (a restarted
    # kubelet) and then once the report frequency has passed (report=0: every round)
    patches = []
    call_api = kubelet_node.KubeconfigClient.call

    def counting(self, method, path, *args):
        patches.extend([path] if method == "PATCH" else [])
        return call_api(self, method, path, *args)
    kubelet_node.KubeconfigClient.call = counting
    try:
        for report, posts in ((300, 1), (0, 4)):
            patches.clear()
            rounds = []
            kubelet_node.run(flags, {}, "v1.30.4", logs.append, str(cni), every=0, tick=0.01, report=report,
                             stop=lambda: (rounds.append(1), len(rounds) > 4)[1])
            assert patches == ["/api/v1/nodes/n1/status"] * posts, (report, patches)
    finally:
        kubelet_node.KubeconfigClient.call = call_api


def test_image_check_follows_containerds_credentials(tmp_path):
    """HEAD /v2/<repo>/manifests/<tag> on a registry over TLS that wants Basic auth: found with the
    credentials of containerd's config.toml and the CA of certs.d/<host>/, missing otherwise."""
    import http.server
    from harness.certs import registry_tls
    from apiserver_double.registry_check import ImageChecker
    d = registry_tls(tmp_path / "tls", names=("localhost",))
    want = "Basic " + base64.b64encode(b"admin:pw").decode()

    class Registry(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self):
            if self.headers.get("Authorization") != want:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="localhost"')
            else:
                self.send_response(200 if self.path == "/v2/library/pause/manifests/3.9" else 404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *a):
            pass
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(d / "registry.crt", d / "registry.key")
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    host = f"localhost:{srv.server_address[1]}"
    (tmp_path / "certs.d" / host).mkdir(parents=True)
    (tmp_path / "certs.d" / host / "ca.crt").write_bytes((d / "ca.crt").read_bytes())
    conf = tmp_path / "config.toml"
    conf.write_text(f'version = 2\n[plugins."io.containerd.grpc.v1.cri".registry.configs."{host}".auth]\n'
                    'username = "admin"\npassword = "pw"\n')
    try:
        ok = ImageChecker(str(conf), str(tmp_path / "certs.d"))
        assert ok.exists(f"{host}/library/pause:3.9")
        assert not ok.exists(f"{host}/library/pause:3.10")
        assert not ImageChecker(str(tmp_path / "none.toml"), str(tmp_path / "certs.d")).exists(
            f"{host}/library/pause:3.9")
        # containerd 2.x's config version 3: the credentials under the images plugin; the v2 table
        # in a version 3 file is not where containerd reads them
        v3 = tmp_path / "v3.toml"
        v3.write_text(f"version = 3\n[plugins.'io.containerd.cri.v1.images'.registry.configs.'{host}'.auth]\n"
                      'username = "admin"\npassword = "pw"\n')
        assert ImageChecker(str(v3), str(tmp_path / "certs.d")).exists(f"{host}/library/pause:3.9")
        v3_old_table = tmp_path / "v3-old-table.toml"
        v3_old_table.write_text(conf.read_text().replace("version = 2", "version = 3"))
        assert not ImageChecker(str(v3_old_table), str(tmp_path / "certs.d")).exists(f"{host}/library/pause:3.9")
    finally:
        srv.shutdown()


def test_health_answers_while_the_kubeadm_state_sync_holds_its_lock(apiserver):
    """keepalived's probe (0.5 s) must not wait behind the kubeadm state sync, which writes to etcd
    under a lock and can take seconds on a loaded host: a real API server's /healthz waits behind
    no write. With the sync's lock held, /healthz, /readyz and /livez still answer at once."""
    api = apiserver["api"]
    with api._sync_lock:   # pylint: disable=protected-access
        for path in ("/healthz", "/readyz", "/livez"):
            assert call(apiserver, "GET", path, who=None) == (200, "ok"), path


# ------------------------------------------------------------------ as kube-apiserver answers real clients
def call_h(apiserver, method, path, body=None, ctype="application/json", accept=None, raw=None):
    """call() with the response headers (Warning) and any Accept."""
    ctx = ssl.create_default_context(cafile=str(apiserver["pki"] / "ca.crt"))
    ctx.load_cert_chain(apiserver["pki"] / "admin.crt", apiserver["pki"] / "admin.key")
    headers = {"Content-Type": ctype, **({"Accept": accept} if accept else {})}
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(apiserver["url"] + path, data, headers, method=method)
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=WAIT) as r:
            return r.status, json.loads(r.read()), r.headers.get_all("Warning") or []
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read()), e.headers.get_all("Warning") or []


def test_server_openapi_v3_from_the_validation_schemas(apiserver):
    """kubectl reads /openapi/v3: the group/version document lists a PATCH with the kind's
    x-kubernetes-group-version-kind and the fieldValidation parameter (so it leaves validation to the
    server: cli-runtime query_param_verifier_v3.go), and schemas with the patch merge keys."""
    code, root, dummy = call_h(apiserver, "GET", "/openapi/v3")
    assert code == 200 and {"api/v1", "apis/apps/v1", "apis/rbac.authorization.k8s.io/v1"} <= set(root["paths"])
    url = root["paths"]["apis/apps/v1"]["serverRelativeURL"]
    assert url.startswith("/openapi/v3/apis/apps/v1?hash=")
    code, doc, dummy = call_h(apiserver, "GET", url)
    assert code == 200 and doc["openapi"].startswith("3.")
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "apps", "version": "v1", "kind": "Deployment"}
    assert {"name": "fieldValidation", "in": "query"}.items() <= next(
        p for p in patch["parameters"] if p["name"] == "fieldValidation").items()
    schemas = doc["components"]["schemas"]
    assert schemas["io.k8s.api.apps.v1.Deployment"]["x-kubernetes-group-version-kind"][0]["kind"] == "Deployment"
    containers = schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name" and containers["type"] == "array"
    assert containers["items"]["$ref"] == "#/components/schemas/io.k8s.api.core.v1.Container"
    # the same schemas the double validates with: kubernetes-validate's for this version
    import kubernetes_validate.utils as kvu
    assert set(schemas) <= set(kvu.schema_contents("kubernetes-json-schema/v1.30.0-local/_definitions.json",
                                                   "1.30.4")["$defs"])
    code, v2, dummy = call_h(apiserver, "GET", "/openapi/v2", accept="application/json")
    assert code == 200 and v2["swagger"] == "2.0" and "io.k8s.api.apps.v1.DaemonSet" in v2["definitions"]
    assert call_h(apiserver, "GET", "/openapi/v3/apis/nope/v1")[0] == 404


def node_info(version="v1.30.4"):
    return {k: "x" for k in ("architecture", "bootID", "containerRuntimeVersion", "kernelVersion", "kubeProxyVersion",
                             "machineID", "operatingSystem", "osImage", "systemUUID")} | {"kubeletVersion": version}


TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"


def test_server_table_output(apiserver):
    call(apiserver, "POST", "/api/v1/nodes", {"metadata": {"name": "tbl", "labels": {
        "node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/etcd": ""}},
        "status": {"conditions": [{"type": "Ready", "status": "False"}], "nodeInfo": node_info()}})
    code, t, dummy = call_h(apiserver, "GET", "/api/v1/nodes/tbl", accept=TABLE)
    assert code == 200 and (t["kind"], t["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    assert [c["name"] for c in t["columnDefinitions"] if c["priority"] == 0] == [
        "Name", "Status", "Roles", "Age", "Version"]
    cells = t["rows"][0]["cells"]
    assert cells[:3] == ["tbl", "NotReady", "control-plane,etcd"] and cells[4] == "v1.30.4"
    assert t["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    # any other kind: the default convertor's Name / Created At; a list has every row
    code, t, dummy = call_h(apiserver, "GET", "/apis/coordination.k8s.io/v1/leases?includeObject=Object", accept=TABLE)
    assert code == 200 and [c["name"] for c in t["columnDefinitions"]] == ["Name", "Created At"]
    code, t, dummy = call_h(apiserver, "GET", "/api/v1/namespaces", accept=TABLE)
    assert [c["name"] for c in t["columnDefinitions"]] == ["Name", "Status", "Age"]
    assert {r["cells"][0] for r in t["rows"]} >= {"default", "kube-system"}
    # without the Table media type: the object as before
    code, n, dummy = call_h(apiserver, "GET", "/api/v1/nodes/tbl")
    assert n["kind"] == "Node"


def test_human_duration():
    from apiserver_double.tables import human_duration
    assert [human_duration(s) for s in (5, 119, 150, 600, 3 * 3600 + 60, 9 * 3600, 3 * 86400 + 3600, 400 * 86400)] == [
        "5s", "119s", "2m30s", "10m", "3h1m", "9h", "3d1h", "400d"]


def test_server_watch_streams_events(apiserver):
    """?watch=true&resourceVersion=N: ADDED/MODIFIED/DELETED events after N, chunked JSON lines,
    filtered by the field selector. Each change waits for the event of the one before it (the
    double polls its store), so the order holds however loaded the machine is."""
    import queue
    code, lst = call(apiserver, "GET", "/api/v1/namespaces/default/configmaps")
    rv = lst["metadata"]["resourceVersion"]
    connected, events = threading.Event(), queue.Queue()

    def watch():
        ctx = ssl.create_default_context(cafile=str(apiserver["pki"] / "ca.crt"))
        ctx.load_cert_chain(apiserver["pki"] / "admin.crt", apiserver["pki"] / "admin.key")
        req = urllib.request.Request(apiserver["url"] + "/api/v1/namespaces/default/configmaps?watch=true"
                                     f"&resourceVersion={rv}&timeoutSeconds={WAIT}&fieldSelector=metadata.name%3Dw1")
        with urllib.request.urlopen(req, context=ctx, timeout=WAIT) as r:
            connected.set()
            for line in r:
                ev = json.loads(line)
                events.put(ev)
                if ev["type"] == "DELETED":
                    break
    t = threading.Thread(target=watch, daemon=True)
    t.start()
    assert connected.wait(WAIT)
    seen = []

    def change(method, path, body=None, **kw):
        call(apiserver, method, path, body, **kw)
        e = events.get(timeout=WAIT)
        seen.append((e["type"], e["object"]["metadata"]["name"], (e["object"].get("data") or {}).get("a")))
    call(apiserver, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "w2"}})
    change("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "w1"}, "data": {"a": "1"}})
    change("PATCH", "/api/v1/namespaces/default/configmaps/w1", {"data": {"a": "2"}}, ctype="application/merge-patch+json")
    change("DELETE", "/api/v1/namespaces/default/configmaps/w1")
    t.join(WAIT)
    assert seen == [("ADDED", "w1", "1"), ("MODIFIED", "w1", "2"), ("DELETED", "w1", "2")] and events.empty()
    call(apiserver, "DELETE", "/api/v1/namespaces/default/configmaps/w2")


def test_server_field_validation_warn_is_the_default(apiserver):
    """No fieldValidation: the unknown field is dropped and named in a Warning header (299);
    Strict: 400 strict decoding error; Ignore: dropped, no warning."""
    d = deployment("fv")
    d["spec"]["bogus"] = 1
    d["spec"]["template"]["spec"]["containers"][0]["colour"] = "red"
    code, got, warn = call_h(apiserver, "POST", "/apis/apps/v1/namespaces/default/deployments", d)
    assert code == 201 and "bogus" not in got["spec"] and "colour" not in got["spec"]["template"]["spec"]["containers"][0]
    assert sorted(warn) == sorted(['299 - "unknown field \\"spec.bogus\\""',
                                   '299 - "unknown field \\"spec.template.spec.containers[0].colour\\""'])
    d["metadata"]["name"] = "fv2"
    code, s, warn = call_h(apiserver, "POST", "/apis/apps/v1/namespaces/default/deployments?fieldValidation=Strict", d)
    assert code == 400 and "strict decoding error: unknown field" in s["message"]
    code, got, warn = call_h(apiserver, "POST", "/apis/apps/v1/namespaces/default/deployments?fieldValidation=Ignore", d)
    assert code == 201 and warn == [] and "bogus" not in got["spec"]
    assert call_h(apiserver, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Loud",
                  {"metadata": {"name": "x"}})[0] == 400


def test_server_field_validation_strict_names_every_unknown_field(apiserver):
    """Strict refuses with every unknown field of the body, at any depth, in one strict decoding
    error (runtime.NewStrictDecodingError joins them), not only those of the first object found."""
    d = deployment("fvall")
    d["spec"]["bogus"] = 1
    d["spec"]["template"]["spec"]["containers"][0]["colour"] = "red"
    code, s, dummy = call_h(apiserver, "POST", "/apis/apps/v1/namespaces/default/deployments?fieldValidation=Strict", d)
    assert code == 400, s
    assert s["message"].startswith('Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: ')
    assert sorted(c["field"] for c in s["details"]["causes"]) == ["spec.bogus", "spec.template.spec.containers[0].colour"]
    assert call(apiserver, "GET", "/apis/apps/v1/namespaces/default/deployments/fvall")[0] == 404


@pytest.mark.parametrize("given,want", [
    ("1000m", "1"), ("0.5", "500m"), ("1024Mi", "1Gi"), ("1536Mi", "1536Mi"), ("1000", "1k"), ("1500", "1500"),
    ("100m", "100m"), ("1Gi", "1Gi"), ("512Ki", "512Ki"), ("0.1", "100m"), (2, "2"), ("1e3", "1e3"),
    ("0.0000000001", "1n"), ("128974848", "128974848"), ("129e6", "129e6"), ("123Mi", "123Mi"), ("0", "0")])
def test_quantities_are_canonical(given, want):
    """resource.Quantity's canonical form (apimachinery/pkg/api/resource/quantity.go, its tests)."""
    from apiserver_double.defaults import canonical_quantity
    assert canonical_quantity(given) == want


def test_server_defaults_on_create_update_patch_and_dry_run(apiserver):
    base = "/apis/apps/v1/namespaces/default/"
    d = deployment("dft")
    d["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1000m", "memory": "1024Mi"}}
    for q in ("?dryRun=All", ""):
        code, got = call(apiserver, "POST", base + "deployments" + q, d)
        assert code == 201
        s = got["spec"]
        assert s["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
        assert (s["revisionHistoryLimit"], s["progressDeadlineSeconds"]) == (10, 600)
        ps = s["template"]["spec"]
        assert (ps["restartPolicy"], ps["dnsPolicy"], ps["schedulerName"]) == (
            "Always", "ClusterFirst", "default-scheduler")
        c = ps["containers"][0]
        assert c["resources"]["requests"] == {"cpu": "1", "memory": "1Gi"} and c["imagePullPolicy"] == "IfNotPresent"
    # patch: the result is defaulted too
    code, got = call(apiserver, "PATCH", base + "deployments/dft", {"spec": {"strategy": {"type": "Recreate",
                                                                                          "rollingUpdate": None}}},
                     ctype="application/merge-patch+json")
    assert code == 200 and got["spec"]["strategy"] == {"type": "Recreate"}
    code, got = call(apiserver, "PATCH", base + "deployments/dft",
                     {"spec": {"template": {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "0.5"}}}]}}}},
                     ctype="application/strategic-merge-patch+json")
    assert got["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "500m"}
    # update (PUT) without the defaulted fields: defaulted again
    cur = call(apiserver, "GET", base + "deployments/dft")[1]
    del cur["spec"]["revisionHistoryLimit"]
    code, got = call(apiserver, "PUT", base + "deployments/dft", cur)
    assert code == 200 and got["spec"]["revisionHistoryLimit"] == 10
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "dds"},
          "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}},
                                                                         "spec": {"containers": [{"name": "c", "image": "x"}]}}}}
    code, got = call(apiserver, "POST", base + "daemonsets", ds)
    assert code == 201, got["message"]
    assert got["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert got["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "Always"     # no tag: latest
    sts = {**ds, "kind": "StatefulSet", "metadata": {"name": "dsts"}, "spec": {**ds["spec"], "serviceName": "s"}}
    code, got = call(apiserver, "POST", base + "statefulsets", sts)
    assert code == 201, got["message"]
    assert got["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert (got["spec"]["podManagementPolicy"], got["spec"]["replicas"]) == ("OrderedReady", 1)
    code, got = call(apiserver, "POST", "/api/v1/namespaces/default/services",
                     {"metadata": {"name": "dsvc"}, "spec": {"selector": {"a": "b"}, "ports": [{"port": 80}]}})
    assert got["spec"]["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    assert (got["spec"]["type"], got["spec"]["sessionAffinity"]) == ("ClusterIP", "None")
    code, got = call(apiserver, "POST", "/api/v1/namespaces/default/secrets",
                     {"metadata": {"name": "dsec"}, "stringData": {"pw": "s3cret"}, "data": {"pw": "eA==", "u": "eQ=="}})
    assert code == 201 and "stringData" not in got and got["type"] == "Opaque"
    assert got["data"] == {"pw": base64.b64encode(b"s3cret").decode(), "u": "eQ=="}


def test_server_decodes_protobuf_secrets(apiserver):
    """What helm's release storage sends (client-go typed clientset, protobuf)."""
    def fld(num, payload):
        def varint(n):
            out = b""
            while True:
                b = n & 0x7F
                n >>= 7
                out += bytes([b | (0x80 if n else 0)])
                if not n:
                    return out
        return varint(num << 3 | 2) + varint(len(payload)) + payload
    meta = fld(1, b"pb1") + fld(11, fld(1, b"owner") + fld(2, b"helm"))
    secret = fld(1, meta) + fld(2, fld(1, b"release") + fld(2, b"\x00\xffbin")) + fld(3, b"helm.sh/release.v1")
    body = b"k8s\x00" + fld(1, fld(1, b"v1") + fld(2, b"Secret")) + fld(2, secret)
    code, got, dummy = call_h(apiserver, "POST", "/api/v1/namespaces/default/secrets", raw=body,
                              ctype="application/vnd.kubernetes.protobuf")
    assert code == 201, got["message"]
    assert (got["metadata"]["name"], got["metadata"]["labels"], got["type"]) == ("pb1", {"owner": "helm"},
                                                                                 "helm.sh/release.v1")
    assert base64.b64decode(got["data"]["release"]) == b"\x00\xffbin"
    body = b"k8s\x00" + fld(1, fld(1, b"apps/v1") + fld(2, b"Deployment")) + fld(2, b"")
    assert call_h(apiserver, "POST", "/apis/apps/v1/namespaces/default/deployments", raw=body,
                  ctype="application/vnd.kubernetes.protobuf")[0] == 415


def _kubeconfig(apiserver, path):
    def b64(p):
        return base64.b64encode((apiserver["pki"] / p).read_bytes()).decode()
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "t",
        "clusters": [{"name": "t", "cluster": {"server": apiserver["url"], "certificate-authority-data": b64("ca.crt")}}],
        "users": [{"name": "t", "user": {"client-certificate-data": b64("admin.crt"), "client-key-data": b64("admin.key")}}],
        "contexts": [{"name": "t", "context": {"cluster": "t", "user": "t"}}]}))
    return path


def _real_kubectl(apiserver, tmp_path, minor="1.30"):
    """The official kubectl (tests/harness/real_clients.py; of the double's minor unless told another)
    speaking to the double through an admin kubeconfig: kubectl(*args, check=True) -> the finished
    process, and the environment it runs in (a test may add to it: helm runs in it too)."""
    import subprocess
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from harness import real_clients
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "KUBECONFIG": str(_kubeconfig(apiserver, tmp_path / "kc"))}

    def kubectl(*args, check=True):
        r = subprocess.run([kubectl.binary, *args], env=env, capture_output=True, text=True,
                           timeout=WAIT, check=False)
        assert r.returncode == 0 or not check, (args, r.stdout, r.stderr)
        return r
    kubectl.binary = str(real_clients.kubectl(minor))   # for a test that runs it itself (Popen)
    return kubectl, env


def test_a_streaming_list_ends_its_initial_events_with_a_bookmark(apiserver, tmp_path):
    """sendInitialEvents=true (the watch-list kubectl sends from 1.35): the current objects as ADDED,
    then a BOOKMARK annotated k8s.io/initial-events-end at their revision, then the changes; refused
    (422) without resourceVersionMatch=NotOlderThan. Real kubectl 1.36's rollout status ends on it."""
    assert call(apiserver, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "s1"}})[0] == 201
    base = "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&allowWatchBookmarks=true"
    code, s = call(apiserver, "GET", base)
    assert (code, s["reason"], s["details"]["causes"][0]["field"]) == (422, "Invalid", "resourceVersionMatch"), s
    ctx = ssl.create_default_context(cafile=str(apiserver["pki"] / "ca.crt"))
    ctx.load_cert_chain(apiserver["pki"] / "admin.crt", apiserver["pki"] / "admin.key")
    req = urllib.request.Request(apiserver["url"] + base + "&resourceVersionMatch=NotOlderThan&timeoutSeconds=1")
    with urllib.request.urlopen(req, context=ctx, timeout=WAIT) as r:
        events = [json.loads(line) for line in r]
    names = [e["object"]["metadata"].get("name") for e in events if e["type"] == "ADDED"]
    mark = [e for e in events if e["type"] == "BOOKMARK"]
    assert "s1" in names and len(mark) == 1 and events.index(mark[0]) == len(names), events
    assert mark[0]["object"]["kind"] == "ConfigMap" and mark[0]["object"]["metadata"]["annotations"] == {
        "k8s.io/initial-events-end": "true"}
    assert int(mark[0]["object"]["metadata"]["resourceVersion"]) >= max(
        int(e["object"]["metadata"]["resourceVersion"]) for e in events if e["type"] == "ADDED")
    call(apiserver, "DELETE", "/api/v1/namespaces/default/configmaps/s1")
    kubectl = _real_kubectl(apiserver, tmp_path, "1.36")[0]
    call(apiserver, "POST", "/api/v1/nodes", {"metadata": {"name": "sn1"}, "status": {
        "conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": node_info()}})
    assert call(apiserver, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("sdep"))[0] == 201
    done = kubectl("rollout", "status", "deploy/sdep", f"--timeout={WAIT}s")
    assert 'deployment "sdep" successfully rolled out' in done.stdout and "bookmark" not in done.stderr, done.stderr
    call(apiserver, "DELETE", "/apis/apps/v1/namespaces/default/deployments/sdep")
    call(apiserver, "DELETE", "/api/v1/nodes/sn1")


def test_real_kubectl_and_helm_against_the_double(apiserver, tmp_path):
    """The official kubectl (of the double's minor) and helm 3 binaries (tests/harness/real_clients.py):
    apply -f (kubectl's default validation, then unchanged), get nodes as a Table, rollout status of a
    DaemonSet and a Deployment (list + watch), helm install / upgrade / uninstall."""
    import subprocess
    kubectl, env = _real_kubectl(apiserver, tmp_path)
    from harness import real_clients
    call(apiserver, "POST", "/api/v1/nodes", {
        "metadata": {"name": "kn1", "labels": {"role": "k"}},
        "status": {"conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": node_info()}})
    out = kubectl("get", "nodes", "kn1").stdout.splitlines()
    assert out[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"] and out[1].split()[:3] == ["kn1", "Ready",
                                                                                                      "<none>"]
    (tmp_path / "app.yaml").write_text(
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: kds, namespace: default}\nspec:\n"
        "  selector: {matchLabels: {app: kds}}\n  template:\n    metadata: {labels: {app: kds}}\n"
        "    spec:\n      nodeSelector: {role: k}\n      containers: [{name: c, image: 'r.io/net:1'}]\n---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: kdep, namespace: default}\nspec:\n"
        "  selector: {matchLabels: {app: kdep}}\n  template:\n    metadata: {labels: {app: kdep}}\n"
        "    spec:\n      containers: [{name: c, image: 'r.io/web:1'}]\n")
    assert kubectl("apply", "-f", str(tmp_path / "app.yaml")).stdout.split("\n")[:2] == [
        "daemonset.apps/kds created", "deployment.apps/kdep created"]
    assert "unchanged" in kubectl("apply", "-f", str(tmp_path / "app.yaml")).stdout
    assert 'daemon set "kds" successfully rolled out' in kubectl("rollout", "status", "ds/kds", f"--timeout={WAIT}s").stdout
    assert 'deployment "kdep" successfully rolled out' in kubectl("rollout", "status", "deploy/kdep",
                                                                  f"--timeout={WAIT}s").stdout
    # a typo: kubectl's default (Strict, sent to the server) refuses it, naming the field
    (tmp_path / "bad.yaml").write_text((tmp_path / "app.yaml").read_text().replace("image: 'r.io/web:1'",
                                                                                   "image: 'r.io/web:1', colour: x"))
    r = kubectl("apply", "-f", str(tmp_path / "bad.yaml"), check=False)
    assert r.returncode != 0 and 'unknown field "spec.template.spec.containers[0].colour"' in r.stderr
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: demo\nversion: 0.1.0\n")
    (chart / "templates" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: demo-cm}\ndata: {v: {{ .Values.v | quote }}}\n")
    env.update(HELM_CACHE_HOME=str(tmp_path / "hc"), HELM_CONFIG_HOME=str(tmp_path / "hcfg"),
               HELM_DATA_HOME=str(tmp_path / "hd"))

    def helm(*args):
        r = subprocess.run([str(real_clients.helm()), *args], env=env, capture_output=True, text=True, timeout=WAIT,
                           check=False)
        assert r.returncode == 0, (args, r.stdout, r.stderr)
        return r.stdout
    helm("install", "demo", str(chart), "--set", "v=1", "-n", "default")
    helm("upgrade", "demo", str(chart), "--set", "v=2", "-n", "default")
    assert call(apiserver, "GET", "/api/v1/namespaces/default/configmaps/demo-cm")[1]["data"] == {"v": "2"}
    assert "deployed" in helm("list", "-n", "default")
    helm("uninstall", "demo", "-n", "default")
    assert call(apiserver, "GET", "/api/v1/namespaces/default/configmaps/demo-cm")[0] == 404


# ------------------------------------------------------------------ server-side apply and managedFields (apply.py)
def _ssa_schema():
    from apiserver_double import apply as ssa
    return ssa, ssa.schema_for(DEPLOY, "1.30.4")


def test_ssa_field_set_is_encoded_as_fieldsv1():
    """What an applied configuration sets (SMD typed/tofieldset.go) in the FieldsV1 encoding
    (fieldpath/serialize.go, serialize-pe.go): `f:` fields, `k:{...}` items of associative lists by
    their keys (containers by name, ports by containerPort+protocol with protocol's default, env by
    name), `v:` set items (finalizers), `.` where an owned item has owned children; the selector
    (x-kubernetes-map-type atomic) and args (atomic list) as leaves; labels' keys are fields."""
    ssa, sch = _ssa_schema()
    d = deployment("enc")
    d["metadata"].update(labels={"app": "enc"}, finalizers=["example.com/x"])
    d["spec"]["template"]["spec"]["containers"][0].update(args=["-v"], ports=[{"containerPort": 80}],
                                                          env=[{"name": "A", "value": "1"}])
    got = ssa.encode(ssa.field_set(d, sch) - ssa.STRIPPED)
    assert got == {
        "f:metadata": {"f:finalizers": {'v:"example.com/x"': {}}, "f:labels": {"f:app": {}}},
        "f:spec": {"f:replicas": {}, "f:selector": {}, "f:template": {
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:containers": {'k:{"name":"c"}': {
                ".": {}, "f:args": {}, "f:env": {'k:{"name":"A"}': {".": {}, "f:name": {}, "f:value": {}}},
                "f:image": {}, "f:name": {},
                "f:ports": {'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}}}}}}}}
    assert list(got["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"c"}'])[:2] == [".", "f:args"]
    assert ssa.decode(got) == ssa.field_set(d, sch) - ssa.STRIPPED
    assert ssa.path_string(("f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"c"}', "f:image")) == \
        '.spec.template.spec.containers[name="c"].image'
    assert ssa.path_string(("f:metadata", "f:finalizers", 'v:"x"')) == '.metadata.finalizers[="x"]'
    assert ssa.default_manager("kubectl/v1.30.0 (linux/amd64) kubernetes/7c48c2b") == "kubectl"
    assert ssa.default_manager("Python-urllib/3.11") == "Python-urllib"


def test_ssa_merge_ownership_conflicts_force_and_pruning():
    """merge/update.go Apply and Update: the configuration merges into the live object (containers by
    name, the atomic args replaced); an Update takes what it changes from the appliers; a changed
    value owned by another manager is a 409 Conflict worded as conflict.go; force takes it over;
    the same value is shared; what the applier no longer applies goes unless someone else owns it."""
    ssa, sch = _ssa_schema()
    cfg = deployment("own")
    cfg["metadata"]["labels"] = {"app": "own", "tier": "web"}
    cfg["spec"]["template"]["spec"]["containers"][0]["args"] = ["-a", "-b"]
    live, mgrs = ssa.apply(None, cfg, sch, ssa.Managers(), "ci", "apps/v1", "t1")
    assert live == cfg and [(e["manager"], e["operation"], e["time"]) for e in mgrs.to_list()] == [("ci", "Apply", "t1")]
    # another client (an Update) scales and adds a sidecar
    scaled = json.loads(json.dumps(live))
    scaled["spec"]["replicas"] = 5
    scaled["spec"]["template"]["spec"]["containers"].append({"name": "side", "image": "s:1"})
    mgrs = ssa.update(live, scaled, sch, mgrs, "hpa", "apps/v1", "t2")
    ent = {e["manager"]: e for e in mgrs.to_list()}
    assert ent["hpa"]["operation"] == "Update" and ent["hpa"]["fieldsV1"] == {"f:spec": {"f:replicas": {}, "f:template": {
        "f:spec": {"f:containers": {'k:{"name":"side"}': {".": {}, "f:image": {}, "f:name": {}}}}}}}
    assert "f:replicas" not in ent["ci"]["fieldsV1"]["f:spec"]
    # the applier changes replicas (owned by hpa now), image and args: one conflict
    cfg2 = json.loads(json.dumps(cfg))
    cfg2["spec"]["replicas"] = 3
    cfg2["spec"]["template"]["spec"]["containers"][0].update(image="registry.tke.com/library/nginx:1.26", args=["-c"])
    with pytest.raises(ApiError) as e:
        ssa.apply(scaled, cfg2, sch, ssa.Managers(mgrs.to_list()), "ci", "apps/v1", "t3")
    st = e.value.status()
    assert (st["code"], st["reason"]) == (409, "Conflict")
    assert st["message"] == 'Apply failed with 1 conflict: conflict with "hpa" using apps/v1: .spec.replicas'
    assert st["details"]["causes"] == [{"type": "FieldManagerConflict", "message": 'conflict with "hpa" using apps/v1',
                                        "field": ".spec.replicas"}]
    # the same value as hpa's: shared, no conflict; merged by name, the atomic args replaced
    cfg2["spec"]["replicas"] = 5
    shared, m2 = ssa.apply(scaled, cfg2, sch, ssa.Managers(mgrs.to_list()), "ci", "apps/v1", "t3")
    new = shared
    assert [c["name"] for c in new["spec"]["template"]["spec"]["containers"]] == ["c", "side"]
    assert new["spec"]["template"]["spec"]["containers"][0]["args"] == ["-c"]
    assert all("f:replicas" in x["fieldsV1"]["f:spec"] for x in m2.to_list())
    # force: the field is taken, hpa keeps the rest
    cfg2["spec"]["replicas"] = 3
    new, m3 = ssa.apply(scaled, cfg2, sch, ssa.Managers(mgrs.to_list()), "ci", "apps/v1", "t4", force=True)
    ent = {x["manager"]: x for x in m3.to_list()}
    assert new["spec"]["replicas"] == 3 and "f:replicas" not in ent["hpa"]["fieldsV1"]["f:spec"]
    assert "f:replicas" in ent["ci"]["fieldsV1"]["f:spec"]
    # what the applier no longer applies and owns alone goes (a label, the args, replicas - which the
    # server then defaults); hpa's container stays
    cfg3 = json.loads(json.dumps(cfg2))
    del cfg3["metadata"]["labels"]["tier"], cfg3["spec"]["template"]["spec"]["containers"][0]["args"]
    del cfg3["spec"]["replicas"]
    new4, dummy = ssa.apply(new, cfg3, sch, ssa.Managers(m3.to_list()), "ci", "apps/v1", "t5")
    assert new4["metadata"]["labels"] == {"app": "own"} and "args" not in new4["spec"]["template"]["spec"]["containers"][0]
    assert "replicas" not in new4["spec"]
    assert [c["name"] for c in new4["spec"]["template"]["spec"]["containers"]] == ["c", "side"]
    # a field another manager still owns stays when the applier drops it
    new5, m5 = ssa.apply(shared, cfg3, sch, ssa.Managers(m2.to_list()), "ci", "apps/v1", "t6")
    ent = {x["manager"]: x for x in m5.to_list()}
    assert new5["spec"]["replicas"] == 5 and "f:replicas" not in ent["ci"]["fieldsV1"]["f:spec"]
    assert "f:replicas" in ent["hpa"]["fieldsV1"]["f:spec"]
    # two conflicts, with two managers: conflict.go's list form, managers sorted
    m6 = ssa.update(new5, {**new5, "metadata": {**new5["metadata"], "labels": {"app": "own", "x": "1"}}}, sch, m5,
                    "ops", "apps/v1", "t7")
    cfg4 = json.loads(json.dumps(cfg3))
    cfg4["metadata"]["labels"]["x"] = "2"
    cfg4["spec"]["replicas"] = 9
    with pytest.raises(ApiError) as e:
        ssa.apply(new5, cfg4, sch, m6, "ci", "apps/v1", "t8")
    assert e.value.message == ('Apply failed with 2 conflicts: conflicts with "hpa" using apps/v1:\n- .spec.replicas\n'
                               'conflicts with "ops" using apps/v1:\n- .metadata.labels.x')


def apply_call(apiserver, path, body, query="fieldManager=ci", ctype="application/apply-patch+yaml"):
    return call(apiserver, "PATCH", f"{path}?{query}" if query else path, body, ctype=ctype)


def test_server_side_apply_creates_prunes_conflicts_and_forces(apiserver):
    """PATCH application/apply-patch+yaml (handlers/patch.go, fieldmanager): fieldManager required
    (422 as ValidatePatchOptions), force only for apply; creates (201) with an Apply entry; a second
    apply without a label removes it; a merge patch by another manager records an Update entry and
    takes the field; applying another value then is a 409 naming it, force takes it back; a YAML
    body; dryRun stores nothing; managedFields cannot be applied."""
    path = "/api/v1/namespaces/default/configmaps/ssa-cm"
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa-cm", "labels": {"a": "1", "b": "2"}},
          "data": {"k": "v", "n": "1"}}
    code, s = apply_call(apiserver, path, cm, query="")
    assert (code, s["details"]["causes"]) == (422, [{"reason": "FieldValueRequired", "field": "fieldManager",
                                                     "message": "Required value: is required for apply patch"}])
    code, s = call(apiserver, "PATCH", path + "?force=true", {"data": {}}, ctype="application/merge-patch+json")
    assert (code, s["message"]) == (422, 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be '
                                         "specified for non-apply patch")
    code, dry = apply_call(apiserver, path, cm, "fieldManager=ci&dryRun=All")
    assert code == 201 and dry["metadata"]["managedFields"][0]["manager"] == "ci"
    assert call(apiserver, "GET", path)[0] == 404
    code, made = apply_call(apiserver, path, cm)
    assert code == 201 and made["data"] == cm["data"]
    assert [{k: v for k, v in e.items() if k != "time"} for e in made["metadata"]["managedFields"]] == [
        {"manager": "ci", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:data": {"f:k": {}, "f:n": {}}, "f:metadata": {"f:labels": {"f:a": {}, "f:b": {}}}}}]
    # the same configuration again: unchanged, same resourceVersion
    code, again = apply_call(apiserver, path, cm)
    assert code == 200 and again["metadata"]["resourceVersion"] == made["metadata"]["resourceVersion"]
    # a label dropped from the configuration is removed (YAML body)
    yml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa-cm\n  labels: {a: '1'}\ndata: {k: v, n: '1'}\n"
    code, out, dummy = call_h(apiserver, "PATCH", path + "?fieldManager=ci", ctype="application/apply-patch+yaml",
                              raw=yml.encode())
    assert code == 200 and out["metadata"]["labels"] == {"a": "1"}
    # another client's merge patch (an Update, its fieldManager) takes data.n
    code, p = call(apiserver, "PATCH", path + "?fieldManager=ops", {"data": {"n": "2"}},
                   ctype="application/merge-patch+json")
    assert code == 200
    ops = next(e for e in p["metadata"]["managedFields"] if e["manager"] == "ops")
    assert (ops["operation"], ops["apiVersion"], ops["fieldsV1"]) == ("Update", "v1", {"f:data": {"f:n": {}}})
    code, s = apply_call(apiserver, path, dict(cm, metadata={"name": "ssa-cm"}))
    assert (code, s["reason"], s["message"]) == (409, "Conflict", 'Apply failed with 1 conflict: conflict with "ops" '
                                                                  "using v1: .data.n")
    assert s["details"]["causes"] == [{"type": "FieldManagerConflict", "message": 'conflict with "ops" using v1',
                                       "field": ".data.n"}]
    code, forced = apply_call(apiserver, path, dict(cm, metadata={"name": "ssa-cm"}), "fieldManager=ci&force=true")
    assert code == 200 and forced["data"]["n"] == "1" and "labels" not in forced["metadata"]
    assert [e["manager"] for e in forced["metadata"]["managedFields"]] == ["ci"]
    code, s = apply_call(apiserver, path, dict(cm, metadata={"name": "ssa-cm", "managedFields": [{"manager": "x"}]}))
    assert (code, s["message"]) == (400, "metadata.managedFields must be nil")
    code, s = apply_call(apiserver, path, dict(cm, apiVersion="v2"))
    assert code == 400 and s["message"].startswith("Incorrect version specified in apply patch")
    # fieldValidation as for every write: Strict refuses an unknown field, Warn drops it (not managed)
    code, s = apply_call(apiserver, path, dict(cm, bogus=1), "fieldManager=ci&fieldValidation=Strict")
    assert (code, s["reason"]) == (400, "BadRequest") and 'unknown field "bogus"' in s["message"]
    code, out, warn = call_h(apiserver, "PATCH", path + "?fieldManager=ci", dict(cm, bogus=1),
                             ctype="application/apply-patch+yaml")
    assert code == 200 and "bogus" not in out and warn == ['299 - "unknown field \\"bogus\\""']
    assert "f:bogus" not in out["metadata"]["managedFields"][0]["fieldsV1"]


def test_server_records_update_managers_and_keeps_managed_fields(apiserver):
    """Writes that are not applies record an Update entry for their manager: the fieldManager
    parameter, else the User-Agent before its first "/" (handlers/rest.go); a PUT without
    managedFields keeps the stored ones, `[{}]` clears them (fieldmanager.go); a status write is
    recorded with subresource "status"; a custom resource is applied by its CRD's list types."""
    path = "/apis/apps/v1/namespaces/default/deployments/upd"
    code, made = call(apiserver, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("upd"))
    assert code == 201
    (e,) = made["metadata"]["managedFields"]
    assert (e["manager"], e["operation"], e["apiVersion"]) == ("Python-urllib", "Update", "apps/v1")
    assert e["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"c"}']["f:image"] == {}
    body = dict(made, spec=dict(made["spec"], replicas=4))
    del body["metadata"]["managedFields"]
    code, upd = call(apiserver, "PUT", path + "?fieldManager=editor", body)
    assert code == 200 and [x["manager"] for x in upd["metadata"]["managedFields"]] == ["Python-urllib", "editor"]
    assert upd["metadata"]["managedFields"][1]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    code, st = call(apiserver, "PUT", path + "/status?fieldManager=ctl",
                    dict(upd, status={"observedGeneration": 1}))
    assert code == 200 and st["metadata"]["managedFields"][-1]["subresource"] == "status"
    code, s = apply_call(apiserver, path, dict(deployment("upd", replicas=6), metadata={"name": "upd"}))
    assert code == 409 and s["message"] == ('Apply failed with 1 conflict: conflict with "editor" using apps/v1: '
                                            ".spec.replicas")
    cleared = dict(upd, metadata=dict(upd["metadata"], managedFields=[{}]))
    del cleared["metadata"]["resourceVersion"]
    code, c = call(apiserver, "PUT", path + "?fieldManager=editor", cleared)
    assert code == 200 and "managedFields" not in c["metadata"]
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "routes.ssa.example.com"},
           "spec": {"group": "ssa.example.com", "scope": "Namespaced",
                    "names": {"kind": "Route", "plural": "routes", "singular": "route"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "properties": {"spec": {"type": "object", "properties": {
                            "hosts": {"type": "array", "items": {"type": "string"}},
                            "rules": {"type": "array", "x-kubernetes-list-type": "map",
                                      "x-kubernetes-list-map-keys": ["path"],
                                      "items": {"type": "object", "properties": {
                                          "path": {"type": "string"}, "to": {"type": "string"}}}}}}}}}}]}}
    assert call(apiserver, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)[0] == 201
    rpath = "/apis/ssa.example.com/v1/namespaces/default/routes/r"
    route = {"apiVersion": "ssa.example.com/v1", "kind": "Route", "metadata": {"name": "r"},
             "spec": {"hosts": ["a"], "rules": [{"path": "/a", "to": "x"}]}}
    code, made = apply_call(apiserver, rpath, route)
    assert code == 201 and made["metadata"]["managedFields"][0]["fieldsV1"] == {"f:spec": {
        "f:hosts": {}, "f:rules": {'k:{"path":"/a"}': {".": {}, "f:path": {}, "f:to": {}}}}}
    code, other = apply_call(apiserver, rpath, {"apiVersion": "ssa.example.com/v1", "kind": "Route", "metadata": {
        "name": "r"}, "spec": {"rules": [{"path": "/b", "to": "y"}]}}, "fieldManager=team-b")
    assert code == 200 and other["spec"]["rules"] == [{"path": "/a", "to": "x"}, {"path": "/b", "to": "y"}]
    code, s = apply_call(apiserver, rpath, dict(route, spec={"hosts": ["a"], "rules": [{"path": "/b", "to": "z"}]}))
    assert code == 409 and s["details"]["causes"][0]["field"] == '.spec.rules[path="/b"].to'
    call(apiserver, "DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/routes.ssa.example.com")


def test_server_scale_subresource(apiserver):
    """deployments/scale (what kubectl scale uses): discovery lists it as autoscaling/v1 Scale, the
    OpenAPI path reads and writes a Scale; GET answers the Scale; a PUT with a stale resourceVersion
    is a conflict; a write changes spec.replicas only and is recorded with subresource "scale"."""
    code, lst = call(apiserver, "GET", "/apis/apps/v1")
    sc = next(r for r in lst["resources"] if r["name"] == "deployments/scale")
    assert (sc["group"], sc["version"], sc["kind"]) == ("autoscaling", "v1", "Scale")
    doc = call_h(apiserver, "GET", "/openapi/v3/apis/apps/v1")[1]
    op = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]["patch"]
    assert op["x-kubernetes-group-version-kind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    assert "io.k8s.api.autoscaling.v1.Scale" in doc["components"]["schemas"]
    path = "/apis/apps/v1/namespaces/default/deployments/scl"
    assert call(apiserver, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("scl"))[0] == 201
    code, scale = call(apiserver, "GET", path + "/scale")
    assert code == 200 and (scale["kind"], scale["apiVersion"], scale["spec"], scale["status"]["selector"]) == (
        "Scale", "autoscaling/v1", {"replicas": 2}, "app=scl")
    stale = dict(scale, metadata=dict(scale["metadata"], resourceVersion="1"), spec={"replicas": 7})
    assert call(apiserver, "PUT", path + "/scale", stale)[0] == 409
    code, put = call(apiserver, "PUT", path + "/scale?fieldManager=autoscaler", dict(scale, spec={"replicas": 7}))
    assert code == 200 and put["spec"]["replicas"] == 7
    got = call(apiserver, "GET", path)[1]
    assert got["spec"]["replicas"] == 7 and got["metadata"]["generation"] == 2
    e = got["metadata"]["managedFields"][-1]
    assert (e["manager"], e["subresource"], e["fieldsV1"]) == ("autoscaler", "scale", {"f:spec": {"f:replicas": {}}})


def test_real_kubectl_server_side_apply_conflicts_and_diff(apiserver, tmp_path):
    """The official kubectl: `apply --server-side` creates (manager "kubectl", operation Apply);
    `kubectl scale` (an Update through the scale subresource) takes .spec.replicas; applying other
    replicas again is a conflict naming that manager; `--force-conflicts` takes the field back;
    `diff --server-side` (a dry-run apply) then shows no difference."""
    kubectl = _real_kubectl(apiserver, tmp_path)[0]
    from harness import real_clients
    app = tmp_path / "ssa.yaml"

    def write(replicas):
        app.write_text(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ssa, namespace: default, labels: {app: ssa}}\n"
            f"spec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: ssa}}}}\n  template:\n"
            "    metadata: {labels: {app: ssa}}\n"
            "    spec:\n      containers: [{name: c, image: 'r.io/web:1', ports: [{containerPort: 80}]}]\n")
    write(2)
    assert kubectl("apply", "--server-side", "-f", str(app)).stdout.strip() == "deployment.apps/ssa serverside-applied"
    got = call(apiserver, "GET", "/apis/apps/v1/namespaces/default/deployments/ssa")[1]
    assert [(m["manager"], m["operation"]) for m in got["metadata"]["managedFields"]] == [("kubectl", "Apply")]
    kubectl("scale", "deployment/ssa", "--replicas=4")
    write(3)
    r = kubectl("apply", "--server-side", "-f", str(app), check=False)
    # kubectl scale names no fieldManager: the server takes the User-Agent's first part, the binary's
    # name (client-go's default User-Agent: "<os.Args[0]>/<version> (<os>/<arch>) kubernetes/<commit>")
    who = real_clients.kubectl("1.30").name
    assert r.returncode != 0 and f'Apply failed with 1 conflict: conflict with "{who}" with subresource "scale" using ' \
        'apps/v1: .spec.replicas' in r.stderr, r.stderr
    kubectl("apply", "--server-side", "--force-conflicts", "-f", str(app))
    got = call(apiserver, "GET", "/apis/apps/v1/namespaces/default/deployments/ssa")[1]
    assert got["spec"]["replicas"] == 3
    r = kubectl("diff", "--server-side", "-f", str(app), check=False)
    assert (r.returncode, r.stdout) == (0, ""), (r.stdout, r.stderr)
    # a change shows (exit 1), nothing is stored (a dry-run apply)
    write(5)
    r = kubectl("diff", "--server-side", "-f", str(app), check=False)
    assert r.returncode == 1 and "-  replicas: 3" in r.stdout and "+  replicas: 5" in r.stdout, (r.stdout, r.stderr)
    assert call(apiserver, "GET", "/apis/apps/v1/namespaces/default/deployments/ssa")[1]["spec"]["replicas"] == 3


# ------------------------------------------------------------------ the collection's k8s_apply against the double
def collection_objects(apiserver, check_mode=False):
    from ansible_collections.offline_pot.tke.plugins.module_utils.k8s.client import Client
    from ansible_collections.offline_pot.tke.plugins.module_utils.k8s.service import Objects
    pki = apiserver["pki"]
    client = Client({"server": apiserver["url"], "ca": {"path": str(pki / "ca.crt")},
                     "cert": {"path": str(pki / "admin.crt")}, "key": {"path": str(pki / "admin.key")}})
    return Objects(client, check_mode=check_mode)


def test_what_the_server_normalises_is_no_change_and_unknown_fields_are_refused(apiserver):
    """module_utils/k8s/service.py: a Secret given as stringData (stored as data) and a quantity
    the server writes canonically ("1000m" -> "1") apply once; again, a dry run of the patch shows
    the server would store what it has: unchanged (before, every run re-patched them). A field
    the server does not know fails naming it (fieldValidation=Strict), nothing stored."""
    objs = collection_objects(apiserver)
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "norm", "namespace": "default"},
              "stringData": {"password": "s3cret"}}
    web = deployment("normweb")
    web["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1000m", "memory": "1024Mi"}}
    for obj in (secret, web):
        assert objs.apply(obj)["action"] == "created"
        assert objs.apply(obj)["action"] == "unchanged", obj["kind"]
        assert collection_objects(apiserver, check_mode=True).apply(obj)["action"] == "unchanged"
    stored = objs.get(web)["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]
    assert stored == {"cpu": "1", "memory": "1Gi"}
    changed = dict(secret, stringData={"password": "n3w"})
    assert objs.apply(changed)["action"] == "updated"
    assert base64.b64decode(objs.get(secret)["data"]["password"]) == b"n3w"
    typo = deployment("typo")
    typo["spec"]["replica"] = 3
    from ansible_collections.offline_pot.tke.plugins.module_utils.k8s.service import ObjectError
    with pytest.raises(ObjectError, match=r'unknown field "spec.replica"'):
        objs.apply(typo)
    assert objs.get(typo) is None


def test_a_namespace_being_deleted_is_waited_for_then_created_again(apiserver, monkeypatch):
    """module_utils/k8s/service.py against a Terminating namespace (the double keeps it until the
    test ends its deletion, so no step depends on the machine's speed): the apply waits until it is
    gone and creates it again, and its content after it (a create inside it while it terminates is
    refused by the server); a delete of it while it terminates is no second delete; a wait longer
    than gone_timeout fails naming it."""
    from ansible_collections.offline_pot.tke.plugins.module_utils.k8s.service import ObjectError
    monkeypatch.setattr(apiserver["api"], "NS_TERMINATING_SECONDS", 10 * WAIT)
    objs = collection_objects(apiserver)
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "again"}}
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "again"}, "data": {"k": "v"}}
    assert [objs.apply(o)["action"] for o in (ns, cm)] == ["created", "created"]
    assert objs.delete(ns) is True
    assert objs.get(ns)["status"]["phase"] == "Terminating"
    assert objs.delete(ns) is False
    assert collection_objects(apiserver, check_mode=True).apply(ns)["action"] == "created"
    ended = threading.Timer(1.5, end_termination, (apiserver, "again"))
    ended.start()
    started = time.monotonic()
    assert objs.apply(ns)["action"] == "created"
    assert time.monotonic() - started > 1 and "deletionTimestamp" not in objs.get(ns)["metadata"]
    assert objs.apply(cm)["action"] == "created"
    assert objs.delete(ns) is True
    objs.gone_timeout = 1
    with pytest.raises(ObjectError, match=r"timed out after 1 s waiting for Namespace again to be gone \(Terminating\)"):
        objs.apply(ns)
    end_termination(apiserver, "again")
    objs.gone_timeout = WAIT
    objs.wait_gone(ns)
    assert objs.get(ns) is None


def end_termination(apiserver, name):
    """The double's namespace deletion ends now: its controller purges the namespace at its next
    round (Api.finish_terminations)."""
    apiserver["api"].terminating[name] = 0


def test_server_refuses_what_validation_go_refuses(apiserver):
    """The kinds' rules the schemas cannot express (pkg/apis/apps, core and rbac validation.go;
    apimachinery's annotation size limit), each a 422 Invalid naming the field, as the real server:
    a selector that does not match the template, a changed selector, a StatefulSet spec field that
    may not change, a changed roleRef, a port out of range, annotations over 256 KiB."""
    apps = "/apis/apps/v1/namespaces/default"

    def refused(method, path, body, field, message, ctype="application/json"):
        code, s = call(apiserver, method, path, body, ctype=ctype)
        assert (code, s["reason"]) == (422, "Invalid"), s
        assert [(c["field"], c["message"]) for c in s["details"]["causes"]] == [(field, message)], s
        return s
    bad = deployment("mismatch")
    bad["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    s = refused("POST", f"{apps}/deployments", bad, "spec.template.metadata.labels",
                'Invalid value: map[string]string{"app":"other"}: `selector` does not match template `labels`')
    assert s["message"].startswith('Deployment.apps "mismatch" is invalid: spec.template.metadata.labels: ')
    assert call(apiserver, "POST", f"{apps}/deployments", deployment("sel"))[0] == 201
    moved = {"spec": {"selector": {"matchLabels": {"app": "sel2"}}, "template": {"metadata": {"labels": {"app": "sel2"}}}}}
    refused("PATCH", f"{apps}/deployments/sel", moved, "spec.selector",
            'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"sel2"}, '
            'MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
            ctype="application/merge-patch+json")
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"}, "spec": {
        "serviceName": "db", "selector": {"matchLabels": {"app": "db"}}, "template": {
            "metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "c", "image": "r/db:1"}]}}}}
    assert call(apiserver, "POST", f"{apps}/statefulsets", sts)[0] == 201
    assert call(apiserver, "PATCH", f"{apps}/statefulsets/db", {"spec": {"replicas": 3}},
                ctype="application/merge-patch+json")[0] == 200
    refused("PATCH", f"{apps}/statefulsets/db", {"spec": {"serviceName": "other"}}, "spec",
            "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
            "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
            ctype="application/merge-patch+json")
    rb = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "rb"},
          "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
          "subjects": [{"kind": "User", "name": "u", "apiGroup": "rbac.authorization.k8s.io"}]}
    rbs = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"
    assert call(apiserver, "POST", rbs, rb)[0] == 201
    refused("PATCH", f"{rbs}/rb", {"roleRef": {"name": "edit"}}, "roleRef",
            'Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: '
            "cannot change roleRef", ctype="application/merge-patch+json")
    port = deployment("port")
    port["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": 70000}]
    refused("POST", f"{apps}/deployments", port, "spec.template.spec.containers[0].ports[0].containerPort",
            "Invalid value: 70000: must be between 1 and 65535, inclusive")
    big = {"metadata": {"name": "big", "annotations": {"a": "x" * (256 * 1024)}}}
    refused("POST", "/api/v1/namespaces/default/configmaps", big, "metadata.annotations",
            "Too long: must have at most 262144 bytes")
    for path in (f"{apps}/deployments/sel", f"{apps}/statefulsets/db", f"{rbs}/rb"):
        call(apiserver, "DELETE", path)


# ------------------------------------------------------------------ custom resources: structural schemas (apiextensions-apiserver)
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def widget_crd(schema, plural="widgets", kind="Widget"):
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   **({"schema": {"openAPIV3Schema": schema}} if schema is not None else {})}]}}


def obj_with(spec):
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": spec}}}


S = "spec.versions[0].schema.openAPIV3Schema"


@pytest.mark.parametrize("schema,causes", [
    # a property without type (schema/validation.go validateStructuralInvariants)
    (obj_with({"foo": {"description": "no type"}}),
     [(f"{S}.properties[spec].properties[foo].type", "Required value: must not be empty for specified object fields")]),
    # additionalProperties next to properties (validation.go ValidateCustomResourceDefinitionOpenAPISchema)
    ({"type": "object", "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}},
                                                "additionalProperties": {"type": "string"}}}},
     [(f"{S}.properties[spec].additionalProperties", "Forbidden: additionalProperties and properties are mutual exclusive")]),
    # the root: no type, another type, additionalProperties
    ({"properties": {"spec": {"type": "object"}}}, [(f"{S}.type", "Required value: must not be empty at the root")]),
    ({"type": "string"}, [(f"{S}.type", 'Invalid value: "string": must be object at the root')]),
    ({"type": "object", "additionalProperties": {"type": "string"}},
     [(f"{S}.additionalProperties", "Forbidden: must not be used at the root")]),
    # metadata restricts name and generateName only; no defaults in the top-level metadata
    ({"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}},
     [(f"{S}.properties[metadata]", "Forbidden: must not specify anything other than name and generateName, "
                                    "but metadata is implicitly specified")]),
    ({"type": "object", "properties": {"metadata": {"type": "object", "default": {}}}},
     [(f"{S}.properties[metadata].default", "Forbidden: must not be set in top-level metadata")]),
    # x-kubernetes-preserve-unknown-fields: true or nothing; not with x-kubernetes-int-or-string
    ({"type": "object", "properties": {"metadata": {"type": "object", "description": "the object's metadata"}}},
     [(f"{S}.properties[metadata]", "Forbidden: must not specify anything other than name and generateName, "
                                    "but metadata is implicitly specified")]),
    # (the schema does not convert to a structural one: the structural rules are not reported, no type here)
    (obj_with({"free": {"x-kubernetes-preserve-unknown-fields": False}}),
     [(f"{S}.properties[spec].properties[free].x-kubernetes-preserve-unknown-fields", "Invalid value: false: must be true or undefined")]),
    (obj_with({"port": {"x-kubernetes-int-or-string": True, "x-kubernetes-preserve-unknown-fields": True}}),
     [(f"{S}.properties[spec].properties[port].x-kubernetes-preserve-unknown-fields",
       "Invalid value: true: must be false if x-kubernetes-int-or-string is true")]),
    # inside anyOf only value validations (but the int-or-string anyOf form)
    (obj_with({"v": {"type": "string", "anyOf": [{"type": "string", "description": "d"}]}}),
     [(f"{S}.properties[spec].properties[v].anyOf[0].description", "Forbidden: must be empty to be structural"),
      (f"{S}.properties[spec].properties[v].anyOf[0].type", "Forbidden: must be empty to be structural")]),
    # what OpenAPI v3 has and CRDs do not (specStandardValidatorV3.validate)
    (obj_with({"r": {"$ref": "#/definitions/x"}}), [(f"{S}.properties[spec].properties[r].$ref", "Forbidden: $ref is not supported")]),
    # arrays need items; embedded resources are objects
    (obj_with({"list": {"type": "array"}}), [(f"{S}.properties[spec].properties[list].items", "Required value: must be specified")]),
    (obj_with({"tpl": {"type": "string", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True}}),
     [(f"{S}.properties[spec].properties[tpl].type", 'Invalid value: "string": must be object if x-kubernetes-embedded-resource is true')]),
    # a v1 CRD needs a schema
    (None, [(S, "Required value: schemas are required")]),
    # several: sorted as ValidateStructural sorts them, after the generic rules
    ({"properties": {"spec": {"properties": {"a": {}}}}},
     [(f"{S}.properties[spec].properties[a].type", "Required value: must not be empty for specified object fields"),
      (f"{S}.properties[spec].type", "Required value: must not be empty for specified object fields"),
      (f"{S}.type", "Required value: must not be empty at the root")]),
])
def test_server_refuses_non_structural_crd_schemas(apiserver, schema, causes):
    """A v1 CRD's schema must be structural (apiextensions-apiserver pkg/apis/apiextensions/validation/
    validation.go, pkg/apiserver/schema/validation.go): 422 Invalid naming each field as the real
    server does (`spec.versions[0].schema.openAPIV3Schema.properties[spec]...`), nothing stored."""
    crd = widget_crd(schema)
    call(apiserver, "DELETE", f"{CRDS}/widgets.example.com")      # (what a double that took it stored)
    code, s = call(apiserver, "POST", CRDS, crd)
    assert (code, s["reason"]) == (422, "Invalid"), s
    assert [(c["field"], c["message"]) for c in s["details"]["causes"]] == causes
    if len(causes) == 1:
        assert s["message"] == (f'CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid: '
                                f"{causes[0][0]}: {causes[0][1]}")
    assert call(apiserver, "GET", f"{CRDS}/widgets.example.com")[0] == 404


def test_server_takes_structural_crd_schemas_and_refuses_an_update_that_is_not(apiserver):
    """What is structural passes: metadata restricting name only, the x-kubernetes-int-or-string
    anyOf form, an embedded resource, preserve-unknown-fields at the root (calico's CRDs); an
    update to a non-structural schema is refused as a create is."""
    good = {"type": "object", "properties": {
        "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20}}, "example": {}},
        "spec": {"type": "object", "properties": {
            "port": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
            "tpl": {"type": "object", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}}}
    crd = widget_crd(good, "gadgets", "Gadget")
    code, made = call(apiserver, "POST", CRDS, crd)
    assert code == 201, made
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["bad"] = {}
    code, s = call(apiserver, "PUT", f"{CRDS}/gadgets.example.com", crd)
    assert code == 422 and [c["field"] for c in s["details"]["causes"]] == [
        f"{S}.properties[spec].properties[bad].type"], s
    free = widget_crd({"type": "object", "x-kubernetes-preserve-unknown-fields": True}, "freebies", "Freebie")
    assert call(apiserver, "POST", CRDS, free)[0] == 201
    for name in ("gadgets", "freebies"):
        call(apiserver, "DELETE", f"{CRDS}/{name}.example.com")


def test_a_crd_in_a_kubernetes_group_needs_the_api_approval_annotation(apiserver):
    """A CRD of a group the Kubernetes community protects (k8s.io, kubernetes.io and their subdomains)
    needs `api-approved.kubernetes.io`: a URL, or a reason starting "unapproved" (apiextensions-apiserver
    validation.go validateAPIApproval, apihelpers GetAPIApprovalState); an update that keeps the
    annotation's state passes, one that drops it does not. Calico 3.32's ClusterNetworkPolicy CRD
    (policy.networking.k8s.io) carries it."""
    crd = widget_crd({"type": "object", "x-kubernetes-preserve-unknown-fields": True}, "gizmos", "Gizmo")
    crd["metadata"]["name"], crd["spec"]["group"] = "gizmos.policy.example.k8s.io", "policy.example.k8s.io"
    url = f"{CRDS}/gizmos.policy.example.k8s.io"
    field = "metadata.annotations[api-approved.kubernetes.io]"
    see = "see https://github.com/kubernetes/enhancements/pull/1111"
    code, s = call(apiserver, "POST", CRDS, crd)
    assert (code, [(c["field"], c["message"]) for c in s["details"]["causes"]]) == (422, [
        (field, f'Required value: protected groups must have approval annotation "api-approved.kubernetes.io", {see}')]), s
    crd["metadata"]["annotations"] = {"api-approved.kubernetes.io": "looks fine"}
    code, s = call(apiserver, "POST", CRDS, crd)
    assert (code, [(c["field"], c["message"]) for c in s["details"]["causes"]]) == (422, [
        (field, 'Invalid value: "looks fine": protected groups must have approval annotation "api-approved.kubernetes.io" '
                f'with either a URL or a reason starting with "unapproved", {see}')]), s
    assert call(apiserver, "GET", url)[0] == 404
    for value in ("unapproved, testing only", "https://github.com/kubernetes-sigs/network-policy-api/pull/347"):
        crd["metadata"]["annotations"] = {"api-approved.kubernetes.io": value}
        code, made = call(apiserver, "POST", CRDS, crd)
        assert code == 201, made
        # an update keeping the state passes; dropping the annotation is refused
        made["spec"]["names"]["shortNames"] = ["gz"]
        assert call(apiserver, "PUT", url, made)[0] == 200
        made = call(apiserver, "GET", url)[1]
        made["metadata"]["annotations"] = {}
        code, s = call(apiserver, "PUT", url, made)
        assert code == 422 and [c["field"] for c in s["details"]["causes"]] == [field], s
        call(apiserver, "DELETE", url)
    # the rule is the protected groups' only: example.com needs no annotation (the tests above)
    assert structural.api_approval_problems({"spec": {"group": "k8s.io.example.com"}}) == []


PRUNED_SCHEMA = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "a": {"type": "string"},
    "nested": {"type": "object", "properties": {"b": {"type": "string"}}},
    "items": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "string"}}}},
    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {
        "typed": {"type": "object", "properties": {"t": {"type": "string"}}}}},
    "tpl": {"type": "object", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}}}


@pytest.fixture
def pruned_crd(apiserver):
    code, made = call(apiserver, "POST", CRDS, widget_crd(PRUNED_SCHEMA, "sprockets", "Sprocket"))
    assert code == 201, made
    yield "/apis/example.com/v1/namespaces/default/sprockets"
    call(apiserver, "DELETE", f"{CRDS}/sprockets.example.com")


def sprocket(name, **spec):
    return {"apiVersion": "example.com/v1", "kind": "Sprocket", "metadata": {"name": name, "bogus": 1}, "extra": True,
            "spec": {"a": "x", "foo": 1, "nested": {"b": "y", "c": 2}, "items": [{"n": "1", "m": 2}],
                     "free": {"anything": {"goes": 1}, "typed": {"t": "z", "u": 3}},
                     "tpl": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "colour": "red"}, "spec": {"x": 1}},
                     "labels": {"k": "v"}, **spec}}


KEPT = {"a": "x", "nested": {"b": "y"}, "items": [{"n": "1"}], "free": {"anything": {"goes": 1}, "typed": {"t": "z"}},
        "tpl": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": 1}}, "labels": {"k": "v"}}
DROPPED = ["metadata.bogus", "extra", "spec.foo", "spec.free.typed.u", "spec.items[0].m", "spec.nested.c",
           "spec.tpl.metadata.colour"]


def test_server_prunes_custom_resources_by_field_validation(apiserver, pruned_crd):
    """Fields the structural schema does not specify are dropped on create, dry run, update and
    patch (pruning/algorithm.go; not under x-kubernetes-preserve-unknown-fields, nor an embedded
    resource's apiVersion/kind/metadata; metadata kept to ObjectMeta's fields, objectmeta/coerce.go),
    in the order customresource_handler.go reports them: Warn (the default) names each in a Warning
    header, Strict refuses with 400 as for a built-in kind, Ignore drops them silently."""
    code, got, warn = call_h(apiserver, "POST", pruned_crd + "?dryRun=All", sprocket("s1"))
    assert code == 201 and got["spec"] == KEPT and "extra" not in got and "bogus" not in got["metadata"], got
    assert warn == ['299 - ' + json.dumps(f'unknown field "{f}"') for f in DROPPED]
    assert call(apiserver, "GET", pruned_crd + "/s1")[0] == 404
    code, got, warn = call_h(apiserver, "POST", pruned_crd, sprocket("s1"))
    assert code == 201 and got["spec"] == KEPT and len(warn) == len(DROPPED)
    assert call(apiserver, "GET", pruned_crd + "/s1")[1]["spec"] == KEPT
    code, s, warn = call_h(apiserver, "POST", pruned_crd + "?fieldValidation=Strict", sprocket("s2"))
    assert (code, s["reason"]) == (400, "BadRequest"), s
    assert s["message"] == 'Sprocket in version "v1" cannot be handled as a Sprocket: strict decoding error: ' + \
        ", ".join(f'unknown field "{f}"' for f in DROPPED)
    assert call(apiserver, "GET", pruned_crd + "/s2")[0] == 404
    code, got, warn = call_h(apiserver, "POST", pruned_crd + "?fieldValidation=Ignore", sprocket("s2"))
    assert code == 201 and warn == [] and got["spec"] == KEPT
    # update and patch: pruned the same way; a non-nullable null without default is dropped (prunenulls.go)
    cur = call(apiserver, "GET", pruned_crd + "/s1")[1]
    cur["spec"]["zz"] = 1
    code, got, warn = call_h(apiserver, "PUT", pruned_crd + "/s1", cur)
    assert code == 200 and "zz" not in got["spec"] and warn == ['299 - "unknown field \\"spec.zz\\""']
    code, got, warn = call_h(apiserver, "PATCH", pruned_crd + "/s1", {"spec": {"nested": {"q": 1}, "labels": {"k2": "w"}}},
                             ctype="application/merge-patch+json")
    assert code == 200 and got["spec"]["nested"] == {"b": "y"} and got["spec"]["labels"] == {"k": "v", "k2": "w"}
    assert warn == ['299 - "unknown field \\"spec.nested.q\\""']
    code, s, warn = call_h(apiserver, "PATCH", pruned_crd + "/s1?fieldValidation=Strict", {"spec": {"yy": 1}},
                           ctype="application/merge-patch+json")
    assert code == 400 and s["message"].endswith('strict decoding error: unknown field "spec.yy"'), s
    code, got, warn = call_h(apiserver, "PATCH", pruned_crd + "/s1", [{"op": "add", "path": "/spec/a", "value": None}],
                             ctype="application/json-patch+json")
    assert code == 200 and "a" not in got["spec"] and warn == []


DEFAULTED_SCHEMA = {"type": "object", "properties": {"spec": {"type": "object", "default": {}, "properties": {
    "replicas": {"type": "integer", "default": 1},
    "tls": {"type": "object", "properties": {"enabled": {"type": "boolean", "default": False}}},
    "ports": {"type": "array", "items": {"type": "object", "properties": {"protocol": {"type": "string", "default": "TCP"},
                                                                          "port": {"type": "integer"}}}},
    "env": {"type": "object", "additionalProperties": {"type": "object", "properties": {
        "value": {"type": "string", "default": "none"}}}}}}}}


def test_server_defaults_custom_resources_from_the_schema(apiserver):
    """`default:` of the version's schema (defaulting/algorithm.go): a missing property gets it,
    the properties of an object only where that object exists (no tls -> no tls.enabled), in array
    items and additionalProperties values too; on create, dry run, update, patch, and when read
    back (a default added to the CRD later shows on the stored object, as the storage decoder
    defaults)."""
    crd = widget_crd(DEFAULTED_SCHEMA, "cogs", "Cog")
    code, made = call(apiserver, "POST", CRDS, crd)
    assert code == 201, made
    base = "/apis/example.com/v1/namespaces/default/cogs"
    cog = {"apiVersion": "example.com/v1", "kind": "Cog", "metadata": {"name": "c1"}}
    for q in ("?dryRun=All", ""):
        code, got = call(apiserver, "POST", base + q, cog)
        assert code == 201 and got["spec"] == {"replicas": 1}, got
    code, got = call(apiserver, "POST", base, {**cog, "metadata": {"name": "c2"}, "spec": {
        "replicas": 3, "tls": {}, "ports": [{"port": 80}, {"port": 53, "protocol": "UDP"}], "env": {"A": {}}}})
    assert got["spec"] == {"replicas": 3, "tls": {"enabled": False}, "env": {"A": {"value": "none"}},
                           "ports": [{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]}, got
    code, got = call(apiserver, "PATCH", base + "/c2", {"spec": {"replicas": None, "tls": None}},
                     ctype="application/merge-patch+json")
    assert code == 200 and got["spec"]["replicas"] == 1 and "tls" not in got["spec"], got
    cur = call(apiserver, "GET", base + "/c2")[1]
    cur["spec"] = {"ports": [{"port": 1}]}
    code, got = call(apiserver, "PUT", base + "/c2", cur)
    assert code == 200 and got["spec"] == {"replicas": 1, "ports": [{"port": 1, "protocol": "TCP"}]}, got
    # a default added later: shown on the stored objects when read, without a write
    crd = call(apiserver, "GET", f"{CRDS}/cogs.example.com")[1]
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["mode"] = {
        "type": "string", "default": "fast"}
    assert call(apiserver, "PUT", f"{CRDS}/cogs.example.com", crd)[0] == 200
    assert call(apiserver, "GET", base + "/c1")[1]["spec"] == {"replicas": 1, "mode": "fast"}
    lst = call(apiserver, "GET", base)[1]
    assert all(i["spec"]["mode"] == "fast" for i in lst["items"])
    call(apiserver, "DELETE", f"{CRDS}/cogs.example.com")


def test_an_api_edit_of_kubeadms_configmap_survives_a_restart_until_kubeadm_writes_it_again(tmp_path):
    """kubeadm writes an object once and the API server keeps it: an operator's edit of
    kube-system/kubelet-config (failCgroupV1: false before an upgrade to 1.35) stays when this API server
    restarts (a new process syncing the same unchanged state file), and what kubeadm writes later wins."""
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"configmaps": {"kubelet-config": {"kubelet": "kind: KubeletConfiguration\n"}}}))
    db = store.FileStore(str(tmp_path / "store.json"))
    cm = next(r for r in BUILTIN if r.plural == "configmaps")

    def live(api):
        return api.store.get(api.key(cm, "kube-system", "kubelet-config"))

    first = server.Api(db, "v1.35.7", str(state))
    first.ensure_system()
    first.sync_kubeadm_state()
    obj, rev = live(first)
    assert obj["data"] == {"kubelet": "kind: KubeletConfiguration\n"}
    edited = {**obj, "data": {"kubelet": "kind: KubeletConfiguration\nfailCgroupV1: false\n"}}
    db.update(first.key(cm, "kube-system", "kubelet-config"), edited, rev)
    restarted = server.Api(db, "v1.35.7", str(state))
    restarted.sync_kubeadm_state()
    assert live(restarted)[0]["data"]["kubelet"].endswith("failCgroupV1: false\n")
    # kubeadm writes the ConfigMap again (its state changes): that is what the API has then
    state.write_text(json.dumps({"configmaps": {"kubelet-config": {"kubelet": "kind: KubeletConfiguration\nmaxPods: 9\n"}}}))
    restarted.sync_kubeadm_state()
    assert live(restarted)[0]["data"] == {"kubelet": "kind: KubeletConfiguration\nmaxPods: 9\n"}

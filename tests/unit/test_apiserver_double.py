"""The kube-apiserver test double (tests/apiserver_double): its pure parts (selectors, patches,
validation -> Status, the status rules) and the server itself, run here in-process over real TLS
with client certificates and a file store (no test hosts)."""
import base64
import datetime
import json
import ssl
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "apiserver_double"))
from apiserver_double import logic, server, store  # noqa: E402
from apiserver_double.logic import ApiError  # noqa: E402
from apiserver_double.resources import BUILTIN  # noqa: E402

DEPLOY = next(r for r in BUILTIN if r.kind == "Deployment")


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
        with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
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


def test_server_objects_crud(apiserver):
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
    assert code == 415
    code, dry = call(apiserver, "POST", "/api/v1/namespaces/demo/configmaps?dryRun=All", {"metadata": {"name": "c"}})
    assert code == 201 and call(apiserver, "GET", "/api/v1/namespaces/demo/configmaps/c")[0] == 404
    # deleting the namespace deletes its objects
    code, s = call(apiserver, "DELETE", "/api/v1/namespaces/demo")
    assert code == 200 and s["status"] == "Success"
    assert call(apiserver, "GET", "/api/v1/configmaps?fieldSelector=metadata.namespace%3Ddemo")[1]["items"] == []


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
    assert d["spec"]["template"]["spec"]["containers"] == [{"name": "c", "image": "r.io/x:2"}]


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
    conf.write_text(f'[plugins."io.containerd.grpc.v1.cri".registry.configs."{host}".auth]\n'
                    'username = "admin"\npassword = "pw"\n')
    try:
        ok = ImageChecker(str(conf), str(tmp_path / "certs.d"))
        assert ok.exists(f"{host}/library/pause:3.9")
        assert not ok.exists(f"{host}/library/pause:3.10")
        assert not ImageChecker(str(tmp_path / "none.toml"), str(tmp_path / "certs.d")).exists(
            f"{host}/library/pause:3.9")
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

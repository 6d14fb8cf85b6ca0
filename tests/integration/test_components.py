"""Components (docs/components.md) on the smallest site: h1 master with external etcd and the
registry, h2 worker, no HA. Everything from the fixture site pack, which carries the three sample
components with tiny stand-in images: two Helm charts (templates/charts: sample-redis, a
StatefulSet datastore; sample-web, a front end with a Secret from its values) and one of manifest
templates (templates/components: sample-app, a Deployment that depends on both). The kube-apiserver is the test double
(tests/apiserver_double): it validates every object against Kubernetes' schemas and reports a
workload ready when its images exist in the registry it names and a fitting node is Ready.

One install, then the scenarios in this order on that site (each builds on the previous state):
installed and ready; re-run changed=0; a value changed -> only that component re-applied; an
object dropped from a new pack -> pruned; uninstall one -> gone, the other untouched; again ->
changed=0; the decoupled run through components.yml with only a kubeconfig and a registry (images
pushed into another registry namespace; no SSH login on the cluster hosts); a component whose
image never appears fails within its timeout naming it and its object. Validation names a cycle
and a source the pack does not have before any host is touched.
"""
import base64
import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from harness import fixture_pack, kubeadm_double, playbook
from harness.playbook import TOP, run_playbook

INSTALL = TOP / "install.yml"
COMPONENTS = TOP / "playbooks" / "components.yml"
NODES = ["h1", "h2"]
WEB_PASSWORD = "w3b-Adm1n-S3cret"
SAMPLE = [
    # the sample charts (templates/charts), their images from the components' registry path
    {"name": "sample-redis", "namespace": "shop",
     "values": {"image": {"registry": "{{ components_image_prefix }}"}, "replicas": 1, "maxmemory": "64mb"},
     "ready": {"workloads": [{"kind": "StatefulSet", "name": "sample-redis"}], "timeout": 120}},
    {"name": "sample-web", "namespace": "shop", "depends_on": ["sample-redis"],
     "values": {"image": {"registry": "{{ components_image_prefix }}"}, "greeting": "hi",
                "redisAddress": "sample-redis.shop.svc:6379", "adminPassword": WEB_PASSWORD},
     "ready": {"workloads": [{"kind": "Deployment", "name": "sample-web"}], "timeout": 120}},
    {"name": "sample-app", "namespace": "shop", "depends_on": ["sample-redis", "sample-web"],
     "values": {"greeting": "hello", "session_secret": "sEss10n-S3cret-sample"},
     "ready": {"workloads": [{"kind": "Deployment", "name": "sample-app"}], "timeout": 120}},
]
WEB = ["ConfigMap shop/sample-web-config", "Deployment shop/sample-web", "Secret shop/sample-web-admin",
       "Service shop/sample-web"]
REDIS = ["ConfigMap shop/sample-redis-config", "Service shop/sample-redis", "StatefulSet shop/sample-redis"]
APP = ["ConfigMap shop/sample-app-config", "Deployment shop/sample-app", "Secret shop/sample-app-session",
       "Service shop/sample-app"]
KINDS = "configmaps,secrets,services,statefulsets,deployments"
SECRET = SAMPLE[2]["values"]["session_secret"]
# sample-app's values after test_a_changed_value_reapplies_only_that_component
NEW_SECRET = "n3w-S3ssion-v4lue"
APP_CHANGED = dict(SAMPLE[2], values={"greeting": "bonjour", "session_secret": NEW_SECRET})


def b64(text):
    return base64.b64encode(text.encode()).decode()


def leaks(text, *values):
    """The values (each also as a Secret's base64 data holds it) found in text."""
    return [v for value in values for v in (value, b64(value)) if v in text]


def deployment(name, image, pod_extra=""):
    """A component template of one Deployment in the component's namespace."""
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: {{{{ component.namespace }}}}
spec:
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:{pod_extra}
      containers:
        - name: main
          image: {{{{ components_image_prefix }}}}/{image}
"""


# never ready: its image is the pack's (sample-app's, in the site registry) but no node has the
# label its nodeSelector asks for
STUCK = deployment("sample-stuck", "sample-app:1.0", '\n      nodeSelector: {tke.offline-pot.io/nowhere: "true"}')
# its image is in no pack and no registry
MISSING = deployment("sample-missing", "never-pushed:0")


def flat(text):
    return " ".join(text.split())


timed = playbook.timed


def with_list(components):
    return ("-e", json.dumps({"components_list": components}))


@pytest.fixture(scope="module")
def site(testhosts, tmp_path_factory):
    th = testhosts
    pack = fixture_pack.ensure_pack(TOP / ".cache" / "fixture-pack" / "e2e", Path(th.info["TH_REPO"]))
    kubeadm_double.install(th, names=NODES)
    # TH_COMPONENTS_DIR: a stable site directory (inventory, journal), to resume the scenario on
    # hosts kept with TH_KEEP=1 after a failure
    d = (Path(os.environ["TH_COMPONENTS_DIR"]) if os.environ.get("TH_COMPONENTS_DIR")
         else tmp_path_factory.mktemp("components"))
    inv = th.write_inventory(
        d / "hosts.yml", groups={"masters": ["h1"], "workers": ["h2"], "etcd": ["h1"], "registry": ["h1"]},
        group_vars={"tke_site_pack": str(pack), "site_repo_packages": ["conntrack", "socat"],
                    "precheck_disk": [{"path": "/var/lib", "min_free_gb": 1}],
                    "precheck_disk_etcd": [{"path": "/var/lib/etcd", "min_free_gb": 1}],
                    "components_list": SAMPLE})
    return {"inv": inv, "dir": d, "pack": pack}


def kubectl(th, args):
    """Real kubectl on h1 (the cluster's minor, put there by the `installed` fixture) through the
    admin kubeconfig: independent of the collection's own API client."""
    return th.ssh("h1", f"kubectl --kubeconfig /etc/kubernetes/admin.conf {args}", check=False)


# the components made from a chart: their objects carry helm's instance label, not the prune label
CHARTS = {"sample-redis", "sample-web"}


def listed(th, component):
    """A component's objects as kubectl lists them (by helm's instance label for a chart)."""
    label = (f"app.kubernetes.io/instance={component}" if component in CHARTS
             else f"tke.offline-pot.io/part-of=component-{component}")
    out = kubectl(th, f"get {KINDS} -A -l {label} -o json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["items"]


def objects_of(th, component):
    return sorted(f"{o['kind']} {o['metadata']['namespace']}/{o['metadata']['name']}" for o in listed(th, component))


def versions(th, component):
    """resourceVersion of each object of a component: unchanged means untouched."""
    return {f"{o['kind']} {o['metadata']['name']}": o["metadata"]["resourceVersion"] for o in listed(th, component)}


def release(th, name="sample-web"):
    """The helm release's history as real helm on h1 reads it (oldest first)."""
    out = th.ssh("h1", f"helm history {name} -n shop -o json --kubeconfig /etc/kubernetes/admin.conf", check=False)
    return json.loads(out.stdout) if out.returncode == 0 else []


def applied_components(run):
    """The components whose apply task reported a change."""
    mark = "Applied, objects it no longer has pruned: component "
    return sorted({t.split(mark, 1)[1].split("]", 1)[0] for t in run.changed_tasks() if mark in t})


@pytest.fixture(scope="module")
def installed(testhosts, site):
    run = timed("install (2 hosts, 2 components)", INSTALL, site["inv"])
    assert run.rc == 0, run.explain()
    testhosts.kubectl_client("h1")
    return run


def test_validation_names_a_cycle_and_a_source_missing_from_the_pack(site):
    cyclic = [dict(SAMPLE[0], depends_on=["sample-app"]), dict(SAMPLE[2], depends_on=["sample-redis"]),
              {"name": "mysql", "namespace": "shop"}]
    run = run_playbook(INSTALL, site["inv"], "--tags", "validate", *with_list(cyclic))
    assert run.rc != 0
    assert "components_list: depends_on makes a cycle: sample-app -> sample-redis -> sample-app" in flat(run.output) \
        or "components_list: depends_on makes a cycle: sample-redis -> sample-app -> sample-redis" in flat(run.output), \
        run.explain()
    assert ("hosts h1, h2: components_list[2] (mysql): source 'mysql' is not a component of the site pack "
            "(the pack has: sample-app, sample-redis, sample-web)") in flat(run.output), run.explain()
    # components.yml names the same problems, in the same words (not a templating error)
    alone = run_playbook(COMPONENTS, site["inv"], *with_list(cyclic))
    assert alone.rc != 0 and "Finalization" not in alone.output, alone.explain()
    assert "components_list: depends_on makes a cycle: sample-" in flat(alone.output), alone.explain()
    assert ("components_list[2] (mysql): source 'mysql' is not a component of the site pack "
            "(the pack has: sample-app, sample-redis, sample-web)") in flat(alone.output), alone.explain()


def test_a_chart_refused_by_its_schema_or_for_an_image_the_pack_lacks_before_any_host_is_touched(site):
    """install.yml's validate phase renders every component (the chart by the pack's helm, on the
    controller) and names each problem before the first phase contacts a host."""
    bad = [SAMPLE[0], dict(SAMPLE[1], values=dict(SAMPLE[1]["values"], image={"tag": "never"})),
           dict(SAMPLE[1], name="sample-web2", source="sample-web", values=dict(SAMPLE[1]["values"], adminPassword="short"))]
    run = run_playbook(INSTALL, site["inv"], *with_list(bad))
    out = flat(run.output)
    assert run.rc != 0 and "Phase precheck" not in run.output, run.explain()
    assert ("component sample-web: Deployment shop/sample-web runs image registry.tke.com/library/sample-web:never, "
            "which the site pack does not carry for it") in out, run.explain()
    assert "component sample-web2: its chart sample-web-0.1.0 does not render with its values:" in out, run.explain()
    assert "adminPassword: String length must be greater than or equal to 8" in out, run.explain()
    assert not leaks(run.output, WEB_PASSWORD), run.explain()


def test_install_applies_both_in_order_and_waits_until_ready(testhosts, site, installed):
    out = flat(installed.output)
    assert "apply (in order): sample-redis, sample-web, sample-app" in out, installed.explain()
    assert out.index("Workloads ready within the timeout: component sample-redis") \
        < out.index("Released with helm: component sample-web") \
        < out.index("Workloads ready within the timeout: component sample-web") \
        < out.index("Applied, objects it no longer has pruned: component sample-app")
    assert objects_of(testhosts, "sample-redis") == REDIS
    assert objects_of(testhosts, "sample-app") == APP
    # the charts: one helm release each (real helm reads them), their objects, a Secret from the values
    for chart in CHARTS:
        history = release(testhosts, chart)
        assert [(r["revision"], r["status"], r["chart"]) for r in history] == [(1, "deployed", f"{chart}-0.1.0")], history
    assert objects_of(testhosts, "sample-web") == WEB
    web = json.loads(kubectl(testhosts, "-n shop get secret sample-web-admin -o json").stdout)
    assert web["data"] == {"ADMIN_PASSWORD": b64(WEB_PASSWORD)}
    deploy = json.loads(kubectl(testhosts, "-n shop get deployment sample-web -o json").stdout)
    assert deploy["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.tke.com/library/sample-web:1.0"
    assert not leaks(installed.output, WEB_PASSWORD)
    sts = json.loads(kubectl(testhosts, "-n shop get statefulset sample-redis -o json").stdout)
    assert sts["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.tke.com/library/sample-redis:7.2"
    assert sts["status"]["readyReplicas"] == 1
    cfg = json.loads(kubectl(testhosts, "-n shop get configmap sample-app-config -o json").stdout)["data"]
    assert cfg == {"REDIS_ADDR": "sample-redis.shop.svc:6379", "GREETING": "hello"}
    # the template's stringData as the server stores it, its last-applied record without the value
    secret = json.loads(kubectl(testhosts, "-n shop get secret sample-app-session -o json").stdout)
    assert secret["data"] == {"SESSION_SECRET": b64(SECRET)} and "stringData" not in secret
    record = json.loads(secret["metadata"]["annotations"]["tke.offline-pot.io/last-applied"])
    assert record["stringData"] == {"SESSION_SECRET": "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"}, record
    assert not leaks(installed.output, SECRET)
    # the template's "0.5" and 131072Ki as the server stores them
    deploy = json.loads(kubectl(testhosts, "-n shop get deployment sample-app -o json").stdout)
    assert deploy["spec"]["template"]["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "500m", "memory": "128Mi"}}


def test_rerun_changes_nothing(testhosts, site, installed):
    """components.yml keeps no journal: every object is compared with the live one again. A Secret
    written as stringData, quantities in non-canonical form and the fields the server defaults (a
    Deployment's strategy, ...) are what the server would store, not a change."""
    again = timed("components.yml again", COMPONENTS, site["inv"], "--diff", "-v")
    assert again.rc == 0 and again.changed_hosts() == {}, again.explain()
    assert "Workloads ready within the timeout: component sample-app" in again.output
    assert not leaks(again.output, SECRET, WEB_PASSWORD)
    assert [r["revision"] for c in CHARTS for r in release(testhosts, c)] == [1, 1]
    # the journalled re-run: the components phase is done with these inputs on these hosts
    journal = timed("install.yml again (journal)", INSTALL, site["inv"])
    assert journal.rc == 0 and journal.changed_hosts() == {}, journal.explain()
    assert re.search(r"components: running on no host; skipping", journal.output), journal.explain()


def test_kubectl_diff_finds_nothing_to_change(testhosts, installed):
    """What the collection applied (each object's last-applied copy) against the live objects, by
    real `kubectl diff` (kubectl's own strategic merge patch, sent as a server-side dry run) and
    `kubectl diff --server-side --force-conflicts` (a server-side apply taking the fields over, dry
    run): no difference, exit code 0. A field the cluster lost or holds differently from what the
    collection applied would show. The collection's fields are its own field manager's."""
    applied = [json.loads(o["metadata"]["annotations"]["tke.offline-pot.io/last-applied"])
               for o in listed(testhosts, "sample-app")]
    assert len(applied) == len(APP)
    # a Secret's record holds its keys, not their values: the value the inventory gives instead
    for o in applied:
        if o["kind"] == "Secret":
            o["stringData"] = {"SESSION_SECRET": SECRET}
    testhosts.ssh("h1", f"cat > /tmp/applied.yaml <<'EOF'\n{yaml.safe_dump_all(applied)}EOF")
    # --force-conflicts: the collection's manager owns its fields (and holds "0.5" as the server
    # stored it, 500m: a value in another form is another value to server-side apply)
    for how in ("", "--server-side --force-conflicts "):
        diff = kubectl(testhosts, f"diff {how}-f /tmp/applied.yaml")
        assert (diff.returncode, diff.stdout) == (0, ""), how + diff.stdout + diff.stderr   # 1: differences
    managers = kubectl(testhosts, "-n shop get deployment sample-app --show-managed-fields -o jsonpath="
                                  "'{range .metadata.managedFields[*]}{.manager}/{.operation} {end}'").stdout.split()
    # (a real server also lists the controllers' status writers)
    assert "offline_pot.tke/Update" in managers and not [m for m in managers if m.startswith("Python-urllib")], managers
    # and the check can tell: a value changed behind the collection's back is a difference
    kubectl(testhosts, "-n shop patch configmap sample-app-config --type merge -p '{\"data\":{\"GREETING\":\"hi\"}}'")
    drift = kubectl(testhosts, "diff -f /tmp/applied.yaml")
    assert drift.returncode == 1 and "-  GREETING: hi" in drift.stdout and "+  GREETING: hello" in drift.stdout, drift.stdout
    kubectl(testhosts, "-n shop patch configmap sample-app-config --type merge -p '{\"data\":{\"GREETING\":\"hello\"}}'")


def test_a_changed_value_reapplies_only_that_component(testhosts, site, installed):
    """A greeting and the session secret changed, run with --diff -vvv (results, diffs and module
    arguments shown): the Secret shows as changed; neither its old nor its new value appears in the
    output, in any log of the API host (module invocations are logged to its journal) or in its
    last-applied record."""
    redis = versions(testhosts, "sample-redis")
    new_secret = NEW_SECRET
    changed = [SAMPLE[0], SAMPLE[1], APP_CHANGED]
    since = testhosts.ssh("h1", "date '+%Y-%m-%d %H:%M:%S'").stdout.strip()
    run = timed("components.yml, one value changed", COMPONENTS, site["inv"], *with_list(changed), "--diff", "-vvv")
    assert run.rc == 0, run.explain()
    assert applied_components(run) == ["sample-app"], run.explain()
    cfg = json.loads(kubectl(testhosts, "-n shop get configmap sample-app-config -o json").stdout)["data"]
    assert cfg["GREETING"] == "bonjour"
    secret = json.loads(kubectl(testhosts, "-n shop get secret sample-app-session -o json").stdout)
    assert secret["data"] == {"SESSION_SECRET": b64(new_secret)}
    # the diff shows the Secret's key as changed, its values hidden; -vvv shows k8s_apply's
    # arguments, the values masked
    assert '+    "SESSION_SECRET": "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER (changed)"' in run.output, run.explain()
    assert "SESSION_SECRET: VALUE_SPECIFIED_IN_NO_LOG_PARAMETER" in run.output, run.explain()
    assert not leaks(run.output, SECRET, new_secret), run.explain()
    logs = testhosts.ssh("h1", f"journalctl -o cat --no-pager -q --since '{since}'; "
                               "grep -rash --exclude-dir=journal . /var/log | cat -v").stdout
    assert "secrets=NOT_LOGGING_PARAMETER" in logs, logs[-3000:]
    assert not leaks(logs, SECRET, new_secret)
    record = secret["metadata"]["annotations"]["tke.offline-pot.io/last-applied"]
    assert "SESSION_SECRET" in record and not leaks(record, SECRET, new_secret), record
    assert versions(testhosts, "sample-redis") == redis
    assert [r["revision"] for r in release(testhosts)] == [1]


def test_a_changed_chart_value_upgrades_only_that_release(testhosts, site, installed):
    """A value of the chart component changed: its release upgraded (revision 2, with the new
    value), the manifest components untouched; the admin password never in the output or the API
    host's logs (helm_release's values are no_log; the values file helm reads is private)."""
    before = {c: versions(testhosts, c) for c in ("sample-redis", "sample-app")}
    since = testhosts.ssh("h1", "date '+%Y-%m-%d %H:%M:%S'").stdout.strip()
    web = dict(SAMPLE[1], values=dict(SAMPLE[1]["values"], greeting="salut"))
    # check mode first: it says the release would change, with the rendered objects against the
    # live ones, and changes nothing
    check = timed("components.yml --check, a chart value changed", COMPONENTS, site["inv"],
                  *with_list([SAMPLE[0], web, APP_CHANGED]), "--check", "--diff")
    assert check.rc == 0 and any("Released with helm: component sample-web]" in t for t in check.changed_tasks()), \
        check.explain()
    assert '-  GREETING: hi' in check.output or '-    "GREETING": "hi"' in check.output, check.explain()
    assert [r["revision"] for r in release(testhosts)] == [1]
    assert json.loads(kubectl(testhosts, "-n shop get configmap sample-web-config -o json").stdout)["data"]["GREETING"] == "hi"
    run = timed("components.yml, a chart value changed", COMPONENTS, site["inv"],
                *with_list([SAMPLE[0], web, APP_CHANGED]), "--diff", "-vvv")
    assert run.rc == 0, run.explain()
    assert applied_components(run) == [], run.explain()
    assert any("Released with helm: component sample-web]" in t for t in run.changed_tasks()), run.explain()
    assert [(r["revision"], r["status"]) for r in release(testhosts)] == [(1, "superseded"), (2, "deployed")]
    cfg = json.loads(kubectl(testhosts, "-n shop get configmap sample-web-config -o json").stdout)["data"]
    assert cfg["GREETING"] == "salut"
    assert {c: versions(testhosts, c) for c in ("sample-redis", "sample-app")} == before
    assert '"ADMIN_PASSWORD": "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"' in run.output, run.explain()   # the diff
    logs = testhosts.ssh("h1", f"journalctl -o cat --no-pager -q --since '{since}'; "
                               "grep -rash --exclude-dir=journal . /var/log | cat -v; ls -A /tmp").stdout
    assert "values=NOT_LOGGING_PARAMETER" in logs, logs[-3000:]
    assert not leaks(run.output, WEB_PASSWORD) and not leaks(logs, WEB_PASSWORD)
    assert "tke-helm-" not in logs   # helm's private directory and values file are gone


@pytest.fixture(scope="module")
def pack_v2(site):
    """A new version of the components' pack: sample-app without its Service; sample-stuck, a
    Deployment no node can take; sample-missing, a Deployment whose image the pack lacks. Built by site_pack.yml from the fixture's inputs and
    signed with the test site owner's key."""
    inputs = TOP / ".cache" / "fixture-pack" / "e2e" / "pack-inputs"
    spec = yaml.safe_load((inputs / "spec.yml").read_text())
    src = site["dir"] / "v2"
    shutil.rmtree(src, ignore_errors=True)
    comps = {c["name"]: c for c in spec["components"]}
    shutil.copytree(comps["sample-app"]["dir"], src / "sample-app")
    (src / "sample-app" / "service.yml.j2").unlink()
    for name, template in (("sample-stuck", STUCK), ("sample-missing", MISSING)):
        (src / name).mkdir(parents=True)
        (src / name / "deployment.yml.j2").write_text(template)
    # sample-web 0.2.0, whose pods ask for a node label no node has (never ready)
    stuck = fixture_pack.package_chart(
        fixture_pack.SAMPLE_CHARTS / "sample-web", src / "charts", version="0.2.0",
        edit=lambda rel, text: text.replace("nodeSelector: {}", 'nodeSelector: {tke.offline-pot.io/nowhere: "true"}')
        if rel == "values.yaml" else text)
    v2 = {"name": "components", "version": "2", "binaries": [b for b in spec["binaries"] if b["name"] == "helm"],
          "components": [comps["sample-redis"], comps["sample-web"],
                         {"name": "sample-web-stuck", "chart": str(stuck), "images": comps["sample-web"]["images"]},
                         dict(comps["sample-app"], dir=str(src / "sample-app")),
                         {"name": "sample-stuck", "dir": str(src / "sample-stuck")},
                         {"name": "sample-missing", "dir": str(src / "sample-missing")}]}
    (src / "spec.yml").write_text(yaml.safe_dump(v2))
    local = src / "local.yml"
    local.write_text(yaml.safe_dump({"all": {"hosts": {"localhost": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}}))
    run = timed("site_pack.yml (components v2)", TOP / "playbooks" / "site_pack.yml", local,
                "-e", f"pack_spec={src / 'spec.yml'}", "-e", f"pack_output_dir={src / 'out'}",
                "-e", f"pack_cache_dir={src / 'cache'}", "-e", f"pack_signing_key={fixture_pack.signing_key()}")
    assert run.rc == 0, run.explain()
    return src / "out" / "components-2"


def test_an_object_dropped_from_a_new_pack_is_pruned(testhosts, site, installed, pack_v2):
    redis = versions(testhosts, "sample-redis")
    run = timed("components.yml, pack v2", COMPONENTS, site["inv"], "--diff", "-e", f"tke_site_pack={pack_v2}")
    assert run.rc == 0, run.explain()
    assert "before: Service shop/sample-app" in run.output and "after: (deleted)" in run.output, run.explain()
    assert objects_of(testhosts, "sample-app") == [o for o in APP if not o.startswith("Service")]
    assert applied_components(run) == ["sample-app"] and versions(testhosts, "sample-redis") == redis


def test_uninstall_one_leaves_the_other_and_twice_changes_nothing(testhosts, site, installed, pack_v2):
    redis = versions(testhosts, "sample-redis")
    absent = ("-e", "components_state=absent", "-e", "components_only=sample-app")
    run = timed("uninstall sample-app", COMPONENTS, site["inv"], *absent)
    assert run.rc == 0 and "remove (in order): sample-app" in flat(run.output), run.explain()
    assert objects_of(testhosts, "sample-app") == []
    assert objects_of(testhosts, "sample-redis") == REDIS and versions(testhosts, "sample-redis") == redis
    again = timed("uninstall sample-app again", COMPONENTS, site["inv"], *absent)
    assert again.rc == 0 and again.changed_hosts() == {}, again.explain()
    # a dependency of a component that stays is refused, and so is removing all unconfirmed
    # (with the small pack v2: these stop at the plan, after the pack's verification)
    small = ("-e", f"tke_site_pack={pack_v2}")
    refused = run_playbook(COMPONENTS, site["inv"], *small, "-e", "components_state=absent",
                           "-e", "components_only=sample-redis")
    assert refused.rc != 0 and "sample-redis is needed by sample-web" in flat(refused.output), refused.explain()
    unconfirmed = run_playbook(COMPONENTS, site["inv"], *small, "-e", "components_state=absent")
    assert unconfirmed.rc != 0 and "components_confirm=true" in unconfirmed.output, unconfirmed.explain()
    assert objects_of(testhosts, "sample-redis") == REDIS


def test_decoupled_components_with_only_a_kubeconfig_and_a_registry(testhosts, site, installed, tmp_path):
    """An inventory with no host of the cluster: a kubeconfig (the site's admin one, its server the
    master's address as a user would give it), a registry and the pack. The images are pushed into
    another registry namespace (so the workloads are ready only if the push worked); the cluster
    hosts' sshd logs show no login but the test's own looks."""
    th = testhosts
    kubeconfig = yaml.safe_load((site["dir"] / ".tke" / "pki" / "kubeconfigs" / "admin.conf").read_text())
    for c in kubeconfig["clusters"]:
        c["cluster"]["server"] = f"https://{th.ip('h1')}:6443"
    (tmp_path / "admin.conf").write_text(yaml.safe_dump(kubeconfig))
    (tmp_path / "admin.conf").chmod(0o600)
    group_vars = yaml.safe_load(site["inv"].read_text())["all"]["vars"]
    inv = tmp_path / "existing.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {
        "tke_site_pack": str(site["pack"]), "tke_site_pack_pubkey": group_vars["tke_site_pack_pubkey"],
        "tke_admin_password": group_vars["tke_admin_password"],
        "components_kubeconfig": str(tmp_path / "admin.conf"), "components_image_namespace": "decoupled",
        "components_push_registry": f"{th.ip('h1')}:443",
        "components_push_ca": str(site["dir"] / ".tke" / "pki" / "ca.crt"),
        "components_push_user": "admin", "components_push_password": group_vars["tke_admin_password"],
        "components_list": SAMPLE}}}))
    # a fresh ControlPath directory: no SSH connection of an earlier run can be reused
    env = {"ANSIBLE_SSH_CONTROL_PATH_DIR": str(tmp_path / "cp")}
    before = {h: th.ssh_logins(h) for h in NODES}
    run = timed("components.yml, existing cluster", COMPONENTS, inv, env=env)
    after = {h: th.ssh_logins(h) for h in NODES}
    assert run.rc == 0, run.explain()
    assert set(run.stats) == {"localhost"}, run.explain()
    assert after == {h: n + 1 for h, n in before.items()}, (before, after)
    assert any("images pushed from the pack into the registry]: changed" in t for t in run.changed_tasks()), \
        run.explain()
    pushed = th.ssh("h1", "ls /var/lib/tke-registry/docker/registry/v2/repositories/decoupled/").stdout.split()
    assert pushed == ["sample-app", "sample-redis", "sample-web"]
    # the chart by the pack's helm on the controller: the new image path is a new revision
    history = release(th)
    assert (history[-1]["status"], history[-1]["chart"]) == ("deployed", "sample-web-0.1.0"), history
    deploy = json.loads(kubectl(th, "-n shop get deployment sample-web -o json").stdout)
    assert deploy["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.tke.com/decoupled/sample-web:1.0"
    # ready (the run waited for it): the API double found the image the push put in the registry
    sts = json.loads(kubectl(th, "-n shop get statefulset sample-redis -o json").stdout)
    assert sts["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.tke.com/decoupled/sample-redis:7.2"
    assert sts["status"]["readyReplicas"] == 1
    assert objects_of(th, "sample-app") == APP   # uninstalled above, back with the run
    again = timed("components.yml, existing cluster again", COMPONENTS, inv, env=env)
    assert again.rc == 0 and again.changed_hosts() == {}, again.explain()
    # an inventory with no host: the site's state (its lock, the unpacked pack) is kept beside the
    # inventory, never inside the collection (whose code every phase fingerprint digests)
    assert (tmp_path / ".tke" / "run.lock").is_file()
    assert not (TOP / "playbooks" / ".tke").exists()


def test_a_component_never_ready_fails_within_its_timeout_naming_it(testhosts, site, installed, pack_v2):
    stuck = SAMPLE + [{"name": "sample-stuck", "namespace": "shop",
                       "ready": {"workloads": [{"kind": "Deployment", "name": "sample-stuck"}], "timeout": 15}}]
    run = timed("components.yml, a component never ready", COMPONENTS, site["inv"],
                "-e", f"tke_site_pack={pack_v2}", "-e", "components_only=sample-stuck", *with_list(stuck))
    assert run.rc != 0
    out = flat(run.output)
    assert "apply (in order): sample-stuck" in out, run.explain()
    assert "component sample-stuck is not ready after 15 s: Deployment shop/sample-stuck" in out, run.explain()
    assert "timed out after 15 s waiting for Deployment shop/sample-stuck to be available (0/1 replicas" in out, \
        run.explain()
    assert run.seconds < 15 + 120, run.seconds


def test_a_chart_upgrade_never_ready_fails_within_its_timeout_and_is_rolled_back(testhosts, site, installed, pack_v2):
    before = release(testhosts)
    stuck = [SAMPLE[0], dict(SAMPLE[1], source="sample-web-stuck", ready={
        "workloads": [{"kind": "Deployment", "name": "sample-web"}], "timeout": 15}), SAMPLE[2]]
    run = timed("components.yml, a chart upgrade never ready", COMPONENTS, site["inv"],
                "-e", f"tke_site_pack={pack_v2}", "-e", "components_only=sample-web", *with_list(stuck))
    assert run.rc != 0
    out = flat(run.output)
    assert "component sample-web is not ready after 15 s: Deployment shop/sample-web" in out, run.explain()
    assert (f"its helm release shop/sample-web was rolled back to revision {before[-1]['revision']} "
            f"(now revision {before[-1]['revision'] + 2})") in out, run.explain()
    after = release(testhosts)
    assert [(r["chart"], r["status"]) for r in after[len(before) - 1:]] == [
        ("sample-web-0.1.0", "superseded"), ("sample-web-0.2.0", "superseded"), ("sample-web-0.1.0", "deployed")], after
    assert run.seconds < 15 + 120, run.seconds


def test_a_component_whose_image_the_pack_lacks_is_refused_before_the_api_is_touched(
        testhosts, site, installed, pack_v2):
    missing = SAMPLE + [{"name": "sample-missing", "namespace": "shop"}]
    run = timed("components.yml, an image the pack lacks", COMPONENTS, site["inv"],
                "-e", f"tke_site_pack={pack_v2}", "-e", "components_only=sample-missing", *with_list(missing))
    assert run.rc != 0
    out = flat(run.output)
    assert ("component sample-missing: Deployment shop/sample-missing runs image "
            "registry.tke.com/library/never-pushed:0, which the site pack does not carry for it") in out, run.explain()
    # refused before any API call: no namespace, no object, nothing waited for
    assert "Namespace of component" not in out and "Workloads ready" not in out, run.explain()
    assert objects_of(testhosts, "sample-missing") == []


def test_uninstall_all_removes_both_kinds_in_reverse_order_and_twice_changes_nothing(testhosts, site, installed):
    absent = ("-e", "components_state=absent", "-e", "components_confirm=true")
    run = timed("uninstall every component", COMPONENTS, site["inv"], *absent)
    assert run.rc == 0 and "remove (in order): sample-app, sample-web, sample-redis" in flat(run.output), run.explain()
    assert [release(testhosts, c) for c in CHARTS] == [[], []] and objects_of(testhosts, "sample-web") == []
    assert objects_of(testhosts, "sample-redis") == [] and objects_of(testhosts, "sample-app") == []
    again = timed("uninstall every component again", COMPONENTS, site["inv"], *absent)
    assert again.rc == 0 and again.changed_hosts() == {}, again.explain()

"""components_list: the rules between entries and with the pack, and the plan of a run."""
import json
import tarfile

import pytest

from ansible_collections.offline_pot.tke.plugins.plugin_utils import components as c

PACK = [{"name": "sample-redis", "files": ["components/sample-redis/statefulset.yml.j2"],
         "images": ["library/sample-redis:7.2"]},
        {"name": "sample-app", "files": ["components/sample-app/deployment.yml.j2"], "images": []}]


def comp(name, **kw):
    return {"name": name, **kw}


SAMPLE = [comp("sample-app", depends_on=["sample-redis"], namespace="shop"),
          comp("sample-redis", namespace="shop", values={"replicas": 1},
               ready={"workloads": [{"kind": "StatefulSet", "name": "sample-redis"}], "timeout": 60})]


def test_sample_is_valid():
    assert c.problems(SAMPLE, PACK) == []


def test_none_and_empty_are_valid():
    assert c.problems(None, PACK) == [] and c.problems([], PACK) == []


@pytest.mark.parametrize("declared,expected", [
    ([comp("a"), comp("a")], "components_list[1] (a): name 'a' is used twice (also components_list[0])"),
    ([comp("a", depends_on=["x"])], "components_list[0] (a): depends_on 'x', which is not a component of components_list"),
    ([comp("a", depends_on=["b"]), comp("b", enabled=False)],
     "components_list[0] (a): depends_on 'b', which is disabled (enabled: false)"),
    ([comp("a", depends_on=["b"]), comp("b", depends_on=["c"]), comp("c", depends_on=["a"])],
     "components_list: depends_on makes a cycle: a -> b -> c -> a"),
    ([comp("Bad_Name")], "components_list[0] (Bad_Name): name 'Bad_Name' must be a lowercase RFC 1123 label"),
    ([comp("a", namespace="NS")], "components_list[0] (a): namespace 'NS' must be a lowercase RFC 1123 label"),
    ([comp("a", ready={"workloads": [{"kind": "Job", "name": "x"}]})], "components_list[0] (a): ready.workloads entry"),
    ("nope", "components_list: must be a list"),
])
def test_problems_are_named(declared, expected):
    found = c.problems(declared)
    assert any(p.startswith(expected) for p in found), found


def test_source_missing_from_the_pack_is_named_with_what_the_pack_has():
    found = c.problems([comp("mysql"), comp("web", source="sample-app")], PACK)
    assert found == ["components_list[0] (mysql): source 'mysql' is not a component of the site pack "
                     "(the pack has: sample-app, sample-redis)"]


def test_without_the_pack_the_source_is_not_checked():
    assert c.problems([comp("mysql")], None) == []


def test_order_puts_dependencies_first_and_keeps_the_inventory_order_otherwise():
    declared = [comp("d", depends_on=["b", "c"]), comp("b", depends_on=["a"]), comp("c"), comp("a")]
    assert [x["name"] for x in c.order(declared)] == ["c", "a", "b", "d"]


def test_plan_present_applies_in_dependency_order_with_the_pack_files():
    plan = c.plan(SAMPLE, PACK)
    assert [x["name"] for x in plan["apply"]] == ["sample-redis", "sample-app"] and plan["remove"] == []
    redis = plan["apply"][0]
    assert redis["files"] == PACK[0]["files"] and redis["images"] == ["library/sample-redis:7.2"]
    assert redis["label"] == {"tke.offline-pot.io/part-of": "component-sample-redis"}
    assert redis["ready"] == {"workloads": [{"api_version": "apps/v1", "kind": "StatefulSet", "name": "sample-redis",
                                             "namespace": "shop"}], "timeout": 60}
    app = plan["apply"][1]
    assert app["source"] == "sample-app" and app["values"] == {} and app["ready"]["timeout"] == c.DEFAULT_TIMEOUT


def test_plan_present_removes_disabled_components():
    declared = [dict(SAMPLE[0], enabled=False), SAMPLE[1]]
    plan = c.plan(declared, PACK)
    assert [x["name"] for x in plan["apply"]] == ["sample-redis"]
    assert [x["name"] for x in plan["remove"]] == ["sample-app"]


def test_plan_absent_one_and_all():
    assert [x["name"] for x in c.plan(SAMPLE, PACK, "absent", "sample-app")["remove"]] == ["sample-app"]
    everything = c.plan(SAMPLE, PACK, "absent", [], confirm=True)
    assert [x["name"] for x in everything["remove"]] == ["sample-app", "sample-redis"] and everything["apply"] == []


def test_removing_all_needs_confirmation():
    with pytest.raises(c.PlanError, match="components_confirm=true"):
        c.plan(SAMPLE, PACK, "absent")


def test_removing_a_dependency_of_a_component_that_stays_is_refused():
    with pytest.raises(c.PlanError, match="sample-redis is needed by sample-app"):
        c.plan(SAMPLE, PACK, "absent", ["sample-redis"])
    both = c.plan(SAMPLE, PACK, "absent", "sample-redis,sample-app")
    assert [x["name"] for x in both["remove"]] == ["sample-app", "sample-redis"]


def test_plan_names_unknown_components_and_bad_state():
    with pytest.raises(c.PlanError, match="components_only: mysql not in components_list"):
        c.plan(SAMPLE, PACK, "absent", ["mysql"])
    with pytest.raises(c.PlanError, match="components_state: 'gone'"):
        c.plan(SAMPLE, PACK, "gone")


def test_plan_fails_on_the_problems():
    with pytest.raises(c.PlanError) as e:
        c.plan([comp("a"), comp("a")], PACK)
    assert any("used twice" in line for line in e.value.lines)


def test_pack_components_from_a_directory_and_a_tar(tmp_path):
    pack = tmp_path / "fixture-1.0.0"
    pack.mkdir()
    (pack / "manifest.json").write_text(json.dumps({"contents": {"components": PACK}}))
    assert c.pack_components(str(pack)) == PACK
    archive = tmp_path / "fixture-1.0.0.tar.gz"
    with tarfile.open(archive, "w:gz") as t:
        t.add(pack, arcname="fixture-1.0.0")
    assert c.pack_components(str(archive)) == PACK
    assert c.pack_components(str(tmp_path / "x.tar.zst")) is None
    assert c.pack_components("") is None


def test_the_filter_returns_the_problems_in_validates_words_instead_of_raising():
    from ansible_collections.offline_pot.tke.plugins.filter.components_plan import components_plan
    cyclic = [comp("a", depends_on=["b"]), comp("b", depends_on=["a"])]
    out = components_plan(cyclic, [{"name": "a"}, {"name": "b"}])
    assert out["apply"] == [] and out["remove"] == []
    assert out["problems"] == ["components_list: depends_on makes a cycle: a -> b -> a"]
    assert components_plan(SAMPLE, PACK)["problems"] == []


STS = {"kind": "StatefulSet", "metadata": {"name": "sample-redis", "namespace": "shop"},
       "spec": {"template": {"spec": {"initContainers": [{"name": "init", "image": "registry.tke.com/library/busybox:1.35"}],
                                      "containers": [{"name": "redis", "image": "registry.tke.com/library/sample-redis:7.2"}]}}}}
CRON = {"kind": "CronJob", "metadata": {"name": "tidy"},
        "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "t", "image": "docker.io/x:1"}]}}}}}}


def test_the_images_an_object_runs_are_its_pod_templates_containers():
    assert c.object_images(STS) == ["registry.tke.com/library/busybox:1.35", "registry.tke.com/library/sample-redis:7.2"]
    assert c.object_images(CRON) == ["docker.io/x:1"]
    assert c.object_images({"kind": "ConfigMap", "data": {"image": "x"}}) == []
    assert c.object_images({"kind": "Pod", "spec": {"containers": [{"name": "p", "image": "a:1"}]}}) == ["a:1"]


def test_an_image_the_pack_does_not_carry_for_the_component_is_named():
    redis = {"name": "sample-redis", "namespace": "shop", "images": ["library/sample-redis:7.2"]}
    # the site registry: its own images and the site's
    site = c.pack_image_refs(redis, "registry.tke.com/library", ["library/busybox:1.35"], "registry.tke.com")
    assert c.image_problems(redis, [STS], site) == []
    # pushed into another registry (decoupled): only its own, under that prefix
    pushed = c.pack_image_refs(redis, "harbor.example.com/shop")
    assert pushed == {"harbor.example.com/shop/sample-redis:7.2"}
    lines = c.image_problems(redis, [STS], pushed)
    assert len(lines) == 2 and lines[0].startswith(
        "component sample-redis: StatefulSet shop/sample-redis runs image registry.tke.com/library/busybox:1.35, "
        "which the site pack does not carry for it (it may run: harbor.example.com/shop/sample-redis:7.2)")
    assert c.image_problems(redis, [CRON], site)[0].startswith("component sample-redis: CronJob shop/tidy runs image docker.io/x:1")


def test_a_chart_component_carries_its_chart_and_the_packs_helm_is_the_newest(tmp_path):
    chart = {"file": "components/web/web-0.1.0.tgz", "name": "web", "version": "0.1.0", "sha256": "a" * 64}
    plan = c.plan([comp("web")], PACK + [{"name": "web", "files": [chart["file"]], "images": [], "chart": chart}])
    assert plan["apply"][0]["chart"] == chart
    assert c.plan(SAMPLE, PACK)["apply"][0]["chart"] is None
    manifest = {"contents": {"binaries": [
        {"name": "helm", "file": "bin/helm-3.9.0", "version": "3.9.0", "install": "/usr/local/bin/helm"},
        {"name": "helm", "file": "bin/helm-3.17.3", "version": "3.17.3", "install": "/usr/local/bin/helm"},
        {"name": "kubectl", "file": "bin/kubectl", "version": "1.31.1", "install": "/usr/local/bin/kubectl"}]}}
    assert c.pack_helm(manifest, str(tmp_path), "amd64") == {"path": str(tmp_path / "bin/helm-3.17.3"),
                                                             "install": "/usr/local/bin/helm"}
    # the controller's own architecture's: an arm64 build listed last is not taken on amd64
    manifest["contents"]["binaries"].append({"name": "helm", "file": "bin-arm64/helm-3.18.0", "version": "3.18.0",
                                             "install": "/usr/local/bin/helm", "arch": "arm64"})
    assert c.pack_helm(manifest, str(tmp_path), "amd64")["path"] == str(tmp_path / "bin/helm-3.17.3")
    assert c.pack_helm(manifest, str(tmp_path), "arm64")["path"] == str(tmp_path / "bin-arm64/helm-3.18.0")
    assert c.pack_helm({"contents": {"binaries": []}}, str(tmp_path)) is None and c.pack_helm({}, "/p") is None

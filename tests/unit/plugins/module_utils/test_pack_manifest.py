import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils import pack_manifest as pm


@pytest.fixture()
def tree(tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "runc").write_bytes(b"runc-binary")
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "Packages").write_text("Package: x\n")
    files = pm.scan_tree(str(tmp_path))
    m = pm.build_manifest("site", "1", files, {"binaries": []})
    (tmp_path / pm.MANIFEST_NAME).write_text(pm.dump_manifest(m))
    return tmp_path, m


def test_manifest_lists_every_file_but_itself(tree):
    root, m = tree
    assert [f["path"] for f in m["files"]] == ["bin/runc", "repo/Packages"]
    assert m["files"][0]["size"] == len(b"runc-binary")
    assert pm.check_manifest(m) == []
    assert pm.verify_tree(str(root), m) == []


@pytest.mark.parametrize("tamper,problem", [
    (lambda p: p.unlink(), "bin/runc: missing"),
    (lambda p: p.write_bytes(b"runc"), "bin/runc: truncated (4 bytes, manifest says 11)"),
    (lambda p: p.write_bytes(b"runc-binarx"), "bin/runc: altered"),
    (lambda p: p.write_bytes(b"runc-binary-and-more"), "bin/runc: size (20 bytes, manifest says 11)"),
])
def test_verify_names_the_bad_file(tree, tamper, problem):
    root, m = tree
    tamper(root / "bin" / "runc")
    lines = pm.problem_lines(pm.verify_tree(str(root), m))
    assert len(lines) == 1 and lines[0].startswith(problem)


def test_extra_files_are_not_problems(tree):
    root, m = tree
    (root / "extra").write_text("x")
    assert pm.verify_tree(str(root), m) == []


@pytest.mark.parametrize("change,error", [
    ({"format_version": 3}, "format_version 3 is not one of 1, 2"),
    ({"name": ""}, "name is missing"),
    ({"files": [{"path": "../etc/passwd", "size": 1, "sha256": "x"}]}, "not a relative path inside the pack"),
    ({"files": [{"path": "a"}]}, "files[0] needs path, size and sha256"),
])
def test_bad_manifests(tree, change, error):
    dummy, m = tree
    assert any(error in e for e in pm.check_manifest({**m, **change}))


def test_components_must_have_their_files_and_images_in_the_pack(tree):
    dummy, m = tree
    path = m["files"][0]["path"]
    good = {**m, "contents": {"images": [{"name": "library/r", "tag": "1"}],
                              "components": [{"name": "r", "files": [path], "images": ["library/r:1"]}]}}
    assert pm.check_manifest(good) == []
    bad = {**m, "contents": {"images": [], "components": [{"name": "r", "files": [path, "components/r/x.yml"],
                                                           "images": ["library/r:1"]}, {"files": []}]}}
    assert pm.check_manifest(bad) == ["component r: file components/r/x.yml is not in the pack",
                                      "component r: image library/r:1 is not in the pack",
                                      "contents.components: {'files': []} needs a name and its files"]


def test_scan_reuses_known_hashes_for_unchanged_files(tree):
    root, dummy = tree
    known = pm.scan_tree(str(root))
    known["bin/runc"]["sha256"] = "remembered"
    assert pm.scan_tree(str(root), known)["bin/runc"]["sha256"] == "remembered"


def test_select_by_prefix_include_exclude(tree):
    dummy, m = tree
    assert list(pm.select(m, "bin")) == ["runc"]
    assert list(pm.select(m, "", include=["repo/"])) == ["repo/Packages"]
    assert list(pm.select(m, "", exclude=["repo/"])) == ["bin/runc"]


def test_install_plan_files_and_directories(tmp_path):
    expected = {"bin/runc": {}, "bin/cni/bridge": {}, "bin/cni/loopback": {}, "repo/deb/Packages": {}}
    plan = pm.install_plan(expected, "/opt/pack", [{"path": "bin/runc", "install": "/usr/local/sbin/runc"},
                                                   {"path": "bin/cni/", "install": "/opt/cni/bin"}])
    assert plan == [("/opt/pack/bin/runc", "/usr/local/sbin/runc"),
                    ("/opt/pack/bin/cni/bridge", "/opt/cni/bin/bridge"),
                    ("/opt/pack/bin/cni/loopback", "/opt/cni/bin/loopback")]


def test_install_files_only_when_content_or_mode_differs(tmp_path):
    src = tmp_path / "src"
    src.write_bytes(b"binary")
    target = tmp_path / "usr" / "bin" / "x"
    assert pm.install_files([(str(src), str(target))]) == [str(target)]
    assert target.read_bytes() == b"binary" and target.stat().st_mode & 0o777 == 0o755
    assert pm.install_files([(str(src), str(target))]) == []
    target.chmod(0o644)
    assert pm.install_files([(str(src), str(target))]) == [str(target)]
    src.write_bytes(b"binarz")
    assert not pm.same_installed(str(src), str(target))


def test_a_chart_component_names_one_of_its_files_with_that_digest(tree):
    dummy, m = tree
    f = m["files"][0]
    chart = {"file": f["path"], "name": "web", "version": "0.1.0", "sha256": f["sha256"]}
    good = {**m, "contents": {"components": [{"name": "web", "files": [f["path"]], "chart": chart}]}}
    assert pm.check_manifest(good) == []
    bad = {**m, "contents": {"components": [{"name": "web", "files": [f["path"]], "chart": dict(chart, sha256="0" * 64)}]}}
    assert [e.split(":", maxsplit=1)[0] for e in pm.check_manifest(bad)] == ["component web"]


def test_a_pack_with_another_architectures_binaries_is_format_2():
    from ansible_collections.offline_pot.tke.plugins.module_utils.pack_manifest import build_manifest
    runc = {"name": "runc", "file": "bin/runc"}
    assert build_manifest("s", "1", {}, {"binaries": [runc]})["format_version"] == 1
    assert build_manifest("s", "1", {}, {"binaries": [runc, dict(runc, arch="arm64")]})["format_version"] == 2

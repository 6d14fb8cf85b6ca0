import hashlib
import http.server
import io
import json
import os
import shutil
import subprocess
import tarfile
import threading

import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils import site_pack_build as b
from harness.oci_layout import write_layout


def run(argv, cwd):
    res = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    return res.returncode, res.stdout, res.stderr


def sha(p):
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture()
def spec(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "runc").write_bytes(b"runc")
    tgz = src / "cni.tgz"
    with tarfile.open(tgz, "w:gz") as t:
        ti = tarfile.TarInfo("bridge")
        ti.size, ti.mode = 6, 0o755
        t.addfile(ti, io.BytesIO(b"bridge"))
    shared = os.urandom(20000)  # incompressible: the shared layer dominates both images
    write_layout(src / "img-a", "1", [shared, b"a"])
    write_layout(src / "img-b", "2", [shared])
    return {"name": "s", "version": "1",
            "binaries": [{"name": "runc", "path": str(src / "runc"), "sha256": sha(src / "runc"),
                          "install": "/usr/local/sbin/runc"},
                         {"name": "cni", "path": str(tgz), "sha256": sha(tgz), "unpack": True, "install": "/opt/cni/bin"}],
            "images": [{"name": "library/a", "tag": "1", "path": str(src / "img-a")},
                       {"name": "library/b", "tag": "2", "path": str(src / "img-b")}]}


def build(spec, tmp_path, **kw):
    return b.Builder(spec, str(tmp_path / "out"), str(tmp_path / "cache"), run, shutil.which, archive=False, **kw).build()


def test_build_then_rebuild_changes_nothing(spec, tmp_path):
    first = build(spec, tmp_path)
    assert first["changed"]
    m = json.loads((tmp_path / "out" / "s-1" / "manifest.json").read_text())
    paths = [f["path"] for f in m["files"]]
    assert "bin/runc" in paths and "bin/cni/bridge" in paths
    assert m["contents"]["registry"]["dedup_ratio"] > 1.5
    assert [i["name"] for i in m["contents"]["images"]] == ["library/a", "library/b"]
    second = build(spec, tmp_path)
    assert not second["changed"], second["changes"]


def test_a_binary_in_two_versions_is_kept_per_version_with_the_releases_it_serves(spec, tmp_path):
    src = tmp_path / "src"
    for v in ("1.6.20", "2.1.9"):
        (src / f"containerd-{v}").write_bytes(v.encode())
    spec["binaries"] = [{"name": "containerd", "path": str(src / "containerd-1.6.20"), "sha256": sha(src / "containerd-1.6.20"),
                         "version": "1.6.20", "install": "/usr/local/bin/containerd"},
                        {"name": "containerd", "path": str(src / "containerd-2.1.9"), "sha256": sha(src / "containerd-2.1.9"),
                         "version": "2.1.9", "install": "/usr/local/bin/containerd", "for_kubernetes": ["1.35"]}]
    build(spec, tmp_path)
    m = json.loads((tmp_path / "out" / "s-1" / "manifest.json").read_text())
    assert [(e["file"], e.get("for_kubernetes")) for e in m["contents"]["binaries"]] == \
        [("bin/containerd-1.6.20", None), ("bin/containerd-2.1.9", ["1.35"])]


def test_another_architectures_binaries_are_kept_apart_and_say_their_arch(spec, tmp_path):
    src = tmp_path / "src"
    for arch in ("amd64", "arm64"):
        for v in ("1.6.20", "2.1.9"):
            (src / f"containerd-{v}-{arch}").write_bytes(f"{v} {arch}".encode())
    spec["binaries"] = [dict({"name": "containerd", "path": str(src / f"containerd-{v}-{arch}"),
                              "sha256": sha(src / f"containerd-{v}-{arch}"), "version": v,
                              "install": "/usr/local/bin/containerd"},
                             **({"for_kubernetes": ["1.35"]} if v == "2.1.9" else {}),
                             **({} if arch == "amd64" else {"arch": arch}))
                        for arch in ("amd64", "arm64") for v in ("1.6.20", "2.1.9")] + spec["binaries"][:1] + \
        [dict(spec["binaries"][0], arch="arm64")]
    build(spec, tmp_path)
    pack = tmp_path / "out" / "s-1"
    m = json.loads((pack / "manifest.json").read_text())
    assert [(e["file"], e["arch"]) for e in m["contents"]["binaries"]] == [
        ("bin/containerd-1.6.20", "amd64"), ("bin/containerd-2.1.9", "amd64"),
        ("bin-arm64/containerd-1.6.20", "arm64"), ("bin-arm64/containerd-2.1.9", "arm64"),
        ("bin/runc", "amd64"), ("bin-arm64/runc", "arm64")]
    assert (pack / "bin-arm64" / "containerd-2.1.9").read_bytes() == b"2.1.9 arm64"
    assert not build(spec, tmp_path)["changed"]


def test_dropped_items_are_pruned(spec, tmp_path):
    build(spec, tmp_path)
    spec["images"] = spec["images"][:1]
    spec["binaries"] = spec["binaries"][:1]
    res = build(spec, tmp_path)
    assert res["changed"]
    m = json.loads((tmp_path / "out" / "s-1" / "manifest.json").read_text())
    paths = [f["path"] for f in m["files"]]
    assert not any(p.startswith("bin/cni") for p in paths)
    assert not any("repositories/library/b/" in p for p in paths)
    assert m["contents"]["registry"]["dedup_ratio"] == 1.0


def test_sha_mismatch_and_missing_file_name_the_item(spec, tmp_path):
    spec["binaries"][0]["sha256"] = "0" * 64
    with pytest.raises(b.BuildError, match=r"^binaries runc: .* does not match its sha256"):
        build(spec, tmp_path)
    spec["binaries"][0]["path"] = str(tmp_path / "nope")
    with pytest.raises(b.BuildError, match=r"^binaries runc: .*nope does not exist"):
        build(spec, tmp_path)


def test_failed_download_names_the_item(spec, tmp_path):
    spec["binaries"] = [{"name": "kubeadm", "url": "file:///nonexistent/kubeadm", "sha256": "1" * 64,
                         "install": "/usr/local/bin/kubeadm"}]
    with pytest.raises(b.BuildError, match=r"^binaries kubeadm: download of file:///nonexistent/kubeadm failed"):
        build(spec, tmp_path)


def test_download_is_cached_by_sha(spec, tmp_path):
    src = tmp_path / "src" / "runc"
    spec["binaries"] = [{"name": "runc", "url": src.as_uri(), "sha256": sha(src), "install": "/usr/local/sbin/runc"}]
    build(spec, tmp_path)
    src.unlink()  # the cache serves the re-build
    assert not build(spec, tmp_path)["changed"]


class _Proxy(http.server.BaseHTTPRequestHandler):
    """An HTTP proxy that serves one body for any absolute URL it is asked for and records them."""

    body = b"kubeadm through the proxy"
    seen: list = []

    def do_GET(self):  # noqa: N802 (http.server's name)
        self.seen.append((self.path, self.headers.get("User-Agent")))
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


def test_download_goes_through_the_proxy_of_the_environment(spec, tmp_path, monkeypatch):
    """ansible's open_url honours http_proxy on the build machine (a connected site behind a proxy):
    the pack's host name does not even resolve, only the proxy can serve it."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Proxy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{server.server_port}")
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        url = "http://packs.invalid/v1.30.4/kubeadm"
        spec["binaries"] = [{"name": "kubeadm", "url": url, "install": "/usr/local/bin/kubeadm",
                             "sha256": hashlib.sha256(_Proxy.body).hexdigest()}]
        build(spec, tmp_path)
    finally:
        server.shutdown()
        server.server_close()
    assert _Proxy.seen == [(url, "offline_pot.tke site_pack")]
    staged = tmp_path / "out" / "s-1" / "bin" / "kubeadm"
    assert staged.read_bytes() == _Proxy.body


def test_derived_images_come_from_images_dir_and_a_missing_one_says_how_to_fetch_it(tmp_path):
    """kubernetes: derives the images; their layouts are expected at <images_dir>/<name>_<tag>
    (a directory or a .tar); every missing one is named with its skopeo command before anything
    is imported; an images: item with the same name and tag overrides the location."""
    from ansible_collections.offline_pot.tke.plugins.module_utils import site_pack_spec as sps
    images = tmp_path / "images"
    spec = {"name": "k", "version": "1",
            "kubernetes": {"versions": ["1.31.1"], "network_plugins": ["flannel"], "images_dir": str(images)}}
    derived = sps.kubernetes_images(spec)
    for img in derived[2:]:   # kube-apiserver and kube-controller-manager left out
        write_layout(images / f"{img['name'].split('/', 1)[1]}_{img['tag']}", img["tag"], [img["tag"].encode()])
    with pytest.raises(b.BuildError) as e:
        build(spec, tmp_path)
    msg = str(e.value)
    assert msg.startswith("2 image(s) missing:")
    assert (f"library/kube-apiserver:v1.31.1 (Kubernetes 1.31.1): no OCI layout at {images}/kube-apiserver_v1.31.1 "
            f"(or .tar); fetch it with: skopeo copy docker://registry.k8s.io/kube-apiserver:v1.31.1 "
            f"oci:{images}/kube-apiserver_v1.31.1:v1.31.1") in msg
    assert "library/kube-controller-manager:v1.31.1" in msg and "coredns" not in msg
    assert not (tmp_path / "out" / "k-1" / "registry").exists()

    # one as a tar beside the others, the other given by an images: override elsewhere
    write_layout(tmp_path / "x", "v1.31.1", [b"api"])
    subprocess.run(["tar", "-C", str(tmp_path / "x"), "-cf", str(images / "kube-apiserver_v1.31.1.tar"), "."],
                   check=True)
    write_layout(tmp_path / "kcm-elsewhere", "v1.31.1", [b"kcm"])
    spec["images"] = [{"name": "library/kube-controller-manager", "tag": "v1.31.1",
                       "path": str(tmp_path / "kcm-elsewhere")}]
    res = build(spec, tmp_path)
    m = json.loads((tmp_path / "out" / "k-1" / "manifest.json").read_text())
    refs = sorted(f"{i['name']}:{i['tag']}" for i in m["contents"]["images"])
    assert refs == sorted(f"{i['name']}:{i['tag']}" for i in derived)
    assert m["contents"]["kubernetes"] == {"versions": ["1.31.1"], "network_plugins": ["flannel"],
                                           "namespace": "library"}
    assert "registry library/pause:3.10" in res["changes"]
    assert not build(spec, tmp_path)["changed"]


# --- components (docs/components.md) -------------------------------------------------------------
def with_component(spec, tmp_path):
    src = tmp_path / "src" / "redis"
    src.mkdir(parents=True)
    (src / "statefulset.yml.j2").write_text("kind: StatefulSet\n")
    (src / "service.yaml").write_text("kind: Service\n")
    (src / "README.md").write_text("not a template\n")
    write_layout(tmp_path / "src" / "img-redis", "7.2", [b"redis"])
    spec["components"] = [{"name": "sample-redis", "dir": str(src),
                           "images": [{"name": "library/sample-redis", "tag": "7.2",
                                       "path": str(tmp_path / "src" / "img-redis")}]}]
    return src


def test_components_are_collected_with_their_images(spec, tmp_path):
    src = with_component(spec, tmp_path)
    build(spec, tmp_path)
    m = json.loads((tmp_path / "out" / "s-1" / "manifest.json").read_text())
    assert m["contents"]["components"] == [{
        "name": "sample-redis", "dir": "components/sample-redis/",
        "files": ["components/sample-redis/service.yaml", "components/sample-redis/statefulset.yml.j2"],
        "images": ["library/sample-redis:7.2"]}]
    assert "library/sample-redis" in [i["name"] for i in m["contents"]["images"]]
    paths = {f["path"] for f in m["files"]}
    assert "components/sample-redis/statefulset.yml.j2" in paths and "components/sample-redis/README.md" not in paths
    assert not build(spec, tmp_path)["changed"]
    # a template dropped from the component's directory is dropped from the pack
    (src / "service.yaml").unlink()
    again = build(spec, tmp_path)
    assert "removed components/sample-redis/service.yaml" in again["changes"]


def test_a_component_without_templates_is_named(spec, tmp_path):
    src = with_component(spec, tmp_path)
    for f in src.glob("*.y*"):
        f.unlink()
    with pytest.raises(b.BuildError, match="components sample-redis: .* has no manifest template"):
        build(spec, tmp_path)


def test_a_chart_component_is_read_from_its_chart_yaml(tmp_path):
    import io
    import tarfile
    from ansible_collections.offline_pot.tke.plugins.module_utils import site_pack_build as b

    def chart(files):
        path = tmp_path / "c.tgz"
        with tarfile.open(path, "w:gz") as t:
            for name, text in files.items():
                ti = tarfile.TarInfo(name)
                ti.size = len(text)
                t.addfile(ti, io.BytesIO(text.encode()))
        return str(path)
    good = {"web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n", "web/templates/x.yaml": "{}"}
    meta = b.chart_metadata("components web", chart(good))
    assert (meta["name"], meta["version"]) == ("web", "0.1.0")
    with pytest.raises(b.BuildError, match="components web: .*apiVersion v2"):
        b.chart_metadata("components web", chart({"web/Chart.yaml": "apiVersion: v1\nname: web\nversion: 1\n"}))
    with pytest.raises(b.BuildError, match="not a packaged Helm chart"):
        b.chart_metadata("components web", chart({"web/values.yaml": "{}"}))


def deb(folder, name, version="1.0"):
    """A real (empty) Debian package built with dpkg-deb into folder."""
    root = folder / f"{name}-root"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(f"Package: {name}\nVersion: {version}\nArchitecture: all\n"
                                             f"Maintainer: t <t@example.org>\nDescription: {name}\n")
    subprocess.run(["dpkg-deb", "--build", "--root-owner-group", str(root), str(folder / f"{name}_{version}_all.deb")],
                   check=True, capture_output=True)
    shutil.rmtree(root)


@pytest.mark.skipif(not shutil.which("apt-ftparchive") or not shutil.which("dpkg-deb"),
                    reason="needs dpkg-deb and apt-ftparchive (Debian's dpkg and apt-utils)")
def test_each_release_has_its_own_repository_and_the_others_share_one(spec, tmp_path):
    plain, trixie = tmp_path / "debs", tmp_path / "debs-13"
    plain.mkdir()
    trixie.mkdir()
    deb(plain, "socat", "1.7")
    deb(trixie, "socat", "1.8")
    deb(trixie, "conntrack", "1.4.8")
    spec["os_packages"] = {"deb": [{"dir": str(plain)}, {"dir": str(trixie), "release": "trixie"}]}
    assert build(spec, tmp_path)["changed"]
    pack = tmp_path / "out" / "s-1"
    m = json.loads((pack / "manifest.json").read_text())
    assert sorted((d["file"], d["version"]) for d in m["contents"]["os_packages"]["deb"]) == [
        ("repo/deb-trixie/conntrack_1.4.8_all.deb", "1.4.8"), ("repo/deb-trixie/socat_1.8_all.deb", "1.8"),
        ("repo/deb/socat_1.7_all.deb", "1.7")]
    # each folder's index lists its own packages alone (apt-ftparchive reads below the folder it runs in)
    index = {d: (pack / d / "Packages").read_text() for d in ("repo/deb", "repo/deb-trixie")}
    assert "Filename: ./socat_1.7_all.deb" in index["repo/deb"] and "1.8" not in index["repo/deb"]
    assert "conntrack" in index["repo/deb-trixie"] and "socat_1.7" not in index["repo/deb-trixie"]
    assert {"repo/deb/Release", "repo/deb-trixie/Release"} <= {f["path"] for f in m["files"]}
    assert not build(spec, tmp_path)["changed"]


def test_apt_fetches_only_this_machines_release(spec, tmp_path, monkeypatch):
    monkeypatch.setattr(b.Builder, "release", staticmethod(lambda: "bookworm"))
    spec["os_packages"] = {"deb": [{"apt": ["socat"], "release": "trixie"}]}
    with pytest.raises(b.BuildError, match="os_packages.deb.* apt fetches this machine's release .bookworm., not "
                                           "trixie: give trixie's packages with dir, path or url"):
        build(spec, tmp_path)


@pytest.mark.skipif(not shutil.which("apt-ftparchive") or not shutil.which("dpkg-deb"),
                    reason="needs dpkg-deb and apt-ftparchive (Debian's dpkg and apt-utils)")
def test_each_architecture_has_its_own_repository(spec, tmp_path):
    plain, arm, arm13 = tmp_path / "debs", tmp_path / "debs-arm64", tmp_path / "debs-13-arm64"
    for d, v in ((plain, "1.7"), (arm, "1.7"), (arm13, "1.8")):
        d.mkdir()
        deb(d, "socat", v)
    spec["os_packages"] = {"deb": [{"dir": str(plain)}, {"dir": str(arm), "arch": "arm64"},
                                   {"dir": str(arm13), "release": "trixie", "arch": "arm64"}]}
    build(spec, tmp_path)
    m = json.loads((tmp_path / "out" / "s-1" / "manifest.json").read_text())
    assert sorted(d["file"] for d in m["contents"]["os_packages"]["deb"]) == [
        "repo/deb-arm64/socat_1.7_all.deb", "repo/deb-trixie-arm64/socat_1.8_all.deb", "repo/deb/socat_1.7_all.deb"]


def test_apt_fetches_only_this_machines_architecture(spec, tmp_path, monkeypatch):
    monkeypatch.setattr(b.platform, "machine", lambda: "x86_64")
    spec["os_packages"] = {"deb": [{"apt": ["socat"], "arch": "arm64"}]}
    with pytest.raises(b.BuildError, match="os_packages.deb.* apt fetches this machine's architecture .amd64., not "
                                           "arm64: give arm64's packages with dir, path or url"):
        build(spec, tmp_path)


def test_the_build_machines_release_is_read_from_os_release(tmp_path):
    (tmp_path / "os-release").write_text('NAME="Debian GNU/Linux"\nVERSION_CODENAME=trixie\n')
    assert b.Builder.release(str(tmp_path / "os-release")) == "trixie"
    assert b.Builder.release(str(tmp_path / "none")) == ""


def test_an_image_index_is_stored_whole_and_its_architectures_recorded(spec, tmp_path):
    from harness.fixture_pack import Layout
    Layout(tmp_path / "multi").multi_arch("1", {"amd64": [b"amd64 layer"], "arm64": [b"arm64 layer"]}, ["/bin/sh"])
    Layout(tmp_path / "single").image("1", [b"amd64 layer"], ["/bin/sh"])
    spec["images"] = [{"name": "library/multi", "tag": "1", "path": str(tmp_path / "multi")},
                      {"name": "library/single", "tag": "1", "path": str(tmp_path / "single")}]
    build(spec, tmp_path)
    pack = tmp_path / "out" / "s-1"
    m = json.loads((pack / "manifest.json").read_text())
    assert [(i["name"], i["architectures"]) for i in m["contents"]["images"]] == [
        ("library/multi", ["amd64", "arm64"]), ("library/single", ["amd64"])]
    # the tag names the index, and both manifests it names are stored (a node pulls its own)
    index = json.loads((pack / "registry/docker/registry/v2/blobs/sha256" / m["contents"]["images"][0]["digest"][7:9]
                        / m["contents"]["images"][0]["digest"][7:] / "data").read_text())
    assert [c["platform"]["architecture"] for c in index["manifests"]] == ["amd64", "arm64"]
    for c in index["manifests"]:
        assert (pack / "registry/docker/registry/v2/repositories/library/multi/_manifests/revisions/sha256"
                / c["digest"][7:] / "link").is_file()


def test_a_derived_image_without_an_architecture_of_the_packs_binaries_says_how_to_fetch_all(spec, tmp_path):
    from harness.fixture_pack import Layout
    from ansible_collections.offline_pot.tke.plugins.module_utils import site_pack_spec as sps
    images = tmp_path / "images"
    spec.update(images=[], kubernetes={"versions": ["1.31.1"], "network_plugins": ["flannel"], "images_dir": str(images)})
    for img in sps.kubernetes_images(spec):
        layers = {"amd64": [img["tag"].encode()], "arm64": [b"arm " + img["tag"].encode()]}
        if "pause" in img["name"]:
            layers.pop("arm64")
        Layout(images / f"{img['name'].split('/', 1)[1]}_{img['tag']}").put(img["tag"], layers, ["/pause"])
    assert build(spec, tmp_path)["changed"]   # amd64's binaries alone: amd64's images do
    spec["binaries"].append(dict(spec["binaries"][0], arch="arm64"))
    with pytest.raises(b.BuildError, match=r"library/pause:3.10: has no arm64 image \(it has amd64\), and the pack's "
                                           r"binaries are for amd64, arm64; fetch it with: skopeo copy --all "
                                           r"docker://registry.k8s.io/pause:3.10 oci:.*/pause_3.10:3.10"):
        build(spec, tmp_path)

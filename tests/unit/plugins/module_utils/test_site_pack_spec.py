import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils import site_pack_spec as s

SHA = "a" * 64
GOOD = {"name": "site", "version": "1.0",
        "os_packages": {"deb": [{"apt": ["socat"]}, {"dir": "/debs"}, {"url": "http://x/a.deb", "sha256": SHA},
                                {"dir": "/debs-13", "release": "trixie"}]},
        "binaries": [{"name": "runc", "path": "/b/runc", "sha256": SHA, "install": "/usr/local/sbin/runc"}],
        "images": [{"name": "library/busybox", "tag": "1.35", "path": "/img"}],
        "charts": [{"path": "/c.tgz", "sha256": SHA}],
        "controller": {"collections": [{"path": "/c.tar.gz", "sha256": SHA}], "requirements": "/r.txt"}}


CTRD = {"name": "containerd", "path": "/b/c", "sha256": SHA, "install": "/usr/local/bin/containerd", "version": "1.6.20"}


def test_good_spec():
    assert s.validate(GOOD) == []
    # containerd 1.6.20 for every release, 2.1.9 for 1.35 and 1.36
    assert s.validate({**GOOD, "binaries": [CTRD, dict(CTRD, version="2.1.9", for_kubernetes=["1.35", "1.36"])]}) == []


@pytest.mark.parametrize("change,error", [
    ({"name": ""}, "name is required"),
    ({"extra": 1}, "unknown key 'extra'"),
    ({"binaries": [{"name": "runc", "path": "/b/runc", "install": "/x"}]}, "binaries runc: sha256 is required"),
    ({"binaries": [{"name": "runc", "path": "/b", "url": "http://x", "sha256": SHA, "install": "/x"}]},
     "binaries runc: give exactly one of url or path"),
    ({"binaries": [{"name": "runc", "path": "/b", "sha256": "ABC", "install": "/x"}]}, "sha256 must be 64"),
    ({"binaries": [{"name": "runc", "path": "/b", "sha256": SHA, "install": "relative"}]}, "install must be an absolute"),
    ({"binaries": [{"name": "runc", "path": "/b", "sha256": SHA, "install": "/a"}] * 2}, "name, version and arch are used twice"),
    ({"binaries": [dict(CTRD, for_kubernetes="1.35")]}, 'for_kubernetes takes a list of Kubernetes minors like "1.35"'),
    ({"binaries": [dict(CTRD, for_kubernetes=[1.35])]}, "for_kubernetes takes a list"),
    ({"binaries": [dict(CTRD, for_kubernetes=["1.35.7"])]}, "for_kubernetes takes a list"),
    ({"binaries": [CTRD, dict(CTRD, version="1.7.0"), dict(CTRD, version="2.1.9", for_kubernetes=["1.35"])]},
     "binaries: containerd has 2 versions without for_kubernetes (1.6.20, 1.7.0)"),
    ({"binaries": [dict(CTRD, for_kubernetes=["1.34", "1.35"]), dict(CTRD, version="2.1.9", for_kubernetes=["1.35"])]},
     "binaries: containerd 1.6.20 and 2.1.9 both name Kubernetes 1.35 in for_kubernetes"),
    ({"images": [{"name": "Library/X", "tag": "1", "path": "/i"}]}, "repository name"),
    ({"images": [{"name": "a", "path": "/i"}]}, "images a: tag is required"),
    ({"os_packages": {"rpm": [{"apt": ["x"]}]}}, "apt takes"),
    ({"os_packages": {"deb": [{"dir": "/d", "release": "Debian 13"}]}},
     "os_packages.deb d: release takes a Debian release's codename (e.g. trixie), on deb items"),
    ({"os_packages": {"rpm": [{"path": "/r.rpm", "sha256": SHA, "release": "trixie"}]}}, "os_packages.rpm r.rpm: release takes"),
    ({"os_packages": {"deb": [{"dir": "/d", "arch": "x86_64"}]}},
     "os_packages.deb d: arch 'x86_64' is not one the collection installs on (amd64, arm64)"),
    ({"os_packages": {"rpm": [{"path": "/r.rpm", "sha256": SHA, "arch": "arm64"}]}}, "os_packages.rpm r.rpm: arch is for deb items"),
    ({"binaries": [dict(CTRD, arch="riscv64")]}, "binaries containerd: arch 'riscv64' is not one the collection installs on"),
    ({"binaries": [dict(CTRD, arch="arm64"), dict(CTRD, arch="arm64", version="1.7.0"), CTRD,
                   dict(CTRD, arch="arm64", version="2.1.9", for_kubernetes=["1.35"])]},
     "binaries: containerd (arm64) has 2 versions without for_kubernetes (1.6.20, 1.7.0)"),
    ({"controller": {"other": 1}}, "controller takes"),
    ({"components": [{"name": "Redis", "dir": "/c"}]}, "components Redis: name is required (a lowercase RFC 1123"),
    ({"components": [{"name": "redis"}]}, "components redis: needs one of dir (the directory of its manifest templates) and chart"),
    ({"components": [{"name": "web", "dir": "/c", "chart": "/w.tgz"}]}, "components web: needs one of dir"),
    ({"components": [{"name": "web", "chart": "/w.tgz", "sha256": "x"}]}, "components web: sha256 must be 64"),
    ({"components": [{"name": "redis", "dir": "/c"}] * 2}, "components redis: name is used twice"),
    ({"components": [{"name": "redis", "dir": "/c", "extra": 1}]}, "components redis: unknown key 'extra'"),
    # a component's images are checked as the images section's, duplicates across both included
    ({"components": [{"name": "redis", "dir": "/c", "images": [{"name": "library/busybox", "tag": "1.35",
                                                                "path": "/i"}]}]}, "images library/busybox:1.35: listed twice"),
    ({"components": [{"name": "redis", "dir": "/c", "images": [{"name": "r", "tag": "1"}]}]}, "images r:1: path"),
])
def test_errors_name_the_item(change, error):
    errors = s.validate({**GOOD, **change})
    assert any(error in e for e in errors), errors


def test_components_and_their_images():
    spec = {**GOOD, "components": [{"name": "sample-redis", "dir": "/c/redis",
                                    "images": [{"name": "library/sample-redis", "tag": "7.2", "path": "/i"}]}]}
    assert s.validate(spec) == []
    assert s.component_images(spec) == [{"name": "library/sample-redis", "tag": "7.2", "path": "/i"}]
    assert s.component_images(GOOD) == []


def test_label_and_basename():
    assert s.label("images", {"name": "a/b", "tag": "1"}, 0) == "images a/b:1"
    assert s.label("charts", {"url": "http://h/x/c.tgz?y=1"}, 3) == "charts c.tgz?y=1"
    assert s.basename({"url": "http://h/x/c.tgz?y=1"}) == "c.tgz"


K8S = {"versions": ["1.30.4"], "network_plugins": ["calico"], "images_dir": "/build/images"}


@pytest.mark.parametrize("k8s,error", [
    ({**K8S, "versions": ["1.31.15"]}, "kubernetes.versions: Kubernetes 1.31.15: the images kubeadm needs for it are not "
                                       "confirmed here"),
    ({**K8S, "versions": ["v1.30"]}, "is not a release like 1.30.4"),
    ({**K8S, "versions": []}, "kubernetes.versions: list the Kubernetes release(s)"),
    ({**K8S, "network_plugins": ["weave"]}, "kubernetes.network_plugins: 'weave' is not one of calico, flannel"),
    ({**K8S, "images_dir": None}, "kubernetes.images_dir: the directory holding the OCI layouts"),
    ({**K8S, "namespace": "Lib"}, "kubernetes.namespace: must be a registry namespace"),
    ({**K8S, "registry": "x"}, "kubernetes takes images_dir, namespace, network_plugins, versions"),
])
def test_kubernetes_section_errors(k8s, error):
    errors = s.validate({**GOOD, "kubernetes": k8s})
    assert any(error in e for e in errors), errors


def test_images_derived_from_versions_and_plugins_with_overrides():
    spec = {**GOOD, "kubernetes": {**K8S, "versions": ["1.30.4", "1.30.5"], "network_plugins": ["flannel"]}}
    assert s.validate(spec) == []
    derived = s.kubernetes_images(spec)
    refs = [f"{i['name']}:{i['tag']}" for i in derived]
    # 1.30.4 and 1.30.5 share pause 3.9: listed once, for both
    assert refs == [f"library/{c}:v1.30.4" for c in ("kube-apiserver", "kube-controller-manager", "kube-scheduler",
                                                     "kube-proxy")] + [
        "library/coredns:v1.11.1", "library/pause:3.9", "library/etcd:3.5.12-0"] + [
        f"library/{c}:v1.30.5" for c in ("kube-apiserver", "kube-controller-manager", "kube-scheduler",
                                         "kube-proxy")] + [
        "library/coredns:v1.11.3", "library/etcd:3.5.15-0",
        "library/flannel:v0.28.9", "library/flannel-cni-plugin:v1.9.1-flannel3"]
    pause = next(i for i in derived if i["name"] == "library/pause")
    assert pause == {"name": "library/pause", "tag": "3.9", "source": "registry.k8s.io/pause",
                     "for": "Kubernetes 1.30.4, Kubernetes 1.30.5", "path": "/build/images/pause_3.9"}
    # an images: item with a derived image's name and tag replaces it; the site's own images stay
    own = {"name": "library/pause", "tag": "3.9", "path": "/elsewhere/pause.tar", "sha256": SHA}
    images = s.pack_images({**spec, "images": [GOOD["images"][0], own]})
    assert images[:2] == [GOOD["images"][0], own]
    assert [i for i in images if i["name"] == "library/pause"] == [own]
    assert len(images) == 2 + len(derived) - 1
    # another namespace (tke_registry_namespace) names every derived image
    other = s.kubernetes_images({"kubernetes": {**K8S, "namespace": "tke"}})
    assert {i["name"].split("/")[0] for i in other} == {"tke"}
    assert s.kubernetes_images(GOOD) == [] and s.pack_images(GOOD) == GOOD["images"]


def test_components_may_share_an_image_but_not_give_it_two_sources():
    img = {"name": "library/web", "tag": "1", "path": "/img/web"}
    shared = {"components": [{"name": "web", "chart": "/w-1.tgz", "images": [img]},
                             {"name": "web-next", "chart": "/w-2.tgz", "images": [dict(img)]}]}
    assert s.validate({**GOOD, **shared}) == [] and s.component_images(shared) == [img]
    clash = {"components": [{"name": "web", "chart": "/w-1.tgz", "images": [img]},
                            {"name": "web-next", "chart": "/w-2.tgz", "images": [dict(img, path="/other")]}]}
    assert any("library/web:1: listed twice" in e for e in s.validate({**GOOD, **clash}))


def test_a_deb_items_folder_is_its_release_s():
    assert s.deb_dir({"dir": "/d"}) == "repo/deb/"
    assert s.deb_dir({"dir": "/d", "release": "trixie"}) == "repo/deb-trixie/"
    assert s.deb_dir({"dir": "/d", "arch": "arm64"}) == "repo/deb-arm64/"
    assert s.deb_dir({"dir": "/d", "release": "trixie", "arch": "arm64"}) == "repo/deb-trixie-arm64/"
    assert s.deb_dir({"dir": "/d", "arch": "amd64"}) == "repo/deb/"
    assert (s.binary_dir({}), s.binary_dir({"arch": "arm64"})) == ("bin/", "bin-arm64/")

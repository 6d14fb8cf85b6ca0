import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils import kube_images as k


def tags(version):
    return {i["name"]: i["tag"] for i in k.kubeadm_images(version)}


@pytest.mark.parametrize("version,pause,etcd,coredns", [
    # the releases where kubeadm's tags changed inside a minor, and the ones around them
    ("1.28.0", "3.9", "3.5.9-0", "v1.10.1"), ("1.28.5", "3.9", "3.5.9-0", "v1.10.1"),
    ("1.28.6", "3.9", "3.5.10-0", "v1.10.1"), ("1.28.8", "3.9", "3.5.12-0", "v1.10.1"),
    ("1.28.13", "3.9", "3.5.12-0", "v1.10.1"), ("1.28.14", "3.9", "3.5.15-0", "v1.10.1"),
    ("1.29.2", "3.9", "3.5.10-0", "v1.11.1"), ("1.29.3", "3.9", "3.5.12-0", "v1.11.1"),
    ("1.29.8", "3.9", "3.5.12-0", "v1.11.1"), ("1.29.9", "3.9", "3.5.15-0", "v1.11.1"),
    ("1.30.4", "3.9", "3.5.12-0", "v1.11.1"), ("1.30.5", "3.9", "3.5.15-0", "v1.11.3"),
    ("v1.31.0", "3.10", "3.5.15-0", "v1.11.1"), ("1.31.1", "3.10", "3.5.15-0", "v1.11.3"),
    ("1.29.10", "3.9", "3.5.15-0", "v1.11.1"), ("1.29.11", "3.9", "3.5.16-0", "v1.11.1"),
    ("1.30.14", "3.9", "3.5.15-0", "v1.11.3"), ("1.31.13", "3.10", "3.5.15-0", "v1.11.3"),
    ("1.31.14", "3.10", "3.5.24-0", "v1.11.3"), ("1.32.0", "3.10", "3.5.16-0", "v1.11.3"),
    ("1.32.9", "3.10", "3.5.16-0", "v1.11.3"), ("1.32.10", "3.10", "3.5.24-0", "v1.11.3"),
    ("1.33.5", "3.10", "3.5.21-0", "v1.12.0"), ("1.33.6", "3.10", "3.5.24-0", "v1.12.0"),
    ("1.34.1", "3.10.1", "3.6.4-0", "v1.12.1"), ("1.34.2", "3.10.1", "3.6.5-0", "v1.12.1"),
    ("1.34.10", "3.10.1", "3.6.5-0", "v1.12.1"), ("1.35.0", "3.10.1", "3.6.6-0", "v1.13.1"),
    ("1.35.7", "3.10.1", "3.6.6-0", "v1.13.1"), ("1.36.0", "3.10.2", "3.6.8-0", "v1.14.2"),
    ("1.36.3", "3.10.2", "3.6.8-0", "v1.14.2"),
])
def test_kubeadm_tags_per_release(version, pause, etcd, coredns):
    v = version.lstrip("v")
    assert tags(version) == {"kube-apiserver": f"v{v}", "kube-controller-manager": f"v{v}",
                             "kube-scheduler": f"v{v}", "kube-proxy": f"v{v}",
                             "pause": pause, "etcd": etcd, "coredns": coredns}


# released, but not recorded in the table's source: refused, never extrapolated from the last row
@pytest.mark.parametrize("version", ["1.27.16", "1.28.16", "1.29.16", "1.31.15", "1.34.11", "1.35.8", "1.36.4",
                                     "1.37.0", "1.30", "2.0.0", "latest"])
def test_unconfirmed_releases_are_refused_by_name(version):
    with pytest.raises(k.UnsupportedVersion, match=f"^Kubernetes {version}|'{version}' is not a release"):
        k.kubeadm_images(version)


def test_every_release_the_collection_installs_is_known():
    """tke_supported_k8s_versions (roles/tke/defaults/main.yml) are all in the table."""
    import yaml
    from pathlib import Path
    top = Path(k.__file__).resolve().parents[2]
    supported = yaml.safe_load((top / "roles" / "tke" / "defaults" / "main.yml").read_text())["tke_supported_k8s_versions"]
    assert set(supported) <= set(k.supported_releases())


def test_sources_and_pinned_names():
    imgs = {i["name"]: i for i in k.kubeadm_images("1.30.4")}
    assert imgs["coredns"]["source"] == "registry.k8s.io/coredns/coredns"
    assert imgs["kube-proxy"]["source"] == "registry.k8s.io/kube-proxy"
    assert k.pinned("pause", "1.31.1") == "pause:3.10" and k.pinned("etcd", "1.30.4") == "etcd:3.5.12-0"
    assert k.pinned("calico-node") == "calico-node:v3.32.1" and k.pinned("flannel") == "flannel:v0.28.9"
    with pytest.raises(k.UnsupportedVersion, match="no pinned image named 'weave'"):
        k.pinned("weave")
    assert [i["name"] for i in k.network_images("calico")] == ["calico-cni", "calico-node", "calico-kube-controllers"]
    assert k.fetch_command("ghcr.io/flannel-io/flannel", "v0.28.9", "/b/flannel_v0.28.9", True).startswith("skopeo copy --all ")
    assert k.fetch_command("ghcr.io/flannel-io/flannel", "v0.28.9", "/b/flannel_v0.28.9") == \
        "skopeo copy docker://ghcr.io/flannel-io/flannel:v0.28.9 oci:/b/flannel_v0.28.9:v0.28.9"

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.offline_pot.tke.plugins.filter.pinned_image import FilterModule

pinned_image = FilterModule().filters()["pinned_image"]


def test_pinned_image_for_a_version_and_for_the_network():
    assert pinned_image("pause", "1.30.4") == "pause:3.9"
    assert pinned_image("pause", "1.31.1") == "pause:3.10"
    assert pinned_image("flannel-cni-plugin") == "flannel-cni-plugin:v1.9.1-flannel3"


def test_unknown_version_or_image_fails_naming_it():
    with pytest.raises(AnsibleFilterError, match="Kubernetes 1.37.0: the images kubeadm needs"):
        pinned_image("pause", "1.37.0")
    with pytest.raises(AnsibleFilterError, match="no pinned image named 'cilium'"):
        pinned_image("cilium")


def test_pack_missing_images_lists_what_the_site_pulls_and_the_pack_lacks():
    from ansible_collections.offline_pot.tke.plugins.filter.pack_missing_images import FilterModule as PackFilters
    from ansible_collections.offline_pot.tke.plugins.module_utils import kube_images
    missing = PackFilters().filters()["pack_missing_images"]
    site = kube_images.site_images("1.31.1", "calico")
    assert "library/pause:3.10" in site and "library/calico-node:v3.32.1" in site and len(site) == 10
    pack = [{"name": r.rsplit(":", 1)[0], "tag": r.rsplit(":", 1)[1], "digest": "sha256:x"} for r in site]
    assert missing(pack, "1.31.1", "calico") == []
    assert missing(pack, "1.31.1", "none") == []
    assert missing(pack, "1.30.4", "calico") == [
        "library/coredns:v1.11.1", "library/etcd:3.5.12-0", "library/kube-apiserver:v1.30.4",
        "library/kube-controller-manager:v1.30.4", "library/kube-proxy:v1.30.4", "library/kube-scheduler:v1.30.4",
        "library/pause:3.9"]
    assert missing(pack, "1.31.1", "flannel") == ["library/flannel-cni-plugin:v1.9.1-flannel3", "library/flannel:v0.28.9"]
    assert len(missing(pack, "1.31.1", "calico", "tke")) == 10   # another namespace: nothing is where the cluster pulls
    with pytest.raises(AnsibleFilterError, match="Kubernetes 1.27.1"):
        missing(pack, "1.27.1", "calico")

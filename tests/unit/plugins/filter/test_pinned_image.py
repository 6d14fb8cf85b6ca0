import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.offline_pot.tke.plugins.filter.pinned_image import FilterModule

pinned_image = FilterModule().filters()["pinned_image"]


def test_pinned_image_for_a_version_and_for_the_network():
    assert pinned_image("pause", "1.30.4") == "pause:3.9"
    assert pinned_image("pause", "1.31.1") == "pause:3.10"
    assert pinned_image("flannel-cni-plugin") == "flannel-cni-plugin:v1.9.1-flannel3"


def test_unknown_version_or_image_fails_naming_it():
    with pytest.raises(AnsibleFilterError, match="Kubernetes 1.32.0: the images kubeadm needs"):
        pinned_image("pause", "1.32.0")
    with pytest.raises(AnsibleFilterError, match="no pinned image named 'cilium'"):
        pinned_image("cilium")

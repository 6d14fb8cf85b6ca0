from ansible_collections.offline_pot.tke.plugins.filter.pack_host_binaries import pack_host_binaries

BINS = [{"name": "runc", "file": "bin/runc", "groups": []},
        {"name": "registry", "file": "bin/registry", "groups": ["registry"]},
        {"name": "cni", "dir": "bin/cni/", "groups": []}]


def test_binaries_by_group():
    assert [b["path"] for b in pack_host_binaries(BINS, ["workers"])] == ["bin/runc", "bin/cni/"]
    assert [b["name"] for b in pack_host_binaries(BINS, ["registry", "masters"])] == ["runc", "registry", "cni"]


K8S_BINS = [{"name": "kubeadm", "version": v, "file": f"bin/kubeadm-{v}", "groups": ["masters", "workers"]}
            for v in ("1.30.4", "1.31.1")] + [{"name": "runc", "version": "1.1", "file": "bin/runc"}]


def test_a_binary_in_several_versions_is_taken_in_the_cluster_version():
    assert [b["path"] for b in pack_host_binaries(K8S_BINS, ["workers"], "v1.31.1")] == ["bin/kubeadm-1.31.1", "bin/runc"]
    assert [b["path"] for b in pack_host_binaries(K8S_BINS, ["masters"], "1.30.4")] == ["bin/kubeadm-1.30.4", "bin/runc"]
    assert [b["path"] for b in pack_host_binaries(K8S_BINS, ["etcd"], "1.29.8")] == ["bin/runc"]


def test_no_matching_version_is_an_error_naming_what_the_pack_has():
    import pytest
    from ansible.errors import AnsibleFilterError
    with pytest.raises(AnsibleFilterError, match=r"kubeadm in versions 1.30.4, 1.31.1, none of them 1.29.8 \(tke_k8s_version\)"):
        pack_host_binaries(K8S_BINS, ["workers"], "1.29.8")

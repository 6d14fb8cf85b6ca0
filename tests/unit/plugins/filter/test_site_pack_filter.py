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


# containerd 1.6.20 for every release, 2.1.9 for 1.35 (docs/site_pack.md, "One binary for some releases")
CTRD_BINS = [{"name": "containerd", "version": "1.6.20", "file": "bin/containerd-1.6.20"},
             {"name": "containerd", "version": "2.1.9", "file": "bin/containerd-2.1.9", "for_kubernetes": ["1.35"]}] \
    + K8S_BINS


def test_a_binary_for_some_releases_is_taken_by_the_cluster_minor_else_the_default():
    assert [b["path"] for b in pack_host_binaries(CTRD_BINS, ["etcd"], "v1.35.7")] == ["bin/containerd-2.1.9", "bin/runc"]
    assert [b["path"] for b in pack_host_binaries(CTRD_BINS, ["workers"], "1.31.1")] == \
        ["bin/containerd-1.6.20", "bin/kubeadm-1.31.1", "bin/runc"]
    # the exact version rule comes first (kubeadm's), and a release no entry serves gets the default
    assert [b["path"] for b in pack_host_binaries(CTRD_BINS, ["etcd"], "1.34.10")] == ["bin/containerd-1.6.20", "bin/runc"]


def test_without_a_default_a_release_no_entry_names_is_an_error():
    import pytest
    from ansible.errors import AnsibleFilterError
    only = [dict(b, for_kubernetes=["1.34"]) if b["version"] == "1.6.20" else b for b in CTRD_BINS[:2]]
    assert [b["version"] for b in pack_host_binaries(only, [], "1.34.10")] == ["1.6.20"]
    with pytest.raises(AnsibleFilterError, match=r"containerd in versions 1.6.20, 2.1.9, none of them 1.33.13"):
        pack_host_binaries(only, [], "1.33.13")


def test_a_host_takes_its_own_architectures_entries():
    arm = [dict(b, file=b["file"].replace("bin/", "bin-arm64/"), arch="arm64") for b in CTRD_BINS]
    both = CTRD_BINS + arm
    assert [b["path"] for b in pack_host_binaries(both, ["etcd"], "1.35.7", "aarch64")] == \
        ["bin-arm64/containerd-2.1.9", "bin-arm64/runc"]
    assert [b["path"] for b in pack_host_binaries(both, ["workers"], "1.31.1", "x86_64")] == \
        ["bin/containerd-1.6.20", "bin/kubeadm-1.31.1", "bin/runc"]
    # Debian's name is taken too; an architecture the pack does not carry gets nothing
    assert [b["path"] for b in pack_host_binaries(both, ["etcd"], "1.31.1", "arm64")] == \
        ["bin-arm64/containerd-1.6.20", "bin-arm64/runc"]
    assert pack_host_binaries(both, ["workers"], "1.31.1", "riscv64") == []


def test_an_image_without_the_hosts_architecture_is_named():
    from ansible_collections.offline_pot.tke.plugins.filter.pack_missing_images import pack_missing_images
    from ansible_collections.offline_pot.tke.plugins.module_utils import kube_images
    wanted = kube_images.site_images("1.31.1", "flannel", "library")
    both = [{"name": r.split(":")[0], "tag": r.split(":")[1], "architectures": ["amd64", "arm64"]} for r in wanted]
    amd = [dict(i, architectures=["amd64"]) if "pause" in i["name"] else i for i in both]
    assert pack_missing_images(both, "1.31.1", "flannel", "library", "aarch64") == []
    assert pack_missing_images(amd, "1.31.1", "flannel", "library", "x86_64") == []
    assert pack_missing_images(amd, "1.31.1", "flannel", "library", "aarch64") == \
        [f"{r} (no arm64 image)" for r in wanted if "pause" in r]
    # without arch (the run-once check of the whole site), or a pack that recorded none: names only
    assert pack_missing_images(amd, "1.31.1", "flannel") == []
    old = [{k: v for k, v in i.items() if k != "architectures"} for i in amd[1:]]
    assert pack_missing_images(old, "1.31.1", "flannel", "library", "aarch64") == wanted[:1]
    # an image whose manifests name no architecture is taken as it is
    assert pack_missing_images([dict(i, architectures=[]) for i in both], "1.31.1", "flannel", "library", "aarch64") == []
    # several architectures at once (the upgrade's check: every architecture of the site's nodes)
    assert pack_missing_images(amd, "1.31.1", "flannel", "library", ["amd64", "arm64"]) == \
        [f"{r} (no arm64 image)" for r in wanted if "pause" in r]


def test_a_debian_hosts_package_folder_is_its_releases_own_where_the_pack_has_one():
    from ansible_collections.offline_pot.tke.plugins.filter.pack_deb_dir import pack_deb_dir
    files = [{"path": p} for p in ("repo/deb/Packages", "repo/deb-trixie/Packages", "repo/deb-arm64/Packages",
                                   "bin/containerd")]
    assert pack_deb_dir(files, "bookworm", "x86_64") == "repo/deb/"
    assert pack_deb_dir(files, "trixie", "x86_64") == "repo/deb-trixie/"
    assert pack_deb_dir(files, "trixie", "amd64") == "repo/deb-trixie/"
    # arm64's own folders: of its release where the pack has one, else the one its releases share
    assert pack_deb_dir(files, "bookworm", "aarch64") == "repo/deb-arm64/"
    assert pack_deb_dir(files, "trixie", "aarch64") == "repo/deb-arm64/"
    assert pack_deb_dir(files + [{"path": "repo/deb-trixie-arm64/Packages"}], "trixie", "aarch64") == "repo/deb-trixie-arm64/"
    # another architecture's folder of the release is not an amd64 host's, nor one of a release
    # whose name begins the host's
    assert pack_deb_dir([{"path": "repo/deb-trixie-arm64/Packages"}], "trixie", "x86_64") == "repo/deb/"
    assert pack_deb_dir([{"path": "repo/deb-trixie2/Packages"}], "trixie", "x86_64") == "repo/deb/"

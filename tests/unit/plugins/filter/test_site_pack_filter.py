from ansible_collections.offline_pot.tke.plugins.filter.site_pack import pack_host_binaries

BINS = [{"name": "runc", "file": "bin/runc", "groups": []},
        {"name": "registry", "file": "bin/registry", "groups": ["registry"]},
        {"name": "cni", "dir": "bin/cni/", "groups": []}]


def test_binaries_by_group():
    assert [b["path"] for b in pack_host_binaries(BINS, ["workers"])] == ["bin/runc", "bin/cni/"]
    assert [b["name"] for b in pack_host_binaries(BINS, ["registry", "masters"])] == ["runc", "registry", "cni"]

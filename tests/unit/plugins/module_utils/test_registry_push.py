"""registry_push: what is pushed, in which order, and what is left alone (a registry in memory;
the real distribution registry is pushed to in tests/integration/test_components.py)."""
import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils import registry_push as rp
from ansible_collections.offline_pot.tke.plugins.module_utils import registry_storage as rs
from harness.oci_layout import write_layout


class MemoryRegistry:
    def __init__(self):
        self.blobs, self.manifests, self.calls = set(), {}, []

    def has_blob(self, repo, digest):
        return (repo, digest) in self.blobs

    def manifest_digest(self, repo, ref):
        return self.manifests.get((repo, ref))

    def upload(self, repo, digest, path):
        self.calls.append(("blob", repo, digest))
        self.blobs.add((repo, digest))

    def put_manifest(self, repo, ref, raw, media):
        import hashlib
        self.calls.append(("manifest", repo, ref, media))
        self.manifests[(repo, ref)] = "sha256:" + hashlib.sha256(raw).hexdigest()


@pytest.fixture()
def storage(tmp_path):
    write_layout(tmp_path / "img", "7.2", [b"layer-a", b"layer-b"])
    root = tmp_path / "registry"
    digest = rs.import_image(str(root), str(tmp_path / "img"), "library/sample-redis", "7.2")["digest"]
    return str(root), digest


def test_target_repo():
    assert rp.target_repo("library/sample-redis") == "library/sample-redis"
    assert rp.target_repo("library/sample-redis", "shop") == "shop/sample-redis"
    assert rp.target_repo("a/b/c", "/team/x/") == "team/x/c"


def test_push_sends_blobs_then_the_manifest_and_then_nothing(storage):
    root, digest = storage
    reg = MemoryRegistry()
    assert rp.push(reg, root, digest, "shop/sample-redis", "7.2") == "pushed"
    kinds = [c[0] for c in reg.calls]
    assert kinds == ["blob", "blob", "blob", "manifest"]   # config and two layers, then the tag
    assert reg.calls[-1][1:] == ("shop/sample-redis", "7.2", "application/vnd.oci.image.manifest.v1+json")
    assert reg.manifests[("shop/sample-redis", "7.2")] == digest
    reg.calls.clear()
    assert rp.push(reg, root, digest, "shop/sample-redis", "7.2") == "present" and reg.calls == []


def test_blobs_the_registry_has_are_not_sent_and_check_mode_sends_nothing(storage):
    root, digest = storage
    reg = MemoryRegistry()
    assert rp.push(reg, root, digest, "shop/sample-redis", "7.2", check_mode=True) == "pushed" and reg.calls == []
    rp.push(reg, root, digest, "shop/sample-redis", "7.2")
    reg.calls.clear()
    rp.push(reg, root, digest, "shop/sample-redis", "8")   # same image, another tag
    assert reg.calls == [("manifest", "shop/sample-redis", "8", "application/vnd.oci.image.manifest.v1+json")]


def test_a_manifest_missing_from_the_storage_is_named(tmp_path):
    with pytest.raises(rp.PushError, match="is not in the pack's registry storage"):
        rp.push(MemoryRegistry(), str(tmp_path), "sha256:" + "a" * 64, "x", "1")


def test_bearer_challenge_is_parsed():
    ch = rp._challenge('Bearer realm="https://auth.example/token",service="registry",scope="repository:a:push,pull"')
    assert ch == {"realm": "https://auth.example/token", "service": "registry", "scope": "repository:a:push,pull"}


def test_upload_url_goes_through_the_address_we_use():
    base = "https://172.30.11.11:443"
    assert rp.upload_url(base, "https://registry.tke.com/v2/a/blobs/uploads/u1?_state=x") == \
        "https://172.30.11.11:443/v2/a/blobs/uploads/u1?_state=x"
    assert rp.upload_url(base, "/v2/a/blobs/uploads/u1") == "https://172.30.11.11:443/v2/a/blobs/uploads/u1"
    assert rp.upload_url(base, "https://s3.example/bucket/x?sig=1") == "https://s3.example/bucket/x?sig=1"

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


class ScriptedRegistry(rp.Registry):
    """Registry with its HTTP calls recorded and answered: a POST with ?mount= gets mount_status."""

    def __init__(self, mount_status):
        super().__init__("https://reg.example:443")
        self.mount_status, self.log = mount_status, []

    def call(self, method, path, data=None, headers=None, ok=(200, 201, 202, 204)):
        body = data.read() if hasattr(data, "read") else data
        self.log.append((method, path, body, (headers or {}).get("Content-Length")))
        if method == "POST":
            status = self.mount_status if "mount=" in path else 202
            return status, {"Location": "/v2/x/blobs/uploads/u1?_state=s"}, b""
        return 201, {}, b""


@pytest.mark.parametrize("mount_status", [201, 202])
def test_a_blob_sent_to_one_repository_is_mounted_into_the_next(tmp_path, mount_status):
    blob = tmp_path / "blob"
    blob.write_bytes(b"shared layer")
    reg = ScriptedRegistry(mount_status)
    reg.upload("library/a", "sha256:aa", str(blob))
    reg.upload("library/b", "sha256:aa", str(blob))
    reg.upload("library/b", "sha256:bb", str(blob))
    posts = [p for m, p, *dummy in reg.log if m == "POST"]
    assert posts == ["/v2/library/a/blobs/uploads/",
                     "/v2/library/b/blobs/uploads/?mount=sha256%3Aaa&from=library%2Fa",
                     "/v2/library/b/blobs/uploads/"]
    puts = [(p, body, length) for m, p, body, length in reg.log if m == "PUT"]
    # the file streamed with its length; a mount the registry refused (202) is sent after all
    assert puts[0] == ("https://reg.example:443/v2/x/blobs/uploads/u1?_state=s&digest=sha256:aa", b"shared layer", "12")
    assert len(puts) == (2 if mount_status == 201 else 3)

import gzip
import hashlib
import json
import os
import tarfile

import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils import registry_storage as rs
from harness.oci_layout import write_layout


def test_shared_layers_are_stored_once_and_linked_per_repository(tmp_path):
    root = tmp_path / "storage"
    d1 = write_layout(tmp_path / "a", "1", [b"shared" * 1000, b"a-only"])
    d2 = write_layout(tmp_path / "b", "2", [b"shared" * 1000])
    r1 = rs.import_image(str(root), str(tmp_path / "a"), "library/a", "1")
    r2 = rs.import_image(str(root), str(tmp_path / "b"), "library/b", "2")
    assert r1["digest"] == d1 and r2["digest"] == d2 and r1["changed"] and r2["changed"]
    blobs = list(root.rglob("data"))
    assert len(blobs) == 2 + 2 + 1 + 1  # 2 manifests, 2 configs, shared layer, a-only layer
    assert rs.stored_blob_bytes(str(root)) < r1["image_bytes"] + r2["image_bytes"]
    tag = root / rs.V2 / "repositories/library/a/_manifests/tags/1/current/link"
    assert tag.read_text() == d1
    assert (root / rs.V2 / "repositories/library/a/_manifests/revisions/sha256" / d1[7:] / "link").exists()
    shared = hashlib.sha256(gzip.compress(b"shared" * 1000, mtime=0)).hexdigest()
    for repo in ("a", "b"):
        assert (root / rs.V2 / f"repositories/library/{repo}/_layers/sha256/{shared}/link").read_text() == "sha256:" + shared
    again = rs.import_image(str(root), str(tmp_path / "a"), "library/a", "1")
    assert again["changed"] is False and again["bytes_written"] == 0


def test_a_tar_layout_works_and_a_corrupt_blob_is_refused(tmp_path):
    write_layout(tmp_path / "a", "1", [b"layer"])
    tar = tmp_path / "a.tar"
    with tarfile.open(tar, "w") as t:
        t.add(tmp_path / "a", arcname=".")
    assert rs.import_image(str(tmp_path / "s1"), str(tar), "x", "1")["changed"]
    layer = hashlib.sha256(gzip.compress(b"layer", mtime=0)).hexdigest()
    (tmp_path / "a" / "blobs" / "sha256" / layer).write_bytes(b"evil")
    with pytest.raises(rs.ImageError, match="does not match its digest"):
        rs.import_image(str(tmp_path / "s2"), str(tmp_path / "a"), "x", "1")


def test_pick_needs_a_name_when_several(tmp_path):
    write_layout(tmp_path / "a", "1", [b"x"])
    idx = json.loads((tmp_path / "a" / "index.json").read_text())
    idx["manifests"] *= 2
    (tmp_path / "a" / "index.json").write_text(json.dumps(idx))
    with pytest.raises(rs.ImageError, match="none is named 'other'"):
        rs.import_image(str(tmp_path / "s"), str(tmp_path / "a"), "x", "other")
    assert os.path.exists(tmp_path / "a")

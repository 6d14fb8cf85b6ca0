"""A small OCI image layout on disk, for the unit tests of the registry storage and the pack build."""
import gzip
import hashlib
import json

from ansible_collections.offline_pot.tke.plugins.module_utils import registry_storage as rs


def write_layout(path, tag, layers):
    blobs = path / "blobs" / "sha256"
    blobs.mkdir(parents=True)

    def blob(data):
        d = hashlib.sha256(data).hexdigest()
        (blobs / d).write_bytes(data)
        return {"digest": "sha256:" + d, "size": len(data)}
    descs = [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", **blob(gzip.compress(x, mtime=0))}
             for x in layers]
    config = {"mediaType": "application/vnd.oci.image.config.v1+json", **blob(json.dumps({"tag": tag}).encode())}
    manifest = blob(json.dumps({"schemaVersion": 2, "config": config, "layers": descs}).encode())
    index = {"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
                                                **manifest, "annotations": {rs.REF_NAME: tag}}]}
    (path / "index.json").write_text(json.dumps(index))
    return manifest["digest"]

"""Small signed site packs for unit tests: an Ed25519 key pair and a one-file pack directory with
its manifest (module_utils/pack_manifest.py, pack_signature.py sign it)."""
from __future__ import annotations

from pathlib import Path


def keypair(tmp_path: Path, name: str = "owner") -> tuple[Path, str]:
    """(the private key's PEM file, the public key's PEM text)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519
    key = ed25519.Ed25519PrivateKey.generate()
    path = tmp_path / f"{name}.key"
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    pub = key.public_key().public_bytes(serialization.Encoding.PEM,
                                        serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return path, pub


def pack(tmp_path: Path) -> Path:
    """tmp_path/pack: bin/runc and a manifest listing it (pack "p", version "1"), not signed."""
    from ansible_collections.offline_pot.tke.plugins.module_utils import pack_manifest as pm
    d = tmp_path / "pack"
    (d / "bin").mkdir(parents=True)
    (d / "bin" / "runc").write_bytes(b"runc binary")
    m = pm.build_manifest("p", "1", pm.scan_tree(str(d)), {})
    (d / pm.MANIFEST_NAME).write_text(pm.dump_manifest(m))
    return d

"""Ed25519 signature of the site pack's manifest (module_utils/pack_signature.py)."""
import json

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from ansible_collections.offline_pot.tke.plugins.module_utils import pack_manifest as pm
from ansible_collections.offline_pot.tke.plugins.module_utils import pack_signature as ps
from harness.signed_packs import keypair, pack


def test_signed_pack_verifies_and_signing_again_changes_nothing(tmp_path):
    key, pub = keypair(tmp_path)
    d = pack(tmp_path)
    assert ps.sign_pack(str(d), str(key)) is True
    assert ps.sign_pack(str(d), str(key)) is False      # Ed25519 is deterministic
    assert ps.check_pack(str(d), pub, False) == "signed"
    # the signature is not part of what the manifest lists
    assert pm.SIGNATURE_NAME not in pm.walk_files(str(d))


def test_a_file_rewritten_with_its_manifest_entry_edited_is_refused(tmp_path):
    key, pub = keypair(tmp_path)
    d = pack(tmp_path)
    ps.sign_pack(str(d), str(key))
    (d / "bin" / "runc").write_bytes(b"evil runc!!")
    m = json.loads((d / pm.MANIFEST_NAME).read_text())
    m["files"] = [dict(f, sha256=pm.sha256_file(str(d / "bin" / "runc"))) for f in m["files"]]
    (d / pm.MANIFEST_NAME).write_text(pm.dump_manifest(m))
    assert pm.verify_tree(str(d), m) == []            # the manifest alone would let it through
    for allow in (False, True):                       # a bad signature is never allowed
        with pytest.raises(ps.SignatureError, match="does not match manifest.json"):
            ps.check_pack(str(d), pub, allow)


def test_another_key_unsigned_and_no_public_key(tmp_path):
    key, dummy = keypair(tmp_path)
    dummy, other = keypair(tmp_path, "other")
    d = pack(tmp_path)
    with pytest.raises(ps.SignatureError, match="is not signed .*tke_site_pack_allow_unsigned"):
        ps.check_pack(str(d), other, False)
    assert "is not signed" in ps.check_pack(str(d), other, True)
    ps.sign_pack(str(d), str(key))
    with pytest.raises(ps.SignatureError, match="another key signed it"):
        ps.check_pack(str(d), other, False)
    with pytest.raises(ps.SignatureError, match="tke_site_pack_pubkey is not set"):
        ps.check_pack(str(d), "", False)
    assert "tke_site_pack_pubkey is not set" in ps.check_pack(str(d), "", True)
    with pytest.raises(ps.SignatureError, match="tke_site_pack_pubkey: not a PEM public key"):
        ps.check_pack(str(d), "garbage", True)


def test_only_ed25519_keys(tmp_path):
    ec_key = ec.generate_private_key(ec.SECP256R1())
    pem = ec_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                               serialization.NoEncryption())
    with pytest.raises(ps.SignatureError, match="not an Ed25519 key"):
        ps.sign(b"m", pem)
    pub = ec_key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)
    with pytest.raises(ps.SignatureError, match="not an Ed25519 public key"):
        ps.public_key(pub)

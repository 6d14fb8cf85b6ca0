"""The site pack checked on the controller (plugin_utils/pack_verify.py, the site_pack_verify action's
work): an archive unpacked once, the manifest's signature, every file; each refusal names what."""
import os
import subprocess
from pathlib import Path

import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils import pack_manifest as pm
from ansible_collections.offline_pot.tke.plugins.module_utils import pack_signature as ps
from ansible_collections.offline_pot.tke.plugins.plugin_utils import pack_verify as pv
from harness.signed_packs import keypair, pack


@pytest.fixture
def signed(tmp_path):
    key, pub = keypair(tmp_path)
    d = pack(tmp_path)
    ps.sign_pack(str(d), str(key))
    return d, pub


def test_a_signed_directory_is_verified_file_by_file(signed, tmp_path):
    d, pub = signed
    result = pv.verify(str(d), str(tmp_path / "unpacked"), pub)
    assert (result["changed"], result["signature"], result["pack_dir"]) == (False, "signed", str(d))
    assert result["manifest"]["name"] == "p" and "warnings" not in result
    # the signature only: no file read, no manifest returned
    assert "manifest" not in pv.verify(str(d), str(tmp_path / "unpacked"), pub, signature_only=True)


def test_an_altered_file_and_another_key_are_refused(signed, tmp_path):
    d, pub = signed
    dummy, other = keypair(tmp_path, "other")
    with pytest.raises(pv.PackRefused) as e:
        pv.verify(str(d), str(tmp_path / "u"), other)
    assert e.value.fields == {"pack_dir": str(d), "signature": "refused"}
    assert str(e.value).startswith(f"the site pack {d} is refused: ")
    (d / "bin" / "runc").write_bytes(b"runc binarY")
    with pytest.raises(pv.PackRefused) as e:
        pv.verify(str(d), str(tmp_path / "u"), pub)
    assert str(e.value).startswith(f"the site pack {d} does not match its manifest: ") and e.value.fields["problems"]
    # the signature alone still holds (the files are the offline phase's check)
    assert pv.verify(str(d), str(tmp_path / "u"), pub, signature_only=True)["signature"] == "signed"


def test_unsigned_is_refused_unless_allowed_then_warned(tmp_path):
    d = pack(tmp_path)
    dummy, pub = keypair(tmp_path)
    with pytest.raises(pv.PackRefused, match="is not signed"):
        pv.verify(str(d), str(tmp_path / "u"), pub)
    result = pv.verify(str(d), str(tmp_path / "u"), pub, allow_unsigned=True)
    assert result["warnings"] == [f"installing an unverified site pack: the pack {d} is not signed (no "
                                  f"{pm.SIGNATURE_NAME}) (tke_site_pack_allow_unsigned is true)"]


def test_an_archive_is_unpacked_once(signed, tmp_path):
    d, pub = signed
    archive = tmp_path / "p-1.tar.gz"
    subprocess.run(["tar", "-C", str(d.parent), "-czf", str(archive), d.name], check=True)
    first = pv.verify(str(archive), str(tmp_path / "unpacked"), pub)
    assert first["changed"] and first["pack_dir"] == str(tmp_path / "unpacked" / d.name)
    assert not pv.verify(str(archive), str(tmp_path / "unpacked"), pub)["changed"]
    with pytest.raises(pv.PackRefused, match="does not exist"):
        pv.verify(str(tmp_path / "nothing.tar"), str(tmp_path / "u"), pub)


def archived(signed, tmp_path):
    d, pub = signed
    archive = tmp_path / "p-1.tar.gz"
    subprocess.run(["tar", "-C", str(d.parent), "-czf", str(archive), d.name], check=True)
    return archive, pub


def test_a_file_of_the_unpacked_copy_verified_before_and_unchanged_is_not_read_again(
        signed, tmp_path, monkeypatch):
    archive, pub = archived(signed, tmp_path)
    state = tmp_path / "state"
    first = pv.verify(str(archive), str(state), pub)
    # just unpacked: every file changed in the last seconds, so none is kept yet (git's "racy" entries)
    assert pv.read_digests(str(state), first["pack_dir"]) == {}
    monkeypatch.setattr(pv, "RACY_NS", 0)
    pv.verify(str(archive), str(state), pub)
    kept = state / pv.DIGESTS
    assert oct(kept.stat().st_mode & 0o777) == "0o600"
    assert sorted(pv.read_digests(str(state), first["pack_dir"])) == sorted(f["path"] for f in first["manifest"]["files"])
    read = []
    real = pm.sha256_file
    monkeypatch.setattr(pm, "sha256_file", lambda path: read.append(path) or real(path))
    pv.verify(str(archive), str(state), pub)
    assert read == []
    # the same size and modification time with other content: the change time tells it
    runc = Path(first["pack_dir"]) / "bin" / "runc"
    st = runc.stat()
    runc.write_bytes(b"runc binarY")
    os.utime(runc, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(pv.PackRefused) as e:
        pv.verify(str(archive), str(state), pub)
    assert read == [str(runc)] and "bin/runc: altered" in str(e.value)


def test_digests_are_kept_for_no_directory_pack_in_no_check_and_trusted_only_when_private(
        signed, tmp_path, monkeypatch):
    d, pub = signed
    monkeypatch.setattr(pv, "RACY_NS", 0)
    pv.verify(str(d), str(tmp_path / "state"), pub)     # a pack given as a directory is read whole
    assert not (tmp_path / "state").exists()
    archive, pub = archived(signed, tmp_path)
    unpacked = tmp_path / "unpacked"
    result = pv.verify(str(archive), str(unpacked), pub, keep_digests=False)
    assert not (unpacked / pv.DIGESTS).exists()
    pv.verify(str(archive), str(unpacked), pub)
    assert pv.read_digests(str(unpacked), result["pack_dir"]) and pv.read_digests(str(unpacked), str(d)) == {}
    (unpacked / pv.DIGESTS).chmod(0o620)                 # another user could have written it
    assert pv.read_digests(str(unpacked), result["pack_dir"]) == {}

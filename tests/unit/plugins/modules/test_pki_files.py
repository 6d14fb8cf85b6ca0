"""pki_files writes files only where bytes or mode differ; in check mode a file known to the
controller by its digest alone (the store keeps its old copy in check mode) is compared by digest."""
import hashlib
import json

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.offline_pot.tke.plugins.modules import pki_files

CONF = "apiVersion: v1\nkind: Config\n"


def run(capsys, **args):
    with patch_module_args(args), pytest.raises(SystemExit) as exc:
        pki_files.main()
    return exc.value.code, json.loads(capsys.readouterr().out)


def test_check_mode_compares_a_file_known_by_its_digest(tmp_path, capsys):
    same, other, absent = tmp_path / "same.conf", tmp_path / "other.conf", tmp_path / "absent.conf"
    for f in (same, other):
        f.write_text(CONF)
        f.chmod(0o600)
    new = (CONF + "# new server\n").encode()
    digests = {str(same): hashlib.sha256(CONF.encode()).hexdigest(), str(other): hashlib.sha256(new).hexdigest(),
               str(absent): hashlib.sha256(new).hexdigest()}
    files = [{"path": p, "mode": "0600"} for p in digests]
    rc, out = run(capsys, files=files, contents={}, digests=digests, _ansible_check_mode=True, _ansible_diff=True)
    assert rc == 0, out
    assert out["files"] == {str(same): "same", str(other): "differs", str(absent): "absent"}
    assert sorted(out["changed_files"]) == sorted([str(other), str(absent)]) and out["changed"]
    assert f"{other} sha256:{digests[str(other)][:16]} mode 0600" in out["diff"]["after"]
    assert other.read_text() == CONF and not absent.exists()      # nothing written


def test_a_digest_alone_never_writes(tmp_path, capsys):
    path = str(tmp_path / "x.conf")
    rc, out = run(capsys, files=[{"path": path, "mode": "0600"}], contents={}, digests={path: "0" * 64})
    assert rc == 1 and out["msg"] == "digests: only in check mode (a file is written from its content)"


def test_contents_are_written_where_they_differ(tmp_path, capsys):
    path = tmp_path / "x.conf"
    path.write_text("old")
    rc, out = run(capsys, files=[{"path": str(path), "mode": "0600"}], contents={str(path): CONF})
    assert rc == 0 and out["changed_files"] == [str(path)] and path.read_text() == CONF
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    rc, again = run(capsys, files=[{"path": str(path), "mode": "0600"}], contents={str(path): CONF})
    assert not again["changed"] and again["files"] == {str(path): "same"}

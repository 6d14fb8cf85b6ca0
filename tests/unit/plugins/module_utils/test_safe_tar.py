"""A tar extracted as the "data" filter extracts it, with and without tarfile.data_filter (Debian
12's python3 3.11.2 has none): the same files and modes, the same refusals."""
import io
import os
import stat
import tarfile

import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils import safe_tar


@pytest.fixture(params=["stdlib filter", "own checks"])
def way(request, monkeypatch):
    if request.param == "own checks":
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    elif not hasattr(tarfile, "data_filter"):
        pytest.skip("this Python has no tarfile.data_filter")
    return request.param


def archive(path, *members):
    """A tar at path of (TarInfo fields, data) members."""
    with tarfile.open(path, "w") as t:
        for fields, data in members:
            info = tarfile.TarInfo(fields.pop("name"))
            for k, v in fields.items():
                setattr(info, k, v)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data) if data else None)
    return path


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_files_links_and_directories_come_out_with_safe_modes(tmp_path, way):
    tar = archive(tmp_path / "ok.tar",
                  ({"name": "bin", "type": tarfile.DIRTYPE, "mode": 0o755}, b""),
                  ({"name": "bin/tool", "mode": 0o4777, "uid": 4242, "gid": 4242}, b"#!/bin/sh\n"),
                  ({"name": "bin/notes", "mode": 0o066}, b"text"),
                  ({"name": "bin/current", "type": tarfile.SYMTYPE, "linkname": "tool"}, b""))
    dest = tmp_path / "out"
    dest.mkdir()
    with tarfile.open(tar) as t:
        safe_tar.extract(t, str(dest))
    assert (dest / "bin" / "tool").read_bytes() == b"#!/bin/sh\n"
    # no setuid, no group/other write; the owner reads and writes what it could not
    assert mode(dest / "bin" / "tool") == 0o755
    assert mode(dest / "bin" / "notes") == 0o644
    assert os.readlink(dest / "bin" / "current") == "tool"
    # no owner taken from the archive
    assert os.stat(dest / "bin" / "tool").st_uid == os.getuid()


def test_a_leading_slash_is_stripped_so_the_member_lands_inside(tmp_path, way):
    tar = archive(tmp_path / "abs.tar", ({"name": "/etc/evil", "mode": 0o644}, b"x"))
    dest = tmp_path / "out"
    dest.mkdir()
    with tarfile.open(tar) as t:
        safe_tar.extract(t, str(dest))
    assert (dest / "etc" / "evil").read_bytes() == b"x"


@pytest.mark.parametrize("member", [
    {"name": "../evil"},
    {"name": "a/../../evil"},
    {"name": "link", "type": tarfile.SYMTYPE, "linkname": "/etc/passwd"},
    {"name": "link", "type": tarfile.SYMTYPE, "linkname": "../../etc/passwd"},
    {"name": "dev", "type": tarfile.CHRTYPE, "devmajor": 1, "devminor": 3},
    {"name": "fifo", "type": tarfile.FIFOTYPE},
    # a chain: "a" -> "." and "a/b" -> ".." look inside until "a" exists; then "a/b" is the parent
    [{"name": "a", "type": tarfile.SYMTYPE, "linkname": "."},
     {"name": "a/b", "type": tarfile.SYMTYPE, "linkname": ".."},
     {"name": "a/b/evil"}],
], ids=["dotdot", "nested-dotdot", "abs-symlink", "escaping-symlink", "device", "fifo", "symlink-chain"])
def test_a_member_outside_or_special_is_refused_and_nothing_escapes(tmp_path, way, member):
    members = member if isinstance(member, list) else [member]
    tar = archive(tmp_path / "bad.tar", ({"name": "fine", "mode": 0o644}, b"x"),
                  *((dict(m), b"" if m.get("type") else b"evil") for m in members))
    dest = tmp_path / "a" / "b" / "out"
    dest.mkdir(parents=True)
    with tarfile.open(tar) as t, pytest.raises(tarfile.TarError):
        safe_tar.extract(t, str(dest))
    assert not (tmp_path / "a" / "evil").exists() and not (tmp_path / "a" / "b" / "evil").exists()

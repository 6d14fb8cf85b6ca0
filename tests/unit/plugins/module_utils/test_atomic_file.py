"""The one file writer: whole or nothing, mode from the start, nothing left behind."""
import os
import stat
import subprocess

import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils import atomic_file as af
from ansible_collections.offline_pot.tke.plugins.module_utils.atomic_file import mask_secrets


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture()
def loose_umask():
    old = os.umask(0o000)
    yield
    os.umask(old)


def test_secret_is_0600_and_its_directories_0700_whatever_the_umask(tmp_path, loose_umask):
    target = tmp_path / "a" / "b" / "tke.json"
    af.write_file(str(target), '{"x": 1}', 0o600, dir_mode=0o700)
    assert target.read_text() == '{"x": 1}' and mode(target) == 0o600
    assert mode(tmp_path / "a") == 0o700 and mode(tmp_path / "a" / "b") == 0o700
    before = mode(tmp_path)
    af.write_file(str(tmp_path / "other"), b"x", 0o644, dir_mode=0o700)
    assert mode(tmp_path) == before and mode(tmp_path / "other") == 0o644


def test_temporary_file_is_private_while_it_is_written(tmp_path, loose_umask):
    with af.atomic_writer(str(tmp_path / "ca.key"), 0o600) as fh:
        fh.write(b"secret")
        assert mode(fh.name) == 0o600 and os.path.dirname(fh.name) == str(tmp_path)
    assert (tmp_path / "ca.key").read_bytes() == b"secret"
    assert os.listdir(tmp_path) == ["ca.key"]


def test_replaces_and_keeps_the_target_on_failure(tmp_path):
    target = tmp_path / "journal.json"
    af.write_file(str(target), "old", 0o600)
    inode = os.stat(target).st_ino
    with pytest.raises(RuntimeError):
        with af.atomic_writer(str(target), 0o644) as fh:
            fh.write(b"half")
            raise RuntimeError("checksum mismatch")
    assert target.read_text() == "old" and mode(target) == 0o600
    assert os.listdir(tmp_path) == ["journal.json"]
    af.write_file(str(target), "new", 0o644)
    assert target.read_text() == "new" and mode(target) == 0o644
    assert os.stat(target).st_ino != inode  # a new file renamed over the old one


def test_exit_of_a_module_inside_the_block_cleans_up(tmp_path):
    with pytest.raises(SystemExit):
        with af.atomic_writer(str(tmp_path / "f"), 0o644) as fh:
            fh.write(b"x")
            raise SystemExit(1)  # AnsibleModule.fail_json exits
    assert os.listdir(tmp_path) == []


def test_atomic_path_for_a_command_that_writes_by_name(tmp_path):
    target = tmp_path / "pack.tar"
    with af.atomic_path(str(target), 0o640) as tmp:
        subprocess.run(["tar", "-cf", tmp, "-C", str(tmp_path), "--files-from", "/dev/null"], check=True)
    assert mode(target) == 0o640 and target.stat().st_size > 0
    assert os.listdir(tmp_path) == ["pack.tar"]


def test_copy_and_write_if_differs(tmp_path):
    src = tmp_path / "src"
    src.write_bytes(b"binary")
    af.copy_file(str(src), str(tmp_path / "bin" / "runc"), 0o755)
    assert (tmp_path / "bin" / "runc").read_bytes() == b"binary" and mode(tmp_path / "bin" / "runc") == 0o755
    link = str(tmp_path / "link")
    assert af.write_if_differs(link, "sha256:1") is True
    mtime = os.stat(link).st_mtime_ns
    assert af.write_if_differs(link, b"sha256:1") is False and os.stat(link).st_mtime_ns == mtime
    assert af.write_if_differs(link, "sha256:2") is True and open(link).read() == "sha256:2"


# --- mask_secrets: the masked diff of a file that holds secrets (modules/host_files) -----------
def test_mask_secrets_hides_known_values_and_what_the_patterns_match():
    text = ('[auth]\n      username = "admin"\n      password = "old-Secret-1"\n'
            'vrrp {\n    auth_pass 5f3a9c1e\n}\nnote: new-Secret-2 also here\n')
    masked, n = mask_secrets(text, ["new-Secret-2", ""], [r'^\s*password\s*=\s*"(.*)"\s*$', r"^\s*auth_pass\s+(\S+)\s*$"])
    # the previous password (not given as a value) is masked by its pattern, the known value anywhere
    assert "old-Secret-1" not in masked and "5f3a9c1e" not in masked and "new-Secret-2" not in masked
    assert '      password = "********"\n' in masked and "    auth_pass ********\n" in masked
    assert 'username = "admin"' in masked and n == 3


def test_mask_secrets_leaves_a_text_without_secrets_as_it_is():
    assert mask_secrets("a = 1\n", ["x-secret"], [r'password = "(.*)"']) == ("a = 1\n", 0)

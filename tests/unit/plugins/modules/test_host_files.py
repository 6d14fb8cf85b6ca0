"""host_files makes each entry exactly as given in one call: a file's bytes and mode, a directory, nothing
at a path; touches nothing that is already so; in check mode writes nothing and says the same; diffs
per entry."""
import json
import os

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.offline_pot.tke.plugins.modules import host_files


def run(capsys, files, **flags):
    with patch_module_args(dict(files=files, **flags)), pytest.raises(SystemExit) as exc:
        host_files.main()
    return exc.value.code, json.loads(capsys.readouterr().out)


def mode(path):
    return oct(os.stat(path).st_mode & 0o7777)


def entries(tmp_path):
    return [{"path": str(tmp_path / "etc" / "conf.d"), "state": "directory", "mode": "0750"},
            {"path": str(tmp_path / "etc" / "conf.d" / "a.toml"), "content": "a = 1\n"},
            {"path": str(tmp_path / "b.yaml"), "content": "b: 2\n", "mode": "0600"}]


def gone(tmp_path):
    return [str(tmp_path / "old.conflist"), str(tmp_path / "never-there")]


def test_made_as_given_then_nothing_to_do(tmp_path, capsys):
    (tmp_path / "old.conflist").write_text("{}")
    rc, out = run(capsys, entries(tmp_path), absent=gone(tmp_path))
    assert rc == 0 and out["changed"], out
    assert out["changed_files"] == [e["path"] for e in entries(tmp_path)] + [str(tmp_path / "old.conflist")]
    # (a directory's missing parents are made too, as the file module makes them)
    conf = tmp_path / "etc" / "conf.d"
    assert mode(conf) == "0o750" and (conf / "a.toml").read_text() == "a = 1\n"
    assert mode(conf / "a.toml") == "0o644" and mode(tmp_path / "b.yaml") == "0o600"
    assert not (tmp_path / "old.conflist").exists()
    before = os.stat(tmp_path / "b.yaml").st_ino
    rc, again = run(capsys, entries(tmp_path), absent=gone(tmp_path))
    assert rc == 0 and not again["changed"] and again["changed_files"] == [] and again["diff"] == []
    assert os.stat(tmp_path / "b.yaml").st_ino == before           # not rewritten


def test_check_mode_writes_nothing_and_diffs_every_change(tmp_path, capsys):
    (tmp_path / "b.yaml").write_text("b: 1\n")
    (tmp_path / "b.yaml").chmod(0o644)
    (tmp_path / "old.conflist").write_text("{}")
    rc, out = run(capsys, entries(tmp_path), absent=gone(tmp_path), _ansible_check_mode=True, _ansible_diff=True)
    assert rc == 0 and out["changed"]
    assert out["changed_files"] == [e["path"] for e in entries(tmp_path)] + [str(tmp_path / "old.conflist")]
    assert sorted(os.listdir(tmp_path)) == ["b.yaml", "old.conflist"] and (tmp_path / "b.yaml").read_text() == "b: 1\n"
    diffs = {d["after_header"]: d for d in out["diff"]}
    b = str(tmp_path / "b.yaml")
    assert (diffs[b]["before"], diffs[b]["after"]) == ("b: 1\n", "b: 2\n")
    assert diffs[f"{b} (attributes)"]["after"]["mode"] == "0600"
    assert diffs[str(tmp_path / "old.conflist")]["after"] == {"path": str(tmp_path / "old.conflist"), "state": "absent"}
    assert diffs[str(tmp_path / "etc" / "conf.d")]["after"]["state"] == "directory"


def test_an_existing_file_keeps_its_mode_when_none_is_given_and_a_mode_alone_changes(tmp_path, capsys):
    path = tmp_path / "x"
    path.write_text("old")
    path.chmod(0o640)
    rc, out = run(capsys, [{"path": str(path), "content": "new"}])
    assert rc == 0 and out["changed"] and path.read_text() == "new" and mode(path) == "0o640"
    rc, out = run(capsys, [{"path": str(path), "content": "new", "mode": "0644"}])
    assert rc == 0 and out["changed_files"] == [str(path)] and mode(path) == "0o644"


def test_a_directory_where_a_file_is_wanted_is_refused_naming_it(tmp_path, capsys):
    (tmp_path / "d").mkdir()
    rc, out = run(capsys, [{"path": str(tmp_path / "d"), "content": "x"}])
    assert rc == 1 and out["msg"] == f"{tmp_path / 'd'}: a directory is there where a file is wanted; remove it first"


def test_a_file_entry_needs_content(tmp_path, capsys):
    rc, out = run(capsys, [{"path": str(tmp_path / "x")}])
    assert rc == 1 and "content" in out["msg"]


def test_a_link_to_a_directory_is_the_directory_and_absent_removes_a_link_alone(tmp_path, capsys):
    disk = tmp_path / "disk"
    disk.mkdir(mode=0o755)
    (tmp_path / "etcd").symlink_to(disk)
    rc, out = run(capsys, [{"path": str(tmp_path / "etcd"), "state": "directory", "mode": "0700"}], _ansible_diff=True)
    assert rc == 0 and out["changed"] and mode(disk) == "0o700" and (tmp_path / "etcd").is_symlink()
    assert [d["after_header"] for d in out["diff"]] == [f"{tmp_path / 'etcd'} (attributes)"]
    rc, out = run(capsys, [{"path": str(tmp_path / "etcd"), "state": "directory", "mode": "0700"}])
    assert rc == 0 and not out["changed"]
    rc, out = run(capsys, [], absent=[str(tmp_path / "etcd")])
    assert rc == 0 and out["changed"] and not (tmp_path / "etcd").exists() and disk.is_dir()


def test_a_rewritten_file_keeps_its_owner_and_group(tmp_path, capsys):
    path = tmp_path / "x"
    path.write_text("old")
    os.chown(path, 1, 1)
    rc, out = run(capsys, [{"path": str(path), "content": "new", "mode": "0640"}])
    assert rc == 0 and out["changed"] and path.read_text() == "new"
    assert (path.stat().st_uid, path.stat().st_gid) == (1, 1)


def test_a_mode_that_is_not_octal_and_a_missing_directory_are_refused_naming_the_path(tmp_path, capsys):
    rc, out = run(capsys, [{"path": str(tmp_path / "x"), "content": "x", "mode": "u=rw"}])
    assert rc == 1 and out["msg"] == f"{tmp_path / 'x'}: mode 'u=rw' is not an octal mode such as '0644'"
    rc, out = run(capsys, [{"path": str(tmp_path / "no" / "x"), "content": "x"}])
    assert rc == 1 and out["msg"] == (f"{tmp_path / 'no' / 'x'}: its directory {tmp_path / 'no'} is missing "
                                      "(list it before, as a directory)")
    # in check mode a directory listed before it would be made: what would change is said
    rc, out = run(capsys, [{"path": str(tmp_path / "no"), "state": "directory"},
                           {"path": str(tmp_path / "no" / "x"), "content": "x"}], _ansible_check_mode=True)
    assert rc == 0 and out["changed_files"] == [str(tmp_path / "no"), str(tmp_path / "no" / "x")]


def test_check_mode_refuses_a_file_whose_directory_no_entry_makes(tmp_path, capsys):
    rc, out = run(capsys, [{"path": str(tmp_path / "a" / "b"), "state": "directory"},
                           {"path": str(tmp_path / "a" / "x"), "content": "x"},
                           {"path": str(tmp_path / "c" / "x"), "content": "x"}], _ansible_check_mode=True)
    assert rc == 1 and out["msg"] == f"{tmp_path / 'c' / 'x'}: its directory {tmp_path / 'c'} is missing " \
        "(list it before, as a directory)"


def test_a_dangling_link_is_replaced_by_the_file_and_refused_where_a_directory_is_wanted(tmp_path, capsys):
    link = tmp_path / "x"
    link.symlink_to(tmp_path / "nowhere")
    rc, out = run(capsys, [{"path": str(link), "state": "directory"}])
    assert rc == 1 and out["msg"] == f"{link}: a dangling link is there where a directory is wanted; remove it first"
    rc, out = run(capsys, [{"path": str(link), "content": "x\n"}])
    assert rc == 0 and out["changed"] and not link.is_symlink() and link.read_text() == "x\n"


def test_a_setuid_file_rewritten_for_another_owner_keeps_its_mode(tmp_path, capsys):
    path = tmp_path / "x"
    path.write_text("old")
    os.chown(path, 1, 1)
    path.chmod(0o4755)
    rc, out = run(capsys, [{"path": str(path), "content": "new"}])
    assert rc == 0 and mode(path) == "0o4755" and (path.stat().st_uid, path.stat().st_gid) == (1, 1)


# --- files that hold a secret: content by path in secret_contents (no_log), the diff masked ------

SECRET = "reg-P4ss\\wo'rd\""   # a backslash and both quotes: what Ansible's logged repr of a list escapes


def secret_call(tmp_path, password, **entry):
    conf = str(tmp_path / "config.toml")
    text = f'[auth]\n  username = "tke"\n  password = "{password}"\n'
    files = [dict({"path": conf, "mask": [r'^\s*password\s*=\s*"(.*)"\s*$']}, **entry),
             {"path": str(tmp_path / "unit"), "content": "[Unit]\n"}]
    return conf, files, {"secret_contents": {conf: text}, "secrets": [password]}


def test_a_secret_file_is_0600_and_its_secret_reaches_no_output_nor_log(tmp_path, capsys, monkeypatch):
    logged = []
    monkeypatch.setattr(host_files.AnsibleModule, "log", lambda self, msg, log_args=None: logged.append(msg))
    conf, files, call = secret_call(tmp_path, SECRET)
    rc, out = run(capsys, files, _ansible_diff=True, **call)
    assert rc == 0 and out["changed_files"] == [conf, str(tmp_path / "unit")]
    assert mode(conf) == "0o600" and mode(tmp_path / "unit") == "0o644"
    assert SECRET in open(conf, encoding="utf-8").read()
    (diff, dummy) = out["diff"]
    assert diff["after_header"] == f"{conf} (secrets masked)" and 'password = "********"' in diff["after"]
    # neither in the result nor in the invocation logged to the host's journal (its repr escaped)
    everything = json.dumps(out) + "".join(logged)
    assert logged and "reg-P4ss" not in everything and "reg-P4ss" not in repr(out)
    assert "[Unit]" in "".join(logged)   # (the other files' contents are logged as before)


def test_a_changed_secret_alone_is_said_masked_and_the_old_one_too(tmp_path, capsys):
    conf, files, call = secret_call(tmp_path, "old-Secret-1")
    run(capsys, files, **call)
    conf, files, call = secret_call(tmp_path, "new-Secret-2")
    rc, out = run(capsys, files, _ansible_check_mode=True, _ansible_diff=True, **call)
    assert rc == 0 and out["changed_files"] == [conf]
    assert out["diff"] == [{"prepared": f"{conf}: a secret changed (masked, not shown)\n"}]
    assert "old-Secret-1" not in json.dumps(out) and "new-Secret-2" not in json.dumps(out)
    assert "old-Secret-1" in open(conf, encoding="utf-8").read()   # check mode wrote nothing


def test_a_file_failing_its_validate_command_is_left_as_it_was_the_message_masked(tmp_path, capsys):
    conf, files, call = secret_call(tmp_path, "first-Secret")
    run(capsys, files, **call)
    # the command sees the new file (0600, like whatever it writes) and fails; its output names the
    # secret, which the entry's pattern masks (the call's secrets are not given: Ansible's own
    # no_log masking would hide a failing mask)
    validate = "/bin/sh -c 'stat -c %a \"$1\"; echo x > \"$1.t\"; stat -c %a \"$1.t\"; rm \"$1.t\"; cat \"$1\"; exit 3' v %s"
    conf, files, call = secret_call(tmp_path, "second-Secret", validate=validate)
    rc, out = run(capsys, files, secret_contents=call["secret_contents"])
    assert rc == 1 and "the new file fails validation" in out["msg"] and "rc=3 600\n600\n[auth]" in out["msg"], out
    assert "second-Secret" not in out["msg"] and 'password = "********"' in out["msg"]
    assert "first-Secret" in open(conf, encoding="utf-8").read()
    assert sorted(os.listdir(tmp_path)) == ["config.toml", "unit"]   # no temporary file left
    # not run in check mode (the failing command would fail the call)
    rc, out = run(capsys, files, _ansible_check_mode=True, **call)
    assert rc == 0 and out["changed_files"] == [conf] and "first-Secret" in open(conf, encoding="utf-8").read()
    conf, files, call = secret_call(tmp_path, "second-Secret", validate="/bin/sh -c 'grep -q second \"$1\"' v %s")
    rc, out = run(capsys, files, **call)
    assert rc == 0 and "second-Secret" in open(conf, encoding="utf-8").read()


def test_a_file_names_its_content_exactly_once(tmp_path, capsys):
    conf, files, call = secret_call(tmp_path, "a-Secret-9")
    rc, out = run(capsys, [dict(files[0], content="x\n")], **call)
    assert rc == 1 and out["msg"] == f"{conf}: its content is given in neither or both of content and secret_contents"
    rc, out = run(capsys, [{"path": str(tmp_path / "none")}])
    assert rc == 1 and "its content is given in neither" in out["msg"]
    rc, out = run(capsys, files[1:], **call)
    assert rc == 1 and out["msg"] == f"secret_contents: {conf} is not a file of files"


def test_a_secret_file_is_made_0600_whatever_mode_it_had(tmp_path, capsys):
    conf, files, call = secret_call(tmp_path, "a-Secret-7")
    run(capsys, files, **call)
    os.chmod(conf, 0o644)
    rc, out = run(capsys, files, _ansible_diff=True, **call)
    assert rc == 0 and out["changed_files"] == [conf] and mode(conf) == "0o600"
    assert [d["after_header"] for d in out["diff"]] == [f"{conf} (attributes)"]


def test_bad_secret_contents_and_masks_are_refused_by_name(tmp_path, capsys):
    conf, files, call = secret_call(tmp_path, "a-Secret-8")
    # (a number no path here holds: as a no_log value, Ansible masks it wherever it appears in the result)
    rc, out = run(capsys, files, secret_contents={conf: 98765432123}, secrets=call["secrets"])
    assert rc == 1 and out["msg"] == f"secret_contents: the content of {conf} is not a string"
    rc, out = run(capsys, [dict(files[0], mask=["(unclosed"]), files[1]], **call)
    assert rc == 1 and out["msg"].startswith(f"{conf}: mask '(unclosed' is not a regular expression")

"""The user's hook playbooks (plugin_utils/install_hooks.py): found by name, run with this run's
options, their own PLAY RECAP read for changed, a failure named with its exit code."""
import os
import stat

import pytest

from ansible_collections.offline_pot.tke.plugins.plugin_utils import install_hooks as ih


def test_a_hook_is_found_by_name_or_not_at_all(tmp_path):
    (tmp_path / "control_plane").mkdir()
    (tmp_path / "control_plane" / "before.yml").write_text("- hosts: all\n")
    assert ih.hook_path(str(tmp_path), "control_plane/before") == str(tmp_path / "control_plane" / "before.yml")
    assert os.path.isfile(ih.hook_path(str(tmp_path), "control_plane/before"))
    assert ih.hook_path(str(tmp_path), "control_plane/after") == str(tmp_path / "control_plane" / "after.yml")
    assert not os.path.exists(ih.hook_path(str(tmp_path), "control_plane/after"))


def test_the_run_options_are_carried_over():
    cli = {"inventory": ["inv/hosts.yml", "more.yml"], "extra_vars": ["a=1", "@vars.yml"], "vault_ids": ["prod@f"],
           "vault_password_files": ["pw"], "subset": "h1,h2", "remote_user": "ops", "forks": 5, "become": True,
           "verbosity": 2, "connection": ""}
    argv = ih.hook_argv("/h/pre-install.yml", cli, check_mode=True)
    assert argv[1:] == ["/h/pre-install.yml", "-i", "inv/hosts.yml", "-i", "more.yml", "-e", "a=1", "-e", "@vars.yml",
                        "--vault-id", "prod@f", "--vault-password-file", "pw", "--limit", "h1,h2", "--user", "ops",
                        "--forks", "5", "--become", "--check", "-vv"]


def test_changed_and_failure_come_from_the_hooks_own_run(tmp_path, monkeypatch):
    fake = tmp_path / "ansible-playbook"
    fake.write_text("#!/bin/sh\necho \"PLAY RECAP\"\necho \"h1 : ok=2 changed=$HOOK_CHANGED unreachable=0\"\n"
                    "exit $HOOK_RC\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(ih.sys, "argv", [str(fake)])
    monkeypatch.setenv("HOOK_CHANGED", "1")
    monkeypatch.setenv("HOOK_RC", "0")
    ran = ih.run_hook("post-install", "/h/post-install.yml", {}, False)
    assert ran["changed"] and not ran["failed"] and ran["rc"] == 0 and ran["msg"].startswith("hook post-install ran in")
    monkeypatch.setenv("HOOK_CHANGED", "0")
    monkeypatch.setenv("HOOK_RC", "3")
    ran = ih.run_hook("post-install", "/h/post-install.yml", {}, False)
    assert ran["failed"] and not ran["changed"] and ran["msg"] == "hook post-install (/h/post-install.yml) failed with exit code 3"
    assert ran["stdout_lines"][-1].startswith("h1 : ok=2")
    with pytest.raises(ValueError, match="interactive passwords cannot be passed to a hook"):
        ih.run_hook("post-install", "/h/post-install.yml", {"ask_vault_pass": True}, False)
    assert os.path.basename(ih.hook_argv("x.yml", {}, False)[0]) == "ansible-playbook"

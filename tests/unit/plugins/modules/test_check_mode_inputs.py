"""Modules in check mode when what an earlier task would install is not there yet (a fresh host,
docs/install.md "Preview with --check"): they report what they would do, never pretend a check."""
import json

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.offline_pot.tke.plugins.module_utils import htpasswd
from ansible_collections.offline_pot.tke.plugins.modules import api_vip_redirect, registry_htpasswd


def run(module, capsys, **args):
    with patch_module_args(args), pytest.raises(SystemExit) as exc:
        module.main()
    return exc.value.code, json.loads(capsys.readouterr().out)


@pytest.fixture()
def no_bcrypt(monkeypatch):
    def missing():
        raise RuntimeError("the Python bcrypt module is missing on this host")
    monkeypatch.setattr(htpasswd, "bcrypt_backend", missing)


def test_htpasswd_without_bcrypt_in_check_mode_would_add_a_new_user(tmp_path, capsys, no_bcrypt):
    path = tmp_path / "htpasswd"
    rc, out = run(registry_htpasswd, capsys, path=str(path), user="admin", password="secret-123",
                  _ansible_check_mode=True, _ansible_diff=True)
    assert rc == 0 and out["changed"] and out["users"] == ["admin"], out
    assert out["diff"]["after"] == "admin (new password)\n" and not path.exists()
    assert "secret-123" not in json.dumps(out)


def test_htpasswd_without_bcrypt_cannot_check_an_existing_entry_nor_run(tmp_path, capsys, no_bcrypt):
    path = tmp_path / "htpasswd"
    path.write_text("admin:$2b$10$abcdefghijklmnopqrstuv\n")
    rc, out = run(registry_htpasswd, capsys, path=str(path), user="admin", password="secret-123",
                  _ansible_check_mode=True)
    assert rc == 1 and "bcrypt module is missing" in out["msg"]
    rc, out = run(registry_htpasswd, capsys, path=str(tmp_path / "new"), user="admin", password="secret-123")
    assert rc == 1 and "bcrypt module is missing" in out["msg"]


def test_vip_redirect_without_iptables_in_check_mode_would_insert_the_rule(capsys, monkeypatch):
    from ansible.module_utils.basic import AnsibleModule
    monkeypatch.setattr(AnsibleModule, "get_bin_path",
                        lambda self, name, required=False, opt_dirs=None: self.fail_json(msg=f"no {name}")
                        if required else None)
    args = dict(vip="10.0.0.100", vport=8443, to_port=6443)
    rc, out = run(api_vip_redirect, capsys, _ansible_check_mode=True, **args)
    assert rc == 0 and out["changed"] and out["inserted"] and out["probe"] == "skipped", out
    assert "10.0.0.100" in out["diff"]["after"] and "iptables is not installed yet" in out["msg"]
    rc, out = run(api_vip_redirect, capsys, **args)
    assert rc == 1 and out["msg"] == "no iptables"

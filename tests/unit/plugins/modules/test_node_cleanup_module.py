"""node_cleanup decides from what the host reports, acts only outside check mode, and a second run
changes nothing. The host is simulated: systemctl, iptables-save/-restore and ip are replaced (the
module's run_command and get_bin_path); the paths are real, in a scratch directory."""
import json

import pytest
from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.testing import patch_module_args

from ansible_collections.offline_pot.tke.plugins.modules import node_cleanup

SAVE = "*filter\n:FORWARD ACCEPT [0:0]\n:KUBE-FORWARD - [0:0]\n-A FORWARD -j KUBE-FORWARD\nCOMMIT\n"


@pytest.fixture
def host(monkeypatch):
    """State of the simulated host; every command the module runs is recorded in host['ran']."""
    state = {"active": {"kubelet"}, "enabled": {"kubelet", "containerd"}, "save": SAVE,
             "links": "1: lo: <LOOPBACK>\n7: cni0: <BROADCAST>\n", "ran": []}

    def run_command(self, argv, data=None, check_rc=False, **kw):
        state["ran"].append(argv)
        name, args = argv[0].rsplit("/", 1)[-1], argv[1:]
        if name == "systemctl" and args[0] == "is-active":
            return (0, "active\n", "") if args[1] in state["active"] else (3, "inactive\n", "")
        if name == "systemctl" and args[0] == "is-enabled":
            return (0, "enabled\n", "") if args[1] in state["enabled"] else (1, "disabled\n", "")
        if name == "systemctl" and args[0] == "disable":
            state["active"].discard(args[2])
            state["enabled"].discard(args[2])
        if name == "iptables-save":
            return 0, state["save"], ""
        if name == "iptables-restore":
            assert data.startswith("*filter\n-D FORWARD -j KUBE-FORWARD\n-F KUBE-FORWARD\n-X KUBE-FORWARD\n")
            state["save"] = "*filter\n:FORWARD ACCEPT [0:0]\nCOMMIT\n"
        if name == "ip" and args[:2] == ["-o", "link"]:
            return 0, state["links"], ""
        if name == "ip" and args[:2] == ["link", "delete"]:
            state["links"] = "1: lo: <LOOPBACK>\n"
        return 0, "", ""

    monkeypatch.setattr(AnsibleModule, "run_command", run_command)
    monkeypatch.setattr(AnsibleModule, "get_bin_path",
                        lambda self, name, *a, **kw: None if name.startswith(("ip6tables", "ipvsadm")) else f"/x/{name}")
    return state


def run(capsys, **args):
    with patch_module_args(args), pytest.raises(SystemExit):
        node_cleanup.main()
    return json.loads(capsys.readouterr().out)


def test_check_mode_reports_and_touches_nothing_then_the_run_removes_then_nothing_is_left(host, tmp_path, capsys):
    (tmp_path / "etc-containerd" / "certs.d").mkdir(parents=True)
    (tmp_path / "crictl.yaml").write_text("x")
    args = dict(services=["kubelet", "containerd", "etcd"], paths=[str(tmp_path / "etc-containerd"),
                str(tmp_path / "crictl.yaml"), str(tmp_path / "absent")], chain_prefixes=["KUBE-"], links=["cni0"])
    checked = run(capsys, _ansible_check_mode=True, _ansible_diff=True, **args)
    assert checked["changed"] and checked["stopped"] == ["kubelet", "containerd"]
    assert checked["removed"] == [str(tmp_path / "etc-containerd"), str(tmp_path / "crictl.yaml")]
    assert checked["netfilter"] == ["filter: -D FORWARD -j KUBE-FORWARD", "filter: -X KUBE-FORWARD"]
    assert checked["links_deleted"] == ["cni0"]
    assert "service kubelet\n" in checked["diff"]["before"] and checked["diff"]["after"] == ""
    assert (tmp_path / "crictl.yaml").exists() and "kubelet" in host["active"]
    assert not [c for c in host["ran"] if c[1:2] in (["disable"], ["link"]) or c[0].endswith("restore")]

    done = run(capsys, **args)
    assert done["changed"] and not (tmp_path / "etc-containerd").exists() and not (tmp_path / "crictl.yaml").exists()
    assert ["/x/systemctl", "disable", "--now", "kubelet"] in host["ran"]
    assert ["/x/ip", "link", "delete", "cni0"] in host["ran"]

    again = run(capsys, **args)
    assert not again["changed"] and again["diff"]["before"] == ""


def test_a_removed_unit_file_reloads_systemd(host, tmp_path, capsys, monkeypatch):
    unit = tmp_path / "etc" / "systemd" / "system" / "etcd.service"
    unit.parent.mkdir(parents=True)
    unit.write_text("[Unit]\n")
    monkeypatch.setattr(node_cleanup, "UNIT_DIRS", (str(tmp_path / "etc" / "systemd") + "/",))
    run(capsys, paths=[str(unit)])
    assert ["/x/systemctl", "daemon-reload"] in host["ran"]


def test_a_directory_to_empty_keeps_itself_and_loses_what_it_holds(host, tmp_path, capsys):
    # containerd 2 exits when its CNI configuration directory is deleted (its restart makes it again):
    # the network's reset empties it
    conf = tmp_path / "net.d"
    (conf / "sub").mkdir(parents=True)
    (conf / "10-flannel.conflist").write_text("{}")
    (conf / "sub" / "x").write_text("x")
    args = dict(empty=[str(conf), str(tmp_path / "absent")])
    checked = run(capsys, _ansible_check_mode=True, _ansible_diff=True, **args)
    assert checked["changed"] and checked["removed"] == [str(conf / "10-flannel.conflist"), str(conf / "sub")]
    assert f"path {conf / 'sub'}\n" in checked["diff"]["before"] and (conf / "sub" / "x").exists()
    assert run(capsys, **args)["changed"]
    assert conf.is_dir() and not list(conf.iterdir())
    assert not run(capsys, **args)["changed"]

"""precheck_report (the end of roles/precheck): every host's results and its "hostname unique" check
written on the controller (0600, in a 0700 directory it makes), every failing check named, nothing
written in check mode, never a change."""
import json
import os
import stat
import types

from ansible_collections.offline_pot.tke.plugins.action.precheck_report import ActionModule


def run(args, check_mode=False):
    mod = ActionModule.__new__(ActionModule)
    mod._task = types.SimpleNamespace(check_mode=check_mode, diff=False, args=args,
                                      action="offline_pot.tke.precheck_report")
    return mod.run_action(mod.validated_args(), {}, {})


def check(name, status, message=""):
    return {"check": name, "value": 1, "limit": "", "status": status, "message": message}


def test_the_report_holds_every_host_and_nothing_fails_on_good_hosts(tmp_path):
    dest = tmp_path / "state" / "precheck.json"
    result = run({"results": {"h1": [check("cpu", "pass")], "h2": [check("swap", "warn", "on")]},
                  "hostnames": {"h1": "node1", "h2": "node2"}, "dest": str(dest)})
    assert not result.get("failed") and result["changed"] is False and result["written"] is True
    assert result["failures"] == []
    report = json.loads(dest.read_text())
    assert report == result["report"]
    assert [c["check"] for c in report["h1"]] == ["cpu", "hostname unique"]
    assert stat.S_IMODE(os.stat(dest).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(dest.parent).st_mode) == 0o700


def test_every_failing_check_of_every_host_is_named_and_the_report_written(tmp_path):
    dest = tmp_path / "precheck.json"
    result = run({"results": {"h1": [check("port 6443 free", "fail", "in use")], "h2": [check("cpu", "pass")],
                              "h3": [check("cpu", "pass")]},
                  "hostnames": {"h1": "a", "h2": "same", "h3": "SAME"}, "dest": str(dest)})
    assert result["failed"] is True
    assert result["msg"] == ["h1: port 6443 free: in use",
                             "h2: hostname unique: hostname same is also the hostname of h3",
                             "h3: hostname unique: hostname SAME is also the hostname of h2"]
    assert json.loads(dest.read_text())["h1"][0]["status"] == "fail"


def test_check_mode_writes_nothing_and_still_fails(tmp_path):
    dest = tmp_path / "state" / "precheck.json"
    result = run({"results": {"h1": [check("cpu", "fail", "1 is below the minimum 2")]},
                  "hostnames": {"h1": "node1"}, "dest": str(dest)}, check_mode=True)
    assert result["failed"] is True and result["written"] is False
    assert not dest.parent.exists()

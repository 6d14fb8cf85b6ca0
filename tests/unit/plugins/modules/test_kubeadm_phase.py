"""kubeadm_phase runs a list of phases in order and stops at the first that fails; state=recorded
tells a role whether a node has joined without the role reading the module's bookkeeping."""
import json

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.offline_pot.tke.plugins.modules import kubeadm_phase


def run(capsys, **args):
    with patch_module_args(args), pytest.raises(SystemExit) as exc:
        kubeadm_phase.main()
    return exc.value.code, json.loads(capsys.readouterr().out)


@pytest.fixture()
def site(tmp_path):
    """A fake kubeadm (it records its calls, fails a phase when told) and a first master whose
    upload-config is done: the phases that finish it act on the cluster only (no files)."""
    k8s, state = tmp_path / "k8s", tmp_path / "state"
    k8s.mkdir()
    state.mkdir()
    (state / "init-upload-config-all.sha256").write_text("x\n")
    config = tmp_path / "init.yaml"
    config.write_text("kind: InitConfiguration\n")
    kubeadm = tmp_path / "kubeadm"
    kubeadm.write_text(f"""#!/bin/sh
echo "$@" >> {tmp_path}/calls
if [ -e {tmp_path}/fail-$3 ]; then echo "boom in $3"; exit 3; fi
""")
    kubeadm.chmod(0o755)
    return dict(tmp=tmp_path, args=dict(command="init", config=str(config), version="1.30.4", kubeadm=str(kubeadm),
                                        kubernetes_dir=str(k8s), state_dir=str(state)))


PHASES = ["mark-control-plane", "bootstrap-token", "addon all"]


def calls(site):
    path = site["tmp"] / "calls"
    return [line.split()[2] for line in path.read_text().splitlines()] if path.exists() else []


def test_phases_run_in_order_then_are_recorded(site, capsys):
    rc, out = run(capsys, phases=PHASES, phase_args={"bootstrap-token": ["--skip-token-print"]}, **site["args"])
    assert rc == 0 and out["changed"] and out["ran"] == PHASES, out
    assert calls(site) == ["mark-control-plane", "bootstrap-token", "addon"]
    assert "--skip-token-print" in (site["tmp"] / "calls").read_text().splitlines()[1]
    assert out["all_recorded"] and out["recorded"] == dict.fromkeys(PHASES, True)
    rc, again = run(capsys, phases=PHASES, phase_args={"bootstrap-token": ["--skip-token-print"]}, **site["args"])
    assert rc == 0 and not again["changed"] and again["ran"] == [] and len(calls(site)) == 3


def test_the_first_failing_phase_stops_the_ones_after_it(site, capsys):
    (site["tmp"] / "fail-bootstrap-token").touch()
    rc, out = run(capsys, phases=PHASES, **site["args"])
    assert rc == 1 and out["failed"], out
    assert "kubeadm init phase bootstrap-token failed (exit 3)" in out["msg"] and "boom in bootstrap-token" in out["msg"]
    assert calls(site) == ["mark-control-plane", "bootstrap-token"]
    assert [r["phase"] for r in out["results"]] == ["mark-control-plane", "bootstrap-token"]
    assert out["recorded"] == {"mark-control-plane": True, "bootstrap-token": False, "addon all": False}


def test_recorded_tells_whether_the_node_joined_and_runs_nothing(site, capsys):
    query = dict(command="init", phases=["addon all"], state="recorded", state_dir=site["args"]["state_dir"])
    rc, out = run(capsys, **query)
    assert rc == 0 and out["changed"] is False and out["recorded"] == {"addon all": False}, out
    assert out["all_recorded"] is False and calls(site) == []
    run(capsys, phases=PHASES, **site["args"])
    rc, out = run(capsys, **query)
    assert out["all_recorded"] is True and len(calls(site)) == 3


def test_a_configuration_not_written_yet_fails_a_run_and_is_previewed_in_check_mode(site, capsys):
    args = dict(site["args"], config=str(site["tmp"] / "not-yet.yaml"))
    rc, out = run(capsys, phases=PHASES, **args)
    assert rc == 1 and "not-yet.yaml does not exist" in out["msg"]
    # check mode before kubeadm_config wrote it: every phase would run, saying why (upload-config is
    # recorded with another configuration's fingerprint, which cannot be compared yet)
    rc, out = run(capsys, phases=["upload-config all"] + PHASES, _ansible_check_mode=True, _ansible_diff=True, **args)
    assert rc == 0 and out["changed"] and out["ran"] == ["upload-config all"] + PHASES, out
    assert [r["reason"] for r in out["results"]] == [
        "its configuration is not written yet (check mode: an earlier task would write it)"] + [
        "never ran with this tool (no fingerprint recorded)"] * 3
    assert calls(site) == [] and not (site["tmp"] / "not-yet.yaml").exists()
    assert sorted(p.name for p in (site["tmp"] / "state").iterdir()) == ["init-upload-config-all.sha256"]


def test_check_mode_reports_what_would_run_and_runs_nothing(site, capsys):
    rc, out = run(capsys, phases=PHASES, _ansible_check_mode=True, **site["args"])
    assert rc == 0 and out["changed"] and out["ran"] == PHASES and calls(site) == []
    assert out["all_recorded"] is False


def test_a_master_that_joined_before_the_local_mode_skips_its_hidden_phases(site, capsys):
    """A master joined under 1.32 records control-plane-join all, and its etcd member exists: on 1.33
    the local mode's phases (etcd-join, kubelet-wait-bootstrap: kubeadm join with the others skipped)
    must not run (etcd-join would add the member again); the other phases decide as before."""
    k8s, state = site["tmp"] / "k8s", site["tmp"] / "state"
    (k8s / "manifests").mkdir()
    for f in ("manifests/etcd.yaml", "kubelet.conf"):
        (k8s / f).write_text("x")
    config = site["tmp"] / "join.yaml"
    config.write_text("kind: JoinConfiguration\n")

    def earlier_phases_done():
        for ph in ("control-plane-prepare-all", "kubelet-start"):
            (state / f"join-{ph}.sha256").write_text("x\n")
    earlier_phases_done()
    (state / "join-control-plane-join-all.sha256").write_text("old\n")
    phases = ["local-mode", "control-plane-join all"]
    args = dict(site["args"], command="join", config=str(config), version="1.33.13")
    rc, out = run(capsys, phases=phases, **args)
    assert rc == 0, out
    reasons = {r["phase"]: r["reason"] for r in out["results"]}
    assert reasons["local-mode"] == "the node completed its join (control-plane-join all recorded)"
    assert calls(site) == ["control-plane-join"]
    # the final phase itself still decides by its fingerprint (recorded with another configuration)
    assert reasons["control-plane-join all"] == "configuration changed (fingerprint differs)"
    # a node on its way in (nothing recorded) runs them, in order
    for f in state.iterdir():
        f.unlink()
    earlier_phases_done()
    rc, out = run(capsys, phases=phases, **args)
    assert rc == 0 and out["ran"] == phases, out
    # the hidden phases run as "kubeadm join" with every other phase skipped
    assert (site["tmp"] / "calls").read_text().splitlines()[-2].startswith(
        "join --config " + str(config) + " --skip-phases preflight,control-plane-prepare,kubelet-start,")
    assert calls(site)[-1] == "control-plane-join"


def test_adopted_records_what_a_kubeadm_upgrade_made_and_runs_nothing(site, capsys):
    """A first master kubeadm upgraded: its recorded phases get the new configuration's fingerprint
    (a later run finds them done, runs no kubeadm); a phase never recorded is left to run; check mode
    and a second call write nothing."""
    state = site["tmp"] / "state"
    run(capsys, phases=PHASES, phase_args={"bootstrap-token": ["--skip-token-print"]}, **site["args"])
    assert len(calls(site)) == 3
    (site["tmp"] / "init.yaml").write_text("kind: InitConfiguration\nkubernetesVersion: v1.31.1\n")
    before = {f.name: f.read_text() for f in state.iterdir()}
    adopt = dict(site["args"], version="1.31.1", state="adopted",
                 phase_args={"bootstrap-token": ["--skip-token-print"]})
    rc, preview = run(capsys, phases=PHASES, _ansible_check_mode=True, _ansible_diff=True, **adopt)
    assert rc == 0 and preview["changed"] and preview["adopted"] == PHASES, preview
    assert {f.name: f.read_text() for f in state.iterdir()} == before and len(preview["diff"]) == 3
    rc, out = run(capsys, phases=PHASES + ["upload-config all", "kubelet-start"], **adopt)
    assert rc == 0 and out["changed"] and out["adopted"] == PHASES + ["upload-config all"], out
    reasons = {r["phase"]: r["reason"] for r in out["results"]}
    assert reasons["kubelet-start"].startswith("left to run: missing ") and len(calls(site)) == 3
    rc, again = run(capsys, phases=PHASES, **adopt)
    assert rc == 0 and not again["changed"] and again["adopted"] == []
    # the install at that release: nothing to run
    rc, install = run(capsys, phases=PHASES, phase_args={"bootstrap-token": ["--skip-token-print"]},
                      **dict(site["args"], version="1.31.1"))
    assert rc == 0 and install["ran"] == [] and len(calls(site)) == 3, install


def test_adopted_completes_the_join_of_a_worker_that_joined_under_an_earlier_release(site, capsys):
    """A worker joined under 1.31 (preflight, kubelet-start) upgraded to 1.36: kubelet-wait-bootstrap,
    a phase of a 1.36 node's way in, is recorded done (the install would run it: no completed join
    in 1.36's terms); on a node that recorded no phase at all nothing is adopted."""
    k8s, state = site["tmp"] / "k8s", site["tmp"] / "state"
    for f in state.iterdir():
        f.unlink()
    (k8s / "kubelet.conf").write_text("x")
    (k8s / "pki").mkdir()
    (k8s / "pki" / "ca.crt").write_text("x")
    config = site["tmp"] / "join.yaml"
    config.write_text("kind: JoinConfiguration\n")
    phases = ["preflight", "kubelet-start", "kubelet-wait-bootstrap"]
    args = dict(site["args"], command="join", config=str(config), version="1.36.3", state="adopted")
    rc, out = run(capsys, phases=phases, **args)
    assert rc == 0 and not out["changed"] and out["adopted"] == [], out
    for ph in ("preflight", "kubelet-start"):
        (state / f"join-{ph}.sha256").write_text("x\n")
    rc, out = run(capsys, phases=phases, **args)
    assert rc == 0 and "kubelet-wait-bootstrap" in out["adopted"], out
    reasons = {r["phase"]: r["reason"] for r in out["results"]}
    assert reasons["kubelet-wait-bootstrap"].startswith("the node joined under an earlier release"), reasons
    assert out["all_recorded"] and calls(site) == []
    # (kubelet-start's files are under /var/lib/kubelet, absent on this machine: it is left to run)
    assert reasons["kubelet-start"].startswith("left to run: missing /var/lib/kubelet/"), reasons
    rc, install = run(capsys, phases=phases, _ansible_check_mode=True, **dict(args, state="run"))
    assert rc == 0 and install["ran"] == ["kubelet-start"], install
    assert {r["phase"]: r["reason"] for r in install["results"]}["kubelet-wait-bootstrap"] == \
        "artifacts present and configuration unchanged"

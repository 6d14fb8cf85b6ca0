"""The kubeadm double's `reset` (tests/kubeadm_double, its reset block): phases, flags and
aliases per version, the confirmation, what cleanup-node and remove-etcd-member remove - run
here on the controller against a scratch directory, without test hosts.

Expected behaviour is kubeadm's (cmd/kubeadm/app/cmd/phases/reset/*.go; the double's README)."""
import io

import pytest
import yaml

from harness.kubeadm_double import load as _load


@pytest.fixture(params=["1.30", "1.31", "1.32"])
def node(request, monkeypatch, tmp_path):
    """The double, acting as kubeadm 1.30 / 1.31, over a scratch node with a master's kubeadm files."""
    mod = _load(request.param, monkeypatch)
    k8s, kubelet = tmp_path / "etc-kubernetes", tmp_path / "var-lib-kubelet"
    for d in ("manifests", "pki/etcd", "tmp"):
        (k8s / d).mkdir(parents=True)
    for f in ("manifests/kube-apiserver.yaml", "pki/ca.crt", "pki/etcd/ca.crt", "tmp/x", "admin.conf",
              "super-admin.conf", "kubelet.conf", "scheduler.conf", "controller-manager.conf", "kubeadm-config.yaml"):
        (k8s / f).write_text("x")
    (kubelet / "pki").mkdir(parents=True)
    (kubelet / "config.yaml").write_text("x")
    monkeypatch.setattr(mod.common, "K8S", str(k8s))
    monkeypatch.setattr(mod.common, "KUBELET_DIR", str(kubelet))
    monkeypatch.setattr(mod.common, "STATE", str(tmp_path / "state.json"))
    monkeypatch.setattr(mod.cmd_reset, "APISERVER_STORE", str(tmp_path / "store.json"))
    monkeypatch.setenv("KUBEADM_DOUBLE_WARNINGS", str(tmp_path / "warnings.log"))
    calls = []
    monkeypatch.setattr(mod.cmd_reset.subprocess, "run", lambda argv, **kw: calls.append(argv) or
                        type("R", (), {"returncode": 0})())
    mod.calls, mod.tmp, mod.version = calls, tmp_path, request.param
    return mod


def _reset(mod, *args):
    cert_dir = f"{mod.common.K8S}/pki"
    return mod.cmd_reset.run_reset(list(args) + (["--cert-dir", cert_dir] if "phase" not in args else []))


def test_reset_removes_what_kubeadm_reset_removes(node, capsys):
    _reset(node, "-f", "--cleanup-tmp-dir")
    k8s, kubelet = node.tmp / "etc-kubernetes", node.tmp / "var-lib-kubelet"
    assert sorted(p.name for p in k8s.iterdir()) == ["kubeadm-config.yaml", "manifests", "pki", "tmp"]
    assert not any(any((k8s / d).iterdir()) for d in ("manifests", "pki", "tmp"))   # contents gone, dirs stay
    assert kubelet.is_dir() and not any(kubelet.iterdir())
    assert ["systemctl", "stop", "kubelet"] in node.calls
    out = capsys.readouterr().out
    assert "[reset] No etcd config found. Assuming external etcd" in out
    assert "The reset process does not clean CNI configuration" in out


def test_stacked_etcd_member_data_is_cleaned(node, capsys):
    data = node.tmp / "etcd-data"
    (data / "member").mkdir(parents=True)
    pod = {"spec": {"containers": [{"command": ["etcd", f"--data-dir={data}"]}]}}
    (node.tmp / "etc-kubernetes" / "manifests" / "etcd.yaml").write_text(yaml.safe_dump(pod))
    (node.tmp / "state.json").write_text("{}")
    node.cmd_reset.run_reset(["phase", "remove-etcd-member"])
    assert data.is_dir() and not any(data.iterdir())
    assert not (node.tmp / "state.json").exists()   # the double's stand-in for the stacked etcd's data
    assert f"[reset] Deleted contents of the etcd data directory: {data}" in capsys.readouterr().out


def test_skip_phases_and_dry_run(node):
    _reset(node, "--force", "--skip-phases", "cleanup-node")
    assert (node.tmp / "etc-kubernetes" / "admin.conf").exists()
    _reset(node, "--force", "--dry-run")
    assert (node.tmp / "etc-kubernetes" / "admin.conf").exists() and node.calls == []


def test_without_force_it_asks(node, monkeypatch):
    monkeypatch.setattr(node.sys, "stdin", io.StringIO("n\n"))
    with pytest.raises(node.Fail, match="error execution phase preflight: won't proceed"):
        _reset(node)
    assert (node.tmp / "etc-kubernetes" / "admin.conf").exists()
    monkeypatch.setattr(node.sys, "stdin", io.StringIO("y\n"))


@pytest.mark.parametrize("args, message", [
    (["--bogus"], "unknown flag: --bogus"),
    (["phase", "cleanup-node", "--kubeconfig", "x"], "unknown flag: --kubeconfig"),
    (["phase", "remove-etcd-member", "--cert-dir", "x"], "unknown flag: --cert-dir"),
    (["phase", "preflight", "--cleanup-tmp-dir"], "unknown flag: --cleanup-tmp-dir"),
    (["phase", "update-cluster-status"], 'unknown command "update-cluster-status" for "kubeadm reset phase"'),
    (["now"], 'unknown command "now" for "kubeadm reset"'),
    (["-f", "--ignore-preflight-errors", "all,Swap"], "don't specify individual checks if 'all' is used"),
])
def test_refused_like_kubeadm(node, args, message):
    with pytest.raises(node.Fail, match=message.replace("(", r"\(")):
        node.cmd_reset.run_reset(args)


def test_phase_aliases(node):
    node.cmd_reset.run_reset(["phase", "cleanupnode", "--cert-dir", f"{node.common.K8S}/pki"])
    assert not (node.tmp / "etc-kubernetes" / "admin.conf").exists()
    node.cmd_reset.run_reset(["phase", "pre-flight", "-f"])


def test_config_is_a_v1beta4_reset_configuration(node, tmp_path):
    cfg = tmp_path / "reset.yaml"
    cfg.write_text(yaml.safe_dump({"apiVersion": "kubeadm.k8s.io/v1beta4", "kind": "ResetConfiguration",
                                   "force": True, "certificatesDir": f"{node.common.K8S}/pki", "cleanupTmpDir": True}))
    if node.version == "1.30":   # v1beta4 is not served by kubeadm 1.30
        with pytest.raises(node.Fail, match='no kind "ResetConfiguration" is registered for version'):
            node.cmd_reset.run_reset(["--config", str(cfg)])
        return
    node.cmd_reset.run_reset(["--config", str(cfg)])
    assert not any((node.tmp / "etc-kubernetes" / "tmp").iterdir())
    with pytest.raises(node.Fail, match=r"can not mix '--config' with arguments \[force\]"):
        node.cmd_reset.run_reset(["--config", str(cfg), "--force"])

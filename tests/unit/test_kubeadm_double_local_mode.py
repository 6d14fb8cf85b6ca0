"""kubeadm 1.33 in the kubeadm test double: the release's command line (join phase etcd-join, the
hidden kubelet-wait-bootstrap run inside "kubeadm join" only, upgrade plan --etcd-upgrade), gates
(EtcdLearnerMode gone) and skew, and
the kubelet's local mode (ControlPlaneKubeletLocalMode, on by default from 1.33): where init, join and
upgrade point a master's kubelet, and which join phase adds the stacked etcd member. The facts and
their sources are in tests/kubeadm_double/cli_v1_33.py. Run here on the controller, no test hosts."""
import base64
import types

import pytest
import yaml

from ansible_collections.offline_pot.tke.plugins.module_utils import kubeadm_config as kc
from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki import render_kubeconfig
from harness.kubeadm_double import load as _load, main_error as _fail

NEEDS_CONFIG = "the double needs --config (the collection always passes one)"
CLUSTER = {"name": "global", "control_plane_endpoint": "api.tke.com:6443", "image_repository": "registry.tke.com/library",
           "pod_cidr": "10.244.0.0/16", "service_cidr": "10.96.0.0/16", "apiserver_cert_sans": ["api.tke.com"],
           "etcd": {"local": {}}}
NODE = {"name": "m1", "advertise_address": "192.0.2.11"}
JOIN = {"api_server_endpoint": "api.tke.com:6443", "token": "abcdef.0123456789abcdef",
        "ca_cert_hash": "sha256:" + "a" * 64, "control_plane": True, "certificate_key": "b" * 64}


def _config(tmp_path, kind, version, **kw):
    path = tmp_path / f"{kind}.yaml"
    path.write_text(kc.HEADER + kc.dump_documents(kc.build(kind, version, {**CLUSTER, **kw}, NODE,
                                                           JOIN if kind == "join" else None)))
    return str(path)


# ---------------------------------------------------------------- command line, gates, skew
def test_join_phase_etcd_join_is_a_command_of_1_33_and_kubelet_wait_bootstrap_is_hidden(d132, d133):
    for d in (d132, d133):
        # hidden: no "join phase" command (workflow/runner.go), it runs inside "kubeadm join" only
        assert 'unknown command "kubelet-wait-bootstrap"' in _fail(d, ["join", "phase", "kubelet-wait-bootstrap"])
    assert 'unknown command "etcd-join"' in _fail(d132, ["join", "phase", "etcd-join", "--config", "x"])
    assert _fail(d133, ["join", "phase", "etcd-join", "--control-plane", "--node-name", "m2",
                        "--apiserver-advertise-address", "192.0.2.12", "--patches", "/p"]) == NEEDS_CONFIG
    assert "unknown flag: --cri-socket" in _fail(d133, ["join", "phase", "etcd-join", "--cri-socket", "unix:///x"])


def test_kubeadm_join_skips_phases_by_generated_name(d133):
    assert _fail(d133, ["join", "--skip-phases", "kubelet-start"]) == NEEDS_CONFIG
    assert _fail(d133, ["join", "--config", "x", "--skip-phases", "control-plane-prepare/nothing"]) == \
        "invalid phase name: control-plane-prepare/nothing"
    assert "unknown flag: --bogus" in _fail(d133, ["join", "--bogus", "x"])


def test_upgrade_plan_takes_etcd_upgrade_from_1_33(d132, d133):
    assert "unknown flag: --etcd-upgrade" in _fail(d132, ["upgrade", "plan", "--etcd-upgrade=false", "--config", "x"])
    assert "unknown flag" not in _fail(d133, ["upgrade", "plan", "--etcd-upgrade=false", "--config", "x"])


def test_etcd_learner_mode_is_no_gate_of_1_33_and_a_1_31_control_plane_is_refused(d132, d133, tmp_path):
    path = _config(tmp_path, "init", "1.33.13")
    docs = yaml.safe_load_all(open(path))
    docs = [d for d in docs if d]
    next(d for d in docs if d["kind"] == "ClusterConfiguration")["featureGates"] = {"EtcdLearnerMode": True}
    bad = tmp_path / "gate.yaml"
    bad.write_text(kc.HEADER + kc.dump_documents(docs))
    with pytest.raises(d133.Fail, match="EtcdLearnerMode is not a valid feature name."):
        d133.config_load.load_config(str(bad), "init")
    assert d133.config_load.load_config(path, "init")["ClusterConfiguration"]["kubernetesVersion"] == "v1.33.13"
    with pytest.raises(d133.Fail, match="control plane version >= 1.32.0. Current version: v1.31.1"):
        d133.config_load.load_config(_config(tmp_path, "init", "1.31.1"), "init")


# ---------------------------------------------------------------- the local mode
@pytest.fixture
def host(tmp_path, monkeypatch):
    """/etc/kubernetes under tmp_path for a double module (the CA made by init's certs phase)."""
    def prepare(d, version):
        monkeypatch.setattr(d.common, "K8S", str(tmp_path / "k8s"))
        monkeypatch.setattr(d.common, "PKI", str(tmp_path / "k8s" / "pki"))
        (tmp_path / "k8s" / "manifests").mkdir(parents=True, exist_ok=True)
        docs = d.config_load.load_config(_config(tmp_path, "init", version), "init")
        d.cmd_init.run_init("certs all", {}, docs)
        return docs
    return prepare


def _server(path):
    return yaml.safe_load(open(path))["clusters"][0]["cluster"]["server"]


@pytest.mark.parametrize("version,server", [("1.32", "https://api.tke.com:6443"), ("1.33", "https://192.0.2.11:6443")])
def test_init_points_the_first_masters_kubelet_at_its_own_api_server_from_1_33(version, server, host, monkeypatch,
                                                                               tmp_path):
    d = _load(version, monkeypatch)
    docs = host(d, {"1.32": "1.32.13", "1.33": "1.33.13"}[version])
    d.cmd_init.run_init("kubeconfig all", {}, docs)
    assert _server(tmp_path / "k8s" / "kubelet.conf") == server
    assert _server(tmp_path / "k8s" / "admin.conf") == "https://api.tke.com:6443"


def test_an_existing_kubeconfig_is_kept_warned_about_another_server_and_refused_with_another_ca(d133, host, tmp_path):
    docs = host(d133, "1.33.13")
    ca = (tmp_path / "k8s" / "pki" / "ca.crt").read_bytes()
    kubelet = tmp_path / "k8s" / "kubelet.conf"
    kubelet.write_text(render_kubeconfig("kubernetes", "https://api.tke.com:6443", ca, "system:node:m1", b"c", b"k"))
    d133.cmd_init.run_init("kubeconfig all", {}, docs)
    assert _server(kubelet) == "https://api.tke.com:6443"
    assert (f'a kubeconfig file "{kubelet}" exists already but has an unexpected API Server URL: expected: '
            "https://192.0.2.11:6443, got: https://api.tke.com:6443") in (tmp_path / "warnings.log").read_text()
    kubelet.write_text(render_kubeconfig("kubernetes", "https://192.0.2.11:6443", b"another CA", "u", b"c", b"k"))
    with pytest.raises(d133.Fail, match="exists already but has got the wrong CA cert"):
        d133.cmd_init.run_init("kubeconfig all", {}, docs)


def _join(d, tmp_path, monkeypatch, version):
    """A joining master: discovery answered with the cluster's configuration, no systemd, the
    etcd member's join recorded instead of done."""
    docs = d.config_load.load_config(_config(tmp_path, "join", version), "join")
    ca = (tmp_path / "k8s" / "pki" / "ca.crt").read_bytes()
    cluster = {"kubernetesVersion": f"v{version}", "controlPlaneEndpoint": "api.tke.com:6443"}
    monkeypatch.setattr(d.cluster_api, "discover", lambda join: ("https://api.tke.com:6443", ca, cluster, {}))
    monkeypatch.setattr(d.kubelet_files, "write_kubelet_files", lambda *a: None)
    monkeypatch.setattr(d.cmd_join, "kubelet_healthy", lambda: True)
    etcd = []
    monkeypatch.setattr(d.cmd_join, "join_stacked_etcd", lambda *a: etcd.append("member added"))
    return docs, etcd


def test_a_1_33_join_adds_the_etcd_member_in_etcd_join_and_bootstraps_the_kubelet_locally(
        d133, host, tmp_path, monkeypatch, capsys):
    """The phases one by one, as "kubeadm join" runs them (the hidden one called directly here)."""
    host(d133, "1.33.13")
    docs, etcd = _join(d133, tmp_path, monkeypatch, "1.33.13")
    k8s = tmp_path / "k8s"
    d133.cmd_join.run_join("kubelet-start", {}, docs)
    # no waiting for the TLS bootstrap: the kubelet bootstraps against this master's own API server
    assert "Waiting for the kubelet to perform the TLS Bootstrap" not in capsys.readouterr().out
    assert _server(k8s / "bootstrap-kubelet.conf") == "https://192.0.2.11:6443"
    assert not (k8s / "kubelet.conf").exists()
    d133.cmd_join.run_join("control-plane-join all", {}, docs)
    assert etcd == []                       # the etcd sub-phase runs only with the gate off
    d133.cmd_join.run_join("etcd-join", {}, docs)
    assert etcd == ["member added"]
    d133.cmd_join.run_join("kubelet-wait-bootstrap", {}, docs)
    assert _server(k8s / "kubelet.conf") == "https://192.0.2.11:6443"
    assert not (k8s / "bootstrap-kubelet.conf").exists()


def test_the_gate_turned_off_keeps_1_32s_join(d133, host, tmp_path, monkeypatch):
    host(d133, "1.33.13")
    docs, etcd = _join(d133, tmp_path, monkeypatch, "1.33.13")
    discovered = d133.cluster_api.discover(None)
    discovered[2]["featureGates"] = {"ControlPlaneKubeletLocalMode": False}
    d133.cmd_join.run_join("etcd-join", {}, docs)
    d133.cmd_join.run_join("kubelet-wait-bootstrap", {}, docs)
    assert etcd == [] and not (tmp_path / "k8s" / "kubelet.conf").exists()
    d133.cmd_join.run_join("kubelet-start", {}, docs)
    assert _server(tmp_path / "k8s" / "kubelet.conf") == "https://api.tke.com:6443"
    d133.cmd_join.run_join("control-plane-join etcd", {}, docs)
    assert etcd == ["member added"]


def test_a_1_32_join_keeps_the_etcd_member_in_control_plane_join(d132, host, tmp_path, monkeypatch):
    host(d132, "1.32.13")
    docs, etcd = _join(d132, tmp_path, monkeypatch, "1.32.13")
    d132.cmd_join.run_join("control-plane-join all", {}, docs)
    assert etcd == ["member added"]


def test_upgrade_points_a_masters_kubelet_at_its_own_api_server_as_the_collection_renders_it(
        d133, tmp_path, monkeypatch):
    """kubeadm 1.33's upgrade rewrites the server of a master's kubelet.conf; the result is byte for
    byte what the collection's PKI renders for 1.33 (specs.kubeconfig_specs), so the next install run
    finds nothing to restore."""
    k8s = tmp_path / "k8s"
    (k8s / "manifests").mkdir(parents=True)
    monkeypatch.setattr(d133.common, "K8S", str(k8s))
    (k8s / "manifests" / "kube-apiserver.yaml").write_text(yaml.safe_dump({"spec": {"containers": [{"command": [
        "kube-apiserver", "--advertise-address=192.0.2.12", "--secure-port=6443"]}]}}))
    ca, cert, key = b"-----CA-----\n", b"-----CERT-----\n", b"-----KEY-----\n"
    (k8s / "kubelet.conf").write_text(render_kubeconfig("kubernetes", "https://api.tke.com:6443", ca,
                                                        "system:node:m2", cert, key))
    d133.cmd_upgrade.upgrade_kubelet_local_mode(dry_run=False)
    assert (k8s / "kubelet.conf").read_text() == render_kubeconfig("kubernetes", "https://192.0.2.12:6443", ca,
                                                                   "system:node:m2", cert, key)
    assert oct((k8s / "kubelet.conf").stat().st_mode & 0o777) == "0o600"
    assert base64.b64decode(yaml.safe_load((k8s / "kubelet.conf").read_text())["users"][0]["user"]
                            ["client-key-data"]) == key


def test_kubeadm_join_with_the_others_skipped_runs_the_hidden_phases_in_order(d133, host, tmp_path, monkeypatch,
                                                                              capsys):
    """What the collection runs for the local mode: "kubeadm join --skip-phases preflight,
    control-plane-prepare,kubelet-start,control-plane-join,wait-control-plane" = check-etcd, etcd-join,
    kubelet-wait-bootstrap, in that order."""
    host(d133, "1.33.13")
    _join(d133, tmp_path, monkeypatch, "1.33.13")
    ran = []
    real = d133.cmd_join.run_join
    monkeypatch.setattr(d133.cmd_join, "run_join", lambda phase, *a: (ran.append(phase), real(phase, *a)))
    monkeypatch.setattr(d133.cluster_api, "cluster_get", lambda *a: {"items": []})
    checked = []
    monkeypatch.setattr(d133.etcd_member, "Client", lambda *a: types.SimpleNamespace(
        wait_available=lambda: checked.append("etcd healthy")))
    # kubelet-start ran before (the collection's PKI phase placed kubelet.conf: no TLS bootstrap)
    ca = (tmp_path / "k8s" / "pki" / "ca.crt").read_bytes()
    (tmp_path / "k8s" / "kubelet.conf").write_text(render_kubeconfig("kubernetes", "https://192.0.2.11:6443", ca,
                                                                     "system:node:m1", b"c", b"k"))
    path = _config(tmp_path, "join", "1.33.13")
    d133.main(["join", "--config", path, "--skip-phases",
               "preflight,control-plane-prepare,kubelet-start,control-plane-join,wait-control-plane"])
    assert ran == ["check-etcd", "etcd-join", "kubelet-wait-bootstrap"] and checked == ["etcd healthy"]
    assert "This node has joined the cluster." in capsys.readouterr().out
    # a sub-phase skipped alone: its siblings run one by one
    ran.clear()
    monkeypatch.setattr(d133.cmd_join, "run_join", lambda phase, *a: ran.append(phase))
    d133.main(["join", "--config", path, "--skip-phases", "preflight,control-plane-prepare/download-certs,check-etcd,"
               "kubelet-start,etcd-join,kubelet-wait-bootstrap,control-plane-join,wait-control-plane"])
    assert ran == ["control-plane-prepare certs", "control-plane-prepare kubeconfig", "control-plane-prepare control-plane"]

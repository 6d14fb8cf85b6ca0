"""kubeadm 1.34 in the kubeadm test double, and the kubelet double's part: klog's flags cut to -v and
--vmodule, "error: " before every error, etcd 3.6's flag names for an etcd 3.6 image (the pack's
older etcd gets the experimental names from the kubelet double), and NodeLocalCRISocket (the node's
instance-config.yaml, the flag gone from kubeadm-flags.env, moved there at an upgrade). The facts
and their sources are in tests/kubeadm_double/cli_v1_34.py. On the controller, no test hosts."""
import subprocess
import sys

import pytest
import yaml

from harness.kubeadm_double import DOUBLE, load_kubelet, main_error as _fail

NEEDS_CONFIG = "the double needs --config (the collection always passes one)"
CRI = "unix:///run/containerd/containerd.sock"


def test_klog_flags_are_cut_to_v_and_vmodule(d133, d134):
    argv = ["init", "phase", "certs", "all", "--vmodule=x=2"]
    assert _fail(d133, argv).startswith("unknown flag: --vmodule")        # 1.31-1.33 refuse it (#125179)
    assert _fail(d134, argv) == NEEDS_CONFIG                              # 1.34 lists it again (#131647)
    assert _fail(d134, ["init", "phase", "certs", "all", "--v=5"]) == NEEDS_CONFIG
    assert _fail(d134, ["init", "phase", "certs", "all", "--log-flush-frequency=5s"]).startswith(
        "unknown flag: --log-flush-frequency")


def test_every_error_starts_with_error_from_1_34():
    def stderr(version):
        run = subprocess.run([sys.executable, str(DOUBLE / "kubeadm"), "init", "phase", "certs", "all"],
                             env={"KUBEADM_DOUBLE_VERSION": version, "KUBEADM_DOUBLE_LOG": "/dev/null",
                                  "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, check=False)
        assert run.returncode == 1
        return run.stderr
    assert stderr("1.33").startswith(NEEDS_CONFIG)
    assert stderr("1.34").startswith("error: " + NEEDS_CONFIG)


@pytest.fixture
def kubelet_dir(tmp_path, monkeypatch):
    def prepare(d):
        monkeypatch.setattr(d.common, "KUBELET_DIR", str(tmp_path))
        monkeypatch.setattr(d.kubelet_files.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 1))  # no systemd
        return tmp_path
    return prepare


def _node():
    return {"name": "m1", "address": "192.0.2.11", "port": 6443, "cri": CRI, "kubelet_args": {}}


def test_kubelet_start_writes_the_nodes_cri_endpoint_in_instance_config_from_1_34(d133, d134, kubelet_dir):
    for d, local in ((d133, False), (d134, True)):
        k = kubelet_dir(d)
        for f in k.iterdir():
            f.unlink()
        cluster = {"kubernetesVersion": d.CLI.VERSION}
        d.kubelet_files.write_kubelet_files({"maxPods": 256}, _node(), "registry.tke.com/library", cluster)
        env = (k / "kubeadm-flags.env").read_text()
        config = yaml.safe_load((k / "config.yaml").read_text())
        assert config["maxPods"] == 256
        if local:
            assert (k / "instance-config.yaml").read_text() == \
                'containerRuntimeEndpoint: "unix:///run/containerd/containerd.sock"\n'
            assert oct((k / "instance-config.yaml").stat().st_mode & 0o777) == "0o644"
            assert config["containerRuntimeEndpoint"] == "unix:///run/containerd/containerd.sock"
            assert "--container-runtime-endpoint" not in env and "--pod-infra-container-image=" in env
        else:
            assert not (k / "instance-config.yaml").exists() and "containerRuntimeEndpoint" not in config
            assert "--container-runtime-endpoint=unix:///run/containerd/containerd.sock" in env


def test_an_upgrade_to_1_34_moves_the_flag_into_instance_config(d134, kubelet_dir, monkeypatch, tmp_path):
    k = kubelet_dir(d134)
    monkeypatch.setattr(d134.common, "K8S", str(tmp_path / "k8s"))
    (k / "kubeadm-flags.env").write_text('KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/c.sock '
                                         '--pod-infra-container-image=r/pause:3.10 --node-ip=192.0.2.11"\n')
    (k / "config.yaml").write_text("kind: KubeletConfiguration\n")
    cm = {"data": {"kubelet": yaml.safe_dump({"apiVersion": "kubelet.config.k8s.io/v1beta1",
                                              "kind": "KubeletConfiguration", "maxPods": 110})}}
    monkeypatch.setattr(d134.cluster_api, "cluster_get", lambda *a: cm)
    d134.cmd_upgrade.upgrade_kubelet_config("/k", False, {"kubernetesVersion": "v1.33.13"})
    assert (k / "kubeadm-flags.env").read_text() == \
        'KUBELET_KUBEADM_ARGS="--pod-infra-container-image=r/pause:3.10 --node-ip=192.0.2.11"\n'
    assert (k / "instance-config.yaml").read_text() == 'containerRuntimeEndpoint: "unix:///run/c.sock"\n'
    config = yaml.safe_load((k / "config.yaml").read_text())
    assert (config["maxPods"], config["containerRuntimeEndpoint"]) == (110, "unix:///run/c.sock")
    # a second upgrade keeps the node's file (it exists) and the flags file as it is
    (k / "instance-config.yaml").write_text('containerRuntimeEndpoint: "unix:///run/other.sock"\n')
    d134.cmd_upgrade.upgrade_kubelet_config("/k", False, {"kubernetesVersion": "v1.34.10"})
    assert yaml.safe_load((k / "config.yaml").read_text())["containerRuntimeEndpoint"] == "unix:///run/other.sock"
    (k / "kubeadm-flags.env").write_text("garbage\n")
    (k / "instance-config.yaml").unlink()
    with pytest.raises(d134.Fail, match='does not contain the  expected prefix "KUBELET_KUBEADM_ARGS="'):
        d134.cmd_upgrade.upgrade_kubelet_config("/k", False, {"kubernetesVersion": "v1.34.10"})


def test_the_etcd_manifest_names_the_releases_etcd_and_its_flags(d133, d134, tmp_path, monkeypatch):
    for d, tag, flags in ((d133, "3.5.24-0", ["--experimental-initial-corrupt-check=true",
                                              "--experimental-watch-progress-notify-interval=5s"]),
                          (d134, "3.6.5-0", ["--feature-gates=InitialCorruptCheck=true",
                                             "--watch-progress-notify-interval=5s"])):
        monkeypatch.setattr(d.common, "K8S", str(tmp_path))
        (tmp_path / "manifests").mkdir(exist_ok=True)
        d.static_pods.phase_etcd({"etcd": {"local": {}}}, {"name": "m1", "address": "192.0.2.11"})
        pod = yaml.safe_load((tmp_path / "manifests" / "etcd.yaml").read_text())
        c = pod["spec"]["containers"][0]
        assert c["image"] == f"registry.k8s.io/etcd:{tag}"
        assert all(f in c["command"] for f in flags), c["command"]


@pytest.mark.parametrize("version,expect", [
    ("3.4.23", ["etcd", "--experimental-initial-corrupt-check=true", "--experimental-watch-progress-notify-interval=5s",
                "--name=m1"]),
    ("3.6.5", ["etcd", "--feature-gates=InitialCorruptCheck=true", "--watch-progress-notify-interval=5s", "--name=m1"])])
def test_the_kubelet_double_gives_an_older_etcd_the_experimental_names(version, expect, tmp_path, monkeypatch):
    kubelet = load_kubelet("1.34", monkeypatch)
    etcd = tmp_path / "etcd"
    etcd.write_text(f"#!/bin/sh\necho 'etcd Version: {version}'\n")
    etcd.chmod(0o755)
    command = ["etcd", "--feature-gates=InitialCorruptCheck=true", "--watch-progress-notify-interval=5s", "--name=m1"]
    assert kubelet.etcd_command(command, str(etcd)) == expect

"""The kubeadm test double (tests/kubeadm_double) accepts what the collection renders for the
version it mirrors (v1.30), in both etcd modes, and rejects what kubeadm v1.30 rejects - run here
on the controller, without test hosts."""
import importlib.machinery
import importlib.util
import sys
from pathlib import Path

import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils import kubeadm_config as kc

DOUBLE = Path(__file__).resolve().parent.parent / "kubeadm_double"


@pytest.fixture(scope="module")
def double():
    sys.path.insert(0, str(DOUBLE))
    loader = importlib.machinery.SourceFileLoader("kubeadm_double", str(DOUBLE / "kubeadm"))
    spec = importlib.util.spec_from_loader("kubeadm_double", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


CLUSTER = {"name": "global", "control_plane_endpoint": "api.tke.com:6443", "image_repository": "registry.tke.com/library",
           "pod_cidr": "10.244.0.0/16", "service_cidr": "10.96.0.0/16", "max_pods": 256, "proxy_mode": "ipvs",
           "proxy_exclude_cidrs": ["192.0.2.100/32"], "apiserver_cert_sans": ["api.tke.com", "127.0.0.1"]}
NODE = {"name": "m1", "advertise_address": "192.0.2.11"}


def _write(tmp_path, docs):
    path = tmp_path / "kubeadm.yaml"
    path.write_text(kc.HEADER + kc.dump_documents(docs))
    return str(path)


@pytest.mark.parametrize("etcd", [{"local": {}}, {"external": {"endpoints": ["https://192.0.2.21:2379"]}}])
def test_double_accepts_rendered_init_configuration(double, tmp_path, etcd):
    docs = double.load_config(_write(tmp_path, kc.build("init", "1.30.4", {**CLUSTER, "etcd": etcd}, NODE)), "init")
    assert set(docs) == {"InitConfiguration", "ClusterConfiguration", "KubeletConfiguration", "KubeProxyConfiguration"}


def test_double_accepts_rendered_join_configuration(double, tmp_path):
    join = {"api_server_endpoint": "api.tke.com:6443", "token": "abcdef.0123456789abcdef",
            "ca_cert_hash": "sha256:" + "a" * 64, "control_plane": True, "certificate_key": "b" * 64}
    docs = double.load_config(_write(tmp_path, kc.build("join", "1.30.4", {}, NODE, join)), "join")
    assert docs["JoinConfiguration"]["controlPlane"]["certificateKey"] == "b" * 64


def test_kubeadm_1_30_rejects_the_1_31_api(double, tmp_path):
    with pytest.raises(double.Fail, match='no kind "InitConfiguration" is registered for version "kubeadm.k8s.io/v1beta4"'):
        double.load_config(_write(tmp_path, kc.build("init", "1.31.1", CLUSTER, NODE)), "init")


def test_kubeadm_1_30_refuses_a_1_28_control_plane(double, tmp_path):
    with pytest.raises(double.Fail, match="only supports deploying clusters with the control plane version >= 1.29.0"):
        double.load_config(_write(tmp_path, kc.build("init", "1.28.13", CLUSTER, NODE)), "init")


@pytest.mark.parametrize("argv,message", [
    (["init", "phase", "certs", "all", "--config", "x", "--bogus"], "unknown flag: --bogus"),
    (["init", "phase", "certs", "all", "--config", "x", "--cert-dir", "/x"], "can not mix '--config' with arguments [cert-dir]"),
    (["init", "phase", "wait-control-plane", "--config", "x"], 'unknown command "wait-control-plane"'),
    (["join", "phase", "control-plane-join", "update", "--config", "x"], 'unknown command "update"'),
    (["init", "phase", "upload-certs", "--config", "x", "--certificate-key", "k"],
     "can not mix '--config' with arguments [certificate-key]"),
])
def test_double_cli_rejections(double, argv, message):
    with pytest.raises(double.Fail, match=message.replace("[", r"\[").replace("]", r"\]")):
        double.main(argv)

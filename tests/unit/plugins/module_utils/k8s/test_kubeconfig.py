import base64
import json
import os
import sys

import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils.k8s import kubeconfig

CA, CERT, KEY = b"-----CA-----\n", b"-----CERT-----\n", b"-----KEY-----\n"


def b64(data):
    return base64.b64encode(data).decode()


# What kubeadm writes (kubeconfig phase): block style, lists of mappings, a flow {}.
KUBEADM_ADMIN = f"""apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: {b64(CA)}
    server: https://api.tke.com:6443
  name: global
contexts:
- context:
    cluster: global
    user: kubernetes-admin
  name: kubernetes-admin@global
current-context: kubernetes-admin@global
kind: Config
preferences: {{}}
users:
- name: kubernetes-admin
  user:
    client-certificate-data: {b64(CERT)}
    client-key-data: {b64(KEY)}
"""


def test_yaml_is_read_with_pyyaml_and_a_host_without_it_is_told_how_to_get_it(monkeypatch):
    assert kubeconfig.load(KUBEADM_ADMIN)["current-context"] == "kubernetes-admin@global"
    assert kubeconfig.load('{"kind": "Config"}') == {"kind": "Config"}  # JSON needs no PyYAML
    monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml raises ImportError
    assert kubeconfig.load('{"kind": "Config"}') == {"kind": "Config"}
    with pytest.raises(kubeconfig.KubeconfigError, match="no yaml module .*control_plane_yaml_package, python3-yaml"):
        kubeconfig.load(KUBEADM_ADMIN)


def test_not_a_kubeconfig():
    with pytest.raises(kubeconfig.KubeconfigError, match="not YAML"):
        kubeconfig.load("a: [b")
    with pytest.raises(kubeconfig.KubeconfigError, match="a mapping is expected"):
        kubeconfig.load("- a")


def test_connection_of_the_current_context_with_inline_keys():
    conn = kubeconfig.connection(kubeconfig.load(KUBEADM_ADMIN))
    assert conn["server"] == "https://api.tke.com:6443"
    assert conn["ca"] == {"data": CA} and conn["cert"] == {"data": CERT} and conn["key"] == {"data": KEY}
    assert conn["token"] is None and conn["insecure"] is False


def test_json_kubeconfig_with_files_relative_to_its_directory(tmp_path):
    doc = {"clusters": [{"name": "c", "cluster": {"server": "https://10.0.0.1:6443/",
                                                  "certificate-authority": "pki/ca.crt"}}],
           "users": [{"name": "u", "user": {"token": "abc"}}],
           "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}},
                        {"name": "other", "context": {"cluster": "c"}}],
           "current-context": "other"}
    path = tmp_path / "kc.json"
    path.write_text(json.dumps(doc))
    conn = kubeconfig.read(str(path), context="x")
    assert conn["server"] == "https://10.0.0.1:6443"
    assert conn["ca"] == {"path": os.path.join(str(tmp_path), "pki/ca.crt")}
    assert conn["token"] == "abc" and conn["cert"] is None
    assert kubeconfig.read(str(path))["token"] is None  # current-context "other" has no user


@pytest.mark.parametrize("mutate,message", [
    (lambda d: d.pop("current-context"), "no current-context"),
    (lambda d: d["contexts"][0]["context"].update(cluster="nope"), "cluster 'nope' is not in"),
    (lambda d: d["clusters"][0]["cluster"].update(server="http://api:8080"), "is not an https:// URL"),
    (lambda d: d["users"][0]["user"].pop("client-key-data"), "needs its key"),
    (lambda d: d["users"][0]["user"].update({"client-key-data": "%%%"}), "not base64"),
])
def test_connection_errors_name_the_part(mutate, message):
    doc = kubeconfig.load(KUBEADM_ADMIN)
    mutate(doc)
    with pytest.raises(kubeconfig.KubeconfigError, match=message):
        kubeconfig.connection(doc)


def test_unreadable_kubeconfig_names_the_file(tmp_path):
    with pytest.raises(kubeconfig.KubeconfigError, match="cannot read kubeconfig .*missing"):
        kubeconfig.read(str(tmp_path / "missing"))


def test_reads_the_kubeconfigs_the_pki_phase_writes():
    from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki import render_kubeconfig
    text = render_kubeconfig("global", "https://api.tke.com:6443", CA, "kubernetes-admin", CERT, KEY)
    conn = kubeconfig.connection(kubeconfig.load(text))
    assert (conn["server"], conn["ca"], conn["cert"], conn["key"]) == (
        "https://api.tke.com:6443", {"data": CA}, {"data": CERT}, {"data": KEY})

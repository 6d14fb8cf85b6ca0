"""A controller without the cryptography package still loads every plugin: ansible-doc -l lists
the PKI filters, pki_consumers works, and what needs certificates says what to install."""
import subprocess
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve()
# the checkout's collections/ symlink, or (ansible-test's copy) the directory above ansible_collections/
COLLECTIONS = HERE.parents[4] / "collections"
if not (COLLECTIONS / "ansible_collections").is_dir():
    COLLECTIONS = HERE.parents[7]

SCRIPT = textwrap.dedent("""
    import sys
    sys.modules["cryptography"] = None          # import cryptography -> ImportError
    sys.path.insert(0, sys.argv[1])
    from ansible.errors import AnsibleFilterError
    from ansible_collections.offline_pot.tke.plugins.filter import cert_report, kubeadm_ca_cert_hash, pki_consumers
    from ansible_collections.offline_pot.tke.plugins.plugin_utils import k8s_pki
    assert not k8s_pki.HAS_CRYPTOGRAPHY
    print(pki_consumers.pki_consumers(["/etc/kubernetes/pki/apiserver.crt"]))
    try:
        cert_report.report_rows({"h1": [{"path": "/a.crt", "pem": ""}]})
    except AnsibleFilterError as e:
        print("ERROR", e)
    try:
        kubeadm_ca_cert_hash.kubeadm_ca_cert_hash("")
    except AnsibleFilterError as e:
        print("ERROR", e)
""")


def test_plugins_load_and_explain_without_cryptography():
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(COLLECTIONS)], capture_output=True, text=True, check=True).stdout
    consumers, error, hash_error = out.splitlines()
    assert "kube-apiserver" in consumers
    assert error.startswith("ERROR cert_report: the Python package cryptography is needed on the controller")
    assert hash_error.startswith("ERROR kubeadm_ca_cert_hash: the Python package cryptography is needed on the controller")

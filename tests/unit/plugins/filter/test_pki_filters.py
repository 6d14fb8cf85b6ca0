import datetime

from ansible_collections.offline_pot.tke.plugins.filter.cert_report import report_rows, table_lines
from ansible_collections.offline_pot.tke.plugins.filter.pki_consumers import pki_consumers
from ansible_collections.offline_pot.tke.plugins.filter.pki_members import pki_members
from ansible_collections.offline_pot.tke.plugins.plugin_utils import k8s_pki as p

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


def pem(days, cn="x", sans=()):
    key = p.new_key("ecdsa")
    ca = p.issue(p.CertSpec("ca", "ca"), key, NOW)
    dns, ips = p.split_sans(sans)
    return p.cert_to_pem(p.issue(p.CertSpec("x", cn, "ca", server=True, dns=dns, ips=ips, days=days), key, NOW, ca,
                                 key)).decode()


def test_report_rows_status_and_order():
    found = {"h2": [{"path": "/b.crt", "pem": pem(365, "b", ["b", "10.0.0.2"])}, {"path": "/a.crt", "pem": pem(10)}],
             "h1": [{"path": "/x.crt", "pem": "junk"}, {"path": "/old.crt", "pem": pem(1)}]}
    rows = report_rows(found, 30, now=NOW + datetime.timedelta(days=5))
    assert [(r["host"], r["file"], r["status"], r["days_left"]) for r in rows] == [
        ("h1", "/old.crt", "expired", -4), ("h1", "/x.crt", "unreadable", None),
        ("h2", "/a.crt", "warn", 5), ("h2", "/b.crt", "ok", 360)]
    assert rows[3]["sans"] == ["b", "10.0.0.2"] and rows[3]["subject"] == "commonName=b"
    lines = table_lines(rows)
    assert lines[0].split() == ["HOST", "FILE", "SUBJECT", "NOT", "AFTER", "DAYS", "STATUS", "SANS"]
    assert lines[3].split()[-2:] == ["5", "WARN"]


def test_pki_members_prefers_node_ip_then_ansible_host():
    hv = {"a": {"tke_node_ip": "10.0.0.1", "ansible_host": "192.168.0.1"}, "b": {"ansible_host": "10.0.0.2"}, "c": {}}
    assert pki_members(["a", "b", "c", "a"], hv) == [{"name": "a", "ip": "10.0.0.1"}, {"name": "b", "ip": "10.0.0.2"},
                                                     {"name": "c", "ip": "c"}]


def test_pki_consumers():
    assert pki_consumers(["/etc/tke/pki/registry.key", "/etc/kubernetes/kubelet.conf"]) == ["kubelet", "registry"]
    assert pki_consumers(None) == []


def test_the_raw_read_of_certificates_finds_what_pki_cert_info_finds_and_no_key(tmp_path):
    """tke_host_cert_script (roles/tke/vars/main.yml, the run report's read) run by sh on a tree of
    certificate files, a key, a key and certificate in one file and a kubeconfig: read back by the
    filter, the same {path, pem} as the module's own reading, and no line of a key in its output."""
    import base64
    import subprocess
    from pathlib import Path

    import yaml

    from ansible_collections.offline_pot.tke.plugins.filter.cert_report import read_certificates
    from ansible_collections.offline_pot.tke.plugins.modules import pki_cert_info

    key = p.key_to_pem(p.new_key("ecdsa")).decode()
    etc = tmp_path / "etc" / "kubernetes"
    (etc / "pki" / "etcd").mkdir(parents=True)
    (etc / "pki" / "ca.crt").write_text(pem(365, "ca") + pem(30, "second"))
    (etc / "pki" / "ca.key").write_text(key)
    (etc / "pki" / "etcd" / "both.pem").write_text(key + pem(365, "both"))
    (etc / "admin.conf").write_text(f"users:\n- name: admin\n  user:\n    client-certificate-data: "
                                    f"{base64.b64encode(pem(365, 'admin').encode()).decode()}\n"
                                    f"    client-key-data: {base64.b64encode(key.encode()).decode()}\n")
    (etc / "kubelet.conf").write_text("users:\n- name: x\n  user:\n    client-certificate: /var/lib/kubelet/pki/c.pem\n")
    tke_vars = Path(pki_cert_info.__file__).parents[2] / "roles" / "tke" / "vars" / "main.yml"
    script = yaml.safe_load(tke_vars.read_text())["tke_host_cert_script"]
    script = script.replace("/etc/kubernetes", str(etc)).replace("/etc/tke/pki", str(tmp_path / "none"))
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True).stdout
    assert "PRIVATE KEY" not in out and "client-key-data" not in out
    assert base64.b64encode(key.encode()).decode()[:40] not in out
    found = read_certificates(out)
    module = [{"path": f, "pem": pki_cert_info.read_one(f)} for f in sorted(pki_cert_info.candidates([str(etc)]))]
    assert found == [m for m in module if m["pem"]]
    assert [f["path"].rsplit("/", 1)[1] for f in found] == ["admin.conf", "ca.crt", "both.pem"]

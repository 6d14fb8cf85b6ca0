"""precheck on three real hosts: passes on good hosts, fails naming host and check on a bad one,
changes nothing, and writes the controller-side JSON report."""
import json
import re

import pytest

from harness.playbook import converge_twice, run_playbook, TOP
from harness.testhosts import cgroup_v1

PLAY = TOP / "playbooks" / "install.yml"


@pytest.fixture()
def inventory(testhosts, tmp_path):
    return testhosts.write_inventory(
        tmp_path / "hosts.yml",
        groups={"masters": ["h1"], "workers": ["h2", "h3"]},
        group_vars={"precheck_disk": [{"path": "/var/lib", "min_free_gb": 1}],
                    "precheck_disk_etcd": [{"path": "/var/lib/etcd", "min_free_gb": 1}],
                    "precheck_ports": [6443, 10250]})


def test_precheck_passes_on_good_hosts_and_changes_nothing(testhosts, inventory):
    first, second = converge_twice(PLAY, inventory, "--tags", "precheck")
    assert set(second.stats) == {"h1", "h2", "h3"}
    # a precheck changes nothing on a host but the install's own record that the phase is done
    # there (/var/lib/offline-pot/phases): the first run's other change is the controller's
    # tke.json (validate phase, reported under the first host)
    record = "TASK [offline_pot.tke.tke : Record the phase done on the host]"
    assert all("tke.json" in task or task.startswith(record) for task in first.changed_tasks()), first.explain()
    assert {t.split("[")[-1].rstrip("]") for t in first.changed_tasks() if t.startswith(record)} == {"h1", "h2", "h3"}
    assert "port 6443 free" in first.output and "PASS" in first.output
    report = json.loads((inventory.parent / ".tke" / "precheck.json").read_text())
    assert set(report) == {"h1", "h2", "h3"}
    assert all(c["status"] == "pass" for checks in report.values() for c in checks
               if c["check"] not in ("swap", "cgroup"))
    # cgroup v1 hosts (this machine's layout) run the default release only as the inventory allows:
    # a warning naming the setting; cgroup v2 hosts pass
    for checks in report.values():
        (cgroup,) = [c for c in checks if c["check"] == "cgroup"]
        assert cgroup["status"] == ("warn" if cgroup_v1() else "pass"), cgroup
    # the full set: controller-side time skew and hostname uniqueness, reachability of the other
    # nodes, and the etcd disk measurement on the etcd member (h1: stacked etcd on the master)
    h1 = {c["check"] for c in report["h1"]}
    assert {"time skew", "hostname unique", "hostname resolvable", "reach h2", "reach h3", "selinux",
            "firewall", "etcd disk fsync p99", "port 2379 free", "port 10259 free"} <= h1, h1
    assert "etcd disk fsync p99" not in {c["check"] for c in report["h2"]}
    # the interface each node's address is on, read on the host, is TKE's networkDevice in tke.json
    # (the validate phase before contacts no host: it wrote none)
    iface = {h: testhosts.ssh(h, f"ip -o addr show to {testhosts.ip(h)}").stdout.split()[1] for h in testhosts.names}
    for h in testhosts.names:
        node = next(c for c in report[h] if c["check"] == "node address")
        assert (node["status"], node["value"]) == ("pass", f"{testhosts.ip(h)} on {iface[h]}"), node
    state = inventory.parent / ".tke"
    assert json.loads((state / "interfaces.json").read_text()) == iface
    assert json.loads((state / "tke.json").read_text())["cluster"]["spec"]["networkDevice"] == iface["h1"]


def test_precheck_fails_naming_every_bad_host_and_check(testhosts, tmp_path):
    # h2: a real listener takes 6443; h3: an impossible amount of free disk is asked for; h4: a real
    # Debian 13 host (trixie's own rootfs, its Python 3.13 running precheck's module) on a site that
    # supports Debian 12 alone (precheck_supported_os: the default takes 12 and 13)
    testhosts.ssh("h2", "systemd-run --unit=take6443 python3 -m http.server 6443 >/dev/null && "
                        "for i in $(seq 100); do python3 -c 'import socket; socket.create_connection("
                        "(\"127.0.0.1\", 6443), 0.2)' 2>/dev/null && exit 0; sleep 0.1; done; exit 1")
    try:
        with testhosts.extra("h4", "trixie"):
            assert 'VERSION_CODENAME=trixie' in testhosts.ssh("h4", "cat /etc/os-release").stdout
            bad = testhosts.write_inventory(
                tmp_path / "bad.yml", groups={"masters": ["h1"], "workers": ["h2", "h3", "h4"]},
                group_vars={"precheck_disk": [{"path": "/var/lib", "min_free_gb": 1}], "precheck_ports": [6443],
                            "precheck_disk_etcd": [],
                            "precheck_supported_os": [{"id": "debian", "versions": ["12"]}]},
                host_vars={"h3": {"precheck_disk": [{"path": "/var/lib", "min_free_gb": 999999}]}})
            run = run_playbook(PLAY, bad, "--tags", "precheck")
            assert run.rc != 0, run.explain()
            assert "h2: port 6443 free: port 6443 is already in use by python3" in run.output, run.explain()
            assert "h3: disk free /var/lib:" in run.output, run.explain()
            assert "is below the minimum 999999 GiB" in run.output, run.explain()
            failure = run.output.split("fail listing every failing check", 1)[1]
            assert "h1: " not in failure, run.explain()
            # nothing changed on any host: the only change is tke.json on the controller
            changed = re.findall(r"^changed: \[(.*?)\]", run.output, re.M)
            assert changed == ["h1"], run.explain()
            assert testhosts.ssh("h4", "ls /var/lib/offline-pot", check=False).returncode != 0
            report = json.loads((tmp_path / ".tke" / "precheck.json").read_text())
            assert [c["check"] for c in report["h2"] if c["status"] == "fail"] == ["port 6443 free"]
            assert [c["check"] for c in report["h3"] if c["status"] == "fail"] == ["disk free /var/lib"]
            # a release the pack has nothing for is refused by name, with what is supported, and
            # nothing else fails on it
            assert "h4: os: debian 13 is not a supported OS (supported: debian 12)" in " ".join(run.output.split()), \
                run.explain()
            assert [c["check"] for c in report["h4"] if c["status"] == "fail"] == ["os"], report["h4"]
    finally:
        testhosts.ssh("h2", "systemctl stop take6443", check=False)


def test_a_node_address_no_interface_holds_is_refused(testhosts, tmp_path):
    inv = testhosts.write_inventory(
        tmp_path / "hosts.yml", groups={"masters": ["h1"], "workers": ["h2", "h3"]},
        group_vars={"precheck_disk": [{"path": "/var/lib", "min_free_gb": 1}], "precheck_disk_etcd": [],
                    "precheck_ports": [10250]},
        host_vars={"h3": {"tke_node_ip": "10.9.9.9"}})
    run = run_playbook(PLAY, inv, "--tags", "precheck", "--limit", "h3")
    assert run.rc != 0, run.explain()
    assert "h3: node address: 10.9.9.9 (tke_node_ip, else ansible_host) is no address of this host" in \
        " ".join(run.output.split()), run.explain()

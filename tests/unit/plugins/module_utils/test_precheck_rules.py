import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils import precheck_rules as r

LIMITS = {"min_cpu": 2, "min_memory_mb": 3800, "disk": [{"path": "/var/lib", "min_free_gb": 30}],
          "supported_os": [{"id": "debian", "versions": ["12"]}], "min_kernel": "4.19",
          "arch": ["x86_64"], "commands": ["python3", "tar"], "ports": [6443], "swap": "fail"}
GOOD = {"cpu_count": 4, "memory_mb": 8000, "swap_mb": 0, "os_id": "debian", "os_version": "12",
        "kernel": "6.1.0-18-amd64", "arch": "x86_64", "disk_free_gb": {"/var/lib": 50.0},
        "commands_found": ["python3", "tar"], "listening_ports": {"22": "sshd[1]"}}


def by_check(results):
    return {x["check"]: x for x in results}


def test_good_host_passes_everything():
    results = r.evaluate(GOOD, LIMITS)
    assert [x for x in results if x["status"] != "pass"] == []
    assert list(by_check(results)) == ["cpu", "memory", "disk free /var/lib", "os", "kernel", "arch",
                                       "commands", "port 6443 free", "swap"]


@pytest.mark.parametrize("change,check,message", [
    ({"cpu_count": 1}, "cpu", "1 is below the minimum 2"),
    ({"memory_mb": 3799}, "memory", "3799 MiB is below the minimum 3800 MiB"),
    ({"disk_free_gb": {"/var/lib": 29.9}}, "disk free /var/lib", "29.9 GiB is below the minimum 30 GiB"),
    ({"disk_free_gb": {}}, "disk free /var/lib", "could not be read"),
    ({"os_version": "11"}, "os", "debian 11 is not a supported OS (supported: debian 12)"),
    ({"kernel": "4.18.0-553.el8"}, "kernel", "kernel 4.18.0-553.el8 is older than 4.19"),
    ({"arch": "i686"}, "arch", "architecture i686 is not supported (supported: x86_64)"),
    ({"commands_found": ["python3"]}, "commands", "required commands not found: tar"),
    ({"listening_ports": {"6443": "nc[42]"}}, "port 6443 free", "port 6443 is already in use by nc[42]"),
    ({"swap_mb": 1024}, "swap", "swap is on (1024 MiB); kubelet needs it off"),
])
def test_each_rule_fails_with_its_message(change, check, message):
    results = r.evaluate({**GOOD, **change}, LIMITS)
    failed = r.failures(results)
    assert [(f["check"], f["message"]) for f in failed] == [(check, message)]


def test_boundaries_are_inclusive():
    facts = {**GOOD, "cpu_count": 2, "memory_mb": 3800, "disk_free_gb": {"/var/lib": 30.0}, "kernel": "4.19"}
    assert r.failures(r.evaluate(facts, LIMITS)) == []


def test_swap_warn_and_ignore():
    assert by_check(r.evaluate({**GOOD, "swap_mb": 5}, {**LIMITS, "swap": "warn"}))["swap"]["status"] == "warn"
    assert by_check(r.evaluate({**GOOD, "swap_mb": 5}, {**LIMITS, "swap": "ignore"}))["swap"]["status"] == "pass"


@pytest.mark.parametrize("text,expected", [("6.1.0-18-amd64", (6, 1, 0, 18)), ("4.19", (4, 19)),
                                           ("3.10.0-1160.el7.x86_64", (3, 10, 0, 1160)), ("12", (12,)),
                                           ("abc", ())])
def test_version_tuple(text, expected):
    assert r.version_tuple(text) == expected


def test_table_is_aligned_and_truncates_long_cells():
    results = r.evaluate({**GOOD, "listening_ports": {"6443": "x" * 80}}, LIMITS)
    lines = r.format_table(results)
    assert lines[0].split() == ["CHECK", "VALUE", "LIMIT", "STATUS"]
    assert len(lines) == len(results) + 1
    assert any(line.rstrip().endswith("FAIL") and "~" in line for line in lines)
    status_col = lines[0].index("STATUS")
    assert all(line[status_col:].split()[0] in {"STATUS", "PASS", "WARN", "FAIL"} for line in lines)


def test_more_checks_only_when_gathered_and_with_messages():
    more = {**GOOD, "hostname": "n1", "hostname_addresses": [], "selinux": "enforcing", "firewall": "ufw",
            "reachability": {"h2:22": "closed", "h2:6443": "blocked", "h3:22": "open"},
            "fsync": {"p99_ms": 12.5, "max_ms": 20.0, "dir": "/var/lib"}}
    res = by_check(r.evaluate(more, {**LIMITS, "max_fsync_ms": 10}))
    assert res["hostname resolvable"]["status"] == "warn"
    assert res["selinux"]["status"] == "warn" and res["firewall"]["status"] == "warn"
    assert res["reach h2"]["message"] == "cannot reach h2 on port(s) 6443 (dropped or no route)"
    assert res["reach h3"]["status"] == "pass"
    assert res["etcd disk fsync p99"]["message"].startswith("fdatasync p99 12.5 ms is above 10 ms")
    assert by_check(r.evaluate({**more, "fsync": {"p99_ms": 10, "max_ms": 10, "dir": "/"}}, LIMITS))[
        "etcd disk fsync p99"]["status"] == "pass"


def test_time_skew_allows_for_the_measurement_window():
    assert r.check_time_skew(1.2, 1.3, 1)["status"] == "pass"
    bad = r.check_time_skew(-5.0, 0.5, 1)
    assert bad["status"] == "fail" and "differs from the controller by 5.00 s" in bad["message"]


def test_duplicate_hostnames():
    res = r.duplicate_hostnames({"h1": "node", "h2": "NODE", "h3": "other"})
    assert res["h1"]["message"] == "hostname node is also the hostname of h2"
    assert res["h3"]["status"] == "pass"


def test_a_port_held_by_the_service_we_install_there_passes():
    limits = {**LIMITS, "ports": [443, 6443], "port_owners": {"443": ["registry"], 6443: ["kube-apiserver"]}}
    facts = {**GOOD, "listening_ports": {"443": "registry[12]", "6443": "nginx[7]"}}
    results = {x["check"]: x for x in r.evaluate(facts, limits)}
    assert results["port 443 free"]["status"] == "pass" and "(ours)" in results["port 443 free"]["value"]
    assert results["port 6443 free"]["status"] == "fail"
    assert results["port 6443 free"]["message"] == "port 6443 is already in use by nginx[7]"


def test_the_node_address_must_be_one_of_the_hosts():
    on = by_check(r.evaluate({**GOOD, "node_address": "10.0.0.11", "node_interface": "ens3"}, LIMITS))
    assert on["node address"]["status"] == "pass" and on["node address"]["value"] == "10.0.0.11 on ens3"
    off = by_check(r.evaluate({**GOOD, "node_address": "10.9.9.9", "node_interface": None}, LIMITS))
    assert off["node address"]["status"] == "fail"
    assert off["node address"]["message"].startswith("10.9.9.9 (tke_node_ip, else ansible_host) is no address of this host")
    assert "node address" not in by_check(r.evaluate(GOOD, LIMITS))


def test_cgroup_v1_fails_from_1_35_unless_the_site_allows_it():
    def check(cgroup, version, allowed=False):
        return by_check(r.evaluate({**GOOD, "cgroup": cgroup},
                                   {**LIMITS, "k8s_version": version, "allow_cgroup_v1": allowed}))["cgroup"]
    refused = check(1, "1.35.7")
    assert (refused["status"], refused["value"], refused["limit"]) == ("fail", "v1", "v2 for Kubernetes 1.35.7")
    assert refused["message"].startswith("cgroup v1 (/sys/fs/cgroup is not a cgroup2 mount); the kubelet of "
                                         "Kubernetes 1.35.7 does not start on cgroup v1")
    assert "set tke_allow_cgroup_v1: true" in refused["message"]
    allowed = check(1, "1.35.7", allowed=True)
    assert allowed["status"] == "warn" and allowed["message"].startswith("cgroup v1, allowed by tke_allow_cgroup_v1")
    assert check(2, "1.35.7")["status"] == "pass"
    assert (check(1, "1.34.10")["status"], check(1, "1.34.10")["limit"]) == ("pass", "v1 or v2")
    # 1.36 as 1.35 (the kubelet's failCgroupV1 default and SystemVerification's rule unchanged)
    assert (check(1, "1.36.3")["status"], check(1, "1.36.3", allowed=True)["status"], check(2, "1.36.3")["status"]) == \
        ("fail", "warn", "pass")
    # no version given: no check
    assert "cgroup" not in by_check(r.evaluate({**GOOD, "cgroup": 1}, LIMITS))


def test_the_cgroup_version_is_read_from_the_mount_at_sys_fs_cgroup(tmp_path):
    from ansible_collections.offline_pot.tke.plugins.module_utils import host_probe
    v2 = tmp_path / "v2"
    v2.write_text("proc /proc proc rw 0 0\ncgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n")
    hybrid = tmp_path / "hybrid"
    hybrid.write_text("tmpfs /sys/fs/cgroup tmpfs ro 0 0\ncgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n"
                      "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,cpu,cpuacct 0 0\n")
    assert host_probe.cgroup_version(str(v2)) == 2
    assert host_probe.cgroup_version(str(hybrid)) == 1
    assert host_probe.cgroup_version(str(tmp_path / "none")) == 1


def test_failure_lines_only_for_failures_in_host_order():
    data = {"h2": [{"check": "cpu", "status": "fail", "message": "1 is below the minimum 2"},
                   {"check": "swap", "status": "pass", "message": ""}],
            "h1": [{"check": "port 6443 free", "status": "fail", "message": "in use"},
                   {"check": "os", "status": "warn", "message": "old"}],
            "h3": None}
    assert r.failure_lines(data) == ["h2: cpu: 1 is below the minimum 2", "h1: port 6443 free: in use"]


def test_report_by_host_adds_the_hostname_check_last():
    cpu = {"check": "cpu", "value": 4, "limit": ">= 2", "status": "pass", "message": ""}
    report = r.report_by_host({"h1": [cpu], "h2": [cpu], "h3": None}, {"h1": "node", "h2": "NODE", "h3": "other"})
    assert list(report) == ["h1", "h2", "h3"]
    assert [c["check"] for c in report["h1"]] == ["cpu", "hostname unique"]
    assert report["h3"] == [r.duplicate_hostnames({"h3": "other"})["h3"]]
    assert r.failure_lines(report) == ["h1: hostname unique: hostname node is also the hostname of h2",
                                       "h2: hostname unique: hostname NODE is also the hostname of h1"]

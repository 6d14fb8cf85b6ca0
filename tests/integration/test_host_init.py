"""host_init on three real hosts, one reached with a password over paramiko (h2) and one as a
sudo user (h3): --check --diff on a fresh host says the phase would run there and changes nothing
(what it checks is not there yet); a converge applies everything, a second converge changes
nothing; the results are verified on the hosts, and what a container host cannot do is skipped with
a visible warning; --check --diff of a changed setting on a converged host shows the file's diff
and changes nothing."""
import re

import pytest

from harness.playbook import converge_twice, run_playbook, TOP

PLAY = TOP / "install.yml"
SYSCTL = "/etc/sysctl.d/90-offline-pot-tke.conf"


@pytest.fixture()
def inventory(testhosts, tmp_path):
    return testhosts.write_inventory(
        tmp_path / "hosts.yml", groups={"masters": ["h1"], "workers": ["h2", "h3"]},
        auth={"h2": "password", "h3": "sudo"},
        group_vars={"tke_node_networks": [f"{testhosts.info['TH_NET']}.0/24"]})


def test_check_mode_on_a_fresh_host_says_the_phase_would_run_and_changes_nothing(testhosts, inventory):
    if testhosts.ssh("h3", f"test -e {SYSCTL}", check=False).returncode == 0:
        testhosts.reset("h3")
    run = run_playbook(PLAY, inventory, "--tags", "host_init", "--limit", "h3", "--check", "--diff")
    assert run.rc == 0, run.explain()
    flat = " ".join(run.output.split())
    assert "host_init: running on h3; check mode, not checked on h3 (not done there yet)" in flat, run.explain()
    assert re.search(r"changed: \[h3\] => msg: '?would run host_init here; not checked", flat), run.explain()
    assert not any(n.startswith("TASK [offline_pot.tke.host_init : ") for n in run.task_names()), run.explain()
    on_host = testhosts.ssh("h3", f"test -e {SYSCTL} || echo absent; grep -c offline_pot /etc/hosts || true").stdout
    assert on_host.split() == ["absent", "0"], on_host


def test_host_init_converges_and_second_run_changes_nothing(testhosts, inventory):
    first, second = converge_twice(PLAY, inventory, "--tags", "host_init")
    # what the nspawn hosts cannot do is skipped with a visible warning, not hidden
    for out in (first.output, second.output):
        assert "[WARNING]: sysctl vm.swappiness: /proc/sys is read-only here (a container)" in out
        assert "[WARNING]: module ip_vs: this kernel has no loadable module support" in out
        assert "no CAP_SYS_TIME here (a container)" in out
    ip = {h: testhosts.ip(h) for h in ("h1", "h2", "h3")}
    for h in ("h1", "h2", "h3"):
        out = testhosts.ssh(h, f"cat /proc/sys/net/ipv4/ip_forward /proc/sys/net/core/somaxconn; "
                               f"grep -c = {SYSCTL}; cat /etc/modules-load.d/offline-pot-tke.conf; "
                               "getent hosts registry.tke.com api.tke.com h1 h2 h3; "
                               "grep -E '^(server|local|allow)' /etc/chrony/chrony.conf; "
                               "stat -c %a /var/lib/kubelet").stdout
        lines = [" ".join(line.split()) for line in out.splitlines()]
        assert lines[:3] == ["1", "2048", "9"], out
        assert "br_netfilter" in lines and "ip_vs" in lines, out
        assert f"{ip['h1']} registry.tke.com default.registry.tke.com" in lines, out
        assert f"{ip['h1']} api.tke.com" in lines and f"{ip['h3']} h3" in lines, out
        if h == "h1":   # no NTP server given: the first master serves its clock
            assert "local stratum 10" in out and f"allow {testhosts.info['TH_NET']}.0/24" in out, out
        else:
            assert f"server {ip['h1']} iburst" in out, out
        assert lines[-1] == "755", out
    assert testhosts.ssh("h1", "stat -c %a /var/lib/etcd").stdout.strip() == "700"
    assert "Status: install ok installed" in testhosts.ssh("h2", "dpkg -s chrony").stdout
    # handlers restart only what changed: a changed NTP server restarts chrony (where it can
    # run) and nothing else; here chrony cannot run, so the restart is skipped, not failed
    third = run_playbook(PLAY, inventory, "--tags", "host_init", "--limit", "h2",
                         "-e", '{"host_init_ntp_servers": ["172.30.3.1"]}')
    assert third.rc == 0, third.explain()
    assert set(third.changed_hosts()) == {"h2"}, third.explain()
    # (and the host's record of the phase, done with other inputs)
    assert [t.rsplit(": changed", 1)[0] for t in third.changed_tasks()] == [
        "TASK [offline_pot.tke.host_init : Configure chrony (NTP servers, or the first master as the source)]",
        "TASK [offline_pot.tke.tke : Record the phase done on the host]"], \
        third.explain()
    assert "RUNNING HANDLER [offline_pot.tke.host_init : Restart chrony where it runs]" in third.output, third.explain()
    # on a host that has done the phase, check mode checks it: the file's diff, nothing changed
    check = run_playbook(PLAY, inventory, "--tags", "host_init", "--limit", "h2", "--check", "--diff",
                         "-e", '{"host_init_ntp_servers": ["172.30.3.2"]}')
    assert check.rc == 0 and set(check.changed_hosts()) == {"h2"}, check.explain()
    assert "--- before: /etc/chrony/chrony.conf" in check.output and "+server 172.30.3.2 iburst" in check.output, \
        check.explain()
    assert "server 172.30.3.1 iburst" in testhosts.ssh("h2", "cat /etc/chrony/chrony.conf").stdout


def test_firewall_open_lets_cluster_ports_through_ufw_and_nothing_else(testhosts, inventory, tmp_path):
    h3 = testhosts.ip("h3")
    testhosts.ssh("h3", "apt-get update -qq && apt-get install -y -qq ufw >/dev/null && ufw allow 22/tcp >/dev/null && "
                        "ufw --force enable >/dev/null && "
                        "systemd-run --unit=l6443 python3 -m http.server 6443 >/dev/null && "
                        "systemd-run --unit=l7777 python3 -m http.server 7777 >/dev/null")
    try:
        inv = testhosts.write_inventory(
            tmp_path / "fw.yml", groups={"masters": ["h1"], "workers": ["h2", "h3"]},
            auth={"h2": "password", "h3": "sudo"},
            # time sync is proven above; here only the firewall matters
            group_vars={"tke_node_networks": ["192.0.2.0/24"], "host_init_firewall": "open",
                        "host_init_time_sync": False,
                        "tke_pod_cidr": "10.244.0.0/16"})
        converge_twice(PLAY, inv, "--tags", "host_init", "--limit", "h3")
        rules = testhosts.ssh("h3", "ufw status").stdout
        assert "Status: active" in rules and "6443/tcp" in rules and "10.244.0.0/16" in rules, rules
        # both listeners serve on h3 itself, so a refusal from outside is the firewall's doing
        local = ("python3 -c 'import urllib.request as u\nfor p in (6443, 7777):\n"
                 " print(p, u.urlopen(f\"http://127.0.0.1:{p}/\", timeout=5).status)'")
        assert testhosts.ssh("h3", local).stdout.split() == ["6443", "200", "7777", "200"]
        # real traffic from h1 (not in an allowed source network here): 6443 passes, 7777 is
        # dropped (ufw's default deny drops: the connection times out, it is not refused)
        probe = ("python3 -c 'import socket\nfor p in (6443, 7777):\n try:\n  socket.create_connection(("
                 f"\"{h3}\", p), 3).close(); print(p, \"open\")\n except OSError as e: print(p, type(e).__name__)'")
        assert testhosts.ssh("h1", probe).stdout.split() == ["6443", "open", "7777", "TimeoutError"]
    finally:
        testhosts.ssh("h3", "systemctl stop l6443 l7777; ufw --force disable; ufw --force reset", check=False)

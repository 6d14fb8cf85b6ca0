"""The ha phase on three real hosts, one scenario per mode. An HTTPS responder on 6443 stands
in for each master's API server (tests/integration/fixtures/https_responder.py)."""
import time

import pytest

from harness.playbook import NO_RESUME, converge_twice, run_playbook, TOP  # noqa: F401
import ha_support as ha

PLAY = TOP / "playbooks" / "install.yml"
MASTERS = ["h1", "h2", "h3"]


def vip(testhosts, last):
    return f"{testhosts.info['TH_NET']}.{last}"


@pytest.fixture(scope="module")
def responders(testhosts):
    ha.install_responder(testhosts, MASTERS)
    yield
    for n in MASTERS:
        ha.stop_responder(testhosts, n)


def remove_keepalived(testhosts):
    for n in MASTERS:
        testhosts.ssh(n, "systemctl stop keepalived; systemctl disable -q keepalived; "
                         "rm -f /etc/keepalived/keepalived.conf; true", check=False)


def test_keepalived_vip_staged_start_failover_no_flapping(testhosts, responders, tmp_path):
    the_vip = vip(testhosts, 100)
    remove_keepalived(testhosts)
    for n in MASTERS:
        ha.stop_responder(testhosts, n)
    inv = testhosts.write_inventory(tmp_path / "hosts.yml", groups={"masters": MASTERS},
                                    group_vars={"tke_ha_mode": "keepalived", "tke_vip": the_vip})
    ha.start_vip_watch(testhosts, MASTERS, the_vip)
    try:
        # install while only the first master serves: keepalived starts there alone
        ha.start_responder(testhosts, "h1")
        first = run_playbook(PLAY, inv, "--tags", "ha", *NO_RESUME)
        assert first.rc == 0, first.explain()
        assert ha.holders(testhosts, MASTERS, the_vip) == ["h1"]
        for n in ("h2", "h3"):
            assert testhosts.ssh(n, "systemctl is-active keepalived", check=False).stdout.strip() == "inactive"
        assert "does not serve yet" in first.output
        # the other masters "join": their API servers serve; the phase runs again and adds them
        for n in ("h2", "h3"):
            ha.start_responder(testhosts, n)
        second = run_playbook(PLAY, inv, "--tags", "ha", *NO_RESUME)
        assert second.rc == 0, second.explain()
        assert set(second.changed_hosts()) == {"h2", "h3"}, second.explain()
        for n in MASTERS:
            testhosts.ssh(n, "systemctl is-active keepalived")
        time.sleep(3)  # a new member that would steal the VIP does so within 3 adverts
        assert ha.holders(testhosts, MASTERS, the_vip) == ["h1"]
        events = ha.vip_events(testhosts, MASTERS)
        assert [(n, s) for _t, n, s in events] == [("h1", 1)], f"the VIP moved during the install: {events}"

        # failover 1: the holder's API server stops
        t0 = float(testhosts.ssh("h1", "date +%s.%N && systemctl stop test-apiserver").stdout.split()[0])
        ha.wait_until(lambda: ha.holders(testhosts, MASTERS, the_vip) not in ([], ["h1"]), 15, "VIP leaves h1")
        gained = ha.gains_after(testhosts, MASTERS, t0)
        assert len(gained) == 1, gained
        new_holder, health_failover = gained[0][1], gained[0][0] - t0
        # it comes back: no flapping, the VIP stays where it is
        ha.start_responder(testhosts, "h1")
        time.sleep(4)
        assert ha.holders(testhosts, MASTERS, the_vip) == [new_holder]

        # failover 2: keepalived on the holder stops
        t1 = float(testhosts.ssh(new_holder, "date +%s.%N && systemctl stop keepalived").stdout.split()[0])
        ha.wait_until(lambda: ha.holders(testhosts, MASTERS, the_vip) not in ([], [new_holder]), 15,
                      f"VIP leaves {new_holder}")
        gained = ha.gains_after(testhosts, MASTERS, t1)
        assert len(gained) == 1, gained
        third_holder, stop_failover = gained[0][1], gained[0][0] - t1
        testhosts.ssh(new_holder, "systemctl start keepalived")
        time.sleep(4)
        assert ha.holders(testhosts, MASTERS, the_vip) == [third_holder]
        # the whole history: three gains, each loss followed by exactly one gain elsewhere
        assert len(ha.gains(ha.vip_events(testhosts, MASTERS))) == 3, ha.vip_events(testhosts, MASTERS)
        print(f"\nVIP failover: API server down -> moved in {health_failover:.2f} s; "
              f"keepalived stopped -> moved in {stop_failover:.2f} s")
        assert health_failover < 6 and stop_failover < 6
        # a re-run (the third) changes nothing, after the failovers too, and does not move the VIP
        again = run_playbook(PLAY, inv, "--tags", "ha", *NO_RESUME)
        assert again.rc == 0 and again.changed_hosts() == {}, again.explain()
        assert ha.holders(testhosts, MASTERS, the_vip) == [third_holder]
    finally:
        ha.stop_vip_watch(testhosts, MASTERS)
        remove_keepalived(testhosts)


def test_thirdparty_vip_redirect_once_per_master_and_persistent(testhosts, responders, tmp_path):
    # h1, h2 are masters; h3 plays the user's load balancer: it holds the VIP and answers on vport
    lb_vip, vport = vip(testhosts, 101), 8443
    masters = ["h1", "h2"]
    for n in masters:
        ha.start_responder(testhosts, n)
    testhosts.ssh("h3", f"ip addr replace {lb_vip}/32 dev host0")
    ha.start_responder(testhosts, "h3", port=vport, unit="test-lb", label="load-balancer")
    inv = testhosts.write_inventory(tmp_path / "hosts.yml", groups={"masters": masters, "etcd": ["h1"]},
                                    group_vars={"tke_ha_mode": "thirdparty", "tke_vip": lb_vip, "tke_vport": vport})
    url = f"https://{lb_vip}:{vport}/healthz"
    try:
        # before: a master reaches the load balancer itself
        assert testhosts.ssh("h1", ha.get(url)).stdout == "load-balancer"
        converge_twice(PLAY, inv, "--tags", "ha")
        for n in masters:
            rules = testhosts.ssh(n, "iptables -w -t nat -S OUTPUT").stdout
            assert rules.count(f"-d {lb_vip}/32") == 1, rules
            assert f"--dport {vport}" in rules and "REDIRECT --to-ports 6443" in rules, rules
            # VIP:vport from a master reaches that master's own API server
            assert testhosts.ssh(n, ha.get(url)).stdout == n
            assert testhosts.ssh(n, "systemctl is-enabled tke-vip-redirect").stdout.strip() == "enabled"
        # a non-master still goes through the load balancer
        assert testhosts.ssh("h3", ha.get(url)).stdout == "load-balancer"
        # persistence: the rule comes back at boot, once
        testhosts.ssh("h2", "systemctl reboot", check=False)
        time.sleep(3)
        ha.wait_until(lambda: testhosts.ssh("h2", "systemctl is-active tke-vip-redirect", check=False)
                      .stdout.strip() == "active", 90, "h2 back from reboot", step=1)
        rules = testhosts.ssh("h2", "iptables -w -t nat -S OUTPUT").stdout
        assert rules.count(f"-d {lb_vip}/32") == 1, rules
        ha.start_responder(testhosts, "h2")
        assert testhosts.ssh("h2", ha.get(url)).stdout == "h2"
        # a VIP that nothing answers is reported before any rule is touched
        bad = testhosts.write_inventory(tmp_path / "bad.yml", groups={"masters": masters, "etcd": ["h1"]},
                                        group_vars={"tke_ha_mode": "thirdparty", "tke_vip": vip(testhosts, 199),
                                                    "tke_vport": vport})
        run = run_playbook(PLAY, bad, "--tags", "ha", *NO_RESUME)
        assert run.rc != 0 and "nothing answers at the load balancer VIP" in run.output, run.explain()
        assert testhosts.ssh("h1", "iptables -w -t nat -S OUTPUT").stdout.count("tke-vip-redirect") == 1
    finally:
        testhosts.ssh("h3", f"systemctl stop test-lb; ip addr del {lb_vip}/32 dev host0; true", check=False)
        for n in masters:
            testhosts.ssh(n, "systemctl disable -q --now tke-vip-redirect; rm -f /etc/systemd/system/tke-vip-redirect.service; "
                             "iptables -w -t nat -S OUTPUT | grep tke-vip-redirect | sed 's/^-A/-D/' "
                             "| xargs -r -L1 iptables -w -t nat; true", check=False)


def test_local_lb_survives_a_master_down(testhosts, responders, tmp_path):
    masters = ["h1", "h2"]
    for n in masters:
        ha.start_responder(testhosts, n)
    ha.stop_responder(testhosts, "h3")
    inv = testhosts.write_inventory(tmp_path / "hosts.yml", groups={"masters": masters, "workers": ["h3"], "etcd": ["h1"]},
                                    group_vars={"tke_ha_mode": "local_lb"})
    try:
        converge_twice(PLAY, inv, "--tags", "ha")
        get = ha.get("https://127.0.0.1:6443/healthz")
        answers = {testhosts.ssh("h3", get).stdout for dummy in range(6)}
        assert answers == {"h1", "h2"}, answers  # both masters serve through the node's local LB
        ha.stop_responder(testhosts, "h1")
        # immediately (retried on the other server) and after the health check took h1 out
        for dummy in range(2):
            answers = [testhosts.ssh("h3", get, check=False) for dummy in range(6)]
            assert all(a.returncode == 0 and a.stdout == "h2" for a in answers), answers
            time.sleep(5)
        for n in masters:  # the local load balancer is for nodes only
            assert testhosts.ssh(n, "grep -q offline_pot.tke /etc/haproxy/haproxy.cfg", check=False).returncode != 0
    finally:
        testhosts.ssh("h3", "systemctl disable -q --now haproxy; true", check=False)


def test_keepalived_refuses_a_router_id_in_use(testhosts, tmp_path):
    # h3 is another VRRP router of the network using the id our VIP derives to (last octet + 1)
    the_vip = vip(testhosts, 150)
    ha.put(testhosts, "h3", "/root/vrrp_sender.py", ha.SENDER.read_bytes(), "0644")
    testhosts.ssh("h3", f"systemd-run -q --unit=test-vrrp python3 /root/vrrp_sender.py 151 {the_vip}")
    inv = testhosts.write_inventory(tmp_path / "hosts.yml", groups={"masters": ["h1", "h2"], "etcd": ["h1"]},
                                    group_vars={"tke_ha_mode": "keepalived", "tke_vip": the_vip})
    try:
        run = run_playbook(PLAY, inv, "--tags", "ha", *NO_RESUME)
        assert run.rc != 0, run.explain()
        assert f"virtual_router_id 151 is already used on host0 by {testhosts.ip('h3')}" in run.output, run.explain()
        for n in ("h1", "h2"):  # refused before anything was installed or configured
            assert testhosts.ssh(n, "test -e /etc/keepalived/keepalived.conf", check=False).returncode != 0
    finally:
        testhosts.ssh("h3", "systemctl stop test-vrrp; true", check=False)

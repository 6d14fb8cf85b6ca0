"""The etcd phase on three real hosts: a 3-member cluster with mutual TLS, idempotent, then backup,
wipe, restore. Certificates come from the pki phase (kubeadm's layout)."""
import shlex

import pytest

from harness.playbook import NO_RESUME, converge_twice, run_playbook, TOP

PLAY = TOP / "playbooks" / "install.yml"
BACKUP = TOP / "playbooks" / "etcd_backup.yml"
RESTORE = TOP / "playbooks" / "etcd_restore.yml"
REMOVE = TOP / "playbooks" / "remove_node.yml"
MEMBERS = ["h1", "h2", "h3"]
PKI = "/etc/kubernetes/pki/etcd"
CTL = (f"ETCDCTL_API=3 etcdctl --cacert={PKI}/ca.crt --cert={PKI}/healthcheck-client.crt "
       f"--key={PKI}/healthcheck-client.key --command-timeout=5s")


TLS = ("import socket, ssl, sys\n"
       "c = ssl.create_default_context(cafile='/etc/kubernetes/pki/etcd/ca.crt')\n"
       "c.check_hostname = False\n"
       "if len(sys.argv) > 2: c.load_cert_chain(sys.argv[2], sys.argv[3])\n"
       "try:\n"
       "    s = c.wrap_socket(socket.create_connection((sys.argv[1], 2379), 5))\n"
       "    s.sendall(b'GET /version HTTP/1.0\\r\\n\\r\\n')\n"
       "    print(s.recv(4096).decode())\n"
       "except ssl.SSLError as e:\n"
       "    print('refused:', e)\n")
PLAIN = ("import socket, sys\n"
         "s = socket.create_connection((sys.argv[1], 2379), 5)\n"
         "s.sendall(b'GET /version HTTP/1.0\\r\\n\\r\\n')\n"
         "print(s.recv(4096).decode(errors='replace'))\n")


def tls_get(testhosts, on, to, cert):
    args = f" {PKI}/healthcheck-client.crt {PKI}/healthcheck-client.key" if cert else ""
    return testhosts.ssh(on, f"python3 -c {shlex.quote(TLS)} {testhosts.ip(to)}{args}", check=False)


@pytest.fixture(scope="module")
def cluster(testhosts, tmp_path_factory):
    for n in MEMBERS:  # a fresh start whatever an earlier run left
        testhosts.ssh(n, "systemctl stop etcd 2>/dev/null; rm -rf /var/lib/etcd /var/lib/etcd.before-restore-* "
                         "/var/backups/etcd /etc/etcd; true", check=False)
    inv = testhosts.write_inventory(tmp_path_factory.mktemp("etcd") / "hosts.yml",
                                    groups={"masters": MEMBERS, "etcd": MEMBERS},
                                    group_vars={"tke_ha_mode": "local_lb"})
    # the members' certificates come from the collection's own PKI phase (kubeadm's layout)
    pki = run_playbook(PLAY, inv, "--tags", "pki")
    assert pki.rc == 0, pki.explain()
    yield inv
    for n in MEMBERS:
        testhosts.ssh(n, "systemctl stop --no-block etcd; true", check=False)


def endpoints(testhosts):
    return ",".join(f"https://{testhosts.ip(n)}:2379" for n in MEMBERS)


def test_etcd_cluster_forms_with_tls_and_is_idempotent(testhosts, cluster):
    converge_twice(PLAY, cluster, "--tags", "etcd")
    health = testhosts.ssh("h1", f"{CTL} --endpoints={endpoints(testhosts)} endpoint health")
    assert health.stderr.count("is healthy") + health.stdout.count("is healthy") == 3, health
    members = testhosts.ssh("h2", f"{CTL} --endpoints=https://127.0.0.1:2379 member list").stdout
    assert sorted(line.split(", ")[2] for line in members.splitlines()) == MEMBERS
    # a client without a certificate is refused (peers and clients need one signed by the etcd CA):
    # the same etcdctl call succeeds with the client certificate and fails without it (etcdctl
    # only reports the retries' deadline; the TLS alert itself is read below)
    get = f"--dial-timeout=3s --command-timeout=5s --endpoints=https://{testhosts.ip('h3')}:2379 get /x"
    testhosts.ssh("h1", f"{CTL} {get}")
    no_cert = testhosts.ssh("h1", f"ETCDCTL_API=3 etcdctl --cacert={PKI}/ca.crt {get}", check=False)
    assert no_cert.returncode != 0 and "context deadline exceeded" in no_cert.stderr, no_cert
    # the same over raw TLS: without a client certificate the server ends the handshake with a
    # "bad certificate" alert; with one it answers
    refused = tls_get(testhosts, "h1", "h2", cert=False).stdout
    assert refused.startswith("refused:") and "ALERT_BAD_CERTIFICATE" in refused, refused
    assert "etcdserver" in tls_get(testhosts, "h1", "h2", cert=True).stdout
    # plain HTTP is not served either: the port accepts the connection (etcd listens) and closes it
    # without a byte of answer
    plain = testhosts.ssh("h1", f"python3 -c {shlex.quote(PLAIN)} {testhosts.ip('h2')}", check=False)
    assert plain.returncode == 0 and plain.stdout == "\n", plain


def test_removing_a_member_down_to_an_even_membership_is_refused_naming_the_next_step(testhosts, cluster):
    """remove_node.yml on the 3-member cluster (issue 21, item 8): h3 out would leave 2 members, which
    the next install.yml refuses; refused before anything is touched, naming the counts and what the
    inventory needs, and -e etcd_even=true named as the way to carry it out."""
    run = run_playbook(REMOVE, cluster, "-e", "node=h3", "-e", "remove_node_confirm=true")
    out = " ".join(run.output.split())
    assert run.rc != 0, run.explain()
    assert ("not removed, nothing touched: h3: external etcd (group etcd) goes from 3 to 2 members (h1, h2): etcd "
            "needs an odd number") in out, run.explain()
    assert ("install.yml with h3 out of the inventory is refused until the group etcd has 3 members again: put "
            "another host in the group etcd in h3's place") in out, run.explain()
    assert "-e etcd_even=true removes h3 and leaves 2 members until then" in out, run.explain()
    assert run.total("changed") == 0, run.explain()
    members = testhosts.ssh("h1", f"{CTL} --endpoints=https://127.0.0.1:2379 member list").stdout
    assert sorted(line.split(", ")[2] for line in members.splitlines()) == MEMBERS


def test_etcd_backup_wipe_restore(testhosts, cluster):
    testhosts.ssh("h1", f"{CTL} --endpoints=https://127.0.0.1:2379 put /tke/proof restored-ok")
    # an older snapshot on the member and on the controller: with etcd_backup_keep=1 it goes
    old = "etcd-global-20000101T000000Z.db"
    testhosts.ssh("h1", f"mkdir -p /var/backups/etcd && echo old > /var/backups/etcd/{old}")
    backups = cluster.parent / ".tke" / "etcd-backups"
    backups.mkdir(parents=True, exist_ok=True)
    (backups / old).write_text("old")
    backup = run_playbook(BACKUP, cluster, extra_vars={"etcd_backup_keep": 1})
    assert backup.rc == 0, backup.explain()
    kept = sorted(backups.glob("etcd-global-*.db"))
    assert len(kept) == 1 and kept[0].name != old and kept[0].stat().st_size > 10000, kept
    on_host = testhosts.ssh("h1", "ls /var/backups/etcd/").stdout.split()
    assert on_host == [kept[0].name], on_host
    snapshot = kept[0].name
    # written after the snapshot: gone after the restore
    testhosts.ssh("h1", f"{CTL} --endpoints=https://127.0.0.1:2379 put /tke/after-backup 1")

    # without confirmation, the restore refuses and touches nothing
    refused = run_playbook(RESTORE, cluster, extra_vars={"etcd_restore_snapshot": snapshot})
    assert refused.rc != 0 and "etcd_restore_confirm=true" in refused.output, refused.explain()
    assert "Read which machine this is" not in refused.output, "a host was read:\n" + refused.explain()
    testhosts.ssh("h1", f"{CTL} --endpoints=https://127.0.0.1:2379 get /tke/proof")

    # disaster: every member's data is wiped
    for n in MEMBERS:
        testhosts.ssh(n, "systemctl stop etcd && rm -rf /var/lib/etcd")
    restore = run_playbook(RESTORE, cluster,
                           extra_vars={"etcd_restore_snapshot": snapshot, "etcd_restore_confirm": True})
    assert restore.rc == 0, restore.explain()
    for n in MEMBERS:
        got = testhosts.ssh(n, f"{CTL} --endpoints=https://127.0.0.1:2379 get /tke/proof --print-value-only")
        assert got.stdout.strip() == "restored-ok", (n, got)
    after = testhosts.ssh("h2", f"{CTL} --endpoints=https://127.0.0.1:2379 get /tke/after-backup --print-value-only")
    assert after.stdout.strip() == "", after
    health = testhosts.ssh("h3", f"{CTL} --endpoints={endpoints(testhosts)} endpoint health")
    assert (health.stdout + health.stderr).count("is healthy") == 3, health
    # the etcd phase afterwards keeps the restored members as they are
    again = run_playbook(PLAY, cluster, "--tags", "etcd", *NO_RESUME)
    assert again.rc == 0 and again.changed_hosts() == {}, again.explain()


def test_etcd_on_node_addresses_other_than_ansible_host(testhosts, tmp_path):
    """Each member's node address (tke_node_ip) is a second address of its interface, not the one
    Ansible connects to: certificates name it, etcd listens on it and the members dial each other
    at it (tke role's tke_node_address, the one rule), so TLS names match and the cluster forms."""
    net = testhosts.info["TH_NET"]
    node_ip = {n: f"{net}.{110 + i}" for i, n in enumerate(MEMBERS, 1)}
    for n in MEMBERS:
        testhosts.ssh(n, "systemctl stop etcd 2>/dev/null; rm -rf /var/lib/etcd /etc/etcd; "
                         f"ip addr replace {node_ip[n]}/24 dev host0", check=False)
    inv = testhosts.write_inventory(tmp_path / "hosts.yml", groups={"masters": MEMBERS, "etcd": MEMBERS},
                                    group_vars={"tke_ha_mode": "local_lb"},
                                    host_vars={n: {"tke_node_ip": node_ip[n]} for n in MEMBERS})
    try:
        pki = run_playbook(PLAY, inv, "--tags", "pki")
        assert pki.rc == 0, pki.explain()
        run = run_playbook(PLAY, inv, "--tags", "etcd")
        assert run.rc == 0, run.explain()
        eps = ",".join(f"https://{node_ip[n]}:2379" for n in MEMBERS)
        health = testhosts.ssh("h1", f"{CTL} --endpoints={eps} endpoint health")
        assert (health.stdout + health.stderr).count("is healthy") == 3, health
        members = testhosts.ssh("h2", f"{CTL} --endpoints=https://127.0.0.1:2379 member list").stdout
        peers = sorted(line.split(", ")[3] for line in members.splitlines())
        assert peers == sorted(f"https://{node_ip[n]}:2380" for n in MEMBERS), members
        # the connection address is not where etcd listens
        primary = testhosts.ssh("h1", f"python3 -c {shlex.quote(PLAIN)} {testhosts.ip('h2')}", check=False)
        assert "etcdserver" not in primary.stdout and primary.returncode != 0, primary
    finally:
        for n in MEMBERS:
            testhosts.ssh(n, f"systemctl stop --no-block etcd; ip addr del {node_ip[n]}/24 dev host0; true",
                          check=False)


def test_etcd_members_join_a_running_cluster(testhosts, tmp_path):
    """A 1-member cluster on h1 grows to h1, h2, h3 through the install (the etcd group grown in the
    inventory, the pki and etcd phases run): h2 then h3 join with etcdctl member add one at a time,
    the data is kept, h1's etcd is not restarted; --check before says what would be added and
    changes nothing; a re-run and a --check run after change nothing."""
    for n in MEMBERS:
        testhosts.ssh(n, "systemctl stop etcd 2>/dev/null; rm -rf /var/lib/etcd /etc/etcd; true", check=False)
    hosts = tmp_path / "hosts.yml"

    def inventory(etcd):
        return testhosts.write_inventory(hosts, groups={"masters": MEMBERS, "etcd": etcd},
                                         group_vars={"tke_ha_mode": "local_lb"})

    one = run_playbook(PLAY, inventory(["h1"]), "--tags", "pki,etcd")
    assert one.rc == 0, one.explain()
    local = f"{CTL} --endpoints=https://127.0.0.1:2379"
    testhosts.ssh("h1", f"{local} put /tke/grown before-the-join")
    show = "systemctl show etcd -p MainPID -p ActiveEnterTimestamp"
    h1_before = testhosts.ssh("h1", show).stdout
    assert "MainPID=0" not in h1_before, h1_before

    inv = inventory(MEMBERS)
    # (check mode: the test hosts have etcd from their own repository, not from the offline phase,
    # which tke_skip_phases says the site does itself; h2 and h3 record the etcd phase from the
    # tests above, their data gone: they are checked, and the adds are said)
    site_repo = ("-e", '{"tke_skip_phases": ["offline"]}')
    preview = run_playbook(PLAY, inv, "--tags", "etcd", "--check", "--diff", *site_repo)
    assert preview.rc == 0, preview.explain()
    for n in ("h2", "h3"):
        assert f"would run etcdctl member add {n} --peer-urls=https://{testhosts.ip(n)}:2380" in preview.output, \
            preview.explain()
    listed = testhosts.ssh("h1", f"{local} member list").stdout
    assert [line.split(", ")[2] for line in listed.splitlines()] == ["h1"], listed
    for n in ("h2", "h3"):
        assert testhosts.ssh(n, "systemctl is-active etcd", check=False).stdout.strip() != "active"
        assert testhosts.ssh(n, "test -e /var/lib/etcd/member", check=False).returncode != 0

    grow = run_playbook(PLAY, inv, "--tags", "pki,etcd")
    assert grow.rc == 0, grow.explain()
    # the journal runs the phase on h1 too (its inputs name the members' groups); h2, h3 join in order
    assert grow.phase_hosts()["etcd"] == MEMBERS, grow.explain()
    adds = [t for t in grow.changed_tasks() if "add it to the cluster" in t]
    assert [t.rsplit(" - ", 1)[-1].split("]")[0] for t in adds] == ["h2", "h3"], grow.explain()
    assert grow.output.index("add it to the cluster - h3") > grow.output.index("healthy (the next member "
                                                                               "joins only then) - h2")
    health = testhosts.ssh("h1", f"{CTL} --endpoints={endpoints(testhosts)} endpoint health")
    assert (health.stdout + health.stderr).count("is healthy") == 3, health
    listed = testhosts.ssh("h2", f"{local} member list").stdout
    assert sorted(line.split(", ")[2] for line in listed.splitlines()) == MEMBERS, listed
    assert all(line.split(", ")[1] == "started" for line in listed.splitlines()), listed
    got = testhosts.ssh("h3", f"{local} get /tke/grown --print-value-only")
    assert got.stdout.strip() == "before-the-join", got
    assert testhosts.ssh("h1", show).stdout == h1_before, "h1's etcd was restarted"
    assert "initial-cluster-state: existing" in testhosts.ssh("h3", "cat /etc/etcd/etcd.conf.yml").stdout

    again = run_playbook(PLAY, inv, "--tags", "pki,etcd", *NO_RESUME)
    assert again.rc == 0 and again.changed_hosts() == {}, again.explain()
    check = run_playbook(PLAY, inv, "--tags", "etcd", "--check", "--diff", *site_repo, *NO_RESUME)
    assert check.rc == 0 and check.changed_hosts() == {}, check.explain()
    assert testhosts.ssh("h1", show).stdout == h1_before, "h1's etcd was restarted"

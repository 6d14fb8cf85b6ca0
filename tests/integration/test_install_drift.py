"""A plain re-run trusts the hosts, not only the journal (issue 12, item 2): a host wiped between
runs runs every phase again, a host whose state drifted from the phase's record (issue 21, item 7)
runs that phase again; workers added with --limit, then a plain re-run updates what the
existing hosts' configuration says about them (/etc/hosts, the first master's chrony allow list).
host_init is the phase here (it names every node); the journal logic is the same for every phase."""
import re

from harness.playbook import report_changes, run_playbook, TOP

INSTALL = TOP / "install.yml"
RECORD = "/var/lib/offline-pot/phases"


def managed_hosts(testhosts, host):
    """The lines of the managed block of a host's /etc/hosts (the harness lists every test host
    outside it)."""
    text = testhosts.ssh(host, "cat /etc/hosts").stdout
    block = text.split("# BEGIN offline_pot.tke managed block", 1)[-1].split("# END offline_pot.tke managed block")[0]
    return [" ".join(line.split()) for line in block.splitlines() if line.strip()]


def inventory(testhosts, path, workers):
    return testhosts.write_inventory(path, groups={"masters": ["h1"], "workers": workers})


def test_each_host_has_its_own_machine_id(testhosts):
    ids = {h: testhosts.ssh(h, "cat /etc/machine-id").stdout.strip() for h in testhosts.names}
    assert len(set(ids.values())) == len(ids) and all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids.values()), ids


def test_a_wiped_host_runs_the_phase_again_on_a_plain_rerun(testhosts, tmp_path):
    inv = inventory(testhosts, tmp_path / "hosts.yml", ["h2"])
    first = run_playbook(INSTALL, inv, "--tags", "host_init")
    assert first.rc == 0, first.explain()
    # each host records the phase with the journal's fingerprint
    assert re.fullmatch(r"[0-9a-f]{64}", testhosts.ssh("h2", f"cat {RECORD}/host_init").stdout.strip())
    machine = testhosts.ssh("h2", "cat /etc/machine-id").stdout
    testhosts.reset("h2")   # same name, address and machine id; an empty root filesystem
    assert testhosts.ssh("h2", "cat /etc/machine-id").stdout == machine
    assert testhosts.ssh("h2", "grep -c offline_pot /etc/hosts || true").stdout.strip() == "0"

    again = run_playbook(INSTALL, inv, "--tags", "host_init")
    assert again.rc == 0, again.explain()
    assert re.search(r"host_init: running on h2 \(h2:\s+not\s+the\s+machine\s+the\s+journal\s+recorded", again.output), \
        again.explain()
    assert re.search(r"skipping\s+h1\s+\(done", again.output), again.explain()
    assert again.stats["h2"]["changed"] > 0 and again.stats["h1"]["changed"] == 0, again.explain()
    assert testhosts.ssh("h2", "grep -c 'offline_pot.tke managed block' /etc/hosts").stdout.strip() == "2"
    # and now both are done: a plain re-run skips them and changes nothing
    third = run_playbook(INSTALL, inv, "--tags", "host_init")
    assert third.rc == 0 and third.total("changed") == 0, third.explain()
    assert re.search(r"host_init: running on no host", third.output), third.explain()


def test_a_host_whose_state_drifted_runs_the_phase_again_on_a_plain_rerun(testhosts, tmp_path):
    """The record stands for the state, not only for the run: a host whose /etc/hosts was rewritten
    after the install (a reboot with cloud-init's manage_etc_hosts, a colleague's edit) runs
    host_init again on a plain re-run, the banner naming what drifted; the others skip it."""
    inv = inventory(testhosts, tmp_path / "hosts.yml", ["h2"])
    first = run_playbook(INSTALL, inv, "--tags", "host_init")
    assert first.rc == 0, first.explain()
    # the phase's state record: its probes and their digests when it was done
    assert "hosts-block" in testhosts.ssh("h2", f"cat {RECORD}/host_init.probe").stdout
    assert re.search(r"^hosts-block [0-9a-f]{16}$", testhosts.ssh("h2", f"cat {RECORD}/host_init.state").stdout, re.M)
    testhosts.ssh("h2", "sed '/# BEGIN offline_pot.tke managed block/,/# END offline_pot.tke managed block/d' "
                        "/etc/hosts > /tmp/hosts && cat /tmp/hosts > /etc/hosts")
    assert managed_hosts(testhosts, "h2") != managed_hosts(testhosts, "h1")
    again = run_playbook(INSTALL, inv, "--tags", "host_init")
    assert again.rc == 0, again.explain()
    said = " ".join(again.output.split())
    assert "host_init: running on h2 (h2: its state differs from what the phase recorded there (hosts-block))" \
        in said, again.explain()
    assert re.search(r"skipping h1 \(done", said), again.explain()
    assert managed_hosts(testhosts, "h2") == managed_hosts(testhosts, "h1")
    # the run report names what the run changed, read from the hosts: the block put back on h2
    assert report_changes(again)[1] == [("h1", "-", "nothing"), ("h2", "host_init", "hosts-block")]
    third = run_playbook(INSTALL, inv, "--tags", "host_init")
    assert third.rc == 0 and third.total("changed") == 0, third.explain()
    assert re.search(r"host_init: running on no host", third.output), third.explain()


def test_workers_added_then_a_plain_rerun_updates_the_masters(testhosts, tmp_path):
    small = inventory(testhosts, tmp_path / "small.yml", ["h2"])
    first = run_playbook(INSTALL, small, "--tags", "host_init")
    assert first.rc == 0, first.explain()
    big = inventory(testhosts, tmp_path / "hosts.yml", ["h2", "h3"])   # same directory: same journal
    added = run_playbook(INSTALL, big, "--tags", "host_init", "--limit", "h3")
    assert added.rc == 0, added.explain()
    h3 = testhosts.ip("h3")
    # --limit left h1 alone
    assert f"{h3} h3" not in managed_hosts(testhosts, "h1")
    assert f"allow {h3}/32" not in testhosts.ssh("h1", "grep ^allow /etc/chrony/chrony.conf").stdout

    plain = run_playbook(INSTALL, big, "--tags", "host_init")
    assert plain.rc == 0, plain.explain()
    # h1 and h2 name h3 now (only that changed: host_init's names tasks alone run there); h3
    # itself is done with unchanged inputs
    assert re.search(r"host_init: running on h1, h2 \(h1, h2:\s+its\s+configuration\s+names\s+h3\s+\(added\):"
                     r"\s+only\s+what\s+names\s+them\);\s+skipping\s+h3\s+\(done", plain.output), plain.explain()
    for h in ("h1", "h2"):
        assert f"{h3} h3" in managed_hosts(testhosts, h), managed_hosts(testhosts, h)
    chrony = testhosts.ssh("h1", "grep ^allow /etc/chrony/chrony.conf").stdout
    assert f"allow {h3}/32" in chrony, chrony
    again = run_playbook(INSTALL, big, "--tags", "host_init")
    assert again.rc == 0 and again.total("changed") == 0, again.explain()

"""One run at a time per site (plugin_utils/site_lock.py), with real processes: the lock outlives
the process that took it (an action plugin's worker) and ends with the process it is held for
(ansible-playbook)."""
import json
import os
import subprocess
import sys
import time

import pytest

from ansible_collections.offline_pot.tke.plugins.plugin_utils import site_lock

# a stand-in for the ansible-playbook process: it lives until its stdin closes
OWNER = [sys.executable, "-c", "import sys; sys.stdin.read()"]


def take(state_dir, owner_pid, playbook):
    """What install_phase state=lock does in a worker: take the lock for owner_pid and hand it to a
    holder process; run in a child process that exits at once, as a worker does."""
    code = ("import sys; from ansible_collections.offline_pot.tke.plugins.plugin_utils import site_lock as l\n"
            "try:\n fd, p = l.acquire(sys.argv[1], int(sys.argv[2]), {'playbook': sys.argv[3], 'started': 'now'})\n"
            "except l.Held as e:\n print(e); sys.exit(3)\n"
            "if fd is not None: l.hold_until_exit(fd, int(sys.argv[2]))\nprint('held')\n")
    return subprocess.run([sys.executable, "-c", code, str(state_dir), str(owner_pid), playbook],
                          capture_output=True, text=True, timeout=120, check=False,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p)))


@pytest.fixture
def owner():
    procs = []

    def start():
        procs.append(subprocess.Popen(OWNER, stdin=subprocess.PIPE))
        return procs[-1]
    yield start
    for p in procs:
        p.stdin.close()
        p.wait(timeout=120)


def test_a_second_run_is_refused_while_the_first_runs_and_goes_once_it_ended(tmp_path, owner):
    first = owner()
    took = take(tmp_path, first.pid, "install.yml")
    assert took.returncode == 0 and took.stdout.strip() == "held", took
    holder = json.loads((tmp_path / site_lock.LOCK_FILE).read_text())
    assert holder == {"pid": first.pid, "playbook": "install.yml", "started": "now"}
    # the worker that took it has ended: the lock is still held, for the whole run
    second = owner()
    refused = take(tmp_path, second.pid, "playbooks/reset.yml")
    assert refused.returncode == 3, refused
    assert f"pid {first.pid}, playbook install.yml, started now" in refused.stdout
    assert "one run at a time" in refused.stdout
    # a later step of the same run finds it held by its own run
    assert take(tmp_path, first.pid, "install.yml").stdout.strip() == "held"
    # the first run ends (however it ends): the second takes the lock
    first.stdin.close()
    first.wait(timeout=120)
    took = take(tmp_path, second.pid, "playbooks/reset.yml")
    assert took.returncode == 0, took
    assert json.loads((tmp_path / site_lock.LOCK_FILE).read_text())["pid"] == second.pid
    assert oct((tmp_path / site_lock.LOCK_FILE).stat().st_mode & 0o777) == "0o600"


def test_a_lock_file_left_by_a_dead_run_is_no_lock(tmp_path, owner):
    (tmp_path / site_lock.LOCK_FILE).write_text(json.dumps({"pid": 999999999, "playbook": "install.yml"}))
    run = owner()
    start = time.monotonic()
    assert take(tmp_path, run.pid, "install.yml").returncode == 0
    # not the 60 s acquire() waits for a run on its way out (the child's own start, at nice 19 beside
    # the scenarios, can take seconds)
    assert time.monotonic() - start < 30


def test_playbook_of_reads_the_command_line(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()", "-i", "inv/hosts.yml",
                             "install.yml", "-e", "x.yml"], stdin=subprocess.PIPE)
    try:
        for dummy in range(100):  # until the child has exec'ed
            if site_lock.playbook_of(proc.pid):
                break
            time.sleep(0.05)
        assert site_lock.playbook_of(proc.pid) == "install.yml"
    finally:
        proc.stdin.close()
        proc.wait()
    assert site_lock.playbook_of(999999999) == ""

"""Fixtures for scenarios on real test hosts (tests/harness, docs/testing.md).

The hosts of one pytest session are one harness instance (TH_ID, default 1): started once,
destroyed at the end whatever happens. Scenarios that need a fresh machine call
testhosts.reset(...). Under pytest-xdist (tests/run_all.sh runs the scenarios on several workers,
one test file per worker at a time) worker gwN uses instance TH_ID + N: its own bridge, subnet
and hosts.
"""
import json
import os
import signal
import time

import pytest

from harness.testhosts import TestHosts, worker_instance


def _terminate(signum, frame):
    # SIGTERM/SIGHUP end the run like Ctrl-C does, so the session fixture's teardown still runs
    raise KeyboardInterrupt(f"signal {signum}")


_modules_seen = []

# TEST_SCHEDULE_FILE (tests/run_all.sh): when each worker (and its PID) started and ended each test,
# so a run's schedule (which files ran where, and how long each worker sat idle at the end) can be
# read back (tests/harness/schedule.py), and each file's CPU told (bench/cpu_profile.py --schedule)
_SCHEDULE = os.environ.get("TEST_SCHEDULE_FILE")
_CONFIG = None


def _schedule(nodeid, event):
    # (under pytest-xdist the controller process sees every worker's tests start and end too: only
    # the workers, which know who they are, write)
    if _SCHEDULE and not (_CONFIG and _CONFIG.pluginmanager.has_plugin("dsession")):
        with open(_SCHEDULE, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"worker": os.environ.get("PYTEST_XDIST_WORKER", "main"), "test": nodeid,
                                 "event": event, "t": round(time.time(), 1), "pid": os.getpid()}) + "\n")


def pytest_configure(config):
    global _CONFIG  # pylint: disable=global-statement
    _CONFIG = config


def pytest_runtest_logstart(nodeid, location):
    _schedule(nodeid, "start")


def pytest_runtest_logfinish(nodeid, location):
    _schedule(nodeid, "end")


def pytest_xdist_make_scheduler(config, log):
    """--dist loadfile, with a worker given its next file only when its current one is down to its
    last test (pytest-xdist's own gives it at the last two: a worker holds its last test back until
    it knows the next one, or that there is none). A file's next one is chosen late, by whichever
    worker is about to be free: the schedule (tests/run_all.sh's order, longest first) ends with the
    short files on every worker, not with a long one queued early behind another."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class LastTestAhead(LoadFileScheduling):
        def _reschedule(self, node):
            if node.shutting_down:
                return
            if not self.workqueue:
                node.shutdown()
                return
            if self._pending_of(self.assigned_work[node]) > 1:
                return
            self._assign_work_unit(node)
    return LastTestAhead(config, log)


def th_id() -> int:
    """This process's harness instance: TH_ID, plus the pytest-xdist worker's number."""
    return worker_instance(os.environ.get("PYTEST_XDIST_WORKER", "gw0"), int(os.environ.get("TH_ID", "1")))


@pytest.fixture(scope="module", autouse=True)
def fresh_hosts(request):
    """Every test module starts on fresh hosts (as new machines): one module's services and
    files (a running etcd, a kubeadm-made PKI) must not decide another's result."""
    if "testhosts" not in request.fixturenames:
        yield
        return
    hosts = request.getfixturevalue("testhosts")
    if _modules_seen:
        hosts.reset(*hosts.names)
    _modules_seen.append(request.module.__name__)
    yield


@pytest.fixture(scope="session")
def testhosts():
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _terminate)
    hosts = TestHosts(th_id=th_id(), count=3)
    hosts.prepare()
    try:
        hosts.up()
        yield hosts
    finally:
        if os.environ.get("TH_KEEP") != "1":
            hosts.destroy()

"""Fixtures for scenarios on real test hosts (tests/harness, docs/testing.md).

The hosts of one pytest session are one harness instance (TH_ID, default 1): started once,
destroyed at the end whatever happens. Scenarios that need a fresh machine call
testhosts.reset(...).
"""
import os

import pytest

from harness.testhosts import TestHosts


@pytest.fixture(scope="session")
def testhosts():
    hosts = TestHosts(th_id=int(os.environ.get("TH_ID", "1")), count=3)
    hosts.prepare()
    try:
        hosts.up()
        yield hosts
    finally:
        if os.environ.get("TH_KEEP") != "1":
            hosts.destroy()

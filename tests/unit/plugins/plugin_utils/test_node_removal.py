import pytest

from ansible_collections.offline_pot.tke.plugins.plugin_utils.node_removal import refusals

SITE = {"all": ["m1", "m2", "m3", "w1", "e1", "e2", "e3"], "masters": ["m1", "m2", "m3"], "workers": ["w1"],
        "etcd": ["e1", "e2", "e3"]}


def test_a_worker_or_a_master_of_several_may_go():
    assert refusals("w1", SITE) == []
    assert refusals("m2", SITE) == []


def test_unknown_or_missing_node():
    assert refusals("", SITE) == ["node: say which node to remove (-e node=NAME)"]
    assert refusals("x9", SITE) == ["x9: not a host of this inventory"]


def test_the_last_master_is_refused():
    site = {"all": ["m1", "w1"], "masters": ["m1"], "workers": ["w1"], "etcd": ["m1"]}
    assert refusals("m1", site)[0] == "m1: the last master (the cluster would have no control plane)"


@pytest.mark.parametrize("node,down,expected", [
    ("e1", [], None),
    # 3 members, one down: removing another leaves 1 of 2 answering, quorum of 2 is 2
    ("e1", ["e2"], "e1: breaks etcd quorum - 1 of the 2 members left answer (e2 do not); they need 2"),
    # removing the member that is down itself keeps the quorum (with force)
    ("e2", ["e2"], None),
    ("e1", ["e2", "e3"], "e1: breaks etcd quorum - only 1 of 3 members answer (e2, e3 do not); removing a member needs 2"),
])
def test_etcd_quorum(node, down, expected):
    got = [r for r in refusals(node, SITE, down, force=True) if "etcd" in r]
    assert got == ([expected] if expected else [])


def test_the_last_etcd_member_and_stacked_etcd():
    assert refusals("e1", {**SITE, "etcd": ["e1"]}) == ["e1: the last etcd member (the cluster's data would be gone)"]
    stacked = {"all": ["m1", "m2", "m3"], "masters": ["m1", "m2", "m3"]}
    assert [r for r in refusals("m1", stacked, ["m2"]) if "quorum" in r] == [
        "m1: breaks etcd quorum - 1 of the 2 members left answer (m2 do not); they need 2"]


def test_unreachable_needs_force():
    assert refusals("w1", SITE, ["w1"]) == [
        "w1: unreachable - it can be neither drained nor reset; -e force=true removes it from the cluster anyway "
        "(never bring it back as it is)"]
    assert refusals("w1", SITE, ["w1"], force=True) == []

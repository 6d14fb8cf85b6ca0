import pytest

from ansible_collections.offline_pot.tke.plugins.plugin_utils.node_removal import next_steps, refusals

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
    got = [r for r in refusals(node, SITE, down, force=True, etcd_even=True) if "etcd" in r]
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


# issue 21, item 8: a removal that leaves an even membership (the next install would be refused)
EVEN = ("e3: external etcd (group etcd) goes from 3 to 2 members (e1, e2): etcd needs an odd number (with 2 members "
        "it survives no more failures than with 1), and install.yml with e3 out of the inventory is refused until "
        "the group etcd has 3 members again: put another host in the group etcd in e3's place (install.yml joins "
        "it as a member)")


def test_an_etcd_member_down_to_an_even_membership_is_refused_naming_the_counts_and_the_next_step():
    assert refusals("e3", SITE) == [EVEN + "; -e etcd_even=true removes e3 and leaves 2 members until then"]
    # stacked etcd: a master of three is a member of three
    stacked = {"all": ["m1", "m2", "m3", "w1"], "masters": ["m1", "m2", "m3"], "workers": ["w1"]}
    assert refusals("m3", stacked)[0].startswith(
        "m3: stacked etcd (one member per master) goes from 3 to 2 members (m1, m2)")
    assert "the group masters has 3 members again" in refusals("m3", stacked)[0]
    # 5 -> 4 as well; 4 -> 3 and 2 -> 1 leave an odd membership: no refusal
    five = {**SITE, "all": SITE["all"] + ["e4", "e5"], "etcd": ["e1", "e2", "e3", "e4", "e5"]}
    assert "goes from 5 to 4 members" in refusals("e5", five)[0]
    assert refusals("e4", {**five, "etcd": ["e1", "e2", "e3", "e4"]}) == []
    assert refusals("e2", {**SITE, "etcd": ["e1", "e2"]}) == []


def test_etcd_even_carries_it_out_and_says_what_the_next_install_needs():
    assert refusals("e3", SITE, etcd_even=True) == []
    steps = next_steps("e3", SITE)
    assert steps[0].startswith("take e3 out of the inventory and run install.yml")
    assert steps[1] == "etcd: " + EVEN[len("e3: "):]
    assert len(next_steps("w1", SITE)) == 1


def test_the_quorum_refusal_comes_alone():
    # quorum broken and even: only the quorum refusal (etcd_even cannot help)
    got = refusals("e1", SITE, ["e2"], force=True)
    assert got == ["e1: breaks etcd quorum - 1 of the 2 members left answer (e2 do not); they need 2"]

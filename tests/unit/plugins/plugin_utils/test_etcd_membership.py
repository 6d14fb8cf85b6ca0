"""Members joining a running etcd cluster: which join, what refuses, what each join takes."""
import json

import pytest

from ansible_collections.offline_pot.tke.plugins.plugin_utils.etcd_membership import (
    join_refusals, join_step, joining, parse_members)

PEERS = [{"host": h, "name": h, "peer_url": f"https://10.0.0.{i}:2380"} for i, h in enumerate(["e1", "e2", "e3"], 1)]
URL = {p["host"]: p["peer_url"] for p in PEERS}


def started(host, member_id):
    return {"ID": member_id, "name": host, "peerURLs": [URL[host]], "clientURLs": [URL[host].replace("2380", "2379")]}


def not_started(host, member_id):
    # etcd lists a member added but not started without name and client URLs (etcdctl -w json)
    return {"ID": member_id, "peerURLs": [URL[host]]}


def listing(*members):
    return json.dumps({"header": {"cluster_id": 1, "member_id": 11}, "members": list(members)})


def test_a_new_cluster_or_a_whole_one_has_no_joining_member():
    assert joining(PEERS, []) == []
    assert joining(PEERS, ["e1", "e2", "e3"]) == []
    assert join_refusals(PEERS, [], "", [], []) == []


def test_members_without_data_join_in_inventory_order():
    assert joining(PEERS, ["e2"]) == ["e1", "e3"]


def test_a_healthy_cluster_that_knows_its_members_may_grow():
    assert join_refusals(PEERS, ["e1"], listing(started("e1", 11)), ["e1"], ["e1"]) == []


def test_a_member_with_data_that_is_not_healthy_refuses():
    out = join_refusals(PEERS[:3], ["e1", "e2"], listing(started("e1", 11), started("e2", 12)), ["e1"], ["e1", "e2"])
    assert out == ["e2: its etcd is not healthy (etcdctl endpoint health failed); new members (e3) join only a "
                   "healthy cluster with every member answering"]


def test_no_answer_refuses_naming_the_member_asked():
    out = join_refusals(PEERS, ["e1"], "", [], [])
    assert out == ["e1: its etcd does not answer `etcdctl member list` (is it running?); new members (e2, e3) join "
                   "only a running cluster"]
    assert parse_members("Error: context deadline exceeded") is None


def test_a_member_outside_the_inventory_refuses():
    other = {"ID": 99, "name": "x9", "peerURLs": ["https://10.0.0.9:2380"]}
    out = join_refusals(PEERS, ["e1"], listing(started("e1", 11), other), ["e1"], ["e1"])
    assert out == ["e1: the cluster has member x9 (https://10.0.0.9:2380) that is not in the etcd group: remove it "
                   "(etcdctl member remove) or put its host in the group"]


def test_a_started_member_without_data_lost_it_and_refuses():
    out = join_refusals(PEERS, ["e1"], listing(started("e1", 11), started("e2", 12)), ["e1"], ["e1"])
    assert out[0].startswith("e2: has no etcd data but the cluster lists it as started member e2")


def test_data_of_another_cluster_refuses():
    out = join_refusals(PEERS, ["e1", "e2"], listing(started("e1", 11)), ["e1", "e2"], ["e1", "e2"])
    assert out == ["e2: has etcd data but is not a member of the cluster e1 belongs to (https://10.0.0.2:2380 not "
                   "listed): data of another cluster?"]


def test_a_run_resumed_after_member_add_needs_the_members_running_not_healthy():
    # e2 was added, not started: 1 of 2 members started, no quorum, endpoint health fails on e1
    resumed = listing(started("e1", 11), not_started("e2", 12))
    assert join_refusals(PEERS, ["e1"], resumed, [], ["e1"]) == []
    out = join_refusals(PEERS, ["e1"], resumed, [], [])
    assert out == ["e1: its etcd is not running; e2 was added to the cluster but not started, and starts only "
                   "with the members with data running"]


def test_a_join_adds_the_member_and_names_every_member_with_it():
    step = join_step(PEERS, listing(started("e1", 11)), "e2")
    assert step == {"add": True, "peer_url": URL["e2"],
                    "initial_cluster": f"e1={URL['e1']},e2={URL['e2']}"}


def test_a_member_added_before_is_not_added_twice_and_named_by_the_inventory():
    step = join_step(PEERS, listing(started("e1", 11), not_started("e2", 12)), "e2")
    assert step == {"add": False, "peer_url": URL["e2"], "initial_cluster": f"e1={URL['e1']},e2={URL['e2']}"}


def test_the_second_join_names_the_first():
    step = join_step(PEERS, listing(started("e1", 11), started("e2", 12)), "e3")
    assert step["add"] and step["initial_cluster"] == f"e1={URL['e1']},e2={URL['e2']},e3={URL['e3']}"


def test_check_mode_counts_the_members_a_real_run_adds_first():
    step = join_step(PEERS, listing(started("e1", 11)), "e3", assumed=["e2"])
    assert step["add"] and step["initial_cluster"] == f"e1={URL['e1']},e2={URL['e2']},e3={URL['e3']}"


def test_a_listing_that_is_not_one_is_an_error():
    with pytest.raises(ValueError, match="not the output of etcdctl member list"):
        join_step(PEERS, "", "e2")


def test_the_filters_wrap_the_rules_and_name_a_bad_host():
    from ansible.errors import AnsibleFilterError
    from ansible_collections.offline_pot.tke.plugins.filter.etcd_join_step import etcd_join_step
    from ansible_collections.offline_pot.tke.plugins.filter.etcd_join_refusals import etcd_join_refusals
    assert etcd_join_refusals(PEERS, ["e1"], listing(started("e1", 11)), ["e1"], ["e1"]) == []
    assert etcd_join_step(PEERS, listing(started("e1", 11)), "e2")["add"] is True
    with pytest.raises(AnsibleFilterError, match="x9 is not an etcd member"):
        etcd_join_step(PEERS, listing(started("e1", 11)), "x9")

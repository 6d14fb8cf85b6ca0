from ansible_collections.offline_pot.tke.plugins.filter.node_addresses import node_addresses
from ansible_collections.offline_pot.tke.plugins.filter.pki_members import pki_members
from ansible_collections.offline_pot.tke.plugins.filter.precheck_peers import precheck_peers
from ansible_collections.offline_pot.tke.plugins.plugin_utils.inventory_model import host_model, node_address

HOSTVARS = {"m1": {"ansible_host": "10.0.0.1", "tke_node_ip": "10.1.0.1"},
            "m2": {"ansible_host": "10.0.0.2", "tke_node_ip": ""},
            "m3": {"ansible_ssh_host": "10.0.0.3"},
            "w1": {}}


def test_the_one_rule_node_ip_then_connection_address_then_name():
    assert node_addresses(["m1", "m2", "m3", "w1", "unknown"], HOSTVARS) == \
        ["10.1.0.1", "10.0.0.2", "10.0.0.3", "w1", "unknown"]


def test_every_consumer_uses_it():
    # certificates (pki_members), reachability checks (precheck_peers), the inventory model (tke.json)
    assert [m["ip"] for m in pki_members(["m1", "m2"], HOSTVARS)] == ["10.1.0.1", "10.0.0.2"]
    peers = precheck_peers(HOSTVARS, "w1", ["m1", "w1"], {}, {})
    assert [p["address"] for p in peers] == ["10.1.0.1"]
    assert host_model("m1", HOSTVARS["m1"])["node_address"] == node_address("m1", HOSTVARS["m1"]) == "10.1.0.1"
    assert host_model("m1", HOSTVARS["m1"])["address"] == "10.0.0.1"   # SSH and validation keep ansible_host

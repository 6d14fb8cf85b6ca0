"""The interface holding a node's address (host_probe.address_interfaces, node_interface), from
iproute2's JSON listing as `ip -j addr show` prints it."""
from ansible_collections.offline_pot.tke.plugins.module_utils import host_probe as hp

IP_J = [
    {"ifindex": 1, "ifname": "lo", "addr_info": [{"family": "inet", "local": "127.0.0.1", "prefixlen": 8},
                                                 {"family": "inet6", "local": "::1", "prefixlen": 128}]},
    {"ifindex": 2, "ifname": "ens3", "addr_info": [
        {"family": "inet", "local": "10.0.0.11", "prefixlen": 24},
        {"family": "inet", "local": "10.0.0.100", "prefixlen": 32, "label": "ens3:vip"},
        {"family": "inet6", "local": "fd00::11", "prefixlen": 64}]},
    {"ifindex": 3, "ifname": "flannel.1", "addr_info": []},
]


def test_every_address_maps_to_its_interface():
    got = hp.address_interfaces(IP_J)
    assert got == {"127.0.0.1": "lo", "::1": "lo", "10.0.0.11": "ens3", "10.0.0.100": "ens3", "fd00::11": "ens3"}


def test_the_node_address_interface():
    got = hp.address_interfaces(IP_J)
    assert hp.node_interface("10.0.0.11", got) == "ens3"
    assert hp.node_interface("fd00:0::11", got) == "ens3"        # the same address, written otherwise
    assert hp.node_interface("10.0.0.12", got) is None            # no interface holds it
    assert hp.node_interface("node1.example", got) is False       # a name: not checked


def test_this_machine_can_say():
    got = hp.address_interfaces()
    assert got.get("127.0.0.1") == "lo", got

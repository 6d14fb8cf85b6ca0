from ansible_collections.offline_pot.tke.plugins.filter.precheck_peers import precheck_peers


def test_peers_get_ssh_and_their_groups_ports():
    hostvars = {"m1": {"ansible_host": "10.0.0.1"}, "w1": {"ansible_host": "10.0.0.2"}, "e1": {}}
    groups = {"masters": ["m1"], "workers": ["w1"], "etcd": ["e1"]}
    peers = precheck_peers(hostvars, "w1", ["m1", "w1", "e1"], {"masters": [6443], "etcd": [2379, "2380"]}, groups)
    assert peers == [{"name": "m1", "address": "10.0.0.1", "ports": [22, 6443]},
                     {"name": "e1", "address": "e1", "ports": [22, 2379, 2380]}]

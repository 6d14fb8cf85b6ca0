import pytest

from ansible_collections.offline_pot.tke.plugins.plugin_utils import inventory_rules as r

SETTINGS = {"tke_ha_mode": "none", "tke_vip": "", "tke_vport": 6443, "tke_vrid": 0,
            "tke_pod_cidr": "10.244.0.0/16", "tke_service_cidr": "10.96.0.0/16", "tke_node_cidr_mask": 24,
            "tke_node_networks": [], "tke_registry_domain": "registry.tke.com", "tke_api_domain": "api.tke.com",
            "tke_gateway_domain": "console.tke.com", "tke_k8s_version": "1.30.4",
            "tke_supported_k8s_versions": ["1.29.8", "1.30.4"], "tke_admin_password": "long-enough",
            "tke_skip_phases": [], "tke_max_pods": 256}


def model(masters=("m1",), workers=("w1",), etcd=None, **settings):
    ips = {"m1": "10.0.0.11", "m2": "10.0.0.12", "m3": "10.0.0.13", "w1": "10.0.0.21", "e1": "10.0.0.31"}
    names = set(masters) | set(workers) | set(etcd or [])
    groups = {"masters": list(masters), "workers": list(workers), "registry": list(masters[:1])}
    if etcd is not None:
        groups["etcd"] = list(etcd)
    return {"groups": groups, "hosts": {n: {"address": ips[n]} for n in names},
            "settings": {**SETTINGS, **settings}}


def messages(m):
    return [r.format_problem(p) for p in r.check(m)]


def test_good_models_have_no_problem():
    assert messages(model()) == []
    assert messages(model(masters=("m1", "m2", "m3"), tke_ha_mode="keepalived", tke_vip="10.0.0.100")) == []
    assert messages(model(masters=("m1", "m2", "m3"), tke_ha_mode="thirdparty", tke_vip="10.9.0.1",
                          tke_vport=8443)) == []
    assert messages(model(etcd=("e1",))) == []


@pytest.mark.parametrize("kw,expected", [
    (dict(masters=("m1", "m2", "m3"), tke_ha_mode="local_lb"), []),
    (dict(etcd=()), ["group etcd: etcd: the etcd group is defined"]),
    (dict(masters=("m1", "m2"), tke_ha_mode="local_lb"), ["group masters: etcd: stacked etcd"]),
    (dict(tke_node_cidr_mask=16), ["all: tke_node_cidr_mask: 16 must be longer than"]),
    (dict(tke_vrid=300, masters=("m1", "m2", "m3"), tke_ha_mode="keepalived", tke_vip="10.0.0.100"),
     ["all: tke_vrid: 300 is not a virtual_router_id"]),
    (dict(tke_gateway_domain="console"), ["all: tke_gateway_domain: 'console' is not a DNS name"]),
    (dict(tke_skip_phases="precheck"), ["all: tke_skip_phases: 'precheck' is not a list"]),
    (dict(tke_k8s_version="v1.30.4"), []),
    # the vport is every host's firewall port whatever the mode, and TKE's thirdParty vport
    (dict(masters=("m1", "m2", "m3"), tke_ha_mode="keepalived", tke_vip="10.0.0.100", tke_vport=70000),
     ["all: tke_vport: 70000 is not a TCP port (1-65535)"]),
    (dict(tke_vport="https"), ["all: tke_vport: 'https' is not a TCP port"]),
    (dict(masters=("m1", "m2", "m3"), tke_ha_mode="thirdparty", tke_vip="10.9.0.1", tke_vport=0),
     ["all: tke_vport: 0 is not a TCP port"]),
    (dict(tke_max_pods=110), ["all: tke_max_pods: 110 is not one of TKE's maxNodePodNum values (16, 32, 64, 128, 256)"]),
    (dict(tke_max_pods="64"), []),
    (dict(tke_network_mtu=1450), []),
    (dict(tke_network_mtu=0), []),
    (dict(tke_network_mtu=9001), ["all: tke_network_mtu: 9001 is not an MTU: 0 (from the node interface) or 1280-9000"]),
    (dict(tke_network_mtu=1000), ["all: tke_network_mtu: 1000 is not an MTU"]),
    (dict(tke_network_mtu="big"), ["all: tke_network_mtu: 'big' is not an MTU"]),
    # calico's IP pool block size is the node mask: calico takes 20 to 32 (IPv4); flannel any
    (dict(tke_network_plugin="calico", tke_node_cidr_mask=19, tke_pod_cidr="10.64.0.0/14"),
     ["all: tke_node_cidr_mask: 19 is not a calico IP pool block size: calico takes 20 to 32"]),
    (dict(tke_network_plugin="calico", tke_node_cidr_mask=26), []),
    (dict(tke_network_plugin="flannel", tke_node_cidr_mask=19, tke_pod_cidr="10.64.0.0/14"), []),
    # the plugins are the image table's (roles/network/plugins/<name>/), and none
    (dict(tke_network_plugin="none"), []),
    (dict(tke_network_plugin="cilium"), ["all: tke_network_plugin: 'cilium' is not a network plugin: calico, flannel or none"]),
    # 2 nodes (m1, w1): a /24 split in /25s holds exactly 2, in /24s just 1
    (dict(tke_pod_cidr="10.244.0.0/24", tke_node_cidr_mask=25), []),
    (dict(tke_pod_cidr="10.244.0.0/24", tke_node_cidr_mask=24),
     ["all: tke_node_cidr_mask: 24 must be longer than"]),
    (dict(tke_pod_cidr="10.244.0.0/25", tke_node_cidr_mask=26, masters=("m1", "m2", "m3"),
          tke_ha_mode="local_lb"),
     ["all: tke_pod_cidr: 10.244.0.0/25 holds 2 node subnet(s) of /26 (tke_node_cidr_mask) but the inventory has "
      "4 nodes"]),
])
def test_rules(kw, expected):
    got = messages(model(**kw))
    assert len(got) == len(expected), got
    assert all(g.startswith(e) for g, e in zip(got, expected)), got


def test_every_problem_is_reported_at_once():
    got = messages(model(masters=("m1", "m2"), tke_ha_mode="keepalived", tke_admin_password="x",
                         tke_service_cidr="10.244.0.0/12", tke_registry_domain="bad_name"))
    assert [g.split(":")[1].strip() for g in got] == ["etcd", "tke_vip", "tke_service_cidr",
                                                      "tke_registry_domain", "tke_admin_password"]


@pytest.mark.parametrize("name,ok", [("registry.tke.com", True), ("a.b", True), ("localhost", False),
                                     ("Reg.tke.com", False), ("-a.com", False), ("a..com", False), ("", False)])
def test_is_dns_name(name, ok):
    assert r.is_dns_name(name) is ok


def test_the_address_rules_read_the_node_address_not_the_connection_address():
    """A master reached through a name (ansible_host) with its cluster IP in tke_node_ip: the IP,
    uniqueness, VIP and network rules read tke_node_ip, and a problem with it names that variable."""
    m = model(masters=("m1", "m2", "m3"), tke_ha_mode="keepalived", tke_vip="10.0.0.100")
    for n, h in m["hosts"].items():
        h.update(node_address=h["address"], node_address_var="tke_node_ip", address=f"{n}.mgmt.example")
    assert messages(m) == []
    m["hosts"]["m2"]["node_address"] = "10.0.0.100"
    assert messages(m) == ["host m2: tke_vip: 10.0.0.100 is the address of host m2; the VIP must be a free address"]
    m["hosts"]["m2"]["node_address"] = "10.0.0.11"
    assert messages(m) == ["host m2: tke_node_ip: 10.0.0.11 is also the address of host m1; host IPs must be unique"]
    m["hosts"]["m2"]["node_address"] = "m2.cluster.example"
    assert messages(m)[0] == ("host m2: tke_node_ip: 'm2.cluster.example' is not an IP address; "
                              "tke_node_ip must be the node's cluster IP")
    # keepalived's subnet rule on the node addresses: the VIP beside the cluster IPs, not the names
    m["hosts"]["m2"]["node_address"] = "10.0.0.12"
    m["settings"]["tke_vip"] = "10.7.0.100"
    assert any("10.7.0.100 is not in the subnet of master(s) m1, m2, m3" in x for x in messages(m))


def test_file_modes_in_role_options_are_octal_strings():
    options = {"host_init_data_dirs": {"type": "list", "elements": "dict",
                                       "options": {"path": {"type": "path"}, "mode": {"type": "str"}}},
               "host_init_selinux": {"type": "str"}}
    good = {"host_init_data_dirs": [{"path": "/a", "mode": "0755"}, {"path": "/b", "mode": "700"},
                                    {"path": "/c", "mode": "1777"}], "host_init_selinux": "keep"}
    assert r.mode_problems(options, good) == []
    bad = {"host_init_data_dirs": [{"path": "/a", "mode": "u=rwx,go=rx"}, {"path": "/b", "mode": 448},
                                   {"path": "/c", "mode": "0999"}, {"path": "/d", "mode": "07555"}]}
    found = r.mode_problems(options, bad)
    assert [name for name, dummy in found] == ["host_init_data_dirs"] * 4
    assert "/a: mode 'u=rwx,go=rx' is not an octal mode" in found[0][1]
    assert "/b: mode 448 is a number; write it quoted" in found[1][1]
    assert "/c: mode '0999'" in found[2][1] and "/d: mode '07555'" in found[3][1]
    # an option without modes is not looked at; a missing mode, or one of another type, is the
    # argument spec's to report
    assert r.mode_problems(options, {"host_init_data_dirs": [{"path": "/a"}, "not a dict", {"path": "/b", "mode": True},
                                                             {"path": "/c", "mode": ["0755"]}]}) == []

import json
from pathlib import Path

import jinja2
import jsonschema

from ansible_collections.offline_pot.tke.plugins.plugin_utils import tke_config as t

TOP = Path(__file__).resolve().parents[4]
SCHEMA = json.loads((TOP / "schemas" / "tke.schema.json").read_text())
SETTINGS = {"tke_cluster_name": "global", "tke_k8s_version": "1.30.4", "tke_ha_mode": "keepalived",
            "tke_vip": "10.0.0.100", "tke_vport": 6443, "tke_vrid": 0, "tke_pod_cidr": "10.244.0.0/16",
            "tke_service_cidr": "10.96.0.0/16", "tke_dns_domain": "cluster.local", "tke_max_pods": 128,
            "tke_network_interface": "", "tke_proxy_mode": "ipvs", "tke_registry_domain": "registry.tke.com",
            "tke_registry_namespace": "library", "tke_gateway_domain": "console.tke.com",
            "tke_admin_user": "admin", "tke_admin_password": "pa\"ss\\word", "tke_api_domain": "api.tke.com"}
MODEL = {"groups": {"masters": ["m1", "m2", "m3"], "workers": ["w1"], "registry": ["m1"]},
         "hosts": {h: {"address": f"10.0.0.{i}", "node_address": f"10.0.0.{i}", "port": 22, "user": "root"}
                   for i, h in enumerate(["m1", "m2", "m3", "w1"], 11)},
         "settings": SETTINGS}


def render(ctx):
    env = jinja2.Environment()
    env.filters["to_json"] = json.dumps
    return t.canonical(env.from_string((TOP / "templates" / "tke.json.j2").read_text()).render(tke=ctx))


def test_renders_only_the_fields_our_schema_pins_with_base64_secrets():
    """schemas/tke.schema.json describes what we emit (a new field must be added there first): it
    proves the output stable, not that TKEStack accepts it."""
    ctx = t.context(MODEL, {"m1": {"password": "r00t", "private_key": "KEY"}}, step=3)
    data = json.loads(render(ctx))
    jsonschema.validate(data, SCHEMA)
    assert data["step"] == 3 and data["para"]["cluster"] == data["cluster"]
    m1 = data["cluster"]["spec"]["machines"][0]
    assert m1 == {"ip": "10.0.0.11", "port": 22, "username": "root", "password": "cjAwdA==", "privateKey": "S0VZ"}
    assert data["para"]["Config"]["basic"]["password"] == t.b64('pa"ss\\word')
    assert data["cluster"]["spec"]["features"]["ha"] == {"tke": {"vip": "10.0.0.100", "vrid": 101}}
    assert data["para"]["Config"]["ha"] == data["cluster"]["spec"]["features"]["ha"]


def test_thirdparty_and_none_modes():
    lb = json.loads(render(t.context({**MODEL, "settings": {**SETTINGS, "tke_ha_mode": "thirdparty",
                                                            "tke_vport": 8443}})))
    jsonschema.validate(lb, SCHEMA)
    assert lb["cluster"]["spec"]["features"]["ha"] == {"thirdParty": {"vip": "10.0.0.100", "vport": 8443}}
    single = {**MODEL, "groups": {"masters": ["m1"], "workers": [], "registry": ["m1"]},
              "settings": {**SETTINGS, "tke_ha_mode": "none"}}
    data = json.loads(render(t.context(single)))
    jsonschema.validate(data, SCHEMA)
    assert "ha" not in data["cluster"]["spec"]["features"] and "ha" not in data["para"]["Config"]
    assert data["cluster"]["spec"]["features"]["enableMasterSchedule"] is True


def test_external_etcd_endpoints():
    ext = {**MODEL, "groups": {**MODEL["groups"], "etcd": ["w1"]}}
    assert t.context(ext)["etcd"] == {"external": {
        "endpoints": ["https://10.0.0.14:2379"], "caFile": "/etc/kubernetes/pki/etcd/ca.crt",
        "certFile": "/etc/kubernetes/pki/apiserver-etcd-client.crt",
        "keyFile": "/etc/kubernetes/pki/apiserver-etcd-client.key"}}


def test_rendering_is_stable_and_step_is_kept():
    a = render(t.context(MODEL))
    assert a == render(t.context(MODEL))
    assert t.existing_step(a) == 0
    assert t.existing_step(a.replace('"step": 0', '"step": 5')) == 5
    assert t.existing_step("not json") == 0


def test_vrid():
    assert t.vrid("10.0.0.100") == 101 and t.vrid("10.0.0.254") == 255 and t.vrid("10.0.0.255") == 1
    assert t.vrid("10.0.0.100", 7) == 7


def test_external_etcd_endpoints_are_the_members_node_addresses():
    # a member reached over SSH at one address whose cluster traffic uses another (tke_node_ip):
    # etcd listens on, and its certificates name, the node address
    hosts = {**MODEL["hosts"], "w1": {**MODEL["hosts"]["w1"], "node_address": "10.1.0.14"}}
    ext = {**MODEL, "hosts": hosts, "groups": {**MODEL["groups"], "etcd": ["w1"]}}
    assert t.context(ext)["etcd"]["external"]["endpoints"] == ["https://10.1.0.14:2379"]


def test_the_registry_credential_is_the_one_the_registry_accepts():
    """Config.registry.tke: registry_user / registry_password (the registry's htpasswd), not the
    admin's when they differ; the admin's when the inventory sets none (the registry role's default)."""
    data = json.loads(render(t.context(MODEL, registry={"user": "puller", "password": "reg-Secret-0815"})))
    assert data["para"]["Config"]["registry"]["tke"]["username"] == "puller"
    assert data["para"]["Config"]["registry"]["tke"]["password"] == t.b64("reg-Secret-0815")
    assert data["para"]["Config"]["basic"]["password"] == t.b64('pa"ss\\word')
    default = json.loads(render(t.context(MODEL, registry={"user": "", "password": ""})))["para"]["Config"]
    assert default["registry"]["tke"] == {**default["registry"]["tke"], "username": "admin",
                                          "password": t.b64('pa"ss\\word')}


def test_network_device_is_the_interface_the_install_uses():
    """tke_network_interface when set; else the masters' interface as the precheck read it on the
    hosts (interfaces.json); empty until then (the validate phase contacts no host)."""
    assert t.context(MODEL)["network_device"] == ""
    same = {"m1": "ens3", "m2": "ens3", "m3": "ens3", "w1": "eth1"}
    ctx = t.context(MODEL, interfaces=same)
    assert (ctx["network_device"], ctx["network_device_warnings"]) == ("ens3", [])
    assert json.loads(render(ctx))["cluster"]["spec"]["networkDevice"] == "ens3"
    jsonschema.validate(json.loads(render(t.context(MODEL))), SCHEMA)
    mixed = t.context(MODEL, interfaces={**same, "m2": "bond0"})
    assert mixed["network_device"] == "ens3" and "m1: ens3, m2: bond0, m3: ens3" in mixed["network_device_warnings"][0]
    given = t.context({**MODEL, "settings": {**SETTINGS, "tke_network_interface": "br0"}}, interfaces=same)
    assert given["network_device"] == "br0"
    # a precheck of some hosts updates what earlier ones recorded; hosts gone from the inventory go
    assert t.merge_interfaces({"m1": "ens3", "old": "eth0", "m2": "ens3"}, {"m2": "ens4", "w1": "", "m3": "ens3"},
                              MODEL["hosts"]) == {"m1": "ens3", "m2": "ens4", "m3": "ens3"}
    assert t.load_interfaces(t.dump_interfaces(same)) == same and t.load_interfaces("") == {}

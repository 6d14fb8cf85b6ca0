"""tke.json against TKE's own validation rules (plugin_utils/tke_rules.py, facts read from
tkestack/tke 31e93ce): rendered for every sample inventory exactly as the tke_config action does,
it must raise no problem; each rule is shown to catch what it is about."""
import copy
import json
from pathlib import Path

import pytest
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from ansible.parsing.dataloader import DataLoader
from ansible.parsing.vault import VaultSecret, VaultSecretsContext
from ansible.inventory.manager import InventoryManager
from ansible.template import Templar, trust_as_template
from ansible.vars.manager import VariableManager

from ansible_collections.offline_pot.tke.plugins.action.tke_config import TEMPLATE, read_secrets
from ansible_collections.offline_pot.tke.plugins.module_utils import kubeadm_config as kc
from ansible_collections.offline_pot.tke.plugins.plugin_utils import inventory_model, inventory_rules, tke_config
from ansible_collections.offline_pot.tke.plugins.plugin_utils import tke_rules as r

TOP = Path(__file__).resolve().parents[4]

# the sandbox's key file is made by its first pack build, and a bare Templar has no lookup plugins:
# the pack's public key is no tke.json input, any valid one does
PUBKEY = {"tke_site_pack_pubkey": ed25519.Ed25519PrivateKey.generate().public_key().public_bytes(
    serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()}
SAMPLES = sorted(p.parent.name for p in (TOP / "inventories").glob("*/hosts.yml"))


def _role_defaults(role):
    """A role's defaults as a play loads them (its templates are trusted)."""
    data = yaml.safe_load((TOP / "roles" / role / "defaults" / "main.yml").read_text()) or {}
    return {k: trust_as_template(v) if isinstance(v, str) else v for k, v in data.items()}


def render_sample(sample):
    """(tke.json document, variables of the first master) as the validate phase renders them: the
    inventory with its vaulted group_vars, the tke role's defaults under it."""
    loader = DataLoader()
    secrets = [("default", VaultSecret((TOP / "inventories" / "vault-password.sample").read_bytes().strip()))]
    loader.set_vault_secrets(secrets)
    if VaultSecretsContext.current(optional=True) is None:   # once per process, as ansible-playbook does
        VaultSecretsContext.initialize(VaultSecretsContext(secrets))
    inventory = InventoryManager(loader=loader, sources=[str(TOP / "inventories" / sample / "hosts.yml")])
    variables = VariableManager(loader=loader, inventory=inventory)
    hostvars = {h.name: {**_role_defaults("tke"), **variables.get_vars(host=h), **PUBKEY} for h in inventory.get_hosts()}
    first = inventory.groups["masters"].get_hosts()[0].name
    task_vars = {**hostvars[first], "hostvars": hostvars}
    templar = Templar(loader=loader, variables=task_vars)
    model = inventory_model.build(task_vars, templar)
    assert [inventory_rules.format_problem(p) for p in inventory_rules.check(model)] == []
    secrets = read_secrets(model, hostvars, templar)
    for host in model["groups"]["masters"]:
        # the sample names a key file on the user's controller; here it is not there
        secrets[host] = secrets[host] or {"private_key": "-----BEGIN OPENSSH PRIVATE KEY-----\n"}
    ctx = tke_config.context(model, secrets)
    text = templar.copy_with_new_env(available_variables={"tke": ctx}).template(
        trust_as_template(Path(TEMPLATE).read_text()), escape_backslashes=False)
    return json.loads(tke_config.canonical(text)), Templar(loader=loader, variables=task_vars)


@pytest.mark.parametrize("sample", SAMPLES)
def test_sample_tke_json_passes_tkes_validation(sample):
    data, dummy = render_sample(sample)
    assert r.check(data) == []
    spec = data["cluster"]["spec"]
    assert "maxClusterServiceNum" not in spec["properties"] and spec["serviceCIDR"]
    assert r.installer_limits(data) == (["tke-installer refuses an external etcd (installer.go prepareCertificates): "
                                         "the collection installs it itself, tke.json records it"]
                                        if "external" in spec["etcd"] else [])


@pytest.mark.parametrize("sample", SAMPLES)
def test_masters_schedulable_in_tke_json_exactly_when_kubeadm_leaves_them_untainted(sample):
    """One value (tke_master_schedule) for tke.json and the control_plane role's kubeadm taints."""
    data, templar = render_sample(sample)
    tasks = yaml.safe_load((TOP / "roles" / "control_plane" / "tasks" / "settings.yml").read_text())
    facts = next(t["ansible.builtin.set_fact"] for t in tasks if "ansible.builtin.set_fact" in t)
    taints = templar.template(trust_as_template(facts["__control_plane_node"]["taints"]))
    node = {"name": "m1", "advertise_address": "192.0.2.11", "taints": taints}
    cluster = {"control_plane_endpoint": "api.tke.com:6443", "image_repository": "r.tke.com/library",
               "pod_cidr": "10.244.0.0/16", "service_cidr": "10.96.0.0/16"}
    init = kc.build("init", "1.30.4", cluster, node)[0]
    schedulable = data["cluster"]["spec"]["features"]["enableMasterSchedule"]
    assert (init["nodeRegistration"]["taints"] == []) is schedulable
    workers = yaml.safe_load((TOP / "inventories" / sample / "hosts.yml").read_text())["all"]["children"]
    assert schedulable is not bool((workers.get("workers") or {}).get("hosts"))


GOOD = {
    "para": {"Config": {"basic": {"username": "admin", "password": "cGFzcw=="}, "auth": {"tke": {"tenantID": "default"}},
                        "registry": {"tke": {"domain": "registry.tke.com"}}, "gateway": {"domain": "console.tke.com"}}},
    "cluster": {"metadata": {"name": "global"}, "spec": {
        "type": "Baremetal", "clusterCIDR": "10.244.0.0/16", "serviceCIDR": "10.96.0.0/16",
        "features": {"ipvs": True, "ha": {"tke": {"vip": "10.0.0.100", "vrid": 101}}},
        "properties": {"maxNodePodNum": 256},
        "machines": [{"ip": "10.0.0.11", "port": 22, "username": "root", "password": "cjAwdA=="}],
        "etcd": {"local": {}}}},
}


def _with(path, value):
    doc = copy.deepcopy(GOOD)
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc


def test_good_document_passes():
    assert r.check_cluster(GOOD["cluster"]) == [] and r.check_config(GOOD["para"]["Config"]) == []


SPEC = ("cluster", "spec")


@pytest.mark.parametrize("path,value,expected", [
    (SPEC + ("properties",), {"maxNodePodNum": 256, "maxClusterServiceNum": 65536},
     "cluster.spec.properties.maxClusterServiceNum: can't be used together with spec.serviceCIDR"),
    (SPEC + ("properties",), {"maxNodePodNum": 110}, "cluster.spec.properties.maxNodePodNum: 110 is not one of"),
    (SPEC + ("properties",), {}, "cluster.spec.properties.maxNodePodNum: required"),
    (SPEC + ("etcd",), {"external": {"endpoints": ["https://10.0.0.31:2379"], "certFile": "/c", "keyFile": "/k"}},
     "cluster.spec.etcd.external.caFile: required with https endpoints"),
    (SPEC + ("clusterCIDR",), "10.0.0.0/16", "cluster.spec.clusterCIDR: 10.0.0.0/16 contains node IP 10.0.0.11"),
    (SPEC + ("serviceCIDR",), "10.244.0.0/24", "cluster.spec.serviceCIDR: 10.244.0.0/24 overlaps clusterCIDR"),
    (SPEC + ("serviceCIDR",), "10.96.0.0/29", "cluster.spec.serviceCIDR: 10.96.0.0/29 must contain at least 10 IPs"),
    (SPEC + ("features", "ha"), {"tke": {"vip": "10.0.0.100", "vrid": 0}}, "cluster.spec.features.ha.tke.vrid: 0"),
    (SPEC + ("features", "ha"), {"thirdParty": {"vip": "lb", "vport": 8443}},
     "cluster.spec.features.ha.thirdParty.vip: 'lb' is not an IP address"),
    (SPEC + ("machines",), [{"ip": "10.0.0.11", "port": 22, "username": "root"}],
     "cluster.spec.machines[0]: must specify password or privateKey"),
    (("cluster", "metadata", "name"), "Global_1", "cluster.metadata.name: 'Global_1' is not a DNS label"),
    (SPEC + ("type",), "Kind", "cluster.spec.type: 'Kind' is not one of Baremetal"),
])
def test_cluster_rule_catches(path, value, expected):
    got = r.check_cluster(_with(path, value)["cluster"])
    assert len(got) == 1 and got[0].startswith(expected), got


def test_ipvs_needs_a_service_cidr_and_without_one_the_service_number_is_required():
    got = r.check_cluster(_with(SPEC + ("serviceCIDR",), KeyError)["cluster"])
    assert got == ["cluster.spec.properties.maxClusterServiceNum: required without spec.serviceCIDR, one of "
                   "[32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]",
                   "cluster.spec.features.ipvs: needs spec.serviceCIDR"]
    no_cidr = _with(SPEC + ("serviceCIDR",), KeyError)
    no_cidr["cluster"]["spec"]["features"]["ipvs"] = False
    no_cidr["cluster"]["spec"]["properties"]["maxClusterServiceNum"] = 65536
    assert r.check_cluster(no_cidr["cluster"]) == [
        "cluster.spec.properties.maxClusterServiceNum: 65536 is not one of "
        "[32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]"]


@pytest.mark.parametrize("config,expected", [
    ({"auth": {"tke": {}}, "registry": {"tke": {"domain": "registry.tke.com"}}},
     "para.Config.basic: username or password required"),
    ({"basic": {"username": "a", "password": "cA=="}, "registry": {"tke": {"domain": "registry.tke.com"}}},
     "para.Config.auth: tke auth or oidc auth required"),
    ({"basic": {"username": "a", "password": "cA=="}, "auth": {"tke": {"tenantID": "default"}}},
     "para.Config.registry: tke registry or third party registry required"),
    ({"basic": {"username": "a", "password": "cA=="}, "auth": {"tke": {"tenantID": "default"}},
      "registry": {"tke": {"domain": "bad_domain"}}}, "para.Config.registry.tke.domain: 'bad_domain'"),
])
def test_installer_request_rule_catches(config, expected):
    got = r.check_config(config)
    assert len(got) == 1 and got[0].startswith(expected), got

"""The validate phase on the controller: every bad inventory under tests/inventories/bad is
rejected with exactly the problems its `# expect:` lines name, and no host is contacted; the
sample inventories pass and render a tke.json that holds only the fields our own schema
(schemas/tke.schema.json: what we emit, not TKEStack's validation) pins, idempotently, never printed.

No test hosts are needed. "No host contacted" is proven, not assumed: every SSH or paramiko
connection attempt goes through a ProxyCommand that leaves a marker file and fails (so no
packet leaves the machine), and a control test shows that marker appears when a host IS contacted.
"""
import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from harness.playbook import run_playbook, TOP

PLAY = TOP / "install.yml"
BAD = sorted((TOP / "tests" / "inventories" / "bad").glob("*.yml"))
SAMPLES = ["single", "ha-keepalived", "ha-lb"]
VAULT = TOP / "inventories" / "vault-password.sample"
SCHEMA = json.loads((TOP / "schemas" / "tke.schema.json").read_text())


def guarded_env(marker: Path, minimal: bool = True) -> dict:
    proxy = f"sh -c 'touch {marker}; exit 1'"
    env = {"ANSIBLE_SSH_COMMON_ARGS": f"-o ProxyCommand=\"{proxy}\"",
           "ANSIBLE_PARAMIKO_PROXY_COMMAND": proxy, "ANSIBLE_TIMEOUT": "3"}
    if minimal:   # results as JSON, to read the problems list exactly
        env.update(ANSIBLE_STDOUT_CALLBACK="ansible.builtin.minimal", ANSIBLE_CALLBACK_RESULT_FORMAT="json")
    return env


def problems_of(output: str) -> list[str]:
    """The `problems` list of the failed validate_inventory result (minimal callback: JSON)."""
    start = output.index("FAILED! => ") + len("FAILED! => ")
    result, dummy = json.JSONDecoder().raw_decode(output[start:].lstrip())
    return result["problems"]


def expected(path: Path) -> list[str]:
    return re.findall(r"^# expect: (.*)$", path.read_text(), re.M)


def test_there_are_at_least_twenty_bad_inventories():
    assert len(BAD) >= 20
    assert all(expected(p) for p in BAD)


@pytest.mark.parametrize("inventory", BAD, ids=[p.stem for p in BAD])
def test_bad_inventory_is_rejected_with_exact_messages_and_no_host_contacted(inventory, tmp_path):
    marker = tmp_path / "contacted"
    inv = tmp_path / "hosts.yml"
    inv.write_text(inventory.read_text())
    run = run_playbook(PLAY, inv, env=guarded_env(marker))   # the whole install, no tags
    assert run.rc != 0, run.explain()
    assert problems_of(run.output) == expected(inventory), run.explain()
    assert not marker.exists(), "a host was contacted:\n" + run.explain()
    # the validation result is the run's only task result: nothing ran after it
    assert re.findall(r"^\S+ \| ([A-Z]+)", run.output, re.M) == ["FAILED"], run.explain()
    assert not (tmp_path / ".tke" / "tke.json").exists()


def test_validation_runs_whatever_tags_are_asked(tmp_path):
    marker = tmp_path / "contacted"
    inv = tmp_path / "hosts.yml"
    inv.write_text((TOP / "tests" / "inventories" / "bad" / "password_too_short.yml").read_text())
    run = run_playbook(PLAY, inv, "--tags", "precheck", "--limit", "w1", env=guarded_env(marker))
    assert run.rc != 0 and "tke_admin_password: 5 characters" in run.output, run.explain()
    assert not marker.exists(), run.explain()


# the playbooks that work on a site's hosts (each starts with playbooks/inventory_hosts.yml)
SITE_PLAYBOOKS = ["install", "upgrade", "certs", "remove_node", "reset", "adopt", "status", "etcd_backup",
                  "etcd_restore"]


@pytest.mark.parametrize("playbook", SITE_PLAYBOOKS)
def test_an_inventory_without_hosts_is_refused_not_a_run_of_skipped_plays(playbook, tmp_path):
    """A mistyped -i (Ansible only warns that it could not parse it) leaves no host: without the
    first play every play would match none and the run would end with rc 0, having done nothing."""
    marker = tmp_path / "contacted"
    run = run_playbook(TOP / "playbooks" / f"{playbook}.yml", tmp_path / "no-such-hosts.yml",
                       env=guarded_env(marker, minimal=False))
    assert run.rc != 0, run.explain()
    assert f"-i: the inventory ({tmp_path / 'no-such-hosts.yml'}) has no host" in run.output, run.explain()
    assert re.findall(r"^(?:fatal|ok|changed): \[(\S+)\]", run.output, re.M) == ["localhost"], run.explain()
    assert not marker.exists() and not (tmp_path / ".tke").exists(), run.explain()


def test_control_a_contacted_host_is_detected(tmp_path):
    """The guard works: a good inventory reaching precheck does try to connect, and is caught."""
    marker = tmp_path / "contacted"
    bad = (TOP / "tests" / "inventories" / "bad" / "password_too_short.yml").read_text()
    inv = tmp_path / "hosts.yml"
    inv.write_text(bad.replace("tke_admin_password: admin", "tke_admin_password: long-enough"))
    run = run_playbook(PLAY, inv, "--tags", "precheck", "--limit", "w1", env=guarded_env(marker))
    assert run.rc != 0 and "UNREACHABLE" in run.output, run.explain()
    assert marker.exists(), run.explain()


@pytest.mark.parametrize("sample", SAMPLES)
def test_sample_inventory_validates_and_renders_tke_json(sample, tmp_path):
    # copy the sample so its .tke state lands in tmp_path
    src = TOP / "inventories" / sample
    dst = tmp_path / sample
    for f in src.rglob("*.yml"):
        (dst / f.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
        (dst / f.relative_to(src)).write_text(f.read_text())
    marker = tmp_path / "contacted"
    env = guarded_env(marker, minimal=False)
    args = ("--tags", "validate", "--vault-password-file", str(VAULT), "-v")
    first = run_playbook(PLAY, dst / "hosts.yml", *args, env=env)
    assert first.rc == 0, first.explain()
    tke_json = dst / ".tke" / "tke.json"
    assert tke_json.stat().st_mode & 0o777 == 0o600
    data = json.loads(tke_json.read_text())
    jsonschema.validate(data, SCHEMA, format_checker=jsonschema.FormatChecker())
    # secrets are base64 in the file and appear nowhere in the output, even with -v
    admin_b64 = data["para"]["Config"]["basic"]["password"]
    assert admin_b64 and admin_b64 in tke_json.read_text()
    assert admin_b64 not in first.output and "Adm1n-Sample-Pass" not in first.output, first.explain()
    assert "R00t-Sample-Pass" not in first.output and "UjAwdC1TYW1wbGUtUGFzcw" not in first.output
    inv = yaml.safe_load((src / "hosts.yml").read_text())
    masters = list(inv["all"]["children"]["masters"]["hosts"])
    assert [m["ip"] for m in data["cluster"]["spec"]["machines"]] == \
        [inv["all"]["hosts"][m]["ansible_host"] for m in masters]
    assert data["para"]["cluster"] == data["cluster"] and data["step"] == 0
    mode = yaml.safe_load((src / "group_vars" / "all" / "main.yml").read_text())["tke_ha_mode"]
    ha = data["cluster"]["spec"]["features"].get("ha")
    assert {"none": None, "keepalived": "tke", "thirdparty": "thirdParty"}[mode] == (next(iter(ha)) if ha else None)
    if sample == "ha-lb":   # password auth over paramiko: the machine carries the base64 password
        assert data["cluster"]["spec"]["machines"][0]["password"] == "UjAwdC1TYW1wbGUtUGFzcw=="
    # re-render with unchanged inputs: nothing changes, not even the file's time
    mtime = tke_json.stat().st_mtime_ns
    second = run_playbook(PLAY, dst / "hosts.yml", *args, env=env)
    assert second.rc == 0 and "changed=0" in second.output.split("PLAY RECAP")[-1], second.explain()
    assert second.total("changed") == 0 and tke_json.stat().st_mtime_ns == mtime, second.explain()
    # the step recorded by the journal is kept across re-renders (one sample is enough)
    if sample != "single":
        assert not marker.exists(), "a host was contacted"
        return
    data["step"] = 7
    tke_json.write_text(json.dumps(data, indent=2) + "\n")
    third = run_playbook(PLAY, dst / "hosts.yml", *args, env=env)
    assert third.rc == 0 and json.loads(tke_json.read_text())["step"] == 7, third.explain()
    assert not marker.exists(), "a host was contacted"


def copy_sample(sample: str, tmp_path: Path) -> Path:
    src, dst = TOP / "inventories" / sample, tmp_path / sample
    for f in src.rglob("*.yml"):
        (dst / f.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
        (dst / f.relative_to(src)).write_text(f.read_text())
    return dst / "hosts.yml"


# -e key=value gives every value as a string; the validation types it by the argument spec
EXTRA_VARS = {"bool": "tke_resume=false", "int": "tke_api_port=6443", "int-max-pods": "tke_max_pods=256",
              "list": "tke_skip_phases=precheck,nodes", "str": "tke_cluster_name=site-b"}


def test_plain_extra_vars_are_typed_by_the_argument_specs(tmp_path):
    """All of them in one run (each one a string the validation would refuse if it did not type it)."""
    marker = tmp_path / "contacted"
    extras = [a for value in EXTRA_VARS.values() for a in ("-e", value)]
    run = run_playbook(PLAY, copy_sample("ha-keepalived", tmp_path), "--tags", "validate", *extras,
                       "--vault-password-file", str(VAULT), env=guarded_env(marker, minimal=False))
    assert run.rc == 0, run.explain()
    assert not marker.exists(), "a host was contacted"


def test_a_plain_extra_var_of_the_wrong_type_is_refused_by_name(tmp_path):
    marker = tmp_path / "contacted"
    run = run_playbook(PLAY, copy_sample("ha-keepalived", tmp_path), "--tags", "validate", "-e", "tke_max_pods=many",
                       "--vault-password-file", str(VAULT), env=guarded_env(marker))
    assert run.rc != 0, run.explain()
    assert any("tke_max_pods" in p and "int" in p for p in problems_of(run.output)), run.explain()
    assert not marker.exists()

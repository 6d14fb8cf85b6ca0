"""Every role's own defaults pass its argument specification. install.yml's phases include their
roles without Ansible's per-role argument check (roles/tke/tasks/phase.yml: the validate phase
checked the inventory's values before any host was touched), so a default whose type drifted from
its spec would otherwise go unnoticed there. A default that is a template is typed when a play
renders it (it reads the host's facts and groups), not here."""
from pathlib import Path

import pytest
import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

TOP = Path(__file__).resolve().parents[2]
ROLES = sorted(p.parent.parent for p in (TOP / "roles").glob("*/meta/argument_specs.yml"))


def literal(value):
    """A value with no Jinja in it, anywhere inside."""
    if isinstance(value, str):
        return "{{" not in value and "{%" not in value
    if isinstance(value, dict):
        return all(literal(v) for v in value.values())
    if isinstance(value, list):
        return all(literal(v) for v in value)
    return True


def test_the_roles_are_found():
    assert len(ROLES) >= 15, ROLES


@pytest.mark.parametrize("role", ROLES, ids=[r.name for r in ROLES])
def test_the_literal_defaults_pass_every_entry_point_of_the_role(role):
    defaults_file = role / "defaults" / "main.yml"
    defaults = yaml.safe_load(defaults_file.read_text()) or {} if defaults_file.is_file() else {}
    specs = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    checked = 0
    for entry, spec in specs.items():
        # (a required option is its caller's to give, not a default)
        options = {k: {a: v for a, v in o.items() if a != "required"} for k, o in (spec.get("options") or {}).items()}
        given = {k: v for k, v in defaults.items() if k in options and literal(v)}
        result = ArgumentSpecValidator(options).validate(given)
        assert result.error_messages == [], (entry, result.error_messages)
        checked += len(given)
    # a role with options and literal defaults had them checked (not an empty loop)
    assert checked > 0 or not any(literal(v) for v in defaults.values()), role.name

"""Typing of -e key=value strings by the roles' argument specs (plugin_utils/inventory_model.py)."""
import re
from pathlib import Path

from ansible_collections.offline_pot.tke.plugins.plugin_utils import inventory_model as im


def test_extra_var_strings_are_typed_by_the_tke_spec():
    typed = im.typed({"tke_resume": "false", "tke_api_port": "6443", "tke_skip_phases": "precheck,nodes",
                      "tke_cluster_name": "site-b", "tke_unknown": "1"}, im.role_specs()["tke"])
    assert typed == {"tke_resume": False, "tke_api_port": 6443, "tke_skip_phases": ["precheck", "nodes"],
                     "tke_cluster_name": "site-b", "tke_unknown": "1"}


def test_a_value_that_does_not_convert_stays_as_given():
    assert im.typed({"tke_max_pods": "many"}, im.role_specs()["tke"]) == {"tke_max_pods": "many"}


def test_one_setting():
    assert im.tke_setting("tke_resume", "no") is False
    assert im.tke_setting("tke_resume", True) is True


def test_the_derived_settings_validate_leaves_out_are_the_tke_roles_derived_block():
    """One list: inventory_model.DERIVED_SETTINGS names exactly the settings of the tke role's
    "Derived settings" block (roles/tke/defaults/main.yml), so a new derived setting is not
    templated by validate before the rules have named a bad input."""
    text = (Path(__file__).resolve().parents[4] / "roles" / "tke" / "defaults" / "main.yml").read_text()
    block = text.split("# ---- Derived settings", 1)[1]
    assert set(re.findall(r"^(tke_\w+):", block, re.M)) == set(im.DERIVED_SETTINGS)

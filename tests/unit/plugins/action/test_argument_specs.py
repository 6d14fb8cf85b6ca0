"""Every action plugin checks its arguments with the one base class, against the options its
documentation stub (plugins/modules/<name>.py) declares."""
import dataclasses
import importlib
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from ansible.errors import AnsibleActionFail

from ansible_collections.offline_pot.tke.plugins.plugin_utils import k8s_pki
from ansible_collections.offline_pot.tke.plugins.plugin_utils.action_module import ActionModuleBase

PLUGINS = Path(__file__).resolve().parents[4] / "plugins"
ACTIONS = sorted(p.stem for p in (PLUGINS / "action").glob("*.py") if not p.stem.startswith("_"))


def _action(name):
    return importlib.import_module(f"ansible_collections.offline_pot.tke.plugins.action.{name}").ActionModule


def _documented_options(name):
    text = (PLUGINS / "modules" / f"{name}.py").read_text()
    start = text.index('DOCUMENTATION = r"""') + len('DOCUMENTATION = r"""')
    options = yaml.safe_load(text[start:text.index('"""', start)]).get("options") or {}
    # options the action plugin sets for its module (documented as "Internal, ...") are no task's
    return {k: v for k, v in options.items() if not " ".join(v.get("description") or []).startswith("Internal")}


def _normal(options, key):
    """name -> the fields that must agree, in one form (documentation: suboptions; spec: options)."""
    out = {}
    for name, o in (options or {}).items():
        out[name] = {"type": o.get("type", "str"), "required": bool(o.get("required", False)),
                     "default": o.get("default"), "choices": o.get("choices"), "elements": o.get("elements"),
                     "options": _normal(o.get(key), key) if o.get(key) else None}
    return out


def test_every_action_plugin_is_documented():
    assert ACTIONS and all((PLUGINS / "modules" / f"{a}.py").is_file() for a in ACTIONS)


@pytest.mark.parametrize("name", ACTIONS)
def test_action_plugin_checks_its_arguments_as_documented(name):
    action = _action(name)
    assert issubclass(action, ActionModuleBase)
    assert action.ARGUMENT_SPEC, f"{name}: no argument spec"
    assert not getattr(action, "_VALID_ARGS", None), f"{name}: the spec checks the arguments, not _VALID_ARGS"
    assert _normal(action.ARGUMENT_SPEC, "options") == _normal(_documented_options(name), "suboptions")


def test_k8s_pki_cluster_defaults_are_the_authoritys():
    spec = _action("k8s_pki").ARGUMENT_SPEC["cluster"]["options"]
    fields = {f.name: f for f in dataclasses.fields(k8s_pki.Cluster)}
    assert set(spec) == set(fields)
    for name, f in fields.items():
        if f.default is not dataclasses.MISSING:
            assert spec[name]["default"] == f.default, name
        elif f.default_factory is not dataclasses.MISSING:
            assert spec[name]["default"] == f.default_factory(), name


def _validate(name, args):
    action = _action(name).__new__(_action(name))
    action._task = SimpleNamespace(args=args, action=f"offline_pot.tke.{name}")
    return action.validated_args()


def test_bad_arguments_fail_naming_the_option():
    with pytest.raises(AnsibleActionFail, match=r"offline_pot.tke.install_phase: .*state"):
        _validate("install_phase", {"phase": "pki", "state": "finished"})
    with pytest.raises(AnsibleActionFail, match=r"state is done but all of the following are missing: phase"):
        _validate("install_phase", {"state": "done"})
    assert _validate("install_phase", {"state": "forget", "hosts": ["h3"]})["hosts"] == ["h3"]
    with pytest.raises(AnsibleActionFail, match=r"tpyo"):
        _validate("tke_config", {"tpyo": 1})
    with pytest.raises(AnsibleActionFail, match=r"cluster.*bogus|bogus.*cluster"):
        _validate("k8s_pki", {"pki_dir": "/x", "cluster": {"masters": [{"name": "m"}], "bogus": 1}})
    with pytest.raises(AnsibleActionFail, match=r"mode"):
        _validate("pki_distribute", {"pki_dir": "/x", "files": [{"src": "ca.crt", "dest": "/etc/ca.crt"}]})


def test_arguments_are_converted_and_completed_with_fresh_defaults():
    cluster = {"masters": [{"name": "m"}], "api_port": "7443", "control_plane_endpoint": "api.tke.com:6443"}
    args = _validate("k8s_pki", {"pki_dir": "~/pki", "cluster": cluster, "force": "ca, apiserver"})
    assert args["cluster"]["api_port"] == 7443 and args["cluster"]["key_type"] == "rsa"
    assert args["force"] == ["ca", " apiserver"] and not args["pki_dir"].startswith("~")  # k8s_pki strips
    args["cluster"]["nodes"].append({"name": "n"})
    assert _validate("k8s_pki", {"pki_dir": "/x", "cluster": {"masters": [{"name": "m"}], "control_plane_endpoint": "e:6443"}})["cluster"]["nodes"] == []
    assert _validate("tke_config", {"step": "3"})["step"] == 3

"""args.run_module, the one run of every k8s_* module: work's result exits the module; an API or
object error (or one the module names) fails it with its message after the prefix and what work
had done by then; any other error is not swallowed."""
import json

import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils.k8s import args
from ansible_collections.offline_pot.tke.plugins.module_utils.k8s.client import ApiError
from ansible_collections.offline_pot.tke.plugins.module_utils.k8s.service import ObjectError, Objects


class Exited(Exception):
    pass


class FakeModule:
    check_mode = True

    def __init__(self, kubeconfig):
        self.params = {"kubeconfig": str(kubeconfig), "context": None, "request_timeout": 5}
        self.ended = None

    def exit_json(self, **kw):
        self.ended = ("exit", kw)
        raise Exited()

    def fail_json(self, **kw):
        self.ended = ("fail", kw)
        raise Exited()


@pytest.fixture()
def module(tmp_path):
    cfg = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
           "clusters": [{"name": "k", "cluster": {"server": "https://192.0.2.1:6443", "insecure-skip-tls-verify": True}}],
           "users": [{"name": "u", "user": {"token": "t"}}],
           "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}]}
    (tmp_path / "kubeconfig").write_text(json.dumps(cfg))
    return FakeModule(tmp_path / "kubeconfig")


def run(module, work, **kw):
    with pytest.raises(Exited):
        args.run_module(module, work, **kw)
    return module.ended


def test_the_result_of_work_exits_the_module_with_the_service_in_the_modules_check_mode(module):
    seen = {}

    def work(svc):
        seen.update(svc=svc)
        return {"changed": False, "resources": []}

    assert run(module, work, gone_timeout=7) == ("exit", {"changed": False, "resources": []})
    assert isinstance(seen["svc"], Objects) and seen["svc"].check_mode and seen["svc"].gone_timeout == 7


@pytest.mark.parametrize("error", [ApiError(403, {"message": "forbidden"}, "GET", "/api/v1/nodes"),
                                   ObjectError("Deployment default/web: no such kind")])
def test_an_api_or_object_error_fails_with_the_prefix_and_what_was_done(module, error):
    done = {"deleted": []}

    def work(svc):
        done["deleted"].append("ConfigMap default/a")
        raise error

    kind, kw = run(module, work, done=done, prefix="Node n1: ")
    assert kind == "fail" and kw["msg"] == f"Node n1: {error}" and kw["deleted"] == ["ConfigMap default/a"]


def test_only_the_errors_it_is_given_besides(module):
    class Rollout(Exception):
        pass

    def work(svc):
        raise Rollout("DaemonSet kube-flannel/ds: rollout failed")

    assert run(module, work, errors=(Rollout,)) == ("fail", {"msg": "DaemonSet kube-flannel/ds: rollout failed"})
    with pytest.raises(ZeroDivisionError):
        args.run_module(module, lambda svc: 1 / 0)

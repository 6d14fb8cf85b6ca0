import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils.k8s.client import ApiError
from ansible_collections.offline_pot.tke.plugins.module_utils.k8s.resource import Discovery, Resource


@pytest.mark.parametrize("api_version,name,namespaced,ns,obj,expected", [
    ("v1", "pods", True, "kube-system", "p 1", "/api/v1/namespaces/kube-system/pods/p%201"),
    ("apps/v1", "daemonsets", True, "kube-flannel", None, "/apis/apps/v1/namespaces/kube-flannel/daemonsets"),
    ("apps/v1", "daemonsets", True, None, None, "/apis/apps/v1/daemonsets"),
    ("v1", "nodes", False, "ignored", "m1", "/api/v1/nodes/m1"),
])
def test_paths(api_version, name, namespaced, ns, obj, expected):
    assert Resource(api_version, "K", name, namespaced).path(ns, obj) == expected


class Answers:
    """Discovery answers by path, counting requests (no server: the client's one method)."""

    def __init__(self, answers):
        self.answers, self.calls = answers, []

    def request(self, method, path, **_):
        self.calls.append(path)
        answer = self.answers.get(path)
        if answer is None:
            raise ApiError(404, {"reason": "NotFound"})
        return answer


def test_discovery_skips_subresources_caches_and_refreshes_once_on_a_miss():
    api = Answers({"/apis/apps/v1": {"resources": [
        {"name": "daemonsets", "kind": "DaemonSet", "namespaced": True},
        {"name": "daemonsets/status", "kind": "DaemonSet", "namespaced": True}]}})
    d = Discovery(api)
    assert d.resource("apps/v1", "DaemonSet").name == "daemonsets"
    assert d.resource("apps/v1", "DaemonSet").namespaced
    assert api.calls == ["/apis/apps/v1"]
    with pytest.raises(ApiError, match="no kind Deployment in apps/v1"):
        d.resource("apps/v1", "Deployment")
    assert api.calls == ["/apis/apps/v1"] * 2   # one refresh for the miss
    with pytest.raises(ApiError, match="no kind IPPool in crd.projectcalico.org/v1"):
        d.resource("crd.projectcalico.org/v1", "IPPool")

from ansible_collections.offline_pot.tke.plugins.module_utils.k8s import drain


def pod(name, owner=None, phase="Running", volumes=(), mirror=False):
    meta = {"name": name, "namespace": "default", "uid": name}
    if owner:
        meta["ownerReferences"] = [{"kind": owner, "name": f"{name}-owner", "controller": True}]
    if mirror:
        meta["annotations"] = {drain.MIRROR_ANNOTATION: "x"}
    return {"metadata": meta, "spec": {"volumes": list(volumes)}, "status": {"phase": phase}}


def test_daemonset_and_mirror_pods_stay_others_are_evicted():
    plan = drain.classify([pod("ds", "DaemonSet"), pod("static", mirror=True), pod("web", "ReplicaSet"),
                           pod("done", phase="Succeeded")])
    assert [drain.name_of(p) for p in plan["evict"]] == ["default/web", "default/done"]
    assert plan["ignore"] == {"default/ds": "managed by DaemonSet ds-owner",
                              "default/static": "mirror pod (static pod of the kubelet)"}
    assert plan["blocking"] == {}


def test_unmanaged_and_emptydir_pods_block_unless_allowed():
    pods = [pod("bare"), pod("cache", "StatefulSet", volumes=[{"name": "c", "emptyDir": {}}])]
    plan = drain.classify(pods)
    assert sorted(plan["blocking"]) == ["default/bare", "default/cache"] and plan["evict"] == []
    assert "force=true" in plan["blocking"]["default/bare"]
    assert "delete_emptydir_data=true" in plan["blocking"]["default/cache"]
    plan = drain.classify(pods, force=True, delete_emptydir_data=True)
    assert len(plan["evict"]) == 2 and plan["blocking"] == {}


def test_a_non_controller_owner_does_not_count():
    p = pod("x")
    p["metadata"]["ownerReferences"] = [{"kind": "DaemonSet", "name": "d", "controller": False}]
    assert "default/x" in drain.classify([p])["blocking"]


def test_eviction_body_and_cordon_patch():
    assert drain.eviction(pod("web")) == {"apiVersion": "policy/v1", "kind": "Eviction",
                                          "metadata": {"name": "web", "namespace": "default"}}
    assert drain.cordon_patch() == {"spec": {"unschedulable": True}}
    assert drain.cordon_patch(False) == {"spec": {"unschedulable": None}}
    assert drain.is_cordoned({"spec": {"unschedulable": True}}) and not drain.is_cordoned({})

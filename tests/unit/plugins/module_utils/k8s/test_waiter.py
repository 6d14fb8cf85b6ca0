import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils.k8s import waiter


def ds(generation=1, observed=1, want=5, updated=5, available=5):
    return {"kind": "DaemonSet", "metadata": {"name": "kube-flannel-ds", "namespace": "kube-flannel",
                                              "generation": generation},
            "status": {"observedGeneration": observed, "desiredNumberScheduled": want,
                       "updatedNumberScheduled": updated, "numberAvailable": available}}


def node(name, status="True", reason=""):
    return {"kind": "Node", "metadata": {"name": name},
            "status": {"conditions": [{"type": "MemoryPressure", "status": "False"},
                                      {"type": "Ready", "status": status, "reason": reason}]}}


def test_daemonset_rollout_rule():
    assert waiter.daemonset_rolled_out(ds())[0]
    assert not waiter.daemonset_rolled_out(ds(generation=2))[0]       # controller has not seen the spec
    assert not waiter.daemonset_rolled_out(ds(available=3))[0]
    assert not waiter.daemonset_rolled_out(ds(updated=4))[0]
    # no node fits: nothing to roll out (kubectl rollout status: done)
    assert waiter.daemonset_rolled_out(ds(want=0, updated=0, available=0))[0]
    ondelete = dict(ds(available=0), spec={"updateStrategy": {"type": "OnDelete"}})
    assert waiter.daemonset_rolled_out(ondelete)[0]
    assert waiter.daemonset_rolled_out(ds(available=3))[1] == "3/5 pods available, 5 updated"


def test_deployment_rule():
    dep = {"kind": "Deployment", "metadata": {"generation": 2}, "spec": {"replicas": 2},
           "status": {"observedGeneration": 2, "updatedReplicas": 2, "availableReplicas": 1}}
    assert not waiter.deployment_available(dep)[0]
    dep["status"]["availableReplicas"] = 2
    assert waiter.deployment_available(dep) == (True, "2/2 replicas available, 2 updated")
    # a replica of the old ReplicaSet still there
    dep["status"]["replicas"] = 3
    assert waiter.deployment_available(dep) == (False, "2/2 replicas available, 2 updated, 1 old pending termination")
    # past its progress deadline: no use waiting
    dep["metadata"]["name"] = "web"
    dep["status"]["conditions"] = [{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                                    "message": 'ReplicaSet "web-5d" has timed out progressing.'}]
    with pytest.raises(waiter.RolloutFailed, match=r'deployment "web" exceeded its progress deadline \(2/2 replicas '
                       r'available, 2 updated, 1 old pending termination: ReplicaSet "web-5d" has timed out progressing.\)'):
        waiter.deployment_available(dep)
    dep["metadata"]["generation"] = 3       # a new spec not observed yet: waited for, not failed
    assert not waiter.deployment_available(dep)[0]


def sts(replicas=2, ready=2, updated=2, generation=1, observed=1, strategy=None, **status):
    return {"kind": "StatefulSet", "metadata": {"name": "redis", "namespace": "shop", "generation": generation},
            "spec": {"replicas": replicas, **({"updateStrategy": strategy} if strategy is not None else {})},
            "status": {"observedGeneration": observed, "readyReplicas": ready, "updatedReplicas": updated, **status}}


def test_statefulset_rule():
    assert waiter.statefulset_rolled_out(sts()) == (True, "2/2 replicas ready, 2 updated")
    assert not waiter.statefulset_rolled_out(sts(ready=1))[0]
    assert not waiter.statefulset_rolled_out(sts(generation=2))[0]        # spec not observed yet
    assert not waiter.statefulset_rolled_out(sts(observed=0, generation=0))[0]
    # no rollingUpdate settings: the revisions decide
    assert not waiter.statefulset_rolled_out(sts(currentRevision="r1", updateRevision="r2"))[0]
    assert waiter.statefulset_rolled_out(sts(currentRevision="r2", updateRevision="r2"))[0]
    # a partitioned roll out: replicas - partition updated is done, whatever the revisions
    part = {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}
    assert waiter.statefulset_rolled_out(sts(updated=1, strategy=part, currentRevision="a", updateRevision="b"))[0]
    assert not waiter.statefulset_rolled_out(sts(updated=0, strategy=part))[0]
    # OnDelete has no roll out to wait for
    assert waiter.statefulset_rolled_out(sts(ready=0, strategy={"type": "OnDelete"}))[0]
    assert waiter.pending([sts(ready=0)]) == [("StatefulSet shop/redis", "rolled out", "0/2 replicas ready, 2 updated")]


def test_node_rule():
    assert waiter.node_ready(node("m1")) == (True, "Ready=True")
    assert waiter.node_ready(node("w1", "False", "KubeletNotReady")) == (False, "Ready=False: KubeletNotReady")
    assert waiter.node_ready({"kind": "Node", "metadata": {"name": "x"}}) == (False, "no Ready condition yet")


def test_pending_names_each_object_what_and_state():
    waiting = waiter.pending([ds(available=4), node("m1"), node("w2", "False", "KubeletNotReady")])
    assert waiter.describe(waiting) == (
        "DaemonSet kube-flannel/kube-flannel-ds to be rolled out (4/5 pods available, 5 updated); "
        "Node w2 to be Ready (Ready=False: KubeletNotReady)")


def test_wait_polls_until_ready_or_timeout():
    now = [0.0]
    answers = iter([["x"], ["x"], []])
    waiting, waited = waiter.wait(lambda: next(answers), timeout=60, delay=5,
                                  clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    assert waiting == [] and waited == 10
    now[0] = 0.0
    waiting, waited = waiter.wait(lambda: ["still"], timeout=12, delay=5,
                                  clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    assert waiting == ["still"] and waited == 12

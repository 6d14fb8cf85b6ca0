import json

import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils.k8s import objects


def cm(data, **meta):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "kube-flannel-cfg", "namespace": "kube-flannel", **meta}, "data": data}


def live_of(desired, **extra):
    """What the API server returns after an apply: the object with defaults and bookkeeping."""
    out = objects.annotated(desired)
    out["metadata"].update(uid="u1", resourceVersion="7", creationTimestamp="2026-01-01T00:00:00Z")
    out.update(extra)
    return out


@pytest.mark.parametrize("desired,live,expected", [
    ({"a": 1}, {"a": 1, "b": 2}, True),
    ({"a": {"b": [1, {"c": 2}]}}, {"a": {"b": [1, {"c": 2, "d": 3}], "x": 1}}, True),
    ({"a": [1, 2]}, {"a": [1, 2, 3]}, False),              # a list is replaced whole: same length
    ({"a": 1}, {"a": "1"}, False),                         # an integer is not its string
    ({"a": True}, {"a": 1}, False),
    ({"a": None}, {}, True),
    ({"a": {}}, {"a": {}}, True),
    ({"a": {}}, {}, False),
])
def test_is_subset(desired, live, expected):
    assert objects.is_subset(desired, live) is expected


def test_unchanged_when_live_has_only_server_additions():
    desired = cm({"net-conf.json": "{}"})
    differs, dummy = objects.needs_update(desired, live_of(desired, status={"x": 1}))
    assert not differs


def test_changed_value_gives_a_merge_patch_with_the_new_annotation():
    old = cm({"a": "1"})
    new = cm({"a": "2"})
    differs, patch = objects.needs_update(new, live_of(old))
    assert differs
    assert patch["data"] == {"a": "2"}
    assert json.loads(patch["metadata"]["annotations"][objects.LAST_APPLIED]) == new


def test_field_removed_since_last_apply_is_nulled_and_detected():
    old = cm({"a": "1", "b": "2"}, labels={"app": "flannel", "tier": "node"})
    new = cm({"a": "1"}, labels={"app": "flannel"})
    live = live_of(old)
    differs, patch = objects.needs_update(new, live)
    assert differs
    assert patch["data"] == {"a": "1", "b": None}
    assert patch["metadata"]["labels"] == {"app": "flannel", "tier": None}
    after = objects.merge(live, patch)
    assert after["data"] == {"a": "1"} and after["metadata"]["labels"] == {"app": "flannel"}
    assert not objects.needs_update(new, after)[0]           # one apply converges


def test_removed_annotation_keeps_last_applied():
    old = cm({"a": "1"}, annotations={"note": "x"})
    new = cm({"a": "1"})
    differs, patch = objects.needs_update(new, live_of(old))
    assert differs
    assert patch["metadata"]["annotations"]["note"] is None
    assert objects.LAST_APPLIED in patch["metadata"]["annotations"]


def test_field_someone_else_added_is_left_alone():
    desired = cm({"a": "1"})
    live = live_of(desired)
    live["data"]["extra"] = "theirs"
    assert not objects.needs_update(desired, live)[0]


def test_merge_rfc7386_examples():
    # RFC 7386 section 3 example
    target = {"title": "Goodbye!", "author": {"givenName": "John", "familyName": "Doe"},
              "tags": ["example", "sample"], "content": "This will be unchanged"}
    patch = {"title": "Hello!", "phoneNumber": "+01-123-456-7890", "author": {"familyName": None},
             "tags": ["example"]}
    assert objects.merge(target, patch) == {
        "title": "Hello!", "author": {"givenName": "John"}, "tags": ["example"],
        "content": "This will be unchanged", "phoneNumber": "+01-123-456-7890"}


def test_secrets_never_displayed():
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "c2VjcmV0"},
              "stringData": {"p": "secret"}}
    shown = objects.for_display(objects.annotated(secret))
    assert "secret" not in json.dumps(shown).replace('"Secret"', "") and "c2VjcmV0" not in json.dumps(shown)
    assert "c2VjcmV0" not in json.dumps(objects.redact(objects.annotated(secret)))


def test_for_display_drops_bookkeeping():
    shown = objects.for_display(live_of(cm({"a": "1"})))
    assert shown["metadata"] == {"name": "kube-flannel-cfg", "namespace": "kube-flannel"}


def test_project_keeps_fields_of_interest():
    live = {"a": {"b": 1, "c": 2}, "d": 3, "e": [1]}
    assert objects.project(live, {"a": {"b": 0}, "e": None, "x": 1}) == {"a": {"b": 1}, "e": [1]}


def test_identity_key_labels_selector():
    obj = cm({})
    assert objects.identity(obj) == "ConfigMap kube-flannel/kube-flannel-cfg"
    assert objects.identity({"kind": "Node", "metadata": {"name": "m1"}}) == "Node m1"
    assert objects.key(obj) == ("v1", "ConfigMap", "kube-flannel", "kube-flannel-cfg")
    assert objects.with_labels(obj, {"x": "y"})["metadata"]["labels"] == {"x": "y"}
    assert "labels" not in obj["metadata"]
    assert objects.selector({"b": "2", "a": "1"}) == "a=1,b=2"
    assert objects.selector("app=flannel") == "app=flannel"
    assert objects.parse_label("a=b") == {"a": "b"}
    with pytest.raises(ValueError):
        objects.parse_label("a")


def test_api_failure_names_object_reason_and_field():
    from ansible_collections.offline_pot.tke.plugins.module_utils.k8s.client import ApiError
    e = ApiError(422, {"reason": "Invalid", "message": "DaemonSet.apps \"kube-flannel-ds\" is invalid",
                       "details": {"causes": [{"field": "spec.template.spec.containers[0].ports[0].containerPort",
                                               "message": "Invalid value: \"string\": must be an integer"}]}})
    msg = objects.api_failure("DaemonSet kube-flannel/kube-flannel-ds", e)
    assert msg.startswith("DaemonSet kube-flannel/kube-flannel-ds: Invalid: ")
    assert "spec.template.spec.containers[0].ports[0].containerPort: Invalid value" in msg


def test_validate_shape():
    assert objects.validate_shape({"kind": "ConfigMap", "metadata": {}}) == [
        "ConfigMap ?: apiVersion is missing", "ConfigMap ?: metadata.name is missing"]
    assert objects.validate_shape(cm({})) == []


def secret(**fields):
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "shop"},
            "type": "Opaque", **fields}


def test_a_secrets_record_names_its_keys_not_their_values():
    desired = secret(stringData={"p": "pw-1"}, data={"k": "c2VjcmV0"})
    record = objects.annotated(desired)["metadata"]["annotations"][objects.LAST_APPLIED]
    assert "pw-1" not in record and "c2VjcmV0" not in record
    assert json.loads(record)["stringData"] == {"p": objects.REDACTED} and json.loads(record)["type"] == "Opaque"
    # a key dropped since is still found by the record
    differs, patch = objects.needs_update(secret(data={"j": "eA=="}), live_of(desired))
    assert differs and patch["data"] == {"k": None, "j": "eA=="} and patch["stringData"] is None


def test_an_older_record_is_rewritten_once():
    desired = secret(data={"k": "c2VjcmV0"})
    live = live_of(desired)
    assert not objects.needs_update(desired, live)[0]
    # as written before records named keys only: the values in the annotation
    live["metadata"]["annotations"][objects.LAST_APPLIED] = json.dumps(desired)
    differs, patch = objects.needs_update(desired, live)
    assert differs and "c2VjcmV0" not in patch["metadata"]["annotations"][objects.LAST_APPLIED]
    assert not objects.needs_update(desired, objects.merge(live, patch))[0]


def test_secret_values_split_from_the_objects_and_joined_back():
    objs = [cm({"a": "1"}), secret(stringData={"p": "pw"}), dict(secret(type="kubernetes.io/tls"), metadata={"name": "tls", "namespace": "shop"}),
            dict(secret(data={"k": "dg=="}), metadata={"name": "bare"})]
    bare, values = objects.split_secrets(objs)
    assert values == {"shop/s": {"stringData": {"p": "pw"}}, "/bare": {"data": {"k": "dg=="}}}
    assert "pw" not in json.dumps(bare) and "dg==" not in json.dumps(bare)
    assert bare[0] == objs[0] and bare[2] == objs[2]          # no values: as given
    assert objects.join_secrets(bare, values) == objs
    with pytest.raises(ValueError, match="secrets: shop/other is no Secret of objects"):
        objects.join_secrets(bare, {"shop/other": {"data": {}}})


def test_a_changed_secret_shows_as_changed_never_as_itself():
    desired = secret(stringData={"p": "new-pw"})
    live = live_of(secret(stringData={"p": "old-pw"}), data={"p": "b2xkLXB3", "q": "cQ=="})
    shape = objects.display_shape(desired, live)
    stored = dict(live, data={"p": "bmV3LXB3", "q": "cQ=="})
    before, after = objects.display_pair(objects.project(live, shape), objects.project(stored, shape))
    text = json.dumps([before, after])
    assert not [v for v in ("new-pw", "old-pw", "b2xkLXB3", "bmV3LXB3", "cQ==") if v in text], text
    assert before["data"] == {"p": objects.REDACTED, "q": objects.REDACTED}
    assert after["data"] == {"p": objects.REDACTED + " (changed)", "q": objects.REDACTED}


def test_only_a_secrets_record_is_rewritten_when_nothing_else_differs():
    # an object another tool created, holding what is desired: left alone, no record written
    desired = cm({"a": "1"})
    assert not objects.needs_update(desired, dict(desired, metadata=dict(desired["metadata"], uid="u1")))[0]
    # a Secret without the record this apply writes gets it (its values are out of the record)
    s = secret(data={"k": "dg=="})
    assert objects.needs_update(s, dict(s, metadata=dict(s["metadata"], uid="u1")))[0]

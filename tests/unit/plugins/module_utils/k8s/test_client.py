import os
import stat

from ansible_collections.offline_pot.tke.plugins.module_utils.k8s import client as k8s_client


def test_inline_keys_live_in_private_files_removed_on_close():
    conn = {"server": "https://127.0.0.1:1", "ca": {"data": b"ca"}, "cert": {"data": b"cert"},
            "key": {"data": b"key"}, "token": None}
    with k8s_client.Client(conn) as c:
        tmp = c._tmp
        assert stat.S_IMODE(os.stat(tmp).st_mode) == 0o700
        for name, data in (("ca", b"ca"), ("cert", b"cert"), ("key", b"key")):
            path = os.path.join(tmp, name)
            assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
            with open(path, "rb") as fh:
                assert fh.read() == data
    assert not os.path.exists(tmp)


def test_unreachable_api_is_an_api_error_naming_the_server():
    conn = {"server": "https://127.0.0.1:9", "ca": None, "cert": None, "key": None, "token": "s3cr3t-token"}
    with k8s_client.Client(conn, timeout=2) as c:
        try:
            c.request("GET", "/api/v1")
        except k8s_client.ApiError as e:
            assert e.code == 0 and e.reason == "Unreachable" and "https://127.0.0.1:9" in str(e)
            assert "s3cr3t-token" not in str(e)
        else:
            raise AssertionError("no error from a closed port")


def test_status_object_reason_message_and_causes():
    status = {"kind": "Status", "reason": "Invalid", "message": 'DaemonSet.apps "x" is invalid',
              "details": {"causes": [{"field": "spec.template.spec.containers[0].ports[0].containerPort",
                                      "message": "Invalid value: \"http\""}]}}
    e = k8s_client.ApiError(422, status)
    assert e.describe() == 'Invalid: DaemonSet.apps "x" is invalid'
    assert e.causes[0]["field"].endswith("containerPort")

"""module_utils/helm: when a release is the one asked for, and helm's history read."""
import json

import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils import helm

SHA = "b" * 64


def revision(n, status="deployed", chart="web-0.1.0", sha=SHA):
    return {"revision": n, "status": status, "chart": chart, "description": helm.DESCRIPTION.format(sha256=sha)}


def test_history_sorted_oldest_first_and_a_missing_release_is_no_history():
    out = json.dumps([revision(2), revision(1, "superseded")])
    assert [r["revision"] for r in helm.parse_history(0, out, "")] == [1, 2]
    assert helm.parse_history(1, "", "Error: release: not found\n") == []
    with pytest.raises(ValueError, match="Kubernetes cluster unreachable"):
        helm.parse_history(1, "", "Error: Kubernetes cluster unreachable")


def test_unchanged_only_when_deployed_same_chart_file_and_values():
    values = {"replicas": 1, "image": {"tag": "1.0"}}
    # helm holds numbers as float64 and no values as null
    assert helm.differences([revision(1)], "web", "0.1.0", SHA, values, {"replicas": 1.0, "image": {"tag": "1.0"}}) == []
    assert helm.differences([revision(1)], "web", "0.1.0", SHA, {}, None) == []
    assert helm.differences([], "web", "0.1.0", SHA, values, None) == ["not installed"]
    assert helm.differences([revision(1)], "web", "0.2.0", SHA, values, values) == ["chart web-0.1.0 -> web-0.2.0"]
    assert helm.differences([revision(1, sha="c" * 64)], "web", "0.1.0", SHA, values, values) == [
        "chart file changed (same version, another sha256)"]
    assert helm.differences([revision(1)], "web", "0.1.0", SHA, values, {"replicas": 2}) == ["values changed"]
    assert helm.differences([revision(1), revision(2, "failed")], "web", "0.1.0", SHA, values, values) == [
        "revision 2 is failed"]


def test_rollback_target_is_the_newest_deployed_or_superseded_revision():
    assert helm.last_deployed([revision(1, "superseded"), revision(2, "deployed"), revision(3, "failed")]) == 2
    assert helm.last_deployed([revision(1, "failed")]) is None


def test_upgrade_records_the_chart_digest_and_never_reuses_values():
    argv = helm.upgrade_argv("helm", "web", "/c/web.tgz", "shop", "/t/v.json", SHA, 60, kubeconfig="/k")
    assert argv[:4] == ["helm", "upgrade", "web", "/c/web.tgz"]
    assert "--reset-values" in argv and "--wait" not in argv
    assert argv[argv.index("--description") + 1] == helm.DESCRIPTION.format(sha256=SHA)
    assert helm.DESCRIPTION_RE.search(argv[argv.index("--description") + 1]).group(1) == SHA
    assert argv[-2:] == ["--kubeconfig", "/k"]

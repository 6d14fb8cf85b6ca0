"""`kubeadm upgrade plan|apply|node` of the kubeadm test double: the version skew it refuses and the
configuration it uploads are kubeadm's (cmd/kubeadm/app/phases/upgrade/policy.go, apply.go,
util/config; the double's README names the sources). Run here on the controller, no test hosts."""
import pytest

from harness.kubeadm_double import main_error as _fail


def test_one_minor_at_a_time(d131):
    assert d131.cmd_upgrade.version_policy("v1.30.4", "v1.31.1", {"h1": "v1.30.4"}) == ([], [])
    mandatory, dummy = d131.cmd_upgrade.version_policy("v1.29.8", "v1.31.1", {})
    assert mandatory == ['Specified version to upgrade to "v1.31.1" is too high; kubeadm can upgrade only 1 minor '
                         'version at a time']


def test_kubeadm_older_than_the_target_is_refused(d130):
    mandatory, dummy = d130.cmd_upgrade.version_policy("v1.30.4", "v1.31.1", {})
    assert mandatory == ['Specified version to upgrade to "v1.31.1" is at least one minor release higher than the '
                         'kubeadm minor release (31 > 30). Such an upgrade is not supported']


def test_too_old_kubelets_and_newer_kubeadm_are_skippable(d131):
    dummy, skippable = d131.cmd_upgrade.version_policy("v1.30.4", "v1.30.4", {"h1": "v1.26.0"})
    assert "Kubeadm version v1.31.1 can only be used to upgrade to Kubernetes version 1.31" in skippable
    assert "There are kubelets in this cluster that are too old that have these versions [v1.26.0]" in skippable


def test_fatal_message_form(d131, capsys):
    with pytest.raises(d131.Fail) as e:
        d131.cmd_upgrade.enforce_version_policy("v1.29.8", "v1.31.1", {}, force=True)
    assert str(e.value).startswith("[upgrade/version] FATAL: the --version argument is invalid due to these fatal "
                                   "errors:\n\n\t- Specified version to upgrade to \"v1.31.1\" is too high")


def test_upload_moves_the_configuration_to_v1beta4(d131):
    cluster = {"apiVersion": "kubeadm.k8s.io/v1beta3", "kind": "ClusterConfiguration", "kubernetesVersion": "v1.30.4",
               "apiServer": {"extraArgs": {"audit-log-maxage": "30"}, "timeoutForControlPlane": "4m0s"},
               "controllerManager": {"extraArgs": {"node-cidr-mask-size": "24"}}}
    new = d131.cmd_upgrade.to_upload_api(cluster, "v1.31.1")
    assert new["apiVersion"] == "kubeadm.k8s.io/v1beta4" and new["kubernetesVersion"] == "v1.31.1"
    assert new["apiServer"] == {"extraArgs": [{"name": "audit-log-maxage", "value": "30"}]}
    assert new["controllerManager"]["extraArgs"] == [{"name": "node-cidr-mask-size", "value": "24"}]


def test_upload_stays_v1beta3_on_1_30(d130):
    new = d130.cmd_upgrade.to_upload_api({"apiVersion": "kubeadm.k8s.io/v1beta3", "kind": "ClusterConfiguration",
                                          "apiServer": {"extraArgs": {"a": "b"}}}, "v1.30.5")
    assert new["apiVersion"] == "kubeadm.k8s.io/v1beta3" and new["apiServer"]["extraArgs"] == {"a": "b"}


@pytest.mark.parametrize("argv, message", [
    (["upgrade", "apply"], "missing one or more required arguments. Required arguments: [version]"),
    (["upgrade", "apply", "v1.31.1", "--bogus"], "unknown flag: --bogus"),
    (["upgrade", "node", "--print-config"], "unknown flag: --print-config"),
    (["upgrade", "node", "extra"], 'unknown command "extra" for "kubeadm upgrade node"'),
    (["upgrade", "diff"], 'unknown command "diff" for "kubeadm upgrade"'),
])
def test_command_line(d131, argv, message):
    assert _fail(d131, argv).startswith(message)


def test_node_takes_config_from_1_31(d130, monkeypatch):
    assert _fail(d130, ["upgrade", "node", "--config", "/x"]).startswith("unknown flag: --config")


def test_1_32_upgrades_from_1_31_only(d132):
    assert d132.cmd_upgrade.version_policy("v1.31.1", "v1.32.13", {"h1": "v1.31.1"}) == ([], [])
    mandatory, dummy = d132.cmd_upgrade.version_policy("v1.30.4", "v1.32.13", {})
    assert mandatory == ['Specified version to upgrade to "v1.32.13" is too high; kubeadm can upgrade only 1 minor '
                         'version at a time']
    assert d132.cmd_upgrade.to_upload_api({"apiVersion": "kubeadm.k8s.io/v1beta4", "kind": "ClusterConfiguration"},
                                          "v1.32.13")["apiVersion"] == "kubeadm.k8s.io/v1beta4"


def test_1_32_upgrade_flags_and_phases(d131, d132):
    # #127123: apply's --feature-gates removed in 1.32 (plan keeps it); #126032: apply gains --skip-phases
    assert "unknown flag: --feature-gates" in _fail(d132, ["upgrade", "apply", "v1.32.13", "--feature-gates", "a=true"])
    assert "unknown flag: --skip-phases" in _fail(d131, ["upgrade", "apply", "v1.31.1", "--skip-phases", "addon"])
    # the double runs the phased sub-commands whole: a selection is refused, never ignored
    assert _fail(d132, ["upgrade", "apply", "v1.32.13", "--skip-phases", "addon"]) == (
        "the double does not skip phases of 'kubeadm upgrade apply' (the collection skips none)")
    assert _fail(d132, ["upgrade", "node", "phase", "addon"]) == (
        "the double does not run 'kubeadm upgrade node phase ...' (the collection runs the whole command)")
    assert _fail(d131, ["upgrade", "apply", "phase", "addon"]) == "accepts at most 1 arg(s), received 2"

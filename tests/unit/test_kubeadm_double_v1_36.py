"""kubeadm and kubelet 1.36 in the test doubles: the release's gates (ControlPlaneKubeletLocalMode gone, its local
mode always on; NodeLocalCRISocket GA and locked), join phases (control-plane-join etcd gone, no longer a name
--skip-phases takes), the ContainerRuntimeVersion warning's text, the post-upgrade phase that leaves
kubeadm-flags.env alone, etcd 3.6.8-0, the minimum control plane 1.35, the apiserver-kubelet-client certificate
without O and the bootstrap-token phase's new binding (from 1.36.1), and the kubelet's side (--version; the 1.35
rules unchanged). The facts and their sources are in tests/kubeadm_double/cli_v1_36.py. On the controller, no
test hosts: the host's cgroup version and the installed kubelet's and containerd's versions are replaced with
monkeypatch."""

import pytest
import yaml

from harness.kubeadm_double import (CRI, DOUBLE, init_config, join_config, joining_host, load_kubelet,
                                    main_error as _fail)

NEEDS_CONFIG = "the double needs --config (the collection always passes one)"
STACK_HINT = "\nTo see the stack trace of this error execute with --v=5 or higher"
CGROUP_V1 = ("cgroups v1 support is deprecated and will be removed in a future release. Please migrate to cgroups v2. "
             "To explicitly enable cgroups v1 support for kubelet v1.35 or newer, you must set the kubelet "
             "configuration option 'FailCgroupV1' to 'false'. You must also explicitly skip this validation. For more "
             "information, see https://git.k8s.io/enhancements/keps/sig-node/5573-remove-cgroup-v1")
RUNTIME_CONFIG_1_36 = ("You must update your container runtime to a version that supports the CRI method RuntimeConfig. "
                       "Falling back to using cgroupDriver from kubelet config will be removed in 1.37. For more "
                       "information, see https://git.k8s.io/enhancements/keps/sig-node/4033-group-driver-detection-over-cri")
FATAL_TAIL = ("[preflight] If you know what you are doing, you can make a check non-fatal with "
              "`--ignore-preflight-errors=...`\n")
KUBELET_API_LINE = ("[bootstrap-token] Configured RBAC rules to allow the API server kubelet client certificate to "
                    "access the kubelet API")


def _init(tmp_path, version="v1.36.3", **kw):
    return init_config(tmp_path, version, **kw)


# ---------------------------------------------------------------- the release's table
def test_the_1_36_table(d135, d136, capsys):
    cli = d136.CLI
    assert (cli.VERSION, cli.ETCD_TAG, cli.MIN_CONTROL_PLANE) == ("v1.36.3", "3.6.8-0", (1, 35))
    assert cli.FEATURE_GATES == {"NodeLocalCRISocket", "RootlessControlPlane"}
    assert (cli.GATE_DEFAULTS, cli.LOCKED_GATES) == ({"NodeLocalCRISocket": True}, {"NodeLocalCRISocket"})
    # the join order and the phases' flags of 1.35
    assert cli.JOIN_WORKFLOW == d135.CLI.JOIN_WORKFLOW and cli.JOIN == d135.CLI.JOIN
    assert cli.JOIN_HIDDEN == () and d135.CLI.JOIN_HIDDEN == ("control-plane-join etcd",)
    assert cli.KUBELET_ENV_UNWANTED == () and d135.CLI.KUBELET_ENV_UNWANTED == ("pod-infra-container-image",)
    # init, reset and upgrade: no new flags or phases
    assert (cli.INIT, cli.RESET, cli.UPGRADE) == (d135.CLI.INIT, d135.CLI.RESET, d135.CLI.UPGRADE)
    assert "1.36" in d136.acting.ACTS_AS
    d136.main(["version", "-o", "short"])
    assert capsys.readouterr().out == "v1.36.3\n"


# ---------------------------------------------------------------- gates
def test_control_plane_kubelet_local_mode_is_an_unknown_gate_of_1_36(d135, d136, tmp_path):
    path = _init(tmp_path, featureGates={"ControlPlaneKubeletLocalMode": True})
    with pytest.raises(d136.Fail) as e:
        d136.config_load.load_config(path, "init")
    assert str(e.value) == ('featureGates: Invalid value: map[string]bool{"ControlPlaneKubeletLocalMode":true}: '
                            "ControlPlaneKubeletLocalMode is not a valid feature name." + STACK_HINT)
    assert d135.config_load.load_config(_init(tmp_path, "v1.35.7", featureGates={"ControlPlaneKubeletLocalMode": True}),
                                        "init")["ClusterConfiguration"]["featureGates"] == \
        {"ControlPlaneKubeletLocalMode": True}
    # the other gates of 1.36 are names it knows
    docs = d136.config_load.load_config(_init(tmp_path, featureGates={"NodeLocalCRISocket": True,
                                                                      "RootlessControlPlane": False}), "init")
    assert docs["ClusterConfiguration"]["featureGates"] == {"NodeLocalCRISocket": True, "RootlessControlPlane": False}


def test_the_local_mode_is_always_on_in_1_36(d136):
    assert d136.config_load.local_mode({}) is True
    assert d136.config_load.local_mode({"featureGates": {"ControlPlaneKubeletLocalMode": False}}) is True
    assert d136.config_load.gate_on({}, "ControlPlaneKubeletLocalMode") is False     # no such gate: never on


def test_node_local_cri_socket_is_locked_on_in_1_36(d135, d136):
    off = {"featureGates": {"NodeLocalCRISocket": False}}
    assert d136.config_load.gate_on(off, "NodeLocalCRISocket") is True
    assert d135.config_load.gate_on(off, "NodeLocalCRISocket") is False       # beta in 1.35: the setting holds


def test_1_36_deploys_a_1_35_control_plane_at_least(d136, tmp_path):
    with pytest.raises(d136.Fail, match="control plane version >= 1.35.0. Current version: v1.34.10"):
        d136.config_load.load_config(_init(tmp_path, "v1.34.10"), "init")
    assert d136.config_load.load_config(_init(tmp_path, "v1.35.7"), "init")["ClusterConfiguration"]["kubernetesVersion"] \
        == "v1.35.7"


def test_1_36_upgrades_from_1_35_only(d136):
    assert d136.cmd_upgrade.version_policy("v1.35.7", "v1.36.3", {"h1": "v1.35.7"}) == ([], [])
    mandatory, dummy = d136.cmd_upgrade.version_policy("v1.34.10", "v1.36.3", {})
    assert mandatory == ['Specified version to upgrade to "v1.36.3" is too high; kubeadm can upgrade only 1 minor '
                         'version at a time']


# ---------------------------------------------------------------- join phases
def test_control_plane_join_etcd_is_gone_in_1_36_also_from_skip_phases(d135, d136):
    argv = ["join", "phase", "control-plane-join", "etcd", "--control-plane"]
    assert _fail(d136, argv) == 'unknown command "etcd" for "kubeadm join phase control-plane-join"'
    assert _fail(d136, ["join", "phase", "control-plane-join", "all", "--control-plane"]) == NEEDS_CONFIG
    assert _fail(d136, ["join", "phase", "etcd-join", "--control-plane"]) == NEEDS_CONFIG
    assert _fail(d136, ["join", "phase", "kubelet-wait-bootstrap", "--dry-run"]) == NEEDS_CONFIG
    skip = ["join", "--config", "/nonexistent.yaml", "--skip-phases"]
    assert _fail(d136, skip + ["control-plane-join/etcd,preflight"]) == "invalid phase name: control-plane-join/etcd"
    assert _fail(d135, skip + ["control-plane-join/etcd,preflight"]).startswith(
        'unable to read config from "/nonexistent.yaml"')
    # the names the collection's join skips (kubeadm_phases.LOCAL_MODE_SKIP) stay valid
    assert _fail(d136, skip + ["preflight,control-plane-prepare,kubelet-start,control-plane-join,"
                               "wait-control-plane"]).startswith('unable to read config from "/nonexistent.yaml"')


def test_a_1_36_control_plane_join_adds_the_member_in_etcd_join_only(d136, tmp_path, monkeypatch):
    monkeypatch.setattr(d136.cluster_api, "discover", lambda join: ("https://api.tke.com:6443", b"CA", {
        "kubernetesVersion": "v1.36.3", "controlPlaneEndpoint": "api.tke.com:6443"}, {}))
    ran = []
    monkeypatch.setattr(d136.cmd_join, "wait_bootstrap", lambda: ran.append("wait-bootstrap"))
    monkeypatch.setattr(d136.cmd_join, "join_stacked_etcd", lambda *a: ran.append("member added"))
    monkeypatch.setattr(d136.cmd_init, "mark_control_plane", lambda *a: ran.append("marked"))
    docs = d136.config_load.load_config(join_config(tmp_path, control_plane=True), "join")
    for phase in ("etcd-join", "kubelet-wait-bootstrap", "control-plane-join all"):
        d136.cmd_join.run_join(phase, {}, docs)
    assert ran == ["member added", "wait-bootstrap", "marked"]


# ---------------------------------------------------------------- etcd, certificates, bootstrap-token
def test_the_etcd_manifest_of_1_36_runs_etcd_3_6_8(d136, tmp_path, monkeypatch):
    monkeypatch.setattr(d136.common, "K8S", str(tmp_path / "k8s"))
    monkeypatch.setattr(d136.common, "PKI", str(tmp_path / "k8s" / "pki"))
    d136.static_pods.phase_etcd({"imageRepository": "registry.tke.com/library"},
                                {"name": "m1", "address": "192.0.2.11", "port": 6443})
    pod = yaml.safe_load((tmp_path / "k8s" / "manifests" / "etcd.yaml").read_text())
    container = pod["spec"]["containers"][0]
    assert container["image"] == "registry.tke.com/library/etcd:3.6.8-0"
    assert "--feature-gates=InitialCorruptCheck=true" in container["command"]


def _subject(path):
    from cryptography import x509
    from cryptography.x509.oid import NameOID
    cert = x509.load_pem_x509_certificate(path.read_bytes())
    return ([a.value for a in cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)],
            [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)])


@pytest.mark.parametrize("version,orgs", [("1.36", []), ("1.35", ["kubeadm:cluster-admins"])])
def test_apiserver_kubelet_client_has_no_organization_from_1_36(version, orgs, tmp_path, monkeypatch, capsys):
    from harness import kubeadm_double
    d = kubeadm_double.load(version, monkeypatch)
    monkeypatch.setattr(d.common, "PKI", str(tmp_path / "pki"))
    cluster = {"networking": {"serviceSubnet": "10.96.0.0/16"},
               "etcd": {"external": {"endpoints": ["https://192.0.2.30:2379"]}}}
    d.certs.phase_certs(cluster, {"name": "m1", "address": "192.0.2.11", "port": 6443})
    assert _subject(tmp_path / "pki" / "apiserver-kubelet-client.crt") == (["kube-apiserver-kubelet-client"], orgs)


@pytest.mark.parametrize("version", ["1.36", "1.35"])
def test_the_bootstrap_token_phase_of_1_36_binds_the_kubelet_client(version, tmp_path, monkeypatch, capsys):
    from harness import kubeadm_double
    d = kubeadm_double.load(version, monkeypatch)
    monkeypatch.setattr(d.common, "PKI", str(tmp_path / "pki"))
    monkeypatch.setattr(d.common, "STATE", str(tmp_path / "state.json"))
    monkeypatch.setattr(d.cluster_api, "require_cluster", lambda fl, docs=None: None)
    (tmp_path / "pki").mkdir()
    (tmp_path / "pki" / "ca.crt").write_bytes(b"CA")
    docs = d.config_load.load_config(_init(tmp_path, "v1.36.3" if version == "1.36" else "v1.35.7"), "init")
    d.cmd_init.run_init("bootstrap-token", {"skip-token-print": ["true"]}, docs)
    lines = capsys.readouterr().out.splitlines()
    assert (KUBELET_API_LINE in lines) is (version == "1.36")
    assert lines[-1] == '[bootstrap-token] Creating the "cluster-info" ConfigMap in the "kube-public" namespace'


# ---------------------------------------------------------------- preflight
@pytest.fixture
def host(d136, tmp_path, monkeypatch):
    """A joining worker whose every other check passes: cgroup v2, kubelet 1.36.3, containerd 1.7.24 unless
    set otherwise."""
    return joining_host(d136, tmp_path, monkeypatch, unified=True, kubelet=(1, 36, 3), containerd=(1, 7, 24))


def test_the_runtime_warning_of_1_36_names_1_37(d136, host, tmp_path, capsys):
    d136.main(["join", "phase", "preflight", "--config", join_config(tmp_path)])
    assert capsys.readouterr() == ("[preflight] Running pre-flight checks\n",
                                   f"\t[WARNING ContainerRuntimeVersion]: {RUNTIME_CONFIG_1_36}\n")
    # containerd 2.x (the fixture pack's 2.1.9 serves 1.36): RuntimeConfig, no warning
    host.update(containerd=(2, 1, 9))
    d136.main(["join", "phase", "preflight", "--config", join_config(tmp_path)])
    assert capsys.readouterr() == ("[preflight] Running pre-flight checks\n", "")


def test_join_preflight_of_1_36_refuses_cgroup_v1_as_1_35(d136, host, tmp_path, capsys):
    host.update(unified=False, containerd=(2, 1, 9))
    assert _fail(d136, ["join", "phase", "preflight", "--config", join_config(tmp_path)]) == \
        "error execution phase preflight: preflight checks failed" + STACK_HINT
    assert capsys.readouterr().err == ("[preflight] Some fatal errors occurred:\n"
                                       f"\t[ERROR SystemVerification]: {CGROUP_V1}\n" + FATAL_TAIL)
    d136.main(["join", "phase", "preflight", "--config", join_config(tmp_path), "--ignore-preflight-errors=SystemVerification"])
    assert capsys.readouterr().err == f"\t[WARNING SystemVerification]: {CGROUP_V1}\n"


# ---------------------------------------------------------------- upgrade: post-upgrade leaves the env file alone
@pytest.fixture
def worker_upgrade(d136, tmp_path, monkeypatch):
    """`kubeadm upgrade node` on a worker: the cluster's configuration and kubelet-config answered here."""
    k = tmp_path / "kubelet"
    k.mkdir()
    monkeypatch.setattr(d136.common, "KUBELET_DIR", str(k))
    monkeypatch.setattr(d136.kubelet_files.subprocess, "run",
                        lambda *a, **kw: d136.kubelet_files.subprocess.CompletedProcess(a, 1))   # no systemd
    (k / "instance-config.yaml").write_text(f'containerRuntimeEndpoint: "{CRI}"\n')
    (tmp_path / "k8s").mkdir(exist_ok=True)
    monkeypatch.setattr(d136.cmd_upgrade, "cluster_configuration", lambda kubeconfig: {"kubernetesVersion": "v1.36.3"})
    monkeypatch.setattr(d136.cluster_api, "cluster_get", lambda *a: {"data": {"kubelet": yaml.safe_dump(
        {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"})}})
    return k


@pytest.mark.parametrize("env", ['KUBELET_KUBEADM_ARGS="--node-ip=192.0.2.21 --pod-infra-container-image=r/pause:3.10.1"\n',
                                 'KUBELET_KUBEADM_ARGS=""\n'])
def test_upgrade_node_to_1_36_leaves_kubeadm_flags_env_as_it_is(d136, host, worker_upgrade, tmp_path, capsys, env):
    host.update(kubelet=(1, 35, 7), containerd=(2, 1, 9))
    (worker_upgrade / "kubeadm-flags.env").write_text(env)
    d136.main(["upgrade", "node"])
    out, err = capsys.readouterr()
    assert (worker_upgrade / "kubeadm-flags.env").read_text() == env          # no flag removed any more
    assert not (tmp_path / "k8s" / "tmp").exists()                           # no backup
    assert "kubelet env file" not in out + err and "kubeadm-flags.env" not in out
    assert out.endswith(f'[kubelet-start] Writing kubelet configuration to file "{worker_upgrade}/config.yaml"\n'
                        "[upgrade] The configuration for this node was successfully updated!\n"
                        "[upgrade] Now you should go ahead and upgrade the kubelet package using your package "
                        "manager.\n")
    assert "[upgrade/preflight] Running preflight checks\n" in out and err == ""
    # dry run: nothing said about the env file either
    d136.main(["upgrade", "node", "--dry-run"])
    assert "kubelet env file" not in capsys.readouterr().out


# ---------------------------------------------------------------- the kubelet double
def _exit(kubelet, argv):
    with pytest.raises(SystemExit) as e:
        kubelet.main(argv)
    return e.value.code


def test_the_1_36load_kubelet(monkeypatch, capsys, tmp_path):
    kubelet = load_kubelet("1.36", monkeypatch)
    assert _exit(kubelet, ["--version"]) == 0
    assert capsys.readouterr() == ("Kubernetes v1.36.3\n", "")
    # the flag removed in 1.35 stays removed
    assert _exit(kubelet, ["--config=/x", "--pod-infra-container-image=r/pause:3.10.2"]) == 1
    assert capsys.readouterr().err == ('E kubelet: "command failed" err="failed to parse kubelet flag: unknown flag: '
                                       '--pod-infra-container-image"\n')
    # failCgroupV1 still defaults to true
    monkeypatch.setattr(kubelet.host_cgroups, "unified", lambda: False)
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}))
    assert _exit(kubelet, [f"--config={config}", f"--kubeconfig={tmp_path}/none.conf"]) == 1
    assert "kubelet is configured to not run on a host using cgroup v1" in capsys.readouterr().err


# ---------------------------------------------------------------- the API double's schemas
def test_the_api_double_of_a_1_36_cluster_validates_with_the_1_36_schemas(tmp_path, monkeypatch):
    """The harness ships the schemas of every release the double acts as (SCHEMA_VERSIONS = ACTS_AS):
    kubernetes-validate's v1.36.0 sets go to the hosts, and an API double at v1.36.3 uses them."""
    from pathlib import Path

    from harness import kubeadm_double
    assert "1.36" in kubeadm_double.SCHEMA_VERSIONS
    schemas = Path("kubernetes_validate") / "kubernetes-json-schema"
    assert not kubeadm_double._skip(schemas / "v1.36.0-local-strict" / "deployment-apps-v1.json")
    assert kubeadm_double._skip(schemas / "v1.37.0-local-strict" / "deployment-apps-v1.json")
    monkeypatch.syspath_prepend(str(DOUBLE.parent / "apiserver_double"))
    from apiserver_double import logic, server, store
    from apiserver_double.resources import BUILTIN
    api = server.Api(store.FileStore(str(tmp_path / "store.json")), "v1.36.3")
    deployments = next(r for r in BUILTIN if r.plural == "deployments")
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
                  "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
                      "metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    api.validate(deployments, deployment)
    with pytest.raises(logic.ApiError):
        api.validate(deployments, {**deployment, "spec": {**deployment["spec"], "bogus": 1}})
    # a kind 1.36 adds (admissionregistration.k8s.io/v1 MutatingAdmissionPolicy): 1.36's schemas, not 1.35's
    kv = api._kv()
    policy = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy", "metadata": {"name": "x"},
              "spec": {"mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{}"}}],
                       "reinvocationPolicy": "Never", "failurePolicy": "Fail"}}
    assert kv.validate(policy, api.version, strict=True) == "1.36"
    with pytest.raises(kv.SchemaNotFoundError):
        kv.validate(policy, "1.35.7", strict=True)

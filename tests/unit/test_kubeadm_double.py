"""The kubeadm test double (tests/kubeadm_double) accepts what the collection renders for the
version it acts as (v1.30 by default, v1.31 when selected), and refuses, warns and checks where
that kubeadm does - run here on the controller, without test hosts.

Every expected message below is kubeadm's (cmd/kubeadm/app/apis/kubeadm/validation/validation.go,
cmd/kubeadm/app/util/config, cmd/kubeadm/app/preflight/checks.go, cobra); the double's README
names the sources and revisions."""
import copy
import socket

import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils import kubeadm_config as kc
from harness import kubeadm_double


_load = kubeadm_double.load
_main_error = kubeadm_double.main_error


@pytest.fixture
def double(monkeypatch):
    return _load("1.30", monkeypatch)


@pytest.fixture
def double131(monkeypatch):
    return _load("1.31", monkeypatch)


CLUSTER = {"name": "global", "control_plane_endpoint": "api.tke.com:6443", "image_repository": "registry.tke.com/library",
           "pod_cidr": "10.244.0.0/16", "service_cidr": "10.96.0.0/16", "max_pods": 256, "proxy_mode": "ipvs",
           "proxy_exclude_cidrs": ["192.0.2.100/32"], "apiserver_cert_sans": ["api.tke.com", "127.0.0.1"],
           "etcd": {"local": {}}}
NODE = {"name": "m1", "advertise_address": "192.0.2.11"}
JOIN = {"api_server_endpoint": "api.tke.com:6443", "token": "abcdef.0123456789abcdef",
        "ca_cert_hash": "sha256:" + "a" * 64, "control_plane": True, "certificate_key": "b" * 64}


def _write(tmp_path, docs):
    """The configuration file as JSON documents (YAML's superset; what the collection writes)."""
    path = tmp_path / "kubeadm.yaml"
    path.write_text(kc.HEADER + kc.dump_documents(docs))
    return str(path)


def _init(version="1.30.4", **cluster):
    return kc.build("init", version, {**CLUSTER, **cluster}, NODE)


def _kind(docs, kind):
    return next(d for d in docs if d["kind"] == kind)


def _fails(double, tmp_path, docs, message, want="init"):
    with pytest.raises(double.Fail) as e:
        double.config_load.load_config(_write(tmp_path, docs), want)
    assert message in str(e.value)
    return str(e.value)


# ---------------------------------------------------------------- what the collection renders
@pytest.mark.parametrize("etcd", [{"local": {}}, {"external": {"endpoints": ["https://192.0.2.21:2379"]}}])
def test_double_accepts_rendered_init_configuration(double, tmp_path, etcd, capsys):
    docs = double.config_load.load_config(_write(tmp_path, _init(etcd=etcd)), "init")
    assert set(docs) == {"InitConfiguration", "ClusterConfiguration", "KubeletConfiguration", "KubeProxyConfiguration"}
    assert "strict decoding error" not in capsys.readouterr().err  # every field is one of v1beta3's


def test_double_accepts_rendered_join_configuration(double, tmp_path, capsys):
    docs = double.config_load.load_config(_write(tmp_path, kc.build("join", "1.30.4", {}, NODE, JOIN)), "join")
    assert docs["JoinConfiguration"]["controlPlane"]["certificateKey"] == "b" * 64
    assert "strict decoding error" not in capsys.readouterr().err


def test_double_as_1_31_accepts_the_rendered_v1beta4_configuration(double131, tmp_path, capsys):
    docs = double131.config_load.load_config(_write(tmp_path, _init("1.31.1")), "init")
    assert docs["InitConfiguration"]["nodeRegistration"]["kubeletExtraArgs"] == []
    join = double131.config_load.load_config(_write(tmp_path, kc.build("join", "1.31.1", {}, NODE, JOIN)), "join")
    assert join["JoinConfiguration"]["controlPlane"]["certificateKey"] == "b" * 64
    assert "strict decoding error" not in capsys.readouterr().err


def test_kubeadm_1_30_rejects_the_1_31_api(double, tmp_path):
    _fails(double, tmp_path, _init("1.31.1"), 'no kind "InitConfiguration" is registered for version '
                                              '"kubeadm.k8s.io/v1beta4"')


def test_kubeadm_1_31_warns_about_the_deprecated_v1beta3(double131, tmp_path, capsys):
    double131.config_load.load_config(_write(tmp_path, _init("1.30.4")), "init")
    assert 'your configuration file uses a deprecated API spec: "kubeadm.k8s.io/v1beta3"' in capsys.readouterr().err


def test_kubeadm_1_30_refuses_a_1_28_control_plane(double, tmp_path):
    _fails(double, tmp_path, _init("1.28.13"), "only supports deploying clusters with the control plane version >= 1.29.0")


def test_kubeadm_1_31_refuses_a_1_29_control_plane(double131, tmp_path):
    _fails(double131, tmp_path, _init("1.29.8"), "control plane version >= 1.30.0. Current version: v1.29.8")


# ---------------------------------------------------------------- values kubeadm validates
def test_a_1_31_feature_gate_is_refused_by_1_30_and_accepted_by_1_31(double, double131, tmp_path):
    docs = _init()
    _kind(docs, "ClusterConfiguration")["featureGates"] = {"ControlPlaneKubeletLocalMode": True}
    _fails(double, tmp_path, docs, 'featureGates: Invalid value: map[string]bool{"ControlPlaneKubeletLocalMode":true}: '
                                   "ControlPlaneKubeletLocalMode is not a valid feature name.")
    docs131 = _init("1.31.1")
    _kind(docs131, "ClusterConfiguration")["featureGates"] = {"ControlPlaneKubeletLocalMode": True}
    assert double131.config_load.load_config(_write(tmp_path, docs131), "init")["ClusterConfiguration"]["featureGates"]


def test_a_deprecated_feature_gate_is_not_a_valid_feature_name(double, tmp_path):
    docs = _init()
    _kind(docs, "ClusterConfiguration")["featureGates"] = {"PublicKeysECDSA": True}
    _fails(double, tmp_path, docs, "PublicKeysECDSA is not a valid feature name.")


def test_an_invalid_image_pull_policy_is_refused(double, tmp_path):
    docs = _init()
    _kind(docs, "InitConfiguration")["nodeRegistration"]["imagePullPolicy"] = "always"
    _fails(double, tmp_path, docs, 'nodeRegistration.imagePullPolicy: Invalid value: "always": invalid pull policy')


def test_a_typo_in_bootstrap_token_usages_is_refused(double, tmp_path):
    docs = _init()
    _kind(docs, "InitConfiguration")["bootstrapTokens"][0]["usages"] = ["signing", "authentification"]
    _fails(double, tmp_path, docs, 'bootstrapTokens.0.usages: Invalid value: []string{"signing", "authentification"}: '
                                   "invalid bootstrap token usage string: authentification, valid usage options: "
                                   "signing,authentication")


def test_a_bad_bootstrap_token_group_is_refused(double, tmp_path):
    docs = _init()
    _kind(docs, "InitConfiguration")["bootstrapTokens"][0]["groups"] = ["system:nodes"]
    _fails(double, tmp_path, docs, 'bootstrap group "system:nodes" is invalid (must match '
                                   "^system:bootstrappers(:[a-z0-9:-]{0,255}[a-z0-9])?$)")


def test_an_invalid_encryption_algorithm_is_refused_by_1_31(double131, tmp_path):
    docs = _init("1.31.1")
    _kind(docs, "ClusterConfiguration")["encryptionAlgorithm"] = "RSA-1024"
    _fails(double131, tmp_path, docs, 'encryptionAlgorithm: Invalid value: "RSA-1024": Invalid encryption algorithm')


def test_a_v1beta4_extra_arg_without_name_is_refused(double131, tmp_path):
    docs = _init("1.31.1")
    _kind(docs, "ClusterConfiguration")["apiServer"]["extraArgs"] = [{"name": "", "value": "x"}]
    _fails(double131, tmp_path, docs, 'apiServer.extraArgs: Invalid value: "index 0": argument has no name')


def test_cert_sans_error_names_the_list_not_the_index(double, tmp_path):
    """validation.ValidateCertSANs reports fldPath "apiServer.certSANs" for every bad entry."""
    text = _fails(double, tmp_path, _init(apiserver_cert_sans=["api.tke.com", "bad_name!"]),
                  'apiServer.certSANs: Invalid value: "bad_name!": altname is not a valid IP address, DNS label or '
                  "a DNS label with subdomain wildcards: a lowercase RFC 1123 subdomain")
    assert "certSANs[" not in text


@pytest.mark.parametrize("flag,config,message", [
    ("all,Swap", [], "ignore-preflight-errors: Invalid value: \"all,swap\": don't specify individual checks if "
                     "'all' is used"),
    ("all", ["FileAvailable--etc-kubernetes-kubelet.conf"],
     "ignore-preflight-errors: Invalid value: \"all,fileavailable--etc-kubernetes-kubelet.conf\": don't specify "
     "individual checks if 'all' is used"),
])
def test_all_may_not_be_combined_with_other_preflight_errors(double, tmp_path, flag, config, message):
    docs = kc.build("join", "1.30.4", {}, NODE, JOIN)
    _kind(docs, "JoinConfiguration")["nodeRegistration"]["ignorePreflightErrors"] = config
    path = _write(tmp_path, docs)
    with pytest.raises(double.Fail) as e:
        double.main(["join", "phase", "preflight", "--config", path, "--ignore-preflight-errors", flag])
    assert message in str(e.value) and "error execution phase" not in str(e.value)


# ---------------------------------------------------------------- strict decoding: warn and drop
def test_v1beta4_fields_in_a_v1beta3_document_are_warned_and_dropped(double, tmp_path, capsys):
    docs = _init()
    _kind(docs, "InitConfiguration").update(timeouts={"controlPlaneComponentHealthCheck": "4m"}, dryRun=True)
    got = double.config_load.load_config(_write(tmp_path, docs), "init")["InitConfiguration"]
    assert "timeouts" not in got and "dryRun" not in got
    assert ('error unmarshaling configuration schema.GroupVersionKind{Group:"kubeadm.k8s.io", Version:"v1beta3", '
            'Kind:"InitConfiguration"}: strict decoding error: unknown field "timeouts", unknown field "dryRun"'
            ) in capsys.readouterr().err


@pytest.mark.parametrize("kind,where,path", [
    ("InitConfiguration", ("nodeRegistration",), "nodeRegistration.criSokcet"),
    ("ClusterConfiguration", ("networking",), "networking.podSubent"),
    ("ClusterConfiguration", ("etcd", "external"), "etcd.external.caFiel"),
    ("InitConfiguration", ("nodeRegistration", "taints", 0), "nodeRegistration.taints[0].efect"),
])
def test_a_typo_inside_a_nested_object_is_warned_and_ignored(double, tmp_path, capsys, kind, where, path):
    docs = _init(etcd={"external": {"endpoints": ["https://192.0.2.21:2379"]}})
    node = _kind(docs, kind)
    for key in where:
        node = node[key]
    node[path.rsplit(".", 1)[1]] = "x"
    got = double.config_load.load_config(_write(tmp_path, docs), "init")
    assert f'strict decoding error: unknown field "{path}"' in capsys.readouterr().err
    node = got[kind]
    for key in where:
        node = node[key]
    assert path.rsplit(".", 1)[1] not in node


def test_an_unknown_top_level_field_only_warns(double, tmp_path, capsys):
    docs = _init()
    _kind(docs, "ClusterConfiguration")["clusterNmae"] = "x"
    double.config_load.load_config(_write(tmp_path, docs), "init")
    assert 'Kind:"ClusterConfiguration"}: strict decoding error: unknown field "clusterNmae"' in capsys.readouterr().err


def test_a_value_of_the_wrong_type_fails_decoding(double, tmp_path):
    docs = _init()
    _kind(docs, "ClusterConfiguration")["apiServer"]["extraArgs"] = [{"name": "a", "value": "b"}]
    _fails(double, tmp_path, docs, "json: cannot unmarshal array into Go struct field APIServer.apiServer.extraArgs of "
                                   "type map[string]string")


def test_a_cri_socket_without_scheme_is_prefixed_with_a_warning(double, tmp_path, capsys):
    docs = _init()
    _kind(docs, "InitConfiguration")["nodeRegistration"]["criSocket"] = "/run/containerd/containerd.sock"
    got = double.config_load.load_config(_write(tmp_path, docs), "init")
    assert got["InitConfiguration"]["nodeRegistration"]["criSocket"] == "unix:///run/containerd/containerd.sock"
    assert ('Usage of CRI endpoints without URL scheme is deprecated and can cause kubelet errors in the future. '
            'Automatically prepending scheme "unix" to the "criSocket" with value "/run/containerd/containerd.sock"'
            ) in capsys.readouterr().err


# ---------------------------------------------------------------- the command line
@pytest.mark.parametrize("argv,message", [
    (["init", "phase", "certs", "all", "--config", "x", "--bogus"], "unknown flag: --bogus"),
    (["init", "phase", "certs", "all", "--config", "x", "--cert-dir", "/x"], "can not mix '--config' with arguments [cert-dir]"),
    (["init", "phase", "wait-control-plane", "--config", "x"], 'unknown command "wait-control-plane"'),
    (["join", "phase", "control-plane-join", "update", "--config", "x"], 'unknown command "update"'),
    (["init", "phase", "upload-certs", "--config", "x", "--certificate-key", "k"],
     "can not mix '--config' with arguments [certificate-key]"),
    # getEtcdPhaseFlags has --cert-dir: kubeadm knows the flag and refuses it only next to --config
    (["init", "phase", "etcd", "local", "--config", "x", "--cert-dir", "/x"],
     "can not mix '--config' with arguments [cert-dir]"),
    # join preflight's InheritFlags has no --patches
    (["join", "phase", "preflight", "--config", "x", "--patches", "/p"], "unknown flag: --patches"),
    # "certs sa" inherits only --cert-dir up to v1.30
    (["init", "phase", "certs", "sa", "--config", "x"], "unknown flag: --config"),
    # getControlPlanePreparePhaseFlags: only "all" and "certs" take --node-name
    (["join", "phase", "control-plane-prepare", "download-certs", "--node-name", "n"], "unknown flag: --node-name"),
    (["join", "phase", "control-plane-prepare", "control-plane", "--token", "t"], "unknown flag: --token"),
    # getAddonPhaseFlags: coredns has no --pod-network-cidr, kube-proxy no --service-dns-domain
    (["init", "phase", "addon", "coredns", "--pod-network-cidr", "10.0.0.0/8"], "unknown flag: --pod-network-cidr"),
    (["init", "phase", "addon", "kube-proxy", "--service-dns-domain", "x"], "unknown flag: --service-dns-domain"),
    # getControlPlanePhaseFlags: the scheduler phase takes no API server flags
    (["init", "phase", "control-plane", "scheduler", "--apiserver-extra-args", "a=b"],
     "unknown flag: --apiserver-extra-args"),
    # trailing arguments: init is cobra.NoArgs, join takes at most the API server endpoint
    (["init", "phase", "preflight", "extra", "--config", "x"], 'unknown command "extra" for "kubeadm init phase preflight"'),
    (["join", "phase", "preflight", "a:6443", "b", "--config", "x"], "accepts at most 1 arg(s), received 2"),
    (["join", "phase", "control-plane-prepare", "control-plane", "a:6443", "--config", "x"],
     'unknown command "a:6443" for "kubeadm join phase control-plane-prepare control-plane"'),
])
def test_double_cli_rejections(double, argv, message):
    assert message in _main_error(double, argv)


@pytest.mark.parametrize("argv", [
    ["init", "phase", "addon", "coredns", "--print-manifest"],  # the addon sub-phases' local flag
    ["init", "phase", "certs", "all", "--vmodule=x=2"],  # klog's hidden global flags stay accepted
    ["init", "phase", "certs", "all", "--log_file=/tmp/x"],  # flag names are normalized (_ to -)
    ["join", "phase", "preflight", "api.tke.com:6443"],  # the API server endpoint argument
])
def test_double_cli_accepts_what_kubeadm_accepts(double, argv):
    """These get past cobra's parsing: the double stops only because it needs --config."""
    assert _main_error(double, argv) == "the double needs --config (the collection always passes one)"


def test_certs_sa_reads_the_configuration_from_1_31(double131):
    argv = ["init", "phase", "certs", "sa", "--kubernetes-version", "v1.31.1"]
    assert _main_error(double131, argv) == "the double needs --config (the collection always passes one)"
    assert "unknown command" in _main_error(double131, ["join", "phase", "control-plane-join", "update-status"])


# ---------------------------------------------------------------- join preflight
@pytest.fixture
def join_host(double, tmp_path, monkeypatch):
    """/etc/kubernetes of a joining worker under tmp_path; kubelet's systemd state answered."""
    monkeypatch.setattr(double.common, "K8S", str(tmp_path / "k8s"))
    monkeypatch.setattr(double.common, "PKI", str(tmp_path / "k8s" / "pki"))
    monkeypatch.setattr(double.preflight, "_service_kubelet", lambda: ([], []))
    (tmp_path / "k8s" / "pki").mkdir(parents=True)
    docs = kc.build("join", "1.30.4", {}, NODE, {**JOIN, "control_plane": False, "certificate_key": None})
    join = _kind(docs, "JoinConfiguration")
    join["caCertPath"] = str(tmp_path / "k8s" / "pki" / "ca.crt")
    join["nodeRegistration"]["ignorePreflightErrors"] = []
    return double, join


def _preflight(double, join, ignore=()):
    with pytest.raises(double.Fail) as e:
        double.preflight.join_preflight(join, {"name": "localhost"}, set(ignore))
    return str(e.value)


def test_join_preflight_refuses_a_bootstrap_kubeconfig_and_a_ca_already_there(join_host, tmp_path):
    double, join = join_host
    (tmp_path / "k8s" / "bootstrap-kubelet.conf").write_text("x")
    (tmp_path / "k8s" / "pki" / "ca.crt").write_text("x")
    k8s = str(tmp_path / "k8s").replace("/", "-")
    text = _preflight(double, join)
    assert text.startswith("[preflight] Some fatal errors occurred:")
    assert f"\t[ERROR FileAvailable-{k8s}-bootstrap-kubelet.conf]: {tmp_path}/k8s/bootstrap-kubelet.conf already exists" in text
    assert f"\t[ERROR FileAvailable-{k8s}-pki-ca.crt]: {tmp_path}/k8s/pki/ca.crt already exists" in text
    # named checks are ignored case-insensitively (their errors become warnings), 'all' ignores all
    double.preflight.join_preflight(join, {"name": "localhost"}, {f"fileavailable-{k8s}-bootstrap-kubelet.conf",
                                                                  f"fileavailable-{k8s}-pki-ca.crt"})
    double.preflight.join_preflight(join, {"name": "localhost"}, {"all"})


def test_join_preflight_refuses_a_busy_kubelet_port(join_host):
    double, join = join_host
    busy = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    busy.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        busy.bind(("0.0.0.0", 10250))
    except OSError:
        pytest.skip("port 10250 is taken on this machine")
    busy.listen(1)
    try:
        assert "\t[ERROR Port-10250]: Port 10250 is in use" in _preflight(double, join)
    finally:
        busy.close()
    double.preflight.join_preflight(join, {"name": "localhost"}, set())


def test_join_preflight_of_a_control_plane_node_needs_a_control_plane_endpoint(join_host, monkeypatch):
    double, join = join_host
    join["controlPlane"] = {"localAPIEndpoint": {"advertiseAddress": "192.0.2.11", "bindPort": 6443}}
    monkeypatch.setattr(double.cluster_api, "discover", lambda j: (None, None, {"kubernetesVersion": "v1.30.4"}, None))
    assert "unable to add a new control plane instance to a cluster that doesn't have a stable controlPlaneEndpoint " \
           "address" in _preflight(double, join)


def test_join_preflight_checks_the_control_plane_files_and_ports(join_host, tmp_path, monkeypatch):
    double, join = join_host
    join["controlPlane"] = {"localAPIEndpoint": {"advertiseAddress": "192.0.2.11", "bindPort": 6443}}
    cluster = {"kubernetesVersion": "v1.30.4", "controlPlaneEndpoint": "api.tke.com:6443",
               "etcd": {"local": {"dataDir": str(tmp_path / "etcd")}}}
    monkeypatch.setattr(double.cluster_api, "discover", lambda j: (None, None, cluster, None))
    (tmp_path / "k8s" / "manifests").mkdir()
    (tmp_path / "k8s" / "manifests" / "etcd.yaml").write_text("x")
    (tmp_path / "etcd").mkdir()
    (tmp_path / "etcd" / "member").mkdir()
    text = _preflight(double, join)
    assert f"{tmp_path}/k8s/manifests/etcd.yaml already exists" in text
    assert f"[ERROR DirAvailable-{str(tmp_path).replace('/', '-')}-etcd]: {tmp_path}/etcd is not empty" in text


def test_join_preflight_checks_ip_forwarding_for_an_ip_endpoint(join_host, monkeypatch):
    """addIPv4Checks runs only when the discovery endpoint is an IP address."""
    double, join = join_host
    seen = []
    real_open = open

    def fake_open(path, *a, **kw):
        if path == "/proc/sys/net/ipv4/ip_forward":
            seen.append(path)
            return __import__("io").StringIO("0\n")
        return real_open(path, *a, **kw)
    monkeypatch.setattr("builtins.open", fake_open)
    double.preflight.join_preflight(join, {"name": "localhost"}, set())  # api.tke.com: no forwarding check
    assert not seen
    join = copy.deepcopy(join)
    join["discovery"]["bootstrapToken"]["apiServerEndpoint"] = "192.0.2.10:6443"
    assert ("[ERROR FileContent--proc-sys-net-ipv4-ip_forward]: /proc/sys/net/ipv4/ip_forward contents are not "
            "set to 1") in _preflight(double, join)


def test_1_31_prints_the_preflight_report_and_fails_shortly(double131, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(double131.common, "K8S", str(tmp_path))
    monkeypatch.setattr(double131.preflight, "_service_kubelet", lambda: ([], []))
    (tmp_path / "kubelet.conf").write_text("x")
    docs = kc.build("join", "1.31.1", {}, NODE, {**JOIN, "control_plane": False, "certificate_key": None})
    join = _kind(docs, "JoinConfiguration")
    join["caCertPath"] = str(tmp_path / "ca.crt")
    with pytest.raises(double131.Fail, match="^preflight checks failed$"):
        double131.preflight.join_preflight(join, {"name": "localhost"}, set())
    assert f"{tmp_path}/kubelet.conf already exists" in capsys.readouterr().err


def test_kubelet_double_follows_the_manifests_content(tmp_path):
    """The kubelet double restarts the API server static pod when the manifest's content changes,
    even when the file keeps its mtime (kubeadm swapping the manifest while it was read: a real
    kubelet converges on the current file's content)."""
    import importlib.machinery
    import importlib.util
    import os
    import sys
    from pathlib import Path
    top = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(top / "apiserver_double"))     # as tests/unit/test_apiserver_double.py
    loader = importlib.machinery.SourceFileLoader("kubelet_double", str(top / "kubeadm_double" / "kubelet"))
    kubelet = importlib.util.module_from_spec(importlib.util.spec_from_loader("kubelet_double", loader))
    loader.exec_module(kubelet)
    cert = tmp_path / "apiserver.crt"
    cert.write_text("cert")
    manifest = tmp_path / "kube-apiserver.yaml"

    def write(tag):
        manifest.write_text(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: kube-apiserver}\nspec:\n  containers:\n  - name: a\n"
            f"    image: registry.tke.com/library/kube-apiserver:{tag}\n"
            f"    command: [kube-apiserver, --secure-port=6443, --tls-cert-file={cert}]\n")
        os.utime(manifest, (1_700_000_000, 1_700_000_000))
    write("v1.30.4")
    args, argv, tag, old = kubelet.pod_command(str(manifest), "tls-cert-file")
    assert (args["secure-port"], tag) == ("6443", "v1.30.4") and argv[:2] == ["kube-apiserver", "--secure-port=6443"]
    write("v1.31.1")    # the same mtime, another image
    args, argv, tag, new = kubelet.pod_command(str(manifest), "tls-cert-file")
    assert tag == "v1.31.1" and new != old
    assert kubelet.pod_command(str(manifest), "tls-cert-file")[3] == new     # unchanged: the same signature
    cert.write_text("renewed")
    assert kubelet.pod_command(str(manifest), "tls-cert-file")[3] != new     # a renewed certificate restarts it too
    # etcd (the real binary reads its certificates again per handshake): the manifest alone counts
    before = kubelet.pod_command(str(manifest), None)[3]
    cert.write_text("renewed again")
    assert kubelet.pod_command(str(manifest), None)[3] == before
    write("v1.31.2")
    assert kubelet.pod_command(str(manifest), None)[3] != before


# ---------------------------------------------------------------- each release's command line (cli_v1_3*.py)
@pytest.fixture
def double132(monkeypatch):
    return _load("1.32", monkeypatch)


NEEDS_CONFIG = "the double needs --config (the collection always passes one)"


def test_1_31_refuses_klogs_hidden_flags_and_keeps_v(double131):
    # release note #125179 (v1.31): --vmodule, --log-file ... are no longer allowed; -v is
    assert _main_error(double131, ["init", "phase", "certs", "all", "--vmodule=x=2"]).startswith("unknown flag: --vmodule")
    assert _main_error(double131, ["init", "phase", "certs", "all", "--log_file=/tmp/x"]).startswith(
        "unknown flag: --log-file")
    assert _main_error(double131, ["init", "phase", "certs", "all", "--v=5"]) == NEEDS_CONFIG


def test_kubelet_finalize_sub_phases_per_release(double, double131, double132):
    rotation = ["init", "phase", "kubelet-finalize", "enable-client-cert-rotation"]
    experimental = ["init", "phase", "kubelet-finalize", "experimental-cert-rotation"]
    # 1.30: only the experimental one; 1.31: both (#124419); 1.32: the experimental one removed (#126913)
    assert 'unknown command "enable-client-cert-rotation"' in _main_error(double, rotation)
    assert _main_error(double131, rotation) == _main_error(double131, experimental) == NEEDS_CONFIG
    assert _main_error(double132, rotation) == NEEDS_CONFIG
    assert 'unknown command "experimental-cert-rotation"' in _main_error(double132, experimental)


def test_double_as_1_32_accepts_its_configuration_and_refuses_a_1_30_control_plane(double132, tmp_path, capsys):
    docs = double132.config_load.load_config(_write(tmp_path, _init("1.32.13")), "init")
    assert docs["ClusterConfiguration"]["kubernetesVersion"] == "v1.32.13"
    join = double132.config_load.load_config(_write(tmp_path, kc.build("join", "1.32.13", {}, NODE, JOIN)), "join")
    assert join["JoinConfiguration"]["controlPlane"]["certificateKey"] == "b" * 64
    assert "strict decoding error" not in capsys.readouterr().err
    _fails(double132, tmp_path, _init("1.30.4"), "control plane version >= 1.31.0. Current version: v1.30.4")


def test_a_1_32_feature_gate_is_refused_by_1_31_and_accepted_by_1_32(double131, double132, tmp_path):
    for d, version in ((double131, "1.31.1"), (double132, "1.32.13")):
        docs = _init(version)
        _kind(docs, "ClusterConfiguration")["featureGates"] = {"NodeLocalCRISocket": True}
        if d is double131:
            _fails(d, tmp_path, docs, "NodeLocalCRISocket is not a valid feature name.")
        else:
            assert d.config_load.load_config(_write(tmp_path, docs), "init")["ClusterConfiguration"]["featureGates"]


def test_print_manifest_mixes_with_config_from_1_32(double131, double132):
    argv = ["init", "phase", "addon", "coredns", "--config", "x", "--print-manifest"]
    assert "can not mix '--config' with arguments [print-manifest]" in _main_error(double131, argv)
    assert "can not mix" not in _main_error(double132, argv)


def test_writes_to_the_api_are_polled_every_half_second_until_the_api_call_timeout(double, monkeypatch):
    """kubeadm's writes (apiclient CreateOrUpdate and its kin; the bootstrap tokens' UpdateOrCreateTokens)
    are made again every KubernetesAPICallRetryInterval (500 ms) until the KubernetesAPICall timeout
    (v1beta4 timeouts.kubernetesAPICall, default 1m0s): `token create` and a phase that writes ride out
    a control-plane endpoint that does not answer for a moment (a VIP moving), and fail with the last
    error once the timeout is spent. `token list` (one List call) is not retried."""
    api, clock, calls = double.cluster_api, {"now": 0.0}, []
    answers = {"after": 3}

    def get(server, path, *args, **kw):
        calls.append(clock["now"])
        if len(calls) <= answers["after"]:
            raise double.common.Fail(f'unable to fetch the cluster: Get "{server}{path}": [Errno 113] No route to host')
        return "ok"

    state = {"tokens": {}, "configmaps": {}}
    monkeypatch.setattr(api, "api_get", get)
    monkeypatch.setattr(api, "admin_server", lambda kubeconfig: ("https://api.tke.com:6443", b"ca"))
    monkeypatch.setattr(api.time, "monotonic", lambda: clock["now"])
    monkeypatch.setattr(api.time, "sleep", lambda s: clock.update(now=clock["now"] + s))
    monkeypatch.setattr(double.common, "load_state", lambda: state)
    monkeypatch.setattr(double.common, "save_state", lambda st: None)

    double.cmd_token.run_token("create", {})
    assert calls == [0.0, 0.5, 1.0, 1.5] and len(state["tokens"]) == 1

    calls.clear()
    api.require_cluster({}, {"InitConfiguration": {}})
    assert len(calls) == 4

    answers["after"] = 10 ** 6   # never answering: 1m0s by default, the configuration's timeout otherwise
    for docs, tries in (({}, 120), ({"InitConfiguration": {"timeouts": {"kubernetesAPICall": "5s"}}}, 10)):
        calls.clear()
        with pytest.raises(double.common.Fail, match="No route to host"):
            api.require_cluster({}, docs)
        assert len(calls) == tries, (docs, len(calls))
    calls.clear()
    with pytest.raises(double.common.Fail, match="No route to host"):
        double.cmd_token.run_token("list", {})
    assert len(calls) == 1


def test_discovery_asks_for_cluster_info_again_until_its_timeout(double, monkeypatch):
    """kubeadm's token discovery asks for cluster-info every 5 s until the discovery timeout
    (discovery/token/token.go, constants.DiscoveryRetryInterval; v1beta4 timeouts.discovery, default
    5m0s): an endpoint that does not answer for a moment is waited out; one that never does fails
    with the last error once the timeout is spent."""
    api, clock, calls = double.cluster_api, {"now": 0.0}, []

    def get(server, path, *args, **kw):
        calls.append(clock["now"])
        if len(calls) < 3:
            raise double.common.Fail(f'unable to fetch cluster-info: Get "{server}{path}": [Errno 113] No route to host')
        return {"data": {}}

    monkeypatch.setattr(api, "api_get", get)
    monkeypatch.setattr(api.time, "monotonic", lambda: clock["now"])
    monkeypatch.setattr(api.time, "sleep", lambda s: clock.update(now=clock["now"] + s))
    assert api.cluster_info("https://api.tke.com:6443", {}) == {"data": {}}
    assert calls == [0.0, 5.0, 10.0]

    # never answering: 5m0s by default, a given timeout otherwise; the error is the last one
    def never(server, path, *args, **kw):
        calls.append(clock["now"])
        raise double.common.Fail(f'unable to fetch cluster-info: Get "{server}{path}": [Errno 113] No route to host')

    monkeypatch.setattr(api, "api_get", never)
    for join, tries in (({}, 60), ({"timeouts": {"discovery": "12s"}}, 3), ({"discovery": {"timeout": "1m0s"}}, 12)):
        calls.clear()
        with pytest.raises(double.common.Fail, match="No route to host"):
            api.cluster_info("https://api.tke.com:6443", join)
        assert len(calls) == tries, (join, len(calls))
    assert double.common.go_duration("1h2m3.5s") == 3723.5
    with pytest.raises(double.common.Fail, match='invalid duration "5 minutes"'):
        double.common.go_duration("5 minutes")

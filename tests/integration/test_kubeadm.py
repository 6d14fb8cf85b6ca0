"""control_plane + nodes on three real hosts with the kubeadm/kubelet TEST DOUBLE.

Real kubeadm and kubelet cannot be obtained here: tests/kubeadm_double/ holds doubles (kubeadm
v1.30's CLI, config validation, the files each phase writes; a kubelet that serves the API
server's health and the cluster's join data). This test installs them on the hosts itself;
the roles and modules only know "the kubeadm binary at tke_kubeadm_bin".
h1 is the first master, h2 joins as a control-plane node, h3 is a worker; etcd is external (one
member on h1: two masters would make an even stacked etcd, which validation refuses). The
certificates and kubeconfigs come from the pki phase, as in an install, and kubeadm reuses them.
"""
import hashlib
import json
import re
from pathlib import Path

import pytest
import yaml

from harness import kubeadm_double
from harness.playbook import converge_twice, run_playbook, TOP

PLAY = TOP / "playbooks" / "install.yml"
TOKEN = re.compile(r"\b[a-z0-9]{6}\.[a-z0-9]{16}\b")


@pytest.fixture(scope="module")
def cluster_hosts(testhosts):
    """The doubles on every host (the test's job, never a role's), and api.tke.com in /etc/hosts
    (host_init's job: this scenario runs only pki, control_plane and nodes)."""
    # no etcd phase among this scenario's tags: the API double keeps its objects in a file
    kubeadm_double.install(testhosts, api_domain_ip=testhosts.ip("h1"), file_store=True)
    return testhosts


@pytest.fixture(scope="module")
def inventory(cluster_hosts, tmp_path_factory):
    return cluster_hosts.write_inventory(
        tmp_path_factory.mktemp("kubeadm") / "hosts.yml",
        # two masters need HA (the third-party LB at the VIP) and an odd etcd: one external member on h1
        groups={"masters": ["h1", "h2"], "workers": ["h3"], "etcd": ["h1"]},
        group_vars={"tke_k8s_version": "1.30.4", "tke_allow_eol_install": True, "tke_ha_mode": "thirdparty",
                    "tke_vip": "172.30.99.100"})


def _py(th, host, code):
    return th.ssh(host, "python3 -c " + json.dumps(code)).stdout.strip()


HEALTH = ("import ssl,urllib.request;c=ssl.create_default_context(cafile='/etc/kubernetes/pki/ca.crt');"
          "print(urllib.request.urlopen('https://{addr}:6443/healthz',context=c,timeout=5).read().decode())")


def test_control_plane_and_nodes_converge_then_change_nothing(cluster_hosts, inventory):
    th = cluster_hosts
    first, second = converge_twice(PLAY, inventory, "--tags", "pki,control_plane,nodes")
    assert set(second.stats) == {"h1", "h2", "h3"}
    # secrets never appear in the output
    assert not TOKEN.search(first.output), first.explain()
    # kubeadm reads every configuration the collection wrote without a warning (an unknown field
    # would only be warned about by kubeadm, and then ignored)
    for h in ("h1", "h2", "h3"):
        assert th.ssh(h, "cat /var/log/kubeadm-double-warnings.log 2>/dev/null || true").stdout == "", h
    # kubeadm ran the init phases on h1 in TKE's order, and every join phase once
    log = th.ssh("h1", "cat /var/log/kubeadm-double.log").stdout
    phases = [re.sub(r" --.*", "", l) for l in log.splitlines() if " phase " in l]
    assert phases == ["init phase kubelet-start", "init phase certs all", "init phase kubeconfig all",
                      "init phase control-plane all", "init phase upload-config all",
                      "init phase upload-certs", "init phase mark-control-plane", "init phase bootstrap-token",
                      "init phase addon all"], log
    assert "--skip-certificate-key-print" in log and "--skip-token-print" in log
    assert th.ssh("h2", "cat /var/log/kubeadm-double.log").stdout.split("\n")[:4] == [
        f"join phase {p} --config /etc/kubernetes/kubeadm-join.yaml" for p in
        ("preflight", "control-plane-prepare all", "kubelet-start", "control-plane-join all")]
    assert th.ssh("h3", "cat /var/log/kubeadm-double.log").stdout.splitlines() == [
        f"join phase {p} --config /etc/kubernetes/kubeadm-join.yaml" for p in ("preflight", "kubelet-start")]

    # the services work: kubelets run, both API servers answer with certificates of one CA
    for h in ("h1", "h2", "h3"):
        assert th.ssh(h, "systemctl is-active kubelet").stdout.strip() == "active", h
    for h in ("h1", "h2"):
        assert _py(th, h, HEALTH.format(addr=th.ip(h))) == "ok"
        # the worker trusts both with the CA it discovered through cluster-info
        assert _py(th, "h3", HEALTH.format(addr=th.ip(h))) == "ok"
    assert th.ssh("h1", "sha256sum /etc/kubernetes/pki/ca.crt").stdout.split()[0] == \
        th.ssh("h2", "sha256sum /etc/kubernetes/pki/ca.crt").stdout.split()[0]
    # kubeadm's files with TKE's settings
    h1cfg = th.ssh("h1", "cat /etc/kubernetes/kubeadm-config.yaml").stdout
    h1docs = {d["kind"]: d for d in yaml.safe_load_all(h1cfg) if d}
    assert h1docs["ClusterConfiguration"]["controlPlaneEndpoint"] == "api.tke.com:6443"
    assert f"https://{th.ip('h1')}:2379" in h1docs["ClusterConfiguration"]["etcd"]["external"]["endpoints"]
    assert "172.30.99.100/32" in h1docs["KubeProxyConfiguration"]["ipvs"]["excludeCIDRs"]
    assert th.ssh("h1", "stat -c %a /etc/kubernetes/kubeadm-config.yaml").stdout.strip() == "600"
    api = th.ssh("h2", "cat /etc/kubernetes/manifests/kube-apiserver.yaml").stdout
    assert "--service-cluster-ip-range=10.96.0.0/16" in api and "registry.tke.com/library/kube-apiserver:v1.30.4" in api
    assert "--allocate-node-cidrs=true" in th.ssh("h2", "cat /etc/kubernetes/manifests/kube-controller-manager.yaml").stdout
    # the worker got the kubelet configuration uploaded by h1 (through the API server on h1)
    kubelet = yaml.safe_load(th.ssh("h3", "cat /var/lib/kubelet/config.yaml").stdout)
    assert kubelet["maxPods"] == 256 and kubelet["kubeReserved"] == {"cpu": "100m", "memory": "500Mi"}
    assert "server: https://api.tke.com:6443" in th.ssh("h3", "cat /etc/kubernetes/kubelet.conf").stdout
    flags = th.ssh("h3", "cat /var/lib/kubelet/kubeadm-flags.env").stdout
    assert "--pod-infra-container-image=registry.tke.com/library/pause:3.9" in flags
    # the worker's token is the collection's never-expiring token known to the cluster
    join = th.ssh("h3", "cat /etc/kubernetes/kubeadm-join.yaml").stdout
    token = TOKEN.search(join).group(0)
    state = json.loads(th.ssh("h1", "cat /var/lib/kubeadm-double/state.json").stdout)
    assert state["tokens"][token]["description"] == "offline_pot.tke join token"
    assert state["tokens"][token]["expires"] is None
    assert th.ssh("h3", "stat -c %a /etc/kubernetes/kubeadm-join.yaml").stdout.strip() == "600"
    # the discovery hash the worker pinned is the hash of the CA on h1
    ca_pem = th.ssh("h1", "cat /etc/kubernetes/pki/ca.crt").stdout
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    spki = x509.load_pem_x509_certificate(ca_pem.encode()).public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    assert "sha256:" + hashlib.sha256(spki).hexdigest() in join


def test_double_rejects_what_kubeadm_rejects(cluster_hosts):
    th = cluster_hosts
    cfg = "--config /etc/kubernetes/kubeadm-config.yaml"
    res = th.ssh("h1", f"kubeadm init phase certs all {cfg} --bogus-flag", check=False)
    assert res.returncode == 1 and "unknown flag: --bogus-flag" in res.stderr
    res = th.ssh("h1", f"kubeadm init phase certs all {cfg} --cert-dir /tmp/x", check=False)
    assert res.returncode == 1 and "can not mix '--config' with arguments [cert-dir]" in res.stderr
    res = th.ssh("h1", f"kubeadm init phase wait-control-plane {cfg}", check=False)  # hidden in v1.30
    assert res.returncode == 1 and 'unknown command "wait-control-plane"' in res.stderr
    res = th.ssh("h1", f"kubeadm join phase control-plane-join all {cfg} --token abc", check=False)
    assert res.returncode == 1 and "unknown flag: --token" in res.stderr


def test_bad_kubeadm_config_fails_with_kubeadms_message(cluster_hosts, inventory):
    bad = yaml.safe_load(Path(inventory).read_text())
    bad["all"]["vars"]["control_plane_apiserver_cert_sans"] = ["api.tke.com", "bad_name!"]
    # beside the site's inventory: the same site (its .tke/), whose hosts these are
    path = Path(inventory).parent / "bad.yml"
    path.write_text(yaml.safe_dump(bad))
    run = run_playbook(PLAY, path, "--tags", "control_plane", "--limit", "h1")
    assert run.rc != 0, run.explain()
    assert "kubeadm init phase kubelet-start failed (exit 1)" in run.output, run.explain()
    # validation.ValidateCertSANs names the list (no index) and appends the DNS validators' reasons
    assert ('apiServer.certSANs: Invalid value: "bad_name!": altname is not a valid IP address, '
            'DNS label or a DNS label with subdomain wildcards') in run.output, run.explain()
    # the failed phase stopped the host: no later phase ran with the bad configuration
    assert "kubeadm init phase certs all" not in run.output.split("kubelet-start failed", 1)[1], run.explain()


def test_an_endpoint_that_does_not_answer_is_named(cluster_hosts, inventory):
    """The first master's API server serves but the control-plane endpoint does not (here: the
    API domain no longer resolves on h1): the phase stops before upload-config, saying where."""
    th = cluster_hosts
    th.ssh("h1", "sed -i '/ api.tke.com$/d' /etc/hosts")
    try:
        run = run_playbook(PLAY, inventory, "--tags", "control_plane", "--limit", "h1",
                           "-e", "control_plane_wait_timeout=10")
    finally:
        th.ssh("h1", f"echo '{th.ip('h1')} api.tke.com' >> /etc/hosts")
    assert run.rc != 0, run.explain()
    said = " ".join(run.output.split())  # (the callback folds long messages)
    assert (f"h1: the API server answers on {th.ip('h1')} but not at the control-plane endpoint "
            "https://api.tke.com:6443") in said, run.explain()
    assert "the load balancer at 172.30.99.100 does not forward port 6443 to port 6443 of the masters" in said, \
        run.explain()
    assert "init phase upload-config" not in run.output.split("The control-plane endpoint answers", 1)[1]

"""PKI on three real hosts: the authority issues, distributes and keeps everything stable; real
consumers use the certificates (openssl verify, a 3-member etcd over mutual TLS, the registry over
TLS, kubectl reading the kubeconfigs); certs.yml check flags exactly a near-expiry certificate,
renew fixes it (restarting that etcd member) and replaces another CA's certificate, naming each
file and why, and a second run changes nothing; add-sans re-issues
only the certificates carrying the new address.

etcd and the registry run from test fixtures (minimal units below) until their roles exist; the
control-plane static pod restart cannot be exercised here (no kubelet).
"""
import concurrent.futures
import datetime
import json
import re
import time
from pathlib import Path

import pytest

from harness.playbook import converge_twice, run_playbook, TOP
from ansible_collections.offline_pot.tke.plugins.plugin_utils import k8s_pki

INSTALL = TOP / "playbooks" / "install.yml"
CERTS = TOP / "playbooks" / "certs.yml"
PKI = "/etc/kubernetes/pki"


def parallel(fn, items):
    with concurrent.futures.ThreadPoolExecutor(len(items)) as ex:
        return list(ex.map(fn, items))


@pytest.fixture(scope="module")
def site(testhosts, tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    vip = f"{testhosts.gateway.rsplit('.', 1)[0]}.100"
    inv = testhosts.write_inventory(
        d / "hosts.yml",
        groups={"masters": ["h1"], "workers": ["h2", "h3"], "etcd": ["h1", "h2", "h3"], "registry": ["h2"]},
        # the registry consumer here is Debian's docker-registry unit (the registry phase's own
        # service, tke-registry, is the default)
        group_vars={"tke_vip": vip, "pki_apiserver_extra_sans": ["api.example.org"],
                    "pki_registry_service": "docker-registry"})
    return {"inv": inv, "dir": d, "pki": d / ".tke" / "pki", "vip": vip}


@pytest.fixture(scope="module")
def converged(site, testhosts):
    first, second = converge_twice(INSTALL, site["inv"], "--tags", "pki")
    return first, second


def test_converges_then_changes_nothing(site, converged, testhosts):
    first, second = converged
    assert set(second.stats) == {"h1", "h2", "h3"}
    # every host got its files (what they are is verified below); the authority was made once
    assert set(first.changed_hosts()) == {"h1", "h2", "h3"}, first.explain()
    assert (site["pki"] / "ca.crt").exists() and (site["pki"] / "ca.key").exists()
    pki = site["pki"]
    assert oct(pki.stat().st_mode & 0o777) == "0o700"
    assert all(oct(p.stat().st_mode & 0o777) == "0o600" for p in pki.rglob("*.key"))
    # no key material in the output
    assert "PRIVATE KEY" not in first.output + second.output
    assert "client-key-data" not in first.output + second.output


def test_check_mode_with_a_new_san_changes_nothing(site, converged, testhosts):
    before = {p: p.read_bytes() for p in site["pki"].rglob("*") if p.is_file()}
    host_before = testhosts.ssh("h1", f"sha256sum {PKI}/apiserver.crt").stdout
    run = run_playbook(INSTALL, site["inv"], "--tags", "pki", "--check", "--diff",
                       extra_vars={"pki_apiserver_extra_sans": ["api.example.org", "new.example.org"]})
    assert run.rc == 0, run.explain()
    assert "apiserver: renewed (missing SANs: new.example.org)" in run.output, run.explain()
    # only the master carries the API server certificate: only h1 would change
    assert set(run.changed_hosts()) == {"h1"}, run.explain()
    assert {p: p.read_bytes() for p in site["pki"].rglob("*") if p.is_file()} == before
    assert testhosts.ssh("h1", f"sha256sum {PKI}/apiserver.crt").stdout == host_before


def test_files_on_hosts_verify_and_have_the_kubeadm_layout(converged, testhosts):
    h1 = testhosts.ssh("h1", "cd /etc/kubernetes && find . -type f | sort").stdout.split()
    for f in ("./admin.conf", "./super-admin.conf", "./controller-manager.conf", "./scheduler.conf",
              "./kubelet.conf", "./pki/ca.crt", "./pki/ca.key", "./pki/apiserver.crt", "./pki/sa.key", "./pki/sa.pub",
              "./pki/front-proxy-client.key", "./pki/apiserver-etcd-client.crt", "./pki/etcd/server.crt",
              "./pki/etcd/peer.key", "./pki/etcd/healthcheck-client.crt"):
        assert f in h1, h1
    assert "./pki/etcd/ca.key" not in h1     # external etcd: masters do not hold the etcd CA key
    h3 = testhosts.ssh("h3", "find /etc/kubernetes /etc/tke -type f 2>/dev/null | sort").stdout.split()
    assert h3 == ["/etc/kubernetes/kubelet.conf", "/etc/kubernetes/pki/ca.crt", "/etc/kubernetes/pki/etcd/ca.crt",
                  "/etc/kubernetes/pki/etcd/healthcheck-client.crt", "/etc/kubernetes/pki/etcd/healthcheck-client.key",
                  "/etc/kubernetes/pki/etcd/peer.crt", "/etc/kubernetes/pki/etcd/peer.key",
                  "/etc/kubernetes/pki/etcd/server.crt", "/etc/kubernetes/pki/etcd/server.key"]
    assert testhosts.ssh("h2", "stat -c '%a %U' /etc/tke/pki/registry.key").stdout.split() == ["600", "root"]
    verify = {
        "h1": [f"openssl verify -CAfile {PKI}/ca.crt {PKI}/apiserver.crt {PKI}/apiserver-kubelet-client.crt",
               f"openssl verify -CAfile {PKI}/front-proxy-ca.crt {PKI}/front-proxy-client.crt",
               f"openssl verify -CAfile {PKI}/etcd/ca.crt {PKI}/apiserver-etcd-client.crt {PKI}/etcd/server.crt "
               f"{PKI}/etcd/peer.crt {PKI}/etcd/healthcheck-client.crt",
               "openssl verify -CAfile /etc/tke/pki/ca.crt /etc/tke/pki/gateway.crt /etc/tke/pki/webhook.crt"],
        "h2": [f"openssl verify -CAfile {PKI}/etcd/ca.crt {PKI}/etcd/server.crt {PKI}/etcd/peer.crt",
               "openssl verify -CAfile /etc/tke/pki/ca.crt /etc/tke/pki/registry.crt"],
        "h3": [f"openssl verify -CAfile {PKI}/etcd/ca.crt {PKI}/etcd/server.crt {PKI}/etcd/peer.crt"],
    }
    for host, cmds in verify.items():
        for cmd in cmds:
            out = testhosts.ssh(host, cmd).stdout
            assert out.count(": OK") == len(cmd.split()) - 4, out
    # the wrong CA does not verify (the check above can fail)
    assert testhosts.ssh("h1", f"openssl verify -CAfile {PKI}/ca.crt {PKI}/etcd/server.crt", check=False).returncode != 0
    # each key belongs to its certificate
    for name in ("apiserver", "etcd/server", "etcd/peer"):
        same = testhosts.ssh("h1", f"for f in {PKI}/{name}.crt; do openssl x509 -noout -pubkey -in $f; done | sha256sum;"
                                   f" openssl pkey -pubout -in {PKI}/{name}.key | sha256sum").stdout.splitlines()
        assert same[0] == same[1], name


ETCD_UNIT = """[Unit]
Description=etcd member (offline_pot.tke PKI test fixture)
After=network-online.target
[Service]
Type=notify
ExecStart=/usr/bin/etcd --name {name} --data-dir /var/lib/etcd-pki-test \\
  --listen-client-urls https://{ip}:2379,https://127.0.0.1:2379 --advertise-client-urls https://{ip}:2379 \\
  --listen-peer-urls https://{ip}:2380 --initial-advertise-peer-urls https://{ip}:2380 \\
  --initial-cluster {cluster} --initial-cluster-state new --initial-cluster-token pki-test \\
  --cert-file {pki}/etcd/server.crt --key-file {pki}/etcd/server.key \\
  --client-cert-auth --trusted-ca-file {pki}/etcd/ca.crt \\
  --peer-cert-file {pki}/etcd/peer.crt --peer-key-file {pki}/etcd/peer.key \\
  --peer-client-cert-auth --peer-trusted-ca-file {pki}/etcd/ca.crt
Restart=on-failure
[Install]
WantedBy=multi-user.target
"""

REGISTRY_DROPIN = """[Service]
# the key stays root:root 0600; systemd hands the unprivileged service a copy
LoadCredential=registry.key:/etc/tke/pki/registry.key
Environment=REGISTRY_HTTP_ADDR=:5000 REGISTRY_HTTP_TLS_CERTIFICATE=/etc/tke/pki/registry.crt
Environment=REGISTRY_HTTP_TLS_KEY=%d/registry.key
"""

NO_START = "printf '#!/bin/sh\\nexit 101\\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d"


def etcdctl(testhosts, host, *args, cert=True, check=True):
    auth = (f"--cert {PKI}/etcd/healthcheck-client.crt --key {PKI}/etcd/healthcheck-client.key " if cert else "")
    return testhosts.ssh(host, f"ETCDCTL_API=3 etcdctl --endpoints https://{testhosts.ip(host)}:2379 "
                               f"--cacert {PKI}/etcd/ca.crt {auth}--command-timeout=5s {' '.join(args)}",
                         check=check)


def wait_healthy(testhosts, host="h1", timeout=60):
    end = time.time() + timeout
    while True:
        res = etcdctl(testhosts, host, "endpoint", "health", "--cluster", check=False)
        out = res.stdout + res.stderr        # etcdctl 3.4 prints endpoint health on stderr
        if res.returncode == 0 and out.count("is healthy") == 3:
            return out
        if time.time() > end:
            raise AssertionError(f"etcd not healthy: {res.stdout} {res.stderr}")
        time.sleep(1)


@pytest.fixture(scope="module")
def services(converged, testhosts):
    """A real 3-member etcd over mutual TLS and the registry over TLS, using the distributed files."""
    names = ["h1", "h2", "h3"]
    cluster = ",".join(f"{n}=https://{testhosts.ip(n)}:2380" for n in names)

    def setup(n):
        pkgs = "etcd-server etcd-client curl" + (" docker-registry" if n == "h2" else "") + \
            (" kubernetes-client" if n == "h1" else "")
        unit = ETCD_UNIT.format(name=n, ip=testhosts.ip(n), cluster=cluster, pki=PKI)
        testhosts.ssh(n, f"{NO_START} && apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q {pkgs} >/dev/null "
                         f"&& rm -f /usr/sbin/policy-rc.d && cat > /etc/systemd/system/etcd.service <<'EOF'\n{unit}EOF\n"
                         "systemctl daemon-reload && systemctl enable -q etcd && systemctl start --no-block etcd",
                      timeout=300)
        if n == "h2":
            testhosts.ssh(n, "mkdir -p /etc/systemd/system/docker-registry.service.d && "
                             f"cat > /etc/systemd/system/docker-registry.service.d/tls.conf <<'EOF'\n{REGISTRY_DROPIN}EOF\n"
                             "systemctl daemon-reload && systemctl enable -q docker-registry && "
                             "systemctl restart docker-registry")
    parallel(setup, names)
    wait_healthy(testhosts)
    return True


def test_etcd_cluster_over_mutual_tls(services, testhosts):
    out = wait_healthy(testhosts)
    assert all(f"https://{testhosts.ip(n)}:2379 is healthy" in out for n in ("h1", "h2", "h3")), out
    etcdctl(testhosts, "h3", "put", "pki-test", "ok")
    assert etcdctl(testhosts, "h1", "get", "pki-test", "--print-value-only").stdout.strip() == "ok"
    # a client without a certificate is refused
    url = f"https://{testhosts.ip('h1')}:2379/health"
    ok = testhosts.ssh("h2", f"curl -sS --cacert {PKI}/etcd/ca.crt --cert {PKI}/etcd/healthcheck-client.crt "
                             f"--key {PKI}/etcd/healthcheck-client.key {url}").stdout
    assert json.loads(ok)["health"] == "true", ok
    refused = testhosts.ssh("h2", f"curl -sS --cacert {PKI}/etcd/ca.crt {url}", check=False)
    assert refused.returncode != 0, refused.stdout
    # the server refused it for the missing client certificate (etcd logs why)
    for dummy in range(20):
        log = testhosts.ssh("h1", "journalctl -q -u etcd --no-pager | grep -c \"didn't provide a certificate\"",
                            check=False).stdout.strip()
        if log not in ("", "0"):
            break
        time.sleep(0.2)
    assert log not in ("", "0"), refused.stderr
    # peers authenticate each other with the peer certificates: members list shows three started
    members = etcdctl(testhosts, "h2", "member", "list").stdout
    assert members.count("started") == 3 and members.count(":2380") == 3, members


def registry_get(testhosts, host_name, ca=True):
    ip = testhosts.ip("h2")
    cafile = "--cacert /etc/tke/pki/ca.crt" if ca else ""
    return testhosts.ssh("h2", f"curl -sS -o /dev/null -w '%{{http_code}}' {cafile} --resolve {host_name}:5000:{ip} "
                               f"https://{host_name}:5000/v2/", check=False)


def wait_registry(testhosts, name="registry.tke.com"):
    for dummy in range(50):
        res = registry_get(testhosts, name)
        if res.stdout in ("200", "401"):      # 401: served over TLS, then asks for the registry login
            return res
        time.sleep(0.2)
    raise AssertionError(f"registry: {res.stdout} {res.stderr}")


def test_registry_serves_tls_with_the_server_certificate(services, testhosts):
    wait_registry(testhosts)
    assert registry_get(testhosts, "default.registry.tke.com").stdout in ("200", "401")     # wildcard SAN
    res = registry_get(testhosts, "registry.tke.com", ca=False)
    assert res.returncode != 0 and "certificate" in res.stderr, res.stderr
    res = registry_get(testhosts, "elsewhere.example.org")
    assert res.returncode != 0 and "elsewhere.example.org" in res.stderr, res.stderr


def test_kubeconfigs_parse_with_kubectl(services, testhosts):
    out = testhosts.ssh("h1", "kubectl --kubeconfig /etc/kubernetes/admin.conf config view -o "
                              "jsonpath='{.current-context} {.clusters[0].cluster.server} {.users[0].name}'").stdout
    assert out == "kubernetes-admin@global https://api.tke.com:6443 kubernetes-admin", out
    out = testhosts.ssh("h1", "kubectl --kubeconfig /etc/kubernetes/scheduler.conf config view -o "
                              "jsonpath='{.clusters[0].cluster.server}'").stdout
    assert out == f"https://{testhosts.ip('h1')}:6443"
    # the embedded client certificate is the kubelet's, signed by the cluster CA
    testhosts.ssh("h1", "kubectl --kubeconfig /etc/kubernetes/kubelet.conf config view --raw -o "
                        "jsonpath='{.users[0].user.client-certificate-data}' | base64 -d > /tmp/kubelet.crt && "
                        f"openssl verify -CAfile {PKI}/ca.crt /tmp/kubelet.crt && "
                        "openssl x509 -noout -subject -in /tmp/kubelet.crt | grep -q 'O = system:nodes, CN = system:node:h1'")


def near_expiry(site, name, days_left):
    """Re-sign name on the controller (same key, same CA) so it expires in days_left days."""
    pki = site["pki"]
    spec = {s.name: s for s in k8s_pki.cluster_certs(k8s_pki.Cluster(masters=[], etcd=[{"name": "h2"}], control_plane_endpoint="api.tke.com:6443"))}[name]
    ca = Path(pki, f"{spec.signer}.crt").read_bytes(), Path(pki, f"{spec.signer}.key").read_bytes()
    old = k8s_pki.load_cert(Path(pki, f"{name}.crt").read_bytes())
    dns, ips = k8s_pki.cert_sans(old)
    short = k8s_pki.CertSpec(**{**spec.__dict__, "dns": tuple(dns), "ips": tuple(ips), "days": days_left})
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = k8s_pki.issue(short, k8s_pki.load_key(Path(pki, f"{name}.key").read_bytes()), now,
                         k8s_pki.load_cert(ca[0]), k8s_pki.load_key(ca[1]))
    return k8s_pki.cert_to_pem(cert)


def test_check_flags_the_near_expiry_cert_and_renew_fixes_it(site, services, testhosts):
    # etcd member h2's server certificate, as if issued a year ago: 5 days left, on the controller and h2
    pem = near_expiry(site, "etcd/members/h2/server", 5)
    Path(site["pki"], "etcd/members/h2/server.crt").write_bytes(pem)
    testhosts.ssh("h2", f"cat > {PKI}/etcd/server.crt <<'EOF'\n{pem.decode()}EOF\nsystemctl restart etcd")
    wait_healthy(testhosts)
    check = run_playbook(CERTS, site["inv"])
    assert check.rc == 0 and check.changed_hosts() == {}, check.explain()
    report = json.loads((site["dir"] / ".tke" / "certs.json").read_text())
    flagged = [(r["host"], r["file"], r["days_left"]) for r in report if r["status"] != "ok"]
    assert flagged == [("h2", f"{PKI}/etcd/server.crt", 4)], flagged
    assert len(report) > 30 and {r["host"] for r in report} == {"h1", "h2", "h3"}
    assert re.search(r"^\s*h2\s+/etc/kubernetes/pki/etcd/server.crt\s+commonName=h2\s+\S+\s+4\s+WARN", check.output, re.M), \
        check.explain()
    assert "WARNING h2: /etc/kubernetes/pki/etcd/server.crt" in check.output

    # on h3, a client certificate of another installation's etcd CA (same name, another key) and its key gone
    other_ca_key = k8s_pki.new_key("ecdsa")
    other_ca = k8s_pki.issue(k8s_pki.CertSpec("etcd/ca", "etcd-ca"), other_ca_key, datetime.datetime.now(datetime.timezone.utc))
    foreign = k8s_pki.cert_to_pem(k8s_pki.issue(
        k8s_pki.CertSpec("etcd/healthcheck-client", "kube-etcd-healthcheck-client", "etcd/ca", client=True),
        k8s_pki.new_key("ecdsa"), datetime.datetime.now(datetime.timezone.utc), other_ca, other_ca_key)).decode()
    testhosts.ssh("h3", f"cat > {PKI}/etcd/healthcheck-client.crt <<'EOF'\n{foreign}EOF\n"
                        f"rm {PKI}/etcd/healthcheck-client.key")

    etcd_pid_h3 = testhosts.ssh("h3", "systemctl show -p MainPID --value etcd").stdout
    renew = run_playbook(CERTS, site["inv"], extra_vars={"certs_action": "renew"})
    assert renew.rc == 0, renew.explain()
    assert "etcd/members/h2/server" in renew.output and "expires in 4 days" in renew.output, renew.explain()
    # per host and file, what the store's copy replaced and why (issue 21, item 6); the callback folds
    # long messages and quotes them in YAML (an apostrophe doubled): matched on the output with its
    # whitespace collapsed and the quoting undone
    said = " ".join(renew.output.split()).replace("''", "'")
    lines = [line for line in renew.output.splitlines() if "replaced -" in line or "written -" in line]
    assert re.search(rf"h2: {PKI}/etcd/server.crt: replaced - expiring: 4 days left \(until \S+\), the store's copy "
                     r"until \S+", said), lines
    assert (f"h3: {PKI}/etcd/healthcheck-client.crt: replaced - signed by another CA (issuer commonName=etcd-ca, "
            "not the store's); another key pair than the store's (key mismatch)") in said, lines
    assert f"h3: {PKI}/etcd/healthcheck-client.key: written - missing" in said, lines
    # h1 (the controller's authority re-issues), h2 (the expiring member) and h3 (its foreign client
    # certificate) change, nobody else
    assert set(renew.changed_hosts()) == {"h1", "h2", "h3"}, renew.explain()
    assert "Wait until this member is healthy again" in renew.output
    assert testhosts.ssh("h3", "systemctl show -p MainPID --value etcd").stdout == etcd_pid_h3   # untouched
    wait_healthy(testhosts)
    served = testhosts.ssh("h1", f"openssl s_client -connect {testhosts.ip('h2')}:2379 -CAfile {PKI}/etcd/ca.crt "
                                 f"-cert {PKI}/etcd/healthcheck-client.crt -key {PKI}/etcd/healthcheck-client.key "
                                 "</dev/null 2>/dev/null | openssl x509 -noout -enddate").stdout
    days = (datetime.datetime.strptime(served.strip().split("=", 1)[1], "%b %d %H:%M:%S %Y %Z")
            - datetime.datetime.now()).days
    assert days >= 360, served

    again = run_playbook(CERTS, site["inv"], extra_vars={"certs_action": "renew"})
    assert again.rc == 0 and again.changed_hosts() == {}, again.explain()
    report = json.loads((site["dir"] / ".tke" / "certs.json").read_text())
    assert [r for r in report if r["status"] != "ok"] == []


def test_add_sans_reissues_only_the_certs_carrying_the_new_address(site, services, testhosts):
    ca_before = Path(site["pki"], "ca.crt").read_bytes()
    sums = "sha256sum /etc/kubernetes/pki/*.crt /etc/kubernetes/pki/etcd/*.crt /etc/kubernetes/*.conf /etc/tke/pki/* 2>/dev/null"
    before = {h: testhosts.ssh(h, sums, check=False).stdout.splitlines() for h in ("h1", "h2", "h3")}
    new_vip = f"{testhosts.gateway.rsplit('.', 1)[0]}.101"
    extra = {"certs_action": "add-sans", "tke_vip": new_vip}
    run = run_playbook(CERTS, site["inv"], "--diff", extra_vars=extra)
    assert run.rc == 0, run.explain()
    assert f"apiserver: renewed (missing SANs: {new_vip})" in run.output
    assert f"tke/server: renewed (missing SANs: {new_vip})" in run.output
    after = {h: testhosts.ssh(h, sums, check=False).stdout.splitlines() for h in ("h1", "h2", "h3")}
    diff = {h: sorted(line.split()[1] for line in set(after[h]) - set(before[h])) for h in after}
    assert diff == {"h1": ["/etc/kubernetes/pki/apiserver.crt", "/etc/tke/pki/gateway.crt"],
                    "h2": ["/etc/tke/pki/registry.crt"], "h3": []}, diff
    assert Path(site["pki"], "ca.crt").read_bytes() == ca_before          # the cluster keeps its CA
    # the registry was restarted and serves the new certificate, reachable by the new address
    wait_registry(testhosts)
    sans = testhosts.ssh("h2", f"openssl s_client -connect {testhosts.ip('h2')}:5000 </dev/null 2>/dev/null "
                               "| openssl x509 -noout -ext subjectAltName").stdout
    assert f"IP Address:{new_vip}" in sans, sans
    wait_healthy(testhosts)
    again = run_playbook(CERTS, site["inv"], extra_vars=extra)
    assert again.rc == 0 and again.changed_hosts() == {}, again.explain()

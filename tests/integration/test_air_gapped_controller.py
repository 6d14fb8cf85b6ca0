"""Done-when of the air-gapped controller: a test host with no default route and no resolver gets
only the site pack, runs its bootstrap, and installs the whole site (every phase of install.yml:
h2 the master with etcd and the registry, h3 a worker, with the kubeadm, kubelet and API server
test doubles on them) on the two other test hosts over the site network."""
import subprocess
from pathlib import Path

import yaml

from ansible_collections.offline_pot.tke.plugins.module_utils import pack_signature
from ansible_collections.offline_pot.tke.plugins.module_utils import site_pack_build as b
from harness import fixture_pack, kubeadm_double
from harness.playbook import TOP


def test_controller_without_network_installs_the_site_from_the_pack(testhosts, tmp_path):
    # the pack: the fixture's site contents plus the controller (wheels for the hosts' Debian 12
    # python3 3.11, this collection built from source, the bootstrap)
    spec = yaml.safe_load(fixture_pack.build_inputs(tmp_path / "inputs", Path(testhosts.info["TH_REPO"])).read_text())
    spec["controller"] = {"python": ["3.11"], "platform": fixture_pack.CONTROLLER_PLATFORMS, "requirements": str(TOP / "requirements.txt"),
                          "collection": str(TOP)}
    # signed with the test site owner's key, as every fixture pack (the inventory carries its public key)
    b.Builder(spec, str(tmp_path / "out"), str(tmp_path / "cache"), fixture_pack.run_cmd, fixture_pack.venv_which,
              archive=False, sign=lambda stage: pack_signature.sign_pack(stage, str(fixture_pack.signing_key()))).build()
    pack = tmp_path / "out" / "fixture-1.0.0"

    # what the controller host h1 gets: the pack, the SSH key of the site, the inventory
    inv = testhosts.write_inventory(
        tmp_path / "site" / "hosts.yml",
        groups={"masters": ["h2"], "workers": ["h3"], "etcd": ["h2"], "registry": ["h2"]},
        # (the registry's CA: the one the pki phase issues in the site directory on h1, the default)
        group_vars={"tke_site_pack": "/srv/site/fixture-1.0.0", "site_repo_packages": ["conntrack", "socat"],
                    "precheck_disk": [{"path": "/var/lib", "min_free_gb": 1}],
                    "precheck_disk_etcd": [{"path": "/var/lib/etcd", "min_free_gb": 1}]})
    kubeadm_double.install(testhosts, ["h2", "h3"])
    doc = yaml.safe_load(inv.read_text())
    for h in doc["all"]["hosts"].values():
        h["ansible_ssh_private_key_file"] = "/srv/site/id_site"
    inv.write_text(yaml.safe_dump(doc))
    ssh = testhosts.ssh_argv("h1")
    testhosts.ssh("h1", "mkdir -p /srv/site")
    tar = subprocess.Popen(["tar", "-C", str(pack.parent), "-c", pack.name], stdout=subprocess.PIPE)
    subprocess.run(ssh + ["tar -C /srv/site -x"], stdin=tar.stdout, check=True)
    assert tar.wait() == 0
    for src, dest in ((testhosts.key, "id_site"), (inv, "hosts.yml")):
        subprocess.run(ssh + [f"cat > /srv/site/{dest} && chmod 600 /srv/site/{dest}"],
                       stdin=open(src, "rb"), check=True)

    # h1 loses every way out but the site network: no default route, no resolver
    testhosts.ssh("h1", "ip route del default || true; rm -f /etc/resolv.conf")
    proof = ("ip route | grep -c '^default' || true; test ! -e /etc/resolv.conf && echo no-resolver; "
             "getent hosts deb.debian.org pypi.org || echo no-names; "
             "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 443), 3)' 2>&1 | tail -n 1")
    before = testhosts.ssh("h1", proof).stdout.split("\n")
    assert before[:3] == ["0", "no-resolver", "no-names"] and "unreachable" in before[3], before

    boot = testhosts.ssh("h1", "sh /srv/site/fixture-1.0.0/bootstrap /opt/controller", timeout=900)
    assert "controller ready" in boot.stdout, boot.stdout + boot.stderr
    install = testhosts.ssh(
        "h1", "cd /srv/site && . /opt/controller/activate && ANSIBLE_HOST_KEY_CHECKING=False ANSIBLE_NOCOLOR=1 "
              "ansible-playbook offline_pot.tke.install -i hosts.yml", check=False, timeout=2400)
    assert install.returncode == 0, install.stdout[-6000:] + install.stderr[-2000:]
    assert "h2 " in install.stdout and "failed=0" in install.stdout
    for h in ("h2", "h3"):
        assert testhosts.ssh(h, "systemctl is-active containerd kubelet").stdout.split() == ["active", "active"]
    # every phase ran, and the cluster it built has both nodes Ready (the network phase's wait)
    for phase in ("precheck", "offline", "host_init", "pki", "runtime", "registry", "etcd", "control_plane",
                  "nodes", "network", "components"):
        assert f"Phase {phase}" in install.stdout, phase
    assert "every node Ready: h2, h3" in install.stdout, install.stdout[-6000:]
    # and h1 had no way out during the whole run
    assert testhosts.ssh("h1", proof).stdout.split("\n")[:3] == ["0", "no-resolver", "no-names"]

"""Inventories of whole sites on the three test hosts (the end-to-end test and bench/ share them)."""
from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path


def vip(th) -> str:
    """An unused address of the hosts' subnet for the API VIP."""
    return th.ip("h1").rsplit(".", 1)[0] + ".100"


def ha_keepalived(th, path: Path, pack: Path, **group_vars) -> Path:
    """h1 and h2 masters holding the API VIP with keepalived, h3 a worker; etcd external on h1 (two
    stacked members would be an even etcd, which validation refuses); the registry on h1; everything
    from the site pack. The hosts share this machine's disk: the disk checks ask for little."""
    return th.write_inventory(
        path, groups={"masters": ["h1", "h2"], "workers": ["h3"], "etcd": ["h1"], "registry": ["h1"]},
        group_vars={"tke_ha_mode": "keepalived", "tke_vip": vip(th), "tke_site_pack": str(pack),
                    "site_repo_packages": ["conntrack", "socat"],
                    "precheck_disk": [{"path": "/var/lib", "min_free_gb": 1}],
                    "precheck_disk_etcd": [{"path": "/var/lib/etcd", "min_free_gb": 1}], **group_vars})


def keepalived_site(th, path: Path, pack: Path, masters, workers, settings: dict | None = None,
                    services: str = "h1", **host_vars) -> Path:
    """The HA keepalived site on any hosts: the masters hold the VIP, etcd external on one host,
    `services` (h1; so the API server doubles of every master share their objects), the registry
    on it too; settings: more group variables (the release); host_vars: per host overrides (an
    unreachable address). Used to upgrade, grow and shrink one site (test_upgrade.py), for the
    site of two releases (test_mixed_releases.py) and by bench/scale_bench.py."""
    return th.write_inventory(
        path, groups={"masters": list(masters), "workers": list(workers), "etcd": [services], "registry": [services]},
        group_vars={"tke_ha_mode": "keepalived", "tke_vip": vip(th), "tke_site_pack": str(pack),
                    "site_repo_packages": ["conntrack", "socat"],
                    "precheck_disk": [{"path": "/var/lib", "min_free_gb": 1}],
                    "precheck_disk_etcd": [{"path": "/var/lib/etcd", "min_free_gb": 1}], **(settings or {})},
        host_vars=host_vars)


# what an install leaves on a host that playbooks/reset.yml removes (test_network.py's reset
# scenarios and test_mixed_releases.py's reset of both releases and architectures; the check is
# "none left": every host has each one it ran; the CNI configuration directory is emptied, not
# removed: containerd 2 exits when it goes, roles/network/tasks/reset.yml)
RESET_SERVICES = ["kubelet", "containerd", "etcd", "keepalived", "tke-registry", "haproxy"]
RESET_PATHS = ["/etc/kubernetes", "/var/lib/kubelet", "/etc/containerd", "/var/lib/containerd", "/etc/cni/net.d/*",
               "/etc/etcd", "/var/lib/etcd", "/etc/tke", "/etc/tke-registry", "/etc/keepalived/keepalived.conf",
               "/etc/systemd/system/kubelet.service", "/etc/systemd/system/containerd.service",
               "/etc/systemd/system/etcd.service", "/etc/systemd/system/tke-registry.service",
               "/etc/systemd/system/keepalived.service.d", "/etc/crictl.yaml", "/etc/sysctl.d/90-offline-pot-tke.conf",
               "/etc/modules-load.d/offline-pot-tke.conf", "/var/lib/offline-pot",
               "/usr/local/share/ca-certificates/tke-registry-ca.crt"]


def left(th, host):
    """What of the install is still on the host after a reset: active or enabled services, paths,
    our /etc/hosts blocks."""
    out = th.ssh(host, "for s in " + " ".join(RESET_SERVICES) + "; do systemctl is-active -q $s && echo active:$s; "
                 "systemctl is-enabled -q $s 2>/dev/null && echo enabled:$s; done; "
                 "for p in " + " ".join(RESET_PATHS) + "; do [ -e $p ] && echo path:$p; done; "
                 "grep -o 'offline_pot.tke[a-z ]*' /etc/hosts; true").stdout.split("\n")
    return sorted(x for x in out if x)


@contextlib.contextmanager
def started(th_id: int, count: int, pack_cache: Path):
    """For a benchmark: hosts h1..h<count> of instance th_id up with the test doubles, the fixture
    site pack (built or reused under pack_cache) and a site directory; the hosts destroyed after.
    Yields (hosts, site directory, pack)."""
    from harness import fixture_pack, kubeadm_double
    from harness.testhosts import TestHosts
    hosts = TestHosts(th_id=th_id, count=count)
    hosts.prepare()
    try:
        hosts.up()
        top = Path(__file__).resolve().parents[2]
        with tempfile.TemporaryDirectory(dir=top / ".cache") as tmp:
            pack = fixture_pack.ensure_pack(pack_cache, Path(hosts.info["TH_REPO"]))
            kubeadm_double.install(hosts)
            yield hosts, Path(tmp), pack
    finally:
        hosts.destroy()

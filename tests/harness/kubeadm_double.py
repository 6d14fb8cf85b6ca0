"""Put the kubeadm/kubelet test doubles (tests/kubeadm_double) on test hosts: the test's job, never a
role's. The roles only know "the kubeadm binary at control_plane_kubeadm_bin" (/usr/local/bin)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

DOUBLE = Path(__file__).resolve().parent.parent / "kubeadm_double"


def ssh_argv(th, name: str) -> list[str]:
    return ["ssh", "-q", "-i", th.key, "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
            "-o", "BatchMode=yes", f"root@{th.ip(name)}"]


def install(th, names=None, api_domain_ip: str | None = None, kubeadm_version: str = "1.30") -> None:
    """The doubles (with a copy of PyYAML) under /usr/local/lib/kubeadm-double, symlinked into
    /usr/local/bin, and python3-cryptography from the hosts' apt repository (the double makes real
    certificates). api_domain_ip: also resolve api.tke.com to it (when host_init does not run).
    kubeadm_version: the kubeadm the double acts as (1.30 or 1.31; the file `version` beside it)."""
    yaml_pkg = Path(yaml.__file__).parent
    if kubeadm_version not in ("1.30", "1.31"):
        raise ValueError(f"the kubeadm double acts as kubeadm 1.30 or 1.31, not {kubeadm_version}")
    modules = sorted(p.name for p in DOUBLE.glob("*.py"))
    tar = subprocess.run(["tar", "-C", str(DOUBLE), "-cf", "-", "kubeadm", "kubelet", *modules,
                          "-C", str(yaml_pkg.parent), "--exclude=__pycache__", "--exclude=*.so", yaml_pkg.name],
                         check=True, capture_output=True).stdout
    for h in names or th.names:
        subprocess.run(ssh_argv(th, h) + [
            "mkdir -p /usr/local/lib/kubeadm-double && tar -C /usr/local/lib/kubeadm-double -xf - && "
            f"echo {kubeadm_version} > /usr/local/lib/kubeadm-double/version && "
            "ln -sf /usr/local/lib/kubeadm-double/kubeadm /usr/local/bin/kubeadm && "
            "ln -sf /usr/local/lib/kubeadm-double/kubelet /usr/local/bin/kubelet"], input=tar, check=True, timeout=120)
        hosts_line = (f" && (grep -q ' api.tke.com$' /etc/hosts || echo '{api_domain_ip} api.tke.com' >> /etc/hosts)"
                      if api_domain_ip else "")
        th.ssh(h, "(apt-get update -qq && apt-get install -y -qq python3-cryptography) >/dev/null 2>&1; "
                  "python3 -c 'import cryptography'" + hosts_line, timeout=300)

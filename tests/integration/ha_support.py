"""Helpers of the HA scenarios: an HTTPS health responder standing in for the API server on a
test host, and a watcher that records every time a host gains or loses the VIP."""
from __future__ import annotations

import datetime
import shlex
import ssl
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

RESPONDER = Path(__file__).resolve().parent / "fixtures" / "https_responder.py"
GET = Path(__file__).resolve().parent / "fixtures" / "https_get.py"
SENDER = Path(__file__).resolve().parent / "fixtures" / "vrrp_sender.py"


def self_signed() -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test-apiserver")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


def put(hosts, name: str, path: str, data: bytes, mode: str = "0600") -> None:
    argv = hosts.ssh_argv(name) + [f"mkdir -p $(dirname {path}) && cat > {path} && chmod {mode} {path}"]
    subprocess.run(argv, input=data, check=True, timeout=60)


def install_responder(hosts, names) -> None:
    cert, key = self_signed()
    for n in names:
        put(hosts, n, "/root/responder/cert.pem", cert)
        put(hosts, n, "/root/responder/key.pem", key)
        put(hosts, n, "/root/responder/responder.py", RESPONDER.read_bytes(), "0644")
        put(hosts, n, "/root/responder/get.py", GET.read_bytes(), "0644")


def start_responder(hosts, name: str, port: int = 6443, unit: str = "test-apiserver", label: str = "") -> None:
    hosts.ssh(name, f"systemctl is-active -q {unit} || systemd-run -q --unit={unit} python3 "
                    f"/root/responder/responder.py {port} /root/responder/cert.pem /root/responder/key.pem {label}")
    wait_until(lambda: hosts.ssh(name, get(f"https://127.0.0.1:{port}/healthz", 1),
                                 check=False).returncode == 0, 10, f"{name}: responder on {port}")


def get(url: str, timeout: float = 3) -> str:
    """The command that fetches url on a test host (python, the hosts have no curl)."""
    return f"python3 /root/responder/get.py {url} {timeout}"


def stop_responder(hosts, name: str, unit: str = "test-apiserver") -> None:
    hosts.ssh(name, f"systemctl stop {unit}; systemctl reset-failed {unit} 2>/dev/null; true")


def wait_until(predicate, timeout: float, what: str, step: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


WATCH = ("while :; do if ip -o -4 addr show to {vip}/32 | grep -q .; then s=1; else s=0; fi; "
         "if [ \"$s\" != \"$p\" ]; then echo \"$(date +%s.%N) $s\" >> /run/vipwatch.log; p=$s; fi; "
         "sleep 0.05; done")


def start_vip_watch(hosts, names, vip: str) -> None:
    for n in names:
        hosts.ssh(n, "systemctl stop vipwatch 2>/dev/null; systemctl reset-failed vipwatch 2>/dev/null; "
                     "rm -f /run/vipwatch.log; systemd-run -q --unit=vipwatch /bin/bash -c "
                     + shlex.quote(WATCH.format(vip=vip)))


def vip_events(hosts, names) -> list[tuple[float, str, int]]:
    """(time, host, 1 = gained / 0 = lost), in time order, from the watchers' logs."""
    events = []
    for n in names:
        out = hosts.ssh(n, "cat /run/vipwatch.log 2>/dev/null", check=False).stdout
        lines = [line.split() for line in out.split("\n") if line.strip()]
        if lines and lines[0][1] == "0":
            lines = lines[1:]  # the watcher's first line is the state it started in
        events += [(float(t), n, int(s)) for t, s in lines]
    return sorted(events)


def gains(events) -> list[tuple[float, str]]:
    return [(t, n) for t, n, s in events if s == 1]


def gains_after(hosts, names, t: float, timeout: float = 15) -> list[tuple[float, str]]:
    """The gains of the VIP the watchers logged after t, once one is logged: a watcher polls every
    50 ms, and on a loaded machine the harness can see the VIP on its new holder before that
    holder's watcher has written the gain down."""
    found = []

    def logged():
        found[:] = [(g, n) for g, n in gains(vip_events(hosts, names)) if g > t]
        return bool(found)
    wait_until(logged, timeout, f"the watchers to log a gain of the VIP after {t}")
    return list(found)


def holders(hosts, names, vip: str) -> list[str]:
    return [n for n in names
            if hosts.ssh(n, f"ip -o -4 addr show to {vip}/32", check=False).stdout.strip()]


def stop_vip_watch(hosts, names) -> None:
    for n in names:
        hosts.ssh(n, "systemctl stop vipwatch 2>/dev/null; true", check=False)


class Watcher(threading.Thread):
    """GET https://VIP:6443/healthz every 100 ms from the controller; records the failures."""

    def __init__(self, url, ca):
        super().__init__(daemon=True)
        self.url, self.ctx = url, ssl.create_default_context(cafile=ca)
        self.ctx.check_hostname = False
        self.samples, self.stop = [], threading.Event()

    def run(self):
        while not self.stop.is_set():
            t = time.monotonic()
            try:
                with urllib.request.urlopen(self.url, timeout=1, context=self.ctx) as r:
                    ok = r.status == 200
            except Exception:  # noqa: BLE001 - any failure is a failed sample
                ok = False
            self.samples.append((t, ok))
            time.sleep(max(0.0, 0.1 - (time.monotonic() - t)))

    def longest_gap(self) -> float:
        gap, since = 0.0, None
        for t, ok in self.samples:
            if not ok and since is None:
                since = t
            elif ok and since is not None:
                gap, since = max(gap, t - since), None
        if since is not None:
            gap = max(gap, self.samples[-1][0] - since)
        return gap

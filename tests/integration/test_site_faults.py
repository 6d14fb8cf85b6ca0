"""A whole site with three keepalived masters on the three test hosts, then the faults a live
site meets, sharing the one install (CI budget):

- check mode over every phase of the installed site with the journal off runs through and would
  change nothing (the one whole-site check-mode proof on an installed site: test_install_e2e
  re-converges its site for real, test_check_mode previews a fresh one);
- every secret of the site stays out of every host's journal and /var/log, the controller's
  output, and every world-readable file, after an install, a check-mode run with the journal off,
  and a --check --diff preview of a change of every password (whose files show masked diffs);
- keepalived killed with SIGKILL on the VIP holder comes back (systemd) and the VIP is never on
  two hosts (watched on every master every 50 ms);
- a hung API server (SIGSTOP) on the VIP holder moves the VIP within 3 s;
- certs.yml renew restarts the API servers one at a time: the VIP's /healthz, sampled from the
  controller every 100 ms, never stops answering longer than a failover.

The masters run the kubelet double (tests/kubeadm_double), whose kube-apiserver child serves the
manifest's certificate; etcd is external on h1 (real etcd), the registry on h1.
"""
from __future__ import annotations

import base64
import json
import re
import shlex
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from harness import fixture_pack, kubeadm_double, sites
from harness.playbook import NO_RESUME, TOP, run_playbook
import ha_support as ha

INSTALL = TOP / "install.yml"
CERTS = TOP / "playbooks" / "certs.yml"
MASTERS = ["h1", "h2", "h3"]
ADMIN_PASSWORD = "adm-Secret-4711-xyz"
REGISTRY_PASSWORD = "reg-Secret-0815-abc"
KEEPALIVED_PASS = "kaSec31x"
# a password change previewed with --check --diff (the files that hold them show a masked diff)
CHANGED = {"tke_admin_password": "adm-Changed-1234-qrs", "registry_password": "reg-Changed-5678-tuv",
           "container_runtime_registry_password": "reg-Changed-5678-tuv", "ha_keepalived_auth_pass": "kaNew77y"}


@pytest.fixture(scope="module")
def site(testhosts, tmp_path_factory):
    th = testhosts
    pack = fixture_pack.ensure_pack(TOP / ".cache" / "fixture-pack" / "e2e", Path(th.info["TH_REPO"]))
    kubeadm_double.install(th)
    d = tmp_path_factory.mktemp("faults")
    inv = th.write_inventory(
        d / "hosts.yml", groups={"masters": MASTERS, "etcd": ["h1"], "registry": ["h1"]},
        group_vars={"tke_ha_mode": "keepalived", "tke_vip": sites.vip(th), "tke_site_pack": str(pack),
                    "site_repo_packages": ["conntrack", "socat"],
                    "precheck_disk": [{"path": "/var/lib", "min_free_gb": 1}],
                    "precheck_disk_etcd": [{"path": "/var/lib/etcd", "min_free_gb": 1}],
                    "tke_admin_password": ADMIN_PASSWORD, "registry_password": REGISTRY_PASSWORD,
                    "container_runtime_registry_password": REGISTRY_PASSWORD,
                    "ha_keepalived_auth_pass": KEEPALIVED_PASS})
    return {"inv": inv, "dir": d, "vip": sites.vip(th)}


@pytest.fixture(scope="module")
def installed(site):
    """Install, then check mode over the installed site with the journal off (every task runs and
    shows its diff). A journal-off re-run is not repeated here: it invokes every module with the
    install's own arguments (nothing new for the secrets scan) and its changed=0 is proven by
    test_install_e2e."""
    runs = {}
    for name, args in (("install", ()), ("check", ("--check", "--diff", *NO_RESUME)),
                       ("password change (check)", ("--check", "--diff", *NO_RESUME, "--tags", "runtime,registry,ha",
                                                    "-e", json.dumps(CHANGED)))):
        start = time.monotonic()
        runs[name] = run_playbook(INSTALL, site["inv"], *args)
        print(f"{name}: rc={runs[name].rc} {time.monotonic() - start:.0f} s")
        assert runs[name].rc == 0, runs[name].explain()
    return runs


def test_check_mode_over_the_installed_site_changes_nothing(installed):
    check = installed["check"]
    assert check.changed_tasks() == [], check.explain()
    assert set(check.stats) == set(MASTERS), check.explain()


# --- secrets -------------------------------------------------------------------------------
def pem_lines(text: str) -> list[str]:
    """The full base64 lines of every PEM block in text (one is enough to find a leak, escaped
    newlines or not)."""
    return [line for line in text.splitlines() if len(line) == 64 and re.fullmatch(r"[A-Za-z0-9+/]+", line)]


def site_secrets(th, site) -> dict[str, str]:
    """name -> a string that can only come from that secret."""
    out = {"admin password": ADMIN_PASSWORD, "registry password": REGISTRY_PASSWORD}
    out.update({f"{name} (changed)": value for name, value in CHANGED.items()})
    pki = site["dir"] / ".tke" / "pki"
    for key in sorted(pki.rglob("*.key")):
        lines = pem_lines(key.read_text())
        out[f"private key {key.relative_to(pki)}"] = lines[len(lines) // 2]
    for conf in sorted(pki.rglob("*.conf")):
        for user in yaml.safe_load(conf.read_text()).get("users", []):
            data = user["user"].get("client-key-data")
            if data:
                out[f"client key of {conf.relative_to(pki)} (base64)"] = data[40:100]
                lines = pem_lines(base64.b64decode(data).decode())
                out[f"client key of {conf.relative_to(pki)}"] = lines[len(lines) // 2]
    for h in MASTERS:   # the kubeadm-made keys on the hosts (apiserver etc. when kubeadm issues them)
        for path in th.ssh(h, "find /etc/kubernetes/pki -name '*.key' 2>/dev/null").stdout.split():
            lines = pem_lines(th.ssh(h, f"cat {path}").stdout)
            if lines:
                out[f"{h}:{path}"] = lines[len(lines) // 2]
    # (the collection writes kubeadm's configurations as JSON documents: "token": "...")
    token = re.search(r"token['\"]?:\s*['\"]?([a-z0-9]{6}\.[a-z0-9]{16})", th.ssh("h2", "cat /etc/kubernetes/kubeadm-join.yaml").stdout)
    assert token, "no bootstrap token in h2's JoinConfiguration"
    out["bootstrap token"] = token.group(1)
    out["bootstrap token secret"] = token.group(1).split(".")[1]
    key = th.ssh("h1", "cat /etc/kubernetes/.offline_pot/certificate-key").stdout.split()
    assert key, "no certificate key recorded on h1"
    out["certificate key"] = key[0]
    auth = re.search(r"auth_pass (\S+)", th.ssh("h1", "cat /etc/keepalived/keepalived.conf").stdout)
    out["keepalived auth_pass"] = auth.group(1)
    assert auth.group(1) == KEEPALIVED_PASS
    assert "tke/journal.key" in {str(k.relative_to(pki)) for k in pki.rglob("*.key")}   # the site's journal key
    for h in MASTERS:   # the salt of the hosts' state probes (install_journal.SALT_NAME)
        salt = th.ssh(h, "cat /var/lib/offline-pot/phases/.salt").stdout.strip()
        assert len(salt) == 64, f"{h}: no probe salt"
        out[f"{h} probe salt"] = salt
    return out


# every file a user other than root can read (the file and all its directories), with a secret
WORLD_READABLE = r"""
import os, stat, sys
secrets = [s.encode() for s in sys.stdin.read().split("\n") if s]
# the kubeadm double's own state (tests/kubeadm_double: it keeps the bootstrap tokens the real
# kubeadm keeps as Secrets in etcd) and its code are the test's, not the collection's
DOUBLES = ("/var/lib/kubeadm-double", "/usr/local/lib/kubeadm-double")
def open_to_all(path):
    d = os.path.dirname(path)
    while d != "/":
        if not os.stat(d).st_mode & stat.S_IXOTH:
            return False
        d = os.path.dirname(d)
    return True
for root in ("/etc", "/var/lib", "/var/log", "/root", "/home", "/opt", "/srv", "/usr/local", "/tmp", "/run"):
    for dirpath, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if not os.path.islink(os.path.join(dirpath, x))
                   and os.path.join(dirpath, x) not in DOUBLES]
        for n in names:
            p = os.path.join(dirpath, n)
            try:
                st = os.lstat(p)
                if not stat.S_ISREG(st.st_mode) or not st.st_mode & stat.S_IROTH or st.st_size > 8 << 20:
                    continue
                if not open_to_all(p):
                    continue
                data = open(p, "rb").read()
            except OSError:
                continue
            for i, s in enumerate(secrets):
                if s in data:
                    print(i, p)
"""


def ssh_bytes(th, h, command, stdin=b""):
    res = subprocess.run(th.ssh_argv(h) + [command],
                         input=stdin, capture_output=True, timeout=300, check=True)
    return res.stdout


def test_no_secret_in_logs_output_or_world_readable_files(testhosts, site, installed):
    th = testhosts
    secrets = site_secrets(th, site)
    names, values = list(secrets), list(secrets.values())
    found = []
    for name, value in secrets.items():
        for run_name, run in installed.items():
            if value in run.output:
                found.append(f"controller output of the {run_name} run: {name}")
    for h in MASTERS:
        # the journal of every unit (module invocations are logged there), then all of /var/log
        logs = ssh_bytes(th, h, "journalctl -o cat --no-pager -q; grep -rash --exclude-dir=journal . /var/log")
        logs = logs.decode(errors="replace")
        assert "Invoked with" in logs, f"{h}: no module invocation in the journal (is it read?)"
        for name, value in secrets.items():
            if value in logs:
                found.append(f"{h} journal or /var/log: {name}")
        res = ssh_bytes(th, h, "python3 -c " + shlex.quote(WORLD_READABLE), ("\n".join(values) + "\n").encode())
        for line in res.decode().splitlines():
            i, path = line.split(" ", 1)
            found.append(f"{h}: world-readable {path}: {names[int(i)]}")
    # the phases' records on the hosts: their fingerprints are keyed with the site's journal key and
    # their probes' digests salted, and both, with the salt, are root-only; the journal key is on the
    # masters (root-only, as in the store: adopt.yml brings it back) and on no other host
    store_key = (site["dir"] / ".tke" / "pki" / "tke" / "journal.key").read_text()
    for h in th.names:
        modes = dict(line.split(" ", 1)[::-1] for line in th.ssh(
            h, "stat -c '%a %n' /var/lib/offline-pot/* /var/lib/offline-pot/phases/* /var/lib/offline-pot/phases/.salt"
               " /etc/tke/pki/journal.key 2>/dev/null").stdout.splitlines())
        records = {p: m for p, m in modes.items() if p.startswith("/var/lib/offline-pot/phases/")}
        assert "/var/lib/offline-pot/phases/runtime" in records and all(m == "600" for m in records.values()), (h, modes)
        assert modes.get("/var/lib/offline-pot/site") == "644", (h, modes)
        if h in MASTERS:
            assert modes.get("/etc/tke/pki/journal.key") == "600", (h, modes)
            assert th.ssh(h, "cat /etc/tke/pki/journal.key").stdout == store_key, h
        else:
            assert "/etc/tke/pki/journal.key" not in modes, (h, modes)
    # the password change shows as masked changes of the files that hold them, not as no change
    change = installed["password change (check)"].output
    for path in ("/etc/containerd/config.toml", "/etc/keepalived/keepalived.conf"):
        assert f"{path}: a secret changed (masked, not shown)" in change, installed["password change (check)"].explain()
    print(f"{len(secrets)} secrets looked for")
    assert not found, "secrets leaked:\n" + "\n".join(found)


def registry_answer(th, user, password):
    """The HTTP status the site's registry gives h2 for its catalog with this credential (sent on
    stdin: no secret on a command line)."""
    probe = ("import base64, sys, urllib.request as u, urllib.error as e\n"
             "r = u.Request('https://registry.tke.com/v2/_catalog')\n"
             "r.add_header('Authorization', 'Basic ' + base64.b64encode(sys.stdin.read().encode()).decode())\n"
             "try:\n    print(u.urlopen(r).status)\nexcept e.HTTPError as x:\n    print(x.code)\n")
    return ssh_bytes(th, "h2", "python3 -c " + shlex.quote(probe), f"{user}:{password}".encode()).decode().strip()


def test_tke_json_records_the_credential_the_registry_accepts(testhosts, site, installed):
    """TKE logs in to its registry with tke.json's Config.registry.tke: the registry's own
    credential (registry_password here differs from the admin's, which the registry refuses)."""
    tke = json.loads((site["dir"] / ".tke" / "tke.json").read_text())["para"]["Config"]["registry"]["tke"]
    password = base64.b64decode(tke["password"]).decode()
    assert password == REGISTRY_PASSWORD
    assert registry_answer(testhosts, tke["username"], password) == "200"
    assert registry_answer(testhosts, tke["username"], ADMIN_PASSWORD) == "401"


# --- keepalived and the VIP ----------------------------------------------------------------
def holder(th, the_vip) -> str:
    held = ha.holders(th, MASTERS, the_vip)
    assert len(held) == 1, f"VIP {the_vip} held by {held}"
    return held[0]


def overlaps(events) -> list[tuple[float, float, list[str]]]:
    """Intervals in which more than one host held the VIP."""
    held, out, since = set(), [], None
    for t, n, s in events:
        (held.add if s else held.discard)(n)
        if len(held) > 1 and since is None:
            since = t
        elif len(held) <= 1 and since is not None:
            out.append((since, t, sorted(held)))
            since = None
    return out


def test_keepalived_killed_comes_back_and_the_vip_is_never_on_two_hosts(testhosts, site, installed):
    th, the_vip = testhosts, site["vip"]
    first = holder(th, the_vip)
    ha.start_vip_watch(th, MASTERS, the_vip)
    try:
        time.sleep(1)
        th.ssh(first, "kill -9 $(pidof keepalived)")
        # systemd brings keepalived back (restart policy), and someone holds the VIP again
        ha.wait_until(lambda: th.ssh(first, "systemctl is-active keepalived", check=False).stdout.strip() == "active"
                      and len(ha.holders(th, MASTERS, the_vip)) == 1, 20, f"keepalived back on {first}")
        time.sleep(6)   # several advert intervals: a stale VIP would show as a second holder
    finally:
        ha.stop_vip_watch(th, MASTERS)
    events = ha.vip_events(th, MASTERS)
    print("VIP events:", [(round(t - events[0][0], 2), n, s) for t, n, s in events] if events else [])
    assert th.ssh(first, "systemctl show -P NRestarts keepalived").stdout.strip() != "0"
    both = overlaps(events)
    assert not both, f"the VIP was on two hosts: {[(round(b - a, 2), hs) for a, b, hs in both]}"
    assert len(ha.holders(th, MASTERS, the_vip)) == 1


def test_a_hung_api_server_moves_the_vip_within_3_s(testhosts, site, installed):
    th, the_vip = testhosts, site["vip"]
    first = holder(th, the_vip)
    others = [n for n in MASTERS if n != first]
    ha.start_vip_watch(th, others, the_vip)
    try:
        time.sleep(1)
        stamp = float(th.ssh(first, "date +%s.%N; pkill -STOP -x kube-apiserver").stdout)
        ha.wait_until(lambda: ha.gains(ha.vip_events(th, others)), 15, "the VIP to move")
    finally:
        th.ssh(first, "pkill -CONT -x kube-apiserver", check=False)
        ha.stop_vip_watch(th, MASTERS)
    took = ha.gains(ha.vip_events(th, others))[0][0] - stamp
    assert took > 0, (stamp, ha.vip_events(th, others))
    print(f"hung API server on {first}: VIP moved in {took:.2f} s")
    assert took <= 3.0, f"the VIP moved {took:.2f} s after the API server hung"
    # the API server serves again on the old holder before the next scenario
    ha.wait_until(lambda: th.ssh(first, "systemctl is-active keepalived", check=False).returncode == 0, 10, "keepalived")


# --- certificate renewal -------------------------------------------------------------------
def apiserver(th, h) -> tuple[str, str]:
    """(pid of the kube-apiserver, sha256 of its certificate) on a master."""
    out = th.ssh(h, "pgrep -x kube-apiserver; sha256sum /etc/kubernetes/pki/apiserver.crt").stdout.split()
    return out[0], out[1]


def test_renew_restarts_the_api_servers_one_at_a_time(testhosts, site, installed):
    th, the_vip = testhosts, site["vip"]
    w = ha.Watcher(f"https://{the_vip}:6443/healthz", str(site["dir"] / ".tke" / "pki" / "ca.crt"))
    before = {h: apiserver(th, h) for h in MASTERS}
    w.start()
    time.sleep(1)
    start = time.monotonic()
    try:
        run = run_playbook(CERTS, site["inv"], "-e", "certs_action=renew", "-e", "certs_renew=all")
    finally:
        time.sleep(2)
        w.stop.set()
        w.join()
    print(f"renew: {time.monotonic() - start:.0f} s, {len(w.samples)} samples, "
          f"{sum(1 for dummy, ok in w.samples if not ok)} failed, longest gap {w.longest_gap():.2f} s")
    assert run.rc == 0, run.explain()
    # every API server restarted (a new process) with its new certificate
    after = {h: apiserver(th, h) for h in MASTERS}
    for h in MASTERS:
        assert after[h][0] != before[h][0] and after[h][1] != before[h][1], (h, before[h], after[h])
    assert w.samples and w.samples[-1][1], "the VIP does not serve after the renewal"
    assert w.longest_gap() <= 3.0, f"the VIP did not serve for {w.longest_gap():.2f} s during the renewal"

"""The whole install.yml, end to end, on three real hosts and the HA keepalived inventory.

h1 and h2 are masters holding the API VIP with keepalived, h3 is a worker; etcd is external (a
real etcd on h1: two stacked members would be an even etcd, which validation refuses) and the
registry is on h1. Everything comes from the fixture site pack, as on an air-gapped site, except
kubeadm and kubelet, which cannot be had here: the test puts their test doubles on the hosts
(tests/kubeadm_double) before the install, as a site's pack would put the real binaries.

The run order is an operator's day: the first install stops at a broken post-cluster-ready hook;
after the fix a re-run resumes there; a re-converge with the journal off changes nothing on any
host; the default re-run skips every phase; then the faults a live site meets, on the same install
(CI budget):

- check mode over every phase of the installed site with the journal off runs through and would
  change nothing (the one whole-site check-mode proof on an installed site; test_check_mode.py
  previews a fresh one);
- every secret of the site (the admin, registry and keepalived passwords set here, every private
  key, the bootstrap token, the certificate key, the probes' salt) stays out of every host's journal
  and /var/log, the controller's output and every world-readable file, after the install, the
  re-converge with --diff, a check-mode run with the journal off, and a --check --diff preview of a
  change of every password (whose files show masked diffs);
- keepalived killed with SIGKILL on the VIP holder comes back (systemd) and the VIP is never on
  two hosts (watched on both masters every 50 ms); a hung API server (SIGSTOP) on the VIP holder
  moves the VIP within 3 s;

then the controller's state: each host records its site, a controller without the site's state is
refused, a lost state is adopted from the hosts, a second run is refused while one runs, an
inventory older than the nodes is refused; --skip-tags registry leaves the registry alone; last
(the renewed certificates are drift to the pki phase's record, which a later run would write
again), certs.yml renew restarts the API servers one at a time: the VIP's /healthz, sampled from
the controller every 100 ms, never stops answering longer than a failover.
"""
import base64
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import tarfile
import time
from pathlib import Path

import pytest
import yaml

from ansible_collections.offline_pot.tke.plugins.plugin_utils.install_journal import PHASE_NAMES
from harness import fixture_pack, hooks, kubeadm_double, real_clients, sites
from harness.sites import vip
from harness.playbook import NO_RESUME, TOP, ansible_bin, report_changes, run_playbook
from harness.testhosts import cgroup_v1
import ha_support as ha

INSTALL = TOP / "install.yml"
REMOVE = TOP / "playbooks" / "remove_node.yml"
ADOPT = TOP / "playbooks" / "adopt.yml"
BACKUP = TOP / "playbooks" / "backup.yml"
CERTS = TOP / "playbooks" / "certs.yml"
MASTERS = ["h1", "h2"]
ADMIN_PASSWORD = "adm-Secret-4711-xyz"
REGISTRY_PASSWORD = "reg-Secret-0815-abc"
KEEPALIVED_PASS = "kaSec31x"
# a password change previewed with --check --diff (the files that hold them show a masked diff)
CHANGED = {"tke_admin_password": "adm-Changed-1234-qrs", "registry_password": "reg-Changed-5678-tuv",
           "container_runtime_registry_password": "reg-Changed-5678-tuv", "ha_keepalived_auth_pass": "kaNew77y"}
# the runs whose output the secrets scan reads, by name
RUNS = {}
PHASES = ["precheck", "offline", "host_init", "pki", "runtime", "registry", "etcd", "ha", "control_plane", "nodes"]
# what the API server behind an address holds about this install: kube-public/cluster-info (read
# anonymously, as kubeadm's discovery does), over TLS verified with the site's CA and the address
CLUSTER_INFO = ("import json,ssl,urllib.request;c=ssl.create_default_context(cafile='/etc/kubernetes/pki/ca.crt');"
                "r=urllib.request.urlopen('https://{addr}:6443/api/v1/namespaces/kube-public/configmaps/cluster-info',"
                "context=c,timeout=5);print(json.load(r)['data']['kubeconfig'])")

# the tasks that run hooks (a phase's before- and after-hooks run in the journal's calls)
HOOK_TASK = re.compile(r"TASK \[offline_pot\.tke\.tke : (Run the hook playbook|Journal - which hosts still need this phase "
                       r"\(then its before-hook, if any\)|Journal - phase done \(after its after-hook, if any\))\]")


@pytest.fixture(scope="module")
def site(testhosts, tmp_path_factory):
    th = testhosts
    pack = fixture_pack.ensure_pack(TOP / ".cache" / "fixture-pack" / "e2e", Path(th.info["TH_REPO"]))
    kubeadm_double.install(th)
    for h in th.names:
        th.ssh(h, "rm -f /root/hooks.log")
    d = tmp_path_factory.mktemp("e2e")
    inv = sites.ha_keepalived(th, d / "hosts.yml", pack, tke_admin_password=ADMIN_PASSWORD,
                              registry_password=REGISTRY_PASSWORD, container_runtime_registry_password=REGISTRY_PASSWORD,
                              ha_keepalived_auth_pass=KEEPALIVED_PASS)
    hooks.write(d / "hooks", "h3", ["pre-install", "post-install", "control_plane/before", "nodes/after"],
                {"post-cluster-ready": d / "fixed"})
    return {"inv": inv, "dir": d, "vip": vip(th)}


def hook_log(th):
    return hooks.log(th, "h3")


def journal(site):
    return json.loads((site["dir"] / ".tke" / "journal.json").read_text())


@pytest.fixture(scope="module")
def installed(testhosts, site):
    """Install 1 stops at the broken hook; install 2 (after the fix) resumes and finishes."""
    first = run_playbook(INSTALL, site["inv"])
    first.journal = journal(site)
    first.h3_joined = testhosts.ssh("h3", "test -e /var/log/kubeadm-double.log", check=False).returncode == 0
    (site["dir"] / "fixed").touch()
    second = run_playbook(INSTALL, site["inv"])
    RUNS.update({"install (stopped at the hook)": first, "install (resumed)": second})
    return first, second


def test_install_stops_at_a_failing_hook_and_resumes_there(testhosts, site, installed):
    first, second = installed
    th = testhosts
    assert first.rc != 0, first.explain()
    assert "the post-cluster-ready hook is broken" in first.output, first.explain()
    # every phase up to the cluster ran (and said so); nodes did not
    for phase in PHASES[:-1]:
        assert re.search(rf"phase {PHASE_NAMES.index(phase) + 1}/\d+ {phase}: done on ", first.output), \
            (phase, first.explain())
    assert "Phase nodes" not in first.output and not first.h3_joined
    assert set(PHASES[:-1]) <= set(first.journal["phases"]) and "nodes" not in first.journal["phases"]
    assert "hook:post-cluster-ready" not in first.journal["phases"]
    assert first.journal["step"] == PHASE_NAMES.index("control_plane") + 1, first.journal["step"]

    assert second.rc == 0, second.explain()
    # the re-run skipped every finished phase, quickly and saying so, and ran from the hook on
    for phase in PHASES[:-1]:
        assert re.search(rf"{phase}: running on no host; skipping [^()]*\(done\s+\S+,\s+inputs\s+unchanged\)",
                         second.output), (phase, second.explain())
    assert re.search(r"nodes: running on h3\b", second.output), second.explain()
    for task in ("Gather facts and evaluate the prerequisites", "Install keepalived", "init phase"):
        assert task not in second.output, task
    names = [n for n, dummy in hook_log(th)]
    assert names == ["pre-install", "control_plane/before", "post-cluster-ready", "nodes/after", "post-install"], names
    stamps = [t for dummy, t in hook_log(th)]
    assert stamps == sorted(stamps)
    j = journal(site)
    assert set(PHASES) <= set(j["phases"])
    assert set(j["phases"]["nodes"]) == {"h3"} and set(j["phases"]["control_plane"]) == {"h1", "h2"}
    assert j["step"] == PHASE_NAMES.index("hook:post-install") + 1
    assert json.loads((site["dir"] / ".tke" / "tke.json").read_text())["step"] == j["step"]


def test_the_run_report_opens_in_a_browser_with_its_timeline_drawn(site, installed, tmp_path):
    """The finished run wrote its HTML report (tke_state_dir/reports, 0600); headless Chromium opens it
    with nothing on its console; its timeline has a bar for every host and phase of the journal, and the
    screenshot shows the colour of every phase done in this run (the solid bars)."""
    from PIL import Image
    from harness import browser
    from ansible_collections.offline_pot.tke.plugins.plugin_utils import run_report
    dummy, second = installed
    report, changes = report_changes(second)
    assert report.parent == site["dir"] / ".tke" / "reports" and oct(report.stat().st_mode & 0o777) == "0o600"
    url = report.as_uri()
    assert browser.console_messages(url) == []   # the page has no script: nothing may reach the console
    drawn = set(re.findall(r'<rect [^>]*data-host="([^"]+)" data-phase="([^"]+)" data-this-run="(true|false)"',
                           browser.dom(url)))
    j = journal(site)
    phases = [p for p in PHASE_NAMES if not p.startswith("hook:")]
    want = {(h, p) for p in phases for h, e in j["phases"].get(p, {}).items() if "seconds" in e}
    assert {(h, p) for h, p, dummy in drawn} == want and len(want) >= len(PHASES) * 2
    # the second run resumed at the hook: the phases after it are this run's, the ones before not
    this_run = {p for dummy, p, now in drawn if now == "true"}
    assert "nodes" in this_run and "precheck" not in this_run, drawn
    # what the run changed on the hosts (their phases' state probes read at its start and end): the
    # worker's kubelet joined in this run
    assert [r for r in changes if r[:2] == ("h3", "nodes") and r[2]], changes
    shot = Image.open(browser.screenshot(url, str(tmp_path / "report.png"))).convert("RGB")
    colours = {c for dummy, c in shot.getcolors(maxcolors=1 << 20)}
    for p in this_run:
        hexed = run_report.colour(phases, p)
        assert tuple(int(hexed[i:i + 2], 16) for i in (1, 3, 5)) in colours, (p, hexed)
    print(f"[run report] {report} (screenshot {tmp_path / 'report.png'})")


def test_the_site_works(testhosts, site, installed):
    th = testhosts
    # the VIP is on the first master; keepalived runs on both masters, started in stages
    assert th.ssh("h1", f"ip -o -4 addr show to {vip(th)}/32").stdout.strip(), "h1 does not hold the VIP"
    assert not th.ssh("h2", f"ip -o -4 addr show to {vip(th)}/32").stdout.strip()
    for h in ("h1", "h2"):
        assert th.ssh(h, "systemctl is-active keepalived").stdout.strip() == "active", h
    # the API answers through the VIP and through the API domain, with the site's CA, from the
    # worker, and it is this install's: cluster-info names the control-plane endpoint and carries
    # the CA of the first master (written by kubeadm's bootstrap-token phase there)
    ca_b64 = base64.b64encode(th.ssh("h1", "cat /etc/kubernetes/pki/ca.crt").stdout.encode()).decode()
    for addr in (vip(th), "api.tke.com"):
        kubeconfig = yaml.safe_load(th.ssh("h3", "python3 -c " + json.dumps(CLUSTER_INFO.format(addr=addr))).stdout)
        cluster = kubeconfig["clusters"][0]["cluster"]
        assert (cluster["server"], cluster["certificate-authority-data"]) == ("https://api.tke.com:6443", ca_b64), addr
    assert "server: https://api.tke.com:6443" in th.ssh("h3", "cat /etc/kubernetes/kubelet.conf").stdout
    # real etcd with mutual TLS, the registry, containerd; the kubelets run
    assert th.ssh("h1", "systemctl is-active etcd tke-registry containerd kubelet").stdout.split() == ["active"] * 4
    for h in ("h2", "h3"):
        assert th.ssh(h, "systemctl is-active containerd kubelet").stdout.split() == ["active"] * 2, h
    # a pre-seeded image is pulled from the site's registry over TLS on the worker (ctr does not
    # read the CRI plugin's credentials: it is given the registry's hosts.toml and the user)
    th.ssh("h3", "ctr -n k8s.io images pull --hosts-dir /etc/containerd/certs.d --user admin:" + REGISTRY_PASSWORD + " "
                 "registry.tke.com/library/pause:3.9 >/dev/null", timeout=120)
    # kubeadm joined h2 as a control-plane node and h3 as a worker, against the external etcd
    cfg = th.ssh("h1", "cat /etc/kubernetes/kubeadm-config.yaml").stdout
    cluster_cfg = next(d for d in yaml.safe_load_all(cfg) if d and d["kind"] == "ClusterConfiguration")
    assert cluster_cfg["controlPlaneEndpoint"] == "api.tke.com:6443"
    assert f"https://{th.ip('h1')}:2379" in cluster_cfg["etcd"]["external"]["endpoints"]
    assert "join phase control-plane-join all" in th.ssh("h2", "cat /var/log/kubeadm-double.log").stdout
    # (from 1.35 a worker's join waits for its kubelet's TLS bootstrap in a phase of its own; on
    # cgroup v1 hosts, allowed by the inventory, preflight ignores kubeadm's SystemVerification check)
    ignored = " --ignore-preflight-errors=SystemVerification" if cgroup_v1() else ""
    assert th.ssh("h3", "cat /var/log/kubeadm-double.log").stdout.splitlines() == [
        f"join phase preflight --config /etc/kubernetes/kubeadm-join.yaml{ignored}"] + [
        f"join phase {p} --config /etc/kubernetes/kubeadm-join.yaml" for p in ("kubelet-start", "kubelet-wait-bootstrap")]


def test_rerun_changes_nothing_on_any_host(testhosts, site, installed):
    # services restart on their own on a live site (reboots, upgrades): containerd then resets its
    # root's mode, which host_init must agree with
    for h in testhosts.names:
        testhosts.ssh(h, "systemctl restart containerd")
    # every task of every phase again (journal off): nothing changes anywhere
    again = run_playbook(INSTALL, site["inv"], "--diff", *NO_RESUME)
    RUNS["re-converge (journal off, --diff)"] = again
    assert again.rc == 0, again.explain()
    assert set(again.stats) == {"h1", "h2", "h3"}
    # this scenario's hooks change something by design (each appends a marker), and a hook that
    # changed something reports changed: count only the collection's own tasks
    ours = [t for t in again.changed_tasks() if not HOOK_TASK.match(t)]
    assert ours == [], again.explain()
    # and the hosts agree: every phase's state probes print at the end what they printed at the start
    dummy, changes = report_changes(again)
    assert changes == [(h, "-", "nothing") for h in ("h1", "h2", "h3")], changes
    # check mode with the journal off over a phase with a hook (nodes/after): the hook runs in check
    # mode too (its marker is not written) and nothing changes (check mode over every phase of an
    # installed site: below, whose secrets scan reads that run's output)
    logged = hook_log(testhosts)
    check = run_playbook(INSTALL, site["inv"], "--check", "--diff", "--tags", "nodes", "-v", *NO_RESUME)
    RUNS["check of the nodes phase (-v)"] = check
    assert check.rc == 0, check.explain()
    assert [t for t in check.changed_tasks() if not HOOK_TASK.match(t)] == [], check.explain()
    said = " ".join(check.output.split())   # (the YAML callback folds long lines)
    assert "hook nodes/after ran in" in said and hook_log(testhosts) == logged, check.explain()
    # the default re-run: every phase and hook done, nothing runs, nothing changes
    noop = run_playbook(INSTALL, site["inv"])
    assert noop.rc == 0 and noop.changed_hosts() == {}, noop.explain()
    assert "init phase" not in noop.output


# --- the faults a live site meets, on this install ---------------------------------------------
@pytest.fixture(scope="module")
def checked(site, installed):
    """Check mode over the installed site with the journal off (every task runs and shows its diff),
    then a change of every password previewed with --check --diff."""
    for name, args in (("check", ("--check", "--diff", *NO_RESUME)),
                       ("password change (check)", ("--check", "--diff", *NO_RESUME, "--tags", "runtime,registry,ha",
                                                    "-e", json.dumps(CHANGED)))):
        start = time.monotonic()
        RUNS[name] = run_playbook(INSTALL, site["inv"], *args)
        print(f"{name}: rc={RUNS[name].rc} {time.monotonic() - start:.0f} s")
        assert RUNS[name].rc == 0, RUNS[name].explain()
    return RUNS


def test_check_mode_over_the_installed_site_changes_nothing(testhosts, checked):
    check = checked["check"]
    # (the hooks of this site report what they do, in check mode too: the collection's own tasks count)
    assert [t for t in check.changed_tasks() if not HOOK_TASK.match(t)] == [], check.explain()
    assert set(check.stats) == set(testhosts.names), check.explain()


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
    for h in th.names:   # the salt of the hosts' state probes (install_journal.SALT_NAME)
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


def test_no_secret_in_logs_output_or_world_readable_files(testhosts, site, checked):
    th = testhosts
    secrets = site_secrets(th, site)
    names, values = list(secrets), list(secrets.values())
    found = []
    for name, value in secrets.items():
        for run_name, run in checked.items():
            if value in run.output:
                found.append(f"controller output of the {run_name} run: {name}")
    for h in th.names:
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
               " /etc/tke/pki/journal.key 2>/dev/null; true").stdout.splitlines())
        records = {p: m for p, m in modes.items() if p.startswith("/var/lib/offline-pot/phases/")}
        assert "/var/lib/offline-pot/phases/runtime" in records and all(m == "600" for m in records.values()), (h, modes)
        assert modes.get("/var/lib/offline-pot/site") == "644", (h, modes)
        if h in MASTERS:
            assert modes.get("/etc/tke/pki/journal.key") == "600", (h, modes)
            assert th.ssh(h, "cat /etc/tke/pki/journal.key").stdout == store_key, h
        else:
            assert "/etc/tke/pki/journal.key" not in modes, (h, modes)
    # the password change shows as masked changes of the files that hold them, not as no change
    change = checked["password change (check)"].output
    for path in ("/etc/containerd/config.toml", "/etc/keepalived/keepalived.conf"):
        assert f"{path}: a secret changed (masked, not shown)" in change, checked["password change (check)"].explain()
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


# --- the controller's state ----------------------------------------------------------------------
# Where any SSH login by Ansible writes, none of it the install's doing (test_check_mode.py's FIND),
# and, on this live site, etcd's own data: the running cluster writes it whatever any run does (the
# API servers' state and the nodes' heartbeats)
PRUNE = ("/proc", "/sys", "/run", "/tmp", "/var/log/journal", "/root/.ansible/tmp", "/var/lib/etcd")
LOGIN_RECORDS = ("/var/log/lastlog", "/var/log/wtmp", "/var/log/btmp")
FIND = ("find / -xdev \\( " + " -o ".join(f"-path {p}" for p in PRUNE) + " \\) -prune -o -newer /tmp/stamp "
        + " ".join(f"! -path {p}" for p in LOGIN_RECORDS) + " -print")


def stamp(th):
    for h in th.names:
        th.ssh(h, "mkdir -p /root/.ansible/tmp && touch /tmp/stamp")


def written(th):
    return {h: th.ssh(h, FIND).stdout.split() for h in th.names}


def test_every_host_records_the_site_it_belongs_to(testhosts, site, installed):
    th = testhosts
    identity = json.loads((site["dir"] / ".tke" / "site.json").read_text())
    ca = th.ssh("h1", "openssl x509 -in /etc/kubernetes/pki/ca.crt -outform DER | sha256sum").stdout.split()[0]
    assert identity["ca_sha256"] == ca and re.fullmatch(r"[0-9a-f]{32}", identity["id"]), identity
    for h in th.names:
        assert th.ssh(h, "stat -c %a /var/lib/offline-pot/site; cat /var/lib/offline-pot/site").stdout.split() == [
            "644", f"id={identity['id']}", f"ca_sha256={ca}"], h
        assert th.ssh(h, "cat /var/lib/offline-pot/kubernetes").stdout.strip() == "1.36.3", h


def test_a_controller_without_the_sites_state_is_refused_before_any_host_is_written(
        testhosts, site, installed, tmp_path):
    """The same hosts in an inventory copied to another folder (an empty .tke/: a copied inventory, a
    lost controller disk, another machine): refused with nothing written on any host; the original
    folder's re-run then changes nothing."""
    th = testhosts
    identity = json.loads((site["dir"] / ".tke" / "site.json").read_text())
    other = tmp_path / "copied"
    shutil.copytree(site["dir"], other, ignore=shutil.ignore_patterns(".tke"))
    stamp(th)
    refused = run_playbook(INSTALL, other / "hosts.yml")
    assert refused.rc != 0, refused.explain()
    said = " ".join(refused.output.split())
    for h in th.names:
        assert f"host {h} records site {identity['id']}, CA sha256 {identity['ca_sha256']} but the controller has " \
               f"none: the controller's state ({other / '.tke'}) has no site identity" in said, refused.explain()
    assert "run from the folder that holds this site's state" in said
    assert "offline_pot.tke.precheck :" not in refused.output, refused.explain()
    assert written(th) == {h: [] for h in th.names}
    assert not (other / ".tke" / "journal.json").exists() and not (other / ".tke" / "site.json").exists()
    assert not (other / ".tke" / "pki").exists()   # nor the journal's key (tke/journal.key), made by a run that goes on
    again = run_playbook(INSTALL, site["inv"])
    assert again.rc == 0 and again.changed_hosts() == {}, again.explain()


def test_a_lost_controller_state_is_adopted_from_the_hosts(testhosts, site, installed, tmp_path):
    """The controller's .tke/ is lost (here: the inventory's folder copied without it): adopt.yml
    rebuilds it from the hosts, with nothing written on any host; an install re-run from the new
    folder then changes nothing and the adopted admin kubeconfig works. backup.yml carries the
    state off the controller, encrypted with the vault password."""
    th = testhosts
    tke = site["dir"] / ".tke"
    other = tmp_path / "adopting"
    shutil.copytree(site["dir"], other, ignore=shutil.ignore_patterns(".tke"))
    inv = other / "hosts.yml"
    refused = run_playbook(ADOPT, inv)
    assert refused.rc != 0 and "confirm with -e adopt_confirm=true; nothing was read or written" in \
        " ".join(refused.output.split()), refused.explain()
    limited = run_playbook(ADOPT, inv, "-e", "adopt_confirm=true", "--limit", "h1,h2")
    assert limited.rc != 0 and "run it without --limit (hosts left out: h3); nothing was read or written" in \
        " ".join(limited.output.split()), limited.explain()
    preview = run_playbook(ADOPT, inv, "--check", "-e", "adopt_confirm=true")
    assert preview.rc == 0, preview.explain()
    assert not (other / ".tke" / "pki").exists() and not (other / ".tke" / "site.json").exists()
    # no journal key in a preview (the store is not written): the hosts' records are shown as they are
    shown = " ".join(preview.output.split())
    assert "done: precheck, hook:pre-install, offline, host_init, pki" in shown and "runs again" not in shown, \
        preview.explain()
    assert "check mode: the inputs of the phases are compared with the records of the hosts when adopting" in shown
    stamp(th)
    adopted = run_playbook(ADOPT, inv, "-e", "adopt_confirm=true")
    assert adopted.rc == 0, adopted.explain()
    assert written(th) == {h: [] for h in th.names}
    said = " ".join(adopted.output.split())
    identity = json.loads((tke / "site.json").read_text())
    assert f"adopted site {identity['id']}, CA sha256 {identity['ca_sha256']}: journal rebuilt" in said, adopted.explain()
    assert "done: precheck, hook:pre-install, offline, host_init, pki" in said, adopted.explain()
    # etcd is external here: its CA's key was only ever on the controller
    assert "CA etcd/ca: its key is not in the store" in said, adopted.explain()
    assert json.loads((other / ".tke" / "site.json").read_text()) == identity
    store, was = other / ".tke" / "pki", tke / "pki"
    lost = sorted(str(f.relative_to(was)) for f in was.rglob("*") if f.is_file() and not (store / f.relative_to(was)).exists())
    assert lost == ["etcd/ca.key"], lost
    differ = sorted(str(f.relative_to(was)) for f in was.rglob("*")
                    if f.is_file() and (store / f.relative_to(was)).exists() and (store / f.relative_to(was)).read_bytes() != f.read_bytes())
    assert differ == ["tke/admin.crt", "tke/admin.key"], differ   # never on a host: issued anew
    assert oct(store.stat().st_mode & 0o777) == "0o700" and oct((store / "ca.key").stat().st_mode & 0o777) == "0o600"
    for secret in ("ca.key", "sa.key", "kubeconfigs/admin.conf"):
        body = [ln for ln in (was / secret).read_text().splitlines() if len(ln) > 40]
        assert body and not any(ln in adopted.output for ln in body), secret
    assert set(json.loads((other / ".tke" / "journal.json").read_text())["phases"]) == set(journal(site)["phases"])
    # the site is managed from the new folder: a plain re-run changes nothing, the admin kubeconfig works
    again = run_playbook(INSTALL, inv)
    assert again.rc == 0 and again.changed_hosts() == {}, again.explain()
    for name in ("tke.json", "interfaces.json"):   # TKE's state, networkDevice included, as the install wrote it
        assert (other / ".tke" / name).read_text() == (tke / name).read_text(), name
    nodes = subprocess.run([str(real_clients.kubectl("1.36")), "--kubeconfig", str(store / "kubeconfigs" / "admin.conf"),
                            "--server", f"https://{vip(th)}:6443", "get", "nodes", "-o", "name"],
                           capture_output=True, text=True, timeout=60, check=False)
    assert nodes.stdout.split() == ["node/h1", "node/h2", "node/h3"], nodes.stderr
    # a second adopt into a folder that holds a site's state is refused
    twice = run_playbook(ADOPT, inv, "-e", "adopt_confirm=true")
    assert twice.rc != 0 and "this folder holds a site's state already" in " ".join(twice.output.split()), twice.explain()
    # the state carried off the controller, encrypted with the vault password
    (tmp_path / "vault-pass").write_text("correct horse battery staple\n")
    backup = run_playbook(BACKUP, inv, "--vault-password-file", str(tmp_path / "vault-pass"))
    assert backup.rc == 0, backup.explain()
    made = sorted(other.glob("tke-state-*.tar.gz.vault"))
    assert len(made) == 1 and oct(made[0].stat().st_mode & 0o777) == "0o600", made
    assert made[0].read_bytes().startswith(b"$ANSIBLE_VAULT;1.1;AES256"), made
    plain = subprocess.run([ansible_bin("ansible-vault"), "decrypt", "--vault-password-file", str(tmp_path / "vault-pass"),
                            "--output", "-", str(made[0])], capture_output=True, check=True, timeout=120).stdout
    with tarfile.open(fileobj=io.BytesIO(plain), mode="r:gz") as tar:
        members = {m.name: m for m in tar}
        assert tar.extractfile(members[".tke/pki/ca.key"]).read() == (store / "ca.key").read_bytes()
    assert ".tke/site.json" in members and ".tke/journal.json" in members and ".tke/run.lock" not in members
    nopass = run_playbook(BACKUP, inv)
    assert nopass.rc != 0 and "no vault password" in " ".join(nopass.output.split()), nopass.explain()


def test_a_second_run_is_refused_while_one_runs(testhosts, site, installed):
    argv = [ansible_bin("ansible-playbook"), str(INSTALL), "-i", str(site["inv"])]
    env = dict(os.environ, ANSIBLE_CONFIG=str(TOP / "ansible.cfg"), ANSIBLE_NOCOLOR="1", PYTHONUNBUFFERED="1")
    lock = site["dir"] / ".tke" / "run.lock"
    first = subprocess.Popen(argv, cwd=TOP, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and f'"pid": {first.pid},' not in (lock.read_text() if lock.exists() else ""):
            time.sleep(0.5)
        holder = json.loads(lock.read_text())
        assert holder["pid"] == first.pid and holder["playbook"] == str(INSTALL), holder
        start = time.monotonic()
        second = run_playbook(INSTALL, site["inv"])
        seconds = time.monotonic() - start
        assert first.poll() is None, "the first run ended before the second was refused"
    finally:
        out = first.communicate(timeout=1800)[0]
    assert second.rc != 0, second.explain()
    said = " ".join(second.output.split())
    assert f"another run holds this site's lock {lock} (pid {first.pid}, playbook {INSTALL}, started " \
           f"{holder['started']}" in said, second.explain()
    assert "PLAY [Phase precheck" not in second.output, second.explain()
    assert seconds < 60, seconds
    assert first.returncode == 0, out[-6000:]
    # the first run ended: the site is free again at once
    after = run_playbook(INSTALL, site["inv"], "--tags", "validate")
    assert after.rc == 0, after.explain()


def test_an_inventory_older_than_the_nodes_is_refused_with_nothing_touched(testhosts, site, installed):
    """The nodes run v1.36.3 (the default release the site was installed at) while the inventory says
    1.35.7: install.yml would put 1.35.7 back."""
    th = testhosts
    older = ("-e", "tke_k8s_version=1.35.7")
    stamp(th)
    refused = run_playbook(INSTALL, site["inv"], *older, "-e", "tke_network_plugin=calico")
    assert refused.rc != 0, refused.explain()
    said = " ".join(refused.output.split())
    assert ("tke_k8s_version: the inventory says v1.35.7 but the cluster's nodes run h1: v1.36.3, h2: v1.36.3, "
            'h3: v1.36.3; install.yml does not change the version a cluster runs: a cluster is never downgraded: '
            'set tke_k8s_version: "1.36.3" in the inventory') in said, refused.explain()
    assert written(th) == {h: [] for h in th.names}
    # a day-2 playbook that acts on the inventory's version refuses too, before it drains anything
    stamp(th)
    removal = run_playbook(REMOVE, site["inv"], *older, "-e", "node=h3", "-e", "remove_node_confirm=true")
    assert removal.rc != 0, removal.explain()
    assert ("tke_k8s_version: the inventory says v1.35.7 but the cluster's nodes run h1: v1.36.3, h2: v1.36.3, "
            "h3: v1.36.3; remove_node.yml does not change the version a cluster runs") in " ".join(
                removal.output.split()), removal.explain()
    assert written(th) == {h: [] for h in th.names}
    assert "Cordon and drain" not in removal.output and "Remove a node: which hosts answer" not in removal.output
    # the other way round (the inventory newer than the nodes: here the nodes' record says 1.35.7, as
    # upgrade.yml's record says what a node was brought to) names the command that reconciles them
    for h in th.names:
        th.ssh(h, "echo 1.35.7 > /var/lib/offline-pot/phases/upgrade")
    try:
        stamp(th)
        newer = run_playbook(INSTALL, site["inv"], "--tags", "precheck")
        assert newer.rc != 0 and "to move the cluster to v1.36.3 run playbooks/upgrade.yml" in " ".join(
            newer.output.split()), newer.explain()
        assert written(th) == {h: [] for h in th.names}
    finally:
        for h in th.names:
            th.ssh(h, "rm -f /var/lib/offline-pot/phases/upgrade")


def test_skip_tags_registry_leaves_the_registry_alone(testhosts, site, installed):
    th = testhosts
    # the registry's configuration drifts; a run that skips the registry phase must not repair it
    conf = th.ssh("h1", "systemctl show -P FragmentPath tke-registry").stdout.strip()
    before = th.ssh("h1", f"sha256sum {conf}").stdout.split()[0]
    th.ssh("h1", f"echo '# drift' >> {conf}")
    # (journal off, so the phases asked for really run; runtime stands in for "everything else":
    # a whole re-converge is proven by the test above and costs minutes)
    skipped = run_playbook(INSTALL, site["inv"], "--tags", "runtime,registry", "--skip-tags", "registry", *NO_RESUME)
    assert skipped.rc == 0, skipped.explain()
    # (ansible prints the play's title; none of its tasks ran, not even the journal's)
    assert "offline_pot.tke.registry :" not in skipped.output and " registry: running on" not in skipped.output, \
        skipped.explain()
    assert "offline_pot.tke.container_runtime :" in skipped.output, skipped.explain()
    assert th.ssh("h1", f"tail -1 {conf}").stdout.strip() == "# drift"
    # the registry phase alone repairs it
    fixed = run_playbook(INSTALL, site["inv"], "--tags", "registry", *NO_RESUME)
    assert fixed.rc == 0 and fixed.changed_hosts().get("h1"), fixed.explain()
    assert th.ssh("h1", f"sha256sum {conf}").stdout.split()[0] == before


# --- certificate renewal, last (renewed certificates are drift to the pki phase's record) ---
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
    # the renewal's run report: the masters' certificates changed (the pki phase's state on them)
    report, changes = report_changes(run)
    assert report.name.endswith("-certs.html") and oct(report.stat().st_mode & 0o777) == "0o600"
    assert {("h1", "pki", "certificates"), ("h2", "pki", "certificates")} <= set(changes), changes
    # every API server restarted (a new process) with its new certificate
    after = {h: apiserver(th, h) for h in MASTERS}
    for h in MASTERS:
        assert after[h][0] != before[h][0] and after[h][1] != before[h][1], (h, before[h], after[h])
    assert w.samples and w.samples[-1][1], "the VIP does not serve after the renewal"
    assert w.longest_gap() <= 3.0, f"the VIP did not serve for {w.longest_gap():.2f} s during the renewal"

"""Python face of testhosts.sh: start/stop test hosts, write inventories, run commands on hosts.

Used by tests/integration (pytest fixtures), bench/ and tests/sandbox.sh. Every host is a real
systemd-nspawn container reached over real SSH; nothing here fakes a host.
"""
from __future__ import annotations

import contextlib
import functools
import glob
import json
import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
TOP = HERE.parent.parent
SCRIPT = HERE / "testhosts.sh"
# precheck's limit on the fsync p99 of an etcd member's disk, on test hosts: they share this
# machine's one disk with each other, the scenarios beside them and the builds (measured: p99 351 ms
# while five scenarios started at once; an etcd disk's limit is 10 ms, precheck's default)
SHARED_DISK_MAX_FSYNC_MS = 1000
# the connection timeout of a host of another architecture (testhosts.sh TH_ARCH: emulated)
EMULATED_HOST_TIMEOUT_S = 90


def _script(th_id: int, *args: str, check: bool = True, repo: str = "",
            release: str = "bookworm") -> subprocess.CompletedProcess:
    """testhosts.sh with these arguments, on the rootfs and repository of that Debian release
    (TH_RELEASE; "bookworm/arm64": of that release and architecture, TH_ARCH); repo (the hosts' apt
    repository): the hosts it starts get the test doubles' files as a read-only layer over their rootfs
    (TH_LAYERS; kubeadm_double.layer())."""
    name, dummy, arch = release.partition("/")
    env = dict(os.environ, TH_ID=str(th_id), TH_RELEASE=name, TH_ARCH=arch or "amd64")
    if repo:
        from harness import kubeadm_double   # (it needs nothing of this module)
        env["TH_LAYERS"] = str(kubeadm_double.layer(Path(repo)))
    return subprocess.run(["bash", str(SCRIPT), *args], env=env, check=check,
                          text=True, stdout=subprocess.PIPE)


@dataclass
class TestHosts:
    """One instance of the harness: hosts h1..hN on bridge thbr<th_id>, 172.30.<th_id>.0/24, Debian 12
    (bookworm) amd64 but for the hosts `releases` names another kind of (e.g. {"h4": "trixie"},
    {"h6": "bookworm/arm64"}: a release, and an architecture other than amd64 after a slash)."""

    __test__ = False   # not a test class (pytest collects Test* from the files that import it)
    th_id: int = 1
    count: int = 3
    info: dict = field(default_factory=dict)
    # the folder (controller state .tke/) of the site each host was last put in by write_inventory
    site_dirs: dict = field(default_factory=dict)
    releases: dict = field(default_factory=dict)
    # each release's apt repository (TH_REPO), for the hosts of that release
    repos: dict = field(default_factory=dict)

    def __post_init__(self):
        self.info = self._info("bookworm")
        for release in self.releases.values():
            self._info(release)

    def _info(self, release: str) -> dict:
        """testhosts.sh's facts of this instance for the hosts of that release (its TH_REPO kept)."""
        out = _script(self.th_id, "info", release=release).stdout
        info = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
        self.repos[release] = info["TH_REPO"]
        return info

    # --- facts -------------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        return [f"h{n}" for n in range(1, self.count + 1)]

    def ip(self, name: str) -> str:
        return f"{self.info['TH_NET']}.{10 + int(name.lstrip('h'))}"

    @property
    def gateway(self) -> str:
        return self.info["TH_GW"]

    @property
    def key(self) -> str:
        return self.info["TH_KEY"]

    @property
    def password(self) -> str:
        return Path(self.info["TH_PASSFILE"]).read_text().strip()

    def release(self, name: str) -> str:
        """The Debian release of host `name`."""
        return self.releases.get(name, "bookworm")

    def _by_release(self, names) -> dict[str, list[str]]:
        """The hosts' numbers, by release."""
        groups: dict[str, list[str]] = {}
        for name in names:
            groups.setdefault(self.release(name), []).append(name.lstrip("h"))
        return groups

    # --- life cycle --------------------------------------------------------------------
    def prepare(self) -> None:
        """Machine dependencies, cached rootfs and apt repository of each release the hosts run
        (built once, then reused)."""
        _script(self.th_id, "deps")
        for release in self.repos:
            self._build(release)

    def _build(self, release: str) -> None:
        """That release's rootfs and apt repository (built once, then reused)."""
        if release not in self.repos:
            self._info(release)
        for step in ("rootfs", "repo"):
            _script(self.th_id, step, release=release)

    def up(self) -> None:
        _script(self.th_id, "net-up")
        for release, nums in self._by_release(self.names).items():
            _script(self.th_id, "up", *nums, repo=self.repos[release], release=release)
        _script(self.th_id, "ssh-wait", *[str(n) for n in range(1, self.count + 1)])

    def reset(self, *names: str) -> None:
        """Give the named hosts a fresh root filesystem (as new machines)."""
        self._close_connections(*names)
        for release, nums in self._by_release(names).items():
            _script(self.th_id, "reset", *nums, repo=self.repos[release], release=release)
        for name in names:
            # which site's folder it records next is not known here (the test may install it again
            # with the inventory it has): the next inventory written with it makes it forget
            self.site_dirs[name] = ""

    def down(self, *names: str) -> None:
        self._close_connections(*names)
        _script(self.th_id, "down", *[n.lstrip("h") for n in names], check=False)

    def destroy(self) -> None:
        self._close_connections()
        _script(self.th_id, "destroy", check=False)

    @contextlib.contextmanager
    def extra(self, name: str, release: str):
        """Host `name` (past h1..hN, e.g. "h4") of that Debian release, up for the block, gone after
        (stopped and its state dropped): a host of another kind beside the usual ones."""
        self._build(release)
        # a new machine: whatever an earlier scenario left of a host of that name (another release's
        # root filesystem, testhosts.sh refuses to start it as this one) goes first
        self._drop(name)
        self.releases[name] = release
        num = name.lstrip("h")
        try:
            _script(self.th_id, "up", num, repo=self.repos[release], release=release)
            _script(self.th_id, "ssh-wait", num)
            yield name
        finally:
            self._drop(name)
            del self.releases[name]

    def _drop(self, name: str) -> None:
        """Host `name` stopped and its state (root filesystem layer, release) gone."""
        self.down(name)
        shutil.rmtree(Path(self.info["TH_RUN"]) / "hosts" / name, ignore_errors=True)

    # --- use ---------------------------------------------------------------------------
    # The harness's own commands share one SSH connection per host and user (OpenSSH multiplexing:
    # a login costs this machine about 0.1 s of CPU, a session on an open connection a tenth of
    # that); Ansible's runs never use these connections (their own ssh, their own logins). A
    # host that goes down or is reset has its connections closed first.
    @functools.cached_property
    def _ssh_dir(self) -> Path:
        """This instance's connection sockets, <user>@<host> (made once per object)."""
        folder = Path("/tmp") / f"testhosts-ssh-{os.getuid()}-{self.th_id}"
        folder.mkdir(mode=0o700, exist_ok=True)
        return folder

    def _control_path(self, name: str, user: str) -> str:
        return str(self._ssh_dir / f"{user}@{name}")

    @staticmethod
    def _control(path: str, op: str) -> int:
        """`ssh -O op` on the connection at path (check: is it alive; exit: close it)."""
        return subprocess.run(["ssh", "-q", "-o", f"ControlPath={path}", "-O", op, "host"],
                              capture_output=True, timeout=10, check=False).returncode

    def _close_connections(self, *names: str) -> None:
        """The named hosts' connections (every user's), or every connection of this instance."""
        paths = ([self._control_path(n, u) for n in names for u in ("root", "ops")] if names
                 else [str(p) for p in self._ssh_dir.iterdir()])
        for path in paths:
            if os.path.exists(path):
                self._control(path, "exit")
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)

    def ssh_argv(self, name: str, user: str = "root", mux: bool = True) -> list[str]:
        """ssh's arguments up to the command (for a caller that streams stdin or stdout)."""
        argv = ["ssh", "-q", "-i", self.key, "-o", "StrictHostKeyChecking=no",
                "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5"]
        if mux:
            argv += ["-o", "ControlMaster=auto", "-o", f"ControlPath={self._control_path(name, user)}",
                     "-o", "ControlPersist=60", "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3"]
        return argv + [f"{user}@{self.ip(name)}"]

    def ssh(self, name: str, command: str, check: bool = True, user: str = "root",
            timeout: int = 120, mux: bool = True) -> subprocess.CompletedProcess:
        """command on the host as user; mux=False: a login of its own (one sshd counts)."""
        res = subprocess.run(self.ssh_argv(name, user, mux) + [command], text=True, capture_output=True,
                             timeout=timeout, check=False)
        if res.returncode == 255 and mux and self._control(self._control_path(name, user), "check") != 0:
            # not the command's own 255: the shared connection died under it (its host cut off a
            # while), so once more on a login of its own
            self._close_connections(name)
            res = subprocess.run(self.ssh_argv(name, user, False) + [command], text=True, capture_output=True,
                                 timeout=timeout, check=False)
        if check and res.returncode != 0:
            raise AssertionError(f"{name}: {command!r} exited {res.returncode}\n"
                                 f"stdout: {res.stdout}\nstderr: {res.stderr}")
        return res

    def ssh_logins(self, name: str) -> int:
        """Accepted logins in the host's sshd log so far (this look is one of them: a login of its
        own): around a run, whether the run contacted the host."""
        out = self.ssh(name, "journalctl -u ssh -u sshd --no-pager -o cat | grep -c '^Accepted' || true", mux=False)
        return int(out.stdout.strip() or 0)

    def kubectl_client(self, name: str = "h1", version: str | None = None) -> str:
        """Real kubectl (the official build, tests/harness/real_clients.py) of the cluster's minor
        version at /usr/local/bin/kubectl on a host: a client independent of the collection's own, to
        read the cluster the way an operator would. The minor is `version`'s, else the image tag of the
        host's kube-apiserver static pod manifest, else the newest pinned. Returns its version."""
        from harness import real_clients
        if version is None:
            tag = self.ssh(name, "sed -n 's/.*image: .*kube-apiserver:\\(v[0-9][0-9.]*\\).*/\\1/p' "
                                 "/etc/kubernetes/manifests/kube-apiserver.yaml 2>/dev/null | head -1",
                           check=False).stdout.strip()
            version = tag if real_clients.minor_of(tag or "x") in real_clients.WHEELS else max(real_clients.WHEELS)
        binary = real_clients.kubectl(version)
        want = real_clients.WHEELS[real_clients.minor_of(version)]["kubectl"]
        have = self.ssh(name, "sha256sum /usr/local/bin/kubectl 2>/dev/null", check=False).stdout.split()[:1]
        if have != [want[1]]:
            with open(binary, "rb") as src:
                argv = self.ssh_argv(name) + ["cat > /usr/local/bin/kubectl.part && chmod 0755 /usr/local/bin/kubectl.part "
                                              "&& mv /usr/local/bin/kubectl.part /usr/local/bin/kubectl"]
                subprocess.run(argv, stdin=src, check=True, timeout=300)
        return want[0]

    def nodes(self, name: str = "h1") -> list[dict]:
        """The cluster's Node objects as its API answers kubectl on a master (the admin kubeconfig
        there); a failing kubectl fails the caller."""
        out = self.ssh(name, "kubectl --kubeconfig /etc/kubernetes/admin.conf get nodes -o json").stdout
        return json.loads(out)["items"]

    def kubelet_versions(self, name: str = "h1") -> dict[str, str]:
        """{Node name: its kubelet's version} (nodes())."""
        return {n["metadata"]["name"]: n["status"]["nodeInfo"]["kubeletVersion"] for n in self.nodes(name)}

    def host_vars(self, name: str, auth: str = "key") -> dict:
        """Connection variables for one host: auth is key (root), password (root over
        paramiko) or sudo (user ops, key, become with its password)."""
        v = {"ansible_host": self.ip(name), "ansible_user": "root",
             "ansible_python_interpreter": "/usr/bin/python3"}
        if "/" in self.release(name):
            # a host of another architecture runs emulated (qemu-user): under a test run's load the
            # start of its Python (mitogen's, once per run) took more than Ansible's 10 s connection
            # timeout (CI, 2026-11-30: "unreachable" after 10.6-12.1 s), as on a slow link
            v["ansible_ssh_timeout"] = EMULATED_HOST_TIMEOUT_S
        if auth == "key":
            v["ansible_ssh_private_key_file"] = self.key
        elif auth == "password":
            v.update(ansible_connection="paramiko", ansible_password=self.password)
        elif auth == "sudo":
            v.update(ansible_user="ops", ansible_ssh_private_key_file=self.key,
                     ansible_become=True, ansible_become_password=self.password)
        else:
            raise ValueError(auth)
        return v

    def write_inventory(self, path: Path, groups: dict[str, list[str]],
                        group_vars: dict | None = None, auth: dict[str, str] | None = None,
                        host_vars: dict[str, dict] | None = None) -> Path:
        """Write a YAML inventory: groups maps group name -> host names (h1...)."""
        auth = auth or {}
        host_vars = host_vars or {}
        hosts = sorted({h for members in groups.values() for h in members})
        all_hosts = {h: {**self.host_vars(h, auth.get(h, "key")), **host_vars.get(h, {})}
                     for h in hosts}
        # the validate phase (always run) wants a platform admin password of 8+ characters; the
        # hosts share this machine's disk, whose fsync p99 is not an etcd disk's (precheck's 10 ms:
        # SHARED_DISK_MAX_FSYNC_MS)
        # the fixture site pack is signed by the test site owner's key (fixture_pack.signing_key)
        # the hosts have this machine's cgroup layout: on cgroup v1 (or hybrid), Kubernetes 1.35 and later
        # (the default release) run only when the inventory allows it (KEP-5573; docs/testing.md)
        from harness.fixture_pack import public_key_pem
        group_vars = {"tke_admin_password": "test-admin-password", "precheck_max_fsync_ms": SHARED_DISK_MAX_FSYNC_MS,
                      "tke_site_pack_pubkey": public_key_pem(),
                      **({"tke_allow_cgroup_v1": True} if cgroup_v1() else {}), **(group_vars or {})}
        inv = {"all": {"hosts": all_hosts, "vars": group_vars,
                       "children": {g: {"hosts": {h: None for h in members}}
                                    for g, members in groups.items()}}}
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(inv, sort_keys=False))
        path.chmod(0o600)
        self.new_site(path.parent, hosts)
        return path

    def new_site(self, folder: Path, hosts) -> None:
        """Hosts put in an inventory of another folder than before (a scenario starting another site
        on the same machines, each test with its own tmp_path) forget the site they belonged to, as a
        reset makes them (playbooks/reset.yml removes /var/lib/offline-pot): the identity and the
        installed version, not the phase records. Without it the install refuses them as hosts of
        another site (docs/install.md, "Site identity"). A host still in its site's folder keeps it."""
        folder = str(Path(folder).resolve())
        for h in hosts:
            before = self.site_dirs.get(h)
            self.site_dirs[h] = folder
            if before is not None and before != folder and h in self.names:
                self.ssh(h, "rm -f /var/lib/offline-pot/site /var/lib/offline-pot/kubernetes", check=False, timeout=30)


def worker_instance(worker: str, base: int) -> int:
    """The harness instance pytest-xdist worker gwN uses: base (TH_ID) + N (a run without workers,
    "main" in the schedule: base)."""
    return base + (int(worker[2:]) if worker.startswith("gw") else 0)


def host_cpu(th_id="*") -> dict[str, float]:
    """{cgroup name: CPU seconds so far} of the test hosts up now (of instance th_id, or every one):
    testhosts.sh's cgdir gives each host a cgroup v1 group testhost-<instance>-<name> below the
    cgroup of the shell that started it; its cpuacct.usage is the CPU nanoseconds of every process
    in it. A host that goes while it is read is left out."""
    used = {}
    for p in glob.glob(f"/sys/fs/cgroup/cpuacct/**/testhost-{th_id}-*/cpuacct.usage", recursive=True):
        try:
            used[Path(p).parent.name] = int(Path(p).read_text(encoding="ascii")) / 1e9
        except (OSError, ValueError):
            continue
    return used


def cgroup_v1(mounts="/proc/self/mounts") -> bool:
    """Whether this machine's /sys/fs/cgroup is not the unified hierarchy (a cgroup2 mount): its
    systemd-nspawn hosts then run cgroup v1 too (the kubelet's test, host_probe.cgroup_version)."""
    with open(mounts, encoding="utf-8") as f:
        return not any(line.split()[1:3] == ["/sys/fs/cgroup", "cgroup2"] for line in f)


def quote(s: str) -> str:
    return shlex.quote(s)

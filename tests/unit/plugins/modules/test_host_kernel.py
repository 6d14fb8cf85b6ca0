"""host_kernel's branches for what a host cannot do (skipped with a warning) and for what is a real
failure (the module fails): modprobe, sysctl, swapoff. The host is simulated: the module's file
reads, os.access/statvfs and run_command are replaced, so nothing on this machine is touched."""
import errno
import os

import pytest

from ansible_collections.offline_pot.tke.plugins.modules import host_kernel as hk


class Failed(Exception):
    pass


class FakeModule:
    def __init__(self, tmp_path, check=False, commands=None):
        self.check_mode = check
        self.params = {"modules_file": str(tmp_path / "modules.conf"), "sysctl_file": str(tmp_path / "sysctl.conf"),
                       "fstab": str(tmp_path / "fstab")}
        self.warnings, self.ran = [], []
        self.commands = commands or {}

    def warn(self, text):
        self.warnings.append(text)

    def fail_json(self, **kw):
        raise Failed(kw["msg"])

    def run_command(self, argv):
        self.ran.append(argv)
        return self.commands.get(argv[0], (0, "", ""))


@pytest.fixture
def host(monkeypatch):
    """Files of the simulated host: path -> content (None: absent)."""
    files = {}
    real_read = hk.read

    def read(path):
        if path in files:
            return files[path]
        if path.startswith(("/proc/", "/lib/modules/", "/sys/")):
            return None
        return real_read(path)
    monkeypatch.setattr(hk, "read", read)
    real_isdir = os.path.isdir
    monkeypatch.setattr(hk.os.path, "isdir", lambda p: False if p == "/sys/module" else real_isdir(p))
    return files


def test_a_failing_modprobe_fails_the_module(tmp_path, host):
    host["/proc/modules"] = "overlay 1 0 - Live 0x0\n"
    m = FakeModule(tmp_path, commands={"modprobe": (1, "", "modprobe: FATAL: Module ip_vs not found.\n")})
    with pytest.raises(Failed, match="^modprobe ip_vs failed: modprobe: FATAL: Module ip_vs not found.$"):
        hk.HostKernel(m).modules(["overlay", "ip_vs"])
    assert m.ran == [["modprobe", "ip_vs"]]  # overlay was loaded already


def test_no_module_support_skips_with_a_warning_and_persists(tmp_path, host):
    # no /proc/modules: a kernel without loadable modules (a container's view)
    k = hk.HostKernel(FakeModule(tmp_path))
    k.modules(["ip_vs"])
    assert k.skipped == k.m.warnings and len(k.skipped) == 1
    assert k.skipped[0].startswith("module ip_vs: this kernel has no loadable module support")
    assert k.m.ran == [] and "ip_vs" in (tmp_path / "modules.conf").read_text()
    # a key of that module then does not exist: skipped too, naming the module
    k.sysctls({"net.ipv4.vs.conntrack": 1})
    assert k.skipped[-1] == ("sysctl net.ipv4.vs.conntrack: does not exist on this kernel and module(s) ip_vs could "
                             "not be loaded here; skipped")


def test_a_missing_sysctl_key_fails_when_no_module_explains_it(tmp_path, host):
    with pytest.raises(Failed, match=r"sysctl net.bogus.key: /proc/sys/net/bogus/key does not exist on this kernel"):
        hk.HostKernel(FakeModule(tmp_path)).sysctls({"net.bogus.key": 1})


@pytest.mark.parametrize("flag,why", [(os.ST_RDONLY, "/proc/sys is read-only here (a container)"),
                                      (0, "the key is read-only in this namespace (a container)")])
def test_a_read_only_sysctl_is_skipped_with_the_reason(tmp_path, host, monkeypatch, flag, why):
    host["/proc/sys/vm/swappiness"] = "60\n"
    monkeypatch.setattr(hk.os, "access", lambda p, mode: False)
    monkeypatch.setattr(hk.os, "statvfs", lambda p: type("S", (), {"f_flag": flag})())
    k = hk.HostKernel(FakeModule(tmp_path))
    k.sysctls({"vm.swappiness": 0})
    assert k.m.warnings == [f"sysctl vm.swappiness: {why}; skipped, current 60, wanted 0 (persisted in "
                            f"{tmp_path / 'sysctl.conf'})"]
    assert k.applied == [f"wrote {tmp_path / 'sysctl.conf'}"]


def test_a_sysctl_that_cannot_be_written_fails(tmp_path, host, monkeypatch):
    host["/proc/sys/vm/swappiness"] = "60\n"
    monkeypatch.setattr(hk.os, "access", lambda p, mode: True)
    real_open = open

    def fake_open(path, *a, **kw):
        if path == "/proc/sys/vm/swappiness":
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_open(path, *a, **kw)
    monkeypatch.setattr("builtins.open", fake_open)
    with pytest.raises(Failed, match=r"^sysctl vm.swappiness: cannot set 0: \[Errno 22\] Invalid argument$"):
        hk.HostKernel(FakeModule(tmp_path)).sysctls({"vm.swappiness": 0})


SWAPS = "Filename\tType\tSize\tUsed\tPriority\n/swapfile file 1024 0 -2\n"


def test_swapoff_not_permitted_is_a_warning_and_swap_stays(tmp_path, host):
    host["/proc/swaps"] = SWAPS
    m = FakeModule(tmp_path, commands={"swapoff": (255, "", "swapoff: /swapfile: swapoff failed: Operation not permitted\n")})
    k = hk.HostKernel(m)
    k.swap()
    assert k.applied == [] and m.ran == [["swapoff", "-a"]]
    assert m.warnings == ["swap: swapoff is not permitted here (a container); swap stays on: "
                          "swapoff: /swapfile: swapoff failed: Operation not permitted"]


def test_any_other_swapoff_error_fails(tmp_path, host):
    host["/proc/swaps"] = SWAPS
    m = FakeModule(tmp_path, commands={"swapoff": (255, "", "swapoff: /swapfile: swapoff failed: Cannot allocate memory\n")})
    with pytest.raises(Failed, match="^swapoff -a failed: swapoff: /swapfile: swapoff failed: Cannot allocate memory$"):
        hk.HostKernel(m).swap()


def test_check_mode_reports_swapoff_and_runs_nothing(tmp_path, host):
    host["/proc/swaps"] = SWAPS
    m = FakeModule(tmp_path, check=True)
    k = hk.HostKernel(m)
    k.swap()
    assert k.applied == ["swapoff /swapfile"] and m.ran == []

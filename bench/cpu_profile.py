#!/usr/bin/env python
"""Where the machine's CPU goes while a command runs: any command (the whole test suite, one scenario,
one playbook run), with the kernel's process accounting on (acct(2), acct(5): every process on the
machine that ends meanwhile writes its CPU time and command name, a short-lived `sh` or an ansible
task worker included, and a test host's processes too; run it on an otherwise quiet machine) and the
test hosts' CPU read from their cgroups (cgroup v1 cpuacct, one group per host: testhost-<id>-<name>).
Not a test: prints numbers for the closing notes - the machine's busy CPU, the ansible-playbook
processes (the main ones; their task workers, forked per task and host; mitogen's multiplexer), the
test hosts' share per host, and the commands that took most.

    .cache/venv/bin/python bench/cpu_profile.py [--top 25] -- bash tests/run_all.sh
    .cache/venv/bin/python bench/cpu_profile.py -- ansible-playbook -i <inventory> install.yml

Needs root (acct(2)); accounting goes to a file of its own for the command's time (one that was on,
`accton`'s, is replaced) and is off afterwards. Processes still running when the command ends (a
test host left up) are not in the accounting; the hosts' cgroups still count them.
"""
import argparse
import collections
import ctypes
import glob
import os
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

# struct acct_v3 (linux/acct.h, acct(5)): flag, version, tty, exitcode, uid, gid, pid, ppid, btime,
# etime (float), utime, stime, mem, io, rw, minflt, majflt, swaps (comp_t), comm[16]
ACCT_V3 = struct.Struct("=BBHIIIIIIf8H16s")
AFORK = 0x01      # forked but did not exec (an ansible task worker, mitogen's multiplexer)
AHZ = 100         # the accounting's clock ticks per second (linux/acct.h)
HOST_CGROUPS = "/sys/fs/cgroup/cpuacct/testhost-*/cpuacct.usage"


def comp_t(v):
    """acct(5)'s comp_t: a 13-bit mantissa and a 3-bit base-8 exponent."""
    return (v & 0x1FFF) << (3 * (v >> 13))


def records(path):
    """(command, forked without exec, CPU seconds) for each ended process in an acct v3 file."""
    data = Path(path).read_bytes()
    for off in range(0, len(data) - ACCT_V3.size + 1, ACCT_V3.size):
        f = ACCT_V3.unpack_from(data, off)
        if f[1] != 3:
            continue
        utime, stime = comp_t(f[10]), comp_t(f[11])
        yield f[18].split(b"\0")[0].decode(errors="replace"), bool(f[0] & AFORK), (utime + stime) / AHZ


def busy():
    """The machine's busy CPU seconds so far (/proc/stat: all but idle and iowait)."""
    with open("/proc/stat", encoding="ascii") as fh:
        v = [int(x) for x in fh.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


class HostSampler(threading.Thread):
    """Every 2 s, each test host's cgroup CPU; a host destroyed and made again (a scenario's fresh
    hosts) starts a new count, added to its name's total."""

    def __init__(self):
        super().__init__(daemon=True)
        self.total, self.last, self.stop = collections.Counter(), {}, threading.Event()

    def sample(self, baseline=False):
        now = {}
        for p in glob.glob(HOST_CGROUPS):
            try:
                now[p.split("/")[-2]] = int(Path(p).read_text(encoding="ascii")) / 1e9
            except (OSError, ValueError):
                continue
        for name, used in now.items() if not baseline else ():
            before = self.last.get(name, 0.0)
            self.total[name] += used - before if used >= before else used
        self.last = now

    def run(self):
        while not self.stop.wait(2):
            self.sample()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--top", type=int, default=25, help="commands listed by CPU")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- the command to run")
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        ap.error("no command (after --)")
    libc = ctypes.CDLL(None, use_errno=True)
    acct_file = Path(tempfile.mkstemp(prefix="cpu-profile-", suffix=".acct")[1])
    if libc.acct(str(acct_file).encode()) != 0:
        sys.exit(f"cpu_profile: acct(2) failed: {os.strerror(ctypes.get_errno())} (root?)")
    hosts = HostSampler()
    hosts.sample(baseline=True)   # (what the hosts up now used before is not the command's)
    hosts.start()
    t0, b0 = time.monotonic(), busy()
    try:
        rc = subprocess.run(cmd, check=False).returncode
    finally:
        libc.acct(None)
        hosts.stop.set()
        hosts.join()
        hosts.sample()
    wall, used = time.monotonic() - t0, busy() - b0
    by_comm = collections.Counter()
    ansible = {False: [0.0, 0], True: [0.0, 0]}    # forked: [CPU s, processes]
    for comm, forked, cpu in records(acct_file):
        by_comm[comm + ("*" if forked else "")] += cpu
        if comm == "ansible-playboo":   # (the kernel keeps 15 characters of a command's name)
            ansible[forked][0] += cpu
            ansible[forked][1] += 1
    acct_file.unlink()
    accounted, on_hosts = sum(by_comm.values()), sum(hosts.total.values())
    (main_cpu, mains), (fork_cpu, forks) = ansible[False], ansible[True]
    print(f"== cpu_profile: exit {rc}; {wall:.0f} s wall, the machine busy {used:.0f} CPU s "
          f"({used / wall / os.cpu_count():.0%} of {os.cpu_count()} CPUs); ended processes {accounted:.0f} CPU s")
    print(f"ansible-playbook: {main_cpu:.0f} s in {mains} main processes, {fork_cpu:.0f} s in {forks} forks "
          f"(task workers, mitogen's multiplexer) = {(main_cpu + fork_cpu) / max(used, 1):.0%} of the busy CPU")
    per_kind = collections.Counter()
    for name, cpu in hosts.total.items():
        per_kind[name.rsplit("-", 1)[-1]] += cpu
    print(f"test hosts (their cgroups): {on_hosts:.0f} s = {on_hosts / max(used, 1):.0%} of the busy CPU; by name: "
          + (", ".join(f"{n} {c:.0f}" for n, c in per_kind.most_common()) or "none"))
    print(f"top {a.top} commands by CPU (s; * forked without exec):")
    for comm, cpu in by_comm.most_common(a.top):
        print(f"  {cpu:8.1f}  {comm}")
    return rc


if __name__ == "__main__":
    sys.exit(main())

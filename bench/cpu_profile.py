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
    .cache/venv/bin/python bench/cpu_profile.py --schedule /tmp/s.jsonl -- \
        env TEST_SCHEDULE_FILE=/tmp/s.jsonl bash tests/run_all.sh     # and the CPU per test file
    .cache/venv/bin/python bench/cpu_profile.py -- ansible-playbook -i <inventory> install.yml

Needs root (acct(2)); accounting goes to a file of its own for the command's time (one that was on,
`accton`'s, is replaced) and is off afterwards. Processes still running when the command ends (a
test host left up) are not in the accounting; the hosts' cgroups still count them.
"""
import argparse
import collections
import ctypes
import glob
import json
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


Proc = collections.namedtuple("Proc", "comm forked cpu pid ppid start end")


def records(path):
    """Each ended process in an acct v3 file: its command, whether it forked without exec, its CPU
    seconds, its PID and its parent's (the parent when it ended), and when it started and ended
    (seconds since the epoch)."""
    data = Path(path).read_bytes()
    for off in range(0, len(data) - ACCT_V3.size + 1, ACCT_V3.size):
        f = ACCT_V3.unpack_from(data, off)
        if f[1] != 3:
            continue
        yield Proc(f[18].split(b"\0")[0].decode(errors="replace"), bool(f[0] & AFORK),
                   (comp_t(f[10]) + comp_t(f[11])) / AHZ, f[6], f[7], f[8], f[8] + f[9])


def busy():
    """The machine's busy CPU seconds so far (/proc/stat: all but idle and iowait)."""
    with open("/proc/stat", encoding="ascii") as fh:
        v = [int(x) for x in fh.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


class HostSampler(threading.Thread):
    """Every 2 s, each test host's cgroup CPU; a host destroyed and made again (a scenario's fresh
    hosts) starts a new count. `used`: (time, cgroup name, CPU seconds since the last sample)."""

    def __init__(self):
        super().__init__(daemon=True)
        self.used, self.last, self.stop = [], {}, threading.Event()

    def sample(self, baseline=False):
        now, t = {}, time.time()
        for p in glob.glob(HOST_CGROUPS):
            try:
                now[p.split("/")[-2]] = int(Path(p).read_text(encoding="ascii")) / 1e9
            except (OSError, ValueError):
                continue
        for name, cpu in now.items() if not baseline else ():
            before = self.last.get(name, 0.0)
            self.used.append((t, name, cpu - before if cpu >= before else cpu))
        self.last = now

    def run(self):
        while not self.stop.wait(2):
            self.sample()


def parents(procs):
    """A function: a process's parent among procs (the one with its parent's PID that lived when it
    started: PIDs are reused over a long run), or None."""
    by_pid = collections.defaultdict(list)
    for p in procs:
        by_pid[p.pid].append(p)

    def parent(p):
        for q in by_pid.get(p.ppid, ()):
            if q.start - 1 <= p.start <= q.end + 1 and q is not p:
                return q
        return None
    return parent


def per_test_file(procs, host_use, schedule, th_id):
    """{test file: (controller CPU s, hosts' CPU s)} for a run of tests/run_all.sh with
    TEST_SCHEDULE_FILE=schedule: a process is a file's when it descends from the pytest-xdist worker
    that ran the file when it started (the schedule's pid), and not from a test host's systemd-nspawn
    (the host's own processes); a host's cgroup CPU is the file's its worker ran then (worker gwN
    uses the hosts testhost-<th_id + N>-*)."""
    spans, pids = collections.defaultdict(list), {}
    for line in Path(schedule).read_text(encoding="utf-8").splitlines():
        e = json.loads(line)
        f = e["test"].split("::")[0].rsplit("/", 1)[-1]
        pids[e.get("pid")] = e["worker"]
        mine = spans[e["worker"]]
        if mine and mine[-1][2] == f:
            mine[-1][1] = e["t"]
        else:
            mine.append([e["t"], e["t"], f])

    def file_at(worker, t):
        for a, b, f in spans.get(worker, ()):
            if a - 1 <= t <= b + 1:
                return f
        return None
    parent, out = parents(procs), collections.defaultdict(lambda: [0.0, 0.0])
    for p in procs:
        q, worker = p, None
        while q is not None and worker is None and q.comm != "systemd-nspawn":
            worker = pids.get(q.pid) if q is not p else None
            q = parent(q)
        if worker and (q is None or q.comm != "systemd-nspawn"):
            out[file_at(worker, p.start) or "(between files)"][0] += p.cpu
    for t, name, cpu in host_use:
        n = int(name.split("-")[1]) - th_id
        out[file_at(f"gw{n}", t) or "(between files)"][1] += cpu
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--top", type=int, default=25, help="commands listed by CPU")
    ap.add_argument("--schedule", help="the run's TEST_SCHEDULE_FILE: CPU per test file too")
    ap.add_argument("--th-id", type=int, default=int(os.environ.get("TH_ID", "1")),
                    help="the run's TH_ID (gwN's hosts are instance TH_ID + N)")
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
    procs = list(records(acct_file))
    acct_file.unlink()
    by_comm = collections.Counter()
    ansible = {False: [0.0, 0], True: [0.0, 0]}    # forked: [CPU s, processes]
    for p in procs:
        by_comm[p.comm + ("*" if p.forked else "")] += p.cpu
        if p.comm == "ansible-playboo":   # (the kernel keeps 15 characters of a command's name)
            ansible[p.forked][0] += p.cpu
            ansible[p.forked][1] += 1
    accounted, on_hosts = sum(by_comm.values()), sum(cpu for dummy, dummy2, cpu in hosts.used)
    (main_cpu, mains), (fork_cpu, forks) = ansible[False], ansible[True]
    print(f"== cpu_profile: exit {rc}; {wall:.0f} s wall, the machine busy {used:.0f} CPU s "
          f"({used / wall / os.cpu_count():.0%} of {os.cpu_count()} CPUs); ended processes {accounted:.0f} CPU s")
    print(f"ansible-playbook: {main_cpu:.0f} s in {mains} main processes, {fork_cpu:.0f} s in {forks} forks "
          f"(task workers, mitogen's multiplexer) = {(main_cpu + fork_cpu) / max(used, 1):.0%} of the busy CPU")
    per_name = collections.Counter()
    for dummy, name, cpu in hosts.used:
        per_name[name.rsplit("-", 1)[-1]] += cpu
    print(f"test hosts (their cgroups): {on_hosts:.0f} s = {on_hosts / max(used, 1):.0%} of the busy CPU; by name: "
          + (", ".join(f"{n} {c:.0f}" for n, c in per_name.most_common()) or "none"))
    print(f"top {a.top} commands by CPU (s; * forked without exec):")
    for comm, cpu in by_comm.most_common(a.top):
        print(f"  {cpu:8.1f}  {comm}")
    if a.schedule and Path(a.schedule).is_file():
        files = per_test_file(procs, hosts.used, a.schedule, a.th_id)
        print("CPU per test file (s: its processes on the controller + its test hosts; the rest of the "
              f"busy CPU, {used - sum(c + h for c, h in files.values()):.0f} s: the set-up, the checks beside, pytest "
              "itself, processes still running at the end):")
        for f, (c, h) in sorted(files.items(), key=lambda kv: -sum(kv[1])):
            print(f"  {c + h:7.0f} = {c:6.0f} + {h:6.0f}  {f}")
    return rc


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Where the machine's CPU goes while a command runs: any command (the whole test suite, one scenario,
one playbook run), with the kernel's process accounting on (acct(2), acct(5): every process on the
machine that ends meanwhile writes its CPU time and command name, a short-lived `sh` or an ansible
task worker included, and a test host's processes too; run it on an otherwise quiet machine) and the
test hosts' CPU read from their cgroups (testhosts.host_cpu) every 2 s.
Not a test: prints numbers for the closing notes - the machine's busy CPU, the ansible-playbook
processes (the main ones; the ones forked from them: a task worker per task and host, mitogen's
multiplexer), the test hosts' share and the hosts that took most, the commands that took most, and
with --schedule each test file's CPU and each part's of tests/run_all.sh (the set-up's builds, the
checks, pytest itself: the command is given RUN_PARTS_FILE, where run_all.sh names each part's PID).

    .cache/venv/bin/python bench/cpu_profile.py [--top 25] -- bash tests/run_all.sh
    .cache/venv/bin/python bench/cpu_profile.py --schedule /tmp/s.jsonl -- \
        env TEST_SCHEDULE_FILE=/tmp/s.jsonl bash tests/run_all.sh     # and the CPU per test file

Needs root (acct(2)); accounting goes to a file of its own for the command's time (one that was on,
`accton`'s, is replaced) and is off afterwards. Not counted: processes still running when the
command ends (the hosts' cgroups still count a host left up), and a host's last 2 s before it goes.
A test file's processes are those that descend from the pytest-xdist worker that ran it; one that
daemonizes (its parent then PID 1) is no file's. A part's are the others that descend from it.
"""
import argparse
import collections
import ctypes
import os
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP / "tests"))

from harness import schedule, testhosts  # noqa: E402

# struct acct_v3 (linux/acct.h, acct(5)): flag, version, tty, exitcode, uid, gid, pid, ppid, btime
# (s), etime (float, in AHZ ticks), utime, stime, mem, io, rw, minflt, majflt, swaps (comp_t), comm[16]
ACCT_V3 = struct.Struct("=BBHIIIIIIf8H16s")
AFORK = 0x01      # forked but did not exec (an ansible task worker, mitogen's multiplexer)
AHZ = 100         # the accounting's clock ticks per second (linux/acct.h)

Proc = collections.namedtuple("Proc", "comm forked cpu pid ppid start end")


def comp_t(v):
    """acct(5)'s comp_t: a 13-bit mantissa and a 3-bit base-8 exponent."""
    return (v & 0x1FFF) << (3 * (v >> 13))


def records(path):
    """Each ended process in an acct v3 file: its command, whether it forked without exec, its CPU
    seconds, its PID and its parent's (the parent when it ended), and when it started and ended
    (seconds since the epoch)."""
    data = Path(path).read_bytes()
    for off in range(0, len(data) - ACCT_V3.size + 1, ACCT_V3.size):
        f = ACCT_V3.unpack_from(data, off)
        if f[1] == 3:
            yield Proc(f[18].split(b"\0")[0].decode(errors="replace"), bool(f[0] & AFORK),
                       (comp_t(f[10]) + comp_t(f[11])) / AHZ, f[6], f[7], f[8], f[8] + f[9] / AHZ)


def busy():
    """The machine's busy CPU seconds so far (/proc/stat)."""
    with open("/proc/stat", encoding="ascii") as fh:
        return schedule.ticks(fh.readline())[0] / os.sysconf("SC_CLK_TCK")


class HostSampler(threading.Thread):
    """Every 2 s, each test host's cgroup CPU: `used`, (time, cgroup name, CPU seconds since the last
    sample). A host made since is counted from nothing; one made again between two samples is
    counted from nothing when its count went down."""

    def __init__(self):
        super().__init__(daemon=True)
        self.used, self.last, self.stop = [], testhosts.host_cpu(), threading.Event()

    def sample(self):
        now, t = testhosts.host_cpu(), time.time()
        for name, cpu in now.items():
            before = self.last.get(name, 0.0)
            self.used.append((t, name, cpu - before if cpu >= before else cpu))
        self.last = now

    def run(self):
        while not self.stop.wait(2):
            self.sample()


Mark = collections.namedtuple("Mark", "label t own")   # own: the marked process's own CPU is the label's too


def ancestor_of(procs, marks):
    """A function: the label of the nearest marked process a process descends from (a pytest-xdist
    worker, a part of tests/run_all.sh), or None (a test host's process, one below its
    systemd-nspawn, too: the host's cgroup counts it). marks: {PID: [Mark(label, a time the marked
    process was alive, own)]}; own: the marked process's own CPU is the label's too (every part of
    tests/run_all.sh; not a worker: it runs many test files). PIDs are reused
    over a long run (a parent is the holder of its PID alive when the child started): a mark is the
    process's whose lifetime holds its time, or, where the parent has no record (it outlived the
    accounting), the latest mark of the parent's PID made before the child started."""
    by_pid = collections.defaultdict(list)
    for p in procs:
        by_pid[p.pid].append(p)

    def parent(p):
        return next((q for q in by_pid.get(p.ppid, ()) if q.start - 1 <= p.start <= q.end + 1), None)

    def mark_of(holder, pid, child=None):
        if holder is not None:
            return next((m for m in marks.get(pid, ()) if holder.start - 1 <= m.t <= holder.end + 1), None)
        # (a mark made in the lifetime of a recorded holder of the PID is that holder's, not the parent's)
        return max((m for m in marks.get(pid, ()) if m.t - 1 <= child.start
                    and not any(q.start - 1 <= m.t <= q.end + 1 for q in by_pid.get(pid, ()))),
                   key=lambda m: m.t, default=None)

    def find(p):
        mine = mark_of(p, p.pid)
        if mine is not None and mine.own:
            return mine.label
        seen = set()
        while p is not None and p.ppid not in seen and p.comm != "systemd-nspawn":   # (a host's: its cgroup's)
            seen.add(p.ppid)
            up = parent(p)
            mark = mark_of(up, p.ppid, child=p)
            if mark is not None:
                return mark.label
            p = up
        return None
    return find


def read_parts(path):
    """[(PID, Mark)] of tests/run_all.sh's parts from its RUN_PARTS_FILE lines, "<part> <PID> <time>"
    (a time the part's process was alive: when it was marked); a line that does not parse is left out."""
    parts = []
    for line in Path(path).read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            label, pid, t = line.rsplit(" ", 2)
            parts.append((int(pid), Mark(f"({label})", float(t), True)))
        except ValueError:
            continue
    return parts


def per_test_file(procs, host_use, schedule_file, th_id, parts):
    """{test file: [controller CPU s, hosts' CPU s]} for a run of tests/run_all.sh that wrote its
    schedule to schedule_file: a process is the file's that its worker ran when it started; a host's
    cgroup CPU is the file's that the worker using the host's instance ran then (testhosts.worker_instance).
    The processes of no worker that descend from a part of the run (parts: read_parts) are that part's."""
    spans, pids = schedule.read(schedule_file), schedule.worker_pids(schedule_file)
    if not pids:
        print(f"(no worker PIDs in {schedule_file}: the controller's CPU per test file is unknown)")
    first = {}
    for (worker, dummy), (start, dummy2) in spans.items():
        first[worker] = min(start, first.get(worker, start))

    def file_at(worker, t):
        return next((f for (w, f), (a, b) in spans.items() if w == worker and a - 1 <= t <= b + 1), "(between files)")
    marks = collections.defaultdict(list)
    for pid, mark in [*parts, *((pid, Mark(w, first.get(w, 0), False)) for pid, w in pids.items())]:
        marks[pid].append(mark)
    find = ancestor_of(procs, marks)
    out = collections.defaultdict(lambda: [0.0, 0.0])
    for p in procs:
        label = find(p)
        if label in first:
            out[file_at(label, p.start)][0] += p.cpu
        elif label:
            out[label][0] += p.cpu
    instances = {testhosts.worker_instance(w, th_id): w for w in first}
    for t, name, cpu in host_use:
        worker = instances.get(int(name.split("-")[1]))
        out[file_at(worker, t) if worker else "(hosts of no worker)"][1] += cpu
    return out


def report(rc, wall, used, procs, host_use, top):
    by_comm, ansible = collections.Counter(), {False: [0.0, 0], True: [0.0, 0]}    # forked: [CPU s, processes]
    for p in procs:
        by_comm[p.comm + ("*" if p.forked else "")] += p.cpu
        if p.comm == "ansible-playboo":   # (the kernel keeps 15 characters of a command's name)
            ansible[p.forked][0] += p.cpu
            ansible[p.forked][1] += 1
    (main_cpu, mains), (fork_cpu, forks) = ansible[False], ansible[True]
    per_host = collections.Counter()
    for dummy, name, cpu in host_use:
        per_host[name] += cpu
    print(f"== cpu_profile: exit {rc}; {wall:.0f} s wall, the machine busy {used:.0f} CPU s "
          f"({used / wall / os.cpu_count():.0%} of {os.cpu_count()} CPUs); ended processes {sum(by_comm.values()):.0f} CPU s")
    print(f"ansible-playbook: {main_cpu:.0f} s in {mains} main processes, {fork_cpu:.0f} s in {forks} forked from them "
          f"(task workers, mitogen's multiplexers) = {(main_cpu + fork_cpu) / max(used, 1):.0%} of the busy CPU")
    print(f"test hosts (their cgroups): {sum(per_host.values()):.0f} s = {sum(per_host.values()) / max(used, 1):.0%} "
          "of the busy CPU; the most: " + (", ".join(f"{n} {c:.0f}" for n, c in per_host.most_common(8)) or "none"))
    print(f"top {top} commands by CPU (s; * forked without exec):")
    for comm, cpu in by_comm.most_common(top):
        print(f"  {cpu:8.1f}  {comm}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--top", type=int, default=25, help="commands listed by CPU")
    ap.add_argument("--schedule", help="the run's TEST_SCHEDULE_FILE: CPU per test file too")
    ap.add_argument("--th-id", type=int, default=int(os.environ.get("TH_ID", "1")),
                    help="the run's TH_ID (the first worker's harness instance)")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- the command to run")
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        ap.error("no command (after --)")
    libc = ctypes.CDLL(None, use_errno=True)
    temp = [tempfile.mkstemp(prefix="cpu-profile-", suffix=suffix) for suffix in (".acct", ".parts")]
    acct_file, parts_file = (Path(name) for dummy, name in temp)
    try:
        for fd, dummy in temp:
            os.close(fd)
        if libc.acct(str(acct_file).encode()) != 0:
            sys.exit(f"cpu_profile: acct(2) failed: {os.strerror(ctypes.get_errno())} (root?)")
        hosts = None
        try:
            hosts = HostSampler()
            hosts.start()
            t0, b0 = time.monotonic(), busy()
            rc = subprocess.run(cmd, check=False, env=dict(os.environ, RUN_PARTS_FILE=str(parts_file))).returncode
        finally:
            libc.acct(None)
            if hosts is not None and hosts.is_alive():
                hosts.stop.set()
                hosts.join()
        hosts.sample()
        wall, used = time.monotonic() - t0, busy() - b0
        procs, parts = list(records(acct_file)), read_parts(parts_file)
    finally:
        acct_file.unlink()
        parts_file.unlink()
    report(rc, wall, used, procs, hosts.used, a.top)
    if a.schedule and Path(a.schedule).is_file():
        files = per_test_file(procs, hosts.used, a.schedule, a.th_id, parts)
        print(f"CPU per test file and per part of tests/run_all.sh, in parentheses (s: its processes on the controller "
              f"+ its test hosts; the rest of the busy CPU, {used - sum(c + h for c, h in files.values()):.0f} s: "
              "processes still running at the end, or of none of them):")
        for f, (c, h) in sorted(files.items(), key=lambda kv: -sum(kv[1])):
            print(f"  {c + h:7.0f} = {c:6.0f} + {h:6.0f}  {f}")
    return rc


if __name__ == "__main__":
    sys.exit(main())

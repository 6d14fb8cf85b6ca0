"""A test run's schedule from TEST_SCHEDULE_FILE (tests/integration/conftest.py writes it): per
pytest-xdist worker, the test files it ran in order with their start and end (seconds from the
first test's start), and how long it sat idle before the last worker finished; with the CPU log
(tests/run_all.sh: a time and /proc/stat's cpu line every 10 s), how busy the machine was while the
scenarios ran, before and after the checks beside them were done (the time of the file they leave).

    python tests/harness/schedule.py <schedule.jsonl> [<cpu.log> [<checks-done file>]]
    python tests/harness/schedule.py --sample <cpu.log>     # writes the CPU log until killed
"""
import json
import os
import sys
import time


def read(path):
    files = {}   # (worker, file) -> [start, end]
    for line in open(path, encoding="utf-8"):
        e = json.loads(line)
        span = files.setdefault((e["worker"], e["test"].split("::")[0]), [e["t"], e["t"]])
        span[0], span[1] = min(span[0], e["t"]), max(span[1], e["t"])
    return files


def worker_pids(path):
    """{PID: worker} of the workers that wrote the schedule (lines that carry a pid)."""
    return {e["pid"]: e["worker"] for e in map(json.loads, open(path, encoding="utf-8")) if "pid" in e}


def ticks(cpu_line):
    """(busy, total) clock ticks in /proc/stat's cpu line: user nice system idle iowait irq softirq
    steal (guest time is in user's already); idle and iowait are not in use."""
    t = [int(x) for x in cpu_line.split()[1:9]]
    return sum(t) - t[3] - t[4], sum(t)


def busy(cpu_log, start, end):
    """The share of the machine's CPU time in use between start and end, or None."""
    samples = []
    for line in open(cpu_log, encoding="utf-8"):
        t, cpu_line = line.split(" ", 1)
        if start <= float(t) <= end:
            samples.append(ticks(cpu_line))
    if len(samples) < 2:
        return None
    used, total = samples[-1][0] - samples[0][0], samples[-1][1] - samples[0][1]
    return used / total if total else None


def sample(cpu_log, every=10):
    """Append a time and /proc/stat's cpu line to cpu_log every `every` seconds until killed: one
    process, so that killing it leaves nothing running (a shell loop's sleep outlived the loop by up
    to 10 s, holding the run's output open after tests/run_all.sh had ended)."""
    with open(cpu_log, "a", encoding="utf-8") as out:
        while True:
            with open("/proc/stat", encoding="utf-8") as stat:
                out.write(f"{time.time():.0f} {stat.readline()}")
            out.flush()
            time.sleep(every)


def main(path, cpu_log=None, checks_done=None):
    files = read(path)
    if not files:
        return
    t0 = min(s for s, dummy in files.values())
    last = max(e for dummy, e in files.values())
    print(f"the scenarios' schedule ({last - t0:.0f} s from the first test to the last):")
    for worker in sorted({w for w, dummy in files}):
        mine = sorted((s, e, f) for (w, f), (s, e) in files.items() if w == worker)
        done = max(e for dummy, e, dummy2 in mine)
        print(f"  {worker}: idle for the last {last - done:.0f} s")
        for s, e, f in mine:
            print(f"    {s - t0:7.0f} {e - t0:7.0f} {e - s:6.0f} s  {f.rsplit('/', 1)[-1]}")
    if cpu_log and os.path.exists(cpu_log):
        lifted = os.path.getmtime(checks_done) if checks_done and os.path.exists(checks_done) else None
        spans = [("the whole", t0, last)]
        if lifted and t0 < lifted < last:
            spans += [("until the checks were done", t0, lifted), ("after", lifted, last)]
        for name, a, b in spans:
            share = busy(cpu_log, a, b)
            if share is not None:
                print(f"  the machine's CPU busy {share:.0%} over {name} ({b - a:.0f} s)")


if __name__ == "__main__":
    if sys.argv[1] == "--sample":
        sample(sys.argv[2])
    else:
        main(*sys.argv[1:4])

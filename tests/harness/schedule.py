"""A test run's schedule from TEST_SCHEDULE_FILE (tests/integration/conftest.py writes it): per
pytest-xdist worker, the test files it ran in order with their start and end (seconds from the
first test's start), and how long it sat idle before the last worker finished.

    python tests/harness/schedule.py <schedule.jsonl>
"""
import json
import sys


def read(path):
    files = {}   # (worker, file) -> [start, end]
    for line in open(path, encoding="utf-8"):
        e = json.loads(line)
        span = files.setdefault((e["worker"], e["test"].split("::")[0]), [e["t"], e["t"]])
        span[0], span[1] = min(span[0], e["t"]), max(span[1], e["t"])
    return files


def main(path):
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


if __name__ == "__main__":
    main(sys.argv[1])

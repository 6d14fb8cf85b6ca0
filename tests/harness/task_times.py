"""Where a test run's time went: the task wall times tests/harness/callbacks/task_times.py
appended to a file (TKE_TASK_TIMES), summed per test file and per task.

    python tests/harness/task_times.py FILE [N]
"""
from __future__ import annotations

import collections
import json
import sys


def summary(rows, top=25):
    by_file, by_task = collections.Counter(), collections.Counter()
    count = collections.Counter()
    for r in rows:
        test_file = r["test"].split("::")[0].rsplit("/", 1)[-1] or "(no test)"
        by_file[test_file] += r["seconds"]
        key = f"{r['playbook']}: {r['task']}"
        by_task[key] += r["seconds"]
        count[key] += 1
    lines = [f"task time per test file (s, summed over its playbook runs; {len(rows)} tasks):"]
    lines += [f"{s:8.1f}  {f}" for f, s in by_file.most_common()]
    lines += [f"the {top} tasks that took longest over the whole run (s, runs):"]
    lines += [f"{s:8.1f} {count[k]:5d}  {k}" for k, s in by_task.most_common(top)]
    return "\n".join(lines)


def main(argv):
    with open(argv[1], encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    print(summary(rows, int(argv[2]) if len(argv) > 2 else 25))


if __name__ == "__main__":
    main(sys.argv)

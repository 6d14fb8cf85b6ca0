"""Where a test run's playbook time went: the rows bench/callback_plugins/task_times.py appended to
TASK_TIMES_FILE (each task's wall time per host), summed per test file and per task.

    python tests/harness/task_times.py FILE [N]
"""
from __future__ import annotations

import collections
import json
import sys


def summary(rows, top=25):
    by_file, by_task, count = collections.Counter(), collections.Counter(), collections.Counter()
    for r in rows:
        by_file[r.get("test", "").split("::")[0].rsplit("/", 1)[-1] or "(no test)"] += r["seconds"]
        key = f"{r.get('playbook', '')}: {r['task']}"
        by_task[key] += r["seconds"]
        count[key] += 1
    lines = [f"task time per test file (s, summed over hosts and playbook runs; {len(rows)} host-tasks):"]
    lines += [f"{s:8.1f}  {f}" for f, s in by_file.most_common()]
    lines += [f"the {top} tasks that took longest over the whole run (s summed over hosts, host-tasks):"]
    lines += [f"{s:8.1f} {count[k]:6d}  {k}" for k, s in by_task.most_common(top)]
    return "\n".join(lines)


def main(argv):
    with open(argv[1], encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    print(summary(rows, int(argv[2]) if len(argv) > 2 else 25))


if __name__ == "__main__":
    main(sys.argv)

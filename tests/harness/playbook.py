"""Run ansible-playbook from this checkout and read its PLAY RECAP."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent.parent
RECAP = re.compile(r"^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)"
                   r"\s+skipped=(\d+)\s+rescued=(\d+)\s+ignored=(\d+)", re.M)
FIELDS = ("ok", "changed", "unreachable", "failed", "skipped", "rescued", "ignored")


@dataclass
class PlaybookRun:
    argv: list
    rc: int
    output: str

    @property
    def stats(self) -> dict[str, dict[str, int]]:
        """Per-host counters from the last PLAY RECAP of the output."""
        part = self.output.rsplit("PLAY RECAP", 1)[-1] if "PLAY RECAP" in self.output else ""
        return {m[0]: dict(zip(FIELDS, map(int, m[1:]))) for m in RECAP.findall(part)}

    def total(self, counter: str) -> int:
        return sum(h[counter] for h in self.stats.values())

    def changed_hosts(self) -> dict[str, int]:
        return {h: s["changed"] for h, s in self.stats.items() if s["changed"]}

    def changed_tasks(self) -> list[str]:
        """'TASK name: changed: [host]' for every change the output reports."""
        out, task = [], ""
        for line in self.output.splitlines():
            if line.startswith("TASK ["):
                task = line.rstrip("* ")
            elif line.startswith("changed: ["):
                out.append(f"{task}: {line.split(' =>')[0]}")
        return out

    def phase_hosts(self) -> dict[str, list[str]]:
        """phase -> the hosts it ran on, from the journal's banners ("phase 5/15 host_init: running
        on h1, h2; ..."; the YAML callback folds long lines)."""
        flat = " ".join(self.output.split())
        return {m[0]: [h for h in m[1].split(", ") if h != "no host"]
                for m in re.findall(r"phase \d+/\d+ (\S+): running on (no host|[\w.-]+(?:, [\w.-]+)*)", flat)}

    def host_tasks(self, host: str) -> list[str]:
        """The names of the tasks that ran on host (ok or changed there, delegated ones included),
        in order ("offline_pot.tke.host_init : Install chrony")."""
        out, task = [], ""
        for line in self.output.splitlines():
            if line.startswith("TASK ["):
                task = line[len("TASK ["):].rstrip("* ").removesuffix("]")
            elif re.match(rf"(ok|changed): \[{re.escape(host)}(\]| ->)", line):
                out.append(task)
        return out

    def task_names(self) -> set[str]:
        """The names of the tasks the run went through (ran, skipped or changed on some host)."""
        return {line.rstrip("* ") for line in self.output.splitlines() if line.startswith("TASK [")}

    def explain(self) -> str:
        changed = "\n".join(self.changed_tasks()) or "(none)"
        return (f"$ {' '.join(map(str, self.argv))}\nrc={self.rc}\nchanged tasks:\n{changed}\n"
                f"--- output (tail) ---\n{self.output[-12000:]}")


def ansible_bin(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def run_playbook(playbook: str | Path, inventory: str | Path, *args: str,
                 extra_vars: dict | None = None, env: dict | None = None,
                 timeout: int = 1800) -> PlaybookRun:
    argv = [ansible_bin("ansible-playbook"), str(playbook), "-i", str(inventory), *args]
    if extra_vars:
        argv += ["-e", json.dumps(extra_vars)]
    # the scenarios read Ansible's default output (TASK [...], changed: [...], PLAY RECAP, the phase
    # banners as YAML results), not the checkout's progress display: forced here, unless env says
    full_env = dict(os.environ, ANSIBLE_CONFIG=str(TOP / "ansible.cfg"), ANSIBLE_FORCE_COLOR="0",
                    ANSIBLE_NOCOLOR="1", PYTHONUNBUFFERED="1", ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default",
                    ANSIBLE_CALLBACK_RESULT_FORMAT="yaml")
    if os.environ.get("TASK_TIMES_FILE"):   # tests/run_all.sh: where the run's time goes (task_times.py)
        full_env.update(ANSIBLE_CALLBACK_PLUGINS=str(TOP / "bench" / "callback_plugins"),
                        ANSIBLE_CALLBACKS_ENABLED="task_times")
    full_env.update(env or {})
    res = subprocess.run(argv, cwd=TOP, env=full_env, text=True, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, timeout=timeout, check=False)
    return PlaybookRun(argv, res.returncode, res.stdout)


NO_RESUME = ("-e", '{"tke_resume": false}')


def report_changes(run: PlaybookRun) -> tuple[Path, list[tuple[str, str, str]]]:
    """The run report the run wrote (its path, as the run printed it: docs/install.md, "The run report")
    and the rows of its table of what the run changed on the hosts: (host, phase, the state probes it
    changed), (host, "-", "nothing") or (host, "-", "not read ...")."""
    m = re.search(r"run report: (\S+\.html)", run.output)
    assert m, run.explain()
    text = Path(m.group(1)).read_text(encoding="utf-8")
    table = text.split('class="changes"', 1)[1].split("</table>", 1)[0] if 'class="changes"' in text else ""
    return Path(m.group(1)), re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td></tr>", table)


def timed(name: str, *args, times: dict | None = None, **kw) -> PlaybookRun:
    """run_playbook, timed: the seconds are on the run (run.seconds), in times[name] when a dict is
    given (a scenario's table of timings), and printed as a [timing] line (pytest -s shows it)."""
    start = time.monotonic()
    run = run_playbook(*args, **kw)
    run.seconds = round(time.monotonic() - start, 1)
    if times is not None:
        times[name] = run.seconds
    print(f"\n[timing] {name}: {run.seconds} s")
    return run


def inventory_hosts(inventory, *args: str) -> set[str]:
    """The hosts a run with these arguments targets: the inventory's, narrowed by --limit/-l."""
    limit = []
    for i, a in enumerate(args):
        if a in ("--limit", "-l") and i + 1 < len(args):
            limit = ["--limit", args[i + 1]]
        elif a.startswith("--limit="):
            limit = [a]
    res = subprocess.run([ansible_bin("ansible-inventory"), "-i", str(inventory), "--list", *limit],
                         cwd=TOP, text=True, capture_output=True, check=True,
                         env=dict(os.environ, ANSIBLE_CONFIG=str(TOP / "ansible.cfg")))
    data = json.loads(res.stdout)
    return {h for g, v in data.items() if g != "_meta" for h in v.get("hosts", [])}


def converge_twice(playbook, inventory, *args, resume: bool = False, hosts: set[str] | None = None,
                   **kw) -> tuple[PlaybookRun, PlaybookRun]:
    """Converge, converge again; the second run must change nothing and fail nowhere, and both
    must have gone through every targeted host (hosts: by default the inventory's, narrowed by
    --limit), so a host that silently dropped out cannot pass for converged.

    By default the install journal's resume is off (tke_resume=false), so the second run really
    runs every task again instead of skipping phases the journal has done: that is what proves
    the roles idempotent. Resume itself is tested in test_install_e2e.py (after a failing hook) and
    test_install_orchestration.py (phases done, inputs changed).
    """
    want = set(hosts) if hosts is not None else inventory_hosts(inventory, *args)
    if not resume:
        args = (*args, *NO_RESUME)
    first = run_playbook(playbook, inventory, *args, **kw)
    assert first.rc == 0, first.explain()
    second = run_playbook(playbook, inventory, *args, **kw)
    assert second.rc == 0, second.explain()
    for run in (first, second):
        missing = want - set(run.stats)
        assert not missing, f"hosts missing from the PLAY RECAP: {sorted(missing)}\n" + run.explain()
    assert second.changed_hosts() == {}, "second run changed something:\n" + second.explain()
    return first, second

"""The collection's strategy (plugins/strategy/mitogen_linear.py) leaves the CPUs to the kernel's
scheduler: mitogen's own policy pins a run's multiplexer to the first CPU and, on a machine of 2 or 3
CPUs, every task worker and the processes it starts to the second, so runs side by side (CI, AWX)
queue on one CPU (docs/install.md, "Speed"). A run on this machine, no test host needed: a task's
worker (a lookup is read in the worker) and the interpreter that runs its modules may use every CPU
this test may use."""
import os
import re
import sys

import pytest
import yaml

from harness.playbook import run_playbook


def cpus(listed: str) -> set[int]:
    """The CPUs of a Cpus_allowed_list ("0-1,3")."""
    out = set()
    for part in listed.strip().split(","):
        first, dummy, last = part.partition("-")
        out |= set(range(int(first), int(last or first) + 1))
    return out


def test_no_process_of_a_run_is_pinned_to_a_cpu(tmp_path):
    allowed = os.sched_getaffinity(0)
    if len(allowed) < 2:
        pytest.skip("one CPU: nothing to pin")
    (tmp_path / "hosts").write_text(f"localhost ansible_connection=local ansible_python_interpreter={sys.executable}\n")
    (tmp_path / "play.yml").write_text(yaml.safe_dump([{"hosts": "all", "gather_facts": False, "tasks": [
        {"name": "The CPUs of the module's process", "ansible.builtin.command": "grep Cpus_allowed_list /proc/self/status",
         "changed_when": False},
        {"name": "The CPUs of the task's worker",
         "ansible.builtin.debug": {"msg": "worker {{ lookup('ansible.builtin.pipe', 'grep Cpus_allowed_list /proc/$PPID/status') }}"}},
    ]}]))
    run = run_playbook(tmp_path / "play.yml", tmp_path / "hosts", "-v")
    assert run.rc == 0, run.explain()
    assert "mitogen cannot be imported" not in run.output, run.explain()
    # (the YAML callback writes the tab as \t)
    module = re.search(r"stdout: \"?Cpus_allowed_list:(?:\\t|\s)+([\d,-]+)", run.output)
    worker = re.search(r"msg: \"?worker Cpus_allowed_list:(?:\\t|\s)+([\d,-]+)", run.output)
    assert module and worker, run.explain()
    assert cpus(module.group(1)) == allowed and cpus(worker.group(1)) == allowed, (module.group(1), worker.group(1))

"""Hook playbooks of the install scenarios: each appends "<name> <timestamp>" to /root/hooks.log on
one host, so a test can read which hooks ran and in what order."""
from __future__ import annotations

from pathlib import Path

MARKER = """\
- name: hook {name}
  hosts: {host}
  gather_facts: false
  tasks:
    - name: Marker with a timestamp
      ansible.builtin.shell: echo "{name} $(date +%s.%N)" >> /root/hooks.log
      changed_when: true
"""
# stands for an operator's check that needs the running cluster: it fails until a flag file
# exists on the controller (the operator "fixed" it)
BROKEN_UNTIL_FIXED = """\
- name: hook {name}
  hosts: {host}
  gather_facts: false
  tasks:
    - name: The operator's check
      ansible.builtin.stat:
        path: {flag}
      delegate_to: localhost
      register: fixed
    - name: Not fixed yet
      ansible.builtin.fail:
        msg: the {name} hook is broken
      when: not fixed.stat.exists
    - name: Marker with a timestamp
      ansible.builtin.shell: echo "{name} $(date +%s.%N)" >> /root/hooks.log
      changed_when: true
"""


def write(hooks_dir: Path, host: str, markers: list[str], broken: dict[str, Path]) -> None:
    """markers: hook names ("pre-install", "precheck/before") that only leave a marker; broken:
    hook name -> the flag file that fixes it."""
    for name in [*markers, *broken]:
        path = hooks_dir / f"{name}.yml"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = BROKEN_UNTIL_FIXED.format(name=name, host=host, flag=broken[name]) if name in broken \
            else MARKER.format(name=name, host=host)
        path.write_text(text)


def log(th, host: str) -> list[tuple[str, float]]:
    """(hook name, timestamp) in the order the hooks ran on host."""
    words = th.ssh(host, "cat /root/hooks.log 2>/dev/null || true").stdout.split()
    return [(words[i], float(words[i + 1])) for i in range(0, len(words), 2)]

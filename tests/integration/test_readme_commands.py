"""README.md's two commands, as README writes them (issue 22: the first one broke on a fresh
clone and nothing noticed).

- The test command is what CI runs: `.ci/run` must call exactly README's second command.
- The sandbox command runs on a clean clone of this checkout's HEAD (git clone: nothing of this
  working tree's caches or state), as root, with no sudo on the machine: it must bring the
  sandbox's three hosts up and install every phase; run again, it must change nothing; then the
  sandbox is torn down with README's own tear-down command.
  The clone shares this run's harness cache (TH_CACHE: the Debian rootfs, the hosts' apt
  repository and SSH key, all built by the same harness; rebuilding them would only repeat
  debootstrap) and virtualenv (OPT_VENV, made from the same requirements files); everything else
  (the fixture site pack, its signing key, the controller's site state) the command makes itself
  in the clone. The sandbox is harness instance 0, which no pytest worker uses.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess

import pytest

from harness.playbook import TOP, PlaybookRun

README = TOP / "README.md"


def readme_commands() -> list[str]:
    """The commands of README's "The two commands" section: its fenced blocks, in order."""
    text = README.read_text()
    section = text.split("## The two commands", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```\n(.*?)```", section, re.S)]


def test_readme_has_two_commands_and_ci_runs_the_second():
    cmds = readme_commands()
    assert len(cmds) == 2, cmds
    for cmd in cmds:
        assert "\n" not in cmd and not cmd.startswith("sudo "), f"typed as root, one line: {cmd!r}"
    ci = [line for line in (TOP / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.lstrip().startswith(("#", "set ", "cd "))]
    assert ci and ci[-1].split() == ["exec", *shlex.split(cmds[1])], ci


def _run(cmd: str, cwd, env, timeout: int) -> PlaybookRun:
    res = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=timeout, check=False)
    return PlaybookRun(argv=[cmd], rc=res.returncode, output=res.stdout + res.stderr)


@pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox needs root (systemd-nspawn, bridges)")
def test_sandbox_command_from_a_clean_clone(tmp_path):
    sandbox = readme_commands()[0]
    assert shutil.which("sudo") is None or os.environ.get("CI") != "true", "CI's machine has no sudo"
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(TOP), str(clone)], check=True)
    env = {**os.environ, "TH_CACHE": str(TOP / ".cache" / "testhosts"),
           "OPT_VENV": str(TOP / ".cache" / "venv")}
    for var in ("TH_ID", "ANSIBLE_CONFIG", "PYTHONPATH", "PYTEST_XDIST_WORKER"):
        env.pop(var, None)
    down = re.search(r"`(bash tests/sandbox\.sh down)`", README.read_text())
    assert down, "README says how to tear the sandbox down"
    try:
        first = _run(sandbox, clone, env, timeout=1800)
        assert first.rc == 0, first.output[-6000:]
        assert "sandbox: ansible-playbook install.yml -i inventories/sandbox/hosts.yml exited 0" in first.output
        assert {"h1", "h2", "h3"} <= set(first.stats), first.output[-3000:]
        assert first.total("failed") == 0 and first.total("unreachable") == 0
        # every phase ran on its hosts (the journal's banners): a fresh sandbox is a whole install
        ran = first.phase_hosts()
        for phase in ("precheck", "offline", "pki", "control_plane", "nodes", "network"):
            assert ran.get(phase), f"{phase} did not run: {sorted(ran)}"
        assert sorted(ran["nodes"]) == ["h2", "h3"]
        # the cluster works: the health step read every Node from the API and found it Ready
        assert "every node Ready: h1, h2, h3" in first.output, first.output[-4000:]
        second = _run(sandbox, clone, env, timeout=900)
        assert second.rc == 0, second.output[-6000:]
        assert second.total("changed") == 0, second.explain()[-4000:]
    finally:
        gone = _run(down.group(1), clone, env, timeout=300)
    assert gone.rc == 0 and "sandbox torn down" in gone.output, gone.output[-2000:]
    leftover = subprocess.run(["ip", "link", "show", "thbr0"], capture_output=True, text=True, check=False)
    assert leftover.returncode != 0, "the sandbox's bridge is gone"

"""A real browser for the tests: Debian's headless Chromium (tests/run_all.sh installs it), run as
root on the controller with the flags that keep it off the network this machine does not have
(no background networking, no component updates, no sync, no QUIC) and a fresh profile.

    dom(url) -> the DOM after the page loaded (--dump-dom)
    screenshot(url, path, width, height) -> path of a PNG of the page (--screenshot)
    console_messages(url) -> what the page wrote to the console (uncaught errors among them)
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--force-color-profile=srgb", "--hide-scrollbars"]


def chromium() -> str:
    path = shutil.which("chromium")
    if not path:
        raise RuntimeError("no chromium on this machine: tests/run_all.sh installs Debian's (apt-get install chromium)")
    return path


def _run(args, timeout=120):
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True,
                              text=True, timeout=timeout, check=False)


def dom(url: str) -> str:
    run = _run(["--dump-dom", url])
    if run.returncode != 0:
        raise RuntimeError(f"chromium --dump-dom {url}: exit {run.returncode}: {run.stderr[-2000:]}")
    return run.stdout


def screenshot(url: str, path: str, width: int = 1280, height: int = 2000) -> str:
    run = _run([f"--screenshot={path}", f"--window-size={width},{height}", url])
    if run.returncode != 0:
        raise RuntimeError(f"chromium --screenshot {url}: exit {run.returncode}: {run.stderr[-2000:]}")
    return path


def console_messages(url: str) -> list[str]:
    """The page's console lines, uncaught errors included (Chromium logs every one as
    `INFO:CONSOLE` with --enable-logging=stderr, whatever its level)."""
    run = _run(["--enable-logging=stderr", "--v=0", "--dump-dom", url])
    return [line for line in run.stderr.splitlines() if ":CONSOLE" in line]

"""Every module and plugin of the collection renders with ansible-doc (DOCUMENTATION is valid)."""
import os
import subprocess
import sys
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
KINDS = {"modules": "module", "filter": "filter", "action": None, "callback": "callback",
         "lookup": "lookup", "test": "test", "strategy": "strategy"}


def plugins():
    for folder, kind in KINDS.items():
        for f in sorted((TOP / "plugins" / folder).glob("*.py")):
            if f.name.startswith("_") or kind is None:
                continue
            if kind == "filter":
                # a filter file may hold several filters, each documented in its own file
                # or in the file's DOCUMENTATION under its name
                name = f.stem
                text = f.read_text()
                for line in text.splitlines():
                    if line.startswith("name:"):
                        name = line.split(":", 1)[1].strip()
                        break
                yield kind, name
            else:
                yield kind, f.stem


def main():
    bad = 0
    env = dict(os.environ, ANSIBLE_CONFIG=str(TOP / "ansible.cfg"))
    for kind, name in plugins():
        res = subprocess.run([str(Path(sys.executable).parent / "ansible-doc"), "-t", kind,
                              f"offline_pot.tke.{name}"], cwd=TOP, env=env, capture_output=True, text=True,
                             check=False)
        if res.returncode != 0 or "WARNING" in res.stderr or "ERROR" in res.stderr:
            bad += 1
            print(f"ansible-doc -t {kind} offline_pot.tke.{name}: {res.stderr.strip()}")
        else:
            print(f"ok {kind} offline_pot.tke.{name}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

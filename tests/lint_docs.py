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


def ansible_doc(kind, names, env):
    return subprocess.run([str(Path(sys.executable).parent / "ansible-doc"), "-t", kind,
                           *[f"offline_pot.tke.{n}" for n in names]], cwd=TOP, env=env, capture_output=True,
                          text=True, check=False)


def clean(res, kind, names):
    """ansible-doc exited 0, said no WARNING or ERROR, and rendered a page for each of names."""
    shown = {line.split()[2].replace("\x1b[1m", "").replace("\x1b[0m", "") for line in res.stdout.splitlines()
             if line.startswith(f"> {kind.upper()} ") and len(line.split()) > 2}
    return (res.returncode == 0 and "WARNING" not in res.stderr and "ERROR" not in res.stderr
            and shown >= {f"offline_pot.tke.{n}" for n in names})


def main():
    """One ansible-doc per plugin type (about 0.4 s of CPU each, against one per plugin); a type
    whose run is not clean is rendered plugin by plugin to name the ones at fault."""
    bad = 0
    env = dict(os.environ, ANSIBLE_CONFIG=str(TOP / "ansible.cfg"))
    by_kind = {}
    for kind, name in plugins():
        by_kind.setdefault(kind, []).append(name)
    for kind, names in by_kind.items():
        if clean(ansible_doc(kind, names, env), kind, names):
            print("\n".join(f"ok {kind} offline_pot.tke.{name}" for name in names))
            continue
        for name in names:
            res = ansible_doc(kind, [name], env)
            if clean(res, kind, [name]):
                print(f"ok {kind} offline_pot.tke.{name}")
            else:
                bad += 1
                print(f"ansible-doc -t {kind} offline_pot.tke.{name}: {res.stderr.strip() or 'no page rendered'}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Ansible's linear strategy through mitogen, when it is installed."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: mitogen_linear
short_description: The linear strategy, with one Python interpreter per host kept for the whole run (mitogen)
version_added: 0.1.0
author:
  - offline_pot.tke developers (!UNKNOWN)
description:
  - Ansible's C(linear) strategy (every task on every host before the next task), run through
    mitogen for Ansible (U(https://mitogen.networkgenomics.com/ansible_detailed.html)), which keeps
    one connection and one Python interpreter per host for the whole run and runs each module in
    it, instead of starting a new Python and unpacking the module for every task on every host.
  - On this collection's install it halves the hosts' CPU time and shortens the install by about a
    fifth (docs/install.md, "Speed"); results, check mode, diff, C(no_log) and the journal's
    module logging are unchanged.
  - "mitogen's CPU pinning is off (it put every run's task workers on one CPU, so playbooks run side
    by side queued there): the kernel's scheduler places the processes."
  - "mitogen's scans of what a module imports, before it sends the module to a host, read each file
    once per run, and take the code from the bytecode cache Python's imports keep (C(__pycache__),
    checked as an import checks it; none is written) when there is one for the file: mitogen compiled
    every file it scanned from its source, the C(ansible.module_utils) ones again for every module
    (about 40 ms of controller CPU per module a run uses). The modules found and sent are the same."
  - Used for connections of type C(ssh) and C(local); a host reached otherwise (C(paramiko)) runs
    as with C(linear).
  - When the C(mitogen) Python package cannot be imported on the controller it is the plain
    C(linear) strategy, with a warning saying why.
  - "Enable it: C(strategy = offline_pot.tke.mitogen_linear) in the C([defaults]) section of
    C(ansible.cfg) (the checkout's ansible.cfg does), or C(ANSIBLE_STRATEGY=offline_pot.tke.mitogen_linear)
    for one run; C(ANSIBLE_STRATEGY=linear) turns it off."
requirements:
  - mitogen (requirements.txt; the site pack's controller wheels carry it)
"""

import collections
import functools
import importlib.machinery
import importlib.util

from ansible.plugins.strategy.linear import StrategyModule as LinearStrategy
from ansible.utils.display import Display

try:
    import ansible_mitogen.affinity
    import ansible_mitogen.module_finder
    import mitogen.master
    from ansible_mitogen.strategy import StrategyMixin
    MITOGEN_ERROR = None
except ImportError as exc:   # mitogen missing (or broken): the plain linear strategy, said once per run
    StrategyMixin = None
    MITOGEN_ERROR = exc


class _CachedCode(importlib.machinery.SourceFileLoader):
    """A .py file's code from the bytecode cache Python's imports keep, as an import takes it (the
    cache file's record of the source's mtime and size must match), never writing a cache file: where
    there is none, or it is of another version of the file, the file is compiled."""

    def set_data(self, path, data, *, _mode=0o666):   # pylint: disable=unused-argument
        """No cache file written (not in the collection's or a role's folders, where Ansible writes none)."""


def code_of(source, filename, mode, *args, **kwargs):
    """compile(source, filename, mode, ...) as called from a module with no __future__ import that
    changes compiling (mitogen.master), from the bytecode cache of the .py file `filename`
    (_CachedCode) when source is that file's whole text."""
    if args or kwargs:
        return compile(source, filename, mode, *args, **kwargs)
    if mode == "exec" and isinstance(source, (bytes, str)) and isinstance(filename, str) and filename.endswith(".py"):
        try:
            with open(filename, "rb") as f:
                whole = f.read() == (source if isinstance(source, bytes) else source.encode("utf-8"))
        except (OSError, UnicodeError):
            whole = False
        if whole:
            return file_code(filename)
    return compile(source, filename, mode, 0, True)


def file_code(path):
    """The code of the file at path, from its bytecode cache when that is of the file (_CachedCode)."""
    return _CachedCode("scanned", path).get_code("scanned")


def module_utils_scan(walk_imports, prefix):
    """A scan(module_name, module_path, search_path) as ansible_mitogen.module_finder's (mitogen 0.3:
    the (name, path, is_package) of every module under `prefix` the module imports, directly or
    through those), with each file's imports read once for the process (mitogen compiled every
    module_utils file again for each module it scanned: on this collection's 32 modules 1.27 s of CPU
    against 0.06 s, the same lists) and each name's look-up made once. A run reads files that do not
    change under it. walk_imports and prefix: the module_finder's."""
    @functools.lru_cache(maxsize=None)
    def imports_of(path):
        return tuple(walk_imports(file_code(path), prefix))

    @functools.lru_cache(maxsize=None)
    def found(name, locations):
        """(origin, its submodule locations or None) of the module `name` looked for in locations,
        as mitogen looks (every finder of sys.meta_path), or None when it has no file."""
        spec = importlib.util._find_spec(name, list(locations))   # pylint: disable=protected-access
        if spec is None or spec.origin is None:
            return None
        subs = spec.submodule_search_locations
        return spec.origin, (None if subs is None else tuple(subs))

    def scan(module_name, module_path, search_path):   # pylint: disable=unused-argument
        specs = {prefix: (None, tuple(search_path))}
        queue = collections.deque([module_path])
        while queue:
            for name in imports_of(queue.popleft()):
                if name in specs:
                    continue
                parent = specs[name.rpartition(".")[0]]
                specs[name] = found(name, parent[1]) if parent and parent[1] else None
                if specs[name]:
                    queue.append(specs[name][0])
        del specs[prefix]
        return sorted((name, spec[0], spec[1] is not None) for name, spec in specs.items() if spec)

    return scan


if StrategyMixin is not None:
    # (the multiplexer, where mitogen scans, is forked from this process at the run's start)
    ansible_mitogen.module_finder.scan = module_utils_scan(ansible_mitogen.module_finder.walk_imports,
                                                           ansible_mitogen.module_finder.PREFIX.rstrip("."))
    # the one compile() of mitogen.master: the imports of each module it sends (ModuleFinder's
    # find_related_imports, once per module and run)
    mitogen.master.compile = code_of


class StrategyModule(*((StrategyMixin, LinearStrategy) if StrategyMixin else (LinearStrategy,))):
    """Linear, through mitogen's connections and per-host interpreters when mitogen is installed."""

    def __init__(self, tqm):
        super().__init__(tqm)
        if StrategyMixin is None:
            Display().warning(f"offline_pot.tke.mitogen_linear: mitogen cannot be imported on the controller "
                              f"({MITOGEN_ERROR}; pip install -r requirements.txt): running the plain linear strategy")
        else:
            # no CPU pinning: mitogen's policy pins the multiplexer to the first CPU and the top-level
            # process to the second (on a machine of 2 or 3 CPUs every task worker and its ssh client
            # too), the same CPUs for every run; where playbooks run side by side (AWX, CI, several
            # sites from one controller) they all queue there while the others idle (measured:
            # docs/install.md, "Speed"). The kernel's scheduler places them.
            ansible_mitogen.affinity.policy = ansible_mitogen.affinity.Policy()

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

from ansible.plugins.strategy.linear import StrategyModule as LinearStrategy
from ansible.utils.display import Display

try:
    import ansible_mitogen.affinity
    from ansible_mitogen.strategy import StrategyMixin
    MITOGEN_ERROR = None
except ImportError as exc:   # mitogen missing (or broken): the plain linear strategy, said once per run
    StrategyMixin = None
    MITOGEN_ERROR = exc


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

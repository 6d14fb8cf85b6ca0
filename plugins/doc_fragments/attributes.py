# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Attribute blocks shared by the collection's modules (extends_documentation_fragment).

A module extends one of INFO_MODULE (reads only), CHANGES_NO_DIFF (may write, shows no diff) and
CHANGES_HOST (writes on a difference, shows it), plus ACTION when an action plugin runs it (names as in community.crypto's attributes fragments),
and lists under its own C(attributes) only what differs (C(support), C(details)): ansible-doc
merges each attribute's keys over the fragment's, so the descriptions live here alone.
"""
from __future__ import annotations


class ModuleDocFragment:
    # Reads and reports, never changes anything (on the host or the controller).
    INFO_MODULE = r"""
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details: This action does not modify state.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: N/A
    details: This action does not modify state.
  idempotent:
    description:
      - When run twice in a row outside check mode, with the same arguments, the second invocation indicates no change.
      - This assumes that the system controlled/queried by the module has not changed in a relevant way.
    support: full
"""

    # May write (on the host or the controller), acts on nothing in check mode, shows no diff
    # (a module that differs overrides support/details under its own attributes).
    CHANGES_NO_DIFF = r"""
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
  idempotent:
    description:
      - When run twice in a row outside check mode, with the same arguments, the second invocation indicates no change.
      - This assumes that the system controlled/queried by the module has not changed in a relevant way.
    support: full
"""

    # Changes the host only on a difference, shows it with --diff, acts on nothing in check mode.
    CHANGES_HOST = r"""
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: full
  idempotent:
    description:
      - When run twice in a row outside check mode, with the same arguments, the second invocation indicates no change.
      - This assumes that the system controlled/queried by the module has not changed in a relevant way.
    support: full
"""

    # The module is run by an action plugin of the same name on the controller.
    ACTION = r"""
attributes:
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
"""

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Attribute blocks shared by the collection's modules (extends_documentation_fragment)."""
from __future__ import annotations


class ModuleDocFragment:
    # Reads and reports only: nothing to diff, the same answer every time for the same state.
    READ_ONLY = r"""
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  idempotent:
    support: full
"""

    # Changes the host only on a difference, shows it with --diff, acts on nothing in check mode.
    CHANGES_HOST = r"""
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  idempotent:
    support: full
"""

# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The `bootstrap` script at the root of a site pack: an Ansible controller from the pack alone.

It needs python3 (the version the pack's wheels were fetched for) and nothing from the network:
a virtualenv made without pip (Debian's python3 lacks ensurepip unless python3-venv is
installed), pip run from its own wheel in wheels/, the controller's requirements installed from
wheels/ only (--no-index), every collection tarball of collections/ installed into a collections
path, and an `activate` file that puts both on PATH / ANSIBLE_COLLECTIONS_PATH.
"""
from __future__ import annotations

NAME = "bootstrap"

SCRIPT = r"""#!/bin/sh
# Makes an Ansible controller for this site from the pack alone (no network needed):
#   sh bootstrap [DIR]          DIR defaults to ./controller beside the pack directory
#   . DIR/activate              then ansible-playbook offline_pot.tke.install -i inventory ...
# Needs python3 of a version the pack was built for (manifest.json: contents.controller.python).
# Re-running it is harmless: what is installed already is kept.
set -eu
PACK=$(cd "$(dirname "$0")" && pwd)
DIR=${1:-$(dirname "$PACK")/controller}
PY=${PYTHON:-python3}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
[ -x "$DIR/venv/bin/python" ] || "$PY" -m venv --without-pip "$DIR/venv"
pipwhl=
for w in "$PACK"/wheels/pip-*.whl; do [ -e "$w" ] && pipwhl=$w; done
[ -n "$pipwhl" ] || { echo "bootstrap: no pip wheel in $PACK/wheels" >&2; exit 1; }
PIP_CONFIG_FILE=/dev/null "$DIR/venv/bin/python" "$pipwhl/pip" install -q --disable-pip-version-check \
  --no-index --find-links "$PACK/wheels" "$pipwhl" -r "$PACK/wheels/requirements.txt"
mkdir -p "$DIR/collections"
for c in "$PACK"/collections/*.tar.gz; do
  [ -e "$c" ] || continue
  "$DIR/venv/bin/ansible-galaxy" collection install --offline --force -p "$DIR/collections" "$c" >/dev/null
done
# shellcheck disable=SC2016  # $PATH is expanded when activate is sourced
printf 'export PATH="%s/venv/bin:$PATH"\nexport ANSIBLE_COLLECTIONS_PATH="%s/collections"\n' "$DIR" "$DIR" > "$DIR/activate"
echo "controller ready in $DIR: . $DIR/activate"
"""

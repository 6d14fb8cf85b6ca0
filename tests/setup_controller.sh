#!/usr/bin/env bash
# Controller set-up for the sandbox and the tests, on a fresh Debian 12 machine as root:
# the harness's apt packages and a virtualenv (.cache/venv) with requirements-dev.txt.
# Idempotent and quick when everything is already there.
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${OPT_VENV:-$TOP/.cache/venv}
bash "$TOP/tests/harness/testhosts.sh" deps
stamp=$VENV/.requirements.sha256
want=$(cat "$TOP/requirements.txt" "$TOP/requirements-dev.txt" | sha256sum | cut -c1-64)
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$TOP/requirements-dev.txt"
  echo "$want" > "$stamp"
fi

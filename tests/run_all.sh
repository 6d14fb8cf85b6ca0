#!/usr/bin/env bash
# Every test: lint (yamllint, ansible-lint production profile, ansible-doc of every plugin,
# collection build, ansible-test sanity/units, antsibull-docs), unit tests and integration
# scenarios on real test hosts, in one pytest run.
# Installs what it needs on a fresh Debian 12 machine (as root). Extra arguments go to pytest.
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$TOP"
[ "$(id -u)" = 0 ] || { echo "the tests need root (test hosts are systemd-nspawn containers)" >&2; exit 1; }
t0=$(date +%s)
bash tests/setup_controller.sh
VENV=${OPT_VENV:-$TOP/.cache/venv}
export PATH=$VENV/bin:$PATH ANSIBLE_CONFIG=$TOP/ansible.cfg
echo "== setup done in $(( $(date +%s) - t0 )) s"

echo "== yamllint"; yamllint -s .
echo "== ansible-lint (production profile)"; ansible-lint -q
echo "== ansible-doc renders every plugin"; python tests/lint_docs.py
echo "== collection build"
out=$(mktemp -d); ansible-galaxy collection build --force --output-path "$out" . >/dev/null
ls "$out"/offline_pot-tke-*.tar.gz; rm -rf "$out"

echo "== ansible-test sanity + units, antsibull-docs lint-collection-docs (offline but for the package index)"
bash tests/sanity/run.sh sanity units docs

echo "== pytest (unit + integration on test hosts)"
# belt and braces: whatever ends this script, the test hosts of this run go (by PID, see harness)
export TH_ID=${TH_ID:-1}
trap 'bash tests/harness/testhosts.sh destroy >/dev/null 2>&1 || true' EXIT
# per-test times (setup: the module's fixtures, e.g. a scenario's hosts; call: the test) for every
# test of a second or more, slowest first, so CI time is known per scenario
python -m pytest -p no:cacheprovider --durations=0 --durations-min=1.0 "$@" tests/unit tests/integration
echo "== all tests done in $(( $(date +%s) - t0 )) s"

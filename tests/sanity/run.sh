#!/usr/bin/env bash
# Ansible's own checks of this collection, offline but for the package index:
#   ansible-test sanity --local, ansible-test units --local, antsibull-docs lint-collection-docs.
# ansible-test only runs from a path ending in ansible_collections/<namespace>/<name> (resolved,
# so the collections/ symlink does not do): the tracked files are copied into a temporary tree.
# Usage: tests/sanity/run.sh [sanity|units|docs]...   (default: all three)
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PY=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
steps=("$@"); [ ${#steps[@]} -gt 0 ] || steps=(sanity units docs)

# ansible-test bootstraps pip in each sanity virtualenv with a script it downloads from
# ci-files.testing.ansible.com; tests/sanity/get_pip.py does the same from the package index
pip_version=$(python3 -c 'from ansible_test._internal.python_requirements import get_venv_packages as g
from ansible_test._internal.host_configs import NativePythonConfig as C
print(g(C(version="'"$PY"'"))["pip"])')
cache=$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py
mkdir -p "$(dirname "$cache")"
# (copied under a name of its own and renamed into place: two runs of this script may start at once)
cmp -s "$TOP/tests/sanity/get_pip.py" "$cache" 2>/dev/null \
  || { cp "$TOP/tests/sanity/get_pip.py" "$cache.$$" && mv -f "$cache.$$" "$cache"; }

tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
dest=$tree/ansible_collections/offline_pot/tke
mkdir -p "$dest"
cd "$TOP"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  # tracked and new (not ignored) files, without the collections/ symlink back to the root
  git ls-files -z -c -o --exclude-standard | grep -zv '^collections/' | xargs -0 cp -P --parents -t "$dest"
else
  tar -C "$TOP" --exclude=./.cache --exclude=./collections --exclude=./tests/output -cf - . | tar -C "$dest" -xf -
fi
cd "$dest"
for step in "${steps[@]}"; do
  t0=$(date +%s)
  case $step in
    sanity) ansible-test sanity --local --python "$PY" --color no ;;
    units) ansible-test units --local --python "$PY" --color no ;;
    docs) antsibull-docs lint-collection-docs --plugin-docs . ;;
    *) echo "unknown step $step" >&2; exit 2 ;;
  esac
  echo "== ansible-test $step done in $(( $(date +%s) - t0 )) s"
done

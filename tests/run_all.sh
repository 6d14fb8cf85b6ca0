#!/usr/bin/env bash
# Every test: lint (yamllint, ansible-lint production profile, ansible-doc of every plugin,
# collection build, ansible-test sanity/units, antsibull-docs), unit tests and integration
# scenarios on real test hosts (pytest, the scenarios on parallel workers).
# Installs what it needs on a fresh Debian 12 machine (as root). Extra arguments go to pytest.
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$TOP"
[ "$(id -u)" = 0 ] || { echo "the tests need root (test hosts are systemd-nspawn containers)" >&2; exit 1; }
t0=$(date +%s)
# RUN_PARTS_FILE (bench/cpu_profile.py sets it): each part of the run (this script, a job started
# in the background, a command run in the foreground with in_part), as "<part> <PID> <time>", so
# that the CPU of the processes below it is told as that part's
part() { [ -z "${RUN_PARTS_FILE:-}" ] || echo "$1 $2 $(date +%s)" >> "$RUN_PARTS_FILE"; }
in_part() { # LABEL CMD...: CMD in the foreground (Ctrl-C stops it), its PID named as the part's
  local label=$1; shift
  if [ -z "${RUN_PARTS_FILE:-}" ]; then "$@"; return; fi
  # shellcheck disable=SC2016  # expanded by the inner shell, which then becomes CMD
  bash -c 'echo "$0 $$ $(date +%s)" >> "$RUN_PARTS_FILE"; exec "$@"' "$label" "$@"
}
part "run_all.sh: pytest itself, its workers' own process, and the rest" $$
# Every scenario waits for the test hosts' root filesystem and apt repository (cold: about a minute
# of CPU) and then for the fixture site pack (about half a minute): the first two are built while
# the controller's virtualenv installs, the pack while pytest starts its workers and they boot
# their hosts (a scenario finds each built, or waits for its lock, and builds it itself if a build
# here failed).
in_part "set-up: the harness's apt packages" bash tests/harness/testhosts.sh deps
# The tests' own tools from Debian, installed beside the virtualenv (no apt lock shared with the
# builds above: debootstrap and the repository's chroot have their own): a real browser for the run
# report's test (tests/harness/browser.py), podman with Debian's runc for the execution environment
# image (tests/harness/ee_image.py).
apt_log=$(mktemp --suffix=.apt.log)
( set -e
  command -v chromium >/dev/null && command -v podman >/dev/null && command -v runc >/dev/null && exit 0
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc ) > "$apt_log" 2>&1 &
apt_pid=$!
part "set-up: chromium and podman" $apt_pid
prep_log=$(mktemp --suffix=.prep.log)
( bash tests/harness/testhosts.sh rootfs && bash tests/harness/testhosts.sh repo ) > "$prep_log" 2>&1 &
prep_pid=$!
part "set-up: Debian 12's rootfs and repository" $prep_pid
# and Debian 13's, under a lock of their own (the fixture pack carries Debian 13's packages, fetched
# inside that rootfs; the precheck and mixed-release scenarios start Debian 13 hosts: testhosts.py's extra())
trixie_log=$(mktemp --suffix=.trixie.log)
( export TH_RELEASE=trixie; bash tests/harness/testhosts.sh rootfs && bash tests/harness/testhosts.sh repo ) > "$trixie_log" 2>&1 &
trixie_pid=$!
part "set-up: Debian 13's rootfs and repository" $trixie_pid
# and Debian 12 arm64's (the mixed-release scenario's arm64 worker, run through qemu-user-static;
# its rootfs's packages configure emulated, about 3 minutes of CPU here), then the mixed site's pack
# (the fixture's with Debian 13's packages and arm64's binaries, packages and image manifests)
arm64_log=$(mktemp --suffix=.arm64.log)
( export TH_ARCH=arm64; bash tests/harness/testhosts.sh rootfs && bash tests/harness/testhosts.sh repo ) > "$arm64_log" 2>&1 &
arm64_pid=$!
part "set-up: arm64's rootfs and repository" $arm64_pid
in_part "set-up: the controller's virtualenv" bash tests/setup_controller.sh
wait "$apt_pid" || { cat "$apt_log"; echo "== chromium, podman or runc did not install" >&2; exit 1; }
VENV=${OPT_VENV:-$TOP/.cache/venv}
export PATH=$VENV/bin:$PATH ANSIBLE_CONFIG=$TOP/ansible.cfg
wait "$prep_pid" || { cat "$prep_log"; echo "== the test hosts' root filesystem or repository did not build" >&2; exit 1; }
python tests/harness/fixture_pack.py "$TOP/.cache/fixture-pack/e2e" \
  "$(bash tests/harness/testhosts.sh info | sed -n 's/^TH_REPO=//p')" >> "$prep_log" 2>&1 &
pack_pid=$!
part "set-up: the fixture pack" $pack_pid
echo "== setup done in $(( $(date +%s) - t0 )) s"
# how fast this machine is (run times differ by a third between machines of the same size): one
# core's seconds for a fixed piece of Python, printed so that one run's times can be set against another's
python -c 'import os, time; t = time.process_time(); sum(i * i for i in range(10_000_000)); print(f"== this machine: {os.cpu_count()} CPUs, a 10M-square sum in {time.process_time() - t:.2f} s of CPU")'

# The checks that need no test host run beside the scenarios, at the scenarios' own CPU priority;
# their output is printed after the scenarios', and a failure of either fails the run. The machine is
# busy 99-100 % from the first scenario to the last (tests/harness/schedule.py), so whatever CPU the
# checks take the scenarios give up, and the run's length is the sum either way - except for a
# tail. At nice 19 (stops 58 and 59) they ended 822 and 726 s into two runs on this machine, but in
# both of CI's landings they were starved until the scenarios ended and ended 132 and 100 s after
# them, on one CPU while the other idled. At the same priority they cannot be starved.
checks_log=$(mktemp --suffix=.checks.log)
# when they end (passed or not): tests/harness/schedule.py reports the CPU use before and after
checks_done=$(mktemp -u --suffix=.checks-done)
# Two chains side by side, ansible-test sanity in one and the rest in the other, so that neither
# waits for the other on this 2-CPU machine. Each chain stops at its first failure; both are always
# waited for, so none outlives the run.
sanity_log=$(mktemp --suffix=.sanity.log)
(
  set -euo pipefail
  trap 'touch "$checks_done"' EXIT
  bash tests/sanity/run.sh sanity > "$sanity_log" 2>&1 &
  sanity_pid=$!
  part "checks: ansible-test sanity" $sanity_pid
  (
    set -euo pipefail
    echo "== yamllint"; yamllint -s .
    echo "== ansible-lint (production profile)"; ansible-lint -q
    echo "== ansible-doc renders every plugin"; python tests/lint_docs.py
    echo "== collection build"
    out=$(mktemp -d); ansible-galaxy collection build --force --output-path "$out" . >/dev/null
    ls "$out"/offline_pot-tke-*.tar.gz; rm -rf "$out"
    echo "== ansible-test units, antsibull-docs lint-collection-docs (offline but for the package index)"
    bash tests/sanity/run.sh units docs
  ) &
  rest_pid=$!
  part "checks: lint, docs, build, units" $rest_pid
  rest_rc=0 sanity_rc=0
  wait "$rest_pid" || rest_rc=$?
  wait "$sanity_pid" || sanity_rc=$?
  echo "== ansible-test sanity (offline but for the package index)"
  cat "$sanity_log"
  [ "$rest_rc" = 0 ] || exit "$rest_rc"
  [ "$sanity_rc" = 0 ] || exit "$sanity_rc"
  echo "== checks done in $(( $(date +%s) - t0 )) s"
) > "$checks_log" 2>&1 &
checks_pid=$!

# (the unit tests run in ansible-test units, beside: every file of tests/unit)
echo "== pytest: integration scenarios on test hosts (${TEST_WORKERS:=4} workers, one test file each at a time)"
# how busy the machine is (/proc/stat every 10 s; tests/harness/schedule.py writes and reads it; one
# process with no hold on this script's output, so that nothing of the run outlives it)
cpu_log=$(mktemp --suffix=.cpu.log)
python tests/harness/schedule.py --sample "$cpu_log" </dev/null >/dev/null 2>&1 &
cpu_pid=$!
# Worker gwN runs its files on harness instance TH_ID+N (tests/integration/conftest.py). The files
# are listed longest first (their times in the last full run, measured 2026-11-29: upgrade 2038 s,
# install_e2e 1382 s, network 992 s ... mixed_releases 460 s ... precheck 78 s ... execution_environment 8 s;
# mixed_releases 1244 s on 2026-12-01, second: its fixture waits for arm64's and Debian 13's rootfs,
# built beside the first scenarios, and it then ends last if it starts after a first file) and
# handed out in this order (--no-loadscope-reorder: by default
# pytest-xdist reorders the files by their number of tests), each to the worker about to be free
# (conftest.py's scheduler: when its file is down to its last test), so the last files to start
# are short ones; any file not listed runs after. tests/harness/schedule.py prints the schedule a
# run had.
export TH_ID=${TH_ID:-1}
# belt and braces: whatever ends this script, the test hosts of this run go (by PID, see harness)
trap 'kill "$cpu_pid" 2>/dev/null || true; for n in $(seq 0 $((TEST_WORKERS - 1))); do TH_ID=$((TH_ID + n)) bash tests/harness/testhosts.sh destroy >/dev/null 2>&1 || true; done' EXIT
order=(upgrade mixed_releases install_e2e network components etcd ha site_pack stacked_etcd
       air_gapped_controller readme_commands validate install_orchestration host_init pki check_mode install_drift
       kubeadm apiserver_double precheck pack_controller collection_install strategy execution_environment)
files=()
for t in "${order[@]}"; do [ -f "tests/integration/test_$t.py" ] && files+=("tests/integration/test_$t.py"); done
for f in tests/integration/test_*.py; do [[ " ${files[*]} " == *" $f "* ]] || files+=("$f"); done
# per-test times (setup: the module's fixtures, e.g. a scenario's hosts; call: the test) for every
# test of a second or more, slowest first, so CI time is known per scenario
# and where the playbooks' time went: every task's wall time per host (bench/callback_plugins/task_times.py)
export TASK_TIMES_FILE=${TASK_TIMES_FILE:-$(mktemp --suffix=.task-times.jsonl)}
# and which worker ran which file when (tests/harness/schedule.py)
export TEST_SCHEDULE_FILE=${TEST_SCHEDULE_FILE:-$(mktemp --suffix=.schedule.jsonl)}
# (its output is kept too: a failure's summary is printed again at the end, where a shortened log shows it)
pytest_log=$(mktemp --suffix=.pytest.log)
rc=0
python -m pytest -p no:cacheprovider -n "$TEST_WORKERS" --dist loadfile --no-loadscope-reorder --durations=0 --durations-min=1.0 \
  "$@" "${files[@]}" 2>&1 | tee "$pytest_log" || rc=$?
wait "$pack_pid" || { echo "== the fixture pack did not build ahead of the scenarios:"; cat "$prep_log"; }
wait "$trixie_pid" || { echo "== the Debian 13 hosts' rootfs or repository did not build ahead of the scenarios:"; cat "$trixie_log"; }
wait "$arm64_pid" || { echo "== the arm64 hosts' rootfs or repository did not build ahead of the scenarios:"; cat "$arm64_log"; }
checks_rc=0
wait "$checks_pid" || checks_rc=$?
cat "$checks_log"
# where the time went, near the end where a shortened log still shows it
python tests/harness/task_times.py "$TASK_TIMES_FILE" 30 || true
kill "$cpu_pid" 2>/dev/null || true
python tests/harness/schedule.py "$TEST_SCHEDULE_FILE" "$cpu_log" "$checks_done" || true
if [ "$checks_rc" != 0 ]; then
  # again at the end, where a shortened log still shows it: pytest's failures, or the log's end
  echo "== the checks beside the scenarios failed (exit $checks_rc): above; their failures:"
  if grep -q '^=* FAILURES =*$' "$checks_log"; then
    sed -n '/^=* FAILURES =*$/,/^=* short test summary/p' "$checks_log" | head -150
  else
    tail -40 "$checks_log"
  fi
fi
if [ "$rc" != 0 ]; then
  # each failure's last lines before its captured output (where the assertion and the playbook's
  # error are), then pytest's summary
  echo "== the scenarios failed (exit $rc): above; the end of each failure:"
  awk '/^==* (FAILURES|ERRORS) ==*$/ { f = 1; next } /^==* (short test summary|warnings summary)/ { f = 0 }
       f && /^___* .* ___*$/ { flush(); head = $0; n = 0; cap = 0; next }
       f && /^--* Captured .* --*$/ { cap = 1; next }
       f && !cap { buf[n++ % 40] = $0 }
       function flush(  i) { if (head == "") return; print head; for (i = (n > 40 ? n - 40 : 0); i < n; i++) print buf[i % 40] }
       END { flush() }' "$pytest_log"
  sed -n '/^=* short test summary info =*$/,$p' "$pytest_log"
fi
echo "== all tests done in $(( $(date +%s) - t0 )) s"
[ "$rc" = 0 ] && exit "$checks_rc"
exit $rc

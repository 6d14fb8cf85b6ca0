#!/usr/bin/env bash
# The sandbox: three local test hosts (systemd-nspawn, real systemd and sshd, 172.30.0.11-13)
# with a ready inventory, and install.yml run against them.
#   bash tests/sandbox.sh          bring the hosts up (reusing them if up) and run install.yml
#   bash tests/sandbox.sh down     tear the sandbox down
# Extra arguments after "install" go to ansible-playbook: bash tests/sandbox.sh install --tags precheck
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export TH_ID=0
H=$TOP/tests/harness/testhosts.sh
INV=$TOP/inventories/sandbox/hosts.yml
[ "$(id -u)" = 0 ] || { echo "the sandbox needs root (systemd-nspawn, bridges, mounts)" >&2; exit 1; }

case ${1:-install} in
  down)
    # the hosts are gone: so is what the controller knew of them (journal, tke.json, PKI), or the
    # next sandbox's install would skip phases on brand-new hosts as done
    bash "$H" destroy; rm -rf "$TOP/inventories/sandbox/.tke"; echo "sandbox torn down"; exit 0 ;;
  install) shift || true ;;
  *) sed -n 2,6p "$0"; exit 2 ;;
esac

bash "$TOP/tests/setup_controller.sh"
mkdir -p "$TOP/.cache/sandbox"
ok=0
trap '[ $ok = 1 ] || { echo "sandbox failed: tearing it down" >&2; bash "$H" destroy; }' EXIT
t0=$(date +%s)
bash "$H" deps; bash "$H" rootfs; bash "$H" repo
VENV=${OPT_VENV:-$TOP/.cache/venv}
repo=$(TH_ID=0 bash "$H" info | sed -n 's/^TH_REPO=//p')
# the test doubles' files, a read-only layer of the hosts' file system (docs/testing.md)
TH_LAYERS=$(cd "$TOP/tests" && "$VENV/bin/python" -c 'import sys; from pathlib import Path
from harness import kubeadm_double; print(kubeadm_double.layer(Path(sys.argv[1])))' "$repo")
export TH_LAYERS
bash "$H" net-up; bash "$H" up 1 2 3; bash "$H" ssh-wait 1 2 3
echo "sandbox: 3 hosts reachable in $(( $(date +%s) - t0 )) s (h1 172.30.0.11, h2 172.30.0.12, h3 172.30.0.13)"
cd "$TOP"
# the offline site pack the sandbox installs, built on this machine (cached: reused while its
# recipe is unchanged), and the kubeadm/kubelet TEST DOUBLES on the hosts: kubeadm and kubelet
# cannot be had on this machine, where a real site's pack brings the real binaries
"$VENV/bin/python" tests/harness/sandbox.py "$TOP/.cache/sandbox" "$repo"
ok=1
rc=0
"$VENV/bin/ansible-playbook" install.yml -i "$INV" "$@" || rc=$?
cat <<MSG

sandbox: ansible-playbook install.yml -i inventories/sandbox/hosts.yml exited $rc
  what ran: every phase of install.yml; kubeadm and kubelet are test doubles (tests/kubeadm_double)
  the hosts stay up for you:  ssh -i ${TH_CACHE:-.cache/testhosts}/id_ed25519 root@172.30.0.11
  pull from the registry:     ctr -n k8s.io images pull --hosts-dir /etc/containerd/certs.d \
                                --user admin:<tke_admin_password> registry.tke.com/library/hello:1.0   (on any host)
  run again:                  bash tests/sandbox.sh   (or: $VENV/bin/ansible-playbook install.yml -i inventories/sandbox/hosts.yml)
  tear down:                  bash tests/sandbox.sh down
MSG
exit $rc

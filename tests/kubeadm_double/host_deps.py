"""What the doubles run on a test host that the host's OS does not bring: Python's cryptography (the
kubeadm double's certificates) and etcdctl (the kubeadm double's stacked etcd members, the API
double's store), unpacked from Debian's packages into DEPS by the harness (tests/harness/
kubeadm_double.py: DEPS_DIR, layer()), never installed on the host. Imported first by each double's
program (kubeadm, kubelet, kube-apiserver); its children inherit PATH. On the controller (unit
tests) there is no DEPS and it changes nothing."""
import os
import sys

DEPS = "/usr/local/lib/doubles-deps"

if os.path.isdir(DEPS):
    sys.path.insert(0, os.path.join(DEPS, "usr/lib/python3/dist-packages"))
    BIN = os.path.join(DEPS, "usr/bin")
    if BIN not in os.environ.get("PATH", "").split(os.pathsep):   # a child of a double has it already
        os.environ["PATH"] = BIN + os.pathsep + os.environ.get("PATH", "")

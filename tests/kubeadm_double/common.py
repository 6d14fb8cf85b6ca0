"""The kubeadm double's basics, shared by the program (`kubeadm`) and every module beside it: the
release it acts as (CLI: that release's table, cli_v1_<minor>.py), kubeadm's paths, the errors (Fail,
DataFail) and the output (klog warnings included), and the state file that stands for what lives in the
API server in reality (README: "What lives in the API server").

The paths are read through this module when used (`common.K8S`, `common.PKI`, `common.KUBELET_DIR`,
`common.STATE`), never copied, so that a unit test can point them into its own tmp directory."""
import datetime
import importlib
import json
import os
import sys

import acting as _acting
import kubeadm_types

HERE = os.path.dirname(os.path.realpath(__file__))


def acting_version():
    """The kubeadm minor the double acts as (acting.py: one rule with the kubelet double)."""
    return _acting.acting_version(HERE)


CLI = importlib.import_module("cli_v" + acting_version().replace(".", "_"))

K8S = "/etc/kubernetes"
PKI = K8S + "/pki"
KUBELET_DIR = "/var/lib/kubelet"   # constants.KubeletRunDirectory
STATE = os.environ.get("KUBEADM_DOUBLE_STATE", "/var/lib/kubeadm-double/state.json")
STACK_HINT = "\nTo see the stack trace of this error execute with --v=5 or higher"


class Fail(Exception):
    pass


class DataFail(Fail):
    """An error of the command's data initialization (configuration loading, --config mixing,
    ignorePreflightErrors): kubeadm prints it without the "error execution phase" prefix."""


def go_duration(text):
    """Seconds of a Go duration, by the grammar the configuration's durations are decoded with
    (kubeadm_types.duration_seconds); Fail 'time: invalid duration "<text>"' otherwise."""
    try:
        return kubeadm_types.duration_seconds(text)
    except kubeadm_types.DecodeError as e:
        raise Fail(str(e)) from None


def out(msg):
    print(msg, flush=True)


def warn(msg, record=True):
    """A klog warning line on stderr (line numbers of kubeadm's source are not reproduced), also kept
    in $KUBEADM_DOUBLE_WARNINGS so that a test can require a configuration kubeadm reads cleanly
    (record=False: a warning about no configuration, e.g. post-upgrade's temporary directory)."""
    now = datetime.datetime.now()
    line = f"W{now:%m%d %H:%M:%S.%f} {os.getpid():>7} kubeadm-double] {msg}"
    print(line, file=sys.stderr, flush=True)
    if record:
        keep_warning(line)


def keep_warning(line, preflight=False):
    """A warning kubeadm printed, kept for the tests: a configuration warning in $KUBEADM_DOUBLE_WARNINGS,
    a preflight check's in $KUBEADM_DOUBLE_PREFLIGHT (a site may expect some: SystemVerification ignored)."""
    name, default = (("KUBEADM_DOUBLE_PREFLIGHT", "/var/log/kubeadm-double-preflight.log") if preflight
                     else ("KUBEADM_DOUBLE_WARNINGS", "/var/log/kubeadm-double-warnings.log"))
    try:
        with open(os.environ.get(name, default), "a") as f:
            f.write(line + "\n")
    except OSError:
        pass


# ---------------------------------------------------------------- state ("the API server")
def load_state():
    try:
        with open(STATE) as f:
            return json.load(f)
    except FileNotFoundError:
        return {"tokens": {}, "configmaps": {}, "certs_upload": None, "nodes": {}}


def save_state(st):
    os.makedirs(os.path.dirname(STATE), exist_ok=True)
    tmp = STATE + ".tmp"
    with open(tmp, "w") as f:
        json.dump(st, f, indent=1)
    os.replace(tmp, STATE)

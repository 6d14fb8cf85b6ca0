"""Which version the kubeadm and kubelet doubles act as (one rule for both programs).

$KUBEADM_DOUBLE_VERSION (the launchers a site pack of the tests carries per version set it:
tests/harness/fixture_pack.py), else the file `version` beside the programs (written when the
tests install the doubles), else 1.30."""
import os

# the releases the double has a table for (cli_v1_<minor>.py)
ACTS_AS = ("1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36")


def acting_version(here):
    v = os.environ.get("KUBEADM_DOUBLE_VERSION", "")
    if not v:
        try:
            with open(os.path.join(here, "version")) as f:
                v = f.read().strip()
        except OSError:
            v = "1.30"
    v = v.lstrip("v")
    if v not in ACTS_AS:
        raise SystemExit(f"kubeadm double: cannot act as kubeadm {v} ({', '.join(ACTS_AS)})")
    return v

"""What tests/sandbox.sh prepares in Python, run as a script from a fresh clone:
`python tests/harness/sandbox.py CACHE HOSTS_APT_REPO` builds (or reuses) the fixture site pack
under CACHE and puts the kubeadm/kubelet test doubles on the sandbox's three hosts (harness
instance 0), as a real site's pack would bring the real binaries."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from harness.collection import make_importable  # noqa: E402  pylint: disable=wrong-import-position

make_importable()

from harness import fixture_pack, kubeadm_double  # noqa: E402  pylint: disable=wrong-import-position
from harness.testhosts import TestHosts  # noqa: E402  pylint: disable=wrong-import-position


def main(cache: str, repo: str) -> None:
    pack = fixture_pack.ensure_pack(Path(cache).resolve(), Path(repo), releases=())   # Debian 12 hosts only
    print(f"sandbox: site pack ready in {pack}")
    kubeadm_double.install(TestHosts(th_id=0, count=3))
    print("sandbox: kubeadm/kubelet test doubles on the hosts")


if __name__ == "__main__":
    main(*sys.argv[1:3])

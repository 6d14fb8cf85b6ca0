"""Offline stand-in for the pip bootstrap script ansible-test downloads (get-pip.py).

ansible-test creates each sanity test's virtual environment without pip, then runs
``python get_pip_<version>.py --disable-pip-version-check pip==<version> --no-setuptools --no-wheel``
with a script it fetches from ci-files.testing.ansible.com: a host with only package registries
cannot reach it. This script keeps the same contract with the standard library instead: ensurepip
puts Python's bundled pip into the environment, which then installs the requested pip from the
configured package index (PyPI or a mirror). tests/sanity/run.sh places it in ansible-test's cache.
"""
import subprocess
import sys

# get-pip.py's own options; pip install does not know them (ensurepip adds no wheel package)
GET_PIP_ONLY = {'--no-setuptools', '--no-wheel'}


def main(argv):
    subprocess.check_call([sys.executable, '-m', 'ensurepip', '--default-pip'])
    args = [arg for arg in argv if arg not in GET_PIP_ONLY]
    subprocess.check_call([sys.executable, '-m', 'pip', 'install', '--upgrade'] + args)
    if '--no-setuptools' in argv:
        # ensurepip of Python < 3.12 brings setuptools along; get-pip.py would not have
        subprocess.call([sys.executable, '-m', 'pip', 'uninstall', '-y', '-q', 'setuptools'])


if __name__ == '__main__':
    main(sys.argv[1:])

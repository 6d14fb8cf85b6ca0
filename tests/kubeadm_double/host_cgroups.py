"""Which cgroup version the host runs: one rule for the kubeadm and the kubelet doubles.

The real programs ask the kernel: the kubelet's IsCgroup2UnifiedMode (libcontainer/cgroups) and the
CgroupsValidator of k8s.io/system-validators (kubeadm's SystemVerification preflight check) take the
filesystem magic of /sys/fs/cgroup (statfs: CGROUP2_SUPER_MAGIC means the unified hierarchy, cgroup
v2; anything else, e.g. the tmpfs holding the v1 hierarchies, means cgroup v1). The doubles read the
mount table instead (no statfs in Python's standard library): the host is on cgroup v2 when the
mount visible at /sys/fs/cgroup (the last one listed for that point) has the filesystem type
cgroup2, else on cgroup v1.

Installed on the test hosts with the doubles (tests/harness/kubeadm_double.py copies every *.py of
this directory); unit tests replace `unified` with monkeypatch.
"""
CGROUP_ROOT = "/sys/fs/cgroup"
MOUNTINFO = "/proc/self/mountinfo"
MOUNTS = "/proc/mounts"


def _from_mountinfo(path):
    """The fstype of the last mount at CGROUP_ROOT in a mountinfo file (proc(5): mount ID, parent ID,
    major:minor, root, mount point, options, optional fields, "-", fstype, source, super options),
    None when it lists none."""
    fstype = None
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) > 6 and fields[4] == CGROUP_ROOT and "-" in fields[6:]:
                i = fields.index("-", 6)
                if i + 1 < len(fields):
                    fstype = fields[i + 1]
    return fstype


def _from_mounts(path):
    """The fstype of the last mount at CGROUP_ROOT in /proc/mounts (fstab(5) fields), None if none."""
    fstype = None
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) > 2 and fields[1] == CGROUP_ROOT:
                fstype = fields[2]
    return fstype


def unified(mountinfo=MOUNTINFO, mounts=MOUNTS):
    """True on a cgroup v2 host (/sys/fs/cgroup is a cgroup2 mount), False on cgroup v1 (or when
    /sys/fs/cgroup is no mount point at all: statfs would give the magic of sysfs)."""
    for reader, path in ((_from_mountinfo, mountinfo), (_from_mounts, mounts)):
        try:
            fstype = reader(path)
        except OSError:
            continue
        return fstype == "cgroup2"
    return False

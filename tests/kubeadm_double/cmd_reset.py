"""`kubeadm reset [flags]` and `kubeadm reset phase <phase>`.

cmd/kubeadm/app/cmd/reset.go and phases/reset/{preflight,removeetcdmember,cleanupnode}.go: the
phases in order, --skip-phases, -f/--force or an interactive "[y/N]" confirmation, the root check,
the stacked etcd member's data (its data dir read from the etcd static pod manifest), then the
node's kubeadm files: contents of /etc/kubernetes/manifests, /var/lib/kubelet (after unmounting
what is mounted below it), the certificates dir (and /etc/kubernetes/tmp with --cleanup-tmp-dir),
and the kubeconfigs. The kubelet is stopped. What kubeadm reset does not clean (CNI
configuration, iptables/IPVS, $HOME/.kube/config) it says at the end, and so does the double."""
import os
import shutil
import subprocess
import sys

import yaml

import cluster_api
import command_line
import common
from common import CLI, STACK_HINT, DataFail, Fail, out, warn
import config_load
import etcd_member


APISERVER_STORE = os.environ.get("APISERVER_DOUBLE_STORE", "/var/lib/apiserver-double/store.json")


def _clean_dir(path, dry):
    """CleanDir: the directory's contents go, the directory stays; a missing one is no error."""
    if dry or not os.path.isdir(path):
        return
    for name in os.listdir(path):
        full = os.path.join(path, name)
        if os.path.isdir(full) and not os.path.islink(full):
            shutil.rmtree(full)
        else:
            os.unlink(full)


def _reset_config(fl):
    """The ResetConfiguration (--config) merged under the flags: {field: value}."""
    if "config" not in fl:
        return {}
    docs = config_load.load_config(fl["config"][-1], "reset")
    if "ResetConfiguration" not in docs:
        raise DataFail("no ResetConfiguration kind was found in the YAML file" + STACK_HINT)
    return docs["ResetConfiguration"]


def _etcd_data_dir():
    """removeetcdmember.go getEtcdDataDir: the stacked etcd member's data dir, from its static pod
    (the etcd-data volume's host path; the double also reads --data-dir); None: no manifest, external etcd."""
    try:
        with open(f"{common.K8S}/manifests/etcd.yaml") as f:
            pod = yaml.safe_load(f)
    except OSError:
        return None
    for vol in pod["spec"].get("volumes") or []:
        if vol.get("name") == "etcd-data" and (vol.get("hostPath") or {}).get("path"):
            return vol["hostPath"]["path"]
    for arg in pod["spec"]["containers"][0].get("command", []):
        if arg.startswith("--data-dir="):
            return arg.split("=", 1)[1]
    raise Fail("invalid etcd pod manifest")


def _reset_cluster_config(kubeconfig):
    """reset.go newResetData: the cluster's configuration when the kubeconfig exists
    (FetchInitConfigurationFromCluster: the kubeadm-config ConfigMap, and this node's API endpoint,
    which kubeadm reads on its kube-apiserver mirror Pod: the double reads this host's
    kube-apiserver manifest); a failure is a warning and no configuration."""
    if not os.path.exists(kubeconfig):
        return None
    try:
        cm = cluster_api.cluster_get(kubeconfig, "/api/v1/namespaces/kube-system/configmaps/kubeadm-config", "the kubeadm-config ConfigMap")
        cluster = yaml.safe_load(cm["data"]["ClusterConfiguration"])
        with open(f"{common.K8S}/manifests/kube-apiserver.yaml") as f:
            command = yaml.safe_load(f)["spec"]["containers"][0]["command"]
        address = next(a.split("=", 1)[1] for a in command if a.startswith("--advertise-address="))
    except (Fail, OSError, KeyError, TypeError, StopIteration, yaml.YAMLError) as e:
        warn(f"[reset] Unable to fetch the kubeadm-config ConfigMap from cluster: {e}")
        return None
    return {"cluster": cluster, "address": address}


def remove_stacked_member(cfg, kubeconfig, cert_dir):
    """local.go RemoveStackedEtcdMemberFromCluster: an etcd client on the members (with the
    cluster configuration's certificatesDir); the only member
    left, reached at this node's client URL, is not removed; a member already gone is no error."""
    nodes = cluster_api.cluster_get(kubeconfig, "/api/v1/nodes", "the control-plane Nodes")
    client = etcd_member.Client(etcd_member.control_plane_endpoints(nodes), cert_dir)
    members = client.sync()
    if len(members) == 1 and etcd_member.client_url(cfg["address"]) in client.endpoints:
        return
    member_id = client.member_id(etcd_member.peer_url(cfg["address"]))
    if member_id is not None:
        client.remove(member_id)


def reset_preflight(opts):
    if not opts["force"] and not opts["dry_run"]:
        warn("[reset] WARNING: Changes made to this host by 'kubeadm init' or 'kubeadm join' will be reverted.")
        print("[reset] Are you sure you want to proceed? [y/N]: ", end="", flush=True)
        answer = (sys.stdin.readline() or "").strip().lower()
        if answer not in ("y", "yes"):
            raise Fail("won't proceed; the user didn't answer (Y|n) in order to continue")
    out("[preflight] Running pre-flight checks")
    if os.geteuid() != 0 and "isprivilegeduser" not in opts["ignore"] and "all" not in opts["ignore"]:
        raise Fail("[preflight] Some fatal errors occurred:\n\t[ERROR IsPrivilegedUser]: user is not running as root")


def reset_remove_etcd_member(opts):
    data_dir = _etcd_data_dir()
    if data_dir is None:
        out("[reset] No etcd config found. Assuming external etcd")
        out("[reset] Please, manually reset etcd to prevent further issues")
        return
    if opts["dry_run"]:
        out("[reset] Would remove the etcd member on this node from the etcd cluster")
        out(f"[reset] Would delete contents of the etcd data directory: {data_dir}")
        return
    cfg = _reset_cluster_config(opts["kubeconfig"])
    if cfg is not None:
        try:
            remove_stacked_member(cfg, opts["kubeconfig"], cfg["cluster"].get("certificatesDir", opts["cert_dir"]))
        except (Fail, etcd_member.EtcdError) as e:
            warn(f"[reset] Failed to remove etcd member: {e}, please manually remove this etcd member using etcdctl")
    # the double's own stand-ins for what a stacked etcd keeps: the state file (what kubeadm keeps
    # "in the API") and the API double's file store (used when no etcd answered it)
    for stand_in in (common.STATE, APISERVER_STORE):
        if os.path.exists(stand_in):
            os.unlink(stand_in)
    # removeetcdmember.go cleans the data directory whether the removal worked or not
    _clean_dir(data_dir, False)
    out(f"[reset] Deleted contents of the etcd data directory: {data_dir}")


def reset_cleanup_node(opts):
    dirs = [f"{common.K8S}/manifests"]
    if opts["dry_run"]:
        out("[reset] Would stop the kubelet service")
        out("[reset] Would unmount mounted directories in \"/var/lib/kubelet\"")
        out("[reset] Would remove Kubernetes-managed containers")
    else:
        out("[reset] Stopping the kubelet service")
        if subprocess.run(["systemctl", "stop", "kubelet"], capture_output=True, check=False).returncode != 0:
            warn("[reset] The kubelet service could not be stopped by kubeadm")
        out("[reset] Unmounting mounted directories in \"/var/lib/kubelet\"")
        kubelet_dir = os.path.realpath(common.KUBELET_DIR)
        with open("/proc/mounts") as f:
            points = [ln.split()[1] for ln in f if ln.split()[1].startswith(kubelet_dir + "/")]
        for point in sorted(points, key=len, reverse=True):
            subprocess.run(["umount"] + opts["unmount_flags"] + [point], check=False)
        dirs.append(kubelet_dir)
        # removeContainers asks the CRI for the Kubernetes containers; with the doubles none run (the
        # kubelet double starts no container), so there is nothing to remove and nothing is asked
        out(f"[reset] Removing Kubernetes-managed containers (none run with the doubles; {opts['cri_socket']} not asked)")
    if opts["cert_dir"] != "/etc/kubernetes/pki":
        warn(f"[reset] WARNING: Cleaning a non-default certificates directory: \"{opts['cert_dir']}\"")
    dirs.append(opts["cert_dir"])
    if opts["cleanup_tmp_dir"]:
        dirs.append(f"{common.K8S}/tmp")
    files = [f"{common.K8S}/{name}" for name in CLI.RESET_KUBECONFIGS]
    verb = "Would delete" if opts["dry_run"] else "Deleting"
    out(f"[reset] {verb} contents of directories: [{' '.join(dirs)}]")
    for d in dirs:
        _clean_dir(d, opts["dry_run"])
    out(f"[reset] {verb} files: [{' '.join(files)}]")
    if not opts["dry_run"]:
        for path in files:
            if os.path.lexists(path):
                os.unlink(path)


RESET_RUN = {"preflight": reset_preflight, "remove-etcd-member": reset_remove_etcd_member,
             "cleanup-node": reset_cleanup_node}


def run_reset(argv):
    """kubeadm reset [flags] | kubeadm reset phase <phase> [flags]."""
    words, fl = command_line.parse(["--force" if a == "-f" else a for a in argv])
    if words[:1] == ["phase"]:
        if len(words) < 2:
            raise Fail("the double does not run 'kubeadm reset phase' without a phase")
        phase = CLI.RESET_ALIASES.get(words[1], words[1])
        if phase not in CLI.RESET_PHASES:
            raise Fail(f'unknown command "{words[1]}" for "kubeadm reset phase"')
        if len(words) > 2:
            raise Fail(f'unknown command "{words[2]}" for "kubeadm reset phase {words[1]}"')
        command_line.check_flags("reset " + phase, CLI.RESET[phase], fl)
    elif words:
        raise Fail(f'unknown command "{words[0]}" for "kubeadm reset"')
    else:
        phase = None
        command_line.check_flags("reset", CLI.RESET[""], fl)
    cfg = _reset_config(fl)

    def flag(name, field, default):
        if name in fl:
            v = fl[name][-1]
            return v == "true" if name in CLI.BOOL_FLAGS else v
        return cfg.get(field, default)
    skip = {x for v in fl.get("skip-phases") or [] for x in v.split(",") if x} | set(cfg.get("skipPhases") or [])
    ignore = {x.lower() for v in fl.get("ignore-preflight-errors") or [] for x in v.split(",") if x}
    ignore |= {x.lower() for x in cfg.get("ignorePreflightErrors") or []}
    if "all" in ignore and len(ignore) > 1:
        raise DataFail(config_load.invalid("ignore-preflight-errors", ",".join(sorted(ignore)),
                                           "don't specify individual checks if 'all' is used") + STACK_HINT)
    opts = {"force": flag("force", "force", False), "dry_run": flag("dry-run", "dryRun", False),
            "cert_dir": flag("cert-dir", "certificatesDir", "/etc/kubernetes/pki"),
            "cri_socket": flag("cri-socket", "criSocket", "unix:///run/containerd/containerd.sock"),
            "cleanup_tmp_dir": flag("cleanup-tmp-dir", "cleanupTmpDir", False),
            "kubeconfig": (fl.get("kubeconfig") or [f"{common.K8S}/admin.conf"])[-1],
            "unmount_flags": list(cfg.get("unmountFlags") or []), "ignore": ignore}
    for name in ([phase] if phase else [p for p in CLI.RESET_PHASES if p not in skip]):
        try:
            RESET_RUN[name](opts)
        except DataFail:
            raise
        except Fail as e:
            raise Fail(f"error execution phase {name}: {e}" + STACK_HINT) from None
    if not phase:
        out("The reset process does not clean CNI configuration. To do so, you must remove /etc/cni/net.d\n\n"
            "The reset process does not reset or clean up iptables rules or IPVS tables.\n"
            "If you wish to reset iptables, you must do so manually by using the \"iptables\" command.\n\n"
            "If your cluster was setup to utilize IPVS, run ipvsadm --clear (or similar)\n"
            "to reset your system's IPVS tables.\n\n"
            "The reset process does not clean your kubeconfig files and you must remove them manually.\n"
            "Please, check the contents of the $HOME/.kube/config file.")

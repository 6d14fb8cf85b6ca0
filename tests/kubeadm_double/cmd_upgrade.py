"""`kubeadm upgrade plan | apply | node`.

Facts read from kubeadm's source and reference pages (not code copied):
- cmd/kubeadm/app/cmd/upgrade/common.go (enforceRequirements: the configuration comes from the
  kubeadm-config ConfigMap, the cluster must answer), apply.go (runApply: version skew policies,
  the interactive confirmation unless -y/-f/--dry-run, the static pod upgrade, upload of the
  configuration, the kubelet configuration, "[upgrade/successful] SUCCESS!"), node.go (a
  control-plane node upgrades its static pods to the cluster's version, every node writes the
  kubelet configuration from the kubelet-config ConfigMap; a worker talks through kubelet.conf),
  plan.go (the component table);
- cmd/kubeadm/app/phases/upgrade/policy.go (EnforceVersionPolicies: the mandatory and the
  skippable errors and their wording), staticpods.go (new manifests, old ones backed up under
  /etc/kubernetes/tmp/kubeadm-backup-manifests-<date>, wait for the kubelet to restart the pod);
- cmd/kubeadm/app/util/config (upload-config marshals with the newest API version: v1beta4 from
  v1.31, where extraArgs become lists of {name, value} and apiServer.timeoutForControlPlane moves out)."""
import datetime
import json
import os
import re
import shutil
import sys
import tempfile
import time
import urllib.request

import yaml

import cluster_api
import command_line
import common
from common import CLI, STACK_HINT, Fail, out, warn
import config_load
import kubeadm_types as T
import kubeconfigs
import kubelet_files
import preflight


VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$")


def parse_semver(text, what="version"):
    m = VERSION_RE.match(str(text or "").strip())
    if not m:
        raise Fail(f'unable to parse {what} "{text}" as a semantic version')
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4) or ""


def cluster_configuration(kubeconfig):
    out("[upgrade/config] Reading configuration from the cluster...")
    out("[upgrade/config] FYI: You can look at this config file with 'kubectl -n kube-system get cm kubeadm-config -o yaml'")
    cm = cluster_api.cluster_get(kubeconfig, "/api/v1/namespaces/kube-system/configmaps/kubeadm-config", "the kubeadm-config ConfigMap")
    return yaml.safe_load(cm["data"]["ClusterConfiguration"])


def kubelet_versions(kubeconfig):
    nodes = cluster_api.cluster_get(kubeconfig, "/api/v1/nodes", "the Nodes")
    return {n["metadata"]["name"]: ((n.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion", "")
            for n in nodes.get("items") or []}


def version_policy(cluster_v, target_v, kubelets):
    """phases/upgrade/policy.go EnforceVersionPolicies: (mandatory, skippable) error messages."""
    cl, new, kadm = parse_semver(cluster_v, "cluster version"), parse_semver(target_v), parse_semver(CLI.VERSION)
    mandatory, skippable = [], []
    if new[:2] < CLI.MIN_CONTROL_PLANE:
        mandatory.append(f'Specified version to upgrade to "{target_v}" is equal to or lower than the minimum supported '
                         f'version "{cluster_v}". Please specify a higher version to upgrade to')
    if new[1] > cl[1] + CLI.UPGRADE_MINOR_SKEW:
        (skippable if new[3] else mandatory).append(
            f'Specified version to upgrade to "{target_v}" is too high; kubeadm can upgrade only '
            f"{CLI.UPGRADE_MINOR_SKEW} minor version at a time")
    if new[1] < cl[1] - CLI.UPGRADE_MINOR_SKEW:
        (skippable if new[3] else mandatory).append(
            f'Specified version to downgrade to "{target_v}" is too low; kubeadm can downgrade only '
            f"{CLI.UPGRADE_MINOR_SKEW} minor version at a time")
    if kadm[:3] < new[:3]:
        if new[1] > kadm[1]:
            (skippable if new[3] else mandatory).append(
                f'Specified version to upgrade to "{target_v}" is at least one minor release higher than the kubeadm '
                f"minor release ({new[1]} > {kadm[1]}). Such an upgrade is not supported")
        else:
            skippable.append(f'Specified version to upgrade to "{target_v}" is higher than the kubeadm version '
                             f'"{CLI.VERSION}". Upgrade kubeadm first using the tool you used to install kubeadm')
    if kadm[0] > new[0] or kadm[1] > new[1]:
        skippable.append(f"Kubeadm version {CLI.VERSION} can only be used to upgrade to Kubernetes version "
                         f"{kadm[0]}.{kadm[1]}")
    if new[3]:
        skippable.append(f'Specified version to upgrade to "{target_v}" is an unstable version and such upgrades '
                         "weren't allowed via setting the --allow-*-upgrades flags")
    old = sorted({v for v in kubelets.values() if v and new[1] > parse_semver(v)[1] + CLI.KUBELET_MINOR_SKEW})
    if old:
        skippable.append(f"There are kubelets in this cluster that are too old that have these versions [{' '.join(old)}]")
    return mandatory, skippable


def _err_list(errs):
    return "".join(f"\t- {e}\n" for e in errs)


def enforce_version_policy(cluster_v, target_v, kubelets, force):
    out(f'[upgrade/version] You have chosen to change the cluster version to "{target_v}"')
    out(f"[upgrade/versions] Cluster version: {cluster_v}")
    out(f"[upgrade/versions] kubeadm version: {CLI.VERSION}")
    mandatory, skippable = version_policy(cluster_v, target_v, kubelets)
    if mandatory:
        raise Fail("[upgrade/version] FATAL: the --version argument is invalid due to these fatal errors:\n\n"
                   f"{_err_list(mandatory)}\nPlease fix the misalignments highlighted above and try upgrading again"
                   + STACK_HINT)
    if skippable and not force:
        raise Fail("[upgrade/version] FATAL: the --version argument is invalid due to these errors:\n\n"
                   f"{_err_list(skippable)}\nCan be bypassed if you pass the --force flag" + STACK_HINT)
    if skippable:
        out(f"[upgrade/version] Found {len(skippable)} potential version compatibility errors but skipping since the "
            f"--force flag is set: \n\n{_err_list(skippable)}")


def to_upload_api(cluster, version):
    """The ClusterConfiguration as upload-config stores it: the new kubernetesVersion, marshalled with
    this kubeadm's newest API version (v1beta3 -> v1beta4: extraArgs maps become {name, value} lists,
    apiServer.timeoutForControlPlane leaves the ClusterConfiguration). Checked against the types."""
    new = json.loads(json.dumps(cluster))
    new["kubernetesVersion"] = version
    new["apiVersion"], new["kind"] = CLI.UPLOAD_API, "ClusterConfiguration"
    if CLI.UPLOAD_API.endswith("v1beta4"):
        for comp in [new.get(k) for k in ("apiServer", "controllerManager", "scheduler")] + \
                [(new.get("etcd") or {}).get("local")]:
            if isinstance(comp, dict) and isinstance(comp.get("extraArgs"), dict):
                comp["extraArgs"] = [{"name": k, "value": str(v)} for k, v in sorted(comp["extraArgs"].items())]
        (new.get("apiServer") or {}).pop("timeoutForControlPlane", None)
    unknown = []
    try:
        T.decode(new, T.types_for(CLI.UPLOAD_API, getattr(CLI, "ETCD_HTTP_ENDPOINTS", False))["ClusterConfiguration"],
                 "", "ClusterConfiguration", unknown)
    except T.DecodeError as e:
        raise Fail(f"the double made an invalid {CLI.UPLOAD_API} ClusterConfiguration: {e}")
    if unknown:
        raise Fail(f"the double made an invalid {CLI.UPLOAD_API} ClusterConfiguration: unknown fields {unknown}")
    return new


CONTROL_PLANE = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")


def apiserver_url(command):
    """This node's API server, from its kube-apiserver static pod's --advertise-address and --secure-port."""
    a = dict(x[2:].split("=", 1) for x in command[1:] if x.startswith("--") and "=" in x)
    return f"https://{a.get('advertise-address', '127.0.0.1')}:{a.get('secure-port', '6443')}"


def upgrade_static_pods(version, dry_run):
    """staticpods.go: each control-plane manifest rewritten with the new image tag (the double keeps the
    flags: they do not change between the versions it acts as for this configuration), the old one
    backed up, then wait until the kubelet restarted the API server at the new version."""
    backup = f"{common.K8S}/tmp/kubeadm-backup-manifests-{datetime.datetime.now():%Y-%m-%d-%H-%M-%S}"
    apiserver = None
    for name in CONTROL_PLANE:
        path = f"{common.K8S}/manifests/{name}.yaml"
        with open(path) as f:
            pod = yaml.safe_load(f)
        c = pod["spec"]["containers"][0]
        image = c["image"].rsplit(":", 1)[0] + ":" + version
        if name == "kube-apiserver":
            apiserver = apiserver_url(c["command"])
        out(f'[upgrade/staticpods] Preparing for "{name}" upgrade')
        if c["image"] == image:
            out(f'[upgrade/staticpods] Current and new manifests of {name} are equal, skipping upgrade')
            continue
        if dry_run:
            out(f"[dryrun] Would write the manifest of {name} with image {image}")
            continue
        os.makedirs(backup, mode=0o700, exist_ok=True)
        with open(f"{backup}/{name}.yaml", "w") as f:
            yaml.safe_dump(pod, f, sort_keys=False)
        c["image"] = image
        with open(path + ".tmp", "w") as f:
            yaml.safe_dump(pod, f, sort_keys=False)
        os.replace(path + ".tmp", path)
        out(f'[upgrade/staticpods] Moved new manifest to "{path}" and backed up old manifest to "{backup}/{name}.yaml"')
    if dry_run or not apiserver:
        return
    out("[upgrade/staticpods] Waiting for the kubelet to restart the component")
    deadline = datetime.datetime.now() + datetime.timedelta(minutes=5)   # upgrade.UpgradeManifestTimeout
    while datetime.datetime.now() < deadline:
        try:
            with urllib.request.urlopen(apiserver + "/version", context=cluster_api.tls_context(), timeout=2) as r:
                if json.loads(r.read()).get("gitVersion") == version:
                    out('[apiclient] Found 1 Pods for label selector component=kube-apiserver')
                    return
        except (OSError, ValueError):
            pass
        time.sleep(0.5)
    raise Fail(f"couldn't upgrade control plane. kubeadm has tried to recover everything into the earlier state. "
               f"Errors faced: timed out waiting for the condition: the API server at {apiserver} does not serve {version}")


def upgrade_kubelet_local_mode(dry_run):
    """KEP-4471 (kubeadm upgrade with ControlPlaneKubeletLocalMode on): a control-plane node's
    kubelet.conf is pointed at the node's own API server (the kube-apiserver manifest's
    --advertise-address and --secure-port); the rest of the file is kept."""
    path = f"{common.K8S}/kubelet.conf"
    with open(f"{common.K8S}/manifests/kube-apiserver.yaml") as f:
        command = yaml.safe_load(f)["spec"]["containers"][0]["command"]
    local = apiserver_url(command)
    with open(path) as f:
        cfg = yaml.safe_load(f)
    if all(c["cluster"].get("server") == local for c in cfg.get("clusters") or []):
        return
    if dry_run:
        out(f"[dryrun] Would point {path} at the local API server {local}")
        return
    for c in cfg.get("clusters") or []:
        c["cluster"]["server"] = local
    kubeconfigs.write_private(path + ".tmp", yaml.safe_dump(cfg, sort_keys=False, default_flow_style=False))
    os.replace(path + ".tmp", path)
    out(f'[upgrade] Updating the kubelet kubeconfig "{path}" to point to the local API server "{local}"')


def migrate_instance_config():
    """NodeLocalCRISocket at an upgrade (postupgrade.go WriteKubeletConfigFiles): on a node without
    instance-config.yaml, the --container-runtime-endpoint of kubeadm-flags.env moves into it (the env
    file rewritten without the flag; no flag: an empty endpoint)."""
    if os.path.exists(f"{common.KUBELET_DIR}/instance-config.yaml"):
        return
    env = f"{common.KUBELET_DIR}/kubeadm-flags.env"
    try:
        text = open(env).read().strip()
    except OSError as e:
        raise Fail(f"error reading kubeadm flags file: failed to read file: {e}") from None
    prefix = "KUBELET_KUBEADM_ARGS="
    if not text.startswith(prefix):
        raise Fail(f'the file "{env}" does not contain the  expected prefix "{prefix}"')
    args = text[len(prefix):].strip('"').split()
    endpoint = ""
    kept = []
    for a in args:
        if a.startswith("--container-runtime-endpoint="):
            endpoint = a.split("=", 1)[1]
        else:
            kept.append(a)
    if endpoint:
        with open(env, "w") as f:
            f.write(f'{prefix}"{" ".join(kept)}"\n')
    kubelet_files.write_instance_config(endpoint)


def kubelet_config_data(kubeconfig):
    """The kubelet-config ConfigMap's data, as kubeadm upgrade reads it at its start (with the
    kubeadm-config: FetchInitConfigurationFromCluster loads the component configs)."""
    cm = cluster_api.cluster_get(kubeconfig, "/api/v1/namespaces/kube-system/configmaps/kubelet-config", "the kubelet-config ConfigMap")
    return dict(cm.get("data") or {})


def upgrade_kubelet_config(kubeconfig, dry_run, cluster=None, data=None):
    """The kubelet-config phase: /var/lib/kubelet/config.yaml from the kubelet-config ConfigMap (data: as
    read at the command's start; backed up first); with NodeLocalCRISocket the node's instance
    configuration first (migrated from the flags file when missing), merged in."""
    text = (data if data is not None else kubelet_config_data(kubeconfig))["kubelet"]
    path = f"{common.KUBELET_DIR}/config.yaml"
    if dry_run:
        out(f"[dryrun] Would write file {path}")
        return
    if os.path.exists(path):
        backup = f"{common.K8S}/tmp/kubeadm-kubelet-config-{datetime.datetime.now():%Y-%m-%d-%H-%M-%S}"
        os.makedirs(backup, mode=0o700, exist_ok=True)
        with open(path) as src, open(f"{backup}/config.yaml", "w") as dst:
            dst.write(src.read())
        out(f'[upgrade] Backing up kubelet config file to {backup}/config.yaml')
    if cluster is not None and config_load.gate_on(cluster, "NodeLocalCRISocket"):
        migrate_instance_config()
        kubelet_files.write_kubelet_config(yaml.safe_load(text), cluster)
        return
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    out(f'[kubelet-start] Writing kubelet configuration to file "{path}"')


def post_upgrade(dry_run):
    """The post-upgrade phase of "upgrade apply|node" in 1.35 (postupgrade.go RemoveKubeletArgsFromFile with
    cli_v1_35.KUBELET_ENV_UNWANTED): kubeadm-flags.env backed up to a temporary directory under
    /etc/kubernetes/tmp and rewritten without the unwanted flags, the others kept in their order (a file
    without them is rewritten as it was). The warning about the temporary directory is klog's (its file:line
    not reproduced; not recorded as a configuration warning)."""
    unwanted = getattr(CLI, "KUBELET_ENV_UNWANTED", ())
    if not unwanted:
        return
    env = f"{common.KUBELET_DIR}/kubeadm-flags.env"
    if dry_run:
        out(f"[dryrun] Would remove the flags {list(unwanted)} from the kubelet env file {env}")
        return
    try:
        text = open(env).read().strip()
    except OSError as e:
        raise Fail(f"error execution phase post-upgrade: error reading kubelet env file: {e}" + STACK_HINT) from None
    prefix = "KUBELET_KUBEADM_ARGS="
    if not text.startswith(prefix):
        raise Fail(f'error execution phase post-upgrade: the file "{env}" does not contain the  expected prefix '
                   f'"{prefix}"' + STACK_HINT)
    args = text[len(prefix):].strip('"').split()
    kept = [a for a in args if a.lstrip("-").split("=", 1)[0] not in unwanted]
    os.makedirs(f"{common.K8S}/tmp", mode=0o700, exist_ok=True)
    backup = tempfile.mkdtemp(prefix="kubeadm-kubelet-env", dir=f"{common.K8S}/tmp")
    warn(f"Using temporary directory {backup} for kubelet env file. To override it set the environment variable "
         "KUBEADM_UPGRADE_DRYRUN_DIR", record=False)
    out(f"[upgrade] Backing up kubelet env file to {backup}/kubeadm-flags.env")
    shutil.copyfile(env, f"{backup}/kubeadm-flags.env")
    with open(env + ".tmp", "w") as f:
        f.write(f'{prefix}"{" ".join(kept)}"\n')
    os.replace(env + ".tmp", env)
    out(f'[kubelet-start] Writing kubelet environment file with flags to file "{env}"')


def run_upgrade(words, fl):
    sub = words[0] if words else ""
    if sub not in CLI.UPGRADE:
        raise Fail(f'unknown command "{sub}" for "kubeadm upgrade"' if sub else
                   "the double does not run 'kubeadm upgrade' without a sub-command")
    command_line.check_flags("upgrade " + sub, CLI.UPGRADE[sub], fl)
    if "config" in fl:
        raise Fail("the double does not read --config for 'kubeadm upgrade' (the collection passes none: the "
                   "configuration comes from the kubeadm-config ConfigMap)")
    args = words[1:]
    # v1.32+: "upgrade apply|node phase <name>" and --skip-phases (cli_v1_32.UPGRADE_PHASED); before
    # v1.32 "apply phase x" is two arguments and node's --skip-phases a flag: the double runs the
    # sub-commands whole only, and says so rather than ignore a selection
    if args[:1] == ["phase"] and sub in getattr(CLI, "UPGRADE_PHASED", ()):
        raise Fail(f"the double does not run 'kubeadm upgrade {sub} phase ...' (the collection runs the whole command)")
    if "skip-phases" in fl:
        raise Fail(f"the double does not skip phases of 'kubeadm upgrade {sub}' (the collection skips none)")

    def last(name, default=""):
        return (fl.get(name) or [default])[-1]
    dry_run = last("dry-run", "false") == "true"
    if sub in ("plan", "apply") and len(args) > 1:
        raise Fail(f"accepts at most 1 arg(s), received {len(args)}")
    if sub == "node" and args:
        raise Fail(f'unknown command "{args[0]}" for "kubeadm upgrade node"')
    if sub == "apply" and not args:
        raise Fail("missing one or more required arguments. Required arguments: [version]" + STACK_HINT)
    control_plane = os.path.exists(f"{common.K8S}/manifests/kube-apiserver.yaml")
    kubeconfig = last("kubeconfig", f"{common.K8S}/admin.conf" if control_plane or sub != "node" else f"{common.K8S}/kubelet.conf")
    if sub == "node" and not control_plane and "kubeconfig" not in fl:
        kubeconfig = f"{common.K8S}/kubelet.conf"
    out("[upgrade] Reading configuration from the cluster..." if sub == "node" else "[preflight] Running pre-flight checks.")
    cluster = cluster_configuration(kubeconfig)
    current = str(cluster.get("kubernetesVersion", ""))
    kubelet_data = kubelet_config_data(kubeconfig) if sub in ("apply", "node") else None
    if sub in ("apply", "node") and getattr(CLI, "UPGRADE_PREFLIGHT", False):
        preflight.upgrade_preflight(fl)
    if sub == "node":
        if control_plane:
            out(f'[upgrade] Upgrading your Static Pod-hosted control plane instance to version "{current}"...')
            upgrade_static_pods(current, dry_run)
            if config_load.local_mode(cluster):
                upgrade_kubelet_local_mode(dry_run)
        else:
            out("[upgrade] Skipping phase. Not a control plane node.")
        upgrade_kubelet_config(kubeconfig, dry_run, cluster, kubelet_data)
        post_upgrade(dry_run)
        out("[upgrade] The configuration for this node was successfully updated!")
        out("[upgrade] Now you should go ahead and upgrade the kubelet package using your package manager.")
        return
    out("[upgrade] Running cluster health checks")
    server, ctx = cluster_api.kubeconfig_context(kubeconfig)
    try:
        urllib.request.urlopen(server.rstrip("/") + "/readyz", context=ctx, timeout=10).read()
    except (OSError, ValueError) as e:
        raise Fail(f"[upgrade/health] FATAL: the API Server is unhealthy; /readyz didn't return \"ok\": {e}")
    kubelets = kubelet_versions(kubeconfig)
    target = args[0] if args else CLI.VERSION
    if not target.startswith("v"):
        target = "v" + target
    enforce_version_policy(current, target, kubelets, last("force", "false") == "true")
    if sub == "plan":
        out("\nComponents that must be upgraded manually after you have upgraded the control plane with "
            "'kubeadm upgrade apply':\nCOMPONENT   NODE   CURRENT   TARGET")
        for node, v in sorted(kubelets.items()):
            out(f"kubelet     {node}   {v}   {target}")
        out("\nUpgrade to the latest stable version:\n\nCOMPONENT                 NODE   CURRENT   TARGET")
        for name in CONTROL_PLANE:
            out(f"{name:<25} -      {current}   {target}")
        out(f"\nYou can now apply the upgrade by executing the following command:\n\n\tkubeadm upgrade apply {target}\n")
        return
    if not ({"yes", "force"} & {k for k in fl if last(k) == "true"} or dry_run):
        print("[upgrade] Are you sure you want to proceed? [y/N]: ", end="", flush=True)
        answer = sys.stdin.readline().strip()
        if answer not in ("y", "Y"):
            raise Fail("won't proceed; the user didn't answer (Y|y) in order to continue" + STACK_HINT)
    out(f'[upgrade/apply] Upgrading your Static Pod-hosted control plane to version "{target}" (timeout: 5m0s)...')
    if not control_plane:
        raise Fail(f"[upgrade/apply] FATAL: couldn't upgrade control plane: open {common.K8S}/manifests/kube-apiserver.yaml: "
                   "no such file or directory")
    upgrade_static_pods(target, dry_run)
    if dry_run:
        out("[dryrun] Finished dryrunning successfully!")
        return
    st = common.load_state()
    st["configmaps"]["kubeadm-config"] = {"ClusterConfiguration": yaml.safe_dump(to_upload_api(cluster, target))}
    # upload-config's kubelet sub-phase uploads the kubelet configuration kubeadm read from the cluster at
    # its start (kubelet_config_data; kubeletphase.CreateConfigMap writes it back): what an operator put
    # there stays (the 1.35 release notes' cgroup v1 opt-out is an edit of that ConfigMap before the
    # upgrade), also across this master's API server restart above
    st["configmaps"]["kubelet-config"] = kubelet_data
    if "kube-proxy" in st.get("addons", {}):
        st["addons"]["kube-proxy"]["image"] = st["addons"]["kube-proxy"]["image"].rsplit(":", 1)[0] + ":" + target
    common.save_state(st)
    out('[upload-config] Storing the configuration used in ConfigMap "kubeadm-config" in the "kube-system" Namespace')
    if config_load.local_mode(cluster):
        upgrade_kubelet_local_mode(False)
    upgrade_kubelet_config(kubeconfig, False, cluster, kubelet_data)
    out("[addons] Applied essential addon: CoreDNS")
    out("[addons] Applied essential addon: kube-proxy")
    post_upgrade(False)
    out("")
    out(f'[upgrade/successful] SUCCESS! Your cluster was upgraded to "{target}". Enjoy!')
    out("")
    out("[upgrade/kubelet] Now that your control plane is upgraded, please proceed with upgrading your kubelets if "
        "you haven't already done so.")

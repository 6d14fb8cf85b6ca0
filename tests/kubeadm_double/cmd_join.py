"""`kubeadm join phase <phase> [<sub-phase>]` and `kubeadm join` whole (the release's JOIN_WORKFLOW minus
--skip-phases): preflight (preflight.py), check-etcd, control-plane-prepare, kubelet-start, the local
mode's etcd-join and kubelet-wait-bootstrap, control-plane-join (the stacked etcd member, added through
etcd_member.py), wait-control-plane."""
import base64
import contextlib
import os
import time
import urllib.request

import yaml

import certs
import cluster_api
import cmd_init
import command_line
import common
from common import CLI, STACK_HINT, DataFail, Fail, out
import config_load
import etcd_member
import kubeconfigs
import kubelet_files
import preflight
import static_pods


def run_join(phase, fl, docs, ignore=frozenset()):
    join = docs["JoinConfiguration"]
    node = config_load.node_ctx(docs)
    cp = join.get("controlPlane")
    group, dummy, sub = phase.partition(" ")
    if group == "preflight":
        preflight.join_preflight(join, node, ignore)
        return
    if group == "check-etcd":
        # checketcd.go: a control-plane join with stacked etcd checks the etcd cluster's health first
        dummy, dummy, cluster, dummy = cluster_api.discover(join)
        if cp and "external" not in (cluster.get("etcd") or {}):
            out("[check-etcd] Checking that the etcd cluster is healthy")
            try:
                nodes = cluster_api.cluster_get(f"{common.K8S}/admin.conf", "/api/v1/nodes", "the control-plane Nodes")
                etcd_member.Client(etcd_member.control_plane_endpoints(nodes), common.PKI).wait_available()
            except etcd_member.EtcdError as e:
                raise Fail(f"etcd cluster is not healthy: {e}") from None
        return
    if group in ("control-plane-prepare", "control-plane-join") and not cp:
        out(f"[{group}] Skipping phase: not a control-plane join")
        return
    if group == "control-plane-prepare":
        dummy, dummy, cluster, dummy = cluster_api.discover(join)
        if sub in ("all", "download-certs"):
            key = cp.get("certificateKey")
            if not key:
                out("[download-certs] Skipping certs download")
            else:
                st_up = None
                # the upload is recorded on the first master; the double cannot read it from here,
                # so it checks the key's form and that the shared files are in place
                for f in ("ca.crt", "ca.key", "sa.key", "sa.pub", "front-proxy-ca.crt", "front-proxy-ca.key"):
                    if not os.path.exists(f"{common.PKI}/{f}"):
                        raise Fail(f"error execution phase control-plane-prepare/download-certs: error downloading "
                                   f"certs: the double cannot download {common.PKI}/{f}")
                del st_up
                out("[download-certs] Downloading the certificates in Secret \"kubeadm-certs\" in the \"kube-system\" Namespace")
        if sub in ("all", "certs"):
            certs.phase_certs(cluster, node, join=True)
        if sub in ("all", "kubeconfig"):
            kubeconfigs.write_kubeconfigs(cluster, node, ["admin.conf", "controller-manager.conf", "scheduler.conf"])
        if sub in ("all", "control-plane"):
            static_pods.phase_control_plane(cluster, node)
    elif group == "kubelet-start":
        server, ca_pem, cluster, kubelet = cluster_api.discover(join)
        os.makedirs(common.PKI, exist_ok=True)
        if not os.path.exists(f"{common.PKI}/ca.crt"):
            with open(f"{common.PKI}/ca.crt", "wb") as f:
                f.write(ca_pem)
        # kubeadm writes bootstrap-kubelet.conf and (without the local mode) waits until kubelet.conf
        # is there and loads; the kubelet does the TLS bootstrap only when it has no usable
        # kubelet.conf. A kubelet.conf given to the node beforehand (the collection's pki phase) is
        # therefore kept as it is.
        if os.path.exists(f"{common.K8S}/kubelet.conf"):
            out("[kubelet-start] Using the existing kubelet.conf: no TLS Bootstrap needed")
        elif config_load.local_mode(cluster):
            # the local mode: a control-plane node bootstraps against its own API server
            own = f"https://{node['address']}:{node['port']}" if cp else server
            kubeconfigs.write_private(f"{common.K8S}/bootstrap-kubelet.conf", kubeconfigs.kubeconfig_text(
                own, "tls-bootstrap-token-user", ca_pem=ca_pem, token=join["discovery"]["bootstrapToken"]["token"]))
        else:
            kubeconfigs.write_private(f"{common.K8S}/kubelet.conf", kubeconfigs.kubeconfig_text(
                server, "default-auth", ca_pem=ca_pem, cert_file="/var/lib/kubelet/pki/kubelet-client-current.pem"))
        kubelet_files.write_kubelet_files(kubelet, node, cluster.get("imageRepository", "registry.k8s.io"), cluster)
        if not config_load.local_mode(cluster):
            out("[kubelet-start] Waiting for the kubelet to perform the TLS Bootstrap")
    elif group == "etcd-join":
        # RunIf: the local mode only; runEtcdPhase returns at once for a worker
        dummy, dummy, cluster, dummy = cluster_api.discover(join)
        if config_load.local_mode(cluster) and cp:
            join_stacked_etcd(cluster, node, f"{common.K8S}/admin.conf")   # joinData.Client: admin.conf
    elif group == "kubelet-wait-bootstrap":
        dummy, dummy, cluster, dummy = cluster_api.discover(join)
        if config_load.local_mode(cluster):
            wait_bootstrap()
    elif group == "control-plane-join":
        dummy, dummy, cluster, dummy = cluster_api.discover(join)
        # the etcd sub-phase's RunIf: the gate off (with it on, etcd-join adds the member: kubeadm#3262)
        if sub in ("all", "etcd") and not config_load.local_mode(cluster):
            join_stacked_etcd(cluster, node, f"{common.K8S}/admin.conf")   # joinData.Client: admin.conf
        if sub in ("all", "mark-control-plane"):
            cmd_init.mark_control_plane(docs, node)
            out(f"[mark-control-plane] Marking the node {node['name']} as control-plane")
    elif group == "wait-control-plane":
        if "WaitForAllControlPlaneComponents" not in CLI.FEATURE_GATES:
            # v1.35 (#134781): the gate is gone, the phase always waits on a control-plane node; a worker's
            # returns at once
            if cp:
                raise Fail("the double does not wait for the control-plane components (the collection waits itself)")
            return
        dummy, dummy, cluster, dummy = cluster_api.discover(join)
        if config_load.gate_on(cluster, "WaitForAllControlPlaneComponents"):
            raise Fail("the double does not wait for the control-plane components (the collection waits itself)")
        out("[wait-control-plane] Skipping phase (EXPERIMENTAL, feature gate WaitForAllControlPlaneComponents off)")
    else:
        raise Fail(f"the double does not implement 'join phase {phase}'")


def join_stacked_etcd(cluster, node, kubeconfig):
    """controlplanejoin.go runEtcdPhase and local.go CreateStackedEtcdStaticPodManifestFile: the data
    directory, the member announced to the cluster (a learner with EtcdLearnerMode), the manifest
    with every member and --initial-cluster-state=existing, the learner promoted, then the wait for
    the cluster to be available."""
    if "external" in (cluster.get("etcd") or {}):
        out("[control-plane-join] Using external etcd - no local stacked instance added")
        return
    data_dir = ((cluster.get("etcd") or {}).get("local") or {}).get("dataDir", "/var/lib/etcd")
    os.makedirs(data_dir, mode=0o700, exist_ok=True)
    url = etcd_member.peer_url(node["address"])
    try:
        nodes = cluster_api.cluster_get(kubeconfig, "/api/v1/nodes", "the control-plane Nodes")
        client = etcd_member.Client(etcd_member.control_plane_endpoints(nodes), common.PKI)
        client.sync()
        members = client.add_member(node["name"], url, etcd_member.learner_mode(cluster.get("featureGates")))
        out("[etcd] Announced new etcd member joining to the existing etcd cluster")
        static_pods.phase_etcd(cluster, node, initial_cluster=members)
        member_id = client.member_id(url)
        if member_id is None:
            raise etcd_member.EtcdError(f"no member id found for peer URL {url}")
        client.promote(member_id)
        out(f"[etcd] Waiting for the new etcd member to join the cluster. This can take up to "
            f"{etcd_member.HEALTHY_RETRIES * etcd_member.HEALTHY_INTERVAL:.0f}s")
        client.wait_available()
    except etcd_member.EtcdError as e:
        raise Fail(f"error creating local etcd static pod manifest file: {e}") from None


def kubelet_healthy():
    try:
        with urllib.request.urlopen("http://127.0.0.1:10248/healthz", timeout=2) as r:
            return r.read().strip() == b"ok"
    except OSError:
        return False


def wait_bootstrap(timeout=120):
    """kubelet-wait-bootstrap (phases/join/kubelet.go): wait for the kubelet's /healthz, then for
    kubelet.conf (the double's stand-in for the TLS bootstrap writes it from bootstrap-kubelet.conf:
    the kubelet double does no bootstrap), then remove bootstrap-kubelet.conf."""
    out("[kubelet-check] Waiting for a healthy kubelet at http://127.0.0.1:10248/healthz. This can take up to 4m0s")
    deadline = time.time() + timeout
    while not kubelet_healthy():
        if time.time() > deadline:
            raise Fail("error waiting for kubelet to be healthy: the kubelet is not running or healthy "
                       "(http://127.0.0.1:10248/healthz)")
        time.sleep(0.5)
    out("[kubelet-check] The kubelet is healthy")
    boot = f"{common.K8S}/bootstrap-kubelet.conf"
    if not os.path.exists(f"{common.K8S}/kubelet.conf"):
        out("[kubelet-start] Waiting for the kubelet to perform the TLS Bootstrap")
        try:
            cl = yaml.safe_load(open(boot))["clusters"][0]["cluster"]
        except (OSError, yaml.YAMLError, KeyError, IndexError, TypeError):
            raise Fail(f"couldn't read the bootstrap kubeconfig {boot}: the kubelet cannot bootstrap") from None
        kubeconfigs.write_private(f"{common.K8S}/kubelet.conf", kubeconfigs.kubeconfig_text(
            cl["server"], "default-auth", ca_pem=base64.b64decode(cl["certificate-authority-data"]),
            cert_file="/var/lib/kubelet/pki/kubelet-client-current.pem"))
    with contextlib.suppress(FileNotFoundError):
        os.remove(boot)


def run_join_workflow(args, fl):
    """`kubeadm join` whole (workflow/runner.go Run): the phases of CLI.JOIN_WORKFLOW in order, hidden ones
    included, but those --skip-phases names by generated name ("control-plane-prepare/certs"; a skipped
    parent skips its sub-phases; an unknown name: "invalid phase name"). The collection runs it with
    every phase skipped but the local mode's hidden ones (etcd-join, kubelet-wait-bootstrap)."""
    command_line.check_flags("join", set().union(*CLI.JOIN.values()) | {"skip-phases"}, fl)
    if len(args) > 1:
        raise Fail(f"accepts at most 1 arg(s), received {len(args)}")
    if "config" not in fl:
        raise Fail("the double needs --config (the collection always passes one)")
    skip = [s for v in fl.get("skip-phases") or [] for s in v.split(",") if s]
    groups = {p.split()[0]: [q.split()[1] for q in CLI.JOIN if q.startswith(p.split()[0] + " ") and not q.endswith(" all")]
              for p in CLI.JOIN if " " in p}
    known = set(CLI.JOIN_WORKFLOW) | {f"{g}/{s}" for g, subs in groups.items() for s in subs}
    # hidden sub-phases (v1.35's control-plane-join etcd): no command, still a name --skip-phases takes
    known |= {p.replace(" ", "/") for p in getattr(CLI, "JOIN_HIDDEN", ())}
    for s in skip:
        if s not in known:
            raise Fail(f"invalid phase name: {s}")
    docs = config_load.load_config(fl["config"][-1], "join")
    ignore = config_load.ignore_preflight_errors(fl.get("ignore-preflight-errors") or [], docs)
    for name in CLI.JOIN_WORKFLOW:
        if name in skip:
            continue
        subs = groups.get(name) or []
        kept = [s for s in subs if f"{name}/{s}" not in skip]
        phases = [f"{name} all"] if subs and kept == subs else [f"{name} {s}" for s in kept] if subs else [name]
        for phase in phases:
            try:
                run_join(phase, fl, docs, ignore)
            except DataFail:
                raise
            except Fail as e:
                raise Fail(f"error execution phase {phase.replace(' all', '').replace(' ', '/')}: {e}" + STACK_HINT) from None
    out("\nThis node has joined the cluster.")

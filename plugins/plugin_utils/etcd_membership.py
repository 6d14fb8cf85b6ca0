# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""External etcd members joining a running cluster (the etcd phase, roles/etcd/tasks/join.yml):
pure rules, read on the controller. Private to the collection.

etcd's runtime reconfiguration has two steps: `etcdctl member add NAME --peer-urls=URL` on the
running cluster, then the new member started with an empty data directory,
`initial-cluster-state: existing` and an `initial-cluster` naming every member of the cluster
(itself included), as `etcdctl member add` prints them (etcd-io/etcd
etcdctl/ctlv3/command/member_command.go, memberAddCommandFunc). A member started that way asks the
running members for the cluster and refuses to start unless the member counts are equal and every
member's peer URLs match one of initial-cluster's (server/etcdserver/api/membership/cluster.go,
ValidateClusterAndAssignIDs); it finds itself by its name. A member that was added but has not
started yet is listed without a name (etcd learns it when the member publishes itself): it is
recognised here by its peer URL, so a run that stopped between `member add` and the start resumes
without adding it twice.

Peers are dicts {host, name, peer_url}, in inventory order; `listed` is the JSON that
`etcdctl member list -w json` prints on a member with data.
"""
from __future__ import annotations

import json


def parse_members(listed):
    """The members of `etcdctl member list -w json`'s output, or None when it is not that."""
    try:
        members = json.loads(listed).get("members")
    except (TypeError, ValueError, AttributeError):
        return None
    return members if isinstance(members, list) else None


def _by_url(members):
    return {url: m for m in members for url in m.get("peerURLs") or ()}


def joining(peers, with_data):
    """The members that join a running cluster: those without data, in inventory order, when some
    member has data; none when no member has any (a new cluster forms)."""
    with_data = set(with_data)
    if not with_data:
        return []
    return [p["host"] for p in peers if p["host"] not in with_data]


def join_refusals(peers, with_data, listed, healthy, active):
    """Every reason members may not join now (an empty list: they may), each naming the host.

    with_data: hosts with a data directory; listed: `member list -w json` on the first of them
    (anything else when it did not answer); healthy: hosts with data whose etcd answers
    `endpoint health` (a read through the cluster: it needs quorum); active: hosts with data whose
    etcd service is active. A run resumed after `member add` (a new member listed, not started)
    only needs the members with data running: the cluster lost its quorum the moment the member was
    added (2 members of which 1 started) and gets it back when the new member starts.
    """
    new = joining(peers, with_data)
    if not new:
        return []
    first = next(p["host"] for p in peers if p["host"] in set(with_data))
    members = parse_members(listed)
    if members is None:
        return [f"{first}: its etcd does not answer `etcdctl member list` (is it running?); new members "
                f"({', '.join(new)}) join only a running cluster"]
    by_url = _by_url(members)
    known = {p["peer_url"] for p in peers}
    out = []
    for m in members:
        if not any(u in known for u in m.get("peerURLs") or ()):
            out.append(f"{first}: the cluster has member {m.get('name') or '(not started)'} "
                       f"({', '.join(m.get('peerURLs') or ())}) that is not in the etcd group: remove it "
                       "(etcdctl member remove) or put its host in the group")
    resuming = []
    for p in peers:
        m = by_url.get(p["peer_url"])
        if p["host"] in new and m is not None:
            if m.get("name"):
                out.append(f"{p['host']}: has no etcd data but the cluster lists it as started member "
                           f"{m['name']} (its data was lost): remove it (playbooks/remove_node.yml or etcdctl "
                           "member remove), then run again")
            else:
                resuming.append(p["host"])
        elif p["host"] not in new and m is None:
            out.append(f"{p['host']}: has etcd data but is not a member of the cluster {first} belongs to "
                       f"({p['peer_url']} not listed): data of another cluster?")
    for p in peers:
        host = p["host"]
        if host in new:
            continue
        if resuming and host not in set(active):
            out.append(f"{host}: its etcd is not running; {', '.join(resuming)} was added to the cluster "
                       "but not started, and starts only with the members with data running")
        elif not resuming and host not in set(healthy):
            out.append(f"{host}: its etcd is not healthy (etcdctl endpoint health failed); new members "
                       f"({', '.join(new)}) join only a healthy cluster with every member answering")
    return out


def join_step(peers, listed, host, assumed=()):
    """What joining `host` takes now: {"add": whether `member add` is still to do (not listed by
    its peer URL), "peer_url", "initial_cluster": the cluster's members with it, as its
    initial-cluster}. assumed: hosts to count as members already (check mode: those a real run
    would have added before this one)."""
    members = parse_members(listed)
    if members is None:
        raise ValueError(f"not the output of etcdctl member list -w json: {str(listed)[:200]!r}")
    peer = next(p for p in peers if p["host"] == host)
    by_peer_url = {p["peer_url"]: p for p in peers}
    pairs = []
    for m in members:
        for url in m.get("peerURLs") or ():
            # a member not started yet has no name: the inventory's, found by its peer URL
            name = m.get("name") or by_peer_url.get(url, {}).get("name") or ""
            if url == peer["peer_url"]:
                name = peer["name"]
            pairs.append((name, url))
    listed_urls = {url for dummy, url in pairs}
    for p in peers:
        if (p["host"] in set(assumed) or p["host"] == host) and p["peer_url"] not in listed_urls:
            pairs.append((p["name"], p["peer_url"]))
    return {"add": peer["peer_url"] not in listed_urls, "peer_url": peer["peer_url"],
            "initial_cluster": ",".join(f"{n}={u}" for n, u in pairs)}

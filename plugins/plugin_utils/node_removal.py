# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Whether a node may be removed from a site (playbooks/remove_node.yml): pure rules, checked on
the controller before anything is touched. Private to the collection.

Refused, naming the host and the reason:
- a name the inventory does not have;
- the last master (the cluster would have no control plane);
- an etcd member whose removal breaks quorum: etcd removes a member by a vote of the current
  cluster, so the members that answer must be a majority of the current members, and after the
  removal those left that answer must be a majority of the members left (etcd's quorum is
  floor(n/2)+1: etcd-io/etcd server/etcdserver/api/membership/cluster.go, IsReadyToRemoveVotingMember);
  the last member cannot be removed at all;
- an etcd member whose removal leaves an even membership (3 -> 2, 5 -> 4): etcd tolerates no
  more failures with 2 members than with 1, and the next install.yml with that inventory is
  refused (inventory_rules: etcd needs an odd number); carried out only with etcd_even=true
  (-e etcd_even=true), and then next_steps says what the next install needs;
- a node that does not answer, unless forced: it cannot be drained nor reset, it is only
  removed from the cluster (its Node object, its etcd membership) and must never come back
  as it is.
"""
from __future__ import annotations


def etcd_members(groups):
    """The etcd members: the etcd group, or the masters when etcd is stacked."""
    return list(groups.get("etcd") or groups.get("masters") or [])


def quorum(n):
    return n // 2 + 1


def _etcd_kind(groups):
    return ("external etcd (group etcd)" if groups.get("etcd") else "stacked etcd (one member per master)")


def even_after(node, groups):
    """(before, after) when removing node leaves an even, non-empty etcd membership, else None."""
    members = etcd_members(groups)
    if node not in members:
        return None
    before, after = len(members), len(members) - 1
    return (before, after) if after and after % 2 == 0 else None


def _even_message(node, groups):
    before, after = even_after(node, groups)
    left = [m for m in etcd_members(groups) if m != node]
    group = "etcd" if groups.get("etcd") else "masters"
    return (f"{_etcd_kind(groups)} goes from {before} to {after} members ({', '.join(left)}): etcd needs an odd "
            f"number (with {after} members it survives no more failures than with {after - 1}), and install.yml "
            f"with {node} out of the inventory is refused until the group {group} has {after + 1} members again: "
            f"put another host in the group {group} in {node}'s place (install.yml joins it as a member)")


def refusals(node, groups, unreachable=(), force=False, etcd_even=False):
    """Every reason the node may not be removed (an empty list: it may)."""
    everyone = set(groups.get("all") or ())
    if not node:
        return ["node: say which node to remove (-e node=NAME)"]
    if node not in everyone:
        return [f"{node}: not a host of this inventory"]
    out = []
    masters = list(groups.get("masters") or ())
    if node in masters and len(masters) == 1:
        out.append(f"{node}: the last master (the cluster would have no control plane)")
    members = etcd_members(groups)
    if node in members:
        down = set(unreachable)
        left = [m for m in members if m != node]
        answering_now = [m for m in members if m not in down]
        answering_left = [m for m in left if m not in down]
        if not left:
            out.append(f"{node}: the last etcd member (the cluster's data would be gone)")
        elif len(answering_now) < quorum(len(members)):
            out.append(f"{node}: breaks etcd quorum - only {len(answering_now)} of {len(members)} members answer "
                       f"({', '.join(sorted(down & set(members)))} do not); removing a member needs "
                       f"{quorum(len(members))}")
        elif len(answering_left) < quorum(len(left)):
            out.append(f"{node}: breaks etcd quorum - {len(answering_left)} of the {len(left)} members left answer "
                       f"({', '.join(sorted(down & set(left)))} do not); they need {quorum(len(left))}")
    if not out and even_after(node, groups) and not etcd_even:
        out.append(f"{node}: {_even_message(node, groups)}; -e etcd_even=true removes {node} and leaves "
                   f"{even_after(node, groups)[1]} members until then")
    if node in unreachable and not force:
        out.append(f"{node}: unreachable - it can be neither drained nor reset; -e force=true removes it from "
                   "the cluster anyway (never bring it back as it is)")
    return out


def next_steps(node, groups):
    """What the next install.yml needs after the node's removal (the inventory change), one line each."""
    out = [f"take {node} out of the inventory and run install.yml: on the remaining hosts it re-runs the phases "
           f"whose configuration named {node} (/etc/hosts, keepalived peers, haproxy backends) and says so"]
    if even_after(node, groups):
        out.append(f"etcd: {_even_message(node, groups)}")
    return out

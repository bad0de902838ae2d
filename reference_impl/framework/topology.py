"""The session's view of the network topology (framework/session.go, openSession).

The cache's hypernodes are copied, each one's real nodes narrowed to the session's nodes, and a virtual
cluster-top hypernode added above the highest tier, holding every node; tier names resolve to tiers and
soft-mode jobs become hard-mode jobs whose highest tier is the cluster top's, so that one search serves
both (adjustNetworkTopologySpec). A job's allocated hypernode is dropped when it is gone or the job has
no allocated task, and recovered from the nodes its tasks run on when empty.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from schedcheck.reference.api.hyper_node_info import (
    CLUSTER_TOP_HYPER_NODE,
    HyperNodeInfo,
    HyperNodesInfo,
    lca_hyper_node,
)
from schedcheck.reference.api.types import allocated_status

if TYPE_CHECKING:
    from schedcheck.reference.api.job_info import JobInfo
    from schedcheck.reference.framework.session import Session


def open_topology(ssn: Session, info: HyperNodesInfo) -> None:
    ssn.hyper_nodes = {name: hn.clone() for name, hn in info.hyper_nodes.items()}
    ssn.hyper_nodes_set_by_tier = {tier: set(names) for tier, names in info.set_by_tier.items()}
    ssn.hyper_node_tier_names = dict(info.tier_names)
    ssn.real_nodes_list, ssn.real_nodes_set = {}, {}
    for name, members in info.real_nodes_set.items():
        ssn.real_nodes_list[name] = [node for node in ssn.node_list if node.name in members]
        ssn.real_nodes_set[name] = {node.name for node in ssn.real_nodes_list[name]}
    ssn.hyper_nodes_ready = info.ready
    _add_cluster_top(ssn)
    ssn.hyper_nodes_tiers = sorted(ssn.hyper_nodes_set_by_tier)
    _adjust_network_topology(ssn)
    if ssn.hyper_nodes_ready:
        for job in ssn.jobs.values():
            _remove_invalid_allocated(ssn, job)
            _recover_allocated(ssn, job)


def _add_cluster_top(ssn: Session) -> None:
    top_tier = max([1] + [tier + 1 for tier in ssn.hyper_nodes_set_by_tier])
    top = HyperNodeInfo(CLUSTER_TOP_HYPER_NODE, top_tier)
    for hn in ssn.hyper_nodes.values():
        if not hn.parent:
            hn.parent = top.name
            top.children.add(hn.name)
    ssn.hyper_nodes[top.name] = top
    ssn.hyper_nodes_set_by_tier[top_tier] = {top.name}
    ssn.real_nodes_list[top.name] = list(ssn.node_list)
    ssn.real_nodes_set[top.name] = {node.name for node in ssn.node_list}


def _adjust_network_topology(ssn: Session) -> None:
    top_tier = ssn.hyper_nodes[CLUSTER_TOP_HYPER_NODE].tier
    for job in ssn.jobs.values():
        if not job.contains_network_topology():
            continue
        job.network_topology = copy.copy(job.network_topology)
        for sub in job.sub_jobs.values():
            sub.network_topology = copy.copy(sub.network_topology)
        for spec in (job.network_topology, *(sub.network_topology for sub in job.sub_jobs.values())):
            if spec is not None and spec.highest_tier_allowed is None and spec.highest_tier_name:
                if spec.highest_tier_name in ssn.hyper_node_tier_names:
                    spec.highest_tier_allowed = ssn.hyper_node_tier_names[spec.highest_tier_name]
                    spec.highest_tier_name = ""
        nt = job.network_topology
        if nt is not None and nt.mode == "soft":  # convertSoftToHardTopology
            nt.mode, nt.highest_tier_allowed, nt.highest_tier_name = "hard", top_tier, ""
        sub_max = nt.highest_tier_allowed if nt is not None and nt.highest_tier_allowed is not None else top_tier
        for sub_job in job.sub_jobs.values():
            sub = sub_job.network_topology
            if sub is not None and sub.mode == "soft":
                sub.mode, sub.highest_tier_allowed, sub.highest_tier_name = "hard", sub_max, ""


def _remove_invalid_allocated(ssn: Session, job: JobInfo) -> None:
    allocated = job.allocated_task_num()
    if job.allocated_hyper_node and (job.allocated_hyper_node not in ssn.hyper_nodes or allocated == 0):
        job.allocated_hyper_node = ""
    for sub in job.sub_jobs.values():
        if sub.allocated_hyper_node and (sub.allocated_hyper_node not in ssn.hyper_nodes
                                         or sub.allocated_task_num() == 0):
            sub.allocated_hyper_node = ""


def _recover_allocated(ssn: Session, job: JobInfo) -> None:
    """recoverAllocatedHyperNode: the lowest-tier hypernode holding every allocated task's node."""
    if not job.contains_network_topology():
        return
    updated = False
    for sub in job.sub_jobs.values():
        if sub.network_topology is None or sub.allocated_hyper_node:
            continue
        candidates: set[str] | None = None
        for task in sub.tasks():
            if not allocated_status(task.status) or not task.node_name:
                continue
            search = set(ssn.hyper_nodes) if candidates is None else candidates
            candidates = {hn for hn in search if task.node_name in ssn.real_nodes_set.get(hn, set())}
            if not candidates:
                break
        lowest = min((ssn.hyper_nodes[name] for name in sorted(candidates or ())), key=lambda hn: hn.tier,
                     default=None)
        recovered = lowest.name if lowest is not None else ""
        if recovered != sub.allocated_hyper_node:
            sub.allocated_hyper_node, updated = recovered, True
    if not job.allocated_hyper_node or updated:
        lca = ""
        for sub in job.sub_jobs.values():
            if sub.allocated_hyper_node:
                lca = lca_hyper_node(ssn.hyper_nodes, lca, sub.allocated_hyper_node)
                if not lca:
                    break
        job.allocated_hyper_node = lca

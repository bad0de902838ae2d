"""Warnings for a network topology that will not do what its author likely meant; upstream schedules on
regardless (a broken topology makes it hold back every job with a network topology)."""

from __future__ import annotations

from schedcheck.reference import k8s
from schedcheck.reference.api.hyper_node_info import build_hyper_nodes


def topology_warnings(objects: k8s.ClusterObjects, warnings: list[str]) -> None:
    if not objects.hyper_nodes:
        if any(pg.network_topology is not None for pg in objects.pod_groups):
            warnings.append("PodGroups ask for a network topology but there is no HyperNode: only the virtual "
                            "cluster-top hypernode exists, so every such job may use every node")
        return
    info = build_hyper_nodes(objects.hyper_nodes, objects.nodes)
    for error in info.errors:
        warnings.append(f"HyperNode: {error}; upstream then schedules no job with a network topology")
    names = {hn.name for hn in objects.hyper_nodes}
    nodes = {node.name for node in objects.nodes}
    tiers = {hn.name: hn.tier for hn in objects.hyper_nodes}
    for hn in objects.hyper_nodes:
        for member in hn.members:
            if member.type == "HyperNode" and member.exact not in names:
                warnings.append(f"HyperNode {hn.name}: member HyperNode {member.exact} does not exist")
            elif member.type == "HyperNode" and tiers[member.exact] >= hn.tier:
                warnings.append(f"HyperNode {hn.name}: member HyperNode {member.exact} has tier "
                                f"{tiers[member.exact]}, not below {hn.tier}")
            elif member.type == "Node" and member.exact and member.exact not in nodes:
                warnings.append(f"HyperNode {hn.name}: member Node {member.exact} does not exist")
    claimed: dict[tuple[int, str], str] = {}
    for hn in objects.hyper_nodes:
        for node in sorted(info.real_nodes_set.get(hn.name, ())):
            other = claimed.setdefault((hn.tier, node), hn.name)
            if other != hn.name:
                warnings.append(f"HyperNode {hn.name}: node {node} is also under {other} at tier {hn.tier}")
    tier_names = {hn.tier_name for hn in objects.hyper_nodes if hn.tier_name}
    for pg in objects.pod_groups:
        nt = pg.network_topology
        if nt is not None and nt.highest_tier_allowed is None and nt.highest_tier_name not in tier_names:
            warnings.append(f"PodGroup {pg.namespace}/{pg.name}: spec.networkTopology names no tier (highestTierName "
                            f"{nt.highest_tier_name!r} is no HyperNode's tierName); upstream then treats the job "
                            "as without a hard limit")

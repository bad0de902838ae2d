"""HyperNodes: the network topology as tiers of domains (pkg/scheduler/api/hyper_node_info.go).

A HyperNode's members are nodes (by exact name, regular expression or labels) or lower hypernodes (by
exact name). The cache resolves every hypernode to the set of real nodes beneath it and records parent
and children; a cycle, or a hypernode claimed by two parents, makes the topology not ready, and jobs
with a network topology then wait (allocate skips them), as upstream does.

The parent/child structure is kept as a networkx DiGraph (parent -> child), which gives the cycle check
and the ancestor walks. Upstream builds the cache incrementally as objects arrive, and its ready flag
follows the last update; the reference builds it once from all objects, ready when no error was found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import networkx as nx

from schedcheck.reference.k8s import HyperNode, HyperNodeMember, Node

CLUSTER_TOP_HYPER_NODE = "<cluster-top-hypernode>"


@dataclass
class HyperNodeInfo:
    name: str
    tier: int
    tier_name: str = ""
    parent: str = ""
    children: set[str] = field(default_factory=set)
    members: list[HyperNodeMember] = field(default_factory=list)

    def clone(self) -> HyperNodeInfo:
        return HyperNodeInfo(self.name, self.tier, self.tier_name, self.parent, set(self.children), self.members)


def node_members(member: HyperNodeMember, nodes: list[Node]) -> set[str]:
    """hypernodeutil.GetMembers: an exact name is taken as given (a node that does not exist yet
    is dropped later, by the session's node list); a regex or label selector matches existing nodes."""
    from schedcheck.reference.plugins.interpod_affinity import selector_matches

    if member.exact:
        return {member.exact}
    if member.regex:
        pattern = re.compile(member.regex)
        return {node.name for node in nodes if pattern.search(node.name)}
    selector = member.labels
    if selector is None or (not selector.match_labels and not selector.match_expressions):
        return set()
    return {node.name for node in nodes if selector_matches(selector, node.labels)}


@dataclass
class HyperNodesInfo:
    """The cache's topology: hypernodes, the real nodes under each, hypernodes by tier."""

    hyper_nodes: dict[str, HyperNodeInfo] = field(default_factory=dict)
    real_nodes_set: dict[str, set[str]] = field(default_factory=dict)
    set_by_tier: dict[int, set[str]] = field(default_factory=dict)
    tier_names: dict[str, int] = field(default_factory=dict)
    ready: bool = True
    errors: list[str] = field(default_factory=list)


def build_hyper_nodes(objects: list[HyperNode], nodes: list[Node]) -> HyperNodesInfo:
    info = HyperNodesInfo()
    graph = nx.DiGraph()
    for hn in objects:
        info.hyper_nodes[hn.name] = HyperNodeInfo(hn.name, hn.tier, hn.tier_name, members=list(hn.members))
        info.set_by_tier.setdefault(hn.tier, set()).add(hn.name)
        if hn.tier_name:
            info.tier_names[hn.tier_name] = hn.tier
        graph.add_node(hn.name)
    for hn in objects:
        for member in hn.members:
            if member.type != "HyperNode" or not member.exact:
                continue
            child = info.hyper_nodes.get(member.exact)
            if child is None:  # not created yet: upstream remembers the parent of a placeholder
                child = info.hyper_nodes[member.exact] = HyperNodeInfo(member.exact, 0)
                graph.add_node(member.exact)
            if child.parent and child.parent != hn.name:
                info.errors.append(f"HyperNode {member.exact} already has a parent {child.parent}, and cannot "
                                   f"set another parent {hn.name}")
                continue
            child.parent = hn.name
            info.hyper_nodes[hn.name].children.add(member.exact)
            graph.add_edge(hn.name, member.exact)
    try:
        cycle = nx.find_cycle(graph)
        info.errors.append(f"cyclic dependency among HyperNodes {', '.join(sorted({u for u, _ in cycle}))}")
    except nx.NetworkXNoCycle:
        pass
    if info.errors:
        info.ready = False
        return info
    created = {hn.name for hn in objects}
    for name in reversed(list(nx.topological_sort(graph))):  # children before parents
        if name not in created:
            continue  # a placeholder for a member not created
        real: set[str] = set()
        for member in info.hyper_nodes[name].members:
            if member.type == "Node":
                real |= node_members(member, nodes)
            elif member.exact in info.real_nodes_set:
                real |= info.real_nodes_set[member.exact]
        info.real_nodes_set[name] = real
    return info


def get_ancestors(hyper_nodes: dict[str, HyperNodeInfo], name: str) -> list[str]:
    """HyperNodeInfoMap.GetAncestors: the hypernode itself, then its parent, grandparent, ..."""
    ancestors = [name]
    current = name
    while True:
        hn = hyper_nodes.get(current)
        parent = hn.parent if hn is not None else ""
        if not parent or parent in ancestors:
            return ancestors
        ancestors.append(parent)
        current = parent


def lca_hyper_node(hyper_nodes: dict[str, HyperNodeInfo], first: str, second: str) -> str:
    """HyperNodeInfoMap.GetLCAHyperNode: the lowest common ancestor ("" when there is none)."""
    if not first:
        return second
    if not second:
        return first
    ancestors = set(get_ancestors(hyper_nodes, first))
    return next((a for a in get_ancestors(hyper_nodes, second) if a in ancestors), "")

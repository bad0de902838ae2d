"""Queue documents: weight, capability, guarantee, deserved, reclaimable, priority, state;
`queue_trees()` draws a hierarchy as a networkx tree rooted at `root`, and `hierarchical_queues()`
turns one into Queue documents with `spec.parent` (capacity) and the `volcano.sh/hierarchy`
annotations (hierarchical drf), with quotas that nest. Also `priority_classes()`."""


from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import networkx as nx
from hypothesis import strategies as st
from schedcheck.generators.quantities import (
    CPU,
    MEMORY,
    choice,
    rarely,
    sometimes,
)
from schedcheck.generators.vocabulary import (
    HIERARCHY,
    HIERARCHY_WEIGHTS,
    PRIORITY_CLASS_NAMES,
    QUEUE_NAMES,
    timestamp,
    unique_names,
)


@cache
@st.composite
def _cpu_memory(draw: st.DrawFn, max_cores: int, max_gi: int, min_cores: int = 1, min_gi: int = 1,
                shapes: tuple[tuple[str, ...], ...] = ((CPU, MEMORY), (CPU,), (MEMORY,))) -> dict[str, str]:
    """A queue quota: whole cores and Gi, one of the dimensions sometimes left out."""
    shape = draw(choice(tuple(shapes)))
    out = {}
    if CPU in shape and max_cores >= min_cores:
        out[CPU] = str(draw(st.integers(min_cores, max_cores)))
    if MEMORY in shape and max_gi >= min_gi:
        out[MEMORY] = f"{draw(st.integers(min_gi, max_gi))}Gi"
    return out


def _quota_values(quota: Mapping[str, str]) -> dict[str, int]:
    """A queue quota drawn by _cpu_memory as whole numbers (cores, Gi)."""
    out = {}
    if CPU in quota:
        out[CPU] = int(quota[CPU])
    if MEMORY in quota:
        out[MEMORY] = int(quota[MEMORY].removesuffix("Gi"))
    return out


def _quota_text(values: Mapping[str, int]) -> dict[str, str]:
    out = {}
    if CPU in values:
        out[CPU] = str(values[CPU])
    if MEMORY in values:
        out[MEMORY] = f"{values[MEMORY]}Gi"
    return out


@dataclass
class QuotaBounds:
    """Upper bounds, in whole cores and Gi, a queue's quotas must stay within (None: unbounded)."""

    capability: dict[str, int] | None = None
    deserved: dict[str, int] | None = None
    guarantee: dict[str, int] | None = None


_DEFAULT_MAX_CORES = 64
_DEFAULT_MAX_GI = 256


def _bounded(draw: st.DrawFn, bound: Mapping[str, int] | None, fallback: tuple[int, int],
             within: Mapping[str, int] | None = None) -> dict[str, int] | None:
    """Draw a quota no larger than `bound` and `within`; None when a bound leaves no room."""
    limits = {CPU: fallback[0], MEMORY: fallback[1]}
    for source in (bound, within):
        for name, value in (source or {}).items():
            limits[name] = min(limits[name], value)
    if limits[CPU] < 1 and limits[MEMORY] < 1:
        return None
    quota = draw(_cpu_memory(limits[CPU], limits[MEMORY]))
    return _quota_values(quota) or None


@st.composite
def queues(
    draw: st.DrawFn,
    name: str = "default",
    parent: str | None = None,
    deserved: bool = False,
    bounds: QuotaBounds | None = None,
    created: int = -86400,
    hierarchy: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """A Queue: weight, and sometimes capability, guarantee (within capability), deserved
    (capacity plugin; within capability), reclaimable, priority, a Closed state.

    `bounds` caps the quotas (a parent's, in a hierarchy); `hierarchy` is the
    (volcano.sh/hierarchy, volcano.sh/hierarchy-weights) pair for hierarchical drf.
    """
    bounds = bounds or QuotaBounds()
    spec: dict[str, Any] = {"weight": draw(st.integers(1, 10))}
    # The capability in force: the queue's own, each unset dimension inherited from the parent.
    capability = dict(bounds.capability) if bounds.capability else None
    if draw(sometimes(30)):
        own = _bounded(draw, bounds.capability, (_DEFAULT_MAX_CORES, _DEFAULT_MAX_GI))
        if own:
            spec["capability"] = _quota_text(own)
            capability = {**(capability or {}), **own}
    deserved_values = None
    if deserved and draw(sometimes(60)):
        deserved_values = _bounded(draw, bounds.deserved, (_DEFAULT_MAX_CORES, _DEFAULT_MAX_GI), capability)
        if deserved_values:
            spec["deserved"] = _quota_text(deserved_values)
    if draw(sometimes(25)):
        limit = dict(bounds.guarantee or {})
        for source in (capability, deserved_values):
            for dim, value in (source or {}).items():
                limit[dim] = min(limit.get(dim, value), value)
        guarantee = _bounded(draw, limit or None, (32, 128))
        if guarantee:
            spec["guarantee"] = {"resource": _quota_text(guarantee)}
    reclaimable = draw(choice((None, True, False)))
    if reclaimable is not None:
        spec["reclaimable"] = reclaimable
    priority = draw(choice((None, 0, 1, 10)))
    if priority is not None:
        spec["priority"] = priority
    if parent is not None:
        spec["parent"] = parent
    metadata: dict[str, Any] = {"name": name, "creationTimestamp": timestamp(created)}
    if hierarchy is not None:
        metadata["annotations"] = {HIERARCHY: hierarchy[0], HIERARCHY_WEIGHTS: hierarchy[1]}
    state = "Closed" if draw(rarely(4)) else "Open"
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": metadata,
        "spec": spec,
        "status": {"state": state},
    }


@st.composite
def queue_lists(
    draw: st.DrawFn,
    max_size: int = 3,
    deserved: bool = False,
    guarantee_total: Mapping[str, int] | None = None,
    min_size: int = 0,
) -> list[dict[str, Any]]:
    """Flat queues with distinct names ("default" first when drawn); [] leaves only the
    `default` queue the scheduler creates. Guarantees add up to at most `guarantee_total`."""
    names = draw(unique_names(QUEUE_NAMES, min(min_size, max_size), max_size))
    out = []
    left = dict(guarantee_total) if guarantee_total else None
    for i, name in enumerate(names):
        doc = draw(queues(name, deserved=deserved, bounds=QuotaBounds(guarantee=left), created=-86400 + 60 * i))
        if left is not None and "guarantee" in doc["spec"]:
            for dim, value in _quota_values(doc["spec"]["guarantee"]["resource"]).items():
                left[dim] = left.get(dim, 0) - value
        out.append(doc)
    return out


ROOT = "root"


@cache
@st.composite
def queue_trees(draw: st.DrawFn, min_queues: int = 1, max_queues: int = 4) -> nx.DiGraph:
    """A queue hierarchy: a networkx arborescence rooted at `root`, edges parent -> child.

    Each queue's parent is drawn among `root` and the queues before it, so the tree
    shrinks to a flat one (every queue directly under root). Node attribute `weight`
    is the queue's hierarchy weight (hierarchical drf).
    """
    names = draw(unique_names(QUEUE_NAMES, min_queues, max_queues))
    tree = nx.DiGraph()
    tree.add_node(ROOT, weight=1)
    for i, name in enumerate(names):
        parent_index = draw(st.integers(0, i))
        parent = ROOT if parent_index == 0 else names[parent_index - 1]
        tree.add_node(name, weight=draw(st.integers(1, 4)))
        tree.add_edge(parent, name)
    assert nx.is_arborescence(tree)
    return tree


def leaf_queues(tree: nx.DiGraph) -> list[str]:
    """Queues jobs may be submitted to (the capacity plugin rejects jobs in inner queues)."""
    return [n for n in nx.topological_sort(tree) if n != ROOT and tree.out_degree(n) == 0]


@st.composite
def hierarchical_queues(
    draw: st.DrawFn,
    tree: nx.DiGraph,
    deserved: bool = True,
    capability_total: Mapping[str, int] | None = None,
) -> list[dict[str, Any]]:
    """Queue documents for a tree from queue_trees(): spec.parent for the capacity plugin and
    the volcano.sh/hierarchy annotations for hierarchical drf.

    Quotas nest as upstream's webhook demands of a hierarchy: a child's capability within its
    parent's, the children's deserved and guarantees adding up to no more than the parent's.
    `root` itself is left to the scheduler (which creates it). `capability_total` bounds the
    top level's guarantees (the cluster's size).
    """
    docs: list[dict[str, Any]] = []
    # What is still free under each queue, for its remaining children.
    left_deserved: dict[str, dict[str, int] | None] = {ROOT: None}
    left_guarantee: dict[str, dict[str, int] | None] = {ROOT: dict(capability_total) if capability_total else None}
    capability_of: dict[str, dict[str, int] | None] = {ROOT: None}
    for i, name in enumerate(nx.topological_sort(tree)):
        if name == ROOT:
            continue
        parent = next(iter(tree.predecessors(name)))
        path = nx.shortest_path(tree, ROOT, name)
        weights = "/".join(str(tree.nodes[n].get("weight", 1)) for n in path)
        bounds = QuotaBounds(capability=capability_of[parent], deserved=left_deserved[parent],
                             guarantee=left_guarantee[parent])
        doc = draw(queues(name, parent=None if parent == ROOT else parent, deserved=deserved, bounds=bounds,
                          created=-86400 + 60 * i, hierarchy=("/".join(path), weights)))
        spec = doc["spec"]
        if parent == ROOT and draw(sometimes(30)):
            spec["parent"] = ROOT  # explicit, as many users write it
        own_capability = _quota_values(spec["capability"]) if "capability" in spec else None
        inherited = dict(capability_of[parent] or {})
        inherited.update(own_capability or {})
        capability_of[name] = inherited or None
        own_deserved = _quota_values(spec["deserved"]) if "deserved" in spec else None
        own_guarantee = _quota_values(spec["guarantee"]["resource"]) if "guarantee" in spec else None
        for left, own in ((left_deserved, own_deserved), (left_guarantee, own_guarantee)):
            if own and left[parent] is not None:
                for dim, value in own.items():
                    if dim in left[parent]:
                        left[parent][dim] -= value
        # A queue without its own quota shares its parent's pool with its children.
        left_deserved[name] = dict(own_deserved) if own_deserved else left_deserved[parent]
        left_guarantee[name] = dict(own_guarantee) if own_guarantee else left_guarantee[parent]
        docs.append(doc)
    return docs


# ---------------------------------------------------------------- priority classes


@cache
@st.composite
def priority_classes(draw: st.DrawFn, max_size: int = 3, never: bool = False) -> list[dict[str, Any]]:
    """PriorityClasses with distinct names; values shrink to 0 (all equal); at most one global default."""
    names = draw(unique_names(PRIORITY_CLASS_NAMES, 0, max_size))
    default = draw(choice((None, *names))) if names and draw(rarely(20)) else None
    out = []
    for name in names:
        doc: dict[str, Any] = {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": draw(choice((0, 10, 100, 1000, 1, -10))),
        }
        if name == default:
            doc["globalDefault"] = True
        if draw(sometimes(50) if never else rarely(10)):  # `never`: the swarm leans on non-preempting classes
            doc["preemptionPolicy"] = "Never"
        out.append(doc)
    return out


# ---------------------------------------------------------------- jobs



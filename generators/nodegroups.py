"""What the nodegroup plugin reads: the node label `volcano.sh/nodegroup-name`, a queue's spec.affinity
(nodeGroupAffinity / nodeGroupAntiAffinity, each with a required and a preferred list of groups) and the
queue annotation `volcano.sh/nodegroup-resource-limits` (JSON: group -> resource list), as the plugin's
user guide writes them.

Drawn only when the conf has nodegroup (scenarios.py). Most nodes carry a group and most queues an
affinity, since in strict mode (the default) a node without a group, and a queue without affinity, get
nothing. Everything shrinks to the plain case: every node in `pool-a`, every queue requiring `pool-a`
and nothing else, no limits. Running pods are placed without regard to their queue's groups: a label or
an affinity changed after they started moves no pod, so a queue may hold pods outside its groups, or
above its limits, as on a real cluster.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from hypothesis import strategies as st

from schedcheck.generators.quantities import CPU, MEMORY, choice, rarely, sometimes
from schedcheck.generators.vocabulary import NODE_GROUP_LABEL, NODE_GROUP_LIMITS, NODE_GROUPS, timestamp

_A, _B, _C = NODE_GROUPS
# A node's group: mostly one of the three (pool-a first, the shrink target), sometimes none.
_NODE_GROUP = st.sampled_from((_A, _A, _B, _B, _C, None))
# A list of groups in an affinity; order matters with enablePreferredOrder. The first is the shrink target.
_REQUIRED = st.sampled_from(((_A,), (_A, _B), (_B,), (_A, _B, _C), (_C,), ()))
_OPTIONAL = st.sampled_from(((), (), (_B,), (_A,), (_B, _A), (_C,), (_A, _C)))
_LIMIT_CPU = st.sampled_from(("4", "8", "2", "1", "16", "500m"))
_LIMIT_MEMORY = st.sampled_from(("8Gi", "16Gi", "4Gi", "32Gi", "1536Mi"))

AFFINITY = "nodeGroupAffinity"
ANTI_AFFINITY = "nodeGroupAntiAffinity"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def label_node_groups(node_docs: list[dict[str, Any]]) -> st.SearchStrategy[list[dict[str, Any]]]:
    """The nodes, each labelled with the group drawn for it (or left without one)."""
    return st.lists(_NODE_GROUP, min_size=len(node_docs), max_size=len(node_docs)).map(
        lambda groups: [_labelled(doc, group) for doc, group in zip(node_docs, groups, strict=True)])


def _labelled(doc: dict[str, Any], group: str | None) -> dict[str, Any]:
    if group is not None:
        doc["metadata"].setdefault("labels", {})[NODE_GROUP_LABEL] = group
    return doc


def _terms(required: tuple[str, ...], preferred: tuple[str, ...]) -> dict[str, list[str]]:
    out = {}
    if required:
        out[REQUIRED] = list(required)
    if preferred:
        out[PREFERRED] = list(preferred)
    return out


@st.composite
def queue_node_group_affinities(draw: st.DrawFn) -> dict[str, Any]:
    """A queue's spec.affinity: required groups (pool-a, the shrink target), sometimes preferred ones,
    rarely anti-affinity; rarely `{}`, an affinity with no group (set, so never inherited)."""
    if draw(rarely(4)):
        return {}
    affinity = {}
    terms = _terms(draw(_REQUIRED), draw(_OPTIONAL) if draw(sometimes(40)) else ())
    if terms:
        affinity[AFFINITY] = terms
    if draw(rarely(25)):
        anti = _terms(draw(_OPTIONAL), draw(_OPTIONAL))
        if anti:
            affinity[ANTI_AFFINITY] = anti
    return affinity


@st.composite
def node_group_limits(draw: st.DrawFn) -> str:
    """The resource-limits annotation: one or two groups, each limiting cpu, memory or both; quantities
    as strings, rarely as bare JSON numbers (which upstream's Quantity reads too)."""
    groups = draw(st.lists(choice(NODE_GROUPS), min_size=1, max_size=2, unique=True))
    bare = draw(rarely(10))
    doc: dict[str, dict[str, Any]] = {}
    for group in groups:
        shape = draw(choice(((CPU,), (CPU, MEMORY), (MEMORY,))))
        limits: dict[str, Any] = {}
        if CPU in shape:
            cpu = draw(_LIMIT_CPU)
            limits[CPU] = int(cpu) if bare and cpu.isdigit() else cpu
        if MEMORY in shape:
            limits[MEMORY] = draw(_LIMIT_MEMORY)
        doc[group] = limits
    return json.dumps(doc)


@cache
@st.composite
def node_group_queue(draw: st.DrawFn, inherit: bool = False) -> tuple[dict[str, Any] | None, str | None]:
    """(spec.affinity or None, the limits annotation or None) of one queue. With `inherit` (enableHierarchy)
    a queue is left without affinity more often, to take its ancestor's."""
    affinity = draw(queue_node_group_affinities()) if not draw(rarely(40 if inherit else 15)) else None
    limits = draw(node_group_limits()) if draw(rarely(25)) else None
    return affinity, limits


def apply_node_groups(draw: st.DrawFn, queue_docs: list[dict[str, Any]], inherit: bool) -> None:
    """Give each queue document its drawn affinity and limits (in place)."""
    for doc in queue_docs:
        affinity, limits = draw(node_group_queue(inherit))
        if affinity is not None:
            doc["spec"]["affinity"] = affinity
        if limits is not None:
            doc["metadata"].setdefault("annotations", {})[NODE_GROUP_LIMITS] = limits


def default_queue() -> dict[str, Any]:
    """The `default` queue as the scheduler creates it (weight 1, reclaimable), written out so that it can
    carry an affinity, as the nodegroup guide does."""
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "default", "creationTimestamp": timestamp(-86400 - 60)},
        "spec": {"weight": 1, "reclaimable": True},
        "status": {"state": "Open"},
    }

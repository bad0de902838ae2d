"""Passes over the scenario's frame and its objects: fewer cycles, a plainer wrapper, and whole
jobs, pods, nodes, queues and other objects dropped (ddmin-style, see `Drop`)."""

from __future__ import annotations

import copy
from typing import Any

from schedcheck import document as d
from schedcheck.minimize.edits import Doc, Edit, dropper, lower_int, without


def cycles_edits(doc: Doc) -> list[Edit]:
    cycles = doc.get("cycles")
    if not isinstance(cycles, int) or isinstance(cycles, bool) or cycles <= 1:
        return []

    def make(current: Doc) -> list[Doc]:
        out = []
        for n in lower_int(cycles, 1):
            candidate = copy.deepcopy(current)
            if n == 1:
                del candidate["cycles"]
            else:
                candidate["cycles"] = n
            out.append(candidate)
        return out
    return [("cycles", make)]


def wrapper_edits(doc: Doc) -> list[Edit]:
    edits: list[Edit] = []
    for name in ("expect", "now"):
        if name in doc:
            edits.append((f"drop {name}", dropper((name,))))
    for name in sorted(d.meta(doc)):
        if name != "name":
            edits.append((f"drop metadata.{name}", dropper(("metadata", name))))
    return edits


def job_items(doc: Doc) -> list[Any]:
    return [d.key(o) for _, o in d.typed(doc, "PodGroup")]


def drop_jobs(doc: Doc, jobs: set[Any]) -> Doc:
    """Without the PodGroups and their pods."""
    return without(doc, lambda o: not (isinstance(o, dict) and (
        (o.get("kind") == "PodGroup" and d.key(o) in jobs) or (o.get("kind") == "Pod" and d.pod_group(o) in jobs))))


def pod_items(doc: Doc) -> list[Any]:
    return [d.key(o) for _, o in d.typed(doc, "Pod")]


def drop_keys(doc: Doc, keys: set[Any]) -> Doc:
    return without(doc, lambda o: not (isinstance(o, dict) and d.key(o) in keys))


def free_node_items(doc: Doc) -> list[Any]:
    """Nodes no pod names (spec.nodeName, status.nominatedNodeName)."""
    named = set().union(*(d.pod_nodes(o) for _, o in d.typed(doc, "Pod")))
    return [d.key(o) for _, o in d.typed(doc, "Node") if d.key(o)[2] not in named]


def node_items(doc: Doc) -> list[Any]:
    return [d.key(o) for _, o in d.typed(doc, "Node")]


def drop_nodes_with_pods(doc: Doc, nodes: set[Any]) -> Doc:
    names = {name for _, _, name in nodes}
    return without(doc, lambda o: not (isinstance(o, dict) and (
        (o.get("kind") == "Node" and d.key(o) in nodes)
        or (o.get("kind") == "Pod" and d.sub(o, "spec").get("nodeName") in names))))


def queue_items(doc: Doc) -> list[Any]:
    """Queues no PodGroup (and no other queue, as parent) names."""
    named = {d.sub(o, "spec").get("queue") or "default" for _, o in d.typed(doc, "PodGroup")}
    named |= {d.sub(o, "spec").get("parent") for _, o in d.typed(doc, "Queue")}
    return [d.key(o) for _, o in d.typed(doc, "Queue") if d.key(o)[2] not in named]


def other_items(doc: Doc) -> list[Any]:
    return [d.key(o) for o in d.objects(doc) or [] if isinstance(o, dict) and o.get("kind") not in d.CORE_KINDS]

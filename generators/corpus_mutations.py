"""Mutations of corpus scenarios: the search starts from states that already matter.

The packaged scenarios (upstream's own unit-test cases, the hand-derived ones) sit exactly where the
scheduler's rules meet: a preemptor beside a queue at its bound, a gang one pod short, a reclaim across
hypernodes. A few small edits of such a scenario reach states near them that random generation rarely
does (a coverage-guided fuzzer's havoc stage over its seed corpus). Each edit is one of the operators
below; the edited scenario loses its `expect` block (the expectations were for the original), so only the
invariants judge it. Every choice shrinks towards the first scenario and no edit.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

from schedcheck.reference.api.devices.gpushare import GPU_INDEX
from schedcheck.reference.api.devices.vgpu import ASSIGNED_IDS
from schedcheck.reference.api.devices import ascend_hami

Doc = dict[str, Any]
MAX_EDITS = 4
ACTION_CHOICES = ("enqueue", "allocate", "backfill", "preempt", "reclaim")
FACTORS = (2.0, 0.5, 0.0, 3.0)


def corpus_mutations(docs: Sequence[Doc]) -> st.SearchStrategy[Doc]:
    """A corpus document with up to MAX_EDITS small edits; shrinks to the first document unedited."""
    if not docs:
        raise ValueError("corpus_mutations needs at least one document")
    return st.builds(_apply, st.sampled_from(list(docs)), st.lists(_edits(), max_size=MAX_EDITS))


Edit = tuple[str, int, int]  # (operator, which object, a small parameter)


def _edits() -> st.SearchStrategy[Edit]:
    return st.tuples(st.sampled_from(sorted(OPERATORS)), st.integers(0, 63), st.integers(0, 7))


def _apply(doc: Doc, edits: list[Edit]) -> Doc:
    out = copy.deepcopy(doc)
    out.pop("expect", None)
    metadata = out.get("metadata") if isinstance(out.get("metadata"), dict) else {}
    out["metadata"] = {"name": f"{metadata.get('name', 'corpus')}-edited"}  # no counterexample annotations
    for name, which, param in edits:
        OPERATORS[name](out, which, param)
    return out


def _objects(doc: Doc, kind: str) -> list[dict[str, Any]]:
    return [o for o in doc.get("objects") or [] if isinstance(o, dict) and o.get("kind") == kind]


def _pick(items: list[Any], which: int) -> Any:
    return items[which % len(items)] if items else None


QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)([A-Za-z]*)$")


def _scale(value: Any, factor: float) -> Any:
    """A quantity times a factor, its unit kept ("4Gi" -> "8Gi", "500m" -> "250m"); anything else as it was."""
    match = QUANTITY.match(str(value).strip())
    if match is None:
        return value
    scaled = Decimal(match.group(1)) * Decimal(str(factor))
    text = format(scaled.normalize(), "f") if scaled else "0"
    return f"{text}{match.group(2)}" if scaled else "0"


def drop_object(doc: Doc, which: int, param: int) -> None:
    """Remove a pod, a node, a PodGroup or a queue (references to it then dangle, as in a real cluster)."""
    kind = ("Pod", "Node", "PodGroup", "Queue")[param % 4]
    victim = _pick(_objects(doc, kind), which)
    if victim is not None and not (kind == "Node" and len(_objects(doc, "Node")) <= 1):
        doc["objects"].remove(victim)


def scale_request(doc: Doc, which: int, param: int) -> None:
    """Double, halve, zero or triple one resource of one container of a pod."""
    pod = _pick(_objects(doc, "Pod"), which)
    containers = ((pod or {}).get("spec") or {}).get("containers") or []
    requests = (((_pick(containers, param) or {}).get("resources") or {}).get("requests")) if containers else None
    if isinstance(requests, dict) and requests:
        name = sorted(requests)[param % len(requests)]
        requests[name] = _scale(requests[name], FACTORS[param % len(FACTORS)])


def scale_node(doc: Doc, which: int, param: int) -> None:
    """Double or halve one allocatable resource of a node."""
    node = _pick(_objects(doc, "Node"), which)
    allocatable = ((node or {}).get("status") or {}).get("allocatable")
    if isinstance(allocatable, dict) and allocatable:
        name = sorted(allocatable)[param % len(allocatable)]
        allocatable[name] = _scale(allocatable[name], (2.0, 0.5)[param % 2])


def change_priority(doc: Doc, which: int, param: int) -> None:
    """Give a pod another priority (and drop its class, so the number is what counts)."""
    pod = _pick(_objects(doc, "Pod"), which)
    if pod is not None and isinstance(pod.get("spec"), dict):
        pod["spec"]["priority"] = (0, 1, 10, 100, 1000, 5, 50, 500)[param]
        pod["spec"].pop("priorityClassName", None)


def change_min_member(doc: Doc, which: int, param: int) -> None:
    """A PodGroup's minMember one up or down (never below 1)."""
    group = _pick(_objects(doc, "PodGroup"), which)
    spec = (group or {}).get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("minMember", 1), int):
        spec["minMember"] = max(1, spec.get("minMember", 1) + (1 if param % 2 else -1))


def change_queue(doc: Doc, which: int, param: int) -> None:
    """A queue's weight changed, or its capability or guarantee dropped."""
    queue = _pick(_objects(doc, "Queue"), which)
    spec = (queue or {}).get("spec")
    if not isinstance(spec, dict):
        return
    if param % 3 == 0:
        spec["weight"] = (1, 2, 4, 8)[param % 4]
    elif param % 3 == 1:
        spec.pop("capability", None)
    else:
        spec.pop("guarantee", None)


def unbind_pod(doc: Doc, which: int, param: int) -> None:
    """A running pod made pending again (its node forgotten), or a pending one given its first node."""
    pod = _pick(_objects(doc, "Pod"), which)
    if pod is None or not isinstance(pod.get("spec"), dict):
        return
    status = pod.setdefault("status", {}) if isinstance(pod.get("status", {}), dict) else None
    if status is None:
        return
    if pod["spec"].get("nodeName"):
        pod["spec"].pop("nodeName")
        status["phase"] = "Pending"
        _forget_cards(pod)
    else:
        node = _pick(_objects(doc, "Node"), param)
        if node is not None:
            pod["spec"]["nodeName"] = (node.get("metadata") or {}).get("name")
            status["phase"] = "Running"


def clone_pod(doc: Doc, which: int, param: int) -> None:
    """One more pod like an existing one (same group, a new name and uid), pending."""
    pod = _pick(_objects(doc, "Pod"), which)
    if pod is None or not isinstance(pod.get("metadata"), dict):
        return
    twin = copy.deepcopy(pod)
    name = str(pod["metadata"].get("name", "pod"))
    parts = name.split("-")
    taken = {str((o.get("metadata") or {}).get("name")) for o in _objects(doc, "Pod") if isinstance(o.get("metadata"), dict)}
    serial = 100 + param
    # an indexed name (job-task-3) gets a fresh index, an unindexed one stays unindexed: a clone never
    # mixes the two kinds of name by itself (that mix is known finding F9, reached without it)
    indexed = len(parts) >= 3 and parts[-1].isdigit()
    while True:
        candidate = "-".join(parts[:-1] + [str(serial)]) if indexed else f"{name}x{serial}"
        if candidate not in taken:
            break
        serial += 1
    twin["metadata"]["name"] = candidate
    if "uid" in twin["metadata"]:
        twin["metadata"]["uid"] = f"{twin['metadata']['uid']}-clone{serial}"
    if isinstance(twin.get("spec"), dict):
        twin["spec"].pop("nodeName", None)
    twin["status"] = {"phase": "Pending"}
    _forget_cards(twin)
    doc["objects"].append(twin)


# The cards the scheduler wrote on a pod when it bound it (deviceshare): a pending pod has none, and the
# device pools charge what these name whenever the pod is placed.
CARD_ANNOTATIONS = (GPU_INDEX, ASSIGNED_IDS) + tuple(
    key for word in ascend_hami.common_words()
    for key in (ascend_hami.allocated_annotation(word), ascend_hami.to_allocate_annotation(word)))


def _forget_cards(pod: dict[str, Any]) -> None:
    annotations = (pod.get("metadata") or {}).get("annotations")
    if isinstance(annotations, dict):
        for key in CARD_ANNOTATIONS:
            annotations.pop(key, None)


def change_actions(doc: Doc, which: int, param: int) -> None:
    """Add an action the conf lacks, or drop one it has."""
    conf = doc.get("schedulerConf")
    if not isinstance(conf, dict) or not isinstance(conf.get("actions"), str):
        return
    actions = [a.strip() for a in conf["actions"].split(",") if a.strip()]
    extra = ACTION_CHOICES[param % len(ACTION_CHOICES)]
    if extra not in actions:
        actions.insert(min(len(actions), which % (len(actions) + 1)), extra)
    elif len(actions) > 1:
        actions.remove(extra)
    conf["actions"] = ", ".join(actions)


def drop_plugin(doc: Doc, which: int, param: int) -> None:
    """Remove one plugin from the tiers."""
    conf = doc.get("schedulerConf")
    tiers = conf.get("tiers") if isinstance(conf, dict) else None
    if not isinstance(tiers, list):
        return
    plugins = [(tier, p) for tier in tiers if isinstance(tier, dict) for p in tier.get("plugins") or []]
    if len(plugins) > 1:
        tier, plugin = _pick(plugins, which)
        tier["plugins"].remove(plugin)


def more_cycles(doc: Doc, which: int, param: int) -> None:
    """Run two or three sessions in a row (what one session left pending meets the next)."""
    doc["cycles"] = 2 + param % 2


OPERATORS: dict[str, Callable[[Doc, int, int], None]] = {
    "drop-object": drop_object, "scale-request": scale_request, "scale-node": scale_node,
    "priority": change_priority, "min-member": change_min_member, "queue": change_queue,
    "unbind-pod": unbind_pod, "clone-pod": clone_pod, "actions": change_actions, "drop-plugin": drop_plugin,
    "cycles": more_cycles,
}

"""Pipelined state kept on the pod across sessions (persistent mode only; seed 004, semantics §11).

Upstream (ed72c7c8) has none of this: the design comes from the unmerged PR #4552. Three pod
annotations carry a pipelined decision from one session to the next:
- pipelined-status "true" while the task is pipelined and not yet bound;
- pipelined-node, the node it is pipelined to;
- eviction-occurred "true" when evictions were made for it (reclaim or preempt).
Every write goes through `set_pipelined` / `clear_pipelined`, which replace the annotation mapping
rather than mutate it (a session's pod copies share the mapping) and leave other annotations alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from schedcheck.reference.k8s import Pod

PIPELINED_STATUS_ANNOTATION = "volcano.sh/pipelined-status"
PIPELINED_NODE_ANNOTATION = "volcano.sh/pipelined-node"
EVICTION_OCCURRED_ANNOTATION = "volcano.sh/eviction-occurred"
PIPELINED_ANNOTATIONS = (PIPELINED_STATUS_ANNOTATION, PIPELINED_NODE_ANNOTATION, EVICTION_OCCURRED_ANNOTATION)


@dataclass(frozen=True)
class PipelinedState:
    node: str
    eviction_occurred: bool


def read_pipelined(pod: Pod) -> PipelinedState | None:
    """The pipelined decision the pod carries, if any (status "true" and a node named)."""
    if pod.annotations.get(PIPELINED_STATUS_ANNOTATION) != "true":
        return None
    node = pod.annotations.get(PIPELINED_NODE_ANNOTATION, "")
    if not node:
        return None
    return PipelinedState(node, pod.annotations.get(EVICTION_OCCURRED_ANNOTATION) == "true")


def set_pipelined(pod: Pod, node: str, eviction_occurred: bool) -> bool:
    """Write the decision; False (and no write) when the pod already says exactly that."""
    wanted = {PIPELINED_STATUS_ANNOTATION: "true", PIPELINED_NODE_ANNOTATION: node}
    if eviction_occurred:
        wanted[EVICTION_OCCURRED_ANNOTATION] = "true"
    current = {k: v for k, v in pod.annotations.items() if k in PIPELINED_ANNOTATIONS}
    if current == wanted:
        return False
    others = {k: v for k, v in pod.annotations.items() if k not in PIPELINED_ANNOTATIONS}
    pod.annotations = {**others, **wanted}
    return True


def clear_pipelined(pod: Pod) -> bool:
    """Drop the three annotations; False (and no write) when there were none."""
    if not any(k in pod.annotations for k in PIPELINED_ANNOTATIONS):
        return False
    pod.annotations = {k: v for k, v in pod.annotations.items() if k not in PIPELINED_ANNOTATIONS}
    return True

"""Node documents: allocatable cpu, memory, pods and sometimes GPUs; zone labels; taints; cordoned
nodes (spec.unschedulable plus the taint `kubectl cordon` adds); optional usage annotations for the
usage and rescheduling plugins. Mostly a plain Ready node, the shrink target."""


from __future__ import annotations

from functools import cache
from typing import Any

from hypothesis import strategies as st
from schedcheck.generators.quantities import (
    CPU,
    GPU,
    MEMORY,
    PODS,
    choice,
    node_gpu_quantities,
    node_pods_quantities,
    node_shapes,
    rarely,
)
from schedcheck.generators.vocabulary import (
    ACCELERATOR_LABEL,
    CORDON_TAINT,
    CPU_USAGE,
    HOSTNAME_LABEL,
    IMAGES,
    MEM_USAGE,
    METRICS_TIME,
    NODE_TAINTS,
    ZONE_LABEL,
    ZONES,
    timestamp,
)

_DEDICATED, _SPOT, _GPU_TAINT, _MAINTENANCE = NODE_TAINTS
# (taints, cordoned, ready), one draw per node: mostly a plain Ready node (the shrink target).
_NODE_CONDITIONS = st.sampled_from(
    [((), False, True)] * 16
    + [((t,), False, True) for t in NODE_TAINTS]
    + [((_DEDICATED, _SPOT), False, True), ((_GPU_TAINT, _MAINTENANCE), False, True)]
    + [((), True, True), ((_DEDICATED,), True, True), ((), False, False)]
)


# The images a node holds (status.images): mostly none, the shrink target.
_NODE_IMAGES = st.sampled_from([()] * 6 + [(0,), (1,), (2,), (0, 2), (1, 2), (0, 1, 2)])


# ---------------------------------------------------------------- nodes


@cache
@st.composite
def nodes(
    draw: st.DrawFn,
    name: str = "node-0",
    gpu: bool | None = None,
    metrics: bool = False,
    metrics_time: str | None = None,
    odd: bool = True,
) -> dict[str, Any]:
    """A Node: allocatable (capacity the same), labels, sometimes taints, sometimes cordoned.

    `gpu`: True gives the node GPUs, False never, None sometimes. `metrics` adds the usage
    annotations the usage and rescheduling plugins read, sampled at `metrics_time`.
    """
    cpu, memory = draw(node_shapes(odd))
    allocatable = {CPU: cpu, MEMORY: memory, PODS: draw(node_pods_quantities())}
    has_gpu = gpu if gpu is not None else draw(rarely(20))
    labels = {HOSTNAME_LABEL: name, ZONE_LABEL: draw(choice(ZONES))}
    if has_gpu:
        allocatable[GPU] = draw(node_gpu_quantities())
        labels[ACCELERATOR_LABEL] = "nvidia"
    metadata: dict[str, Any] = {"name": name, "labels": labels}
    if metrics:
        metadata["annotations"] = {
            CPU_USAGE: str(draw(choice((10, 50, 90, 30, 70, 100, 0)))),
            MEM_USAGE: str(draw(choice((10, 50, 90, 30, 70)))),
            METRICS_TIME: metrics_time or timestamp(7200),
        }
    spec: dict[str, Any] = {}
    taints, cordoned, ready = draw(_NODE_CONDITIONS)
    if cordoned:  # kubectl cordon
        spec["unschedulable"] = True
        taints = (CORDON_TAINT, *taints)
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": metadata}
    if spec:
        doc["spec"] = spec
    doc["status"] = {
        "capacity": dict(allocatable),
        "allocatable": allocatable,
        "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
    }
    images = draw(_NODE_IMAGES)
    if images:
        doc["status"]["images"] = [{"names": list(IMAGES[i][1]), "sizeBytes": IMAGES[i][2]} for i in images]
    return doc


def rename_node(doc: dict[str, Any], name: str) -> dict[str, Any]:
    doc["metadata"]["name"] = name
    doc["metadata"]["labels"][HOSTNAME_LABEL] = name
    return doc


@cache
def node_lists(
    min_size: int = 1,
    max_size: int = 4,
    gpu: bool | None = None,
    metrics: bool = False,
    metrics_time: str | None = None,
    odd: bool = True,
) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Nodes named node-0, node-1, ... (names follow list order, so shrinking keeps them dense)."""
    return st.lists(
        nodes(gpu=gpu, metrics=metrics, metrics_time=metrics_time, odd=odd), min_size=min_size, max_size=max_size
    ).map(lambda docs: [rename_node(d, f"node-{i}") for i, d in enumerate(docs)])


# ---------------------------------------------------------------- node ledger



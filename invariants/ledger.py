"""Node ledgers as numpy matrices (nodes x resource dimensions), for vectorised checks.

One pass over the nodes and their stored tasks builds every matrix; the checks
themselves are whole-array comparisons.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.resource_info import CPU, MEMORY, MIN_RESOURCE, Resource
from schedcheck.reference.api.types import TaskStatus

TOLERANCE = MIN_RESOURCE


@dataclass
class Ledger:
    names: list[str]  # node names, one row each
    dims: list[str]  # resource dimensions, one column each
    allocatable: np.ndarray
    idle: np.ndarray
    used: np.ndarray
    releasing: np.ndarray
    pipelined: np.ndarray
    future_idle: np.ndarray  # the node's own (possibly cached) FutureIdle
    sum_used: np.ndarray  # Σ request of stored tasks that are not Pipelined
    sum_releasing: np.ndarray  # Σ request of stored Releasing tasks
    sum_pipelined: np.ndarray  # Σ request of stored Pipelined tasks


def build_ledger(nodes: list[NodeInfo]) -> Ledger:
    dims = [CPU, MEMORY]
    seen = set(dims)
    for node in nodes:
        for resource in (node.allocatable, node.idle, node.used, node.releasing, node.pipelined):
            for name in resource.scalars or ():
                if name not in seen:
                    seen.add(name)
                    dims.append(name)
    index = {d: i for i, d in enumerate(dims)}
    shape = (len(nodes), len(dims))
    arrays = {k: np.zeros(shape) for k in ("a", "i", "u", "r", "p", "f", "su", "sr", "sp")}

    def put(key: str, row: int, resource: Resource) -> None:
        target = arrays[key][row]
        target[0] += resource.milli_cpu
        target[1] += resource.memory
        for name, value in (resource.scalars or {}).items():
            target[index[name]] += value

    for row, node in enumerate(nodes):
        put("a", row, node.allocatable)
        put("i", row, node.idle)
        put("u", row, node.used)
        put("r", row, node.releasing)
        put("p", row, node.pipelined)
        put("f", row, node.future_idle_view())
        if node.node is None:
            continue  # an uninitialised node keeps no ledger
        for task in node.tasks.values():
            for name in (task.resreq.scalars or ()):
                if name not in index:  # a dimension only a task has: extend the matrices
                    index[name] = len(dims)
                    dims.append(name)
                    for key in arrays:
                        arrays[key] = np.hstack([arrays[key], np.zeros((len(nodes), 1))])
            if task.status == TaskStatus.Pipelined:
                put("sp", row, task.resreq)
            else:
                put("su", row, task.resreq)
                if task.status == TaskStatus.Releasing:
                    put("sr", row, task.resreq)
    return Ledger([n.name for n in nodes], dims, arrays["a"], arrays["i"], arrays["u"], arrays["r"],
                  arrays["p"], arrays["f"], arrays["su"], arrays["sr"], arrays["sp"])


def mismatches(ledger: Ledger, left: np.ndarray, right: np.ndarray) -> list[tuple[str, str, float, float]]:
    """(node, dimension, left, right) wherever |left - right| exceeds the tolerance."""
    bad = np.argwhere(np.abs(left - right) > np.maximum(TOLERANCE, 1e-9 * np.abs(right)))
    return [(ledger.names[r], ledger.dims[c], float(left[r, c]), float(right[r, c])) for r, c in bad]


def negatives(ledger: Ledger, values: np.ndarray) -> list[tuple[str, str, float]]:
    bad = np.argwhere(values < -TOLERANCE)
    return [(ledger.names[r], ledger.dims[c], float(values[r, c])) for r, c in bad]

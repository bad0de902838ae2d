"""Node ledgers: what the six node-ledger rules find, and the general ledger that says it independently.

The rules read `verdicts_over` (`operation_verdicts` for an operation's node): node by node, in plain
floats, each dimension judged as it is read. The general ledger (`build_ledger`, `verdicts_of`: matrices of
nodes x dimensions, numpy for many nodes and Python rows for a few) was the rules' until stop 34; it stays
as the differential tests' oracle (tests/invariants/test_operation_verdicts.py), which holds the two to the
same findings in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.resource_info import CPU, MEMORY, MIN_RESOURCE, Resource
from schedcheck.reference.api.types import TaskStatus

TOLERANCE = MIN_RESOURCE


# Ledgers of at most this many nodes keep Python rows, not numpy: the six node rules over a ledger of 2, 4 and
# 8 nodes took 70, 81, 142 us with numpy and 31, 44, 114 us with rows; from 16 nodes numpy is faster.
ROWS_UP_TO = 12


class Rows:
    """A few ledger rows as Python floats, with numpy's elementwise + and -: for the one-node ledger of every
    operation checkpoint, numpy's cost per call exceeds the arithmetic. IEEE doubles either way, so the
    sums and comparisons give the same numbers."""

    __slots__ = ("rows",)

    def __init__(self, rows: list[list[float]]) -> None:
        self.rows = rows

    def __add__(self, other: Rows) -> Rows:
        return Rows([[a + b for a, b in zip(x, y)] for x, y in zip(self.rows, other.rows)])

    def __sub__(self, other: Rows) -> Rows:
        return Rows([[a - b for a, b in zip(x, y)] for x, y in zip(self.rows, other.rows)])


Matrix = np.ndarray | Rows


@dataclass
class Ledger:
    names: list[str]  # node names, one row each
    dims: list[str]  # resource dimensions, one column each
    allocatable: Matrix
    idle: Matrix
    used: Matrix
    releasing: Matrix
    pipelined: Matrix
    future_idle: Matrix  # the node's own (possibly cached) FutureIdle
    sum_used: Matrix  # Σ request of stored tasks that are not Pipelined
    sum_releasing: Matrix  # Σ request of stored Releasing tasks
    sum_pipelined: Matrix  # Σ request of stored Pipelined tasks


KEYS = ("a", "i", "u", "r", "p", "f", "su", "sr", "sp")


def build_ledger(nodes: list[NodeInfo]) -> Ledger:
    """Rows summed in Python floats, in node, then resource, then task order; numpy matrices for more than
    ROWS_UP_TO nodes, Rows otherwise."""
    dims, rows = _ledger_rows(nodes)
    if len(nodes) <= ROWS_UP_TO:
        m: dict[str, Matrix] = {k: Rows(v) for k, v in rows.items()}
    else:
        shape = (len(nodes), len(dims))
        m = {k: np.array(v, dtype=float).reshape(shape) for k, v in rows.items()}
    return Ledger([n.name for n in nodes], dims, m["a"], m["i"], m["u"], m["r"], m["p"], m["f"], m["su"], m["sr"],
                  m["sp"])


def node_dimensions(nodes: list[NodeInfo]) -> list[str]:
    """cpu, memory, then the scalars of the nodes' own resources (Allocatable, Idle, Used, Releasing, Pipelined),
    in node and then resource order: the first columns of a ledger of these nodes."""
    dims = [CPU, MEMORY]
    for node in nodes:
        for resource in (node.allocatable, node.idle, node.used, node.releasing, node.pipelined):
            for name in resource.scalars or ():
                if name not in dims:
                    dims.append(name)
    return dims


def _ledger_rows(nodes: list[NodeInfo]) -> tuple[list[str], dict[str, list[list[float]]]]:
    """The dimensions and one row per node for each key: the dimensions fixed first (the nodes' own, then those
    only a task has, in task order), then each resource and request added in place."""
    dims = node_dimensions(nodes)
    index = {name: i for i, name in enumerate(dims)}
    for node in nodes:  # a dimension only a task has comes after the nodes' own, in task order
        if node.node is not None:
            for task in node.tasks.values():
                for name in task.resreq.scalars or ():
                    if name not in index:
                        index[name] = len(dims)
                        dims.append(name)
    width = len(dims)

    def vector(resource: Resource) -> list[float]:
        values = [0.0] * width
        values[0] += resource.milli_cpu
        values[1] += resource.memory
        for name, value in (resource.scalars or {}).items():
            values[index[name]] += value
        return values

    rows: dict[str, list[list[float]]] = {k: [] for k in KEYS}
    pipelined_status, releasing_status = TaskStatus.Pipelined, TaskStatus.Releasing
    for node in nodes:
        rows["a"].append(vector(node.allocatable))
        rows["i"].append(vector(node.idle))
        rows["u"].append(vector(node.used))
        rows["r"].append(vector(node.releasing))
        rows["p"].append(vector(node.pipelined))
        rows["f"].append(vector(node.future_idle_view()))
        su, sr, sp = [0.0] * width, [0.0] * width, [0.0] * width
        if node.node is not None:  # an uninitialised node keeps no ledger
            for task in node.tasks.values():
                request = task.resreq
                if task.status == pipelined_status:
                    targets: tuple[list[float], ...] = (sp,)
                elif task.status == releasing_status:
                    targets = (su, sr)
                else:
                    targets = (su,)
                scalars = request.scalars
                for target in targets:
                    target[0] += request.milli_cpu
                    target[1] += request.memory
                    if scalars:
                        for name, value in scalars.items():
                            target[index[name]] += value
        rows["su"].append(su)
        rows["sr"].append(sr)
        rows["sp"].append(sp)
    return dims, rows


@dataclass
class NodeVerdicts:
    """What the six node-ledger rules find, worked out together (node, dimension, found, expected)."""

    ledger: list[tuple[str, str, float, float]]  # Idle + Used against Allocatable
    used_sum: list[tuple[str, str, float, float]]  # Used against the summed requests
    releasing_sum: list[tuple[str, str, float, float]]
    pipelined_sum: list[tuple[str, str, float, float]]
    future_idle: list[tuple[str, str, float, float]]  # FutureIdle against Idle + Releasing - Pipelined
    negative: list[tuple[str, str, str, float]]  # (Used | Releasing | Pipelined, node, dimension, value)


def verdicts_of(ledger: Ledger) -> NodeVerdicts:
    """The six rules' findings over a ledger of any size."""
    return NodeVerdicts(
        mismatches(ledger, ledger.idle + ledger.used, ledger.allocatable),
        mismatches(ledger, ledger.used, ledger.sum_used),
        mismatches(ledger, ledger.releasing, ledger.sum_releasing),
        mismatches(ledger, ledger.pipelined, ledger.sum_pipelined),
        mismatches(ledger, ledger.future_idle, ledger.idle + ledger.releasing - ledger.pipelined),
        [(label, node, dim, value) for label, values in (("Used", ledger.used), ("Releasing", ledger.releasing),
                                                         ("Pipelined", ledger.pipelined))
         for node, dim, value in negatives(ledger, values)])


def operation_verdicts(node: NodeInfo) -> NodeVerdicts:
    """The six rules' findings on one node (an operation's): `verdicts_over([node])`."""
    return verdicts_over([node])


def verdicts_over(nodes: list[NodeInfo]) -> NodeVerdicts:
    """The six rules' findings over these nodes, node by node in plain floats: numpy's per-call cost, and
    building each rule's rows apart, exceeded the arithmetic. The same dimensions (the nodes' own, then those
    only a task has, in task order), the same sums and differences of IEEE doubles in the same order, and the
    findings in the same order as `verdicts_of(build_ledger(nodes))`."""
    dims = node_dimensions(nodes)
    sums = [_task_sums(node) for node in nodes]
    for node_sums in sums:  # a dimension only a task has comes after the nodes' own
        for name in node_sums[6]:
            if name not in dims:
                dims.append(name)
    found = NodeVerdicts([], [], [], [], [], [])
    negative: tuple[list, list, list] = ([], [], [])
    for node, node_sums in zip(nodes, sums):
        _judge_node(node, dims, node_sums, found, negative)
    found.negative = negative[0] + negative[1] + negative[2]
    return found


def _task_sums(node: NodeInfo) -> tuple[float, float, float, float, float, float, dict[str, list[float]]]:
    """The node's tasks' requests summed: used, releasing and pipelined cpu and memory, and per scalar (in task
    order) [used, releasing, pipelined]."""
    used_cpu = used_memory = releasing_cpu = releasing_memory = pipelined_cpu = pipelined_memory = 0.0
    scalar_sums: dict[str, list[float]] = {}
    if node.node is not None:  # an uninitialised node keeps no ledger
        pipelined_status, releasing_status = TaskStatus.Pipelined, TaskStatus.Releasing
        for task in node.tasks.values():
            request = task.resreq
            status = task.status
            if status == pipelined_status:
                pipelined_cpu += request.milli_cpu
                pipelined_memory += request.memory
                slots: tuple[int, ...] = (2,)
            elif status == releasing_status:
                used_cpu += request.milli_cpu
                used_memory += request.memory
                releasing_cpu += request.milli_cpu
                releasing_memory += request.memory
                slots = (0, 1)
            else:
                used_cpu += request.milli_cpu
                used_memory += request.memory
                slots = (0,)
            if request.scalars:
                for name, value in request.scalars.items():
                    sums = scalar_sums.get(name)
                    if sums is None:
                        sums = scalar_sums[name] = [0.0, 0.0, 0.0]
                    for slot in slots:
                        sums[slot] += value
    return used_cpu, used_memory, releasing_cpu, releasing_memory, pipelined_cpu, pipelined_memory, scalar_sums


def _judge_node(node: NodeInfo, dims: list[str], node_sums: tuple, found: NodeVerdicts,
                negative: tuple[list, list, list]) -> None:
    used_cpu, used_memory, releasing_cpu, releasing_memory, pipelined_cpu, pipelined_memory, scalar_sums = node_sums
    resources = (node.allocatable, node.idle, node.used, node.releasing, node.pipelined)
    future = node.future_idle_view()
    allocatable, idle, used, releasing, pipelined = resources
    name = node.name
    tolerance = TOLERANCE
    no_scalars: dict[str, float] = {}
    for c, dim in enumerate(dims):  # the values read in place, each dimension judged as it is read
        if c == 0:
            a, i, u, r, p, f = (allocatable.milli_cpu, idle.milli_cpu, used.milli_cpu, releasing.milli_cpu,
                                pipelined.milli_cpu, future.milli_cpu)
            su, sr, sp = used_cpu, releasing_cpu, pipelined_cpu
        elif c == 1:
            a, i, u, r, p, f = (allocatable.memory, idle.memory, used.memory, releasing.memory, pipelined.memory,
                                future.memory)
            su, sr, sp = used_memory, releasing_memory, pipelined_memory
        else:
            a, i, u, r, p, f = ((resource.scalars or no_scalars).get(dim, 0.0)
                                for resource in (allocatable, idle, used, releasing, pipelined, future))
            su, sr, sp = scalar_sums.get(dim, (0.0, 0.0, 0.0))
        want = i + r - p
        # each bound is _bound(expected), written out: this runs at every ledger operation
        bound = 1e-9 * abs(a)
        if abs(i + u - a) > (bound if bound != bound or bound > tolerance else tolerance):
            found.ledger.append((name, dim, i + u, a))
        bound = 1e-9 * abs(su)
        if abs(u - su) > (bound if bound != bound or bound > tolerance else tolerance):
            found.used_sum.append((name, dim, u, su))
        bound = 1e-9 * abs(sr)
        if abs(r - sr) > (bound if bound != bound or bound > tolerance else tolerance):
            found.releasing_sum.append((name, dim, r, sr))
        bound = 1e-9 * abs(sp)
        if abs(p - sp) > (bound if bound != bound or bound > tolerance else tolerance):
            found.pipelined_sum.append((name, dim, p, sp))
        bound = 1e-9 * abs(want)
        if abs(f - want) > (bound if bound != bound or bound > tolerance else tolerance):
            found.future_idle.append((name, dim, f, want))
        if u < -tolerance:
            negative[0].append(("Used", name, dim, u))
        if r < -tolerance:
            negative[1].append(("Releasing", name, dim, r))
        if p < -tolerance:
            negative[2].append(("Pipelined", name, dim, p))


def mismatches(ledger: Ledger, left: Matrix, right: Matrix) -> list[tuple[str, str, float, float]]:
    """(node, dimension, left, right) wherever |left - right| exceeds the tolerance, row by row."""
    if isinstance(left, Rows) and isinstance(right, Rows):
        return [(ledger.names[r], ledger.dims[c], lv, rv)
                for r, (lrow, rrow) in enumerate(zip(left.rows, right.rows))
                for c, (lv, rv) in enumerate(zip(lrow, rrow)) if abs(lv - rv) > _bound(rv)]
    bad = np.argwhere(np.abs(left - right) > np.maximum(TOLERANCE, 1e-9 * np.abs(right)))
    return [(ledger.names[r], ledger.dims[c], float(left[r, c]), float(right[r, c])) for r, c in bad]


def _bound(right: float) -> float:
    """np.maximum(TOLERANCE, 1e-9 * |right|) for one value (NaN propagates, as numpy's does)."""
    scaled = 1e-9 * abs(right)
    return scaled if scaled != scaled or scaled > TOLERANCE else TOLERANCE


def negatives(ledger: Ledger, values: Matrix) -> list[tuple[str, str, float]]:
    if isinstance(values, Rows):
        return [(ledger.names[r], ledger.dims[c], v) for r, row in enumerate(values.rows)
                for c, v in enumerate(row) if v < -TOLERANCE]
    bad = np.argwhere(values < -TOLERANCE)
    return [(ledger.names[r], ledger.dims[c], float(values[r, c])) for r, c in bad]

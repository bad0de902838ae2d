"""The numpy node ledger the node rules share (invariants/ledger.py)."""

from __future__ import annotations

import numpy as np

from schedcheck.invariants.ledger import build_ledger, mismatches, negatives
from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.k8s import Container
from schedcheck.reference.quantity import Quantity
from tests.builders import GPU, GI, node, pod


def _task(name: str, status: TaskStatus, gpu: str = "") -> TaskInfo:
    p = pod(name, cpu="1", memory="1Gi")
    if gpu:
        p.containers = [Container("main", {**p.containers[0].requests, GPU: Quantity.parse(gpu)})]
    task = TaskInfo(p)
    task.status = status
    return task


def test_rows_sum_each_class_and_a_dimension_only_a_task_has_widens_every_row(monkeypatch):
    from schedcheck.invariants import ledger as module

    monkeypatch.setattr(module, "ROWS_UP_TO", 0)  # numpy's indexing below
    busy, empty = NodeInfo(node("n1")), NodeInfo(node("n2", cpu="2"))
    busy.add_task(_task("run", TaskStatus.Running))
    busy.add_task(_task("gone", TaskStatus.Releasing))
    busy.add_task(_task("later", TaskStatus.Pipelined, gpu="1"))  # the node reports no GPU
    ledger = build_ledger([busy, empty])
    assert ledger.names == ["n1", "n2"] and ledger.dims[:2] == ["cpu", "memory"] and GPU in ledger.dims
    gpu = ledger.dims.index(GPU)
    assert ledger.sum_used[0, :2].tolist() == [2000.0, 2.0 * GI]  # Running + Releasing
    assert ledger.sum_releasing[0, :2].tolist() == [1000.0, 1.0 * GI]
    assert ledger.sum_pipelined[0, gpu] == 1000.0 and ledger.sum_pipelined[0, 0] == 1000.0
    assert ledger.allocatable[1, 0] == 2000.0 and not ledger.sum_used[1].any()
    assert ledger.future_idle.shape == ledger.idle.shape == (2, len(ledger.dims))
    assert np.array_equal(ledger.future_idle, ledger.idle + ledger.releasing - ledger.pipelined)
    assert not mismatches(ledger, ledger.used, ledger.sum_used)
    busy.used.milli_cpu += 500
    shifted = build_ledger([busy])
    assert mismatches(shifted, shifted.used, shifted.sum_used) == [("n1", "cpu", 2500.0, 2000.0)]


def test_no_nodes_no_rows():
    ledger = build_ledger([])
    assert ledger.names == [] and ledger.dims == ["cpu", "memory"]
    assert not mismatches(ledger, ledger.idle + ledger.used, ledger.allocatable) and not negatives(ledger, ledger.used)


def test_a_one_node_ledger_in_python_rows_finds_what_numpy_finds(monkeypatch):
    """A ledger of a few nodes (an operation's node, a small cluster) is plain Python (ledger.Rows); the node
    rules' arithmetic and comparisons on it must give numpy's answers, broken ledgers included."""
    from schedcheck.invariants import ledger as module

    def findings() -> list:
        ledger = build_ledger([busy])
        return [mismatches(ledger, ledger.idle + ledger.used, ledger.allocatable),
                mismatches(ledger, ledger.future_idle, ledger.idle + ledger.releasing - ledger.pipelined),
                mismatches(ledger, ledger.used, ledger.sum_used), negatives(ledger, ledger.pipelined)]

    busy = NodeInfo(node("n1"))
    busy.add_task(_task("run", TaskStatus.Running))
    busy.add_task(_task("later", TaskStatus.Pipelined, gpu="1"))
    busy.used.milli_cpu += 0.05  # within the tolerance: not a finding
    busy.idle.memory -= 3.0 * GI
    busy.pipelined.milli_cpu = -700.0
    busy._future_idle = None
    busy.future_idle_view().milli_cpu += 1000  # a stale FutureIdle
    assert isinstance(build_ledger([busy]).idle, module.Rows)
    rows = findings()
    monkeypatch.setattr(module, "ROWS_UP_TO", 0)
    assert isinstance(build_ledger([busy]).idle, np.ndarray)
    assert rows == findings()
    assert rows[0] and rows[1] and rows[3] == [("n1", "cpu", -700.0)] and not rows[2]


def test_a_few_nodes_in_python_rows_find_what_numpy_finds(monkeypatch):
    from schedcheck.invariants import ledger as module

    busy, empty = NodeInfo(node("n1")), NodeInfo(node("n2", cpu="2"))
    busy.add_task(_task("run", TaskStatus.Running))
    busy.add_task(_task("later", TaskStatus.Pipelined, gpu="1"))
    empty.idle.milli_cpu -= 300  # Idle + Used != Allocatable on n2

    def findings() -> list:
        ledger = build_ledger([busy, empty])
        return [mismatches(ledger, ledger.idle + ledger.used, ledger.allocatable),
                mismatches(ledger, ledger.used, ledger.sum_used), negatives(ledger, ledger.idle - ledger.allocatable)]

    assert isinstance(build_ledger([busy, empty]).idle, module.Rows)
    rows = findings()
    monkeypatch.setattr(module, "ROWS_UP_TO", 0)
    assert rows == findings() and rows[0] == [("n2", "cpu", 1700.0, 2000.0)]


def test_rows_and_matrices_hold_the_same_sums_releasing_and_a_task_only_dimension_included(monkeypatch):
    """One row builder serves both forms: the dimensions are fixed first (a GPU only tasks ask for comes after the
    nodes' own) and each request is added in place; Rows and numpy hold the same numbers."""
    from schedcheck.invariants import ledger as module

    busy, empty = NodeInfo(node("n1")), NodeInfo(node("n2", cpu="2"))
    busy.add_task(_task("run", TaskStatus.Running))
    busy.add_task(_task("gone", TaskStatus.Releasing, gpu="2"))
    busy.add_task(_task("later", TaskStatus.Pipelined, gpu="1"))
    rows = build_ledger([busy, empty])
    assert rows.dims[:2] == ["cpu", "memory"] and rows.dims[-1] == GPU
    gpu = rows.dims.index(GPU)
    assert rows.sum_used.rows[0][:2] == [2000.0, 2.0 * GI] and rows.sum_used.rows[0][gpu] == 2000.0
    assert rows.sum_releasing.rows[0][gpu] == 2000.0 and rows.sum_pipelined.rows[0][gpu] == 1000.0
    assert rows.sum_used.rows[1] == [0.0] * len(rows.dims)
    monkeypatch.setattr(module, "ROWS_UP_TO", 0)
    matrix = build_ledger([busy, empty])
    assert matrix.dims == rows.dims and matrix.names == rows.names
    for key in ("allocatable", "idle", "used", "releasing", "pipelined", "future_idle", "sum_used",
                "sum_releasing", "sum_pipelined"):
        assert getattr(rows, key).rows == getattr(matrix, key).tolist(), key

"""NodeInfo accounting per task status (semantics §3, seed 001's identities)."""

import pytest

from schedcheck.reference.api.node_info import NodeError, NodeInfo
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import TaskStatus
from tests.builders import GI, node, pod


def _task(name: str, status: TaskStatus, cpu: str = "1") -> TaskInfo:
    t = TaskInfo(pod(name, cpu=cpu, memory="1Gi"))
    t.status = status
    return t


def _ledger(n: NodeInfo) -> tuple[float, float, float, float]:
    return n.idle.milli_cpu, n.used.milli_cpu, n.releasing.milli_cpu, n.pipelined.milli_cpu


@pytest.mark.parametrize("status, expected", [
    (TaskStatus.Running, (3000, 1000, 0, 0)),
    (TaskStatus.Allocated, (3000, 1000, 0, 0)),
    (TaskStatus.Bound, (3000, 1000, 0, 0)),
    (TaskStatus.Binding, (3000, 1000, 0, 0)),
    (TaskStatus.Releasing, (3000, 1000, 1000, 0)),
    (TaskStatus.Pipelined, (4000, 0, 0, 1000)),
])
def test_add_task_by_status(status, expected):
    n = NodeInfo(node("n1", cpu="4"))
    n.add_task(_task("t", status))
    assert _ledger(n) == expected
    assert n.idle.milli_cpu + n.used.milli_cpu == n.allocatable.milli_cpu


@pytest.mark.parametrize("status", list(TaskStatus))
def test_remove_task_restores_the_empty_ledger(status):
    n = NodeInfo(node("n1"))
    t = _task("t", status)
    n.add_task(t)
    n.remove_task(t)
    assert _ledger(n) == (4000, 0, 0, 0) and not n.tasks


def test_idle_may_go_negative_and_is_counted():
    n = NodeInfo(node("n1", cpu="1"))
    n.add_task(_task("t", TaskStatus.Allocated, cpu="2"))
    assert n.idle.milli_cpu == -1000 and n.negative_idle_events == 1
    assert n.idle.milli_cpu + n.used.milli_cpu == 1000


def test_binding_checks_idle_first():
    n = NodeInfo(node("n1", cpu="1"))
    with pytest.raises(NodeError, match="not enough"):
        n.add_task(_task("t", TaskStatus.Binding, cpu="2"))
    assert _ledger(n) == (1000, 0, 0, 0)


def test_add_twice_or_elsewhere_is_refused():
    n = NodeInfo(node("n1"))
    t = _task("t", TaskStatus.Running)
    n.add_task(t)
    with pytest.raises(NodeError, match="already on node"):
        n.add_task(t)
    other = _task("u", TaskStatus.Running)
    other.node_name = "n2"
    with pytest.raises(NodeError, match="different node"):
        n.add_task(other)


def test_update_task_evicting_a_running_task_raises_future_idle():
    n = NodeInfo(node("n1", cpu="4"))
    t = _task("t", TaskStatus.Running, cpu="3")
    n.add_task(t)
    before = n.future_idle().milli_cpu
    t.status = TaskStatus.Releasing
    n.update_task(t)
    assert _ledger(n) == (1000, 3000, 3000, 0)
    assert n.future_idle().milli_cpu == before + 3000


def test_remove_uses_the_stored_status_not_the_callers():
    n = NodeInfo(node("n1"))
    t = _task("t", TaskStatus.Pipelined)
    n.add_task(t)
    t.status = TaskStatus.Running  # the caller's copy changed; the node's own clone did not
    n.remove_task(t)
    assert _ledger(n) == (4000, 0, 0, 0)


def test_clone_rebuilds_the_ledger():
    n = NodeInfo(node("n1"))
    n.add_task(_task("a", TaskStatus.Running))
    n.add_task(_task("b", TaskStatus.Releasing))
    c = n.clone()
    assert _ledger(c) == _ledger(n) and c.tasks.keys() == n.tasks.keys()
    assert c.tasks["default/a"] is not n.tasks["default/a"]


def test_uninitialised_node_only_tracks_tasks():
    n = NodeInfo(None, "ghost")
    n.add_task(_task("t", TaskStatus.Running))
    assert not n.ready() and _ledger(n) == (0, 0, 0, 0) and "default/t" in n.tasks


def test_memory_in_bytes():
    n = NodeInfo(node("n1", memory="8Gi"))
    assert n.allocatable.memory == 8 * GI

"""Statement operations, commit and discard (semantics §7)."""

import pytest

from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.framework.event import EventHandler
from schedcheck.reference.framework.statement import Statement, StatementError
from schedcheck.reference.k8s import ClusterObjects
from tests.builders import node, pod, pod_group
from tests.framework.helpers import session


def _setup(running: bool = False):
    pods = [pod("p-0"), pod("p-1")]
    if running:
        pods.append(pod("r-0", group="other", node_name="n1", phase="Running"))
    objects = ClusterObjects(nodes=[node("n1", cpu="4")], pods=pods,
                             pod_groups=[pod_group("pg", 2, phase="Inqueue"), pod_group("other", 1, phase="Running")])
    ssn = session(objects)
    events = []
    ssn.add_event_handler(EventHandler(lambda e: events.append(("alloc", e.task.name)),
                                       lambda e: events.append(("dealloc", e.task.name))))
    return ssn, events


def _ledger(n):
    return n.idle.milli_cpu, n.used.milli_cpu, n.releasing.milli_cpu, n.pipelined.milli_cpu


def test_allocate_then_discard_restores_everything_in_reverse():
    ssn, events = _setup()
    job, n = ssn.jobs["default/pg"], ssn.nodes["n1"]
    t0, t1 = sorted(job.tasks.values(), key=lambda t: t.name)
    stmt = Statement(ssn)
    stmt.allocate(t0, n)
    stmt.pipeline(t1, "n1", False)
    assert _ledger(n) == (3000, 1000, 0, 1000)
    assert t0.status == TaskStatus.Allocated and t1.status == TaskStatus.Pipelined
    stmt.discard()
    assert _ledger(n) == (4000, 0, 0, 0) and not n.tasks
    assert all(t.status == TaskStatus.Pending and not t.node_name for t in (t0, t1))
    assert events == [("alloc", "p-0"), ("alloc", "p-1"), ("dealloc", "p-1"), ("dealloc", "p-0")]
    assert t0.last_transaction.status == TaskStatus.Allocated and t0.last_transaction.node_name == "n1"


def test_commit_binds_allocations_and_leaves_pipelines_in_session():
    ssn, _ = _setup()
    job, n = ssn.jobs["default/pg"], ssn.nodes["n1"]
    t0, t1 = sorted(job.tasks.values(), key=lambda t: t.name)
    stmt = Statement(ssn)
    stmt.allocate(t0, n)
    stmt.pipeline(t1, "n1", True)
    stmt.commit()
    assert t0.status == TaskStatus.Binding and t1.status == TaskStatus.Pipelined
    assert [(b.task, b.node) for b in ssn.cache.log.binds] == [("default/p-0", "n1")]
    cached = ssn.cache.jobs["default/pg"]
    assert {t.name: t.status for t in cached.tasks.values()} == {"p-0": TaskStatus.Binding, "p-1": TaskStatus.Pending}
    assert stmt.operations == []


def test_evict_then_discard_unevicts_to_running():
    ssn, events = _setup(running=True)
    victim = next(iter(ssn.jobs["default/other"].tasks.values()))
    n = ssn.nodes["n1"]
    stmt = Statement(ssn)
    stmt.evict(n.tasks[victim.key].clone(), "preempt")
    assert _ledger(n) == (3000, 1000, 1000, 0)
    stmt.discard()
    assert _ledger(n) == (3000, 1000, 0, 0)
    assert ssn.jobs["default/other"].tasks[victim.uid].status == TaskStatus.Running


def test_evict_commit_reaches_the_cache():
    ssn, _ = _setup(running=True)
    victim = next(iter(ssn.jobs["default/other"].tasks.values()))
    stmt = Statement(ssn)
    stmt.evict(victim, "preempt")
    stmt.commit()
    assert [e.task for e in ssn.cache.log.evictions] == ["default/r-0"]
    assert ssn.cache.nodes["n1"].releasing.milli_cpu == 1000


def test_allocate_failure_rolls_back_and_raises():
    ssn, _ = _setup()
    job, n = ssn.jobs["default/pg"], ssn.nodes["n1"]
    t0 = sorted(job.tasks.values(), key=lambda t: t.name)[0]
    ssn.add_event_handler(EventHandler(allocate_func=lambda e: setattr(e, "err", RuntimeError("device"))))
    stmt = Statement(ssn)
    with pytest.raises(StatementError, match="rolled back"):
        stmt.allocate(t0, n)
    assert _ledger(n) == (4000, 0, 0, 0) and t0.status == TaskStatus.Pending and stmt.operations == []


def test_commit_refused_by_cache_unallocates():
    ssn, _ = _setup()
    job, n = ssn.jobs["default/pg"], ssn.nodes["n1"]
    t0 = sorted(job.tasks.values(), key=lambda t: t.name)[0]
    stmt = Statement(ssn)
    stmt.allocate(t0, n)
    ssn.cache.nodes["n1"].idle.milli_cpu = 0  # the cache's node filled up meanwhile
    stmt.commit()
    assert t0.status == TaskStatus.Pending and not ssn.cache.log.binds
    assert _ledger(n) == (4000, 0, 0, 0)

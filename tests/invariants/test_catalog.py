"""Every invariant fires on a deliberately broken state and stays quiet on a good run.

CASES maps each invariant id to how to break things for it: (checkpoint, corruption) run
just before the engine checks, optionally with another cluster or action list. The
meta-test at the bottom fails when a catalogued invariant has no case.
"""

from __future__ import annotations

import pytest

from invariants.registry import catalog
from reference_impl.api.resource_info import Resource
from reference_impl.api.types import TaskStatus
from tests.invariants.harness import FAIR_TIERS, check, cluster


def _node(ssn, name="n1"):
    return ssn.nodes[name]


def _first_task(ssn, job="default/fit", status=None):
    tasks = sorted(ssn.jobs[job].tasks.values(), key=lambda t: t.name)
    return next(t for t in tasks if status is None or t.status == status)


def _shift(resource_name):
    def corrupt(ssn, *_):
        node = _node(ssn, "n2")
        getattr(node, resource_name).milli_cpu += 500
        node._future_idle = None
    return corrupt


def _break_used_sum(ssn, *_):
    node = _node(ssn, "n2")
    node.used.milli_cpu += 500
    node.idle.milli_cpu -= 500  # keep Idle + Used = Allocatable, break the sum over tasks
    node._future_idle = None


def _break_future_idle(ssn, *_):
    _node(ssn, "n2")._future_idle = Resource(1, 1)


def _break_non_negative(ssn, *_):
    _node(ssn, "n2").releasing.milli_cpu = -5


def _break_cache_idle(ssn, *_):
    for name in {r.node for r in ssn.cache.log.binds}:
        ssn.cache.nodes[name].idle.milli_cpu = -1000


def _break_pod_limit(ssn, *_):
    for node in ssn.nodes.values():
        node.allocatable.max_task_num = 0


def _break_single_node(ssn, *_):
    task = next(iter(_node(ssn, "n2").tasks.values()))
    _node(ssn, "n1").tasks[task.key] = task.clone()


def _break_status_index(ssn, *_):
    job = ssn.jobs["default/run"]
    task = next(iter(job.tasks.values()))
    job.task_status_index[task.status].pop(task.uid)
    job.task_status_index.setdefault(TaskStatus.Pending, {})[task.uid] = task


def _break_allocated(ssn, *_):
    ssn.jobs["default/run"].allocated.milli_cpu += 1


def _break_total(ssn, *_):
    ssn.jobs["default/run"].total_request.milli_cpu += 7


def _break_counters(ssn, *_):
    task = next(iter(ssn.jobs["default/run"].tasks.values()))
    task.status = TaskStatus.Pending  # the index still says Running


def _gang_always_ready(monkeypatch):
    import reference_impl.plugins.gang as gang

    monkeypatch.setattr(gang, "job_ready", lambda job: True)


def _discard_forgets_node(monkeypatch):
    """The bug: unallocate puts the task back to Pending but leaves it on the node."""
    from reference_impl.framework.statement import Statement

    def unallocate(self, task):
        self.ssn.jobs[task.job].update_task_status(task, TaskStatus.Pending)
        self.ssn.fire_deallocate(task)
        task.node_name = ""
    monkeypatch.setattr(Statement, "_unallocate", unallocate)


def _discard_keeps_status(monkeypatch):
    from reference_impl.framework.statement import Statement

    monkeypatch.setattr(Statement, "_unallocate", lambda self, task: None)


def _no_deallocate_events(monkeypatch):
    from reference_impl.framework.session import Session

    monkeypatch.setattr(Session, "fire_deallocate", lambda self, task: None)


def _break_cache(ssn, *_):
    job = ssn.cache.jobs["default/big"]  # the session writes into the cache behind the scheduler's back
    job.update_task_status(next(iter(job.tasks.values())), TaskStatus.Running)


def _bad_order(point):
    def corrupt(ssn):
        ssn.add_fn(point, "priority", lambda left, right: -1)  # "less" both ways
    return corrupt


def _proportion_attr(ssn):
    return ssn.plugins["proportion"]._queue_opts["capped"]


def _break_proportion_allocated(ssn, *_):
    _proportion_attr(ssn).allocated.milli_cpu += 500


def _break_drf_allocated(ssn, *_):
    next(iter(ssn.plugins["drf"].job_attrs.values())).allocated.milli_cpu += 500


def _negative_accounting(ssn, *_):
    _proportion_attr(ssn).allocated.milli_cpu = -1000


def _deserved_below_guarantee(ssn, *_):
    _proportion_attr(ssn).deserved.milli_cpu = 0


def _deserved_too_large(ssn, *_):
    _proportion_attr(ssn).deserved.milli_cpu = 1e9


def _always_allocatable(monkeypatch):
    from reference_impl.plugins.proportion import ProportionPlugin

    monkeypatch.setattr(ProportionPlugin, "allocatable", lambda self, queue, task: True)


def _never_overused(monkeypatch):
    from reference_impl.plugins.proportion import ProportionPlugin

    _always_allocatable(monkeypatch)
    monkeypatch.setattr(ProportionPlugin, "overused", lambda self, queue: False)


FAIR = {"objects": "capped-queue", "tiers": FAIR_TIERS}

# id -> dict(corrupt=(when, fn)) | dict(patch=fn) and optional cluster/actions
CASES = {
    "node.ledger": {"corrupt": ("action", _shift("idle"))},
    "node.used-sum": {"corrupt": ("action", _break_used_sum)},
    "node.releasing-sum": {"corrupt": ("action", _shift("releasing"))},
    "node.pipelined-sum": {"corrupt": ("action", _shift("pipelined"))},
    "node.future-idle": {"corrupt": ("action", _break_future_idle)},
    "node.non-negative": {"corrupt": ("action", _break_non_negative)},
    "node.cache-idle-non-negative": {"corrupt": ("closed", _break_cache_idle)},
    "node.pod-limit": {"corrupt": ("closed", _break_pod_limit)},
    "task.single-node": {"corrupt": ("action", _break_single_node)},
    "job.status-index": {"corrupt": ("action", _break_status_index)},
    "job.allocated-sum": {"corrupt": ("action", _break_allocated)},
    "job.total-request": {"corrupt": ("action", _break_total)},
    "job.counters": {"corrupt": ("action", _break_counters)},
    "gang.commit-ready": {"patch": _gang_always_ready},
    "gang.session-atomic": {"patch": _gang_always_ready, "objects": "partial-gang"},
    "statement.discard-restores": {"patch": _discard_forgets_node, "objects": "partial-gang"},
    "statement.discard-no-trace": {"patch": _discard_keeps_status, "objects": "partial-gang"},
    "statement.events-balanced": {"patch": _no_deallocate_events, "objects": "partial-gang"},
    "session.cache-isolated": {"corrupt": ("action", _break_cache)},
    "order.job": {"corrupt": ("open", _bad_order("job_order"))},
    "order.task": {"corrupt": ("open", _bad_order("task_order"))},
    "order.queue": {"corrupt": ("open", _bad_order("queue_order"))},
    "queue.proportion-allocated": {"corrupt": ("action", _break_proportion_allocated), **FAIR},
    "queue.drf-allocated": {"corrupt": ("action", _break_drf_allocated), **FAIR},
    "queue.accounting-non-negative": {"corrupt": ("closed", _negative_accounting), **FAIR},
    "queue.deserved-bounds": {"corrupt": ("action", _deserved_below_guarantee), **FAIR},
    "queue.deserved-total": {"corrupt": ("action", _deserved_too_large), **FAIR},
    "queue.allocate-within-deserved": {"patch": _always_allocatable, **FAIR},
    "queue.no-allocate-when-overused": {"patch": _never_overused, **FAIR},
}


def _kwargs(case):
    kwargs = {k: case[k] for k in ("objects", "actions", "tiers", "cycles") if k in case}
    if isinstance(kwargs.get("objects"), str):
        kwargs["objects"] = cluster(kwargs["objects"])
    return kwargs


@pytest.mark.parametrize("invariant_id", sorted(CASES))
def test_invariant_passes_on_a_good_run(invariant_id):
    engine = check(invariant_id, **_kwargs(CASES[invariant_id]))
    assert engine.checks[invariant_id] > 0, f"{invariant_id} never ran: the good case does not exercise it"
    assert not engine.violations, [v.one_line() for v in engine.violations]


@pytest.mark.parametrize("invariant_id", sorted(CASES))
def test_invariant_fires_on_a_broken_state(invariant_id, monkeypatch):
    case = CASES[invariant_id]
    if "patch" in case:
        case["patch"](monkeypatch)
    engine = check(invariant_id, corrupt=case.get("corrupt"), **_kwargs(case))
    assert engine.violations, f"{invariant_id} did not fire on its broken state"
    violation = engine.violations[0]
    assert violation.invariant == invariant_id and violation.message and violation.cycle == 0


def test_every_catalogued_invariant_has_both_cases():
    missing = sorted({inv.id for inv in catalog()} - set(CASES))
    assert not missing, f"invariants without a fires/passes test case: {missing}"


def test_cluster_fixture_kinds_build():
    assert cluster("basic").nodes and cluster("preempt").pods

"""Queue state and status: a queue that is not Open takes nothing new (proportion.go and capacity.go:
Allocatable, Preemptive and JobEnqueueable refuse a queue whose status.state is not Open; volcano-semantics
§5.1, §9.4), and the status.allocated written at close sums the queue's allocated tasks (session.go
updateQueueStatus).

Upstream's fixes e5ee5168b (allocate), 5756e5e70 (enqueue) and 2123494a5 (reclaim) made each of the three
extension points look at the state; before them a Closed queue kept admitting, placing and reclaiming. Before
94ff6b205 status.allocated counted Running tasks only.
"""

from __future__ import annotations

from collections.abc import Iterator

from schedcheck.invariants.catalog.admission import decides_admission
from schedcheck.invariants.catalog.queues import topology_aware_preemption
from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.registry import ACTION, CLOSE, OPERATION, invariant
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.resource_info import Resource
from schedcheck.reference.api.types import TaskStatus, allocated_status
from schedcheck.reference.framework.session import EXTENSION_FLAGS, Session
from schedcheck.reference.plugins.queue_attr import queue_is_open

QUEUE_PLUGINS = ("proportion", "capacity")


def state_checked(ssn: Session, point: str) -> bool:
    """proportion or capacity answers at this extension point (in a tier, its enable flag on, its function
    registered): every answer it gives for a queue that is not Open is no."""
    flags = (EXTENSION_FLAGS[point] or "").split("|")
    registered = ssn._fns[point]
    return any(option.name in QUEUE_PLUGINS and registered.get(option.name) is not None
               and any(option.enabled(flag) for flag in flags if flag)
               for tier in ssn.tiers for option in tier.plugins)


def _asked(ctx: CheckContext) -> str | None:
    """The extension point that had to approve this placement: allocate's Allocatable (and preempt's, for its
    pipelined preemptor outside topology-aware preemption), reclaim's Preemptive; None for any other."""
    op = ctx.operation
    if op is None or op.rollback or op.from_status == TaskStatus.Pipelined:
        return None  # a kept pipelined reservation (persistent mode) was approved when it was placed
    if op.action == "allocate" and op.op in ("allocate", "pipeline"):
        return "allocatable"
    if op.op == "pipeline" and op.action == "preempt" and not topology_aware_preemption(ctx.ssn):
        return "allocatable"
    if op.op == "pipeline" and op.action == "reclaim":
        return "preemptive"
    return None


@invariant("queue.closed-takes-nothing", "with proportion or capacity answering, a queue that is not Open gets "
           "nothing new: enqueue admits none of its jobs with minResources, and allocate, preempt (for its "
           "preemptor) and reclaim place or pipeline none of its tasks", "queue",
           "proportion.go / capacity.go Allocatable, Preemptive, JobEnqueueable (queue state); upstream "
           "e5ee5168b, 5756e5e70, 2123494a5", (OPERATION, ACTION), operations=frozenset({"allocate", "pipeline"}))
def closed_takes_nothing(ctx: CheckContext) -> Iterator[Violation]:
    ssn = ctx.ssn
    if ctx.checkpoint == ACTION:
        yield from _enqueue_admissions(ctx)
        return
    point = _asked(ctx)
    if point is None:
        return
    op = ctx.operation
    job = ssn.jobs.get(op.job)
    queue = ssn.queues.get(job.queue) if job is not None else None
    if queue is None or queue_is_open(queue) or not state_checked(ssn, point):
        return
    yield Violation("", f"{op.action} {op.op}d {op.task} on {op.node} although its queue {queue.uid} is "
                        f"{queue.queue.state or 'without a state'}, not Open",
                    [f"queue {queue.uid}", f"task {op.task}"], "Open", queue.queue.state)


def _enqueue_admissions(ctx: CheckContext) -> Iterator[Violation]:
    ssn = ctx.ssn
    if ctx.action != "enqueue" or not any(decides_admission(ssn, name) for name in QUEUE_PLUGINS):
        return
    for job in ssn.jobs.values():
        pod_group = job.pod_group
        queue = ssn.queues.get(job.queue)
        if pod_group is None or pod_group.min_resources is None or queue is None or queue_is_open(queue):
            continue
        if ssn.pod_group_old_phase.get(job.uid, "") in ("", "Pending") and pod_group.phase == "Inqueue":
            yield Violation("", f"enqueue admitted job {job.uid} into queue {queue.uid}, which is "
                                f"{queue.queue.state or 'without a state'}, not Open",
                            [f"queue {queue.uid}", f"job {job.uid}"], "Pending", pod_group.phase)


@invariant("queue.status-allocated", "at session close the status.allocated written on every leaf queue (no queue "
           "of the session names it as parent) holds, in cpu and memory, the summed requests of its jobs' tasks in "
           "an allocated status (Allocated, Binding, Bound, Running)", "queue",
           "framework/session.go updateQueueStatus (AllocatedStatus; upstream 94ff6b205, before which only "
           "Running tasks counted)", (CLOSE,))
def status_allocated(ctx: CheckContext) -> Iterator[Violation]:
    ssn = ctx.ssn
    parents = {info.queue.parent for info in ssn.queues.values() if info.queue.parent}
    want: dict[str, Resource] = {}
    for job in ssn.jobs.values():
        if job.queue in ssn.queues:
            total = want.setdefault(job.queue, Resource())
            for status, tasks in job.task_status_index.items():
                if allocated_status(status):
                    for task in tasks.values():
                        total.add(task.resreq)
    for queue_id, info in ssn.queues.items():
        if queue_id in parents or queue_id == "root":
            continue
        expected = want.get(queue_id, Resource())
        written = Resource.from_resource_list(info.queue.status_allocated)
        wrong = [name for name, have, need in (("cpu", written.milli_cpu, int(expected.milli_cpu)),
                                                ("memory", written.memory, int(expected.memory))) if have != need]
        if wrong:
            yield Violation("", f"queue {queue_id}: status.allocated <{written}> written at close, but its allocated "
                                f"tasks hold <{expected}> (dimensions {', '.join(wrong)})", [f"queue {queue_id}"],
                            {"cpu": int(expected.milli_cpu), "memory": int(expected.memory)},
                            {"cpu": written.milli_cpu, "memory": written.memory})

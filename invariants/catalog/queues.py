"""Queue accounting and bounds (seed 001 queue model, seed 003 proportion; volcano-semantics §9.3-9.4)."""

from __future__ import annotations

from collections.abc import Iterator

from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.registry import (
    ACTION, CLOSE, LEDGER_OPS, OPERATION, PLACING_OPS, QUALITY, STATEMENT, invariant,
)
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.resource_info import CPU, MEMORY, MIN_RESOURCE, Resource, Zero
from schedcheck.reference.api.types import TaskStatus, allocated_status


def _accounted(status: TaskStatus) -> bool:
    """What plugin event handlers count as allocated: allocated statuses and Pipelined."""
    return allocated_status(status) or status == TaskStatus.Pipelined


def _recomputed_by_queue(ctx: CheckContext, queues: set[str] | None = None) -> dict[str, Resource]:
    totals: dict[str, Resource] = {}
    for job in ctx.ssn.jobs.values():
        if queues is not None and job.queue not in queues:
            continue
        total = totals.setdefault(job.queue, Resource())
        allocated, pipelined = ctx.job_sums(job)
        total.add(allocated)
        total.add(pipelined)
    return totals


def _dims_differ(a: Resource, b: Resource) -> list[str]:
    """The dimensions on which a and b differ beyond the tolerance, sorted by name."""
    differ = [name for name, x, y in ((CPU, a.milli_cpu, b.milli_cpu), (MEMORY, a.memory, b.memory))
              if abs(x - y) > max(MIN_RESOURCE, 1e-9 * abs(y))]
    if a.scalars or b.scalars:  # (cpu and memory alone at most checks: no name sets to build)
        left, right = a.scalars or {}, b.scalars or {}
        for name in left.keys() | right.keys():
            x, y = left.get(name, 0.0), right.get(name, 0.0)
            if abs(x - y) > max(MIN_RESOURCE, 1e-9 * abs(y)):
                differ.append(name)
        differ.sort()
    return differ


def _proportion(ctx: CheckContext):
    return ctx.ssn.plugins.get("proportion")


@invariant("queue.proportion-allocated", "proportion's allocated per queue equals a recomputation from the "
           "queue's allocated and pipelined tasks", "queue", "proportion.go event handlers; semantics §9.4",
           (STATEMENT, ACTION, CLOSE), requires=("proportion",))
def proportion_allocated(ctx: CheckContext) -> Iterator[Violation]:
    plugin = _proportion(ctx)
    if plugin is None:
        return
    touched = None
    if ctx.statement_kind == "commit":
        return  # a commit moves no plugin accounting; drift from its operations shows at the action's end
    if ctx.statement_kind:  # after a discard, only the queues it touched can have drifted
        touched = {ctx.ssn.jobs[r.job].queue for r in ctx.statement_records if r.job in ctx.ssn.jobs}
    expected = _recomputed_by_queue(ctx, touched)
    for name, attr in plugin.queue_attrs.items():
        if touched is not None and name not in touched:
            continue
        want = expected.get(name, Resource())
        wrong = _dims_differ(attr.allocated, want)
        if wrong:
            yield Violation("", f"queue {name}: proportion counts <{attr.allocated}> allocated but its tasks "
                                f"hold <{want}> (dimensions {', '.join(wrong)}): the queue is charged wrongly",
                            [f"queue {name}"], want.as_dict(), attr.allocated.as_dict())


def _mid_rollback(ctx: CheckContext) -> bool:
    """Right after Statement undid a failed step: the failed step's allocate handlers ran, its undo ran the
    deallocate ones, and a task that was Pipelined before is now Pending; the state to judge is after its
    caller's own undo. (A simulated trial's UnPipeline of a task whose Pipeline failed deallocates it a second
    time, upstream's bug: the known finding F31.)"""
    return ctx.operation is not None and ctx.operation.rollback


@invariant("queue.drf-allocated", "drf's allocated per job equals a recomputation from the job's allocated and "
           "pipelined tasks", "queue", "drf.go event handlers; semantics §9.3", (OPERATION, ACTION, CLOSE),
           requires=("drf",), state_only=True, operations=LEDGER_OPS)
def drf_allocated(ctx: CheckContext) -> Iterator[Violation]:
    plugin = ctx.ssn.plugins.get("drf")
    if plugin is None or _mid_rollback(ctx):
        return
    jobs = [ctx.ssn.jobs[ctx.operation.job]] if ctx.operation is not None and ctx.operation.job in ctx.ssn.jobs \
        else list(ctx.ssn.jobs.values())
    for job in jobs:
        attr = plugin.job_attrs.get(job.uid)
        if attr is None:
            continue
        allocated, pipelined = ctx.job_sums(job)
        want = allocated.clone().add(pipelined) if pipelined.milli_cpu or pipelined.memory or pipelined.scalars \
            else allocated  # nothing pipelined: the sum is the allocated one (the common case)
        wrong = _dims_differ(attr.allocated, want)
        if wrong:
            yield Violation("", f"job {job.uid}: drf counts <{attr.allocated}> allocated but its tasks hold "
                                f"<{want}>", [f"job {job.uid}"], want.as_dict(), attr.allocated.as_dict())


@invariant("queue.accounting-non-negative", "plugin accounting (proportion per queue, drf per job) is never "
           "negative", "queue", "seed 004 (no negative plugin accounting under churn)", (OPERATION, ACTION, CLOSE),
           state_only=True, operations=LEDGER_OPS)
def accounting_non_negative(ctx: CheckContext) -> Iterator[Violation]:
    plugin = _proportion(ctx)
    job = ctx.ssn.jobs.get(ctx.operation.job) if ctx.operation is not None else None
    queues = plugin.queue_attrs if plugin is not None else {}
    if job is not None:  # at an operation only the operation's queue and job can have changed
        queues = {job.queue: queues[job.queue]} if job.queue in queues else {}
    for name, attr in queues.items():
        for dim, value in _negative_dims(attr.allocated):
            yield Violation("", f"queue {name}: proportion allocated on {dim} is {value:g}", [f"queue {name}"],
                            ">= 0", value)
    drf = ctx.ssn.plugins.get("drf")
    attrs = drf.job_attrs if drf is not None else {}
    if job is not None:  # at an operation only its job can have changed: look it up, not walk every job
        attrs = {job.uid: attrs[job.uid]} if job.uid in attrs else {}
    for uid, attr in attrs.items():
        for dim, value in _negative_dims(attr.allocated):
            yield Violation("", f"job {uid}: drf allocated on {dim} is {value:g}", [f"job {uid}"], ">= 0", value)


def _negative_dims(resource: Resource) -> list[tuple[str, float]]:
    """(dimension, value) where the resource is below -MIN_RESOURCE, in as_dict order."""
    if (resource.milli_cpu >= -MIN_RESOURCE and resource.memory >= -MIN_RESOURCE
            and all(value >= -MIN_RESOURCE for value in (resource.scalars or {}).values())):
        return []
    return [(dim, value) for dim, value in resource.as_dict().items() if value < -MIN_RESOURCE]


@invariant("queue.deserved-bounds", "guarantee <= deserved <= realCapability for every queue whose guarantee "
           "fits its realCapability", "queue", "seed 001 (Deserved formula); proportion.go water-filling",
           (ACTION,), requires=("proportion",), state_only=True)
def deserved_bounds(ctx: CheckContext) -> Iterator[Violation]:
    plugin = _proportion(ctx)
    if plugin is None:
        return
    for name, attr in plugin.queue_attrs.items():
        if not attr.guarantee.less_equal(attr.real_capability, Zero):
            continue  # a guarantee above the capability: upstream's Max(deserved, guarantee) wins by design
        if not attr.guarantee.less_equal(attr.deserved, Zero):
            yield Violation("", f"queue {name}: deserved <{attr.deserved}> is below its guarantee "
                                f"<{attr.guarantee}>", [f"queue {name}"], attr.guarantee.as_dict(),
                            attr.deserved.as_dict())
        if not attr.deserved.less_equal(attr.real_capability, Zero):
            yield Violation("", f"queue {name}: deserved <{attr.deserved}> exceeds its realCapability "
                                f"<{attr.real_capability}>", [f"queue {name}"], attr.real_capability.as_dict(),
                            attr.deserved.as_dict())


@invariant("queue.deserved-total", "the queues' deserved shares add up to no more than the cluster's resources "
           "(when the guarantees do)", "queue", "proportion.go water-filling; seed 001 (Deserved)", (ACTION,),
           requires=("proportion",), severity=QUALITY, state_only=True)
def deserved_total(ctx: CheckContext) -> Iterator[Violation]:
    # Quality: upstream breaks it. A guarantee raises a queue's deserved after the round's share was
    # handed out (Max(deserved, guarantee) follows the cap by request), and the loop then stops with
    # remaining at zero, so the shares can add up to more than the cluster (found by the gate, seed 1).
    plugin = _proportion(ctx)
    if plugin is None:
        return
    total_deserved, total_guarantee = Resource(), Resource()
    for attr in plugin.queue_attrs.values():
        total_deserved.add(attr.deserved)
        total_guarantee.add(attr.guarantee)
    cluster = ctx.ssn.total_resource
    if not total_guarantee.less_equal(cluster, Zero):
        return
    ok, names = total_deserved.less_equal_with_resources_name(cluster, Zero)
    if not ok:
        yield Violation("", f"the queues deserve <{total_deserved}> in all, more than the cluster's <{cluster}> "
                            f"on {', '.join(names)}", [f"queue {q}" for q in sorted(plugin.queue_attrs)],
                        cluster.as_dict(), total_deserved.as_dict())


def topology_aware_preemption(ssn) -> bool:
    return str(ssn.action_arguments("preempt").get("enableTopologyAwarePreemption", "")).lower() == "true"


def _allocate_placement(ctx: CheckContext):
    """(job, queue attributes, task) of an allocate or pipeline made by the allocate action, or of a
    preemptor pipelined by preempt (preemptorFitsOnNode asks the queue's Allocatable too), else None."""
    op, plugin = ctx.operation, _proportion(ctx)
    if plugin is None or op is None or op.op not in ("allocate", "pipeline"):
        return None
    if op.action != "allocate" and not (op.action == "preempt" and op.op == "pipeline"
                                        and not topology_aware_preemption(ctx.ssn)):
        return None  # the topology-aware path asks SimulateAllocatable on its own snapshot instead
    if op.from_status == TaskStatus.Pipelined:
        return None  # a kept pipelined reservation allocated in place (persistent mode): charged when placed
    job = ctx.ssn.jobs.get(op.job)
    attr = plugin.queue_attrs.get(job.queue) if job is not None else None
    task = job.tasks.get(op.task_uid) if job is not None else None
    if attr is None or task is None:
        return None
    return job, attr, task


@invariant("queue.allocate-within-deserved", "allocate (and preempt, for its preemptor) never places a task that "
           "takes its queue past deserved on the dimensions the task requests", "queue",
           "proportion.go Allocatable; allocate.go", (OPERATION,),
           requires=("proportion:enabledAllocatable",), operations=PLACING_OPS)
def allocate_within_deserved(ctx: CheckContext) -> Iterator[Violation]:
    placement = _allocate_placement(ctx)
    if placement is None:
        return
    job, attr, task = placement
    op = ctx.operation
    ok, names = attr.allocated.less_equal_with_dimension_and_resources_name(attr.deserved, task.resreq)
    if not ok:
        yield Violation("", f"queue {job.queue}: after {op.op} of {op.task} its allocated <{attr.allocated}> "
                            f"exceeds deserved <{attr.deserved}> on {', '.join(names)}",
                        [f"queue {job.queue}", f"task {op.task}"], attr.deserved.as_dict(), attr.allocated.as_dict())


def _placed_earlier_in_statement(ctx: CheckContext, job) -> Resource:
    """What the job's earlier allocate operations of the current statement placed (the statement's operations
    are the session's last ones, so the walk back stops at the first of another statement)."""
    op, ops, placed = ctx.operation, ctx.ssn.operations, Resource()
    index = len(ops) - 1
    if index >= 0 and ops[index] is op:
        index -= 1
    while op.statement and index >= 0 and ops[index].statement == op.statement:
        earlier = ops[index]
        task = job.tasks.get(earlier.task_uid) if earlier.job == job.uid and earlier.action == "allocate" else None
        if task is not None and earlier.op in ("allocate", "pipeline"):
            placed.add(task.resreq)
        elif task is not None and earlier.op in ("unallocate", "unpipeline"):
            placed.sub_without_assert(task.resreq)
        index -= 1
    return placed


@invariant("queue.no-allocate-when-overused", "allocate places nothing in a queue that was overused before the "
           "placement", "queue", "allocate.go (Overused queues are dropped); proportion.go Overused", (OPERATION,),
           requires=("proportion:enabledOverused",), operations=PLACING_OPS)
def no_allocate_when_overused(ctx: CheckContext) -> Iterator[Violation]:
    # allocate asks Overused when it pops the queue, then places the job's tasks one by one without asking
    # again (only Allocatable, which a conf may switch off): "before" is before the job's statement
    placement = _allocate_placement(ctx)
    if placement is None or ctx.operation.action != "allocate":
        return
    job, attr, task = placement
    op = ctx.operation
    before = attr.allocated.clone().sub_without_assert(task.resreq)
    before.sub_without_assert(_placed_earlier_in_statement(ctx, job))
    if attr.deserved.less_equal(before, Zero):
        yield Violation("", f"queue {job.queue} was overused (allocated <{before}> >= deserved <{attr.deserved}>) "
                            f"yet allocate placed {op.task}", [f"queue {job.queue}", f"task {op.task}"],
                        "no placement", op.op)

"""Task and job bookkeeping (volcano-semantics §4.2-4.3; pkg/scheduler/api/job_info.go)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.registry import ACTION, CLOSE, LEDGER_OPS, OPERATION, invariant
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.resource_info import Resource, Zero
from schedcheck.reference.api.types import TaskStatus, allocated_status

EVERYWHERE = (OPERATION, ACTION, CLOSE)


def _jobs(ctx: CheckContext):
    if ctx.operation is not None:
        job = ctx.ssn.jobs.get(ctx.operation.job)
        return [job] if job is not None else []
    return list(ctx.ssn.jobs.values())


def _differs(a: Resource, b: Resource) -> bool:
    return not (a.less_equal(b, Zero) and b.less_equal(a, Zero))


@invariant("job.status-index", "every task sits in exactly one status bucket, the one of its own status (at an "
           "operation, the operation's task)", "job", "job_info.go TaskStatusIndex / UpdateTaskStatus", EVERYWHERE,
           state_only=True)
def job_status_index(ctx: CheckContext) -> Iterator[Violation]:
    op = ctx.operation
    if op is not None:  # an operation moves one task between buckets: that task's entries (all, at action ends)
        job = ctx.ssn.jobs.get(op.job)
        if job is not None:
            yield from _task_index(job, op.task_uid)
        return
    for job in _jobs(ctx):
        indexed: dict[str, TaskStatus] = {}
        for status, bucket in job.task_status_index.items():
            for uid, task in bucket.items():
                if uid in indexed:
                    yield _indexed_twice(job, task, indexed[uid], status)
                indexed[uid] = status
                if task.status != status:
                    yield _indexed_elsewhere(job, task, status)
        if indexed.keys() == job.tasks.keys():
            continue
        missing = set(job.tasks) - set(indexed)
        extra = set(indexed) - set(job.tasks)
        for uid in sorted(missing | extra):
            yield _indexed_apart(job, uid, uid in missing)


def _task_index(job, uid: str) -> Iterator[Violation]:
    """job.status-index on one task of the job."""
    found = [(status, bucket[uid]) for status, bucket in job.task_status_index.items() if uid in bucket]
    for i, (status, task) in enumerate(found):
        if i:
            yield _indexed_twice(job, task, found[i - 1][0], status)
        if task.status != status:
            yield _indexed_elsewhere(job, task, status)
    if (uid in job.tasks) != bool(found):
        yield _indexed_apart(job, uid, uid in job.tasks)


def _indexed_twice(job, task, first: TaskStatus, then: TaskStatus) -> Violation:
    return Violation("", f"job {job.uid}: task {task.key} is indexed as both {first.name} and {then.name}",
                     [f"job {job.uid}", f"task {task.key}"], 1, 2)


def _indexed_elsewhere(job, task, status: TaskStatus) -> Violation:
    return Violation("", f"job {job.uid}: task {task.key} is {task.status.name} but indexed as {status.name}",
                     [f"job {job.uid}", f"task {task.key}"], task.status.name, status.name)


def _indexed_apart(job, uid: str, missing: bool) -> Violation:
    """A task missing from the index, or an index entry that is not a task of the job."""
    return Violation("", f"job {job.uid}: task {uid} is {'missing from' if missing else 'only in'} the status index",
                     [f"job {job.uid}"], "indexed once", "not indexed" if missing else "indexed but not a task")


@invariant("job.allocated-sum", "a job's Allocated equals the summed requests of its tasks in an allocated status",
           "job", "job_info.go AddTaskInfo/DeleteTaskInfo; volcano-semantics §12 item 4", EVERYWHERE, state_only=True,
           operations=LEDGER_OPS)  # a bind moves a task between two allocated statuses: judged at the action end
def job_allocated_sum(ctx: CheckContext) -> Iterator[Violation]:
    for job in _jobs(ctx):
        expected = ctx.job_sums(job)[0]
        if _differs(job.allocated, expected):
            yield Violation("", f"job {job.uid}: Allocated is <{job.allocated}> but its allocated tasks request "
                                f"<{expected}>", [f"job {job.uid}"], expected.as_dict(), job.allocated.as_dict())


@invariant("job.total-request", "a job's TotalRequest equals the summed requests of all its tasks", "job",
           "job_info.go AddTaskInfo; volcano-semantics §12 item 5", (ACTION, CLOSE), state_only=True)
def job_total_request(ctx: CheckContext) -> Iterator[Violation]:
    for job in _jobs(ctx):
        expected = Resource()
        for task in job.tasks.values():
            expected.add(task.resreq)
        if _differs(job.total_request, expected):
            yield Violation("", f"job {job.uid}: TotalRequest is <{job.total_request}> but its tasks request "
                                f"<{expected}>", [f"job {job.uid}"], expected.as_dict(), job.total_request.as_dict())


_VALID_TOO = (TaskStatus.Succeeded, TaskStatus.Pipelined, TaskStatus.Pending)  # valid besides allocated statuses
READY = {TaskStatus.Bound, TaskStatus.Binding, TaskStatus.Running, TaskStatus.Allocated, TaskStatus.Succeeded}


@invariant("job.counters", "ready, waiting and valid task counts match their definitions over the job's tasks",
           "job", "volcano-semantics §4.3", (ACTION, CLOSE), state_only=True)
def job_counters(ctx: CheckContext) -> Iterator[Violation]:
    for job in _jobs(ctx):
        statuses = Counter(task.status for task in job.tasks.values())
        expected = {
            # persistent pipelines (seed 004) count Pipelined as ready
            "ready": sum(n for s, n in statuses.items()
                         if s in READY or (job.pipelined_ready and s == TaskStatus.Pipelined)),
            "waiting": statuses[TaskStatus.Pipelined],
            "valid": sum(n for s, n in statuses.items() if allocated_status(s) or s in _VALID_TOO),
        }
        found = {"ready": job.ready_task_num(), "waiting": job.waiting_task_num(), "valid": job.valid_task_num()}
        for name in expected:
            if expected[name] != found[name]:
                yield Violation("", f"job {job.uid}: {name} task count is {found[name]}, its tasks say "
                                    f"{expected[name]}", [f"job {job.uid}"], expected[name], found[name])


_PHASES_BEFORE_CLOSE = "podgroup_phases_before_close"
_SCHEDULED = (TaskStatus.Bound, TaskStatus.Running)  # ScheduledStatus: these, Succeeded and Failed (§2.1)
_COMPLETED = (TaskStatus.Succeeded, TaskStatus.Failed)


@invariant("job.podgroup-phase", "at session close every PodGroup's phase follows from its tasks: Running (or "
           "Completed) once minMember tasks are scheduled, Unknown if running but found unschedulable this "
           "session, Inqueue kept while admitted, else Pending", "job",
           "framework/job_updater.go getPodGroupPhase; volcano-semantics §5.2", (ACTION, CLOSE))
def podgroup_phase(ctx: CheckContext) -> Iterator[Violation]:
    if ctx.checkpoint == ACTION:  # remember each phase as the actions leave it; close recomputes from there
        ctx.session_state[_PHASES_BEFORE_CLOSE] = {
            uid: job.pod_group.phase for uid, job in ctx.ssn.jobs.items() if job.pod_group is not None}
        return
    before = ctx.session_state.get(_PHASES_BEFORE_CLOSE)
    if before is None:
        return
    for uid, job in ctx.ssn.jobs.items():
        pod_group = job.pod_group
        if pod_group is None or uid not in before:
            continue
        counts = Counter(task.status for task in job.tasks.values())
        releasing_placed = 0
        if counts[TaskStatus.Releasing]:
            releasing_placed = sum(1 for task in job.tasks.values()
                                   if task.status == TaskStatus.Releasing and task.node_name)
        scheduled = sum(counts.get(s, 0) for s in _SCHEDULED) + sum(counts.get(s, 0) for s in _COMPLETED)
        scheduled += releasing_placed
        completed = sum(counts.get(s, 0) for s in _COMPLETED)
        unschedulable = any(c.type == "Unschedulable" and c.status == "True" and c.transition_id == ctx.ssn.uid
                            for c in pod_group.conditions)
        if counts.get(TaskStatus.Running, 0) and unschedulable:
            want = "Unknown"
        elif scheduled >= pod_group.min_member:
            want = "Completed" if scheduled == completed else "Running"
        elif before[uid] != "Inqueue":
            want = "Pending"
        else:
            want = "Inqueue"
        if pod_group.phase != want:
            yield Violation("", f"job {uid}: PodGroup phase is {pod_group.phase} after close but its tasks "
                                f"({scheduled} scheduled, {completed} completed, minMember {pod_group.min_member}, "
                                f"{before[uid] or 'no phase'} before close) make it {want}",
                            [f"job {uid}"], want, pod_group.phase)

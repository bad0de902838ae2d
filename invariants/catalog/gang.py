"""Gang atomicity (volcano-semantics §8.2, §9.1, §12 item 7)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.recompute import gang_pipelined, gang_ready, session_vote
from schedcheck.invariants.registry import ACTION, CLOSE, STATEMENT, invariant
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.types import TaskStatus, allocated_status


def _short_of_minimum(job: JobInfo, evicted: frozenset[str] = frozenset()) -> str:
    """Why the job is not gang-ready, or "" when it is (MinAvailable and every per-role minimum).

    `evicted`: the uids of the job's tasks a later action of the session deliberately evicted after they were
    placed; they count as placed, for MinAvailable and for their role.
    """
    ready = job.ready_task_num() + len(evicted)
    # Upstream's readiness counts pending BestEffort tasks as if placed (IsReady); one a later action
    # pipelined (reclaim) was still pending when the bind was decided, so it counts too.
    best_effort = job.pending_best_effort_task_num() + sum(
        1 for t in job.tasks_with_status(TaskStatus.Pipelined) if t.best_effort)
    if ready + best_effort < job.min_available:
        return f"{ready} ready of minAvailable {job.min_available}"
    if job.min_available >= job.task_min_available_total:  # CheckTaskReady, restated the same way
        occupied: Counter[str] = Counter()
        for task in job.tasks.values():
            if allocated_status(task.status) or task.status == TaskStatus.Succeeded or task.uid in evicted or (
                    task.status in (TaskStatus.Pending, TaskStatus.Pipelined) and task.init_resreq.is_empty()):
                occupied[task.task_role] += 1
        short = sorted(role for role, n in job.task_min_available.items() if occupied[role] < n)
        if short:
            return (f"a role is below its minimum ({', '.join(f'{r}: {occupied[r]} of {job.task_min_available[r]}' for r in short)})")
    return ""


@invariant("gang.commit-ready", "allocate commits a job's statement only when the job has MinAvailable placed",
           "gang", "allocate.go (commit only when JobReady); gang.go JobReady", (STATEMENT,), requires=("gang:enableJobReady",))
def gang_commit_ready(ctx: CheckContext) -> Iterator[Violation]:
    if ctx.statement_kind != "commit" or ctx.action != "allocate":
        return
    jobs = {op.task.job for op in ctx.statement_ops if op.name == "allocate"}
    for uid in sorted(jobs):
        job = ctx.ssn.jobs.get(uid)
        if job is None:
            continue
        short = _short_of_minimum(job)
        if short:
            yield Violation("", f"job {uid} was committed with {short}: a partial gang reached the binder",
                            [f"job {uid}"], f">= {job.min_available} ready", short)


@invariant("gang.session-atomic", "after a session, no job has new binds unless MinAvailable (and every role "
           "minimum) is placed", "gang", "gang.go; volcano-semantics §9.1", (CLOSE,), requires=("gang:enableJobReady",))
def gang_session_atomic(ctx: CheckContext) -> Iterator[Violation]:
    start = ctx.session_state.get("binds_at_open", 0)
    job_of = {op.task: op.job for op in ctx.ssn.operations if op.op == "bind"}
    bound_jobs: dict[str, int] = {}
    for record in ctx.ssn.cache.log.binds[start:]:
        job_uid = job_of.get(record.task, "")
        if job_uid:
            bound_jobs[job_uid] = bound_jobs.get(job_uid, 0) + 1
    # A later action may evict tasks of a just-bound gang on purpose (a gang* action's "whole" bundle, or
    # shuffle's victims, all of them when pdb has no budget to keep): they were placed atomically, so they
    # still count here, for their role too; the victim rules judge the eviction.
    evicted: dict[str, set[str]] = {}
    for op in ctx.ssn.operations:
        if op.op == "evict" and op.job in bound_jobs:
            evicted.setdefault(op.job, set()).add(op.task_uid)
        elif op.op == "unevict" and op.job in bound_jobs:
            evicted.get(op.job, set()).discard(op.task_uid)
    for uid, count in sorted(bound_jobs.items()):
        job = ctx.ssn.jobs.get(uid)
        if job is None:
            continue
        short = _short_of_minimum(job, frozenset(evicted.get(uid, ())))
        if short:
            yield Violation("", f"job {uid} got {count} bind(s) this session but has only {short}: the gang is "
                                f"half-bound", [f"job {uid}"], f">= {job.min_available} ready", short)


@invariant("gang.no-stranded-placement", "when allocate ends, a job left with Allocated tasks is ready or "
           "pipelined: allocate discards every other statement", "gang",
           "allocate.go (a statement survives only if JobReady or JobPipelined); semantics §8.2", (ACTION,))
def gang_no_stranded_placement(ctx: CheckContext) -> Iterator[Violation]:
    # Judged when allocate ends, not at close: a later action (shuffle, preempt, reclaim) may evict
    # one of the job's running tasks, and upstream then closes the session with the job's kept
    # placements no longer ready. Pipelined tasks are not judged: preempt's phase B commits one task
    # at a time with no JobPipelined check (semantics §12 item 8).
    if ctx.action != "allocate":
        return
    from schedcheck.reference.api.types import TaskStatus

    for job in ctx.ssn.jobs.values():
        stranded = [t for t in job.tasks_with_status(TaskStatus.Allocated)
                    if not t.best_effort]  # backfill may leave BestEffort tasks Allocated
        if stranded and not session_vote(ctx.ssn, "job_ready", job, {"gang": gang_ready}) \
                and not session_vote(ctx.ssn, "job_pipelined", job, {"gang": gang_pipelined}):
            yield Violation("", f"job {job.uid} ends allocate with {len(stranded)} task(s) placed "
                                f"({', '.join(sorted(t.key for t in stranded)[:3])}) but is neither ready nor "
                                f"pipelined: a discard did not undo them", [f"job {job.uid}"],
                            "no placed tasks", len(stranded))


@invariant("gang.reclaim-commit-pipelined", "reclaim commits a job's statement only when the job is then pipelined "
           "(the session's JobPipelined vote): a gang that could not be placed keeps none of its evictions", "gang",
           "reclaim.go (one statement per starving job, committed only if JobPipelined, else discarded; "
           "volcano-sh/volcano cdaaa977b); gang.go JobPipelined", (STATEMENT,))
def gang_reclaim_commit_pipelined(ctx: CheckContext) -> Iterator[Violation]:
    if ctx.statement_kind != "commit" or ctx.action != "reclaim":
        return
    jobs = {op.task.job for op in ctx.statement_ops if op.name == "pipeline"}
    for uid in sorted(jobs):
        job = ctx.ssn.jobs.get(uid)
        if job is None or session_vote(ctx.ssn, "job_pipelined", job, {"gang": gang_pipelined}):
            continue
        evictions = sum(1 for op in ctx.statement_ops if op.name == "evict")
        yield Violation("", f"reclaim committed job {uid}'s statement ({evictions} eviction(s)) although the job is "
                            f"not pipelined: its evictions free room for a gang that is not placed",
                        [f"job {uid}"], "JobPipelined", "not pipelined")

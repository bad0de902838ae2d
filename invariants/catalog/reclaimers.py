"""Who may reclaim: reclaim acts only for starving jobs (reclaim.go: the preemptor jobs are those ssn.JobStarving
holds for, and a job's task loop runs while it still does; upstream a561215e0, before which every job with a
pending task reclaimed, so a gang already at its minimum took other queues' pods to grow)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.registry import OPERATION, invariant
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.job_info import JobInfo

# priority's and gang's JobStarving restated from the job's counters, given its ready and waiting counts
_RESTATED: dict[str, Callable[[JobInfo, int, int], bool]] = {
    "priority": lambda job, ready, waiting: ready + waiting < len(job.tasks),
    "gang": lambda job, ready, waiting: waiting + ready < job.min_available,
}


def starving_before(ssn, job: JobInfo, ready: int, waiting: int) -> bool | None:
    """The session's JobStarving (the first tier with a voter decides, every voter there must agree) for the job
    with these ready and waiting (Pipelined) counts; None when that tier has a voter other than priority and
    gang."""
    for tier in ssn.registered("job_starving"):
        if tier:
            if any(name not in _RESTATED for name, _ in tier):
                return None
            return all(_RESTATED[name](job, ready, waiting) for name, _ in tier)
    return False  # no voter: JobStarving is false for every job, and reclaim has no preemptor


@invariant("victim.reclaimer-starving", "reclaim pipelines a task only for a job that was starving just before "
           "(the session's JobStarving, priority's and gang's votes restated from the job's counters with that "
           "task still pending)", "victim",
           "reclaim.go (preemptors: jobs ssn.JobStarving holds for; the task loop runs while it holds); upstream "
           "a561215e0", (OPERATION,), operations=frozenset({"pipeline"}))
def reclaimer_starving(ctx: CheckContext) -> Iterator[Violation]:
    op = ctx.operation
    if op is None or op.action != "reclaim" or op.op != "pipeline" or op.rollback:
        return
    job = ctx.ssn.jobs.get(op.job)
    if job is None:
        return
    # the counts with the task this pipeline moved out of Pending back there (a job whose pipelined tasks count
    # as ready, persistent mode, counted it in both)
    waiting = job.waiting_task_num() - 1
    ready = job.ready_task_num() - (1 if job.pipelined_ready else 0)
    if starving_before(ctx.ssn, job, ready, waiting) is False:
        yield Violation("", f"reclaim pipelined {op.task} on {op.node} for job {job.uid}, which was not starving "
                            f"({ready} ready, {waiting} waiting, minAvailable {job.min_available}, "
                            f"{len(job.tasks)} tasks)", [f"job {job.uid}", f"task {op.task}"], "starving",
                        "not starving")

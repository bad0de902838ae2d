"""Gang counts (api/job_info.py) and the gang plugin's rules (plugins/gang.py) over status counts.

The functions take a count per status (ints or Z3 ints) and `pending_be` (pending BestEffort tasks),
so the same code is cross-checked on concrete JobInfos and proved for every count vector.
"""

from __future__ import annotations

from typing import Any

from schedcheck.reference.api.types import ALL_STATUSES, TaskStatus

READY = (TaskStatus.Bound, TaskStatus.Binding, TaskStatus.Running, TaskStatus.Allocated, TaskStatus.Succeeded)
VALID = READY + (TaskStatus.Pipelined, TaskStatus.Pending)
PLACED = (TaskStatus.Allocated, TaskStatus.Binding, TaskStatus.Bound, TaskStatus.Running)


def ready(n: dict) -> Any:
    return sum(n[s] for s in READY)


def waiting(n: dict) -> Any:
    return n[TaskStatus.Pipelined]


def valid(n: dict) -> Any:
    return sum(n[s] for s in VALID)


def is_ready(n: dict, pending_be, min_available) -> Any:
    """JobReady without per-role minimums = the allocate commit condition."""
    return ready(n) + pending_be >= min_available


def is_pipelined(n: dict, pending_be, min_available) -> Any:
    return waiting(n) + ready(n) + pending_be >= min_available


def is_starving(n: dict, min_available) -> Any:
    return waiting(n) + ready(n) < min_available


def gang_victims(ready_count, min_available, candidates: int, ite) -> Any:
    """How many of `candidates` preemptees of one job gang's preemptable offers: while occupied > min."""
    occupied, taken = ready_count, 0
    for _ in range(candidates):
        take = occupied > min_available
        occupied = ite(take, occupied - 1, occupied)
        taken = ite(take, taken + 1, taken)
    return taken


def counts_of(job) -> tuple[dict, int]:
    """(count per status, pending BestEffort count) of a reference JobInfo."""
    n = {s: len(job.task_status_index.get(s, {})) for s in ALL_STATUSES}
    return n, job.pending_best_effort_task_num()


# -- obligations ------------------------------------------------------------------------------


def _sym():
    import z3

    n = {s: z3.Int(f"n.{s.name}") for s in ALL_STATUSES}
    be, m = z3.Int("pendingBestEffort"), z3.Int("minAvailable")
    hyps = [v >= 0 for v in n.values()] + [be >= 0, be <= n[TaskStatus.Pending], m >= 0]
    shown = {"minAvailable": m, "pendingBestEffort": be, **{s.name: v for s, v in n.items()}}
    return n, be, m, hyps, shown


def _placed(n: dict) -> Any:
    return sum(n[s] for s in PLACED) + n[TaskStatus.Succeeded]


def ob_commit_min_placed() -> Any:
    import z3

    from schedcheck.model.obligation import prove
    n, be, m, hyps, shown = _sym()
    return prove(z3.Implies(is_ready(n, be, m), _placed(n) >= m), hyps, shown)


def ob_commit_min_placed_no_be() -> Any:
    import z3

    from schedcheck.model.obligation import prove
    n, be, m, hyps, shown = _sym()
    return prove(z3.Implies(z3.And(is_ready(n, be, m), be == 0), _placed(n) >= m), hyps, shown)


def ob_ready_implies_pipelined() -> Any:
    import z3

    from schedcheck.model.obligation import prove
    n, be, m, hyps, shown = _sym()
    return prove(z3.Implies(is_ready(n, be, m), is_pipelined(n, be, m)), hyps, shown)


def ob_ready_not_starving() -> Any:
    import z3

    from schedcheck.model.obligation import prove
    n, be, m, hyps, shown = _sym()
    return prove(z3.Implies(is_ready(n, be, m), z3.Not(is_starving(n, m))), hyps, shown)


def ob_valid_covers_ready() -> Any:
    import z3

    from schedcheck.model.obligation import prove
    n, be, m, hyps, shown = _sym()
    return prove(z3.And(valid(n) >= ready(n) + waiting(n), z3.Implies(valid(n) < m, z3.Not(is_pipelined(n, 0, m)))),
                 hyps, shown)


def ob_victims_keep_min(bound: int = 6) -> Any:
    import z3

    from schedcheck.model.obligation import prove
    r, m = z3.Int("readyTasks"), z3.Int("minAvailable")
    parts = []
    for c in range(bound + 1):
        k = gang_victims(r, m, c, z3.If)
        parts.append(z3.And(r - k >= z3.If(r < m, r, m), k <= c, k >= 0))
    return prove(z3.And(*parts), [r >= 0, m >= 0], {"ready": r, "minAvailable": m})


def obligations() -> list:
    from schedcheck.model.obligation import COUNTEREXAMPLE, Obligation

    return [
        Obligation("gang.commit-implies-min-placed", "allocate commits a job's statement only when at least "
                   "minAvailable of its tasks are placed (Allocated/Binding/Bound/Running) or Succeeded",
                   ob_commit_min_placed, COUNTEREXAMPLE,
                   "JobReady counts Pending BestEffort tasks as ready: a job of BestEffort pods commits with "
                   "fewer than minAvailable placed (upstream's ReadyTaskNum + PendingBestEffortTaskNum)"),
        Obligation("gang.commit-implies-min-placed-no-besteffort", "with no Pending BestEffort task, the commit "
                   "condition implies at least minAvailable placed or Succeeded", ob_commit_min_placed_no_be),
        Obligation("gang.ready-implies-pipelined", "JobReady implies JobPipelined", ob_ready_implies_pipelined),
        Obligation("gang.ready-implies-not-starving", "a ready job is not starving", ob_ready_not_starving,
                   COUNTEREXAMPLE, "JobStarving ignores Pending BestEffort tasks while JobReady counts them: "
                   "a job can be ready and starving at once (so preempt may act for a ready job)"),
        Obligation("gang.valid-covers-ready", "ValidTaskNum >= ReadyTaskNum + WaitingTaskNum, so a job that is "
                   "not valid can never be pipelined", ob_valid_covers_ready),
        Obligation("gang.victims-keep-min-available", "gang's preemptable never takes a job below "
                   "min(ready, minAvailable), for up to 6 candidate victims of a job", ob_victims_keep_min),
    ]

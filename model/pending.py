"""Why pending: the unsat core of "this job fits now", as scheduler-level reasons.

Built from the session just before it closes (plugins still live): one placement variable per
(pending task, node). Every constraint that can forbid a placement is tracked under a readable
label; the core is shrunk to a minimal one (each label in it is needed for the conflict).

Constraints: node predicates (ssn.predicate_for_allocate_action), a task larger than a node's
FutureIdle, each node's FutureIdle for the tasks placed together, the gang minimum (tasks still
needed), the queue's deserved (proportion, strict on the requested dimensions) and state, and the
PodGroup not admitted by enqueue. Not modelled: resourcequota, capacity's hierarchy, task order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schedcheck.reference.api.resource_info import MIN_RESOURCE, Resource
from schedcheck.reference.api.types import TaskStatus

GI, MI = 1024 ** 3, 1024 ** 2


def fmt(dim: str, value: float) -> str:
    if dim == "cpu":
        return f"{value:g}m"
    if dim == "memory":
        if value % GI == 0:
            return f"{value / GI:g}Gi"
        return f"{value / MI:g}Mi"
    if dim == "pods":
        return f"{value:g}"
    return f"{value / 1000:g}"


def fit_dims(tasks) -> list[str]:
    """The dimensions the fit test reads: cpu and memory always, and every scalar a request names
    (pods included: it is the pod-count limit)."""
    names = {n for t in tasks for n in (t.init_resreq.scalars or {})}
    return ["cpu", "memory"] + sorted(names)


def dims_of(r: Resource) -> list[str]:
    out = []
    if r.milli_cpu > 0:
        out.append("cpu")
    if r.memory > 0:
        out.append("memory")
    out += sorted(n for n, v in (r.scalars or {}).items() if v > 0)
    return out


@dataclass
class Explanation:
    job: str
    pending: bool
    reasons: list[str] = field(default_factory=list)
    tasks_pending: list[str] = field(default_factory=list)
    needed: int = 0
    constraints: int = 0
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"job": self.job, "pending": self.pending, "pendingTasks": self.tasks_pending,
                "tasksNeeded": self.needed, "constraints": self.constraints, "reasons": self.reasons,
                "explained": bool(self.reasons), "note": self.note}


def is_pending(job) -> bool:
    """The job has a Pending task that could run (not gated): the whole job when it is not ready yet,
    or its remaining tasks when it is."""
    return any(not t.sch_gated for t in job.tasks_with_status(TaskStatus.Pending))


def explain(ssn, job) -> Explanation:
    import z3

    key = f"{job.namespace}/{job.name}"
    pending = [t for t in job.tasks_with_status(TaskStatus.Pending) if not t.sch_gated]
    out = Explanation(key, is_pending(job), tasks_pending=sorted(t.key for t in pending))
    if not out.pending:
        counts = ", ".join(f"{len(b)} {s.name}" for s, b in sorted(job.task_status_index.items()) if b)
        out.note = (f"job {key} has no Pending task to place ({counts or 'no tasks'}; "
                    f"{job.ready_task_num()} ready of minAvailable {job.min_available})")
        return out
    ready = job.ready_task_num() + job.pending_best_effort_task_num()
    out.needed = max(job.min_available - ready, 1)
    nodes = list(ssn.node_list)
    x = {(t.key, n.name): z3.Bool(f"x[{t.key}@{n.name}]") for t in pending for n in nodes}
    hard = [z3.PbLe([(x[(t.key, n.name)], 1) for n in nodes], 1) for t in pending]
    tracked: dict[str, Any] = {}

    def track(label: str, constraint) -> None:
        if label in tracked:
            label = f"{label} ({len(tracked)})"
        tracked[label] = constraint

    placed = z3.Sum([z3.If(v, 1, 0) for v in x.values()] + [z3.IntVal(0)])
    track(f"gang {key}: minAvailable {job.min_available} needs {out.needed} more task(s) placed "
          f"({ready} ready)" if job.min_available > ready else
          f"job {key}: at least one of its {len(pending)} Pending task(s) must be placed",
          placed >= out.needed)
    if job.pod_group is not None and job.is_pending():
        track(f"podgroup {key}: phase {job.pod_group.phase or 'Pending'}, not admitted by enqueue"
              + _enqueue_reason(job), placed == 0)
    checked = fit_dims(pending)
    pre = {t.key: ssn.pre_predicate_fn(t) for t in pending}  # as allocate asks it before the predicates
    for n in nodes:
        future = n.future_idle()
        for t in pending:
            var = x[(t.key, n.name)]
            err = pre[t.key] or ssn.predicate_for_allocate_action(t, n)
            if err is not None:
                track(f"node {n.name}: {_short(err)} ({t.key})", z3.Not(var))
                continue
            over = [d for d in checked if not t.init_resreq.get(d) < future.get(d) + MIN_RESOURCE]
            if over:
                d = over[0]
                track(f"node {n.name}: {d} {fmt(d, t.init_resreq.get(d))} requested by {t.key} > "
                      f"{fmt(d, max(future.get(d), 0.0))} idle", z3.Not(var))
        if len(pending) > 1:
            here = [x[(t.key, n.name)] for t in pending]
            for d in checked:
                need = z3.Sum([z3.If(v, _q(t.init_resreq.get(d)), 0) for v, t in zip(here, pending)])
                track(f"node {n.name}: {d} {fmt(d, max(future.get(d), 0.0))} idle for the tasks placed together",
                      z3.Implies(z3.Or(*here), need < _q(future.get(d)) + _q(MIN_RESOURCE)))
    _queue_constraints(ssn, job, pending, x, placed, track)
    out.constraints = len(tracked)
    out.reasons = _minimal_core(hard, tracked)
    if not out.reasons:
        out.note = ("the model finds a placement: the job fits now in the model, so the reference left it "
                    "pending for a reason outside it (task order, statements discarded earlier, quotas)")
    return out


def _short(err) -> str:
    text = str(err).replace("\n", " ")
    if "fit failed: " in text:
        text = text.split("fit failed: ", 1)[1]
    return text[:160]


def _q(value: float):
    import z3

    return z3.RealVal(repr(float(value)))


def _enqueue_reason(job) -> str:
    for cond in reversed(getattr(job.pod_group, "conditions", []) or []):
        message = getattr(cond, "message", "")
        if message:
            return f": {message}"
    return ""


def _queue_constraints(ssn, job, pending, x, placed, track) -> None:
    import z3

    queue = ssn.queues.get(job.queue)
    if queue is None:
        return
    if queue.queue.state != "Open":
        # Allocatable refuses a closed queue, but backfill places BestEffort tasks without asking it
        asking = [v for (tk, _), v in x.items() for t in pending if tk == t.key and not t.resreq.is_empty()]
        if asking:
            track(f"queue {queue.name}: state {queue.queue.state}, not Open",
                  z3.Sum([z3.If(v, 1, 0) for v in asking]) == 0)
    dims = sorted({d for t in pending for d in dims_of(t.resreq) if d != "pods"})
    requested = {d: z3.Sum([z3.If(v, _q(t.resreq.get(d)), 0) for t in pending for (tk, _), v in x.items()
                            if tk == t.key] + [_q(0)]) for d in dims}
    smallest = {d: min(t.resreq.get(d) for t in pending) for d in dims}
    proportion = ssn.plugins.get("proportion")
    attr = proportion.queue_attrs.get(queue.uid) if proportion is not None else None
    if attr is not None:
        # Allocatable: allocated + request <= deserved, strict, on the requested dimensions
        for d in dims:
            track(f"queue {queue.name}: deserved {d} {fmt(d, attr.deserved.get(d))} < allocated "
                  f"{fmt(d, attr.allocated.get(d))} + request {fmt(d, smallest[d])}",
                  _q(attr.allocated.get(d)) + requested[d] <= _q(attr.deserved.get(d)))
    capacity = ssn.plugins.get("capacity")
    if capacity is not None and queue.uid in capacity.queue_attrs:
        # Allocatable: allocated + request <= realCapability for the queue and its ancestors
        for qid in capacity._branch(queue.uid):
            cattr = capacity.queue_attrs[qid]
            for d in dims:
                track(f"queue {qid}: capability {d} {fmt(d, cattr.real_capability.get(d))} < allocated "
                      f"{fmt(d, cattr.allocated.get(d))} + request {fmt(d, smallest[d])}",
                      _q(cattr.allocated.get(d)) + requested[d] <= _q(cattr.real_capability.get(d)))


def _minimal_core(hard: list, tracked: dict[str, Any]) -> list[str]:
    import z3

    solver = z3.Solver()
    solver.add(*hard)
    labels = {z3.Bool(f"track:{i}"): label for i, label in enumerate(tracked)}
    for lit, label in labels.items():
        solver.add(z3.Implies(lit, tracked[label]))
    if solver.check(*labels) != z3.unsat:
        return []
    core = [lit for lit in solver.unsat_core()]
    i = 0
    while i < len(core):
        trial = core[:i] + core[i + 1:]
        if solver.check(*trial) == z3.unsat:
            core = trial
        else:
            i += 1
    return [labels[lit] for lit in core]

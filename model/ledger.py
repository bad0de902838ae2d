"""The node ledger of reference_impl/api/node_info.py as transition functions, and its identities.

The same Python functions run on floats (cross-checked against NodeInfo) and on Z3 reals (proved
for every status and every operation). A ledger carries, besides Idle/Used/Releasing/Pipelined,
the sums of the requests of the tasks on the node by status class (`sum_used`: every status but
Pipelined; `sum_rel`: Releasing; `sum_pip`: Pipelined), so the identities can be stated.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from schedcheck.reference.api.types import ALL_STATUSES, TaskStatus

DIMS = ("cpu", "memory")
Vec = tuple  # one value per DIMS entry


def vadd(a: Vec, b: Vec) -> Vec:
    return tuple(x + y for x, y in zip(a, b))


def vsub(a: Vec, b: Vec) -> Vec:
    return tuple(x - y for x, y in zip(a, b))


@dataclass(frozen=True)
class Ledger:
    allocatable: Vec
    idle: Vec
    used: Vec
    releasing: Vec
    pipelined: Vec
    sum_used: Vec
    sum_rel: Vec
    sum_pip: Vec

    def future_idle(self) -> Vec:
        return vsub(vadd(self.idle, self.releasing), self.pipelined)


def add_task(s: Ledger, req: Vec, status: TaskStatus) -> Ledger:
    """AddTask on a known node (the Binding room check is a precondition, not a state change)."""
    if status == TaskStatus.Releasing:
        return replace(s, idle=vsub(s.idle, req), releasing=vadd(s.releasing, req), used=vadd(s.used, req),
                       sum_used=vadd(s.sum_used, req), sum_rel=vadd(s.sum_rel, req))
    if status == TaskStatus.Pipelined:
        return replace(s, pipelined=vadd(s.pipelined, req), sum_pip=vadd(s.sum_pip, req))
    return replace(s, idle=vsub(s.idle, req), used=vadd(s.used, req), sum_used=vadd(s.sum_used, req))


def remove_task(s: Ledger, req: Vec, status: TaskStatus) -> Ledger:
    """RemoveTask of a task stored with `status`."""
    if status == TaskStatus.Releasing:
        return replace(s, releasing=vsub(s.releasing, req), idle=vadd(s.idle, req), used=vsub(s.used, req),
                       sum_used=vsub(s.sum_used, req), sum_rel=vsub(s.sum_rel, req))
    if status == TaskStatus.Pipelined:
        return replace(s, pipelined=vsub(s.pipelined, req), sum_pip=vsub(s.sum_pip, req))
    return replace(s, idle=vadd(s.idle, req), used=vsub(s.used, req), sum_used=vsub(s.sum_used, req))


def update_task(s: Ledger, req: Vec, old: TaskStatus, new: TaskStatus) -> Ledger:
    return add_task(remove_task(s, req, old), req, new)


# Statement operations on the node's side, each with its undo (statement.py):
# (name, from status, forward, undo)
STATEMENT_OPS: list[tuple[str, TaskStatus, Any, Any]] = [
    *[(f"evict from {st.name}", st,
       lambda s, r, st=st: update_task(s, r, st, TaskStatus.Releasing),
       lambda s, r: update_task(s, r, TaskStatus.Releasing, TaskStatus.Running))
      for st in (TaskStatus.Running, TaskStatus.Bound)],
    ("pipeline", TaskStatus.Pending, lambda s, r: add_task(s, r, TaskStatus.Pipelined),
     lambda s, r: remove_task(s, r, TaskStatus.Pipelined)),
    ("allocate", TaskStatus.Pending, lambda s, r: add_task(s, r, TaskStatus.Allocated),
     lambda s, r: remove_task(s, r, TaskStatus.Allocated)),
]


def identities(s: Ledger) -> list:
    """Idle + Used = Allocatable; Used, Releasing, Pipelined equal their task sums (one term per dim)."""
    out = []
    for i in range(len(DIMS)):
        out += [s.idle[i] + s.used[i] == s.allocatable[i], s.used[i] == s.sum_used[i],
                s.releasing[i] == s.sum_rel[i], s.pipelined[i] == s.sum_pip[i]]
    return out


def from_node(node) -> Ledger:
    """A concrete Ledger from a reference NodeInfo (sums recomputed from its stored tasks)."""
    def vec(r) -> Vec:
        return (r.milli_cpu, r.memory)

    sums = {"used": [0.0, 0.0], "rel": [0.0, 0.0], "pip": [0.0, 0.0]}
    for task in node.tasks.values():
        keys = ["pip"] if task.status == TaskStatus.Pipelined else (
            ["used", "rel"] if task.status == TaskStatus.Releasing else ["used"])
        for key in keys:
            sums[key][0] += task.resreq.milli_cpu
            sums[key][1] += task.resreq.memory
    return Ledger(vec(node.allocatable), vec(node.idle), vec(node.used), vec(node.releasing), vec(node.pipelined),
                  tuple(sums["used"]), tuple(sums["rel"]), tuple(sums["pip"]))


# -- obligations ------------------------------------------------------------------------------


def _sym(prefix: str = "n"):
    import z3

    def vec(name: str) -> Vec:
        return tuple(z3.Real(f"{prefix}.{name}.{d}") for d in DIMS)

    s = Ledger(vec("allocatable"), vec("idle"), vec("used"), vec("releasing"), vec("pipelined"),
               vec("sumUsed"), vec("sumReleasing"), vec("sumPipelined"))
    req = tuple(z3.Real(f"req.{d}") for d in DIMS)
    return s, req


def _show(s: Ledger, req: Vec) -> dict[str, Any]:
    fields = ("allocatable", "idle", "used", "releasing", "pipelined")
    out = {f: dict(zip(DIMS, getattr(s, f))) for f in fields}
    out["request"] = dict(zip(DIMS, req))
    return out


def _nonneg(*vecs: Vec) -> list:
    return [x >= 0 for v in vecs for x in v]


def _stored(s: Ledger, req: Vec, status: TaskStatus) -> list:
    """The task is on the node with this status: its request is part of the matching sums."""
    if status == TaskStatus.Pipelined:
        return [a >= b for a, b in zip(s.sum_pip, req)]
    if status == TaskStatus.Releasing:
        return [a >= b for a, b in zip(s.sum_rel, req)] + [a - c >= b for a, b, c in zip(s.sum_used, req, s.sum_rel)]
    return [a - c >= b for a, b, c in zip(s.sum_used, req, s.sum_rel)]


def _base(s: Ledger, req: Vec) -> list:
    return identities(s) + _nonneg(req, s.sum_used, s.sum_rel, s.sum_pip) + [
        u >= r for u, r in zip(s.sum_used, s.sum_rel)]


def ob_add() -> Any:
    import z3

    from schedcheck.model.obligation import prove
    s, req = _sym()
    claim = z3.And(*[z3.And(*identities(add_task(s, req, st))) for st in ALL_STATUSES])
    return prove(claim, _base(s, req), _show(s, req))


def ob_remove() -> Any:
    import z3

    from schedcheck.model.obligation import prove
    s, req = _sym()
    claim = z3.And(*[z3.Implies(z3.And(*_stored(s, req, st)), z3.And(*identities(remove_task(s, req, st))))
                     for st in ALL_STATUSES])
    return prove(claim, _base(s, req), _show(s, req))


def ob_update() -> Any:
    import z3

    from schedcheck.model.obligation import prove
    s, req = _sym()
    claim = z3.And(*[z3.Implies(z3.And(*_stored(s, req, a)), z3.And(*identities(update_task(s, req, a, b))))
                     for a in ALL_STATUSES for b in ALL_STATUSES])
    return prove(claim, _base(s, req), _show(s, req))


def ob_statement_undo() -> Any:
    import z3

    from schedcheck.model.obligation import prove
    s, req = _sym()
    parts = []
    for _, status, forward, undo in STATEMENT_OPS:
        after = undo(forward(s, req), req)
        pre = z3.And(*_stored(s, req, status)) if status != TaskStatus.Pending else z3.BoolVal(True)
        same = z3.And(*[x == y for f in ("idle", "used", "releasing", "pipelined")
                        for x, y in zip(getattr(after, f), getattr(s, f))])
        parts.append(z3.Implies(pre, z3.And(same, *identities(forward(s, req)))))
    return prove(z3.And(*parts), _base(s, req), _show(s, req))


def ob_future_idle_effect() -> Any:
    import z3

    from schedcheck.model.obligation import prove
    s, req = _sym()
    fi = s.future_idle()
    expected = {"evict from Running": vadd(fi, req), "evict from Bound": vadd(fi, req),
                "pipeline": vsub(fi, req), "allocate": vsub(fi, req)}
    parts = [z3.And(*[a == b for a, b in zip(forward(s, req).future_idle(), expected[name])])
             for name, _, forward, _ in STATEMENT_OPS]
    return prove(z3.And(*parts), _base(s, req), _show(s, req))


def ob_sums_nonneg() -> Any:
    import z3

    from schedcheck.model.obligation import prove
    s, req = _sym()
    parts = []
    for a in ALL_STATUSES:
        stored = z3.And(*_stored(s, req, a))
        for b in ALL_STATUSES:
            t = update_task(s, req, a, b)
            parts.append(z3.Implies(stored, z3.And(*_nonneg(t.used, t.releasing, t.pipelined))))
        t = add_task(s, req, a)
        parts.append(z3.And(*_nonneg(t.used, t.releasing, t.pipelined)))
    return prove(z3.And(*parts), _base(s, req), _show(s, req))


def ob_remove_never_asserts() -> Any:
    """RemoveTask's asserting Sub (on Releasing and Used) never fires for a stored task."""
    import z3

    from schedcheck.model.resource import le1
    from schedcheck.model.obligation import prove
    s, req = _sym()
    parts = []
    for st in (TaskStatus.Releasing, TaskStatus.Running):
        checks = [le1(r, u) for r, u in zip(req, s.used)]
        if st == TaskStatus.Releasing:
            checks += [le1(r, x) for r, x in zip(req, s.releasing)]
        parts.append(z3.Implies(z3.And(*_stored(s, req, st)), z3.And(*checks)))
    return prove(z3.And(*parts), _base(s, req), _show(s, req))


def ob_idle_nonneg_exact() -> Any:
    """The exact precondition: after adding a task that takes Idle, Idle >= 0 iff request <= Idle
    (per dimension); after a Pipeline, FutureIdle >= 0 iff request <= FutureIdle."""
    import z3

    from schedcheck.model.obligation import prove
    s, req = _sym()
    parts = []
    for st in ALL_STATUSES:
        t = add_task(s, req, st)
        if st == TaskStatus.Pipelined:
            parts += [(a >= 0) == (r <= f) for a, r, f in zip(t.future_idle(), req, s.future_idle())]
        else:
            parts += [(a >= 0) == (r <= i) for a, r, i in zip(t.idle, req, s.idle)]
    return prove(z3.And(*parts), _base(s, req), _show(s, req))


def ob_tolerant_fit_nonneg() -> Any:
    import z3

    from schedcheck.model.resource import le1
    from schedcheck.model.obligation import prove
    s, req = _sym()
    fit = z3.And(*[le1(r, i) for r, i in zip(req, s.idle)], *[i >= 0 for i in s.idle])
    t = add_task(s, req, TaskStatus.Allocated)
    return prove(z3.Implies(fit, z3.And(*[i >= 0 for i in t.idle])), _base(s, req), _show(s, req))


def ob_tolerant_fit_floor() -> Any:
    import z3

    from schedcheck.model.resource import TOL, le1
    from schedcheck.model.obligation import prove
    s, req = _sym()
    fit = z3.And(*[le1(r, i) for r, i in zip(req, s.idle)], *[i >= 0 for i in s.idle])
    t = add_task(s, req, TaskStatus.Allocated)
    return prove(z3.Implies(fit, z3.And(*[i > -TOL for i in t.idle])), _base(s, req), _show(s, req))


def _scalar_add(nil_allocatable: bool | None) -> Any:
    """AddTask (a status that takes Idle) on a fresh node, with the full resource encoding (scalar maps
    and their nil quirk): Idle + Used has the values of Allocatable."""
    import z3

    from schedcheck.model import resource as R
    from schedcheck.model.obligation import prove
    alloc, req = R.fresh("allocatable"), R.fresh("request")
    empty = R.SymResource(z3.RealVal(0), z3.RealVal(0), z3.BoolVal(True),
                          {n: z3.BoolVal(False) for n in R.SCALARS}, {n: z3.RealVal(0) for n in R.SCALARS})
    idle = R.sub(alloc, req)  # Idle starts as a clone of Allocatable; Used as an empty Resource (nil map)
    used = R.add(empty, req)
    hyps = R.well_formed(alloc, True) + R.well_formed(req, True) + [req.has["pods"], req.val["pods"] == 1]
    if nil_allocatable is not None:
        hyps.append(alloc.nil == z3.BoolVal(nil_allocatable))
    return prove(R.value_same(R.add(idle, used), alloc), hyps,
                 {"allocatable": alloc.show(), "request": req.show()})


def ob_scalars_nonnil() -> Any:
    return _scalar_add(False)


def ob_scalars_any() -> Any:
    return _scalar_add(None)


def obligations() -> list:
    from schedcheck.model.obligation import COUNTEREXAMPLE, Obligation

    return [
        Obligation("ledger.add-task", "AddTask with any of the 10 statuses keeps Idle + Used = Allocatable and "
                   "Used/Releasing/Pipelined equal to their task sums", ob_add),
        Obligation("ledger.remove-task", "RemoveTask of a stored task, any status, keeps the ledger identities",
                   ob_remove),
        Obligation("ledger.update-task", "UpdateTask between any two statuses (100 transitions) keeps the "
                   "ledger identities", ob_update),
        Obligation("ledger.statement-undo", "Statement evict/pipeline/allocate keep the identities and their "
                   "undo (unevict/unpipeline/unallocate) restores Idle, Used, Releasing, Pipelined exactly",
                   ob_statement_undo),
        Obligation("ledger.future-idle-effect", "FutureIdle = Idle + Releasing - Pipelined rises by the request "
                   "on evict and falls by it on pipeline and allocate", ob_future_idle_effect),
        Obligation("ledger.sums-nonneg", "Used, Releasing and Pipelined never go negative under AddTask / "
                   "UpdateTask", ob_sums_nonneg),
        Obligation("ledger.remove-never-asserts", "RemoveTask's asserting Sub never fires for a stored task",
                   ob_remove_never_asserts),
        Obligation("ledger.idle-nonneg-precondition", "after an add, Idle (FutureIdle for Pipelined) stays >= 0 "
                   "exactly when the request is <= it on every dimension", ob_idle_nonneg_exact),
        Obligation("ledger.tolerant-fit-nonneg", "a task that passed the tolerant fit (request.LessEqual(Idle)) "
                   "leaves Idle >= 0", ob_tolerant_fit_nonneg, COUNTEREXAMPLE,
                   "the 0.1 tolerance admits a request up to 0.1 above Idle: Idle may end in (-0.1, 0); "
                   "upstream only logs it"),
        Obligation("ledger.scalars-identity", "with scalar maps: AddTask on a node whose Allocatable has a "
                   "scalar map keeps Idle + Used = Allocatable on every dimension, pods included",
                   ob_scalars_nonnil),
        Obligation("ledger.scalars-identity-nil", "with scalar maps: AddTask on any node keeps Idle + Used = "
                   "Allocatable on every dimension", ob_scalars_any, COUNTEREXAMPLE,
                   "a node whose allocatable names no scalar (not even pods) has a nil Idle map: Sub drops "
                   "the task's pods (and GPUs) from Idle while Add puts them in Used, so Idle + Used exceeds "
                   "Allocatable on those dimensions"),
        Obligation("ledger.tolerant-fit-floor", "a task that passed the tolerant fit leaves Idle > -0.1",
                   ob_tolerant_fit_floor),
    ]

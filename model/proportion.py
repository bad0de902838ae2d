"""proportion's deserved (plugins/proportion.py compute_deserved) as a constraint system on one dimension.

The water-filling loop is unrolled with a `done` flag per round, so the same function runs on floats
(cross-checked against the reference) and on Z3 reals (bounds proved for 1..3 queues). One dimension
(cpu) is modelled: the reference's rounds treat dimensions independently except for the meet and
stop tests, which on a cpu-only instance read the cpu alone (memory 0 and pods absent everywhere).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

TOL = 0.1
MAX_FLOAT = 1.7976931348623157e308


@dataclass
class Queue:
    weight: Any
    guarantee: Any
    capability: Any  # None: unlimited
    request: Any


class PyOps:
    @staticmethod
    def ite(c, a, b):
        return a if c else b

    true, false = True, False

    @staticmethod
    def and_(*xs):
        return all(xs)

    @staticmethod
    def or_(*xs):
        return any(xs)

    @staticmethod
    def not_(x):
        return not x


class Z3Ops:
    def __init__(self) -> None:
        import z3

        self.z3 = z3
        self.true, self.false = z3.BoolVal(True), z3.BoolVal(False)

    def ite(self, c, a, b):
        return self.z3.If(c, a, b)

    def and_(self, *xs):
        return self.z3.And(*xs)

    def or_(self, *xs):
        return self.z3.Or(*xs)

    def not_(self, x):
        return self.z3.Not(x)


def _min(ops, a, b):
    return ops.ite(a < b, a, b)


def _max(ops, a, b):
    return ops.ite(a > b, a, b)


def real_capability(ops, total, queues: list[Queue]) -> list:
    g_sum = sum(q.guarantee for q in queues)
    exceeded = ops.ite(total > g_sum, total - g_sum, total * 0)
    return [exceeded + q.guarantee if q.capability is None else _min(ops, exceeded + q.guarantee, q.capability)
            for q in queues]


def compute_deserved(ops, total, queues: list[Queue], rounds: int) -> tuple[list, Any, Any]:
    """(deserved per queue, remaining at the end, done) after at most `rounds` rounds."""
    real = real_capability(ops, total, queues)
    deserved = [total * 0 for _ in queues]
    meet = [ops.false for _ in queues]
    remaining, done = total, ops.false
    for _ in range(rounds):
        weight = sum(ops.ite(m, 0, q.weight) for m, q in zip(meet, queues))
        stop_now = ops.or_(done, weight == 0)
        portion = _portions(ops, remaining, meet, queues, weight)
        old_remaining = remaining
        inc_sum, dec_sum = total * 0, total * 0
        new_deserved, new_meet = [], []
        for i, q in enumerate(queues):
            old = deserved[i]
            d = old + portion[i]
            d = _min(ops, d, real[i])
            d = _min(ops, d, q.request)
            d = _max(ops, d, q.guarantee)
            active = ops.and_(ops.not_(stop_now), ops.not_(meet[i]))
            d = ops.ite(active, d, old)
            req_le = ops.or_(q.request < d, ops.or_(q.request - d < TOL, d - q.request < TOL) if False else
                             _abs_lt(ops, q.request - d))
            new_meet.append(ops.or_(meet[i], ops.and_(active, ops.or_(req_le, d == old))))
            inc_sum = inc_sum + ops.ite(d > old, d - old, total * 0)
            dec_sum = dec_sum + ops.ite(d > old, total * 0, old - d)
            new_deserved.append(d)
        deserved, meet = new_deserved, new_meet
        left = remaining + dec_sum
        remaining = ops.ite(stop_now, remaining, ops.ite(left > inc_sum, left - inc_sum, total * 0))
        done = ops.or_(stop_now, remaining < TOL, remaining == old_remaining)
    return deserved, remaining, done


def _portions(ops, remaining, meet, queues: list[Queue], weight) -> list:
    """remaining * weight_i / (sum of unmet weights), as the reference computes it on floats; on Z3
    the division is a case split over the unmet set, so every product stays linear (weights constant)."""
    if ops is PyOps:
        return [remaining * (q.weight / weight) if weight else remaining * 0 for q in queues]
    import itertools

    n = len(queues)
    out = []
    for i, q in enumerate(queues):
        term = remaining * 0
        for unmet in itertools.product((False, True), repeat=n):
            if not unmet[i]:
                continue
            w_sum = sum(qq.weight for qq, u in zip(queues, unmet) if u)
            cond = ops.and_(*[ops.not_(m) if u else m for m, u in zip(meet, unmet)])
            term = ops.ite(cond, remaining * (q.weight / w_sum), term)
        out.append(term)
    return out


def _abs_lt(ops, x):
    return ops.and_(x < TOL, -x < TOL)


def check_deserved(total: float, queues: list[Queue], deserved: list[float]) -> list[str]:
    """The bounds proved below, checked on one concrete deserved; the broken ones, readable."""
    problems = []
    real = real_capability(PyOps, total, queues)
    for i, (q, d) in enumerate(zip(queues, deserved)):
        if d < q.guarantee:
            problems.append(f"queue {i}: deserved {d} < guarantee {q.guarantee}")
        if d > max(q.request, q.guarantee):
            problems.append(f"queue {i}: deserved {d} > max(request {q.request}, guarantee {q.guarantee})")
        if q.capability is None or q.guarantee <= q.capability:
            if d > real[i]:
                problems.append(f"queue {i}: deserved {d} > realCapability {real[i]}")
    if sum(q.guarantee for q in queues) <= total and sum(deserved) > total + 1e-6 * max(1.0, total):
        problems.append(f"sum of deserved {sum(deserved)} > total {total}")
    return problems


def from_attrs(total, attrs) -> tuple[float, list[Queue]]:
    """cpu-only view of reference QueueAttrs (before compute_deserved) and the total."""
    queues = []
    for a in attrs:
        cap = a.capability.milli_cpu if a.capability.milli_cpu not in (0.0, MAX_FLOAT) else None
        queues.append(Queue(a.weight, a.guarantee.milli_cpu, cap, a.request.milli_cpu))
    return total.milli_cpu, queues


# -- obligations ------------------------------------------------------------------------------


# weight vectors checked (constant weights keep the arithmetic linear)
WEIGHTS = ((1,), (1, 1), (1, 3), (1, 1, 1), (1, 2, 3))


def _sym(weights: tuple[int, ...]):
    import z3

    total = z3.Real("total")
    queues, hyps = [], [total >= 0]
    for i, w in enumerate(weights):
        g, c, r = z3.Real(f"q{i}.guarantee"), z3.Real(f"q{i}.capability"), z3.Real(f"q{i}.request")
        # an unlimited capability is one larger than anything else (MAX_FLOAT upstream)
        hyps += [g >= 0, c > 0, r >= 0]
        queues.append(Queue(w, g, c, r))
    shown = {"total": total, **{f"q{i}": {"weight": q.weight, "guarantee": q.guarantee, "capability": q.capability,
                                          "request": q.request} for i, q in enumerate(queues)}}
    return total, queues, hyps, shown


def _for_sizes(make_claim):
    import z3

    from schedcheck.model.obligation import Outcome, PROVED, prove

    for weights in WEIGHTS:
        n = len(weights)
        total, queues, hyps, shown = _sym(tuple(z3.RealVal(w) for w in weights))
        deserved, remaining, done = compute_deserved(Z3Ops(), total, queues, 2 * n + 1)
        claim, extra = make_claim(total, queues, deserved, remaining, done)
        shown = {**shown, "deserved": deserved, "remaining": remaining, "queues": n}
        outcome = prove(claim, hyps + extra, shown)
        if outcome.result != PROVED:
            return outcome
    return Outcome(PROVED, detail=f"weight vectors {WEIGHTS}")


def ob_ge_guarantee():
    import z3

    return _for_sizes(lambda t, qs, d, r, done: (z3.And(*[x >= q.guarantee for x, q in zip(d, qs)]), []))


def ob_le_request_or_guarantee():
    import z3

    return _for_sizes(lambda t, qs, d, r, done: (
        z3.And(*[z3.Or(x <= q.request, x <= q.guarantee) for x, q in zip(d, qs)]), []))


def ob_le_real_capability():
    import z3

    def claim(t, qs, d, r, done):
        real = real_capability(Z3Ops(), t, qs)
        return z3.And(*[x <= c for x, c in zip(d, real)]), [q.guarantee <= q.capability for q in qs]

    return _for_sizes(claim)


def ob_sum_le_total():

    def claim(t, qs, d, r, done):
        return sum(d) <= t + TOL, [sum(q.guarantee for q in qs) <= t, t >= 1000] + [
            q.guarantee <= q.capability for q in qs]

    return _for_sizes(claim)


def ob_terminates():
    return _for_sizes(lambda t, qs, d, r, done: (done, []))


def ob_work_conserving():
    import z3

    def claim(t, qs, d, r, done):
        real = real_capability(Z3Ops(), t, qs)
        capped = z3.And(*[x >= z3.If(q.request < c, q.request, c) - TOL for x, q, c in zip(d, qs, real)])
        return z3.Implies(r >= TOL, capped), [sum(q.guarantee for q in qs) <= t]

    return _for_sizes(claim)


def obligations() -> list:
    from schedcheck.model.obligation import COUNTEREXAMPLE, Obligation

    return [
        Obligation("proportion.deserved-ge-guarantee", "deserved >= guarantee for every queue (1..3 queues)",
                   ob_ge_guarantee),
        Obligation("proportion.deserved-le-request", "deserved <= max(request, guarantee) (1..3 queues)",
                   ob_le_request_or_guarantee),
        Obligation("proportion.deserved-le-real-capability", "when guarantee <= capability, deserved <= "
                   "realCapability = min(max(total - sum guarantee, 0) + guarantee, capability)",
                   ob_le_real_capability),
        Obligation("proportion.sum-le-total", "when the guarantees fit the cluster, the deserved shares sum to "
                   "at most the total (+ 0.1)", ob_sum_le_total, COUNTEREXAMPLE,
                   "a round hands every unmet queue its weighted part of remaining and only then raises it to "
                   "its guarantee; the raise is not taken from the others' parts, so the sum can exceed the "
                   "total (the excess is only clamped out of remaining, never out of deserved)"),
        Obligation("proportion.terminates", "the water-filling loop stops within 2n + 1 rounds for n queues",
                   ob_terminates),
        Obligation("proportion.work-conserving", "at the fixed point, if remaining >= 0.1 then every queue has "
                   "its min(request, realCapability) (within 0.1), when the guarantees fit the cluster",
                   ob_work_conserving),
    ]

"""Minimal evictions: the fewest victims, then the lowest total priority, that let a preemptor
(or a whole gang) fit, chosen by z3 Optimize among the victims the plugins offered (for the gang
actions: a whole bundle is all-or-nothing, and safe tasks are preferred at equal cost).

Fit is the preempt/reclaim resource test: InitResreq.LessEqual(FutureIdle + evicted, Zero), i.e. on
cpu, memory and every scalar the request names, request < available + 0.1. Predicates other than
resources (pod count, affinity) are not part of the optimum.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schedcheck.reference.api.resource_info import MIN_RESOURCE, Resource


@dataclass
class Candidate:
    key: str
    request: Resource
    priority: int = 0
    node: str = ""
    group: str = ""  # candidates sharing a group are evicted together (a gang action's whole bundle)


@dataclass
class Optimum:
    victims: list[str] = field(default_factory=list)
    priority_sum: int = 0

    @property
    def count(self) -> int:
        return len(self.victims)


def _dims(request: Resource) -> list[str]:
    return ["cpu", "memory"] + sorted((request.scalars or {}).keys())


def _frac(value: float):
    import z3

    return z3.RealVal(repr(float(value)))


def minimal_victims(request: Resource, future_idle: Resource, candidates: list[Candidate]) -> Optimum | None:
    """The optimal victim set for one preemptor on one node; None when even all victims do not suffice."""
    return minimal_gang_victims([request], {"": future_idle}, [
        Candidate(c.key, c.request, c.priority, "") for c in candidates])


def minimal_gang_victims(requests: list[Resource], future_idle: dict[str, Resource],
                         candidates: list[Candidate]) -> Optimum | None:
    """Place every request on some node of `future_idle` (name -> FutureIdle) with the fewest evictions.

    Each node's placed requests must fit its FutureIdle plus its evicted victims, per dimension, with
    the tolerance per placed task (the test is made task by task upstream).
    """
    import z3

    opt = z3.Optimize()
    evict = [z3.Bool(f"evict{i}") for i in range(len(candidates))]
    place = [[z3.Bool(f"place{t}@{n}") for n in future_idle] for t in range(len(requests))]
    for row in place:
        opt.add(z3.PbEq([(p, 1) for p in row], 1))
    groups: dict[str, list] = {}
    for e, c in zip(evict, candidates):
        if c.group:
            groups.setdefault(c.group, []).append(e)
    for members in groups.values():
        opt.add(*[m == members[0] for m in members[1:]])
    dims = sorted({d for r in requests for d in _dims(r)})
    for j, (name, idle) in enumerate(future_idle.items()):
        for d in dims:
            need = z3.Sum([z3.If(place[t][j], _frac(r.get(d)), 0) for t, r in enumerate(requests)] + [_frac(0)])
            slack = z3.Sum([z3.If(place[t][j], _frac(MIN_RESOURCE), 0) for t in range(len(requests))] + [_frac(0)])
            freed = z3.Sum([z3.If(evict[i], _frac(c.request.get(d)), 0)
                            for i, c in enumerate(candidates) if c.node == name] + [_frac(0)])
            opt.add(need < _frac(idle.get(d)) + freed + slack)
    count = z3.Sum([z3.If(e, 1, 0) for e in evict] + [z3.IntVal(0)])
    prio = z3.Sum([z3.If(e, c.priority, 0) for e, c in zip(evict, candidates)] + [z3.IntVal(0)])
    opt.minimize(count)
    opt.minimize(prio)
    # then spare whole bundles (evicting one breaks its gang) when a safe task does as well
    opt.minimize(z3.Sum([z3.If(e, 1, 0) for e, c in zip(evict, candidates) if c.group] + [z3.IntVal(0)]))
    if opt.check() != z3.sat:
        return None
    model = opt.model()
    chosen = [c for e, c in zip(evict, candidates) if z3.is_true(model.eval(e, model_completion=True))]
    return Optimum([c.key for c in chosen], sum(c.priority for c in chosen))


# -- obligations: evicting in victim order until the preemptor fits ------------------------------


def _greedy_setup(n: int = 3):
    import z3

    req, fi = z3.Real("request"), z3.Real("futureIdle")
    v = [z3.Real(f"victim{i}") for i in range(n)]
    hyps = [req >= 1, fi >= 0] + [x >= 1 for x in v]  # real requests: at least 1 milli-unit
    fits = [req < fi + sum(v[:k]) + MIN_RESOURCE for k in range(n + 1)]  # after the first k evictions
    # greedy stops at the first prefix that fits; `k` evictions made
    made = z3.IntVal(n)
    for k in range(n, -1, -1):
        made = z3.If(fits[k], k, made)
    return req, fi, v, hyps, fits, made


def ob_greedy_minimum() -> Any:
    import itertools

    import z3

    from schedcheck.model.obligation import prove
    req, fi, v, hyps, fits, made = _greedy_setup()
    smaller = []
    for size in range(len(v)):
        for subset in itertools.combinations(range(len(v)), size):
            fit = req < fi + sum((v[i] for i in subset), z3.RealVal(0)) + MIN_RESOURCE
            smaller.append(z3.And(fit, made > size))
    claim = z3.Implies(fits[len(v)], z3.Not(z3.Or(*smaller)))
    return prove(claim, hyps, {"request": req, "futureIdle": fi, "victimsInOrder": v, "evictionsMade": made})


def ob_greedy_last_needed() -> Any:
    import z3

    from schedcheck.model.obligation import prove
    req, fi, v, hyps, fits, made = _greedy_setup()
    parts = []
    for k in range(1, len(v) + 1):
        without_last = req < fi + sum(v[:k - 1]) + MIN_RESOURCE
        parts.append(z3.Implies(made == k, z3.Not(without_last)))
    return prove(z3.And(*parts), hyps, {"request": req, "futureIdle": fi, "victims": v})


def obligations() -> list:
    from schedcheck.model.obligation import COUNTEREXAMPLE, Obligation

    return [
        Obligation("evictions.in-order-is-minimum", "evicting in victim order until the preemptor fits "
                   "(3 victims, one dimension) evicts the fewest victims that would make it fit",
                   ob_greedy_minimum, COUNTEREXAMPLE,
                   "victim order is job/task order, not size: a small victim first and a big one second "
                   "evicts both where the big one alone suffices (preempt-excess-eviction.yaml)"),
        Obligation("evictions.in-order-last-needed", "the last victim evicted in order was needed: without "
                   "it the preemptor does not fit (the evicted prefix is minimal as a prefix)",
                   ob_greedy_last_needed),
    ]

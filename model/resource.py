"""The resource algebra of reference_impl/api/resource_info.py as Z3 terms, and its laws.

A symbolic resource has cpu and memory (reals) and a fixed set of scalar names, each with a
presence flag (the name is a key of the scalar map) and a value; `nil` stands for a nil map
(no key present, and upstream's Sub then silently drops the subtrahend's scalars).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import z3

from schedcheck.model.obligation import COUNTEREXAMPLE, Obligation, Outcome, prove

TOL = z3.RealVal("0.1")  # minResource
SCALARS = ("nvidia.com/gpu", "pods")
PODS = "pods"
ZERO, INFINITY = "zero", "infinity"


@dataclass
class SymResource:
    cpu: Any
    mem: Any
    nil: Any
    has: dict[str, Any]
    val: dict[str, Any]

    def get(self, name: str):
        return z3.If(self.has[name], self.val[name], z3.RealVal(0))

    def show(self) -> dict[str, Any]:
        return {"cpu": self.cpu, "memory": self.mem, "scalarsNil": self.nil,
                **{f"has {n}": self.has[n] for n in SCALARS}, **{n: self.val[n] for n in SCALARS}}


def fresh(prefix: str) -> SymResource:
    return SymResource(z3.Real(f"{prefix}.cpu"), z3.Real(f"{prefix}.mem"), z3.Bool(f"{prefix}.nil"),
                       {n: z3.Bool(f"{prefix}.has.{n}") for n in SCALARS},
                       {n: z3.Real(f"{prefix}.{n}") for n in SCALARS})


def well_formed(r: SymResource, nonneg: bool = False) -> list:
    """A nil map has no keys; with `nonneg`, every value is >= 0 (requests, capacities)."""
    out = [z3.Implies(r.nil, z3.Not(r.has[n])) for n in SCALARS]
    if nonneg:
        out += [r.cpu >= 0, r.mem >= 0] + [r.val[n] >= 0 for n in SCALARS]
    return out


def constant(resource) -> SymResource:
    """A reference Resource as constant terms (for cross-checking the encoding)."""
    scalars = resource.scalars
    return SymResource(
        z3.RealVal(repr(float(resource.milli_cpu))), z3.RealVal(repr(float(resource.memory))),
        z3.BoolVal(scalars is None),
        {n: z3.BoolVal(scalars is not None and n in scalars) for n in SCALARS},
        {n: z3.RealVal(repr(float((scalars or {}).get(n, 0.0)))) for n in SCALARS})


def le1(left, right):
    """One dimension, tolerant: left < right or |left - right| < minResource."""
    return z3.Or(left < right, z3.Abs(left - right) < TOL)


def lt1(left, right):
    return left < right


def _scalars_all(x: SymResource, y: SymResource, default: str, cmp) -> Any:
    parts = []
    for n in SCALARS:
        if default == INFINITY:
            parts.append(z3.Not(z3.And(y.has[n], z3.Not(x.has[n]))))
            parts.append(z3.Implies(z3.And(x.has[n], y.has[n]), cmp(x.val[n], y.val[n])))
        else:
            parts.append(z3.Implies(x.has[n], cmp(x.val[n], z3.If(y.has[n], y.val[n], z3.RealVal(0)))))
    return z3.And(*parts)


def less_equal(x: SymResource, y: SymResource, default: str = ZERO):
    return z3.And(le1(x.cpu, y.cpu), le1(x.mem, y.mem), _scalars_all(x, y, default, le1))


def less(x: SymResource, y: SymResource, default: str = ZERO):
    return z3.And(lt1(x.cpu, y.cpu), lt1(x.mem, y.mem), _scalars_all(x, y, default, lt1))


def _partly(x: SymResource, y: SymResource, default: str, cmp):
    parts = [cmp(x.cpu, y.cpu), cmp(x.mem, y.mem)]
    for n in SCALARS:
        if default == ZERO:
            parts.append(z3.And(y.has[n], z3.Not(x.has[n])))
            parts.append(z3.And(x.has[n], cmp(x.val[n], z3.If(y.has[n], y.val[n], z3.RealVal(0)))))
        else:
            parts.append(z3.And(x.has[n], z3.Not(y.has[n])))
            parts.append(z3.And(x.has[n], y.has[n], cmp(x.val[n], y.val[n])))
    return z3.Or(*parts)


def less_partly(x: SymResource, y: SymResource, default: str = ZERO):
    return _partly(x, y, default, lt1)


def less_equal_partly(x: SymResource, y: SymResource, default: str = ZERO):
    return _partly(x, y, default, le1)


def equal(x: SymResource, y: SymResource):
    """Upstream Equal: tolerance on cpu, memory and x's own scalars only."""
    parts = [z3.Abs(x.cpu - y.cpu) < TOL, z3.Abs(x.mem - y.mem) < TOL]
    parts += [z3.Implies(x.has[n], z3.Abs(x.val[n] - y.get(n)) < TOL) for n in SCALARS]
    return z3.And(*parts)


def less_equal_with_dimension(x: SymResource, y: SymResource, req: SymResource):
    """LessEqualWithDimension(AndResourcesName): strict, only the dimensions req asks for, pods skipped."""
    fails = [z3.And(req.cpu > 0, x.cpu > y.cpu), z3.And(req.mem > 0, x.mem > y.mem)]
    for n in SCALARS:
        if n == PODS:
            continue
        fails.append(z3.And(z3.Not(x.nil), req.has[n], req.val[n] > 0, x.get(n) > y.get(n)))
    return z3.Not(z3.Or(*fails))


def add(x: SymResource, y: SymResource) -> SymResource:
    any_y = z3.Or(*[y.has[n] for n in SCALARS])
    return SymResource(x.cpu + y.cpu, x.mem + y.mem, z3.And(x.nil, z3.Not(any_y)),
                       {n: z3.Or(x.has[n], y.has[n]) for n in SCALARS},
                       {n: z3.If(y.has[n], x.get(n) + y.val[n], x.val[n]) for n in SCALARS})


def sub(x: SymResource, y: SymResource) -> SymResource:
    """SubWithoutAssert (and Sub past its assertion): a nil receiver drops y's scalars."""
    apply = {n: z3.And(z3.Not(x.nil), y.has[n]) for n in SCALARS}
    return SymResource(x.cpu - y.cpu, x.mem - y.mem, x.nil,
                       {n: z3.Or(x.has[n], apply[n]) for n in SCALARS},
                       {n: z3.If(apply[n], x.get(n) - y.val[n], x.val[n]) for n in SCALARS})


def deep_same(x: SymResource, y: SymResource):
    """Semantic DeepEqual: same cpu, memory, same keys with the same values (nil equals empty)."""
    parts = [x.cpu == y.cpu, x.mem == y.mem]
    parts += [x.has[n] == y.has[n] for n in SCALARS]
    parts += [z3.Implies(x.has[n], x.val[n] == y.val[n]) for n in SCALARS]
    return z3.And(*parts)


def value_same(x: SymResource, y: SymResource):
    """Equal values on every dimension, a missing scalar read as 0."""
    return z3.And(x.cpu == y.cpu, x.mem == y.mem, *[x.get(n) == y.get(n) for n in SCALARS])


# -- obligations ------------------------------------------------------------------------------


def _three(nonneg: bool = False):
    """Three resources; proofs allow negative values (Idle and FutureIdle can be negative), refutations
    ask for non-negative ones so the counterexample is a plausible request or capacity."""
    x, y, z = fresh("x"), fresh("y"), fresh("z")
    return x, y, z, well_formed(x, nonneg) + well_formed(y, nonneg) + well_formed(z, nonneg)


def ob_le_reflexive() -> Outcome:
    x, _, _, wf = _three()
    return prove(z3.And(less_equal(x, x, ZERO), less_equal(x, x, INFINITY)), wf, {"x": x.show()})


def ob_le_transitive() -> Outcome:
    x, y, z, wf = _three(True)
    claim = z3.Implies(z3.And(less_equal(x, y), less_equal(y, z)), less_equal(x, z))
    return prove(claim, wf, {"x": x.show(), "y": y.show(), "z": z.show()})


def ob_le_antisymmetric_exact() -> Outcome:
    x, y, _, wf = _three(True)
    claim = z3.Implies(z3.And(less_equal(x, y), less_equal(y, x)), value_same(x, y))
    return prove(claim, wf, {"x": x.show(), "y": y.show()})


def ob_le_antisymmetric_tolerant() -> Outcome:
    x, y, _, _ = _three()
    wf = well_formed(x, True) + well_formed(y, True)
    claim = z3.Implies(z3.And(less_equal(x, y), less_equal(y, x)), equal(x, y))
    return prove(claim, wf, {"x": x.show(), "y": y.show()})


def ob_less_implies_le() -> Outcome:
    x, y, _, wf = _three()
    claim = z3.And(*[z3.Implies(less(x, y, d), less_equal(x, y, d)) for d in (ZERO, INFINITY)])
    return prove(claim, wf, {"x": x.show(), "y": y.show()})


def ob_less_implies_less_partly() -> Outcome:
    x, y, _, wf = _three()
    claim = z3.And(*[z3.Implies(less(x, y, d), less_partly(x, y, d)) for d in (ZERO, INFINITY)])
    return prove(claim, wf, {"x": x.show(), "y": y.show()})


def ob_less_partly_complement() -> Outcome:
    x, y, _, wf = _three(True)
    claim = less_partly(x, y, ZERO) == z3.Not(less_equal(y, x, ZERO))
    return prove(claim, wf, {"x": x.show(), "y": y.show()})


def ob_add_sub_inverse() -> Outcome:
    x, y, _, wf = _three()
    return prove(value_same(sub(add(x, y), y), x), wf, {"x": x.show(), "y": y.show()})


def ob_sub_add_inverse() -> Outcome:
    x, y, _, wf = _three(True)
    return prove(value_same(add(sub(x, y), y), x), wf, {"x": x.show(), "y": y.show()})


def ob_sub_assert_floor() -> Outcome:
    x, y, _, wf = _three()
    d = sub(x, y)
    floor = z3.And(d.cpu > -TOL, d.mem > -TOL, *[z3.Implies(d.has[n], d.val[n] > -TOL) for n in SCALARS])
    return prove(z3.Implies(z3.And(less_equal(y, x, ZERO), *well_formed(x, True)), floor), wf,
                 {"x": x.show(), "y": y.show()})


def ob_lewd_ignores_unrequested() -> Outcome:
    x, y, req, wf = _three()
    x2 = fresh("x2")
    agree = [z3.Implies(req.cpu > 0, x.cpu == x2.cpu), z3.Implies(req.mem > 0, x.mem == x2.mem), x.nil == x2.nil]
    for n in SCALARS:
        if n != PODS:
            agree.append(z3.Implies(z3.And(req.has[n], req.val[n] > 0), x.get(n) == x2.get(n)))
    claim = less_equal_with_dimension(x, y, req) == less_equal_with_dimension(x2, y, req)
    return prove(claim, wf + well_formed(x2) + agree, {"x": x.show(), "x2": x2.show(), "y": y.show(),
                                                        "req": req.show()})


def ob_le_implies_lewd() -> Outcome:
    x, y, req, wf = _three(True)
    claim = z3.Implies(less_equal(x, y, ZERO), less_equal_with_dimension(x, y, req))
    return prove(claim, wf, {"x": x.show(), "y": y.show(), "req": req.show()})


def ob_lewd_full_request_implies_le() -> Outcome:
    """With every non-pods dimension requested (and a scalar map), the strict check implies LessEqual there."""
    x, y, req, wf = _three()
    full = [req.cpu > 0, req.mem > 0, z3.Not(x.nil)] + [
        z3.And(req.has[n], req.val[n] > 0) for n in SCALARS if n != PODS]
    tolerant = z3.And(le1(x.cpu, y.cpu), le1(x.mem, y.mem),
                      *[le1(x.get(n), y.get(n)) for n in SCALARS if n != PODS])
    return prove(z3.Implies(less_equal_with_dimension(x, y, req), tolerant), wf + full,
                 {"x": x.show(), "y": y.show()})


def ob_equal_symmetric() -> Outcome:
    x, y, _, wf = _three(True)
    return prove(equal(x, y) == equal(y, x), wf, {"x": x.show(), "y": y.show()})


OBLIGATIONS = [
    Obligation("resource.le-reflexive", "x.LessEqual(x) under both Zero and Infinity defaults", ob_le_reflexive),
    Obligation("resource.le-transitive", "x <= y and y <= z imply x <= z (LessEqual, Zero)", ob_le_transitive,
               COUNTEREXAMPLE, "the 0.1 tolerance is not transitive: differences just under 0.1 add up; "
               "a chain of tolerant fits can accept what one direct comparison refuses"),
    Obligation("resource.le-antisymmetric", "x <= y and y <= x imply x = y (values)", ob_le_antisymmetric_exact,
               COUNTEREXAMPLE, "LessEqual is a preorder up to the tolerance, not a partial order"),
    Obligation("resource.le-antisymmetric-tolerant", "for non-negative resources, x <= y and y <= x imply "
               "x.Equal(y) (the tolerance-level equality)", ob_le_antisymmetric_tolerant),
    Obligation("resource.less-implies-le", "x.Less(y) implies x.LessEqual(y), both defaults", ob_less_implies_le),
    Obligation("resource.less-implies-less-partly", "x.Less(y) implies x.LessPartly(y), both defaults",
               ob_less_implies_less_partly),
    Obligation("resource.less-partly-complement", "x.LessPartly(y) iff not y.LessEqual(x) (Zero)",
               ob_less_partly_complement, COUNTEREXAMPLE,
               "LessPartly is strict and LessEqual tolerant: within 0.1 both x.LessPartly(y) and y.LessEqual(x) hold"),
    Obligation("resource.add-sub-inverse", "(x + y) - y has the values of x", ob_add_sub_inverse),
    Obligation("resource.sub-add-inverse", "(x - y) + y has the values of x", ob_sub_add_inverse, COUNTEREXAMPLE,
               "upstream's sub on a nil scalar map drops the subtrahend's scalars, and Add then adds them back"),
    Obligation("resource.sub-assert-floor", "for x >= 0, when Sub's assertion y.LessEqual(x) passes, every "
               "dimension of x - y is > -0.1", ob_sub_assert_floor),
    Obligation("resource.lewd-ignores-unrequested", "LessEqualWithDimension(x, y, req) depends only on the "
               "dimensions req requests (> 0), never on pods", ob_lewd_ignores_unrequested),
    Obligation("resource.le-implies-lewd", "x.LessEqual(y) implies x.LessEqualWithDimension(y, req)",
               ob_le_implies_lewd, COUNTEREXAMPLE,
               "LessEqualWithDimension is strict (no tolerance): a fit within 0.1 passes LessEqual and fails it"),
    Obligation("resource.lewd-full-request-sound", "with every non-pods dimension requested, "
               "LessEqualWithDimension implies the tolerant LessEqual on those dimensions",
               ob_lewd_full_request_implies_le),
    Obligation("resource.equal-symmetric", "x.Equal(y) iff y.Equal(x)", ob_equal_symmetric, COUNTEREXAMPLE,
               "Equal reads only the receiver's scalar names: a scalar only the argument has is ignored"),
]

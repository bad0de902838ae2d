"""Proof obligations: a claim under hypotheses, discharged by asking Z3 for a counterexample."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

PROVED = "proved"
COUNTEREXAMPLE = "counterexample"
UNKNOWN = "unknown"


@dataclass
class Outcome:
    result: str
    counterexample: dict[str, Any] = field(default_factory=dict)
    detail: str = ""


@dataclass
class Obligation:
    name: str
    statement: str
    run: Callable[[], Outcome]
    expect: str = PROVED  # COUNTEREXAMPLE: a documented, expected finding
    finding: str = ""  # why the refutation is expected (docs/model.md)


@dataclass
class Verdict:
    obligation: Obligation
    outcome: Outcome
    seconds: float

    @property
    def ok(self) -> bool:
        return self.outcome.result == PROVED or (
            self.outcome.result == COUNTEREXAMPLE and self.obligation.expect == COUNTEREXAMPLE)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.obligation.name, "statement": self.obligation.statement,
            "result": self.outcome.result, "expected": self.obligation.expect,
            "ok": self.ok, "seconds": round(self.seconds, 4),
        }
        if self.outcome.counterexample:
            out["counterexample"] = self.outcome.counterexample
        if self.obligation.finding and self.outcome.result == COUNTEREXAMPLE:
            out["finding"] = self.obligation.finding
        if self.outcome.detail:
            out["detail"] = self.outcome.detail
        return out


def discharge(obligation: Obligation) -> Verdict:
    start = time.perf_counter()
    outcome = obligation.run()
    return Verdict(obligation, outcome, time.perf_counter() - start)


def _value(model, term) -> Any:
    import z3

    value = model.eval(term, model_completion=True)
    if z3.is_true(value):
        return True
    if z3.is_false(value):
        return False
    if z3.is_rational_value(value):
        frac = value.as_fraction()
        return int(frac) if frac.denominator == 1 else float(frac)
    if z3.is_int_value(value):
        return value.as_long()
    return str(value)


def prove(claim, hypotheses: list, shown: dict[str, Any], timeout_ms: int = 20_000) -> Outcome:
    """PROVED when hypotheses ∧ ¬claim is unsat; else the model's values of the `shown` terms.

    `shown` maps a readable name to a z3 term, or to a nested dict/list of terms.
    """
    import z3

    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(*hypotheses)
    solver.add(z3.Not(claim))
    answer = solver.check()
    if answer == z3.unsat:
        return Outcome(PROVED)
    if answer == z3.unknown:
        return Outcome(UNKNOWN, detail=solver.reason_unknown())
    model = solver.model()
    return Outcome(COUNTEREXAMPLE, _render(model, shown))


def _render(model, shown: Any) -> Any:
    if isinstance(shown, dict):
        return {k: _render(model, v) for k, v in shown.items()}
    if isinstance(shown, (list, tuple)):
        return [_render(model, v) for v in shown]
    if isinstance(shown, (int, float, str, bool)):
        return shown
    return _value(model, shown)


def concrete(outcome_ok: bool, counterexample: dict[str, Any] | None = None, detail: str = "") -> Outcome:
    """An outcome decided by evaluating the encoding on concrete instances (bounded enumeration)."""
    if outcome_ok:
        return Outcome(PROVED, detail=detail)
    return Outcome(COUNTEREXAMPLE, counterexample or {}, detail)

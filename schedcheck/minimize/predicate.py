"""The minimiser's test against the reference: "this document still fails the same way"."""

from __future__ import annotations

from typing import Any

from schedcheck.minimize.cause import Cause, cause_of
from schedcheck.minimize.edits import Doc

class FailurePredicate:
    """"This document still violates invariant X, for the same cause": loads it (unreadable: no), runs it
    with an engine limited to X (with the named deliberate bug active, if any), and looks at safety
    violations and quality findings alike. Any other exception while running counts as "no" (a different
    failure).

    The cause (schedcheck.minimize.cause) is the original's: taken from `original` when given, otherwise
    from the first document found failing, which is the minimiser's own first call, on the scenario it
    was handed. A violation of X with another cause is "no"."""

    def __init__(self, invariant_id: str, seed: int = 0, mutant: str | None = None,
                 original: Doc | None = None) -> None:
        from schedcheck.mutants import MUTANTS

        if mutant is not None and mutant not in MUTANTS:
            raise ValueError(f"unknown mutant {mutant!r} (known: {', '.join(sorted(MUTANTS))})")
        self.invariant_id, self.seed, self.mutant = invariant_id, seed, mutant
        self.cause: Cause | None = None if original is None else failure_cause(original, invariant_id, seed, mutant)

    def __call__(self, candidate: Doc) -> bool:
        causes = _causes(candidate, self.invariant_id, self.seed, self.mutant)
        if self.cause is None:
            if not causes:
                return False
            self.cause = causes[0]
            return True
        return self.cause in causes


def failing_predicate(invariant_id: str, seed: int = 0, mutant: str | None = None,
                      original: Doc | None = None) -> FailurePredicate:
    """The minimiser's predicate for a failure of the reference (see FailurePredicate)."""
    return FailurePredicate(invariant_id, seed, mutant, original)


def failure_cause(doc: Doc, invariant_id: str, seed: int = 0, mutant: str | None = None) -> Cause | None:
    """The cause of the first violation of the invariant on the document, or None if it does not fail."""
    causes = _causes(doc, invariant_id, seed, mutant)
    return causes[0] if causes else None


def _causes(doc: Doc, invariant_id: str, seed: int, mutant: str | None) -> list[Cause]:
    from schedcheck.invariants.engine import InvariantEngine
    from schedcheck.invariants.catalog import get as get_invariant
    from schedcheck.mutants import mutant as activate
    from schedcheck.runner import run_scenario
    from schedcheck.scenario.errors import ScenarioError
    from schedcheck.scenario.loader import scenario_from_document

    try:
        scenario = scenario_from_document(doc, "<minimise>")
    except ScenarioError:
        return []
    only = [invariant_id] if get_invariant(invariant_id) is not None else []  # e.g. upstream.assert
    engine = InvariantEngine(only=only, stop_at_first=True)
    try:
        if mutant:
            with activate(mutant):
                result = run_scenario(scenario, seed=seed, engine=engine)
        else:
            result = run_scenario(scenario, seed=seed, engine=engine)
    except Exception:  # noqa: BLE001 - a crash is a different failure, not this one
        return []
    found: list[dict[str, Any]] = [v for v in result.violations + result.findings if v.get("id") == invariant_id]
    return [cause_of(v, scenario.conf) for v in found]

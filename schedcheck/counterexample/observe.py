"""Observing a failure: replay a scenario and excerpt the objects a violation names, before and after
the failing operation (the state sections of report.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from schedcheck.counterexample.file import PSEUDO_RULES, recorded_failures
from schedcheck.invariants.engine import InvariantEngine
from schedcheck.invariants.registry import ACTION as ACTION_END
from schedcheck.invariants.registry import CLOSE, OPERATION, STATEMENT
from schedcheck.invariants.catalog import get as get_invariant
from schedcheck.invariants.snapshot import state_excerpt
from schedcheck.invariants.violation import Violation, plain
from schedcheck.scenario.model import Scenario


@dataclass
class FailureObservation:
    """The first violation of an invariant in a run, with the state of its objects before and after."""

    violation: dict[str, Any]  # Violation.to_json() form (or the runner's record for upstream.assert)
    before: dict[str, Any] | None = None
    before_label: str = ""
    after: dict[str, Any] | None = None
    after_label: str = ""


Excerpt = tuple[str, dict[str, Any]]  # (when it was taken, the excerpt)


class _ObservingEngine(InvariantEngine):
    """The invariant engine plus an observer that excerpts chosen objects at every checkpoint of one cycle.

    The observer's hooks run after the engine's own, so at each checkpoint it sees whether the target
    invariant has just fired. Until then it keeps the excerpts a "before" may need (see BEFORE).
    """

    def __init__(self, only: list[str], target: str, cycle: int, objects: list[str]) -> None:
        super().__init__(only=only)
        self.target, self.cycle, self.objects = target, cycle, objects
        self.last_any: Excerpt | None = None  # the previous checkpoint of any kind
        self.last_operation: Excerpt | None = None  # the previous operation (or session open)
        self.last_action: Excerpt | None = None  # the previous action's end (or session open)
        self.statement_begin: dict[int, Excerpt] = {}  # statement id -> when it began
        self.statement_of: dict[str, int] = {}  # task uid -> statement of its latest operation
        self.caught: tuple[Violation, Excerpt | None, Excerpt] | None = None

    def hooks(self):
        hooks = super().hooks()
        hooks.on_session_open.append(lambda ssn: self._see(ssn, "at session open", kind="open"))
        hooks.on_statement_begin.append(self._statement_begins)
        hooks.on_operation.append(lambda ssn, op: self._see(
            ssn, f"after {op.op} {op.task} on {op.node or '-'} ({ssn.current_action or '-'})", kind=OPERATION,
            op=op))
        hooks.on_statement_end.append(lambda ssn, kind, ops: self._see(
            ssn, f"after the {kind} of a statement ({ssn.current_action or '-'})", kind=STATEMENT, ops=ops))
        hooks.on_action_end.append(lambda ssn, action: self._see(ssn, f"after action {action}", kind=ACTION_END))
        hooks.on_session_closed.append(lambda ssn: self._see(ssn, "after the session closed", kind=CLOSE))
        return hooks

    def _statement_begins(self, ssn, stmt) -> None:
        if self.caught is None and ssn.cycle == self.cycle:
            label = f"when the statement began, before its operations ({ssn.current_action or '-'})"
            self.statement_begin[stmt.id] = (label, state_excerpt(ssn, self.objects))

    def _fired(self) -> Violation | None:
        return next((v for v in self.violations + self.findings if v.invariant == self.target), None)

    def _see(self, ssn, label: str, kind: str, op=None, ops=None) -> None:
        if self.caught is not None or ssn.cycle != self.cycle:
            return
        if op is not None and op.statement:
            self.statement_of[op.task_uid] = op.statement
        excerpt = (label, state_excerpt(ssn, self.objects))
        fired = None if kind == "open" else self._fired()
        if fired is not None:
            self.caught = (fired, self._before(fired.checkpoint, ops or []), excerpt)
            return
        self.last_any = excerpt
        if kind in ("open", OPERATION):
            self.last_operation = excerpt
        if kind in ("open", ACTION_END):
            self.last_action = excerpt

    def _before(self, checkpoint: str, ops: list) -> Excerpt | None:
        if checkpoint == OPERATION:
            return self.last_operation
        if checkpoint == STATEMENT:
            ids = sorted({self.statement_of[op.task.uid] for op in ops if op.task.uid in self.statement_of})
            begun = next((self.statement_begin[i] for i in ids if i in self.statement_begin), None)
            return begun or self.last_any
        if checkpoint in (ACTION_END, CLOSE):
            return self.last_action
        return self.last_any


# What "before" means, per checkpoint kind (shown in report.md).
BEFORE = {
    OPERATION: "the state of the same objects after the previous operation of the same session (or at session "
               "open, if the failing operation was the session's first)",
    STATEMENT: "the state of the same objects when the failing statement began, before its first operation (so the "
               "difference is the whole statement's effect)",
    ACTION_END: "the state of the same objects when the failing action began: after the previous action, or at "
                "session open",
    CLOSE: "the state of the same objects after the session's last action, before it closed",
}


def only_ids(invariant: str) -> list[str]:
    return [invariant] if get_invariant(invariant) is not None else []


def run_with(scenario: Scenario, seed: int, mutant: str | None, engine: InvariantEngine):
    from schedcheck.mutants import mutant as activate
    from schedcheck.runner import run_scenario

    if mutant:
        with activate(mutant):
            return run_scenario(scenario, seed=seed, engine=engine)
    return run_scenario(scenario, seed=seed, engine=engine)


def first_violation(scenario: Scenario, invariant: str, seed: int, mutant: str | None,
                    engine: InvariantEngine | None = None) -> dict[str, Any] | None:
    """The first violation (or finding) of the invariant in a run, in Violation.to_json() form."""
    result = run_with(scenario, seed, mutant, engine or InvariantEngine(only=only_ids(invariant)))
    return next((v for v in recorded_failures(result, scenario.name) if v.get("id") == invariant), None)


def observe_failure(scenario: Scenario, invariant: str, seed: int, mutant: str | None) -> FailureObservation | None:
    """Replay twice: once to find the violation and the objects it names, once more with the observer
    excerpting those objects at every checkpoint of the failing cycle. None if it does not fail."""
    found = first_violation(scenario, invariant, seed, mutant)
    if found is None:
        return None
    if invariant in PSEUDO_RULES or not found.get("objects"):
        return FailureObservation(violation=found, after=found.get("state") or None,
                                  after_label="when the failure was recorded")
    engine = _ObservingEngine(only_ids(invariant), invariant, found["cycle"], list(found["objects"]))
    run_with(scenario, seed, mutant, engine)
    if engine.caught is None:  # not deterministic after all: report what the first run saw
        return FailureObservation(violation=found, after=found.get("state") or None,
                                  after_label="when the failure was recorded")
    fired, previous, now = engine.caught
    return FailureObservation(
        violation=fired.to_json(),
        before=plain(previous[1]) if previous else None,
        before_label=previous[0] if previous else "",
        after=fired.to_json().get("state") or plain(now[1]),
        after_label=f"{now[0]}, when the invariant fired",
    )


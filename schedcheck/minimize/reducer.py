"""The driver: greedy reduction to a fixed point under a time budget.

The passes (schedcheck.minimize.passes) run in order, coarse to fine, and the
whole sequence repeats until a round accepts nothing (or the time budget runs
out). It is deterministic: no randomness, candidates in document order, so the
same input and predicate give the same result.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from collections.abc import Callable

from schedcheck.minimize.edits import Doc, Drop, Edit
from schedcheck.minimize.passes import NORMALISATIONS, PASSES
from schedcheck.minimize.stats import MinimizeStats, scenario_counts

Predicate = Callable[[Doc], bool]


def minimize(doc: Doc, still_fails: Predicate, budget_seconds: float | None = None) -> Doc:
    """The smallest document reachable by the passes on which `still_fails` holds."""
    return minimize_with_stats(doc, still_fails, budget_seconds)[0]


def minimize_with_stats(doc: Doc, still_fails: Predicate,
                        budget_seconds: float | None = None) -> tuple[Doc, MinimizeStats]:
    reducer = _Reducer(still_fails, budget_seconds)
    return reducer.run(doc), reducer.stats


class _BudgetExhausted(Exception):
    pass


class _Reducer:
    def __init__(self, still_fails: Predicate, budget_seconds: float | None) -> None:
        self.still_fails = still_fails
        self.stats = MinimizeStats()
        self.started = time.monotonic()
        self.deadline = None if budget_seconds is None else self.started + budget_seconds
        self.seen: set[bytes] = set()  # candidates already tried (digests of their canonical JSON)
        self.best: Doc = {}  # the smallest document known to fail

    def run(self, doc: Doc) -> Doc:
        self.best = copy.deepcopy(doc)
        self.stats.before = scenario_counts(self.best)
        try:
            self.stats.attempts += 1
            self.stats.initially_failing = bool(self.still_fails(copy.deepcopy(self.best)))
            self.seen.add(_canonical(self.best))
            if self.stats.initially_failing:
                self._reduce()
        except _BudgetExhausted:
            self.stats.budget_exhausted = True
        finally:
            self.stats.seconds = time.monotonic() - self.started
        self.stats.after = scenario_counts(self.best)
        return self.best

    def _reduce(self) -> None:
        for normalise in NORMALISATIONS:
            candidate = normalise(copy.deepcopy(self.best))
            if candidate is not None:
                self._try(candidate, "normalise")
        while True:
            self.stats.rounds += 1
            before = self.stats.accepted
            for name, step in PASSES:
                if isinstance(step, Drop):
                    self._drop_pass(name, step)
                else:
                    self._edit_pass(name, step)
            if self.stats.accepted == before:
                return

    def _try(self, candidate: Doc, pass_name: str) -> bool:
        key = _canonical(candidate)
        if key in self.seen:
            return False
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise _BudgetExhausted
        self.seen.add(key)
        self.stats.attempts += 1
        if self.still_fails(copy.deepcopy(candidate)):
            self.best = candidate
            self.stats.accepted += 1
            self.stats.by_pass[pass_name] += 1
            return True
        return False

    def _edit_pass(self, name: str, edits: Callable[[Doc], list[Edit]]) -> None:
        """Try each edit in order; after an accepted one, stay at the same position (it may apply again,
        or the next item has moved into its place)."""
        position = 0
        while True:
            available = edits(self.best)
            if position >= len(available):
                return
            _, make = available[position]
            if not any(self._try(candidate, name) for candidate in make(copy.deepcopy(self.best))):
                position += 1

    def _drop_pass(self, name: str, step: Drop) -> None:
        """ddmin-style removal: all items at once, then halves, quarters, ..., single items."""
        items = step.items(self.best)
        size = len(items)
        while size >= 1 and items:
            index = 0
            while index < len(items):
                chunk = items[index:index + size]
                if self._try(step.drop(copy.deepcopy(self.best), set(chunk)), name):
                    items = step.items(self.best)  # the next items have moved into place
                else:
                    index += size
            if size == 1:
                return
            size = max(1, size // 2)
            items = step.items(self.best)


def _canonical(doc: Doc) -> bytes:
    """A digest of the document's canonical JSON (the set of tried candidates stays small)."""
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).digest()

"""The conformance search: scenarios through an implementation until one does not conform, then
minimise that scenario with the implementation re-run on every candidate."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schedcheck.conform.check import Verdict, conform_one
from schedcheck.conform.impl import Implementation
from schedcheck.progress import Progress
from schedcheck.scenario.errors import ScenarioError

BATCH = 20  # generated scenarios drawn at a time


@dataclass
class SearchResult:
    seed: int
    scenarios: int = 0  # scenarios run before the search stopped
    seconds: float = 0.0
    call_seconds: float = 0.0  # of which spent inside the implementation
    failing: Verdict | None = None
    original: dict[str, Any] | None = None  # the first failing scenario, as found
    found_after: float = 0.0
    minimised: dict[str, Any] | None = None
    minimised_verdict: Verdict | None = None
    stats: Any = None  # minimize.MinimizeStats
    names: list[str] = field(default_factory=list)

    @property
    def conformant(self) -> bool:
        return self.failing is None


def folder_scenarios(folder: str) -> list[tuple[str, dict[str, Any]]]:
    """Every *.yaml/*.yml/*.json scenario in a folder, sorted; ScenarioError for one that does not load."""
    from schedcheck.scenario.loader import load_scenario

    root = Path(folder)
    if not root.is_dir():
        raise ScenarioError(folder, "folder", "--scenarios", "not a directory")
    out = []
    for path in sorted(p for p in root.iterdir() if p.suffix in (".yaml", ".yml", ".json")):
        # one-line error naming file, object and field when it does not load; the document as the loader read
        # it (a second, laxer parse of the text could fail where the loader did not: a stray BOM, say)
        out.append((path.name, load_scenario(path).document))
    if not out:
        raise ScenarioError(folder, "folder", "--scenarios", "holds no *.yaml, *.yml or *.json scenario")
    return out


def generated_scenarios(seed: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """An endless stream of generated scenarios (what the gate draws, ci profile: contested clusters among
    them), the same for the same seed."""
    from schedcheck.gate_properties import gate_scenarios
    from schedcheck.generators.scenarios import sample_documents

    batch = 0
    while True:
        for doc in sample_documents(gate_scenarios("ci"), BATCH, seed=seed * 7919 + batch):
            yield doc["metadata"]["name"], doc
        batch += 1


def same_failure(kind: str) -> Callable[[Verdict], bool]:
    return lambda verdict: verdict.kind == kind


def search(impl: Implementation, source: Iterator[tuple[str, dict[str, Any]]] | list[tuple[str, dict[str, Any]]],
           seed: int, budget: float, minimise_budget: float = 30.0,
           progress: Progress | None = None, workers: int = 1) -> SearchResult:
    """Run scenarios until one does not conform or the budget is spent; with workers > 1, that many
    calls run at once, and results are still judged in scenario order (the same first failure)."""
    from concurrent.futures import ThreadPoolExecutor

    from schedcheck.scenario.loader import scenario_from_document

    started = time.monotonic()
    out = SearchResult(seed=seed)
    stream = iter(source)

    def job(name: str, doc: dict[str, Any]) -> Verdict:
        return conform_one(impl, scenario_from_document(doc, name), copy.deepcopy(doc), seed)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        pending: list[tuple[str, dict[str, Any], Any]] = []
        while True:
            while len(pending) < max(1, workers) and time.monotonic() - started <= budget:
                item = next(stream, None)
                if item is None:
                    break
                pending.append((item[0], item[1], pool.submit(job, item[0], item[1])))
            if not pending:
                break
            name, doc, future = pending.pop(0)
            verdict = future.result()
            out.scenarios += 1
            out.call_seconds += verdict.seconds
            out.names.append(name)
            if progress is not None:
                elapsed = time.monotonic() - started
                progress.update(elapsed, scenarios=out.scenarios, per_s=out.scenarios / max(elapsed, 1e-9),
                                findings=int(not verdict.ok))
            if not verdict.ok:
                out.failing, out.original = verdict, doc
                out.found_after = time.monotonic() - started
                for _, _, other in pending:
                    other.cancel()
                break
    if out.failing is not None:
        assert out.original is not None
        out.minimised, out.stats, out.minimised_verdict = minimise(impl, out.original, out.failing, seed,
                                                                   minimise_budget)
    out.seconds = time.monotonic() - started
    return out


def minimise(impl: Implementation, doc: dict[str, Any], verdict: Verdict, seed: int,
             budget: float) -> tuple[dict[str, Any], Any, Verdict]:
    """The smallest scenario the minimiser reaches on which the implementation fails the same way."""
    from schedcheck.minimize import minimize_with_stats
    from schedcheck.scenario.loader import scenario_from_document

    kind = verdict.kind
    last: dict[str, Verdict] = {}

    def still_fails(candidate: dict[str, Any]) -> bool:
        try:
            scenario = scenario_from_document(candidate, "<minimise>")
        except ScenarioError:
            return False
        try:
            found = conform_one(impl, scenario, candidate, seed)
        except Exception:  # noqa: BLE001 - the reference cannot judge this candidate: not the same failure
            return False
        if found.kind == kind and _reference_passes(scenario, candidate, seed, found.kind):
            last["verdict"] = found
            return True
        return False

    small, stats = minimize_with_stats(copy.deepcopy(doc), still_fails, budget_seconds=budget)
    scenario = scenario_from_document(small, "<minimised>")
    final = conform_one(impl, scenario, copy.deepcopy(small), seed)
    if final.kind != kind:  # a flaky implementation: keep what the minimiser last saw
        final = last.get("verdict", verdict)
    return small, stats, final


def _reference_passes(scenario: Any, doc: dict[str, Any], seed: int, kind: str | None) -> bool:
    """The reference's own answer passes the outside checks on a candidate: a rule that the reference
    itself breaks there is no rule of upstream's (a plugin it depends on was dropped, say), so the
    minimiser must not reduce into such candidates."""
    if kind is None or kind.startswith("fault.") or kind == "divergence":
        return True
    from schedcheck.conform.external import check_result
    from schedcheck.conform.reference import run

    # The raw outside checks: check_answer would drop whatever the reference shares with itself.
    return not check_result(scenario, run(copy.deepcopy(doc), seed))

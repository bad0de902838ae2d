"""The gate's seed corpus: the packaged scenarios, replayed before anything is generated.

Like a fuzzer's seed corpus, the scenarios that already reach contested states (preemption, reclaim,
queue bounds, topology, ...) are tried first. Two sources:

- `schedcheck/corpus/` (also `tests/scenarios/`): scenarios derived by hand from upstream's unit tests,
  the seeds and the known findings, each with an `expect` block stating upstream's decisions. There the
  gate judges the decisions themselves, not only the invariants: a scheduler that binds, evicts,
  pipelines or admits differently fails with `corpus.expectation`, naming the scenario and the decision.
- `schedcheck/corpus/upstream/`: upstream's own unit-test cases (`uthelper.TestCommonStruct`), extracted
  with their expectations by `schedcheck upstream-tests` from a Volcano checkout, those the reference meets.
- `schedcheck/mutant_scenarios/`: the self-test's scenarios, judged by the invariants (and the `expect`
  blocks some of them have).

Every scenario runs at tie-breaking seed 0, the seed its expectations were derived at. Violations and
expectation misses fail the gate; quality findings there are upstream's known behaviour (a corpus
scenario that shows a finding is its regression test), so they are counted, never failed, even under
`--strict`. The self-test withholds a mutant's own scenario (`exclude`), so the blind gate is not handed
the answer.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from schedcheck.counterexample.file import EXPECTATION, expectation_record

PACKAGE = Path(__file__).resolve().parent
CORPUS_DIRS = (PACKAGE / "corpus", PACKAGE / "corpus" / "upstream", PACKAGE / "corpus" / "rediscovery",
               PACKAGE / "mutant_scenarios")
SEED = 0  # the tie-breaking seed every corpus expectation was derived at
CRASH = "reference.crash"  # the failure id of an exception out of the scheduler under test (the gate's too)


@dataclass(frozen=True)
class CorpusEntry:
    path: Path
    name: str  # the file's stem (mutant scenarios are named after their mutant)


@lru_cache(maxsize=1)
def corpus() -> tuple[CorpusEntry, ...]:
    """Every packaged scenario, in a fixed order."""
    return tuple(CorpusEntry(path, path.stem) for folder in CORPUS_DIRS for path in sorted(folder.glob("*.yaml")))


@lru_cache(maxsize=1)
def corpus_documents() -> tuple[dict[str, Any], ...]:
    """Every corpus scenario's document, in corpus() order (read once per process: the replay and the
    corpus mutations share them)."""
    from schedcheck.scenario.loader import load_scenario

    return tuple(load_scenario(entry.path).document for entry in corpus())


@dataclass
class CorpusOutcome:
    scenarios: int = 0
    cycles: int = 0
    seconds: float = 0.0
    failure: dict[str, Any] | None = None  # id, message, cycle, action, scenario
    doc: dict[str, Any] | None = None  # the failing scenario's document


def replay_corpus(*, worker: int = 0, workers: int = 1, exclude: Iterable[str] = (), only: list[str] | None = None,
                  fail_on_known: Iterable[str] = (), stats: Any = None) -> CorpusOutcome:
    """Run this worker's share of the corpus (every `workers`-th scenario) until the first failure."""
    from schedcheck.invariants.engine import InvariantEngine
    from schedcheck.runner import run_scenario
    from schedcheck.scenario.loader import scenario_from_document

    skip = set(exclude)
    outcome = CorpusOutcome()
    started = time.perf_counter()
    documents = corpus_documents()
    for index, entry in enumerate(corpus()):
        if index % max(1, workers) != worker or entry.name in skip:
            continue
        scenario = scenario_from_document(documents[index], str(entry.path))
        engine = InvariantEngine(only=only, stop_at_first=True, fail_on_known=tuple(fail_on_known))
        outcome.scenarios += 1
        try:
            result = run_scenario(scenario, seed=SEED, engine=engine)
        except Exception as exc:  # noqa: BLE001 - a crash of the scheduler under test is a finding
            outcome.failure = {"id": CRASH, "message": f"corpus scenario {entry.name}: {type(exc).__name__}: {exc}",
                               "cycle": -1, "action": "", "scenario": entry.name}
        else:
            outcome.cycles += result.cycles
            if stats is not None:
                _count(stats, engine, result)
            outcome.failure = _first_failure(entry, result, judge_expectations=only is None)
        if outcome.failure is not None:
            outcome.doc = scenario.document
            break
    outcome.seconds = time.perf_counter() - started
    return outcome


def _count(stats: Any, engine: Any, result: Any) -> None:
    for inv_id, count in engine.checks.items():
        stats.checks[inv_id] = stats.checks.get(inv_id, 0) + count
    stats.invariant_checks += result.invariant_checks
    stats.findings += len(result.findings)


def _first_failure(entry: CorpusEntry, result: Any, judge_expectations: bool) -> dict[str, Any] | None:
    if result.violations:
        violation = dict(result.violations[0])
        violation["message"] = f"corpus scenario {entry.name}: {violation.get('message', '')}"
        violation["scenario"] = entry.name
        return violation
    if judge_expectations:
        record = expectation_record(result, entry.name)
        if record is not None:
            record["message"] = f"corpus {record['message']}"
        return record
    return None

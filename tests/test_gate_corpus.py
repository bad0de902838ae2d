"""The gate's seed corpus: the packaged scenarios replayed first, judged by their expect blocks and the invariants."""

from __future__ import annotations

import json
from pathlib import Path

from schedcheck.cli import main
from schedcheck.gate_corpus import EXPECTATION, corpus, replay_corpus
from schedcheck.gate_properties import WorkerConfig, WorkerStats, run_worker
from schedcheck.mutants import mutant
from schedcheck.selftest import blind_gate


def test_the_clean_reference_meets_every_corpus_scenario():
    stats = WorkerStats(0)
    outcome = replay_corpus(stats=stats)
    assert outcome.failure is None, outcome.failure
    assert outcome.scenarios == len(corpus()) >= 200 and outcome.cycles >= outcome.scenarios
    assert stats.checks.get("node.ledger", 0) > 0  # every invariant ran, not only the expectations


def test_a_changed_decision_fails_on_its_expect_block_even_when_no_invariant_notices():
    # reversing the task order changes which pod capacity's reclaim evicts: a legal victim, so no
    # victim rule fires, but not the one upstream evicts
    with mutant("priority-task-order-reversed"):
        outcome = replay_corpus()
    assert outcome.failure is not None and outcome.failure["id"] == EXPECTATION
    assert "decides differently from upstream" in outcome.failure["message"]
    assert outcome.failure["scenario"] and outcome.doc is not None and outcome.doc["kind"] == "Scenario"


def test_workers_share_the_corpus_and_exclusions_withhold_scenarios():
    total = len(corpus())
    first, second = replay_corpus(worker=0, workers=2), replay_corpus(worker=1, workers=2)
    assert first.scenarios + second.scenarios == total and abs(first.scenarios - second.scenarios) <= 1
    withheld = replay_corpus(exclude=["gang-discard", "no-such-scenario"])
    assert withheld.scenarios == total - 1


def test_selftest_withholds_the_mutants_own_scenario(tmp_path):
    # pdb-ignores-budget is caught by its own scenario and by the two pdb scenarios of the corpus
    seconds, invariant, scenario = blind_gate("pdb-ignores-budget", budget=0.1, seed=1)
    assert seconds is not None and scenario in {"pdb-budget-spent-twice-in-one-session", "pdb-spares-the-budgeted-pods"}
    assert scenario != "pdb-ignores-budget" and invariant in {EXPECTATION, "victim.pdb-respected"}
    seconds, _, scenario = blind_gate("pdb-ignores-budget", budget=0.1, seed=1, corpus=False)
    assert scenario is None


def test_the_gate_reports_a_corpus_miss_with_a_replayable_scenario(tmp_path, capsys):
    reports = tmp_path / "reports"
    code = main(["gate", "--budget", "5", "--seed", "1", "--mutant", "priority-task-order-reversed", "--no-progress",
                 "--database", str(tmp_path / "db"), "--report", str(reports), "--json"])
    assert code == 1
    result = json.loads(capsys.readouterr().out)
    assert result["failure"]["invariant"] == EXPECTATION and result["failure"]["corpusScenario"]
    assert result["corpus"]["scenarios"] >= 1
    folder = Path(result["report"])
    report = json.loads((folder / "report.json").read_text())
    assert report["reproducedOnMinimised"] and "expect block" in report["rule"]
    assert main(["replay", str(folder / "counterexample.yaml")]) == 1  # the mutant is recorded in the file


def test_no_corpus_generates_only(tmp_path):
    config = WorkerConfig(budget=0, seed=3, database=str(tmp_path / "db"), machine=False, max_examples=3,
                          corpus=False)
    stats, failure = run_worker(config)
    assert failure is None and stats.corpus_scenarios == 0 and stats.examples >= 3

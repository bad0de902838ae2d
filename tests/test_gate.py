"""The gate's properties under plain pytest, at a small fixed example count, and its command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from schedcheck.gate_properties import WorkerConfig, check_document, run_worker
from schedcheck.cli import main


def _config(tmp_path: Path, **kw) -> WorkerConfig:
    # generation only: tests/test_gate_corpus.py covers the corpus replayed first
    return WorkerConfig(budget=0, seed=kw.pop("seed", 3), database=str(tmp_path / "db"), machine=False,
                        max_examples=kw.pop("max_examples", 25), corpus=kw.pop("corpus", False), **kw)


def test_generated_scenarios_keep_every_safety_invariant(tmp_path):
    stats, failure = run_worker(_config(tmp_path))
    assert failure is None, f"{failure.invariant}: {failure.message}"
    assert stats.examples >= 25 and stats.cycles >= stats.examples and stats.invariant_checks > 0


def test_the_property_catches_a_deliberate_bug(tmp_path):
    # generation alone (no corpus); which seed meets the bug within 100 examples depends on the strategies'
    # draw order, so the first seed that does is used, of four
    for seed in (1, 2, 3, 4):
        stats, failure = run_worker(_config(tmp_path / str(seed), seed=seed, mutant="gang-commit-too-few",
                                            max_examples=100))
        if failure is not None:
            break
    assert failure is not None and failure.invariant.startswith("gang.")
    assert failure.doc["kind"] == "Scenario"
    # the shrinking after the first failure is timed apart from scheduling, checking and generation
    from schedcheck.gate import GateResult

    assert stats.shrink_seconds > 0 and stats.seconds >= failure.found_after + stats.shrink_seconds - 0.01
    share = GateResult(seed=seed, budget=0, workers=1, stats=[stats], failure=failure).totals()["timeShare"]
    assert share["shrinking"] > 0 and abs(sum(share.values()) - 1) < 0.02


def test_a_reference_crash_is_a_finding_not_a_harness_error(monkeypatch):
    import schedcheck.runner as runner

    def crash(*args, **kwargs):
        raise KeyError("boom")
    monkeypatch.setattr("schedcheck.gate_properties.run_scenario", crash)
    _, failure = check_document({"apiVersion": "schedcheck/v1", "kind": "Scenario", "metadata": {"name": "x"}},
                                seed=0, strict=False)
    assert failure["id"] == "reference.crash" and "KeyError" in failure["message"]
    assert runner.run_scenario is not crash


def test_gate_usage_errors(capsys):
    assert main(["gate", "--workers", "0"]) == 2
    assert main(["gate", "--budget", "-1"]) == 2
    assert main(["gate", "--mutant", "no-such-bug"]) == 2
    assert "unknown 'no-such-bug'" in capsys.readouterr().err


def test_a_report_or_database_place_that_cannot_be_written_is_a_usage_error_before_the_run(tmp_path, capsys):
    a_file = tmp_path / "plain-file"
    a_file.write_text("mine")
    for option in ("--report", "--database"):
        assert main(["gate", "--budget", "600", option, str(a_file)]) == 2  # refused at once: no 600 s run
        assert capsys.readouterr().err.strip() == (
            f"schedcheck: gate: {option}: {a_file}: cannot use it as the database folder: File exists"
            if option == "--database" else f"schedcheck: gate: --report {a_file}: not a folder")
    assert main(["gate", "--budget", "600", "--junit", str(a_file / "gate.xml")]) == 2
    assert "--junit" in capsys.readouterr().err and a_file.read_text() == "mine"


def test_gate_with_two_xdist_workers_writes_junit(tmp_path):
    junit = tmp_path / "gate.xml"
    proc = subprocess.run([sys.executable, "-m", "schedcheck.cli", "gate", "--budget", "4", "--seed", "5",
                           "--workers", "2", "--junit", str(junit), "--database", str(tmp_path / "db"),
                           "--report", str(tmp_path / "reports"), "--json"],
                          capture_output=True, text=True, check=False, cwd=Path(__file__).parent.parent)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["workers"] == 2 and result["result"] == "clean" and result["examples"] > 0
    assert junit.exists() and "testcase" in junit.read_text()
    summary = json.loads((Path(result["report"]) / "summary.json").read_text())  # a clean gate leaves evidence
    assert summary["examples"] == result["examples"] and summary["checksPerInvariant"]["node.ledger"] > 0
    assert summary["reached"]["action:allocate"] > 0 and summary["reached"]["plugin:gang"] > 0
    from schedcheck.invariants.catalog import catalog

    ids = {inv.id for inv in catalog()}
    assert set(summary["neverChecked"]) == ids - set(summary["checksPerInvariant"])


def test_gate_finds_minimises_and_replays_a_bug(tmp_path, capsys):
    reports = tmp_path / "reports"
    code = main(["gate", "--budget", "30", "--seed", "1", "--mutant", "gang-commit-too-few",
                 "--database", str(tmp_path / "db"), "--report", str(reports), "--json"])
    assert code == 1
    result = json.loads(capsys.readouterr().out)
    assert result["failure"]["invariant"].startswith("gang.")
    counterexample = Path(result["report"]) / "counterexample.yaml"
    assert counterexample.exists() and (Path(result["report"]) / "report.md").exists()
    assert (Path(result["report"]) / "original.yaml").exists()  # the scenario before minimisation
    assert result["minimised"]["after"]["pods"] <= result["minimised"]["before"]["pods"]
    assert main(["replay", str(counterexample)]) == 1  # the mutant is recorded in the file


@pytest.mark.parametrize("profile", ["ci", "nightly"])
def test_profiles_draw_loadable_scenarios_within_their_bounds(profile):
    from schedcheck.generators.scenarios import profile_scenarios, sample_documents, scenario_profiles
    from schedcheck.scenario.loader import scenario_from_document

    bounds = scenario_profiles[profile]
    docs = sample_documents(profile_scenarios(profile), 5, seed=3)
    assert len(docs) == 5
    for doc in docs:
        scenario = scenario_from_document(doc, f"<{profile}>")
        assert 1 <= len(scenario.objects.nodes) <= bounds["max_nodes"]
        assert 1 <= scenario.cycles <= bounds["max_cycles"]


def test_an_unreadable_document_is_skipped_not_a_crash():
    doc = {"apiVersion": "schedcheck/v1", "kind": "Scenario", "metadata": {"name": "x"},
           "objects": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}},
                       {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}]}
    assert check_document(doc, seed=0, strict=False) == (None, None)



def test_a_drawn_cluster_is_checked_under_its_conf_variants_and_a_variant_failure_keeps_that_conf(tmp_path):
    import yaml
    from hypothesis import strategies as st

    from schedcheck.gate_properties import with_conf
    from schedcheck.generators.confs import default_conf

    scenario = Path(__file__).resolve().parents[1] / "schedcheck" / "mutant_scenarios" / "drf-allocate-forgotten.yaml"
    doc = yaml.safe_load(scenario.read_text())
    with_drf = default_conf()
    without_drf = default_conf()
    for tier in without_drf["tiers"]:
        tier["plugins"] = [p for p in tier["plugins"] if p["name"] != "drf"]
    doc["schedulerConf"] = without_drf
    variant = with_conf(doc, with_drf)
    assert variant["schedulerConf"] == with_drf and doc["schedulerConf"] == without_drf
    assert variant["metadata"]["name"] != doc["metadata"]["name"] and variant["objects"] == doc["objects"]

    # the drawn conf has no drf, so the mutant (drf's allocate handler lost) shows only under a conf with drf
    stats, failure = run_worker(_config(tmp_path, mutant="drf-allocate-forgotten", max_examples=1),
                                strategy=st.just((doc, [without_drf])))
    assert failure is None and stats.examples == 2
    stats, failure = run_worker(_config(tmp_path / "2", mutant="drf-allocate-forgotten", max_examples=1),
                                strategy=st.just((doc, [without_drf, with_drf])))
    assert failure is not None and failure.invariant == "queue.drf-allocated"
    assert failure.doc["schedulerConf"] == with_drf and failure.doc["objects"] == doc["objects"]
    assert failure.doc["metadata"]["name"] == variant["metadata"]["name"]  # named from its content once it failed


def test_gate_bench_times_every_stage_of_a_fixed_sample(capsys):
    from schedcheck.gate_bench import bench_gate, render_gate_bench

    bench = bench_gate(documents=4, seed=0, repeats=1, machine_batches=1)
    assert bench.documents == 4 and bench.scenarios >= 4 and bench.cycles >= bench.scenarios
    assert bench.generation_ms > 0 and bench.load_ms > 0 and bench.run_ms > bench.invariants_ms > 0
    assert bench.machine_cycles > 0 and bench.generated_cycles_per_s > 0
    text = render_gate_bench(bench, 0, "ci")
    for stage in ("generation", "load", "run", "invariants", "stateful machine"):
        assert stage in text
    assert main(["gate", "--bench", "0"]) == 2
    assert "--bench: expected 1 or more" in capsys.readouterr().err



def test_two_workers_without_pytest_xdist_is_a_one_line_usage_error(monkeypatch, capsys):
    from schedcheck.cli import main
    from schedcheck.commands import gate as command

    monkeypatch.setattr(command, "_have", lambda *modules: False)
    assert main(["gate", "--budget", "1", "--workers", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--workers" in err and "pytest-xdist" in err and "schedcheck[test]" in err

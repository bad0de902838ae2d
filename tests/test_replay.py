"""Counterexample files, their report folders, and `schedcheck replay`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest
import yaml

from schedcheck.invariants.catalog import get as get_invariant
from schedcheck.counterexample import (
    ACTION,
    CYCLE,
    FILE_NAME,
    INVARIANT,
    MUTANT,
    ORIGINAL_FILE_NAME,
    SEED,
    annotate,
    dump_counterexample,
    first_violation,
    observe_failure,
    read_counterexample,
    write_counterexample_report,
)
from schedcheck.minimize import failing_predicate, minimize_with_stats
from schedcheck.replay import cmd_replay, replay
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.loader import load_scenario_text, scenario_from_document
from tests.test_minimize import GANG, GANG_MUTANT, group_doc, node_doc, partial_gang_doc, pod_doc, scenario_doc

PIPELINE_MUTANT = "pipeline-not-reserved"
CONFORM_SCENARIOS = Path(__file__).parent / "conform" / "scenarios"
IMPLS = Path(__file__).parent.parent / "examples" / "impls"


def args(path, **extra) -> argparse.Namespace:
    return argparse.Namespace(file=str(path), json=extra.get("json", False), impl=extra.get("impl"))


@pytest.fixture(scope="module")
def gang_report(tmp_path_factory):
    """The noisy partial gang, minimised under gang-commit-too-few and written as a report folder."""
    doc = partial_gang_doc(noise=10)
    violation = first_violation(scenario_from_document(doc, "<test>"), GANG, 0, GANG_MUTANT)
    minimised, stats = minimize_with_stats(doc, failing_predicate(GANG, 0, GANG_MUTANT, original=doc))
    parent = tmp_path_factory.mktemp("reports")
    folder = write_counterexample_report(parent, minimised, violation, 0, GANG_MUTANT, stats, found_after=1.5,
                                         original=doc)
    return parent, folder, violation


def write(tmp_path: Path, doc: dict, name: str = FILE_NAME) -> Path:
    path = tmp_path / name
    path.write_text(dump_counterexample(doc), encoding="utf-8")
    return path


# ---------------------------------------------------------------- the report folder


def test_the_report_folder_holds_its_five_files_and_nothing_half_written(gang_report):
    parent, folder, _ = gang_report
    assert folder.parent == parent and GANG in folder.name
    assert sorted(p.name for p in folder.iterdir()) == ["counterexample.yaml", "original.yaml", "report.html",
                                                        "report.json", "report.md"]
    assert [p.name for p in parent.iterdir()] == [folder.name]  # no .partial-* left behind


def test_the_counterexample_carries_its_annotations(gang_report):
    _, folder, violation = gang_report
    doc = yaml.safe_load((folder / FILE_NAME).read_text())
    notes = doc["metadata"]["annotations"]
    assert notes[INVARIANT] == GANG and notes[SEED] == "0" and notes[MUTANT] == GANG_MUTANT
    assert notes[CYCLE] == str(violation["cycle"]) and notes[ACTION] == violation["action"] == "allocate"
    cx = read_counterexample(folder / FILE_NAME)
    assert (cx.invariant, cx.seed, cx.cycle, cx.action, cx.mutant) == (GANG, 0, 0, "allocate", GANG_MUTANT)
    assert len(cx.scenario.objects.nodes) <= 1 and len(cx.scenario.objects.pod_groups) <= 1


def test_report_json_names_the_invariant_and_the_states(gang_report):
    _, folder, _ = gang_report
    payload = json.loads((folder / "report.json").read_text())
    assert payload["invariant"] == GANG and payload["rule"] == get_invariant(GANG).statement
    assert payload["violation"]["id"] == GANG and payload["reproducedOnMinimised"]
    assert payload["seed"] == 0 and payload["mutant"] == GANG_MUTANT and payload["foundAfter"] == 1.5
    assert payload["replay"] == f"schedcheck replay {folder / FILE_NAME}"
    assert payload["minimisation"]["before"]["nodes"] == 11 and payload["minimisation"]["after"]["nodes"] <= 1
    before, after = payload["before"]["state"], payload["after"]["state"]
    assert before and after and before != after  # the statement's effect is visible
    assert "statement began" in payload["before"]["label"]


def test_report_md_is_readable(gang_report):
    _, folder, _ = gang_report
    text = (folder / "report.md").read_text()
    assert f"# Counterexample: `{GANG}`" in text and get_invariant(GANG).statement in text
    assert "cycle 0, action allocate" in text and f"`{GANG_MUTANT}`" in text
    assert f"schedcheck replay {folder / FILE_NAME}" in text
    for heading in ("## What broke", "## Replay", "## Minimisation", "### Nodes", "### Queues",
                    "### Jobs (PodGroups)", "### Pods", "## State before and after the failing operation",
                    "### Before", "### After", "What changed:"):
        assert heading in text, heading
    assert "| node | allocatable |" in text and "| pod | job | requests | node | phase | priority |" in text
    assert "*Before* is" in text  # what "before" means is written down


def test_the_original_scenario_is_kept_beside_the_minimised_one(gang_report, capsys):
    _, folder, _ = gang_report
    original = yaml.safe_load((folder / ORIGINAL_FILE_NAME).read_text())
    assert original["metadata"]["annotations"][INVARIANT] == GANG
    del original["metadata"]["annotations"]
    assert original == partial_gang_doc(noise=10)  # the scenario as found, annotated the same way
    assert (folder / ORIGINAL_FILE_NAME).read_text().startswith("# The scenario as the search found it")
    assert cmd_replay(args(folder / ORIGINAL_FILE_NAME)) == 1  # it replays too
    capsys.readouterr()
    payload = json.loads((folder / "report.json").read_text())
    assert payload["original"] == ORIGINAL_FILE_NAME and payload["originalScenario"]["nodes"] == 11
    assert payload["sameCause"] and payload["cause"] == payload["originalCause"]
    assert payload["cause"]["invariant"] == GANG and payload["cause"]["plugins"]["gang"] is not None
    text = (folder / "report.md").read_text()
    assert "## Files" in text and "`counterexample.yaml`: the minimised scenario" in text
    assert "`original.yaml`: the scenario as the search found it" in text and "11 nodes" in text
    assert "| cause | original | minimised |" in text and "Warning" not in text


# ---------------------------------------------------------------- replay


def test_replay_reproduces_the_violation(gang_report, capsys):
    _, folder, _ = gang_report
    result = replay(str(folder / FILE_NAME))
    assert result.reproduced and result.same_place and result.violation["id"] == GANG
    assert result.mutant == GANG_MUTANT and result.exit_status == 1
    assert cmd_replay(args(folder / FILE_NAME)) == 1
    out = capsys.readouterr().out
    assert "still fails" in out and GANG in out and "seed 0" in out and GANG_MUTANT in out
    assert out.count("\n") == 1  # one paragraph


def test_replay_is_deterministic(gang_report):
    _, folder, _ = gang_report
    first, second = replay(str(folder / FILE_NAME)), replay(str(folder / FILE_NAME))
    assert first.violation == second.violation


def test_replay_without_the_bug_exits_0(gang_report, tmp_path, capsys):
    _, folder, _ = gang_report
    doc = yaml.safe_load((folder / FILE_NAME).read_text())
    del doc["metadata"]["annotations"][MUTANT]  # as if the bug had been fixed
    path = write(tmp_path, doc)
    assert not replay(str(path)).reproduced
    assert cmd_replay(args(path)) == 0
    out = capsys.readouterr().out
    assert "no longer fails" in out and GANG in out


def test_replay_json(gang_report, capsys):
    _, folder, _ = gang_report
    assert cmd_replay(args(folder / FILE_NAME, json=True)) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["reproduced"] and payload["invariant"] == GANG and payload["violation"]["id"] == GANG


def test_replay_with_an_unusable_impl_is_a_usage_error(gang_report, capsys):
    _, folder, _ = gang_report
    assert cmd_replay(args(folder / FILE_NAME, impl="./no-such-scheduler")) == 2
    assert "not an executable command" in capsys.readouterr().err


def test_replay_with_impl_runs_the_scenario_through_it(gang_report, capsys):
    # The gang counterexample needs the deliberate bug; the clean reference conforms on it.
    _, folder, _ = gang_report
    assert cmd_replay(args(folder / FILE_NAME, impl="python:schedcheck.conform.reference:run")) == 0
    assert "conforms on this scenario" in capsys.readouterr().out


def test_replay_of_a_conformance_counterexample(tmp_path, capsys):
    from schedcheck.conform.report import annotate as annotate_conform

    doc = yaml.safe_load((CONFORM_SCENARIOS / "releasing-pod.yaml").read_text())
    path = tmp_path / "cx.yaml"
    path.write_text(yaml.safe_dump(annotate_conform(doc, "ledger.identity", 0, "drift")))
    drift = f"{sys.executable} {IMPLS / 'ledger_drift.py'}"
    assert cmd_replay(args(path, impl=drift)) == 1
    assert "(the recorded finding)" in capsys.readouterr().out
    assert cmd_replay(args(path, impl="python:schedcheck.conform.reference:run", json=True)) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["conformant"] and out["recorded"] == "ledger.identity" and not out["reproduced"]
    assert cmd_replay(args(path)) == 2  # found against an implementation: --impl is needed
    assert "replay it with --impl" in capsys.readouterr().err


def test_the_counterexample_is_an_ordinary_scenario(gang_report, capsys):
    from schedcheck.cli import main

    _, folder, _ = gang_report
    assert main(["run", str(folder / FILE_NAME), "--json"]) == 0  # the clean reference passes it
    assert json.loads(capsys.readouterr().out)["violations"] == []


NOTES = "apiVersion: schedcheck/v1\nkind: Scenario\nmetadata:\n  annotations:\n    "


@pytest.mark.parametrize("content, complaint", [
    (None, "cannot read"),
    ("objects: [\n", ""),
    ("apiVersion: schedcheck/v1\nkind: Scenario\nobjects: []\n", "not a counterexample"),
    ("apiVersion: schedcheck/v1\nkind: Scenario\nmetadata:\n  annotations: {schedcheck.io/invariant: no.such}\n",
     "unknown invariant"),
    (NOTES + "{schedcheck.io/invariant: gang.commit-ready, schedcheck.io/seed: 'x'}\n", "schedcheck.io/seed"),
    (NOTES + "{schedcheck.io/invariant: gang.commit-ready, schedcheck.io/mutant: no-such-bug}\n", "no-such-bug"),
    (NOTES + "{schedcheck.io/invariant: gang.commit-ready, schedcheck.io/seed: 3}\n", "metadata.annotations"),
])
def test_unreadable_input_exits_2(tmp_path, capsys, content, complaint):
    path = tmp_path / "cx.yaml"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    assert cmd_replay(args(path)) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("schedcheck: ") and complaint in captured.err
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err


# ---------------------------------------------------------------- observing an operation checkpoint


def test_before_and_after_around_a_failing_operation(tmp_path):
    """pipeline-not-reserved breaks node.pipelined-sum right at the pipeline operation."""
    objects = [node_doc("n1", cpu="4"), pod_doc("low-0", "low", cpu="2", node="n1", phase="Running"),
               pod_doc("low-1", "low", cpu="2", node="n1", phase="Running"), pod_doc("high-0", "high", cpu="2"),
               group_doc("low", 1, phase="Running"), group_doc("high", 1, phase="Inqueue", priorityClassName="high"),
               {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                "value": 1000}]
    doc = scenario_doc("preempt", objects, actions="enqueue, allocate, preempt")
    scenario = scenario_from_document(doc, "<test>")
    seen = observe_failure(scenario, "node.pipelined-sum", 0, PIPELINE_MUTANT)
    assert seen is not None and seen.violation["checkpoint"] == "operation"
    assert seen.violation["operation"].startswith("pipeline default/high-0")
    assert seen.before is not None and seen.after is not None and seen.before != seen.after
    assert seen.after["node n1"]["tasks"]["default/high-0"] == "Pipelined"
    assert "default/high-0" not in seen.before["node n1"]["tasks"]
    assert observe_failure(scenario, "node.pipelined-sum", 0, None) is None
    folder = write_counterexample_report(tmp_path, doc, seen.violation, 0, PIPELINE_MUTANT, None, None)
    assert "previous operation" in (folder / "report.md").read_text()
    assert cmd_replay(args(folder / FILE_NAME)) == 1


# ---------------------------------------------------------------- the loader's annotations


def test_the_loader_reads_scenario_annotations():
    doc = annotate(partial_gang_doc(), GANG, 0, "allocate", 7, None)
    scenario = scenario_from_document(doc, "<test>")
    assert scenario.annotations == {INVARIANT: GANG, CYCLE: "0", ACTION: "allocate", SEED: "7"}
    assert scenario_from_document(partial_gang_doc(), "<test>").annotations == {}
    assert load_scenario_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n", "plain.yaml").annotations == {}


@pytest.mark.parametrize("annotations, field", [
    (["a"], "metadata.annotations"),
    ({"schedcheck.io/seed": 3}, "metadata.annotations.schedcheck.io/seed"),
    ({"schedcheck.io/cycle": None}, "metadata.annotations.schedcheck.io/cycle"),
])
def test_the_loader_rejects_bad_annotations(annotations, field):
    doc = partial_gang_doc()
    doc["metadata"]["annotations"] = annotations
    with pytest.raises(ScenarioError) as caught:
        scenario_from_document(doc, "bad.yaml")
    assert caught.value.file == "bad.yaml" and caught.value.obj == "Scenario" and caught.value.field == field


def test_the_report_accepts_just_the_invariant_id_and_a_stats_mapping(tmp_path):
    """The gate's call: the invariant id, the stats as a plain mapping, found_after in seconds."""
    doc = partial_gang_doc()
    _, stats = minimize_with_stats(doc, failing_predicate(GANG, 0, GANG_MUTANT))
    folder = write_counterexample_report(tmp_path, doc, GANG, 0, GANG_MUTANT, {**stats, "minimiseSeconds": 0.1}, 2.0)
    payload = json.loads((folder / "report.json").read_text())
    assert payload["violation"]["id"] == GANG and payload["violation"]["cycle"] == 0
    assert payload["minimisation"]["minimiseSeconds"] == 0.1 and payload["minimisation"]["before"]["pods"] == 3
    assert "| found after | 2.0 s |" in (folder / "report.md").read_text()
    assert replay(str(folder / FILE_NAME)).reproduced
    assert not (folder / ORIGINAL_FILE_NAME).exists() and "original" not in payload  # none was given

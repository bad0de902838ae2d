"""What the scheduler writes on PodGroups besides the phase (podGroupAnnotations, podGroupConditions) is
compared where an answer gives it."""

from __future__ import annotations

import copy

import yaml

from schedcheck.conform.differential import compare
from schedcheck.conform.protocol import validate
from schedcheck.conform.reference import run
from schedcheck.scenario.loader import scenario_from_document
from tests.conform.helpers import ROOT, fixture

HYPERNODE = "volcano.sh/job-allocated-hypernode"
# The job comes with the annotation s3 and fits in any of s3..s6, equally scored: a hypernode tie.
RESCHEDULED = ("schedcheck/corpus/upstream/allocate-TestAllocateWithNetWorkTopologies-hard-network-topology-"
               "constrain-and-task-in-job-rescheduled-can-allocate-job-when-the-tier-corresponding-to-3.yaml")


def _rescheduled() -> tuple:
    doc = yaml.safe_load((ROOT / RESCHEDULED).read_text())
    return scenario_from_document(copy.deepcopy(doc), "rescheduled"), doc


def test_the_reference_reports_what_the_podgroups_carry_and_passes_its_own_check():
    scenario, doc = _rescheduled()
    answer = run(doc)
    # master writes no annotation: the one the scenario gave is left as it was, wherever the job goes
    assert answer["podGroupAnnotations"] == {"c1/pg1": {HYPERNODE: "s3"}}
    assert answer["podGroupConditions"] == {
        "c1/pg1": {"Scheduled": {"status": "True", "reason": "tasks in gang are ready to be scheduled"}}}
    assert validate(answer) == [] and compare(scenario, answer) == []


def test_a_wrong_hypernode_annotation_is_a_divergence():
    scenario, doc = _rescheduled()
    answer = run(doc)
    node = next(iter(answer["binds"].values()))
    answer["podGroupAnnotations"]["c1/pg1"][HYPERNODE] = node.split("-")[0]  # as v1.12 and v1.13 rewrite it
    findings = compare(scenario, answer)
    assert [f.kind for f in findings] == ["divergence"]
    assert "PodGroup annotations differ: c1/pg1" in findings[0].message
    assert findings[0].details["field"] == "podGroupAnnotations"


def test_an_annotation_on_a_podgroup_the_reference_leaves_bare_is_a_divergence():
    doc = fixture("gang-partial")
    answer = run(doc)
    group = next(iter(answer["podGroupPhases"]))
    answer["podGroupAnnotations"] = {group: {HYPERNODE: "rack-1"}}
    assert [f.kind for f in compare(scenario_from_document(doc, "g"), answer)] == ["divergence"]


def test_a_wrong_condition_is_a_divergence():
    doc = fixture("gang-partial")
    scenario = scenario_from_document(doc, "g")
    answer = run(doc)
    group, conditions = next(iter(answer["podGroupConditions"].items()))
    assert compare(scenario, answer) == []
    wrong = copy.deepcopy(answer)
    wrong["podGroupConditions"][group] = {"Scheduled": {"status": "True", "reason": "tasks in gang are ready"}}
    findings = compare(scenario, wrong)
    assert [f.kind for f in findings] == ["divergence"] and "PodGroup conditions" in findings[0].message
    assert findings[0].details["reference"] == conditions


def test_an_answer_without_the_fields_is_not_judged_on_them():
    scenario, doc = _rescheduled()
    answer = run(doc)
    for field in ("podGroupAnnotations", "podGroupConditions"):
        answer.pop(field)
    assert compare(scenario, answer) == []
    answer["podGroupConditions"] = {"c1/pg1": {}}  # a PodGroup with nothing to report is an absent one
    answer["podGroupAnnotations"] = {"c1/pg1": {HYPERNODE: "s3"}}
    assert compare(scenario, answer) != []  # present but without the Scheduled condition: a divergence


def test_another_hypernode_taken_at_a_tie_stays_a_tie():
    """Another seed puts the job in another of the tied hypernodes; the annotation and condition it reports
    are the ones the guided replay makes there."""
    scenario, doc = _rescheduled()
    mine = run(copy.deepcopy(doc), seed=0)
    others = [run(copy.deepcopy(doc), seed=seed) for seed in range(1, 8)]
    other = next(o for o in others if o["binds"] != mine["binds"])
    assert [t for t in mine["ties"] if t["kind"] == "hyperNode"]
    assert other["podGroupAnnotations"] == mine["podGroupAnnotations"]
    assert compare(scenario, other, seed=0) == []

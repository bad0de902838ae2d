"""The replay that lets the catalog's rules judge another implementation's history."""

from __future__ import annotations

import copy

from schedcheck.conform.reference import run
from schedcheck.conform.replay import DECISION_RULES, Step, history, judge
from schedcheck.invariants.catalog import catalog
from schedcheck.scenario.loader import scenario_from_document
from tests.conform.helpers import fixture


def test_every_decision_rule_is_a_catalog_rule():
    ids = {inv.id for inv in catalog()}
    assert set(DECISION_RULES) <= ids and len(set(DECISION_RULES)) == len(DECISION_RULES)


def test_history_keeps_what_stood_and_marks_what_was_bound():
    trace = [
        {"cycle": 0, "action": "allocate", "op": "allocate", "task": "ns/a", "node": "n1"},
        {"cycle": 0, "action": "allocate", "op": "allocate", "task": "ns/b", "node": "n1"},
        {"cycle": 0, "action": "allocate", "op": "unallocate", "task": "ns/b", "node": "n1"},
        {"cycle": 0, "action": "allocate", "op": "bind", "task": "ns/a", "node": "n1"},
        {"cycle": 0, "action": "preempt", "op": "evict", "task": "ns/v", "node": "n2"},
        {"cycle": 0, "action": "preempt", "op": "unevict", "task": "ns/v", "node": "n2"},
        {"cycle": 1, "action": "backfill", "op": "bind", "task": "ns/c", "node": "n2"},
    ]
    steps = history({"trace": trace}, 2)
    assert steps == {0: [Step("allocate", "allocate", "ns/a", "n1", True)],
                     1: [Step("backfill", "allocate", "ns/c", "n2", True)]}


def test_without_a_trace_only_one_cycle_can_be_placed():
    answer = {"binds": {"ns/a": "n1"}, "evicted": ["ns/v"], "pipelined": {"ns/p": "n2"}}
    assert [s.op for s in history(answer, 1)[0]] == ["evict", "allocate", "pipeline"]
    assert history(answer, 2) is None


def test_the_reference_answer_passes_its_own_rules_and_a_changed_one_does_not():
    doc = fixture("gang-partial")
    scenario = scenario_from_document(copy.deepcopy(doc), "g")
    answer = run(copy.deepcopy(doc))
    assert judge(scenario, answer) == []
    half = copy.deepcopy(answer)
    half["binds"] = {"default/mpi-2-master-0": "node-1"}
    half["trace"] = [{"cycle": 0, "action": "allocate", "op": "bind", "task": "default/mpi-2-master-0",
                      "node": "node-1"}]
    found = judge(scenario, half)
    assert found and found[0].kind == "check.gang.commit-ready" and "job default/mpi-2" in found[0].objects


def test_rule_coverage_counts_what_judges_another_implementation():
    from schedcheck.conform.replay import rule_coverage

    coverage = rule_coverage()
    ids = {inv.id for inv in catalog()}
    assert coverage["judged"] == len(DECISION_RULES)
    assert set(coverage["skippedIds"]) == ids - set(DECISION_RULES)
    assert coverage["skipped"] == len(coverage["skippedIds"])

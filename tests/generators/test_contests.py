"""generators/contests.py: contested clusters (a full cluster, jobs that preempt or reclaim into it)."""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, find, given, settings

from schedcheck.generators.consistency import cluster_problems
from schedcheck.generators.contests import CONTEST_ACTIONS, contested_scenarios
from schedcheck.generators.scenarios import scenario_profiles, to_yaml
from schedcheck.gate_properties import gate_scenarios
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario_text, scenario_from_document
from tests.generators.test_found import UPSTREAM_FINDINGS
from tests.generators.test_strategies import check_bounds, job_pods, of_kind

QUICK = settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
FIND = settings(database=None, max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
CI = scenario_profiles["ci"]


@settings(QUICK, max_examples=100)
@given(contested_scenarios(**CI))
def test_contested_documents_are_consistent_clusters_within_the_profile(doc):
    check_bounds(doc, CI, min_jobs=1)
    assert cluster_problems(doc) == []
    assert doc["schedulerConf"]["actions"] in CONTEST_ACTIONS
    assert load_scenario_text(to_yaml(doc), "contest.yaml").objects.nodes


@settings(QUICK, max_examples=100)
@given(contested_scenarios(**CI))
def test_clean_reference_runs_contested_documents_without_safety_violations(doc):
    result = run_scenario(scenario_from_document(doc, "<contested>"), seed=0)
    assert [v for v in result.violations if v["id"] not in UPSTREAM_FINDINGS] == [], to_yaml(doc)


def _evicts_in(action: str):
    def evicts(doc) -> bool:
        result = run_scenario(scenario_from_document(doc, "<contested>"), seed=0)
        return any(step["op"] == "evict" and step.get("action") == action for step in result.trace) \
            and bool(result.evicted)
    return evicts


def test_some_contested_document_makes_preempt_evict():
    doc = find(contested_scenarios(**CI), _evicts_in("preempt"), settings=settings(FIND, phases=[Phase.generate]))
    assert of_kind(doc, "PriorityClass")


def test_some_contested_document_makes_reclaim_evict():
    doc = find(contested_scenarios(**CI), _evicts_in("reclaim"), settings=settings(FIND, phases=[Phase.generate]))
    assert "reclaim" in doc["schedulerConf"]["actions"]


def test_contested_documents_shrink_to_one_node_one_victim_one_preemptor():
    # Hypothesis draws the simplest example first (every choice at its shrink target); shrinking from a
    # random one can stop short of it, so the first draw is what is checked
    doc = find(contested_scenarios(**CI), lambda d: True, settings=settings(FIND, max_examples=1,
                                                                            phases=[Phase.generate]))
    assert len(of_kind(doc, "Node")) == 1 and len(of_kind(doc, "PriorityClass")) == 2
    filler, preemptor = of_kind(doc, "PodGroup")
    assert filler["spec"]["queue"] == preemptor["spec"]["queue"] == "default"
    assert filler["spec"]["priorityClassName"] == "low" and preemptor["spec"]["priorityClassName"] == "high"
    assert preemptor["status"]["phase"] == "Inqueue" and len(job_pods(doc, preemptor)) == 1
    assert len(job_pods(doc, filler)) == 2 and doc["schedulerConf"]["actions"] == CONTEST_ACTIONS[0]
    assert doc["cycles"] == 1
    result = run_scenario(scenario_from_document(doc, "<simplest>"), seed=0)
    assert len(result.evicted) == 1 and result.pipelined  # the simplest contest is already one preemption


def test_some_contested_document_holds_nodes_in_a_queue_reclaim_may_not_touch():
    def held(doc) -> bool:
        return any(g["metadata"]["name"] == "hold" for g in of_kind(doc, "PodGroup"))

    doc = find(contested_scenarios(**CI), held, settings=settings(FIND, phases=[Phase.generate]))
    hold = next(g for g in of_kind(doc, "PodGroup") if g["metadata"]["name"] == "hold")
    fill = next(g for g in of_kind(doc, "PodGroup") if g["metadata"]["name"] == "fill")
    assert hold["spec"]["queue"] != fill["spec"]["queue"]
    queue = next(q for q in of_kind(doc, "Queue") if q["metadata"]["name"] == hold["spec"]["queue"])
    pods = job_pods(doc, hold)
    protected = queue["spec"].get("reclaimable") is False or all(
        p["metadata"]["annotations"].get("volcano.sh/preemptable") == "false" for p in pods[1:])
    assert protected and pods
    assert {p["spec"]["nodeName"] for p in pods} < {n["metadata"]["name"] for n in of_kind(doc, "Node")}
    waiting = [g for g in of_kind(doc, "PodGroup") if g["metadata"]["name"].startswith("want-")]
    assert all(g["spec"]["queue"] != hold["spec"]["queue"] for g in waiting)


def test_the_gate_draws_both_kinds():
    kinds = set()

    def both(doc) -> bool:
        kinds.add(any(o["kind"] == "PodGroup" and o["metadata"]["name"].startswith("want-") for o in doc["objects"]))
        return len(kinds) == 2

    find(gate_scenarios("ci"), both, settings=settings(FIND, phases=[Phase.generate]))
    assert kinds == {True, False}

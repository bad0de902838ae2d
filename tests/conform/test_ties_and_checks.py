"""Tie tolerance of the differential, and the outside checks on an implementation's decisions."""

from __future__ import annotations

import copy

import yaml

from schedcheck.conform.check import check_answer
from schedcheck.conform.differential import compare
from schedcheck.conform.reference import run
from schedcheck.scenario.loader import scenario_from_document
from tests.conform.helpers import fixture

TIED = fixture("tied-nodes")
TIED_SCENARIO = scenario_from_document(TIED, "tied-nodes")


def test_another_legal_tie_break_is_accepted():
    mine, theirs = run(TIED, seed=7), run(TIED, seed=0)
    assert mine["binds"] != theirs["binds"]  # a naive comparison would call this a divergence
    assert theirs["ties"]
    assert compare(TIED_SCENARIO, mine, seed=0) == []


def test_a_choice_no_tie_break_explains_is_a_divergence():
    result = run(TIED, seed=0)
    task, node = next(iter(sorted(result["binds"].items())))
    other = next(t for t in result["ties"] if t["task"] == task)
    assert node in other["candidates"]
    findings = compare(TIED_SCENARIO, _rebind(result, task, "node-404-not-tied"), seed=0)
    assert [f.kind for f in findings] == ["divergence"]
    assert task in findings[0].message and "tied candidates" in findings[0].message


def _rebind(result: dict, task: str, node: str) -> dict:
    out = copy.deepcopy(result)
    out["binds"][task] = node
    for op in out["trace"]:
        if op["task"] == task:
            op["node"] = node
    return out


def test_a_dropped_bind_is_a_divergence_without_a_trace():
    result = run(TIED, seed=0)
    result.pop("trace")
    result["binds"].popitem()
    assert [f.kind for f in check_answer(TIED_SCENARIO, result)] == ["divergence"]


def test_overcommit_and_gang_checks_fire_on_their_own():
    doc = fixture("gang-partial")
    scenario = scenario_from_document(doc, "g")
    result = run(doc)
    assert check_answer(scenario, result) == []
    one = copy.deepcopy(result)
    one["binds"] = {"default/mpi-2-master-0": "node-1"}
    one["trace"] = [{"cycle": 0, "action": "allocate", "op": "bind", "task": "default/mpi-2-master-0",
                     "node": "node-1"}]
    assert check_answer(scenario, one, differential=False)[0].kind == "check.gang.commit-ready"
    one["trace"][0]["action"] = "backfill"  # not allocate's statement: the session-level gang rule judges it
    assert check_answer(scenario, one, differential=False)[0].kind == "check.gang.session-atomic"


def test_a_trace_that_disagrees_with_the_result():
    doc = fixture("tied-nodes")
    result = run(doc)
    assert result["binds"]
    result["trace"] = [op for op in result["trace"] if op["op"] != "bind"]  # binds the trace never made
    kinds = [f.kind for f in check_answer(scenario_from_document(doc, "g"), result)]
    assert kinds == ["trace.inconsistent"]


def test_evicting_a_pod_marked_not_preemptable():
    doc = copy.deepcopy(fixture("needless-eviction"))
    result = run(doc)
    running = next(o for o in doc["objects"] if o["kind"] == "Pod" and (o.get("spec") or {}).get("nodeName"))
    running["metadata"].setdefault("annotations", {})["volcano.sh/preemptable"] = "false"
    key = f"{running['metadata'].get('namespace', 'default')}/{running['metadata']['name']}"
    result["evicted"].append(key)
    result["trace"].append({"cycle": 0, "action": "preempt", "op": "evict", "task": key,
                            "node": running["spec"]["nodeName"]})
    kinds = [f.kind for f in check_answer(scenario_from_document(doc, "n"), result, differential=False)]
    assert "check.victim.preemptable" in kinds


def test_a_rule_the_reference_breaks_the_same_way_is_shared_behaviour_not_a_non_conformance(monkeypatch):
    """A finding the reference (faithful to upstream) makes too, on the same objects, is upstream's
    behaviour (docs/findings.md), not a non-conformance; a finding on other objects stays."""
    import schedcheck.conform.external as external
    from schedcheck.conform.check import _not_shared_with_reference
    from schedcheck.conform.findings import Finding

    doc = fixture("needless-eviction")
    scenario = scenario_from_document(copy.deepcopy(doc), "n")
    upstream_too = Finding("check.node.pod-limit", "over the pod limit", 0, ["node node-1"])
    monkeypatch.setattr(external, "check_result", lambda scenario, result: [upstream_too])
    theirs = [Finding("check.node.pod-limit", "over the pod limit", 0, ["node node-1"]),
              Finding("check.node.pod-limit", "over the pod limit", 0, ["node node-2"])]
    assert _not_shared_with_reference(scenario, theirs, 0) == theirs[1:]


def test_shuffle_evicting_a_pod_marked_not_preemptable_is_upstream_behaviour():
    """Upstream's shuffle evicts a pod marked not preemptable (the mark guards preempt and reclaim
    only); the faithful reference does too, and an implementation doing the same conforms."""
    from pathlib import Path

    import yaml

    from schedcheck.conform.external import check_result

    path = Path(__file__).resolve().parents[1] / "scenarios" / "shuffle-evicts-not-preemptable.yaml"
    doc = yaml.safe_load(path.read_text())
    scenario = scenario_from_document(copy.deepcopy(doc), path.name)
    answer = run(copy.deepcopy(doc))
    assert answer["evicted"]
    assert check_result(scenario, answer) == [] and check_answer(scenario, answer) == []


def test_preempt_nodes_of_equal_score_are_a_legal_tie():
    doc = fixture("preempt-equal-score-nodes")
    scenario = scenario_from_document(copy.deepcopy(doc), "preempt-equal-score-nodes")
    mine = run(copy.deepcopy(doc))
    assert mine["pipelined"] == {"data/mpi-0-worker-0": "node-0"}
    theirs = copy.deepcopy(mine)  # what upstream did: the other node of the same score
    theirs["pipelined"] = {"data/mpi-0-worker-0": "node-1"}
    for op in theirs["trace"]:
        if op["op"] == "pipeline" and op["task"] == "data/mpi-0-worker-0":
            op["node"] = "node-1"
    assert compare(scenario, theirs) == []


def test_victims_in_map_order_are_a_legal_tie():
    doc = fixture("reclaim-equal-victims")
    scenario = scenario_from_document(copy.deepcopy(doc), "reclaim-equal-victims")
    mine = run(copy.deepcopy(doc))
    assert mine["evicted"] == ["team-a/batch-0-2"]
    theirs = copy.deepcopy(mine)  # what upstream did: another task of the same job, listed first
    theirs["evicted"] = ["team-a/batch-0-3"]
    for op in theirs["trace"]:
        if op["op"] == "evict":
            op["task"] = "team-a/batch-0-3"
    assert compare(scenario, theirs) == []
    theirs["evicted"] = ["team-a/batch-0-0", "team-a/batch-0-3"]  # two victims where one suffices
    theirs["trace"].insert(1, {"cycle": 0, "action": "reclaim", "op": "evict", "task": "team-a/batch-0-0",
                               "node": "node-0"})
    assert [f.kind for f in compare(scenario, theirs)] == ["divergence"]


def test_a_later_actions_tie_is_steered_by_that_actions_placement():
    """Upstream tried tf-1-worker-0 on node-2 in allocate (no tie there for the reference) and put it on node-1
    in gangreclaim's dry run, a tie: the replay takes gangreclaim's node, not the unconsumed allocate one."""
    doc = fixture("gangreclaim-dry-run-tie")
    scenario = scenario_from_document(copy.deepcopy(doc), "gangreclaim-dry-run-tie")
    theirs = run(copy.deepcopy(doc))
    placements = {"tf-1-ps-0": ("node-1", "node-1"), "tf-1-worker-0": ("node-2", "node-1"), "tf-1-ps-1": (None, "node-2")}
    trace = []
    for op in theirs["trace"]:
        short = op["task"].split("/")[1]
        if op["op"] in ("allocate", "unallocate") and short in placements:
            op = {**op, "node": placements[short][0]}
        elif op["op"] in ("pipeline", "unpipeline") and short in placements:
            op = {**op, "node": placements[short][1]}
        trace.append(op)
    theirs["trace"] = trace
    theirs["pipelined"] = {f"data/{t}": nodes[1] for t, nodes in placements.items()}
    assert compare(scenario, theirs) == []
    theirs["pipelined"]["data/tf-1-ps-1"] = "node-1"  # node-1 cannot hold a third pod: no tie explains it
    assert [f.kind for f in compare(scenario, theirs)] == ["divergence"]


def test_equally_scored_hypernodes_are_a_legal_tie():
    """Both racks hold the gang; upstream keeps the first it meets in map order, the reference a seeded one."""
    import yaml
    from tests.conform.helpers import ROOT

    doc = yaml.safe_load((ROOT / "tests/scenarios/topology-hard-gang-stays-in-the-lowest-tier.yaml").read_text())
    doc.pop("expect", None)
    scenario = scenario_from_document(copy.deepcopy(doc), "racks")
    mine = run(copy.deepcopy(doc))
    rack = {n[0] for n in mine["binds"].values()}
    assert len(rack) == 1 and len(mine["binds"]) == 2
    other = "a-n1" if rack == {"b"} else "b-n3"
    theirs = copy.deepcopy(mine)
    theirs["binds"] = {task: other for task in mine["binds"]}
    theirs["trace"] = [{**op, "node": other} if op["op"] in ("allocate", "bind", "unallocate") else op
                       for op in mine["trace"] if op["op"] in ("allocate", "bind", "unallocate")]
    assert compare(scenario, theirs) == []


def _recorded(name: str) -> tuple:
    """A scenario and upstream master's recorded answer to it (tests/conform/answers)."""
    import json

    from tests.conform.helpers import ROOT

    answer = json.loads((ROOT / "tests/conform/answers" / f"{name}.json").read_text())
    doc = yaml.safe_load((ROOT / answer["scenario"]).read_text())
    return scenario_from_document(doc, name), answer


def test_a_hypernode_tie_is_recorded_like_a_node_tie():
    from tests.conform.helpers import ROOT

    doc = yaml.safe_load((ROOT / "tests/scenarios/topology-hard-gang-stays-in-the-lowest-tier.yaml").read_text())
    ties = [t for t in run(doc)["ties"] if t["kind"] == "hyperNode"]
    assert ties and all(len(t["candidates"]) > 1 and t["chosen"] in t["candidates"] for t in ties)


def test_dry_runs_stay_in_step_with_the_implementations_placements():
    """Upstream dry-runs p2 on s0-n2 (after p1 took s0-n1, so no tie for the reference) before the dry run
    where it puts p2 on s0-n1, a tie: the untied placement uses up the first entry, whatever the seed."""
    scenario, answer = _recorded("subgroup-min-sub-groups-placed-first")
    assert answer["binds"]["c1/p2"] == "s0-n1"
    for seed in range(6):
        assert compare(scenario, answer, seed=seed) == [], seed


def test_a_hypernode_tie_is_steered_by_the_tasks_its_dry_runs_placed():
    """One task per round: upstream put p1 in s1 and p2 in s0. Choosing p1's hypernode by all the job's
    tasks (p2 already in s0) would pick s0."""
    scenario, answer = _recorded("soft-topology-one-task-per-round")
    assert answer["binds"] == {"c1/p1": "s1-n4", "c1/p2": "s0-n1"}
    for seed in range(6):
        assert compare(scenario, answer, seed=seed) == [], seed

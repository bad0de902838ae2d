"""topology.nomination-within-hypernode: allocate's nomination fast path places a nominated subjob's tasks
only on their pods' nominated nodes, inside the nominated hypernode."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.reference.actions.allocate import Allocate
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario, load_scenario_text

RULE = "topology.nomination-within-hypernode"
SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
REDEEMED = SCENARIOS / "allocate-nomination-redeemed.yaml"


def _engine(path: Path) -> InvariantEngine:
    engine = InvariantEngine(only=[RULE])
    run_scenario(load_scenario(path), engine=engine)
    return engine


@pytest.mark.parametrize("name", ["allocate-nomination-redeemed", "allocate-nomination-invalidated-falls-back",
                                  "gangpreempt-nomination-lives-one-session"])
def test_passes_on_the_faithful_reference(name):
    engine = _engine(SCENARIOS / f"{name}.yaml")
    assert engine.checks[RULE] > 0 and engine.violations == []


def _with_a_third_node() -> InvariantEngine:
    document = yaml.safe_load(REDEEMED.read_text(encoding="utf-8"))
    worker = copy.deepcopy(next(o for o in document["objects"] if o["kind"] == "Node"))
    worker["metadata"]["name"] = worker["metadata"]["labels"]["kubernetes.io/hostname"] = "worker-3"
    document["objects"].append(worker)
    engine = InvariantEngine(only=[RULE])
    run_scenario(load_scenario_text(yaml.safe_dump(document), "with-worker-3"), engine=engine)
    return engine


def test_fires_when_the_plan_ignores_the_nominated_node(monkeypatch):
    # A broken fast path: validation judges each pod's nominated node, the plan then uses another node.
    original = Allocate._validate_nomination

    def elsewhere(self, job, sub, tasks, leaf_names):
        plan = original(self, job, sub, tasks, leaf_names)
        other = self.ssn.nodes["worker-3"]
        return [(task, other) for task, _ in plan] if plan else plan

    monkeypatch.setattr(Allocate, "_validate_nomination", elsewhere)
    found = _with_a_third_node().violations
    assert {v.invariant for v in found} == {RULE}
    assert "its pod's nominated node was worker-1" in found[0].message


def test_fires_when_the_nominated_node_lies_outside_the_hypernode(monkeypatch):
    # A broken recording of the nomination: the hypernode named is none of the tree's.
    original = Allocate.allocate_from_nomination

    def misnamed(self, job, sub, tasks):
        result = original(self, job, sub, tasks)
        self.ssn.nominations[-1].hyper_node = "no-such-hypernode"
        return result

    monkeypatch.setattr(Allocate, "allocate_from_nomination", misnamed)
    found = _engine(REDEEMED).violations
    assert {v.invariant for v in found} == {RULE}
    assert {v.message.split(",")[-1].strip() for v in found} == {"outside the nominated hypernode no-such-hypernode"}

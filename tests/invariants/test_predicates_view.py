"""node.predicates-pod-view: the predicates plugin's per-node pods recomputed from the node's task set."""

from __future__ import annotations

from pathlib import Path

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.mutants import mutant
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario

RULE = "node.predicates-pod-view"
HERE = Path(__file__).resolve().parents[2]


def _engine(path: str) -> InvariantEngine:
    engine = InvariantEngine(only=[RULE])
    run_scenario(load_scenario(HERE / path), engine=engine)
    return engine


def test_passes_on_the_faithful_reference():
    engine = _engine("tests/scenarios/gang-discard.yaml")
    assert engine.violations == [] and engine.findings == []


def test_fires_when_the_deallocate_handler_is_lost():
    with mutant("predicates-deallocate-missed"):
        assert RULE in [v.invariant for v in _engine("tests/scenarios/gang-discard.yaml").violations]


def test_upstreams_lost_victim_is_the_known_finding_not_a_failure():
    engine = _engine("tests/generators/found/node-pod-limit-after-discarded-reclaim.yaml")
    assert engine.violations == [] and {v.known for v in engine.findings} == {"F1"}

"""node.placement-extender-allowed: no placement on a node the extender refused for that task this session."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.reference.framework.session import Session
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario

RULE = "node.placement-extender-allowed"
SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
REFUSING = ["extender-predicate-refuses-a-labelled-node", "extender-managed-resources-skip-other-tasks",
            "extender-not-ignorable-down-places-nothing"]


def _run(name: str):
    engine = InvariantEngine(only=[RULE])
    result = run_scenario(load_scenario(SCENARIOS / f"{name}.yaml"), engine=engine)
    return result, engine


@pytest.mark.parametrize("name", sorted(p.stem for p in SCENARIOS.glob("extender-*.yaml")))
def test_passes_on_the_faithful_reference(name):
    _, engine = _run(name)
    assert engine.violations == []


@pytest.mark.parametrize("name", REFUSING)
def test_fires_when_allocate_ignores_the_extenders_refusal(name, monkeypatch):
    """A broken allocate that reads only the other plugins' predicates places onto the refused node."""
    original = Session.predicate_for_allocate_action

    def ignores_extender(self, task, node):
        err = original(self, task, node)
        if err is not None and all(s.plugin == "extender" or "extender" in s.reason or "127.0.0.1" in s.reason
                                   for s in getattr(err, "statuses", [])):
            return None
        return err

    monkeypatch.setattr(Session, "predicate_for_allocate_action", ignores_extender)
    result, engine = _run(name)
    assert [v.invariant for v in engine.violations][:1] == [RULE], result.binds
    assert "which the extender refused for it this session" in engine.violations[0].message

"""queue.closed-takes-nothing: with proportion or capacity answering, a queue that is not Open is not admitted
into, placed in or reclaimed for (upstream e5ee5168b, 5756e5e70, 2123494a5)."""

from __future__ import annotations

import copy

import pytest

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.mutants import mutant
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario, scenario_from_document
from schedcheck.selftest import scenario_path

RULE = "queue.closed-takes-nothing"
# mutant -> its scenario (schedcheck/mutant_scenarios/<mutant>.yaml): allocate (capacity), enqueue (proportion),
# reclaim (capacity)
MUTANTS = ("closed-queue-still-allocates", "closed-queue-still-admits", "closed-queue-still-reclaims")


def _fired(scenario) -> list[str]:
    engine = InvariantEngine(only=[RULE])
    run_scenario(scenario, seed=0, engine=engine)
    return [v.invariant for v in engine.violations]


@pytest.mark.parametrize("name", MUTANTS)
def test_passes_when_the_closed_queue_gets_nothing(name):
    assert _fired(load_scenario(scenario_path(name))) == []


@pytest.mark.parametrize("name", MUTANTS)
def test_fires_when_the_queue_state_is_not_looked_at(name):
    with mutant(name):
        assert RULE in _fired(load_scenario(scenario_path(name)))


def test_is_silent_without_a_queue_plugin():
    """Without proportion or capacity nothing asks the queue's state: the Closed queue's pod is placed, as upstream."""
    document = copy.deepcopy(load_scenario(scenario_path("closed-queue-still-allocates")).document)
    tiers = document["schedulerConf"]["tiers"]
    tiers[1]["plugins"] = [p for p in tiers[1]["plugins"] if p["name"] != "capacity"]
    engine = InvariantEngine(only=[RULE])
    result = run_scenario(scenario_from_document(document, "no-capacity"), seed=0, engine=engine)
    assert "team/old-0" in result.binds and engine.violations == []


STATUS_RULE = "queue.status-allocated"


def _status_fired(name: str) -> list[str]:
    engine = InvariantEngine(only=[STATUS_RULE])
    run_scenario(load_scenario(scenario_path(name)), seed=0, engine=engine)
    return [v.invariant for v in engine.violations]


def test_status_allocated_passes_when_binding_tasks_are_counted():
    assert _status_fired("queue-status-counts-running-only") == []


def test_status_allocated_passes_with_a_queue_hierarchy():
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scenarios" / "capacity-hierarchy-parent-cap.yaml"
    engine = InvariantEngine(only=[STATUS_RULE])
    result = run_scenario(load_scenario(path), seed=0, engine=engine)
    assert result.binds and engine.violations == []


def test_status_allocated_fires_when_only_running_tasks_are_counted():
    with mutant("queue-status-counts-running-only"):
        assert STATUS_RULE in _status_fired("queue-status-counts-running-only")

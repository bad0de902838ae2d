"""eviction.preempt-progress, eviction.reclaim-progress, allocate.work-conserving: fires when the action leaves
a way in unused,
passes on the faithful reference."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.mutants import mutant
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario

HERE = Path(__file__).resolve().parents[2]
CASES = [
    ("eviction.preempt-progress", "tests/scenarios/preempt-excess-eviction.yaml", "preempt-uses-idle"),
    ("eviction.preempt-progress", "tests/scenarios/preempt-excess-eviction.yaml", "priority-starving-never"),
    ("eviction.reclaim-progress", "tests/scenarios/reclaim-victim-queue-order.yaml", "reclaim-forgets-freed"),
    ("eviction.reclaim-progress", "tests/scenarios/persistence-reclaim-upstream.yaml", "reclaim-forgets-freed"),
    ("allocate.work-conserving", "tests/scenarios/pipeline-future-idle.yaml", "allocate-never-pipelines"),
    ("allocate.work-conserving", "tests/scenarios/proportion-overused-needs-every-dimension.yaml",
     "proportion-overused-any-dimension"),
    ("allocate.work-conserving", "tests/scenarios/allocate-continues-past-a-pre-predicate-failure.yaml",
     "pre-predicate-failure-stops-job"),
]


def _findings(path: str, only: str) -> list[str]:
    engine = InvariantEngine(only=[only])
    run_scenario(load_scenario(HERE / path), engine=engine)
    return [f.invariant for f in engine.findings]


@pytest.mark.parametrize("rule, path, bug", CASES)
def test_passes_on_the_faithful_reference(rule, path, bug):
    assert _findings(path, rule) == []


@pytest.mark.parametrize("rule, path, bug", CASES)
def test_fires_when_the_action_gives_up_a_way_in(rule, path, bug):
    with mutant(bug):
        assert rule in _findings(path, rule)


def test_a_node_outside_the_hard_shard_is_not_a_way_in():
    """reclaim may not use a node outside this scheduler's hard shard, so a job whose only victims sit there is not
    stuck by reclaim's fault (the mutant scenario reclaim-ignores-shard, run clean)."""
    from schedcheck.runner import run_scenario
    from schedcheck.scenario.loader import load_scenario
    from schedcheck.selftest import scenario_path

    result = run_scenario(load_scenario(scenario_path("reclaim-ignores-shard")), seed=0)
    assert not result.violations and not result.findings, result.findings

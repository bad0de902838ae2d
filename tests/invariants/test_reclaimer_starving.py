"""victim.reclaimer-starving: reclaim pipelines tasks only for jobs the session's JobStarving holds for
(upstream a561215e0)."""

from __future__ import annotations

from pathlib import Path

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.mutants import mutant
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario
from schedcheck.selftest import scenario_path

RULE = "victim.reclaimer-starving"
SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def _fired(path: Path) -> list[str]:
    engine = InvariantEngine(only=[RULE])
    run_scenario(load_scenario(path), seed=0, engine=engine)
    return [v.invariant for v in engine.violations]


def test_passes_when_a_gang_at_its_minimum_does_not_reclaim():
    assert _fired(scenario_path("reclaim-for-jobs-with-pending-tasks")) == []


def test_passes_when_a_starving_job_reclaims():
    assert _fired(SCENARIOS / "reclaim-guarantee-across-queues.yaml") == []


def test_passes_in_persistent_mode_where_pipelined_tasks_count_as_ready():
    assert _fired(SCENARIOS / "persistence-reclaim-persistent.yaml") == []


def test_fires_when_every_job_with_a_pending_task_reclaims():
    with mutant("reclaim-for-jobs-with-pending-tasks"):
        assert RULE in _fired(scenario_path("reclaim-for-jobs-with-pending-tasks"))

"""order.priority-decides: the orders the session uses, against each plugin's rule restated."""

from __future__ import annotations

import pytest

from schedcheck.mutants import mutant
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario
from schedcheck.selftest import scenario_path
from tests.invariants.harness import FAIR_TIERS, TIERS, check, cluster

RULE = "order.priority-decides"


@pytest.mark.parametrize("tiers", [TIERS, FAIR_TIERS])
@pytest.mark.parametrize("kind", ["basic", "preempt", "reclaim", "partial-gang", "weighted-queues"])
def test_passes_on_the_faithful_comparators(kind, tiers):
    assert check(RULE, cluster(kind), actions="enqueue, allocate, preempt", tiers=tiers).violations == []


@pytest.mark.parametrize("name", ["priority-job-order-reversed", "priority-task-order-reversed",
                                  "gang-job-order-reversed", "drf-job-order-reversed",
                                  "proportion-queue-order-reversed", "proportion-queue-priority-ignored"])
def test_fires_on_a_reversed_or_blind_comparator(name):
    with mutant(name):
        result = run_scenario(load_scenario(scenario_path(name)), seed=0)
    assert RULE in [v["id"] for v in result.violations]

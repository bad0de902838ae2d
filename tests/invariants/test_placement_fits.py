"""node.placement-fits: allocate within Idle, pipeline within FutureIdle."""

from __future__ import annotations

from tests.invariants.harness import check, cluster

RULE = "node.placement-fits"


def test_passes_on_the_faithful_scheduler():
    for kind in ("basic", "partial-gang", "preempt", "reclaim", "preempt-two-victims"):
        actions = "enqueue, allocate, preempt, reclaim, backfill"
        assert check(RULE, cluster(kind), actions=actions).violations == []


def test_fires_when_a_placement_leaves_idle_below_zero():
    def corrupt(ssn, op):
        if op.op == "allocate":
            ssn.nodes[op.node].idle.milli_cpu = -1000.0
    engine = check(RULE, cluster("basic"), corrupt=("operation", corrupt))
    assert engine.violations and "without room" in engine.violations[0].message

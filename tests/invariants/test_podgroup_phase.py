"""job.podgroup-phase: the phase the job updater writes at close, restated from the tasks."""

from __future__ import annotations

import pytest

import schedcheck.reference.framework.framework as framework
from tests.invariants.harness import check, cluster

RULE = "job.podgroup-phase"


@pytest.mark.parametrize("kind", ["basic", "partial-gang", "preempt", "reclaim", "capped-queue"])
def test_passes_on_the_faithful_job_updater(kind):
    assert check(RULE, cluster(kind), actions="enqueue, allocate, preempt, backfill", cycles=2).violations == []


def test_fires_when_a_gang_at_exactly_min_member_is_not_running(monkeypatch):
    original = framework.pod_group_phase

    def off_by_one(job, unschedulable):
        phase = original(job, unschedulable)
        scheduled = job.scheduled_task_num() + job.releasing_scheduled_task_num()
        if phase == "Running" and scheduled == job.pod_group.min_member:
            return "Inqueue"  # the bug: > instead of >=
        return phase
    monkeypatch.setattr(framework, "pod_group_phase", off_by_one)
    engine = check(RULE, cluster("basic"), actions="enqueue, allocate", cycles=2)
    assert RULE in [v.invariant for v in engine.violations]


def test_the_phase_reaches_the_cache():
    from schedcheck.mutants import mutant

    rule = "cross.phase-written-back"
    for kind in ("basic", "partial-gang", "preempt"):
        assert check(rule, cluster(kind), actions="enqueue, allocate, preempt", cycles=2).violations == []
    with mutant("phase-not-written-back"):
        engine = check(rule, cluster("basic"), actions="enqueue, allocate")
    assert rule in [v.invariant for v in engine.violations]


def test_the_session_shares_no_object_with_the_cache():
    from schedcheck.mutants import mutant

    rule = "session.no-shared-objects"
    for kind in ("basic", "preempt", "reclaim"):
        assert check(rule, cluster(kind), actions="enqueue, allocate, preempt, reclaim").violations == []
    with mutant("snapshot-shares-nodes"):
        engine = check(rule, cluster("basic"), actions="enqueue, allocate")
    assert [v.invariant for v in engine.violations] == [rule] and "node n1" in engine.violations[0].message

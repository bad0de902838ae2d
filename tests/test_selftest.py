"""The harness's self-test: every deliberate bug is caught on a fixed scenario, and the clean
reference passes those same scenarios without a single violation or finding."""

from __future__ import annotations

import pytest

from schedcheck.mutants import MUTANTS, mutant
from tests.invariants.harness import FAIR_TIERS, TIERS, check, cluster

PREEMPT = "enqueue, allocate, preempt"
RECLAIM = "enqueue, allocate, reclaim"
TIER1_PROPORTION = (["priority", "gang", "conformance", "proportion"], ["predicates", "nodeorder"])
OVERCOMMIT = (["priority", "gang", "conformance"], ["overcommit", "predicates", "nodeorder"])
CAPACITY = (["priority", "gang", "conformance"], ["capacity", "predicates", "nodeorder"])
HIERARCHY = {"capacity": {"enableHierarchy": True}}

# mutant -> (cluster, actions, tiers, the invariant expected to catch it)
CASES = {
    "remove-task-forgets-releasing": ("preempt-gang-discard", PREEMPT, TIERS, "node.releasing-sum"),
    "discard-not-reversing": ("partial-gang", "enqueue, allocate", TIERS, "gang.no-stranded-placement"),
    "unallocate-keeps-node": ("partial-gang", "enqueue, allocate", TIERS, "statement.discard-no-trace"),
    "no-deallocate-events": ("partial-gang", "enqueue, allocate", FAIR_TIERS, "statement.events-balanced"),
    "gang-commit-too-few": ("partial-gang", "enqueue, allocate", TIERS, "gang.commit-ready"),
    "preempt-ignores-priority": ("preempt-equal", PREEMPT, TIERS, "victim.preempt-priority"),
    "reclaim-from-under-deserved": ("reclaim-within-deserved", RECLAIM, TIER1_PROPORTION,
                                    "victim.reclaim-over-deserved"),
    "allocate-ignores-deserved": ("capped-queue", "enqueue, allocate", FAIR_TIERS, "queue.allocate-within-deserved"),
    "reclaim-own-queue": ("reclaim-own-queue", RECLAIM, FAIR_TIERS, "victim.reclaim-scope"),
    "evict-before-fit": ("preempt-fits", "enqueue, preempt", TIERS, "eviction.needed"),
    "binding-not-allocated": ("basic", "enqueue, allocate", TIERS, "job.allocated-sum"),
    "pipeline-not-reserved": ("preempt", PREEMPT, TIERS, "node.pipelined-sum"),
    "overcommit-inqueue-not-added": ("overcommit-two-jobs", "enqueue", OVERCOMMIT, "enqueue.overcommit"),
    "overcommit-factor-unbounded": ("overcommit-too-big", "enqueue", OVERCOMMIT, "enqueue.overcommit"),
    "capacity-branch-leaf-only": ("capacity-siblings", "enqueue, allocate", CAPACITY,
                                  "enqueue.capacity-within-real-capability", HIERARCHY),
    "capacity-ancestors-not-charged": ("capacity-siblings", "enqueue, allocate", CAPACITY,
                                       "queue.capacity-allocated", HIERARCHY),
    "proportion-deserved-ignores-weight": ("weighted-queues", "enqueue, allocate", FAIR_TIERS,
                                           "queue.proportion-recomputed"),
    "proportion-deserved-over-real-capability": ("weighted-queues", "enqueue, allocate", FAIR_TIERS,
                                                 "queue.proportion-recomputed"),
    "proportion-share-stale": ("weighted-queues", "enqueue, allocate", FAIR_TIERS, "queue.proportion-recomputed"),
    "proportion-inqueue-not-added": ("enqueue-over-capability", "enqueue, allocate", FAIR_TIERS,
                                     "queue.proportion-recomputed"),
    "reclaim-evicts-every-victim": ("reclaim-two-victims", "enqueue, reclaim", TIERS,
                                    "eviction.reclaim-stops-when-fits"),
    "enqueue-skips-admission": ("enqueue-over-capability", "enqueue, allocate", FAIR_TIERS,
                                "enqueue.within-real-capability"),
    "allocated-idle-not-subtracted": ("basic", "enqueue, allocate", TIERS, "node.ledger"),
    "drf-deallocate-forgotten": ("partial-gang", "enqueue, allocate", FAIR_TIERS, "queue.drf-allocated"),
    "podgroup-phase-off-by-one": ("basic", "enqueue, allocate", TIERS, "job.podgroup-phase"),
    "preempt-ignores-never-policy": ("preempt-never", PREEMPT, TIERS, "victim.preemptor-policy"),
    "commit-loses-evictions": ("preempt", PREEMPT, TIERS, "statement.evictions-reach-the-cache"),
    "phase-not-written-back": ("basic", "enqueue, allocate", TIERS, "cross.phase-written-back"),
    "snapshot-shares-nodes": ("basic", "enqueue, allocate", TIERS, "session.no-shared-objects"),
}


# mutant -> the invariant that catches it on its packaged scenario (schedcheck/mutant_scenarios/), for the
# mutants whose scenario comes from the scenario corpus rather than from a harness cluster above
PACKAGED = {
    "preempt-ignores-preemptable-flag": "victim.preemptable",
    "preempt-best-effort-evicts-any": "victim.best-effort",
    "proportion-never-overused": "queue.no-allocate-when-overused",
    "drf-share-stale": "queue.drf-share",
    "unevict-leaves-node": "statement.discard-restores",
    "gang-preemptable-ignores-min": "victim.gang-min",
    "reclaim-ignores-reclaimable-flag": "victim.reclaim-scope",
    "total-request-not-reduced": "job.total-request",
    "capacity-allocatable-always": "queue.capacity-within-real-capability",
    "overcommit-ignores-used": "enqueue.overcommit",
    "drf-allocate-forgotten": "queue.drf-allocated",
    "proportion-allocate-forgotten": "queue.proportion-allocated",
    "capacity-enqueue-always": "enqueue.capacity-within-real-capability",
    "conformance-evicts-critical": "eviction.one-minimal",
    "drf-job-order-reversed": "order.priority-decides",
    "gang-job-order-reversed": "order.priority-decides",
    "no-allocate-events": "statement.events-balanced",
    "overcommit-ignores-inqueue": "enqueue.overcommit",
    "predicates-allocate-missed": "node.predicates-pod-view",
    "priority-job-order-reversed": "order.priority-decides",
    "priority-task-order-reversed": "order.priority-decides",
    "proportion-allocatable-forgets-request": "victim.reclaim-over-deserved",
    "proportion-reclaim-no-deduction": "victim.reclaim-over-deserved",
    "proportion-deallocate-missed": "queue.proportion-allocated",
    "proportion-enqueue-ignores-allocated": "upstream.assert",
    "proportion-enqueue-ignores-inqueue": "enqueue.within-real-capability",
    "proportion-queue-order-reversed": "order.priority-decides",
    "proportion-queue-priority-ignored": "order.priority-decides",
    "reclaim-takes-non-preemptable": "victim.preemptable",
    "gang-pipelined-always": "gang.no-stranded-placement",
    "preempt-ignores-queue-allocatable": "queue.allocate-within-deserved",
    "preempt-uses-idle": "eviction.preempt-progress",
    "priority-starving-never": "eviction.preempt-progress",
    "proportion-enqueue-ignores-elastic": "enqueue.admits-what-fits",
    "reclaim-forgets-freed": "eviction.reclaim-progress",
    "predicates-ignores-taints": "node.placement-allowed",
    "predicates-ignores-node-affinity": "node.placement-allowed",
    "proportion-overused-any-dimension": "allocate.work-conserving",
    "allocate-never-pipelines": "allocate.work-conserving",
    "predicates-deallocate-missed": "node.predicates-pod-view",
    "overcommit-inqueue-doubled": "enqueue.overcommit-admits-what-fits",
    "task-status-ignores-deletion": "task.status-from-pod",
    "request-ignores-init-containers": "task.request-from-pod",
    "request-ignores-overhead": "task.request-from-pod",
    "predicates-ignores-node-ports": "node.host-ports-free",
    "predicates-ignores-hard-shard": "node.in-shard",
    "allocate-ignores-hard-topology": "topology.hard-within-hypernode",
    "topology-gradient-ignores-highest-tier": "topology.hard-within-hypernode",
    "hypernode-drops-nested-members": "topology.session-matches-objects",
    "gang-ignores-min-sub-groups": "gang.sub-groups-ready",
    "predicates-ignores-inter-pod-affinity": "node.pod-anti-affinity-respected",
    "topology-gradient-highest-tier-first": "topology.lowest-tier-needed",
    "predicates-ignores-topology-spread": "node.topology-spread-respected",
    "sub-group-topology-ignored": "topology.sub-group-within-hypernode",
    "scheduling-gates-not-read": "task.gated-not-placed",
    "pdb-ignores-budget": "victim.pdb-respected",
    "gpushare-idle-memory-wraps": "device.within-capacity",
    "capacity-reclaim-past-real-capability": "queue.capacity-reclaim-within-real-capability",
    "preempt-within-job-drains-other-queues": "eviction.preempt-progress",
    "capacity-inqueue-counts-allocated": "queue.capacity-inqueue-recomputed",
    "proportion-inqueue-counts-allocated": "queue.proportion-recomputed",
    "inqueue-scalars-in-whole-units": "queue.capacity-inqueue-recomputed",
    "capacity-inqueue-charged-at-vote": "queue.capacity-inqueue-recomputed",
    "proportion-inqueue-charged-at-vote": "queue.proportion-recomputed",
    "capacity-best-effort-share-zero": "queue.capacity-share",
    "reclaim-commits-unpipelined-job": "gang.reclaim-commit-pipelined",
    "capacity-reclaim-any-dimension": "victim.capacity-reclaim-relevant",
    "reclaim-ignores-shard": "node.in-shard",
    # upstream's 2026 fixes re-created (helper mineB)
    "sub-group-tier-name-ignored": "topology.sub-group-within-hypernode",
    "snapshot-shares-pods": "session.no-shared-objects",
    "pre-predicate-failure-stops-job": "allocate.work-conserving",
    "device-allocate-error-swallowed": "device.bound-with-assignment",
    "vgpu-allocate-charges-twice": "device.within-capacity",
    # upstream's 2024-2025 fixes re-created (helper mineC, schedcheck/mutant_fixes_2024.py)
    "intra-job-preempt-ignores-preemptable": "victim.preemptable",
    "podgroup-running-while-binding": "job.podgroup-phase",
    "podgroup-failed-not-completed": "job.podgroup-phase",
    "predicates-stop-after-volume-limits": "node.topology-spread-respected",
    "proportion-real-capability-drops-unset-scalars": "queue.proportion-recomputed",
    "closed-queue-still-allocates": "queue.closed-takes-nothing",
    "closed-queue-still-admits": "queue.closed-takes-nothing",
    "closed-queue-still-reclaims": "queue.closed-takes-nothing",
    "reclaim-for-jobs-with-pending-tasks": "victim.reclaimer-starving",
    "statement-ignores-event-errors": "device.bound-with-assignment",
    "best-node-needs-a-score-above-minus-one": "allocate.work-conserving",
    "overcommit-compares-every-dimension": "enqueue.overcommit-admits-what-fits",
    "queue-status-counts-running-only": "queue.status-allocated",
    # device fixes and 2023 fixes re-created (helper mineD, schedcheck/mutant_fixes_mined.py)
    "vgpu-memory-from-first-card": "device.vgpu-assignment-as-asked",
    "vgpu-mode-only-mig-checked": "device.vgpu-assignment-as-asked",
    "vgpu-single-nouse-type-accepted": "device.vgpu-assignment-as-asked",
    "gpushare-number-pods-not-recorded": "device.gpu-number-cards-exclusive",
    "preempt-stops-when-queue-not-overused": "queue.allocate-within-deserved",
    "nodeorder-adds-pods-to-node-map": "node.topology-spread-respected",
}
# Mutants no rule catches on their scenario yet (they change decisions no oracle judges): kept, so the
# gap stays measured; a rule that starts catching one must move it to PACKAGED.
GAPS: frozenset[str] = frozenset()
EXPECTED = {**{name: case[3] for name, case in CASES.items()}, **PACKAGED}


def test_every_known_gap_is_still_a_gap_and_every_other_mutant_is_expected_to_be_caught():
    from schedcheck.mutants import MUTANTS
    from schedcheck.selftest import judge

    assert set(MUTANTS) == set(EXPECTED) | GAPS and not set(EXPECTED) & GAPS
    for name in sorted(GAPS):
        result = judge(name)
        assert not result.caught, f"{name} is caught now (by {result.caught_by}): move it from GAPS to PACKAGED"


def _run(case):
    kind, actions, tiers = case[:3]
    flags = case[4] if len(case) > 4 else None
    if flags:
        from schedcheck.invariants.engine import InvariantEngine
        from schedcheck.reference.scheduler import Scheduler
        from tests.framework.helpers import conf

        engine = InvariantEngine()
        Scheduler(cluster(kind), conf(*tiers, actions=actions, **flags), hooks_factory=engine.hooks).run(1)
        return engine
    return check(None, objects=cluster(kind), actions=actions, tiers=tiers)


@pytest.mark.parametrize("name", sorted(CASES))
def test_mutant_is_caught(name):
    with mutant(name):
        engine = _run(CASES[name])
    caught = {v.invariant for v in engine.violations + engine.findings}
    expected = CASES[name][3]
    assert expected in caught, f"{name}: expected {expected} to catch it, got {sorted(caught) or 'nothing'}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_clean_reference_passes_the_same_scenario(name):
    engine = _run(CASES[name])
    unknown = [v for v in engine.findings if not v.known]  # a known upstream finding is upstream's behaviour
    assert not engine.violations and not unknown, [v.one_line() for v in engine.violations + unknown]


def test_every_mutant_has_a_case_and_a_packaged_scenario():
    from schedcheck.selftest import scenario_path

    assert len(MUTANTS) >= 40 and set(EXPECTED) | GAPS == set(MUTANTS) and not set(CASES) & set(PACKAGED)
    assert all(scenario_path(name).is_file() for name in MUTANTS)


def test_mutant_is_undone_after_its_block():
    from schedcheck.reference.framework.statement import Statement

    clean = Statement.discard
    with mutant("discard-not-reversing"):
        assert Statement.discard is not clean
    assert Statement.discard is clean


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_packaged_scenario_catches_the_mutant_with_the_expected_rule(name):
    """`schedcheck selftest` runs schedcheck/mutant_scenarios/<name>.yaml: clean there, caught with the bug."""
    from schedcheck.selftest import judge

    result = judge(name)
    assert result.clean_problems == [] and EXPECTED[name] in result.caught_by, result.to_json()

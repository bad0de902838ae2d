"""Replay the scenarios the generators found (tests/generators/found/, see its README)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario

FOUND_DIR = Path(__file__).parent / "found"

# file stem -> (invariant it broke when found, status): "resolved" (the rule was corrected: the scenario
# must now run clean), "upstream" (a real upstream bug, docs/findings.md: the faithful reference must
# keep reproducing it), "upstream-known" (the same, named in invariants/known.py: reported as a known
# finding unless its switch makes it fail), "upstream-finding" (the same, for a quality rule) or
# "upstream-panic" (an assertion upstream panics on, reproduced: a violation, unless invariants/known.py names it
# in KNOWN_ASSERTIONS, when it is reported as that known finding, failing only with its switch, as
# "upstream-known")
FOUND: dict[str, tuple[str, str]] = {
    "node-pod-limit-after-discarded-reclaim": ("node.predicates-pod-view", "upstream-known"),
    "statement-discard-restores-unevict-bound": ("statement.discard-restores", "resolved"),
    "statement-discard-restores-nested-node-statement": ("statement.discard-restores", "resolved"),
    "victim-preempt-scope-equal-priority": ("victim.preempt-scope", "resolved"),
    "gang-no-stranded-placement-preempt-phase-b": ("gang.no-stranded-placement", "resolved"),
    "enqueue-within-real-capability-sla-permit": ("enqueue.within-real-capability", "resolved"),
    "queue-deserved-total-guarantee-not-requested": ("queue.deserved-total", "resolved"),
    "victim-reclaim-over-deserved-gang-decides": ("victim.reclaim-over-deserved", "resolved"),
    "cross-pipelined-liveness-reclaim-first": ("cross.pipelined-liveness", "upstream-finding"),
    "upstream-assert-task-topology-re-placed-task": ("upstream.assert", "upstream-known"),
    "upstream-assert-task-topology-hypernode-dry-run": ("upstream.assert", "upstream-known"),
    "upstream-assert-task-topology-discarded-eviction-aborts-the-session": ("upstream.assert", "upstream-known"),
    "queue-drf-allocated-mid-rollback-bound-task": ("queue.drf-allocated", "resolved"),
    "queue-drf-allocated-mid-rollback-pipelined-task": ("queue.drf-allocated", "resolved"),
    "task-single-node-gangpreempt-repipelines-a-pipelined-task": ("task.single-node", "upstream-known"),
    "node-cache-idle-negative-from-the-input": ("node.cache-idle-non-negative", "resolved"),
    "node-predicates-pod-view-gangpreempt-repipelines-a-bound-task": ("node.predicates-pod-view", "upstream-known"),
    "upstream-assert-simulate-double-unpipeline-vgpu": ("upstream.assert", "upstream-known"),
    "upstream-assert-gangpreempt-re-evicts-after-failed-replay-vgpu": ("upstream.assert", "upstream-known"),
    "statement-discard-restores-gangreclaim-repipelines-a-bound-task": ("statement.discard-restores",
                                                                        "upstream-known"),
    "gang-sub-groups-ready-gangreclaim-repipelines-a-bound-task": ("gang.sub-groups-ready", "upstream-known"),
    "gang-session-atomic-shuffle-evicts-a-role-after-the-bind": ("gang.session-atomic", "resolved"),
    "upstream-assert-task-topology-bucket-score-after-a-discard": ("upstream.assert", "upstream-known"),
    "gang-no-stranded-placement-failed-recovery-vgpu": ("gang.no-stranded-placement", "upstream-known"),
    "queue-drf-allocated-simulate-double-unpipeline": ("queue.drf-allocated", "upstream-known"),
    "numa-cpu-sets-disjoint-reclaim-skips-numa-predicate": ("numa.cpu-sets-disjoint", "upstream-known"),
    "victim-reclaimer-not-overused-room-before-the-victim": ("victim.reclaimer-not-overused", "resolved"),
}

# Safety invariants the clean reference breaks because upstream does (docs/findings.md).
UPSTREAM_FINDINGS = frozenset(inv for inv, status in FOUND.values()
                              if status in ("upstream", "upstream-known")) - {"upstream.assert"}  # only a known one


def test_every_found_file_is_listed():
    assert {p.stem for p in FOUND_DIR.glob("*.yaml")} == set(FOUND)


@pytest.mark.parametrize(("stem", "invariant", "status"), [(k, *v) for k, v in sorted(FOUND.items())],
                         ids=sorted(FOUND))
def test_found_scenario(stem, invariant, status):
    scenario = load_scenario(FOUND_DIR / f"{stem}.yaml")
    assert scenario.warnings == []
    annotations = scenario.document.get("metadata", {}).get("annotations", {})
    assert annotations.get("schedcheck.io/invariant") == invariant
    result = run_scenario(scenario, seed=0)
    broken = [v["id"] for v in result.violations]
    if status == "upstream-finding":
        assert broken == [] and invariant in [f["id"] for f in result.findings]
    elif status == "upstream-known":
        known = [f.get("known") for f in result.findings if f["id"] == invariant]
        assert broken == [] and known and known[0], "a known upstream finding must be reported, not fail"
        strict = run_scenario(scenario, seed=0, engine=InvariantEngine(fail_on_known={known[0]}))
        assert invariant in [v["id"] for v in strict.violations], f"--fail-on-known {known[0]} must fail"
    elif status in ("upstream", "upstream-panic"):
        assert invariant in broken, f"the reference no longer reproduces upstream's {invariant} bug"
    else:
        assert broken == [], broken

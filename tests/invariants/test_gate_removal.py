"""task.gate-removal-admitted: Volcano's queue-allocation gate is removed only for an admitted, opted-in
pod held by that gate alone, with SchedulingGatesQueueAdmission on."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.reference.gate.schedulinggate import SchGateManager
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario

RULE = "task.gate-removal-admitted"
REMOVAL_METHOD = "remove_volcano_sch_gate"
SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
ADMITTED = SCENARIOS / "schgate-admitted-gate-removed-next-session.yaml"
FULL = SCENARIOS / "schgate-queue-full-gate-stays.yaml"
SECOND = SCENARIOS / "schgate-second-gate-kept.yaml"
OFF = SCENARIOS / "schgate-feature-off-gated-never-scheduled.yaml"


def _violations(path: Path) -> tuple[list, InvariantEngine]:
    engine = InvariantEngine(only=[RULE])
    run_scenario(load_scenario(path), engine=engine)
    return engine.violations, engine


@pytest.mark.parametrize("path", [ADMITTED, FULL, SECOND, OFF], ids=lambda p: p.stem)
def test_passes_on_the_faithful_reference(path):
    violations, engine = _violations(path)
    assert violations == []
    assert engine.checks[RULE] > 0


def test_fires_on_a_removal_for_a_pod_that_did_not_opt_in(monkeypatch, tmp_path):
    from schedcheck.reference.actions import allocate

    monkeypatch.setattr(allocate, "has_queue_allocation_gate_annotation", lambda pod: True)
    text = ADMITTED.read_text().replace(', scheduling.volcano.sh/queue-allocation-gate: "true"}', "}")
    path = tmp_path / "no-opt-in.yaml"
    path.write_text(text)
    violations, _ = _violations(path)
    assert [v.invariant for v in violations] == [RULE]
    assert "default/g-0" in violations[0].message and "has not opted in" in violations[0].message


def test_fires_on_a_removal_with_the_feature_gate_off(monkeypatch):
    from schedcheck.reference.framework import framework

    original = framework.open_session

    def open_with_manager(cache, *args, **kwargs):
        ssn = original(cache, *args, **kwargs)
        ssn.sch_gate_manager = SchGateManager(cache)  # the bug: a manager although the gate is off
        return ssn

    import schedcheck.reference.scheduler as scheduler_module

    monkeypatch.setattr(scheduler_module, "open_session", open_with_manager)
    violations, _ = _violations(OFF)
    assert violations and {v.invariant for v in violations} == {RULE}
    assert "SchedulingGatesQueueAdmission is off" in violations[0].message


CLOSED = """
apiVersion: schedcheck/v1
kind: Scenario
schedulerOptions: {featureGates: {SchedulingGatesQueueAdmission: true}}
schedulerConf:
  actions: allocate
  tiers: [{plugins: [%s]}]
objects:
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: ops}, spec: {weight: 1},
   status: {state: Closed}}
- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: "1", memory: 1Gi, pods: "110"}}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: g, namespace: default},
   spec: {minMember: 1, queue: ops}}
- apiVersion: v1
  kind: Pod
  metadata: {name: g-0, namespace: default, annotations: {scheduling.k8s.io/group-name: g,
             scheduling.volcano.sh/queue-allocation-gate: "true"}}
  spec:
    containers: [{name: c, resources: {requests: {cpu: 100m}}}]
    schedulingGates: [{name: scheduling.volcano.sh/queue-allocation-gate}]
"""


def _closed(plugins: str):
    from schedcheck.scenario.loader import load_scenario_text

    engine = InvariantEngine(only=[RULE])
    result = run_scenario(load_scenario_text(CLOSED % plugins, "closed.yaml"), engine=engine)
    return engine.violations, result


def test_a_closed_queue_holds_the_gate_only_where_an_allocatable_plugin_looks_at_the_state(monkeypatch):
    # no plugin: allocate asks nothing of the queue's state and upstream asks to remove the gate (found by the
    # gate at seed 9 as a false alarm when the rule required an open queue whatever the conf)
    violations, result = _closed("")
    assert violations == [] and result.violations == []
    violations, _ = _closed("{name: proportion}")  # proportion's Allocatable refuses the closed queue
    assert violations == []
    from schedcheck.reference.plugins import proportion

    monkeypatch.setattr(proportion.ProportionPlugin, "allocatable", lambda self, queue, task: True)
    violations, _ = _closed("{name: proportion}")
    assert [v.invariant for v in violations] == [RULE] and "is not open" in violations[0].message


def test_passes_a_pending_pod_whose_node_name_a_discarded_allocation_left(monkeypatch):
    from schedcheck.reference.cache.cache import SchedulerCache

    asked: list[str] = []
    original = SchedulerCache.__dict__[REMOVAL_METHOD]

    def spy(self, task, *args, **kwargs):
        asked.append(task.key)
        return original(self, task, *args, **kwargs)

    monkeypatch.setattr(SchedulerCache, REMOVAL_METHOD, spy)
    path = Path(__file__).resolve().parents[1] / "data" / "gate-removal-after-a-discarded-nomination.yaml"
    violations, engine = _violations(path)
    assert asked == ["data/serve-2"]  # the removal the rule judges was asked, after the discarded allocation
    assert violations == [] and engine.checks[RULE] > 0

"""Volcano's queue-allocation scheduling gate behind SchedulingGatesQueueAdmission: the feature gate read
from schedulerOptions.featureGates, the gate's removal between sessions, capacity's reservation, and the
generators' coverage (the rule task.gate-removal-admitted: tests/invariants/test_gate_removal.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedcheck.reference.api.task_info import QUEUE_ALLOCATION_GATE, TaskInfo
from schedcheck.reference.features import SCHEDULING_GATES_QUEUE_ADMISSION
from schedcheck.reference.gate.schedulinggate import SchGateManager
from schedcheck.reference.k8s import Container, Pod
from schedcheck.reference.scheduler import Scheduler
from schedcheck.runner import run_scenario
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.loader import load_scenario, load_scenario_text

SCENARIOS = Path(__file__).resolve().parent / "scenarios"
ADMITTED = SCENARIOS / "schgate-admitted-gate-removed-next-session.yaml"
FULL = SCENARIOS / "schgate-queue-full-gate-stays.yaml"
SECOND = SCENARIOS / "schgate-second-gate-kept.yaml"
OFF = SCENARIOS / "schgate-feature-off-gated-never-scheduled.yaml"
OTHER_GATE = "example.com/quota-check"


def _text(gates: str) -> str:
    return f"""apiVersion: schedcheck/v1
kind: Scenario
metadata: {{name: s}}
schedulerOptions: {{featureGates: {gates}}}
objects:
- {{apiVersion: v1, kind: Node, metadata: {{name: n1}}, status: {{allocatable: {{cpu: "1", memory: 1Gi}}}}}}
"""


def _scheduler(path: Path, cycles: int) -> Scheduler:
    scenario = load_scenario(path)
    scheduler = Scheduler(scenario.objects, scenario.conf, server_options=scenario.options, now=scenario.now)
    for index in range(cycles):
        if index:
            scheduler.advance()
        scheduler.run_once()
    return scheduler


def _gates(scheduler: Scheduler, name: str) -> list[str]:
    return next(p.scheduling_gates for p in scheduler.cache.world.pods if p.name == name)


# -- reading the feature gates ---------------------------------------------------------------------

def test_the_feature_gate_is_off_by_default_and_read_from_the_options():
    assert not load_scenario_text(_text("{}"), "s.yaml").options.feature_enabled(SCHEDULING_GATES_QUEUE_ADMISSION)
    options = load_scenario_text(_text("{SchedulingGatesQueueAdmission: true}"), "s.yaml").options
    assert options.feature_enabled(SCHEDULING_GATES_QUEUE_ADMISSION)
    assert options.feature_enabled("WorkLoadSupport")  # the others keep their defaults


@pytest.mark.parametrize("gates, field, reason", [
    ("{QueueGates: true}", "schedulerOptions.featureGates.QueueGates", "not a Volcano feature gate"),
    ("{SchedulingGatesQueueAdmission: \"true\"}", "schedulerOptions.featureGates.SchedulingGatesQueueAdmission",
     "expected true or false"),
    ("{SchedulingGatesQueueAdmission: null}", "schedulerOptions.featureGates.SchedulingGatesQueueAdmission",
     "expected true or false"),
    ("[SchedulingGatesQueueAdmission]", "schedulerOptions.featureGates", "mapping"),
])
def test_a_bad_feature_gate_is_a_one_line_error_naming_file_and_field(gates, field, reason):
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(_text(gates), "s.yaml")
    message = str(err.value)
    assert message.startswith("s.yaml") and field in message and reason in message and "\n" not in message


def test_an_unmodelled_gate_off_its_default_is_a_warning():
    warned = load_scenario_text(_text("{WorkLoadSupport: false}"), "s.yaml").warnings
    assert any("featureGates.WorkLoadSupport: not modelled" in w for w in warned)
    assert not any("featureGates" in w for w in load_scenario_text(_text("{WorkLoadSupport: true}"), "s.yaml").warnings)


def test_the_feature_gates_round_trip_through_a_dumped_document():
    from schedcheck.scenario.dump import scenario_document

    scenario = load_scenario(ADMITTED)
    doc = scenario_document("x", scenario.objects, scenario.conf, options=scenario.options)
    assert doc["schedulerOptions"] == {"featureGates": {SCHEDULING_GATES_QUEUE_ADMISSION: True}}
    assert scenario_document("x", scenario.objects, scenario.conf).get("schedulerOptions") is None


# -- the gate's removal ----------------------------------------------------------------------------

def test_an_admitted_pod_loses_its_gate_between_sessions_and_is_bound_one_session_later():
    scheduler = _scheduler(ADMITTED, 1)
    assert [(r.cycle, r.task, r.queue) for r in scheduler.cache.log.gate_removals] == [(0, "default/g-0", "q1")]
    assert scheduler.cache.log.binds == []  # still gated in the session that admitted it
    assert _gates(scheduler, "g-0") == [QUEUE_ALLOCATION_GATE]
    scheduler.advance()
    assert _gates(scheduler, "g-0") == []
    scheduler.run_once()
    assert [(b.cycle, b.task) for b in scheduler.cache.log.binds] == [(1, "default/g-0")]


def _reserved(report) -> dict[str, list[str]]:
    capacity = report.session.plugins["capacity"]
    return {queue: sorted(task.key for task in tasks.values()) for queue, tasks in capacity.reserved_tasks.items()}


def test_capacity_reserves_the_admitted_pod_until_it_is_allocated():
    scenario = load_scenario(ADMITTED)
    scheduler = Scheduler(scenario.objects, scenario.conf, server_options=scenario.options)
    assert _reserved(scheduler.run_once()) == {"q1": ["default/g-0"]}  # admitted while gated: reserved
    scheduler.advance()
    assert _reserved(scheduler.run_once()) == {}  # reserved at open (ungated, opted in), dropped on allocate
    off = load_scenario(OFF)
    scheduler = Scheduler(off.objects, off.conf, server_options=off.options)
    assert _reserved(scheduler.run_once()) == {}  # the feature gate off: no reservation, u-0 is admitted
    assert [b.task for b in scheduler.cache.log.binds] == ["default/u-0"]


@pytest.mark.parametrize("path, pod, gates", [
    (FULL, "g-0", [QUEUE_ALLOCATION_GATE]),
    (SECOND, "t-0", [QUEUE_ALLOCATION_GATE, OTHER_GATE]),
    (OFF, "g-0", [QUEUE_ALLOCATION_GATE]),
])
def test_the_gate_stays_when_the_queue_is_full_another_gate_is_there_or_the_feature_is_off(path, pod, gates):
    scheduler = _scheduler(path, 3)
    scheduler.advance()
    assert scheduler.cache.log.gate_removals == []
    assert _gates(scheduler, pod) == gates


def test_the_manager_refuses_a_pod_with_another_gate():
    asked = []

    class Cache:
        def remove_volcano_sch_gate(self, task):
            asked.append(task.key)

    def task(name: str, gates: list[str]) -> TaskInfo:
        pod = Pod(name=name, namespace="default", uid=name, scheduling_gates=gates,
                  annotations={QUEUE_ALLOCATION_GATE: "true"},
                  containers=[Container(name="c", requests={})])
        return TaskInfo(pod)

    manager = SchGateManager(Cache())  # type: ignore[arg-type]
    assert not manager.enqueue(task("two", [QUEUE_ALLOCATION_GATE, OTHER_GATE]))
    assert not manager.enqueue(task("other", [OTHER_GATE]))
    assert manager.enqueue(task("one", [QUEUE_ALLOCATION_GATE]))
    assert asked == ["default/one"]


# -- generator coverage ------------------------------------------------------------------------------

def test_generated_documents_sometimes_switch_the_gate_on_with_opted_in_gated_pods_that_run_clean():
    from schedcheck.generators.scenarios import profile_scenarios, sample_documents
    from schedcheck.scenario.loader import scenario_from_document

    docs = [doc for seed in (4, 6, 7) for doc in sample_documents(profile_scenarios("ci"), 300, seed)]
    on = [d for d in docs if (d.get("schedulerOptions") or {}).get("featureGates") == {
        SCHEDULING_GATES_QUEUE_ADMISSION: True}]
    opted_in = [d for d in on if any(
        o["kind"] == "Pod" and o["metadata"].get("annotations", {}).get(QUEUE_ALLOCATION_GATE) == "true"
        and {"name": QUEUE_ALLOCATION_GATE} in o["spec"].get("schedulingGates", []) for o in d["objects"])]
    assert 20 <= len(on) <= 300 and len(opted_in) >= 10  # rarely drawn, and then mostly with opted-in pods
    removals = 0
    for doc in opted_in:
        scenario = scenario_from_document(doc, "generated.yaml")
        assert not [w for w in scenario.warnings if "featureGates" in w or "schedulingGates" in w]
        assert run_scenario(scenario).violations == []
        scheduler = Scheduler(scenario.objects, scenario.conf, server_options=scenario.options, now=scenario.now)
        for index in range(scenario.cycles):
            if index:
                scheduler.advance()
            scheduler.run_once()
        removals += len(scheduler.cache.log.gate_removals)
    assert removals > 0

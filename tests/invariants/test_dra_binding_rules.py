"""dra.bound-with-binding-conditions-met and dra.binding-parameters-carried: device binding conditions
(fire on a scheduler that binds past unmet conditions or drops a device's binding parameters / passes on the
faithful reference, also past F61's assertion, where Kubernetes' wait takes over)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.reference.cache import dra_binding
from schedcheck.reference.plugins import dra_allocator
from schedcheck.reference.util import assertion
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario, load_scenario_text
from schedcheck.scenario.model import Scenario

HERE = Path(__file__).resolve().parents[1] / "scenarios"
SCENARIOS = sorted(p.name for p in HERE.glob("dra-*.yaml"))
MET, CARRIED = "dra.bound-with-binding-conditions-met", "dra.binding-parameters-carried"
RULES = [MET, CARRIED]


def _text(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


def fresh_allocation() -> Scenario:
    """The pool scenario without its plain pool: only-0's one choice is fabric-0, which has binding conditions."""
    text = _text("dra-binding-conditions-pool-visited-last.yaml")
    start = text.index("- apiVersion: resource.k8s.io/v1\n  kind: ResourceSlice\n  metadata: {name: n1-local}")
    end = text.index("- apiVersion: resource.k8s.io/v1\n  kind: ResourceClaim")
    return load_scenario_text(text[:start] + text[end:], "fresh.yaml")


def _violations(scenario: Scenario, rules: list[str] = RULES) -> list[str]:
    engine = InvariantEngine(only=rules)
    run_scenario(scenario, engine=engine)
    return [v.invariant for v in engine.violations]


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_rules_pass_on_the_faithful_reference(name: str) -> None:
    assert _violations(load_scenario(HERE / name)) == []


def test_past_the_assertion_met_conditions_bind_and_the_rule_holds() -> None:
    assertion.set_panic_on_error(False)  # a handle with an event recorder (volcano-sh/volcano#5817)
    scenario = load_scenario(HERE / "dra-binding-conditions-prebind-panics.yaml")
    engine = InvariantEngine(only=RULES)
    result = run_scenario(scenario, engine=engine)
    assert result.binds == {"default/ready-0": "n1"} and engine.violations == []


def test_past_the_assertion_a_fresh_allocation_waits_and_the_rule_holds() -> None:
    assertion.set_panic_on_error(False)
    engine = InvariantEngine(only=RULES)
    result = run_scenario(fresh_allocation(), engine=engine)
    assert result.binds == {} and result.task_status_counts["default/only"] == {"Binding": 1}
    assert engine.violations == []


def test_met_fires_on_a_bind_that_does_not_wait_for_pending_conditions(monkeypatch: pytest.MonkeyPatch) -> None:
    assertion.set_panic_on_error(False)
    monkeypatch.setattr(dra_binding, "pre_bind_wait", lambda claims, node, now: None)
    assert MET in _violations(fresh_allocation())


def test_met_fires_on_a_bind_past_a_failure_condition(monkeypatch: pytest.MonkeyPatch) -> None:
    # Filter lets the failed claim through and PreBind does not look: retry-0 is bound with attach-failed True
    assertion.set_panic_on_error(False)
    monkeypatch.setattr(dra_binding, "unavailable", lambda claim, now: False)
    monkeypatch.setattr(dra_binding, "pre_bind_wait", lambda claims, node, now: None)
    scenario = load_scenario(HERE / "dra-binding-failure-keeps-the-pod-pending.yaml")
    engine = InvariantEngine(only=[MET])
    run_scenario(scenario, engine=engine)
    assert [v.invariant for v in engine.violations] == [MET]
    assert "failure condition example.com/attach-failed True" in engine.violations[0].found


def test_carried_fires_on_results_without_the_devices_binding_conditions(monkeypatch: pytest.MonkeyPatch) -> None:
    original = dra_allocator._results

    def stripped(devices):
        results = original(devices)
        for result in results:
            result.binding_conditions, result.binding_failure_conditions = [], []
        return results

    monkeypatch.setattr(dra_allocator, "_results", stripped)
    assert CARRIED in _violations(fresh_allocation(), [CARRIED])


def test_carried_fires_on_an_allocation_not_pinned_to_its_node(monkeypatch: pytest.MonkeyPatch) -> None:
    original = dra_allocator._result

    def unpinned(devices, node_name):
        allocation = original(devices, node_name)
        allocation.node_selector = None
        return allocation

    monkeypatch.setattr(dra_allocator, "_result", unpinned)
    assert CARRIED in _violations(load_scenario(HERE / "dra-binds-to-node-pins-the-shared-claim.yaml"), [CARRIED])

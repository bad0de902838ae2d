"""dra.devices-not-oversubscribed and dra.match-attribute-held: the devices the DRA allocator hands out
(fires on a broken allocator / passes on the faithful reference)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.reference.plugins import dra_allocator
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario

HERE = Path(__file__).resolve().parents[1] / "scenarios"
SCENARIOS = sorted(p.name for p in HERE.glob("dra-*.yaml"))
RULES = ["dra.devices-not-oversubscribed", "dra.match-attribute-held", "dra.taints-tolerated"]


def _violations(rules: list[str], name: str) -> list[str]:
    engine = InvariantEngine(only=rules)
    run_scenario(load_scenario(HERE / name), engine=engine)
    return [v.invariant for v in engine.violations]


@pytest.mark.parametrize("name", SCENARIOS)
def test_both_rules_pass_on_the_faithful_reference(name: str) -> None:
    assert len(SCENARIOS) >= 12
    assert _violations(RULES, name) == []


def test_oversubscription_fires_on_a_device_allocated_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    # other-0's claim takes n2's gpu-0, which shared-gpu's status already holds
    monkeypatch.setattr(dra_allocator._Search, "_in_use", lambda self, device_id: False)
    assert "dra.devices-not-oversubscribed" in _violations(RULES[:1], "dra-shared-claim-already-allocated.yaml")


def test_oversubscription_fires_on_shares_beyond_the_capacity(monkeypatch: pytest.MonkeyPatch) -> None:
    # the third 4Gi share of nic-0 (10Gi) is let through: 12Gi
    monkeypatch.setattr(dra_allocator._Search, "_capacity_fits", lambda self, item, slice_, device: True)
    assert "dra.devices-not-oversubscribed" in _violations(RULES[:1], "dra-consumable-capacity-shares-a-device.yaml")


def test_match_attribute_fires_on_devices_of_two_values(monkeypatch: pytest.MonkeyPatch) -> None:
    # n1's gpu-0 (numa 0) and gpu-1 (numa 1) are let through as a pair
    monkeypatch.setattr(dra_allocator._MatchAttribute, "add", lambda self, *args: True)
    assert "dra.match-attribute-held" in _violations(RULES[1:], "dra-constraint-match-attribute.yaml")


def test_taints_fire_on_a_tainted_device_handed_to_a_request_without_its_toleration(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # n1's gpu-0 is tainted NoSchedule: an allocator that ignores taints gives it to plain-gpu
    # (n2's slice left out, so that plain-gpu has only n1's device to take)
    from schedcheck.scenario.loader import load_scenario_text

    text = (HERE / "dra-device-taints-keep-untolerating-claims-away.yaml").read_text(encoding="utf-8")
    text = text.replace("nodeName: n2\n", "nodeName: gone\n")
    assert _violations_of(["dra.taints-tolerated"], load_scenario_text(text, "variant.yaml")) == []
    monkeypatch.setattr(dra_allocator, "taint_prevents_allocation", lambda device, tolerations: False)
    assert "dra.taints-tolerated" in _violations_of(["dra.taints-tolerated"], load_scenario_text(text, "variant.yaml"))


def _violations_of(rules: list[str], scenario) -> list[str]:
    engine = InvariantEngine(only=rules)
    run_scenario(scenario, engine=engine)
    return [v.invariant for v in engine.violations]

"""dra.devices-not-oversubscribed, dra.match-attribute-held, dra.taints-tolerated and
dra.admin-access-as-requested: the devices the DRA allocator hands out
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
RULES = ["dra.devices-not-oversubscribed", "dra.match-attribute-held", "dra.taints-tolerated",
         "dra.admin-access-as-requested"]


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
    monkeypatch.setattr(dra_allocator._Search, "_unavailable", lambda self, item, device_id: False)
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


def test_oversubscription_fires_on_an_admin_access_device_given_twice_in_one_claim(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # same-0's claim twice-gpu has two admin-access requests for n3's one device: an allocator that lets admin
    # access pass over its own claim's choices too gives gpu-0 to both
    name = "dra-admin-access-within-one-allocation.yaml"
    assert _violations(RULES[:1], name) == []
    original = dra_allocator._Search._unavailable
    monkeypatch.setattr(dra_allocator._Search, "_unavailable",
                        lambda self, item, device_id: False if item.admin_access else original(self, item, device_id))
    assert "dra.devices-not-oversubscribed" in _violations(RULES[:1], name)


def test_admin_access_fires_on_a_result_without_the_requests_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    # monitor-gpu asks with adminAccess: results written without the flag break the rule
    name = "dra-admin-access-takes-devices-in-use.yaml"
    assert _violations(RULES[3:], name) == []
    original = dra_allocator._results

    def without_flag(devices):
        results = original(devices)
        for result in results:
            result.admin_access = False
        return results

    monkeypatch.setattr(dra_allocator, "_results", without_flag)
    assert "dra.admin-access-as-requested" in _violations(RULES[3:], name)


def _violations_of(rules: list[str], scenario) -> list[str]:
    engine = InvariantEngine(only=rules)
    run_scenario(scenario, engine=engine)
    return [v.invariant for v in engine.violations]

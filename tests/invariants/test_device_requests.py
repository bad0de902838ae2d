"""device.vgpu-assignment-as-asked and device.gpu-number-cards-exclusive: shared GPUs judged from the pods'
device annotations (fires on the pre-fix mutants' scenarios / passes on the faithful reference)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.mutants import mutant
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario

ROOT = Path(__file__).resolve().parents[2]
MUTANT_SCENARIOS = ROOT / "schedcheck" / "mutant_scenarios"
RULES = ["device.vgpu-assignment-as-asked", "device.gpu-number-cards-exclusive"]
DEVICE_SCENARIOS = sorted([*(ROOT / "tests" / "scenarios").glob("deviceshare-*.yaml"),
                           *(ROOT / "schedcheck" / "corpus").glob("deviceshare-*.yaml"),
                           *(MUTANT_SCENARIOS / f"{name}.yaml" for name in (
                               "vgpu-memory-from-first-card", "vgpu-mode-only-mig-checked",
                               "vgpu-single-nouse-type-accepted", "gpushare-number-pods-not-recorded"))])


def _violations(path: Path) -> list[str]:
    engine = InvariantEngine(only=RULES)
    run_scenario(load_scenario(path), engine=engine)
    return [v.invariant for v in engine.violations]


@pytest.mark.parametrize("path", DEVICE_SCENARIOS, ids=lambda p: p.name)
def test_the_rules_pass_on_the_faithful_reference(path):
    assert len(DEVICE_SCENARIOS) >= 20
    assert _violations(path) == []


@pytest.mark.parametrize("name", ["vgpu-memory-from-first-card", "vgpu-mode-only-mig-checked",
                                  "vgpu-single-nouse-type-accepted"])
def test_vgpu_assignment_as_asked_fires_on_a_card_the_pod_did_not_ask_for(name):
    with mutant(name):
        assert "device.vgpu-assignment-as-asked" in _violations(MUTANT_SCENARIOS / f"{name}.yaml")


def test_gpu_number_cards_exclusive_fires_on_a_whole_card_given_twice():
    with mutant("gpushare-number-pods-not-recorded"):
        found = _violations(MUTANT_SCENARIOS / "gpushare-number-pods-not-recorded.yaml")
    assert found == ["device.gpu-number-cards-exclusive"]

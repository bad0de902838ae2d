"""queue.capacity-dra-within-quota: capacity's DRA quotas, device counts and consumable-capacity dimensions
(fires on a plugin that skips the check or its dimensions / passes on the faithful reference)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.reference.plugins import capacity_dra
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario

HERE = Path(__file__).resolve().parents[1] / "scenarios"
RULE = "queue.capacity-dra-within-quota"
SCENARIOS = sorted(p.name for p in HERE.glob("dra-*.yaml"))
QUOTA_SCENARIOS = ["dra-capacity-quota-blocks-a-claim.yaml", "dra-capacity-quota-consumable-admits-one-claim.yaml",
                   "dra-capacity-quota-count-only-refuses-capacity-requests.yaml"]


def _violations(name: str) -> list[str]:
    engine = InvariantEngine(only=[RULE])
    run_scenario(load_scenario(HERE / name), engine=engine)
    return [v.message for v in engine.violations]


@pytest.mark.parametrize("name", SCENARIOS)
def test_passes_on_the_faithful_reference(name: str) -> None:
    assert set(QUOTA_SCENARIOS) <= set(SCENARIOS)
    assert _violations(name) == []


def test_fires_when_the_quota_is_not_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(capacity_dra.DRAQuota, "fits", lambda self, request, include_inqueue, consumable=True: True)
    # extra-0's new claim: a second device where the quota allows 1
    assert any("extra-0" in m and "2 devices > 1" in m for m in _violations(QUOTA_SCENARIOS[0]))
    # b-0's 6Gi after a-0's: 12Gi of memory where the quota allows 10Gi
    assert any("b-0" in m and "memory 1.28849e+10 > 1.07374e+10" in m for m in _violations(QUOTA_SCENARIOS[1]))


def test_fires_when_the_dimensions_are_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    original = capacity_dra.DRAQuota.fits
    monkeypatch.setattr(capacity_dra.DRAQuota, "fits",
                        lambda self, request, include_inqueue, consumable=True: original(self, request, include_inqueue,
                                                                                           False))
    assert any("asking-0" in m and "memory asked but not in the quota" in m for m in _violations(QUOTA_SCENARIOS[2]))
    assert any("b-0" in m for m in _violations(QUOTA_SCENARIOS[1]))

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
                   "dra-capacity-quota-count-only-refuses-capacity-requests.yaml",
                   "dra-capacity-quota-consumable-hierarchy-ancestor-counts.yaml"]
F50_SCENARIO = "dra-capacity-quota-hierarchy-ancestor-misses-running-claims.yaml"


def _violations(name: str) -> list[str]:
    engine = InvariantEngine(only=[RULE])
    run_scenario(load_scenario(HERE / name), engine=engine)
    return [v.message for v in engine.violations]


@pytest.mark.parametrize("name", [n for n in SCENARIOS if n != F50_SCENARIO])
def test_passes_on_the_faithful_reference(name: str) -> None:
    assert set(QUOTA_SCENARIOS) <= set(SCENARIOS)
    assert _violations(name) == []


def test_an_ancestor_missing_a_quota_less_leafs_running_claims_is_the_known_finding_f46() -> None:
    """eng opens without holder-0's 6Gi (team-a has no DRA quota of its own), so b-0's 6Gi passes at 4Gi +
    6Gi although eng's leaves then hold 16Gi: a finding under F50, a violation with the switch on."""
    result = run_scenario(load_scenario(HERE / F50_SCENARIO), seed=0)
    assert result.violations == []
    assert [(f["id"], f.get("known")) for f in result.findings] == [(RULE, "F50")]
    assert "memory 1.71799e+10 > 1.07374e+10" in result.findings[0]["message"]
    strict = run_scenario(load_scenario(HERE / F50_SCENARIO), seed=0, engine=InvariantEngine(fail_on_known={"F50"}))
    assert [v["id"] for v in strict.violations] == [RULE]


def test_f46_does_not_hide_an_ancestor_check_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """With team-a's own quota (eng opens at 6Gi) a plugin checking the leaf alone lets b-0 through: a plain
    violation, no leaf marked as uncharged."""
    from schedcheck.reference.plugins import capacity

    monkeypatch.setattr(capacity.CapacityPlugin, "_branch", lambda self, queue_id: [queue_id])
    found = _violations(QUOTA_SCENARIOS[3])
    assert any("b-0" in m and "queue eng" in m and "session open" not in m for m in found), found


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

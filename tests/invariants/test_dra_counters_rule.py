"""dra.counters-not-exceeded: no counter set of a pool consumed beyond its values by devices allocated whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.reference.plugins import dra_allocator
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario

HERE = Path(__file__).resolve().parents[1] / "scenarios"
SCENARIOS = sorted(p.name for p in HERE.glob("dra-*.yaml"))
RULE = "dra.counters-not-exceeded"


def _violations(name: str, findings: bool = False) -> list:
    engine = InvariantEngine(only=[RULE])
    run_scenario(load_scenario(HERE / name), engine=engine)
    return engine.findings if findings else engine.violations


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_rule_passes_on_the_faithful_reference(name: str) -> None:
    assert len(SCENARIOS) >= 16
    assert _violations(name) == []


def test_fires_when_the_allocator_ignores_the_counters(monkeypatch: pytest.MonkeyPatch) -> None:
    # all three partitions go: 20Gi + 10Gi + 20Gi of gpu-0's 40Gi
    monkeypatch.setattr(dra_allocator._Search, "_take_counters", lambda self, slice_, device: True)
    found = _violations("dra-counters-two-partitions-fit-the-third-does-not.yaml")
    assert found and found[0].invariant == RULE
    assert "counter set gpu.example.com/n1/gpu-0" in found[0].objects and found[0].found == "50Gi"


def test_fires_when_allocated_devices_are_not_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    # n1's whole GPU (allocated) is forgotten: train-0 takes n1's two partitions on top of it
    monkeypatch.setattr(dra_allocator._Search, "_available", lambda self, pool: {
        name: {c: q.as_fraction() for c, q in cs.counters.items()} for name, cs in pool.counter_sets.items()})
    found = _violations("dra-counters-allocated-whole-gpu-blocks-its-partitions.yaml")
    assert [v.objects[0] for v in found] == ["counter set gpu.example.com/n1/gpu"]


def test_fires_on_upstreams_pool_name_keyed_counters_as_the_known_finding_f47() -> None:
    assert _violations("dra-counters-pools-of-one-name-overcommit.yaml") == []
    found = _violations("dra-counters-pools-of-one-name-overcommit.yaml", findings=True)
    assert [(v.objects[0], v.found, v.known) for v in found][:1] == [
        ("counter set nic.example.com/n1/mem", "60Gi", "F47")]
    assert all(v.known == "F47" for v in found)

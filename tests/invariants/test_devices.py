"""device.within-capacity, device.assigned-exists and device.bound-with-assignment: the shared-GPU ledgers of deviceshare (fires / passes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.reference.api.devices import ascend310p_vnpu, ascend_hami, gpushare, vgpu
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario

HERE = Path(__file__).resolve().parents[1] / "scenarios"
SCENARIOS = sorted(p.name for p in HERE.glob("deviceshare-*.yaml"))
RULES = ["device.within-capacity", "device.assigned-exists", "device.bound-with-assignment"]


def _findings(rules: list[str], name: str) -> list[str]:
    engine = InvariantEngine(only=rules)
    run_scenario(load_scenario(HERE / name), engine=engine)
    return [f.invariant for f in engine.findings]


def _violations(rules: list[str], name: str) -> list[str]:
    engine = InvariantEngine(only=rules)
    run_scenario(load_scenario(HERE / name), engine=engine)
    return [v.invariant for v in engine.violations]


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_rules_pass_on_the_faithful_reference(name):
    assert len(SCENARIOS) >= 4
    assert _violations(RULES, name) == []


def test_within_capacity_fires_when_a_card_is_filled_beyond_its_memory(monkeypatch):
    # a GPU-share card that always claims 10**9 idle memory: big-0 (9000) lands on an 8000 card
    monkeypatch.setattr(gpushare.GPUDevice, "idle_memory", lambda self: 10**9)
    assert "device.within-capacity" in _violations(["device.within-capacity"], "deviceshare-gpushare-memory-fit.yaml")


def test_assigned_exists_fires_on_a_card_the_node_lacks(monkeypatch):
    monkeypatch.setattr(gpushare, "_index_annotations",
                        lambda ids, now: {gpushare.PREDICATE_TIME: str(now), gpushare.GPU_INDEX: "7"})
    assert "device.assigned-exists" in _violations(["device.assigned-exists"], "deviceshare-gpushare-memory-fit.yaml")


def test_assigned_exists_fires_on_a_vgpu_uuid_of_another_node(monkeypatch):
    original = vgpu.encode_pod_devices
    monkeypatch.setattr(vgpu, "encode_pod_devices", lambda cards: original(cards).replace("GPU-", "GPU-X"))
    assert "device.assigned-exists" in _violations(["device.assigned-exists"], "deviceshare-vgpu-two-cards.yaml")


def test_within_capacity_fires_when_an_ascend_device_is_filled_beyond_its_memory(monkeypatch):
    # every Ascend device fits: small-1's vir02 (6144) lands on d0 with 3095 left
    monkeypatch.setattr(ascend_hami.AscendDevices, "fit", lambda self, req, dev, hami: True)
    assert "device.within-capacity" in _violations(["device.within-capacity"], "deviceshare-ascend-template-choice.yaml")


def test_within_capacity_passes_the_ascend_device_filled_to_the_brim():
    # multi-0 takes two whole devices (21527 of 21527 each): full, not beyond
    assert _violations(["device.within-capacity"], "deviceshare-ascend-multi-card.yaml") == []


def test_assigned_exists_fires_on_an_ascend_device_of_another_node(monkeypatch):
    original = ascend_hami.encode_pod_devices
    monkeypatch.setattr(ascend_hami, "encode_pod_devices", lambda devs: original(devs).replace("d0", "e0"))
    assert "device.assigned-exists" in _violations(["device.assigned-exists"], "deviceshare-ascend-fit-no-fit.yaml")


def test_assigned_exists_passes_an_ascend_device_of_the_pods_node():
    assert _violations(["device.assigned-exists"], "deviceshare-ascend-fit-no-fit.yaml") == []


def test_within_capacity_fires_when_a_mindcluster_chip_is_filled_beyond_its_cores(monkeypatch):
    # every chip meets every request: infer-0's vir01 lands on m1's chip 0, which a whole-chip pod fills
    monkeypatch.setattr(ascend310p_vnpu.VChip, "meets", lambda self, req: True)
    assert "device.within-capacity" in _violations(["device.within-capacity"],
                                                   "deviceshare-mindcluster-no-room-passes-predicate.yaml")


def test_within_capacity_passes_a_mindcluster_chip_filled_to_the_brim():
    # infer-0 takes chip 0's last 2 cores (8 of 8; its AI CPUs, 8 of 7, are upstream's own overcharge)
    assert _violations(["device.within-capacity"], "deviceshare-mindcluster-downgrade-overcharge.yaml") == []


def test_within_capacity_does_not_count_what_the_session_open_charged(monkeypatch):
    # the world already overfills chip 0 (a whole chip and a vir01 on it): not the session's doing
    original = ascend310p_vnpu.NPUDevices._add_placed

    def twice(self, pod, chip_total):
        original(self, pod, chip_total)
        original(self, pod, chip_total)

    monkeypatch.setattr(ascend310p_vnpu.NPUDevices, "_add_placed", twice)
    assert _violations(["device.within-capacity"], "deviceshare-mindcluster-no-room-passes-predicate.yaml") == []


def test_assigned_exists_fires_on_a_mindcluster_chip_the_node_lacks(monkeypatch):
    monkeypatch.setattr(ascend310p_vnpu.NPUDevices, "select_chip", lambda self, req: ("7", ""))
    assert "device.assigned-exists" in _violations(["device.assigned-exists"], "deviceshare-mindcluster-batch-score.yaml")


def test_assigned_exists_passes_a_mindcluster_chip_of_the_pods_node():
    assert _violations(["device.assigned-exists"], "deviceshare-mindcluster-batch-score.yaml") == []


def test_bound_with_assignment_fires_when_a_held_node_lock_is_only_logged():
    # l1's vGPU lock is held: the device Allocate fails; upstream before 268bc9ca3 bound gpu-0 anyway
    from schedcheck.mutants import mutant

    with mutant("device-allocate-error-swallowed"):
        assert "device.bound-with-assignment" in _violations(["device.bound-with-assignment"],
                                                             "deviceshare-vgpu-node-lock-held.yaml")


def test_bound_with_assignment_fires_on_a_gpushare_pod_bound_without_its_card(monkeypatch):
    monkeypatch.setattr(gpushare.GPUDevices, "allocate", lambda self, pod, now: ({}, None))
    assert "device.bound-with-assignment" in _violations(["device.bound-with-assignment"],
                                                         "deviceshare-gpushare-memory-fit.yaml")


def test_bound_with_assignment_passes_a_pod_asking_no_device_on_a_locked_node():
    # cpu-0 is bound to the locked l1: it asks no vGPU, so no assignment is owed
    assert _violations(["device.bound-with-assignment"], "deviceshare-vgpu-node-lock-held.yaml") == []


def test_eviction_needed_leaves_a_preemptor_asking_the_nodes_devices_aside():
    # infer-0's cpu fitted a1's FutureIdle before etl-0 was evicted, but its Ascend device did not: preempt
    # evicts until the predicates pass (5a15213d8), so the eviction was needed
    found = _findings(["eviction.needed", "eviction.one-minimal"], "preempt-frees-a-fragmented-ascend-device.yaml")
    assert found == []


def test_the_eviction_rules_still_report_a_preemptor_that_asks_no_device():
    from schedcheck.mutants import mutant
    from schedcheck.selftest import scenario_path

    assert "eviction.one-minimal" in _findings(["eviction.one-minimal"], "preempt-excess-eviction.yaml")
    engine = InvariantEngine(only=["eviction.needed"])
    with mutant("evict-before-fit"):
        run_scenario(load_scenario(scenario_path("evict-before-fit")), engine=engine)
    assert [f.invariant for f in engine.findings] == ["eviction.needed"] * len(engine.findings) != []

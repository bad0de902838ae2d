"""Device binding conditions in DynamicResources' Filter and PreBind (reference_impl/cache/dra_binding.py):
readiness, the 600 s timeout on the scenario clock, and the wait Kubernetes' PreBind makes once past the event
master panics on (F61: the assertion turned off, as a framework handle with a recorder would let it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedcheck.invariants.known import known_assertion_for
from schedcheck.reference.cache import dra_binding
from schedcheck.reference.k8s_dra import AllocatedDevice, ClaimAllocation, DeviceCondition, DeviceStatus, ResourceClaim
from schedcheck.reference.util import assertion
from schedcheck.reference.util.assertion import AssertionViolation
from schedcheck.reference.util.timestamps import parse_timestamp
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario_text

HERE = Path(__file__).resolve().parents[1] / "scenarios"
NOW = parse_timestamp("2025-03-01T00:10:00Z")


def _claim(*conditions: tuple[str, str], timestamp: float | None = NOW - 30) -> ResourceClaim:
    result = AllocatedDevice("gpu", "gpu.example.com", "a-attach", "fabric-0", binding_conditions=["ready"],
                             binding_failure_conditions=["failed"])
    statuses = [DeviceStatus("gpu.example.com", "a-attach", "fabric-0",
                             conditions={kind: DeviceCondition(state, "Why", "it says so") for kind, state in conditions})]
    return ResourceClaim("c", "ns", "u", allocation=ClaimAllocation([result], timestamp=timestamp),
                         device_statuses=statuses if conditions else [])


def test_readiness_follows_the_devices_conditions() -> None:
    assert not dra_binding.claim_ready(_claim())  # no status for the device
    assert not dra_binding.claim_ready(_claim(("ready", "False")))
    assert not dra_binding.claim_ready(_claim(("ready", "Unknown")))
    assert dra_binding.claim_ready(_claim(("ready", "True"), ("failed", "False")))
    with pytest.raises(dra_binding.BindingFailed, match='claim=c, reason=Why, message="it says so"'):
        dra_binding.claim_ready(_claim(("ready", "True"), ("failed", "True")))  # failure wins, checked first


def test_the_timeout_counts_600_s_from_the_allocation_timestamp() -> None:
    assert not dra_binding.claim_timed_out(_claim(timestamp=NOW - 599), NOW)
    assert dra_binding.claim_timed_out(_claim(timestamp=NOW - 600), NOW)  # the Filter runs just after the clock
    assert not dra_binding.claim_timed_out(_claim(timestamp=None), NOW)
    assert dra_binding.unavailable(_claim(("failed", "True"), timestamp=NOW), NOW)
    assert not dra_binding.unavailable(_claim(("ready", "True"), timestamp=NOW - 900), NOW)  # ready: never late


@pytest.mark.parametrize(("allocated", "ends"), [(0, 600), (-598, 5), (-595, 5), (-594, 10), (-1, 600), (30, 600)])
def test_a_wait_ends_at_the_first_poll_that_finds_it_late_or_at_its_own_deadline(allocated: int, ends: int) -> None:
    """Polls every 5 s from the start (the first at once); a claim allocated `allocated` s from the start."""
    assert dra_binding.wait_deadline(NOW, NOW + allocated) == NOW + ends


def _late_claim_scenario(allocated: str, cycles: int) -> str:
    text = (HERE / "dra-binding-timeout-keeps-the-pod-pending.yaml").read_text(encoding="utf-8")
    return text.replace('allocationTimestamp: "2025-02-28T23:59:59Z"', f'allocationTimestamp: "{allocated}"') \
        .replace("cycles: 2", f"cycles: {cycles}")


def test_prebind_of_a_claim_with_binding_conditions_is_upstreams_nil_pointer_panic() -> None:
    scenario = load_scenario_text(_late_claim_scenario("2025-03-01T00:00:02Z", 1), "s.yaml")
    from schedcheck.reference.scheduler import Scheduler

    scheduler = Scheduler(scenario.objects, scenario.conf, now=scenario.now)
    with pytest.raises(AssertionViolation, match="nil pointer dereference") as err:
        scheduler.run_once()
    assert known_assertion_for(err.value).id == "F61"


@pytest.mark.parametrize(("cycles", "status"), [(6, "Binding"), (7, "Pending"), (9, "Pending")])
def test_past_the_assertion_the_bind_waits_until_the_timeout_then_the_pod_is_pending_for_good(
        cycles: int, status: str) -> None:
    """late-gpu allocated 598 s before the first session (00:10:00): Filter passes, PreBind writes late-0 into
    reservedFor and waits; the poll at 00:10:05 finds the claim late (00:10:02), so sessions up to 00:10:05
    (6 of them) see the task Binding, the 7th Pending, and Filter refuses the claim from then on."""
    assertion.set_panic_on_error(False)
    scenario = load_scenario_text(_late_claim_scenario("2025-03-01T00:00:02Z", cycles), "s.yaml")
    result = run_scenario(scenario)
    assert result.binds == {} and result.task_status_counts["default/late"] == {status: 1}
    assert not result.violations
    if status == "Pending":
        from schedcheck.reference.scheduler import Scheduler

        scheduler = Scheduler(scenario.objects, scenario.conf, now=scenario.now)
        for _ in range(cycles):
            scheduler.run_once()
            scheduler.advance()
        (claim,) = scheduler.cache.dra.world.resource_claims
        pod = scheduler.cache.world.pods[0]
        assert claim.reserved_for == [pod.uid]  # the failed PreBind is not rolled back
        assert claim.allocation.timestamp == parse_timestamp("2025-03-01T00:00:02Z")
        record = scheduler.cache.log.binds[0]
        assert record.pre_bind == "failed: device binding timeout: claim=late-gpu"

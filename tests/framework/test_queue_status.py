"""updateQueueStatus at session close: each queue's status.allocated, with the DRA device counts of
session_dra_queue_status.go (a shared claim charged once per queue)."""

from __future__ import annotations

from pathlib import Path

import schedcheck
from schedcheck.reference.api.dra_resource import DRAResource
from schedcheck.reference.api.resource_info import Resource
from schedcheck.reference.framework.queue_status import _charge, resource_list
from schedcheck.reference.quantity import Quantity
from schedcheck.reference.scheduler import Scheduler
from schedcheck.scenario.loader import load_scenario

CORPUS = Path(schedcheck.__file__).resolve().parent / "corpus"


class _Task:
    def __init__(self, claim: str) -> None:
        self.dra_resreq = {"gpu.example.com": DRAResource(1, {"memory": Quantity.parse("2Gi")})}
        self.claim_dra_resreq = {claim: {"gpu.example.com": DRAResource(1, {"memory": Quantity.parse("2Gi")})}}
        self.claim_keys = [claim]


def test_a_shared_claim_is_charged_once_per_queue() -> None:
    dra: dict = {}
    refs: dict = {}
    _charge(dra, refs, "q1", _Task("ns1/shared"))
    _charge(dra, refs, "q1", _Task("ns1/shared"))
    _charge(dra, refs, "q2", _Task("ns1/shared"))
    _charge(dra, refs, "q1", _Task("ns1/distinct"))
    assert dra == {"q1": {"gpu.example.com": DRAResource(2, {"memory": Quantity.parse("4Gi")})},
                   "q2": {"gpu.example.com": DRAResource(1, {"memory": Quantity.parse("2Gi")})}}


def test_the_status_lists_resources_and_device_counts() -> None:
    allocated = Resource(milli_cpu=1500, memory=2**30, scalars={"pods": 2, "nvidia.com/gpu": 1000})
    status = resource_list(allocated, {"gpu.example.com": DRAResource(2, {"memory": Quantity.parse("3Gi"),
                                                                           "bw": Quantity.parse("0")}),
                                       "nic.example.com": DRAResource(0)})
    assert status == {"cpu": Quantity.parse("1500m"), "memory": Quantity.parse("1Gi"), "pods": Quantity.parse("2"),
                      "nvidia.com/gpu": Quantity.parse("1"), "deviceclass/gpu.example.com": Quantity.parse("2"),
                      "memory.deviceclass/gpu.example.com": Quantity.parse("3Gi")}


def test_session_close_writes_each_queue_and_its_ancestors() -> None:
    scenario = load_scenario(CORPUS / "dra-capacity-quota-blocks-a-claim.yaml")
    scheduler = Scheduler(scenario.objects, scenario.conf)
    scheduler.run_once()
    queues = {q.name: q.status_allocated for q in scheduler.cache.world.queues}
    # holder-0 (running) and peer-0 (bound this session) share claim held-gpu: one device
    assert queues["team"]["deviceclass/gpu.example.com"] == Quantity.parse("1")
    assert queues["team"]["cpu"] == Quantity.parse("2") and queues["root"] == queues["team"]
    assert "deviceclass/gpu.example.com" not in queues["default"]


def test_session_close_writes_the_capacity_dimensions_the_claims_ask_for() -> None:
    """dra-capacity-quota-consumable-admits-one-claim.yaml: a-0 (bound, 6Gi of memory asked of one
    gpu.example.com device) is team's only allocated task; b-0 stays pending and counts nothing."""
    scenario = load_scenario(CORPUS / "dra-capacity-quota-consumable-admits-one-claim.yaml")
    scheduler = Scheduler(scenario.objects, scenario.conf)
    scheduler.run_once()
    team = next(q.status_allocated for q in scheduler.cache.world.queues if q.name == "team")
    assert team["deviceclass/gpu.example.com"] == Quantity.parse("1")
    assert team["memory.deviceclass/gpu.example.com"] == Quantity.parse("6Gi")
    assert str(team["memory.deviceclass/gpu.example.com"]) == "6Gi"

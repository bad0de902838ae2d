"""DRA in the reference: the CEL subset of device selectors, the structured allocator, the DynamicResources
filter / reserve / prebind through predicates, capacity's device-class quotas, and the claim's life in the
world (allocation at bind, release when its pods are gone)."""

from __future__ import annotations

from pathlib import Path

import pytest

import schedcheck
from schedcheck.reference.api.unschedule_info import StatusCode
from schedcheck.reference.cache.dra_claims import release_claims
from schedcheck.reference.api.unschedule_info import ScoringError
from schedcheck.reference.k8s import Node, NodeSelectorRequirement, NodeSelectorTerm
from schedcheck.reference.k8s_dra import (
    AllocatedDevice,
    CapacityPolicy,
    ClaimAllocation,
    Device,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    DeviceSubRequest,
    ResourceClaim,
    ResourceSlice,
    SemVer,
)
from schedcheck.reference.plugins import capacity_dra
from schedcheck.reference.api.dra_resource import DRAResource
from schedcheck.reference.plugins import dynamic_resources as dra
from schedcheck.reference.plugins.dra_allocator import AllocationError, Allocator, NodeFailure, gather_pools
from schedcheck.reference.quantity import Quantity
from schedcheck.reference.scheduler import Scheduler
from schedcheck.reference.util import dra_cel
from schedcheck.scenario.loader import load_scenario

CORPUS = Path(schedcheck.__file__).resolve().parent / "corpus"
DRIVER = "gpu.example.com"
GPU_CLASS = DeviceClass(DRIVER, [f"device.driver == '{DRIVER}'"])
NODES = {name: Node(name, f"uid-{name}", labels={"zone": zone}) for name, zone in (("n1", "a"), ("n2", "b"))}


def device(name: str, **attributes) -> Device:
    return Device(name, dict(attributes))


def node_slice(node: str, *devices: Device, pool: str | None = None, generation: int = 1, count: int = 1
               ) -> ResourceSlice:
    return ResourceSlice(f"{node}-{pool or node}-{generation}", DRIVER, pool or node, generation, count, node_name=node,
                         devices=list(devices))


def gpu_claim(name: str = "c1", count: int = 1, mode: str = "ExactCount", selectors: list[str] | None = None
              ) -> ResourceClaim:
    return ResourceClaim(name, "ns", f"uid-{name}", [DeviceRequest("gpu", DRIVER, mode, count, selectors or [])])


# -- CEL ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("expression,expected", [
    ("device.driver == 'gpu.example.com'", True),
    ('device.attributes["gpu.example.com"].model == "t4"', True),
    ('device.attributes["gpu.example.com"]["cores"] >= 8 && !device.attributes["gpu.example.com"].spare', True),
    ('"other.io" in device.attributes || device.driver != "x"', True),
    ('"other.io" in device.attributes', False),
    ('device.attributes["gpu.example.com"].model == 4', False),  # equality across types is false in CEL
    ('false && device.attributes["none"].x', False),  # && absorbs the error of its other side
    ('true || device.attributes["none"].x', True),
])
def test_cel_subset_evaluates(expression: str, expected: bool) -> None:
    variable = dra_cel.device_variable(DRIVER, {"model": "t4", "cores": 8, "spare": False}, {})
    assert dra_cel.evaluate(dra_cel.parse(expression), variable) is expected


def test_cel_missing_attribute_is_a_runtime_error_and_missing_domain_an_empty_map() -> None:
    variable = dra_cel.device_variable(DRIVER, {}, {})
    with pytest.raises(dra_cel.CelRuntimeError, match="no such key: healthy"):
        dra_cel.evaluate(dra_cel.parse('device.attributes["some-driver"].healthy'), variable)


@pytest.mark.parametrize("expression", ['cidr("10.0.0.0/8").containsIP(device.attributes["gpu.example.com"].ip)',
                                        'timestamp(device.attributes["gpu.example.com"].built) > timestamp(0)',
                                        '"%s-%d".format([device.driver, 1]) == "gpu.example.com-1"',
                                        "[?optional.of(1)].size() == 1", "[1].sortBy(v, v) == [1]"])
def test_cel_libraries_of_the_environment_are_modelled(expression: str) -> None:
    variable = dra_cel.device_variable(DRIVER, {"ip": "10.1.2.3", "built": "2024-01-01T00:00:00Z"}, {})
    assert dra_cel.matches(dra_cel.parse(expression), variable) is True


@pytest.mark.parametrize("expression", ["google.protobuf.Timestamp{seconds: 1} == timestamp(1)",
                                        "type(google.protobuf.Empty) == type"])
def test_cel_protobuf_messages_are_not_modelled(expression: str) -> None:
    with pytest.raises(dra_cel.NotModelled):
        dra_cel.parse(expression)


@pytest.mark.parametrize("expression", ["1", "device.driver + 'x'", "device.foo", "device.driver > 1", "nope(1)",
                                        "[1, 'a'].size() == 1", "int('x') == 1", "'x'.matches('[')"])
def test_cel_that_kubernetes_refuses_is_a_compile_error(expression: str) -> None:
    with pytest.raises(dra_cel.CompileError):
        dra_cel.parse(expression)


# -- the allocator -----------------------------------------------------------------------------------------


def test_allocator_takes_free_matching_devices_on_the_node_and_pins_them() -> None:
    slices = [node_slice("n1", device("gpu-0", model="a100"), device("gpu-1", model="t4")), node_slice("n2")]
    allocator = Allocator({DRIVER: GPU_CLASS}, slices, in_use=set())
    claim = gpu_claim(selectors=[f'device.attributes["{DRIVER}"].model == "t4"'])
    (result,) = allocator.allocate(NODES["n1"], [claim])
    assert [d.device for d in result.devices] == ["gpu-1"]
    assert result.node_selector[0].match_fields[0].values == ["n1"]
    assert allocator.allocate(NODES["n2"], [claim]) is None


def test_allocator_backtracks_and_skips_devices_in_use() -> None:
    slices = [node_slice("n1", device("gpu-0", model="t4"), device("gpu-1", model="a100"), device("gpu-2"))]
    any_gpu, only_t4 = gpu_claim("any"), gpu_claim("t4", selectors=[f'"model" in device.attributes["{DRIVER}"] && '
                                                                     f'device.attributes["{DRIVER}"].model == "t4"'])
    allocator = Allocator({DRIVER: GPU_CLASS}, slices, in_use={(DRIVER, "n1", "gpu-2")})
    first, second = allocator.allocate(NODES["n1"], [any_gpu, only_t4])
    assert [d.device for d in first.devices] == ["gpu-1"] and [d.device for d in second.devices] == ["gpu-0"]
    busy = Allocator({DRIVER: GPU_CLASS}, slices, in_use={(DRIVER, "n1", "gpu-0")})
    assert busy.allocate(NODES["n1"], [only_t4]) is None


def test_allocator_all_mode_and_incomplete_pools() -> None:
    complete = [node_slice("n1", device("gpu-0"), device("gpu-1"))]
    (result,) = Allocator({DRIVER: GPU_CLASS}, complete, set()).allocate(NODES["n1"], [gpu_claim(mode="All")])
    assert len(result.devices) == 2
    busy = Allocator({DRIVER: GPU_CLASS}, complete, {(DRIVER, "n1", "gpu-0")})
    assert busy.allocate(NODES["n1"], [gpu_claim(mode="All")]) is None
    partial = [node_slice("n1", device("gpu-0"), count=2)]
    assert gather_pools(partial, NODES["n1"])[0].incomplete
    assert Allocator({DRIVER: GPU_CLASS}, partial, set()).allocate(NODES["n1"], [gpu_claim()]) is None
    with pytest.raises(AllocationError, match="asks for all devices, but resource pool gpu.example.com/n1 is currently"):
        Allocator({DRIVER: GPU_CLASS}, partial, set()).allocate(NODES["n1"], [gpu_claim(mode="All")])


def test_allocator_uses_only_the_newest_pool_generation() -> None:
    slices = [node_slice("n1", device("old"), generation=1), node_slice("n1", device("new"), generation=2)]
    (result,) = Allocator({DRIVER: GPU_CLASS}, slices, set()).allocate(NODES["n1"], [gpu_claim()])
    assert [d.device for d in result.devices] == ["new"]


def test_allocator_errors_name_the_selector() -> None:
    broken = DeviceClass(DRIVER, ['device.attributes["some-driver"].healthy'])
    with pytest.raises(AllocationError, match=r"class gpu.example.com: selector #0: CEL runtime error: no such key"):
        Allocator({DRIVER: broken}, [node_slice("n1", device("gpu-0"))], set()).allocate(NODES["n1"], [gpu_claim()])
    odd = DeviceClass(DRIVER, ["google.protobuf.StringValue{value: device.driver} == device.driver"])
    with pytest.raises(AllocationError, match="CEL expression not modelled by schedcheck"):
        Allocator({DRIVER: odd}, [node_slice("n1", device("gpu-0"))], set()).allocate(NODES["n1"], [gpu_claim()])
    refused = DeviceClass(DRIVER, ["device.driver > 1"])  # only a dump of an older cluster could hold one
    with pytest.raises(AllocationError, match=r"selector #0: CEL compile error: found no matching overload"):
        Allocator({DRIVER: refused}, [node_slice("n1", device("gpu-0"))], set()).allocate(NODES["n1"], [gpu_claim()])
    not_bool = DeviceClass(DRIVER, [f'device.attributes["{DRIVER}"].model'])
    with pytest.raises(AllocationError, match="CEL runtime error: CEL result of type string could not be converted"):
        Allocator({DRIVER: not_bool}, [node_slice("n1", device("gpu-0", model="t4"))], set()).allocate(
            NODES["n1"], [gpu_claim()])
    heavy = DeviceClass(DRIVER, ["lists.range(2000).all(x, lists.range(1000).all(y, true))"])  # a stored selector
    with pytest.raises(AllocationError, match="selector #0: CEL runtime error: operation cancelled: actual cost limit "
                                              "exceeded$"):
        Allocator({DRIVER: heavy}, [node_slice("n1", device("gpu-0"))], set()).allocate(NODES["n1"], [gpu_claim()])


def numa_claim(*requests: DeviceRequest, constraints: list[DeviceConstraint]) -> ResourceClaim:
    return ResourceClaim("c1", "ns", "uid-c1", list(requests), constraints)


def test_match_attribute_keeps_the_constrained_devices_on_one_value_and_type() -> None:
    slices = [node_slice("n1", device("gpu-0", numa=0), device("gpu-1", numa=1), device("gpu-2", numa=1),
                         device("gpu-3"))]
    allocator = Allocator({DRIVER: GPU_CLASS}, slices, set())
    pair = DeviceRequest("gpu", DRIVER, count=2)
    (result,) = allocator.allocate(NODES["n1"], [numa_claim(pair, constraints=[
        DeviceConstraint(match_attribute=f"{DRIVER}/numa")])])
    assert [d.device for d in result.devices] == ["gpu-1", "gpu-2"]  # gpu-0 has no partner; backtracked
    # a constraint naming another request leaves this one free; one naming it binds all of its devices
    other = DeviceConstraint(requests=["nic"], match_attribute=f"{DRIVER}/numa")
    (free,) = allocator.allocate(NODES["n1"], [numa_claim(pair, DeviceRequest("nic", DRIVER), constraints=[other])])
    assert [d.device for d in free.devices] == ["gpu-0", "gpu-1", "gpu-2"]
    # an attribute of another domain is not the driver's unqualified one; a device without it never matches
    assert allocator.allocate(NODES["n1"], [numa_claim(pair, constraints=[
        DeviceConstraint(match_attribute="other.io/numa")])]) is None
    # a string and a version with the same text do not match
    mixed = [node_slice("n1", device("a", v="1.0.0"), device("b", v=SemVer("1.0.0")))]
    assert Allocator({DRIVER: GPU_CLASS}, mixed, set()).allocate(NODES["n1"], [numa_claim(pair, constraints=[
        DeviceConstraint(match_attribute=f"{DRIVER}/v")])]) is None


def test_distinct_attribute_compares_requests_not_the_devices_of_one_request() -> None:
    slices = [node_slice("n1", device("nic-0", root="a"), device("nic-1", root="a"), device("nic-2", root="b"),
                         device("nic-3", root="a"))]
    allocator = Allocator({DRIVER: GPU_CLASS}, slices, set())
    distinct = [DeviceConstraint(distinct_attribute=f"{DRIVER}/root")]
    (result,) = allocator.allocate(NODES["n1"], [numa_claim(DeviceRequest("a", DRIVER), DeviceRequest("b", DRIVER),
                                                            constraints=distinct)])
    assert [d.device for d in result.devices] == ["nic-0", "nic-2"]
    # upstream keeps one value per request, the last added: a, a is refused, but a, b, a passes
    (quirk,) = allocator.allocate(NODES["n1"], [numa_claim(DeviceRequest("a", DRIVER, count=3),
                                                           constraints=distinct)])
    assert [d.device for d in quirk.devices] == ["nic-0", "nic-2", "nic-3"]


def test_all_devices_that_break_a_constraint_are_an_error() -> None:
    slices = [node_slice("n1", device("nic-0", root="a"), device("nic-1", root="b"))]
    with pytest.raises(AllocationError, match="request a: cannot add device gpu.example.com/n1/nic-1 because a claim "
                                              "constraint would not be satisfied"):
        Allocator({DRIVER: GPU_CLASS}, slices, set()).allocate(NODES["n1"], [numa_claim(
            DeviceRequest("a", DRIVER, "All"), constraints=[DeviceConstraint(match_attribute=f"{DRIVER}/root")])])


def test_first_available_takes_the_first_subrequest_that_fits_and_names_it() -> None:
    slices = [node_slice("n1", device("gpu-0", model="t4"), device("gpu-1", model="a100"))]
    allocator = Allocator({DRIVER: GPU_CLASS}, slices, set())
    model = f'device.attributes["{DRIVER}"].model == '
    request = DeviceRequest("gpu", "", first_available=[
        DeviceSubRequest("two-a100", DRIVER, count=2, selectors=[model + '"a100"']),
        DeviceSubRequest("one-t4", DRIVER, selectors=[model + '"t4"']),
        DeviceSubRequest("any", DRIVER)])
    (result,) = allocator.allocate(NODES["n1"], [numa_claim(request, constraints=[])])
    assert [(d.request, d.device) for d in result.devices] == [("gpu/one-t4", "gpu-0")]
    # a constraint naming a subrequest applies to it only
    both = DeviceRequest("gpu", "", first_available=[DeviceSubRequest("two", DRIVER, count=2)])
    constraint = DeviceConstraint(requests=["gpu/two"], match_attribute=f"{DRIVER}/model")
    assert allocator.allocate(NODES["n1"], [numa_claim(both, constraints=[constraint])]) is None
    # a missing class of a subrequest is named by the subrequest's own name
    missing = DeviceRequest("gpu", "", first_available=[DeviceSubRequest("x", "nope")])
    with pytest.raises(AllocationError, match="request x: could not retrieve device class nope"):
        allocator.allocate(NODES["n1"], [numa_claim(missing, constraints=[])])


def test_the_results_cap_passes_over_a_subrequest_that_would_overflow() -> None:
    slices = [node_slice("n1", *[device(f"gpu-{i}") for i in range(40)])]
    allocator = Allocator({DRIVER: GPU_CLASS}, slices, set())
    listed = DeviceRequest("a", "", first_available=[DeviceSubRequest("big", DRIVER, count=20),
                                                     DeviceSubRequest("small", DRIVER, count=10)])
    (result,) = allocator.allocate(NODES["n1"], [numa_claim(listed, DeviceRequest("b", DRIVER, count=20),
                                                            constraints=[])])
    assert {d.request for d in result.devices} == {"a/small", "b"} and len(result.devices) == 30
    with pytest.raises(AllocationError, match="number of requested devices 33 exceeds the claim limit of 32"):
        allocator.allocate(NODES["n1"], [numa_claim(DeviceRequest("b", DRIVER, count=33), constraints=[])])


def zoned(name: str, **fields) -> ResourceSlice:
    return ResourceSlice(name, DRIVER, name, 1, 1, devices=[device(f"{name}-0")], **fields)


def test_slices_reach_nodes_by_name_selector_all_nodes_or_per_device() -> None:
    zone_b = [NodeSelectorTerm([NodeSelectorRequirement("zone", "In", ["b"])])]
    per_device = ResourceSlice("pd", DRIVER, "pd", 1, 1, per_device_node_selection=True, devices=[
        Device("on-n1", node_name="n1"), Device("in-b", node_selector=zone_b), Device("anywhere", all_nodes=True)])
    slices = [zoned("sel", node_selector=zone_b), zoned("all", all_nodes=True), per_device]
    assert [p.name for p in gather_pools(slices, NODES["n1"])] == ["all", "pd"]
    assert [p.name for p in gather_pools(slices, NODES["n2"])] == ["all", "pd", "sel"]
    allocator = Allocator({DRIVER: GPU_CLASS}, slices, set())
    # n1 reaches on-n1 and anywhere of the per-device slice, and all-0
    (on_n1,) = allocator.allocate(NODES["n1"], [gpu_claim(count=3)])
    assert [d.device for d in on_n1.devices] == ["all-0", "on-n1", "anywhere"]
    assert on_n1.node_selector[0].match_fields[0].values == ["n1"]
    assert allocator.allocate(NODES["n1"], [gpu_claim(count=4)]) is None
    # n2: in-b and sel-0 carry zone b; their selectors merge into one term, an all-nodes device adds nothing
    (on_n2,) = allocator.allocate(NODES["n2"], [gpu_claim(count=4)])
    assert [d.device for d in on_n2.devices] == ["all-0", "in-b", "anywhere", "sel-0"]
    assert on_n2.node_selector == zone_b
    (everywhere,) = allocator.allocate(NODES["n2"], [gpu_claim()])
    assert everywhere.node_selector is None


def test_a_node_selector_upstream_cannot_parse_is_an_error_not_a_miss() -> None:
    bad_field = [NodeSelectorTerm(match_fields=[NodeSelectorRequirement("metadata.uid", "In", ["x"])])]
    with pytest.raises(AllocationError, match="failed to perform node selection for slice sel: failed to parse node "
                                              "selector: term 0: unsupported matchFields requirement metadata.uid"):
        Allocator({DRIVER: GPU_CLASS}, [zoned("sel", node_selector=bad_field)], set()).allocate(NODES["n1"],
                                                                                               [gpu_claim()])
    bad_label = [NodeSelectorTerm([NodeSelectorRequirement("zone", "Gt", ["b"])])]
    per_device = ResourceSlice("pd", DRIVER, "pd", 1, 1, per_device_node_selection=True,
                               devices=[Device("d0", node_selector=bad_label)])
    with pytest.raises(AllocationError, match="node selection for device d0 in slice pd: .*invalid matchExpressions"):
        Allocator({DRIVER: GPU_CLASS}, [per_device], set()).allocate(NODES["n1"], [gpu_claim()])


def test_a_pool_repeating_a_device_name_fails_the_node() -> None:
    slices = [node_slice("n1", device("gpu-0"), pool="p", count=2),
              ResourceSlice("n1-p-b", DRIVER, "p", 1, 2, node_name="n1", devices=[device("gpu-0")])]
    assert gather_pools(slices, NODES["n1"])[0].invalid
    with pytest.raises(NodeFailure, match="invalid resource pools were encountered"):
        Allocator({DRIVER: GPU_CLASS}, slices, set()).allocate(NODES["n1"], [gpu_claim()])


def test_score_prefers_earlier_subrequests_and_fails_on_a_claim_without_a_result() -> None:
    listed = DeviceRequest("gpu", "", first_available=[DeviceSubRequest("a", DRIVER), DeviceSubRequest("b", DRIVER)])
    claim = numa_claim(listed, constraints=[])
    state = dra.DRAState([claim], node_allocations={
        "n1": [ClaimAllocation([AllocatedDevice("gpu/a", DRIVER, "n1", "x")])],
        "n2": [ClaimAllocation([AllocatedDevice("gpu/b", DRIVER, "n2", "x")])]})
    assert (dra.score(state, "n1"), dra.score(state, "n2"), dra.score(state, "n3")) == (8, 7, 0)
    assert dra.scores(state, ["n1", "n2", "n3"]) == {"n1": 100.0, "n2": 87.0, "n3": 0.0}
    allocated = ResourceClaim("done", "ns", "uid-done", [DeviceRequest("gpu", DRIVER)],
                              allocation=ClaimAllocation([AllocatedDevice("gpu", DRIVER, "n1", "y")]))
    mixed = dra.DRAState([allocated, claim], node_allocations=state.node_allocations)
    with pytest.raises(ScoringError, match="number of allocations 1 is smaller than number of claims"):
        dra.score(mixed, "n1")
    assert dra.scores(dra.DRAState([allocated]), ["n1"]) == {}


def gib(n: float) -> Quantity:
    return Quantity.parse(f"{int(n * 1024)}Mi")


def shared_nic(policy: CapacityPolicy | None = None, multi: bool = True) -> ResourceSlice:
    nic = Device("nic-0", capacity={"bw": gib(10)}, capacity_policies={"bw": policy} if policy else {},
                 allow_multiple_allocations=multi)
    return node_slice("n1", nic)


def bw_claim(name: str, amount: float | None) -> ResourceClaim:
    requests = {"bw": gib(amount)} if amount is not None else {}
    return ResourceClaim(name, "ns", f"uid-{name}", [DeviceRequest("nic", DRIVER, capacity_requests=requests)])


def test_a_device_allowing_multiple_allocations_is_shared_up_to_its_capacity() -> None:
    allocator = Allocator({DRIVER: GPU_CLASS}, [shared_nic()], set())
    first, second = allocator.allocate(NODES["n1"], [bw_claim("a", 6), bw_claim("b", 4)])
    assert [(d.device, d.share_id, d.consumed_capacity) for d in first.devices + second.devices] == [
        ("nic-0", "share-1", {"bw": gib(6)}), ("nic-0", "share-2", {"bw": gib(4)})]
    assert allocator.allocate(NODES["n1"], [bw_claim("a", 6), bw_claim("b", 5)]) is None
    # no amount asked: the whole capacity; a capacity the device lacks: skipped
    assert allocator.allocate(NODES["n1"], [bw_claim("a", None), bw_claim("b", 1)]) is None
    odd = ResourceClaim("c", "ns", "uid-c", [DeviceRequest("nic", DRIVER, capacity_requests={"iops": gib(1)})])
    assert allocator.allocate(NODES["n1"], [odd]) is None
    # shares already allocated or in flight count (GatherAllocatedState)
    busy = Allocator({DRIVER: GPU_CLASS}, [shared_nic()], set(), {(DRIVER, "n1", "nic-0"): {"bw": gib(7)}})
    assert busy.allocate(NODES["n1"], [bw_claim("a", 3)]) is not None
    assert busy.allocate(NODES["n1"], [bw_claim("a", 4)]) is None


def test_a_device_without_multiple_allocations_is_taken_whole_but_still_checks_the_amount() -> None:
    allocator = Allocator({DRIVER: GPU_CLASS}, [shared_nic(multi=False)], set())
    (whole,) = allocator.allocate(NODES["n1"], [bw_claim("a", 2)])
    assert (whole.devices[0].share_id, whole.devices[0].consumed_capacity) == ("", {})
    assert allocator.allocate(NODES["n1"], [bw_claim("a", 2), bw_claim("b", 2)]) is None
    assert allocator.allocate(NODES["n1"], [bw_claim("a", 11)]) is None


def test_request_policies_round_up_and_refuse() -> None:
    ranged = CapacityPolicy(default=gib(1), valid_min=gib(2), valid_max=gib(8), valid_step=gib(2))
    allocator = Allocator({DRIVER: GPU_CLASS}, [shared_nic(ranged)], set())
    rounded = allocator.allocate(NODES["n1"], [bw_claim("a", 3), bw_claim("b", 0.5), bw_claim("c", None)])
    assert [r.devices[0].consumed_capacity["bw"] for r in rounded] == [gib(4), gib(2), gib(1)]
    assert allocator.allocate(NODES["n1"], [bw_claim("a", 9)]) is None  # rounds to 10: beyond max
    assert allocator.allocate(NODES["n1"], [bw_claim("a", 4), bw_claim("b", 4), bw_claim("c", 3)]) is None
    values = CapacityPolicy(valid_values=[gib(1), gib(5)])
    listed = Allocator({DRIVER: GPU_CLASS}, [shared_nic(values)], set())
    (five,) = listed.allocate(NODES["n1"], [bw_claim("a", 2)])
    assert five.devices[0].consumed_capacity == {"bw": gib(5)}
    assert listed.allocate(NODES["n1"], [bw_claim("a", 6)]) is None  # above every valid value
    assert listed.allocate(NODES["n1"], [bw_claim("a", None)]) is None  # the whole 10Gi is not a valid value


def test_the_tracker_counts_shares_by_capacity_and_dedicated_devices_whole() -> None:
    from schedcheck.reference.cache.dra_claims import ClaimTracker
    from schedcheck.reference.k8s import ClusterObjects

    world = ClusterObjects()
    held = bw_claim("held", 3)
    held.allocation = ClaimAllocation([AllocatedDevice("nic", DRIVER, "n1", "nic-0", "s1", {"bw": gib(3)}),
                                       AllocatedDevice("nic", DRIVER, "n1", "gpu-0")])
    world.resource_claims.append(held)
    tracker = ClaimTracker(world)
    tracker.pending["ns/other"] = ClaimAllocation([AllocatedDevice("nic", DRIVER, "n1", "nic-0", "s2",
                                                                   {"bw": gib(2)})])
    used, consumed = tracker.allocated_state()
    assert used == {(DRIVER, "n1", "gpu-0")} and consumed == {(DRIVER, "n1", "nic-0"): {"bw": gib(5)}}


# -- the filter, reserve and prebind through a scheduler run --------------------------------------------------


def test_bind_writes_the_allocation_and_the_consumer_to_the_claim() -> None:
    scenario = load_scenario(CORPUS / "dra-claim-allocated-from-a-slice.yaml")
    scheduler = Scheduler(scenario.objects, scenario.conf)
    scheduler.run_once()
    claim = scheduler.cache.dra.claims["default/train-gpu"]
    assert claim.allocation is not None and [d.device for d in claim.allocation.devices] == ["gpu-1"]
    assert claim.allocation.node_selector[0].match_fields[0].values == ["n2"]
    assert claim.reserved_for == ["default-train-0"] and not scheduler.cache.dra.pending
    scheduler.advance()  # the next session sees the claim allocated: the device stays in use
    assert (DRIVER, "n2", "gpu-1") in scheduler.cache.dra.devices_in_use()


@pytest.mark.parametrize("leftover", [True, False])
def test_a_claim_reserved_by_a_placement_never_bound_stays_in_flight_into_the_next_session(leftover) -> None:
    """Findings #57: train-0 is allocated with its claim and train-1 pipelined, the gang is left pipelined and
    nothing is bound; the claim stays in flight in the cache's tracker, so the next session refuses train-0
    on the now empty node. With the leftover dropped (a fresh DRA manager per session) both bind."""
    scenario = load_scenario(CORPUS / "dra-claim-of-an-unbound-placement-stays-in-flight.yaml")
    scheduler = Scheduler(scenario.objects, scenario.conf, now=scenario.now)
    first = scheduler.run_once()
    statuses = {task.name: task.status.name for job in first.session.jobs.values() for task in job.tasks.values()
                if task.name.startswith("train")}
    assert statuses == {"train-0": "Allocated", "train-1": "Pipelined"}
    tracker = scheduler.cache.dra
    assert list(tracker.pending) == ["default/gpu"]
    assert [d.device for d in tracker.pending["default/gpu"].devices] == ["gpu-0"]
    assert tracker.claims["default/gpu"].allocation is None  # never written: no PreBind
    scheduler.advance()
    assert list(tracker.pending) == ["default/gpu"]  # the tracker outlives the session
    if not leftover:
        tracker.pending.clear()
    second = scheduler.run_once()
    bound = {task.name for job in second.session.jobs.values() for task in job.tasks.values()
             if task.status.name == "Binding"}
    assert bound == (set() if leftover else {"train-0", "train-1"})


def test_filter_reasons() -> None:
    ssn_fit = _fit_errors(CORPUS / "dra-shared-claim-already-allocated.yaml", "client-0")
    assert ssn_fit["n1"] == [(StatusCode.UnschedulableAndUnresolvable, "resourceclaim not available on the node")]
    assert "n2" not in ssn_fit
    other = _fit_errors(CORPUS / "dra-shared-claim-already-allocated.yaml", "other-0")
    assert other["n2"] == [(StatusCode.UnschedulableAndUnresolvable, "cannot allocate all claims")]


def _fit_errors(path: Path, pod: str) -> dict[str, list[tuple[StatusCode, str]]]:
    from schedcheck.reference.framework.framework import open_session

    scenario = load_scenario(path)
    scheduler = Scheduler(scenario.objects, scenario.conf)
    ssn = open_session(scheduler.cache, scenario.conf, 0, 0)
    task = next(t for job in ssn.jobs.values() for t in job.tasks.values() if t.name == pod)
    assert ssn.pre_predicate_fn(task) is None
    out = {}
    for node in ssn.node_list:
        err = ssn.predicate_fn(task, node)
        if err is not None:
            out[node.name] = [(s.code, s.reason) for s in err.statuses]
    return out


def test_release_drops_gone_consumers_and_deallocates() -> None:
    from schedcheck.reference.k8s import ClusterObjects

    claim = gpu_claim()
    claim.allocation = ClaimAllocation([AllocatedDevice("gpu", DRIVER, "n1", "gpu-0")])
    claim.reserved_for = ["gone"]
    kept = gpu_claim("c2")
    kept.allocation = ClaimAllocation([AllocatedDevice("gpu", DRIVER, "n1", "gpu-1")])  # never reserved: kept
    world = ClusterObjects(resource_claims=[claim, kept])
    release_claims(world)
    assert world.resource_claims[0].allocation is None and world.resource_claims[0].reserved_for == []
    assert world.resource_claims[1].allocation is not None


# -- capacity's quota helpers -------------------------------------------------------------------------------


def test_capacity_parses_counts_and_capacity_only_classes() -> None:
    parsed = capacity_dra.parse_quota({"deviceclass/gpu": Quantity.parse("2"),
                                       "memory.deviceclass/nic": Quantity.parse("1Gi"), "cpu": Quantity.parse("4"),
                                       "bw.deviceclass/": Quantity.parse("1"), ".deviceclass/x": Quantity.parse("1")})
    assert parsed == {"gpu": DRAResource(2), "nic": DRAResource(0, {"memory": Quantity.parse("1Gi")})}
    assert capacity_dra.new_quota({"cpu": Quantity.parse("1")}, {}, {}) is None


def _gpu(count: int, **capacity: str) -> DRAResource:
    return DRAResource(count, {k: Quantity.parse(v) for k, v in capacity.items()} if capacity else None)


def test_capacity_quota_counts_a_shared_claim_once_and_saturates() -> None:
    quota = capacity_dra.DRAQuota({"gpu": DRAResource(2)})
    refs: dict[str, int] = {}

    class Task:
        dra_resreq = {"gpu": _gpu(1)}
        claim_dra_resreq = {"ns/shared": {"gpu": _gpu(1)}}
        claim_keys = ["ns/shared"]

    capacity_dra.add_task(quota, refs, Task())
    capacity_dra.add_task(quota, refs, Task())
    assert quota.allocated == {"gpu": _gpu(1)} and refs == {"ns/shared": 2}
    assert capacity_dra.incremental(refs, Task()) is None
    capacity_dra.remove_task(quota, refs, Task())
    assert quota.allocated == {"gpu": _gpu(1)}
    capacity_dra.remove_task(quota, refs, Task())
    assert quota.allocated == {"gpu": _gpu(0)} and refs == {}
    quota.inqueue = {"gpu": _gpu(capacity_dra.INT64_MAX)}
    assert not quota.fits({"gpu": _gpu(capacity_dra.INT64_MAX)}, include_inqueue=True)
    assert quota.fits({"gpu": _gpu(2)}, include_inqueue=False)


def test_consumable_dimensions_count_allocated_and_inqueue_and_refuse_an_unnamed_dimension() -> None:
    """checkDRAAllocatable with the dimensions on: upstream's TestDRAAllocatableIgnoresInqueue numbers (count 2,
    memory 16Gi; inqueue 1 and 8Gi; a request of 2 and 16Gi fits without inqueue, not with it)."""
    quota = capacity_dra.DRAQuota(capacity_dra.parse_quota({"deviceclass/gpu": Quantity.parse("2"),
                                                            "memory.deviceclass/gpu": Quantity.parse("16Gi")}))
    capacity_dra.merge(quota.inqueue, {"gpu": _gpu(1, memory="8Gi")})
    request = {"gpu": _gpu(2, memory="16Gi")}
    assert quota.fits(request, include_inqueue=False)
    assert not quota.fits(request, include_inqueue=True)
    assert quota.fits({"gpu": _gpu(0, memory="8Gi")}, include_inqueue=True)
    assert not quota.fits({"gpu": _gpu(0, memory="8Gi", bw="1")}, include_inqueue=False)  # bw: not named
    assert quota.fits({"gpu": _gpu(0, memory="8Gi", bw="1")}, False, consumable=False)  # dimensions off
    count_only = capacity_dra.DRAQuota({"gpu": DRAResource(4)})
    assert not count_only.fits({"gpu": _gpu(1, memory="1")}, include_inqueue=False)  # upstream's rule
    assert count_only.fits({"gpu": _gpu(1, memory="1")}, False, consumable=False)
    assert count_only.fits({"nic": _gpu(1, memory="1")}, include_inqueue=False)  # a class without capability


def test_capacity_dimensions_subtract_to_zero_and_the_delta_may_be_negative() -> None:
    held = {"gpu": _gpu(2, memory="8Gi")}
    capacity_dra._subtract(held, {"gpu": _gpu(1, memory="10Gi")})
    assert held == {"gpu": _gpu(1, memory="0")}
    change = capacity_dra.delta({"gpu": _gpu(1, memory="2Gi")}, {"gpu": _gpu(2, memory="3Gi"), "nic": _gpu(1)})
    assert change == {"gpu": _gpu(-1, memory="-1Gi"), "nic": _gpu(-1)}
    doubled: dict[str, DRAResource] = {}
    capacity_dra.merge(doubled, {"gpu": _gpu(1, memory="3Gi")}, times=2)
    assert doubled == {"gpu": _gpu(2, memory="6Gi")} and str(doubled["gpu"].capacity["memory"]) == "6Gi"


def test_a_template_claim_is_the_one_pod_status_names_and_must_be_the_pods() -> None:
    """dra-claim-from-template.yaml: a0's generated claim is allocated (n1 has no pool); b0 has no status entry
    yet, c0's named claim is another pod's, d0's entry names no claim (skipped); master agrees on the binds."""
    path = CORPUS / "dra-claim-from-template.yaml"
    assert _fit_errors(path, "a0") == {"n1": [(StatusCode.UnschedulableAndUnresolvable, "cannot allocate all claims")]}
    for pod, reason in (("b0", 'pod "default/b0": ResourceClaim not created yet'),
                        ("c0", "ResourceClaim default/c0-gpu-q9w4 was not created for Pod default/c0 (Pod is not owner)")):
        assert _pre_filter_reason(path, pod) == f"plugin DynamicResources pre-predicates failed {reason}"
    assert _fit_errors(path, "d0") == {}


def test_the_cache_leaves_a_pending_template_claim_out_of_the_tasks_dra_requests() -> None:
    from schedcheck.reference.cache.dra import task_dra_info
    from schedcheck.reference.k8s import Pod
    from schedcheck.reference.k8s_dra import PodResourceClaim

    claim = gpu_claim("gen-1")
    pod = Pod(name="p", namespace="ns", uid="u", resource_claims=[PodResourceClaim("gpu", "", "tpl")])
    assert task_dra_info(pod, {claim.key: claim}) == (None, {}, [])  # no status entry yet: pending
    pod.resource_claim_statuses = {"gpu": "gen-1"}
    assert task_dra_info(pod, {claim.key: claim}) == ({DRIVER: DRAResource(1)}, {"ns/gen-1": {DRIVER: DRAResource(1)}},
                                                      ["ns/gen-1"])
    assert task_dra_info(pod, {}) == (None, {}, [])  # named but not synced yet: pending, not a missing claim


def _capacity_claim(name: str, *requests: tuple[int, dict[str, str]]) -> ResourceClaim:
    return ResourceClaim(name, "ns", f"uid-{name}", [
        DeviceRequest(f"r{i}", DRIVER, "ExactCount", count, [],
                      capacity_requests={k: Quantity.parse(v) for k, v in asked.items()})
        for i, (count, asked) in enumerate(requests)])


def test_the_cache_adds_capacity_requests_times_the_count_per_class_and_claim() -> None:
    """buildTaskDRAInfo with DRAConsumableCapacity: a request's capacity.requests times its count, summed per
    DeviceClass and dimension, for the claim and for the task."""
    from schedcheck.reference.cache.dra import task_dra_info
    from schedcheck.reference.k8s import Pod
    from schedcheck.reference.k8s_dra import PodResourceClaim

    a = _capacity_claim("a", (2, {"memory": "3Gi"}), (1, {"memory": "1Gi", "bw": "10"}))
    b = _capacity_claim("b", (1, {"memory": "500Mi"}))
    pod = Pod(name="p", namespace="ns", uid="u",
              resource_claims=[PodResourceClaim("x", "a", ""), PodResourceClaim("y", "b", "")])
    total, per_claim, keys = task_dra_info(pod, {a.key: a, b.key: b})
    assert total == {DRIVER: _gpu(4, memory="7668Mi", bw="10")}
    assert str(total[DRIVER].capacity["memory"]) == "7668Mi"
    assert per_claim == {"ns/a": {DRIVER: _gpu(3, memory="7Gi", bw="10")}, "ns/b": {DRIVER: _gpu(1, memory="500Mi")}}
    assert keys == ["ns/a", "ns/b"]


def test_capacity_after_a_capacity_free_request_of_the_class_is_upstreams_nil_map_panic() -> None:
    """addDRAResource makes a class's capacity map only when the request making the entry asks for capacity; a
    later request of the class that does writes into a nil map: upstream's cache panics (docs/findings.md)."""
    from schedcheck.reference.cache.dra import task_dra_info
    from schedcheck.reference.k8s import Pod
    from schedcheck.reference.k8s_dra import PodResourceClaim
    from schedcheck.reference.util.assertion import AssertionViolation

    plain, asking = gpu_claim("plain"), _capacity_claim("asking", (1, {"memory": "1Gi"}))
    claims = {plain.key: plain, asking.key: asking}
    first_plain = Pod(name="p", namespace="ns", uid="u",
                      resource_claims=[PodResourceClaim("x", "plain", ""), PodResourceClaim("y", "asking", "")])
    with pytest.raises(AssertionViolation, match="assignment to entry in nil map"):
        task_dra_info(first_plain, claims)
    first_asking = Pod(name="p", namespace="ns", uid="u",
                       resource_claims=[PodResourceClaim("y", "asking", ""), PodResourceClaim("x", "plain", "")])
    total, _, _ = task_dra_info(first_asking, claims)
    assert total == {DRIVER: _gpu(2, memory="1Gi")}
    within = _capacity_claim("within", (1, {}), (1, {"memory": "1Gi"}))
    with pytest.raises(AssertionViolation, match="ResourceClaim ns/within request r1"):
        task_dra_info(Pod(name="p", namespace="ns", uid="u", resource_claims=[PodResourceClaim("x", "within", "")]),
                      {within.key: within})


def _pre_filter_reason(path: Path, pod: str) -> str:
    from schedcheck.reference.framework.framework import open_session

    scenario = load_scenario(path)
    scheduler = Scheduler(scenario.objects, scenario.conf)
    ssn = open_session(scheduler.cache, scenario.conf, 0, 0)
    task = next(t for job in ssn.jobs.values() for t in job.tasks.values() if t.name == pod)
    err = ssn.pre_predicate_fn(task)
    assert err is not None
    return err.statuses[0].reason if hasattr(err, "statuses") else str(err)

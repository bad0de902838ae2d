"""Partitionable devices in the structured allocator (k8s 1.36 incubating): counter sets in slices of their
own, devices consuming from them, and upstream's bookkeeping reproduced (its leaks included)."""

from __future__ import annotations

import pytest

from schedcheck.reference.k8s import Node
from schedcheck.reference.k8s_dra import (
    AllocatedDevice,
    ClaimAllocation,
    CounterConsumption,
    CounterSet,
    Device,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    DeviceTaint,
    ResourceClaim,
    ResourceSlice,
)
from schedcheck.reference.cache.dra_claims import ClaimTracker
from schedcheck.reference.k8s import ClusterObjects
from schedcheck.reference.plugins.dra_allocator import Allocator, NodeFailure, gather_pools
from schedcheck.reference.quantity import Quantity

DRIVER = "gpu.example.com"
CLASSES = {DRIVER: DeviceClass(DRIVER, [f"device.driver == '{DRIVER}'"])}
N1, N2 = Node("n1", "uid-n1"), Node("n2", "uid-n2")


def gi(n: int) -> Quantity:
    return Quantity.parse(f"{n}Gi")


def part(name: str, memory: int, counter_set: str = "gpu-0", **attributes) -> Device:
    return Device(name, dict(attributes), consumes_counters=[CounterConsumption(counter_set, {"memory": gi(memory)})])


def counters(node: str = "n1", count: int = 2, pool: str = "n1", driver: str = DRIVER, **sets: int) -> ResourceSlice:
    return ResourceSlice(f"{pool}-counters", driver, pool, 1, count, node_name=node,
                         shared_counters=[CounterSet(name, {"memory": gi(v)}) for name, v in (sets or {"gpu-0": 40}).items()])


def devices(*parts: Device, node: str = "n1", count: int = 2, pool: str = "n1", driver: str = DRIVER,
            name: str = "") -> ResourceSlice:
    return ResourceSlice(name or f"{pool}-{node}-gpus", driver, pool, 1, count, node_name=node, devices=list(parts))


def claim(name: str, count: int = 1, constraints: list[DeviceConstraint] | None = None) -> ResourceClaim:
    return ResourceClaim(name, "ns", f"uid-{name}", [DeviceRequest("gpu", DRIVER, count=count)], constraints or [])


def chosen(results) -> list[list[str]]:
    return [[d.device for d in r.devices] for r in results]


def test_partitions_are_allocated_while_the_counters_last_across_claims_and_within_one() -> None:
    slices = [counters(), devices(part("a", 20), part("b", 20), part("c", 10))]
    allocator = Allocator(CLASSES, slices, set())
    assert chosen(allocator.allocate(N1, [claim("x"), claim("y")])) == [["a"], ["b"]]
    assert allocator.allocate(N1, [claim("x"), claim("y"), claim("z")]) is None  # 50Gi of 40Gi
    assert chosen(allocator.allocate(N1, [claim("x", 2)])) == [["a", "b"]]
    assert allocator.allocate(N1, [claim("x", 3)]) is None
    # without counter sets to exceed (a pool of 60Gi) all three go
    roomy = Allocator(CLASSES, [counters(**{"gpu-0": 60}), slices[1]], set())
    assert chosen(roomy.allocate(N1, [claim("x", 3)])) == [["a", "b", "c"]]


def test_allocated_and_in_flight_devices_consume_even_on_slices_not_reaching_the_node() -> None:
    # one pool over two nodes, its counter set published with n2's name: it still belongs to n1's pool
    slices = [counters(node="n2", count=3, pool="p"), devices(part("a", 20), part("b", 20), pool="p", count=3),
              devices(part("c", 30), node="n2", pool="p", count=3)]
    (pool,) = gather_pools(slices, N1)
    assert [s.name for s in pool.slices] == ["p-counters", "p-n1-gpus"] and [s.name for s in pool.other_slices] == [
        "p-n2-gpus"]
    assert chosen(Allocator(CLASSES, slices, set()).allocate(N1, [claim("x", 2)])) == [["a", "b"]]
    busy = Allocator(CLASSES, slices, {(DRIVER, "p", "c")})  # c (on n2) holds 30Gi
    assert busy.allocate(N1, [claim("x", 2)]) is None
    assert busy.allocate(N1, [claim("x")]) is None  # 30Gi + 20Gi
    # the tracker hands the allocator claims' allocations and those in flight alike
    world = ClusterObjects(resource_slices=slices)
    world.resource_claims = [ResourceClaim("held", "ns", "uid-held", allocation=ClaimAllocation(
        [AllocatedDevice("gpu", DRIVER, "p", "c")]))]
    tracker = ClaimTracker(world)
    assert Allocator(CLASSES, slices, *tracker.allocated_state()).allocate(N1, [claim("x", 2)]) is None
    world.resource_claims = []
    tracker.refresh()
    tracker.pending["ns/other"] = ClaimAllocation([AllocatedDevice("gpu", DRIVER, "p", "a")])
    assert chosen(Allocator(CLASSES, slices, *tracker.allocated_state()).allocate(N1, [claim("x")])) == [["b"]]


@pytest.mark.parametrize("slices", [
    [counters(), devices(part("a", 20, counter_set="gpu-1"))],  # no such counter set
    [counters(), devices(Device("a", consumes_counters=[CounterConsumption("gpu-0", {"sm": Quantity.parse("1")})]))],
    [counters(count=3), ResourceSlice("n1-more", DRIVER, "n1", 1, 3, node_name="n1",
                                      shared_counters=[CounterSet("gpu-0", {"memory": gi(1)})]),
     devices(part("a", 20), count=3)],  # two counter sets named gpu-0 in the pool
])
def test_a_pool_whose_counters_do_not_add_up_is_invalid(slices: list[ResourceSlice]) -> None:
    (pool,) = gather_pools(slices, N1)
    assert pool.invalid
    with pytest.raises(NodeFailure, match="invalid resource pools were encountered"):
        Allocator(CLASSES, slices, set()).allocate(N1, [claim("x")])


def test_every_counter_of_the_pool_is_checked_not_only_those_the_device_consumes() -> None:
    # gpu-1 is overdrawn by what is allocated already, so no device of the pool can be allocated, even one of gpu-0
    slices = [counters(**{"gpu-0": 40, "gpu-1": 10}), devices(part("a", 20), part("big", 20, counter_set="gpu-1"))]
    assert Allocator(CLASSES, slices, {(DRIVER, "n1", "big")}).allocate(N1, [claim("x")]) is None
    assert chosen(Allocator(CLASSES, slices, set()).allocate(N1, [claim("x")])) == [["a"]]


def test_a_taint_that_refuses_a_device_leaves_its_counters_taken_as_upstream_does() -> None:
    tainted = part("t", 20)
    tainted.taints = [DeviceTaint("broken", effect="NoSchedule")]
    slices = [counters(), devices(tainted, part("a", 20), part("b", 20))]
    # a + b fit in 40Gi, but t's 20Gi stay counted once the taint turned it away
    assert Allocator(CLASSES, slices, set()).allocate(N1, [claim("x", 2)]) is None
    assert chosen(Allocator(CLASSES, slices[:1] + [devices(part("a", 20), part("b", 20))], set()).allocate(
        N1, [claim("x", 2)])) == [["a", "b"]]


def test_a_constraint_that_refuses_a_device_leaves_its_counters_taken_as_upstream_does() -> None:
    attribute = f"{DRIVER}/parent"
    slices = [counters(**{"gpu-0": 40, "gpu-1": 40}),
              devices(part("a", 20, parent="gpu-0"), part("b", 20, counter_set="gpu-1", parent="gpu-1"),
                      part("c", 20, parent="gpu-0"))]
    pair = claim("x", 2, [DeviceConstraint(match_attribute=attribute)])
    alone = claim("y", 1)
    # pair takes a (gpu-0), is refused b by its constraint after b's 20Gi of gpu-1 were counted, and takes c;
    # alone then finds gpu-1 "full": b's leaked 20Gi plus its own pass 30Gi
    leaky = [counters(**{"gpu-0": 40, "gpu-1": 30}), slices[1]]
    assert Allocator(CLASSES, leaky, set()).allocate(N1, [pair, alone]) is None
    roomy = [counters(**{"gpu-0": 40, "gpu-1": 40}), slices[1]]
    assert chosen(Allocator(CLASSES, roomy, set()).allocate(N1, [pair, alone])) == [["a", "c"], ["b"]]


def test_counter_caches_are_keyed_by_pool_name_whatever_the_driver() -> None:
    other = "nic.example.com"
    classes = {**CLASSES, other: DeviceClass(other, [f"device.driver == '{other}'"])}
    slices = [counters(**{"gpu-0": 40}), devices(part("a", 30)),
              counters(driver=other, **{"gpu-0": 100}), devices(part("n", 30), driver=other)]
    x = claim("x")
    y = ResourceClaim("y", "ns", "uid-y", [DeviceRequest("nic", other)])
    # each pool alone has room for its device; together they share one consumption table (60Gi of 40Gi)
    assert Allocator(classes, slices, set()).allocate(N1, [x, y]) is None
    assert chosen(Allocator(classes, slices, set()).allocate(N1, [y])) == [["n"]]


def test_a_shared_device_counts_its_counters_once_while_a_share_of_it_consumes_capacity() -> None:
    nic = Device("s", capacity={"bw": gi(10)}, allow_multiple_allocations=True,
                 consumes_counters=[CounterConsumption("gpu-0", {"memory": gi(30)})])
    slices = [counters(), devices(nic, part("a", 20))]

    def bw(name: str) -> ResourceClaim:
        return ResourceClaim(name, "ns", f"uid-{name}", [DeviceRequest("gpu", DRIVER, capacity_requests={"bw": gi(2)})])

    first, second = Allocator(CLASSES, slices, set()).allocate(N1, [bw("x"), bw("y")])
    assert [d.share_id for d in first.devices + second.devices] == ["share-1", "share-2"]  # 30Gi, counted once
    # a share allocated already (with consumed capacity) skips the counter check: a plain device then still fits
    # only if s's counters are not counted, as upstream (the allocated state counts devices allocated whole)
    shared = Allocator(CLASSES, slices, set(), {(DRIVER, "n1", "s"): {"bw": gi(2)}})
    assert chosen(shared.allocate(N1, [bw("x"), claim("z")])) == [["s"], ["a"]]
    assert Allocator(CLASSES, slices, set()).allocate(N1, [bw("x"), claim("z")]) is None  # 30Gi + 20Gi in one search

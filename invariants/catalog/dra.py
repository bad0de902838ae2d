"""Dynamic resource allocation: the devices the scheduler allocates to ResourceClaims (the claim tracker in
the cache, reference_impl/cache/dra_claims.py). Every rule judges the allocations in flight (made by the
DynamicResources Reserve of this run and not yet written by PreBind), so a scenario's own claim statuses
are never blamed alone."""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.placement import tolerates
from schedcheck.invariants.registry import ACTION, CLOSE, OPERATION, invariant
from schedcheck.invariants.violation import Violation
from schedcheck.reference.k8s_dra import AllocatedDevice, ClaimAllocation, Device, ResourceClaim
from schedcheck.reference.quantity import Quantity

DeviceID = tuple[str, str, str]


def dra_in_play(ssn: Any) -> bool:
    """the cluster has ResourceClaims, ResourceSlices or DeviceClasses, or an allocation is in flight (without
    them no device can be allocated, so the DRA rules have nothing to judge)"""
    tracker = ssn.cache.dra
    world = tracker.world
    return bool(world.resource_claims or world.resource_slices or world.device_classes or tracker.pending)


def _devices(ctx: CheckContext) -> dict[DeviceID, Device]:
    return {(s.driver, s.pool, d.name): d for s in ctx.ssn.cache.dra.slices for d in s.devices}


def _holders(ctx: CheckContext) -> dict[DeviceID, list[tuple[str, AllocatedDevice, bool]]]:
    """device -> (claim key, result, in flight) for every allocation in the claims' status or in flight; a result
    with admin access holds nothing (it takes no device from others), except in its own claim (_twice)."""
    tracker = ctx.ssn.cache.dra
    allocations: list[tuple[str, ClaimAllocation, bool]] = [
        (claim.key, claim.allocation, False) for claim in tracker.world.resource_claims
        if claim.allocation is not None]
    allocations += [(key, allocation, True) for key, allocation in tracker.pending.items()]
    out: dict[DeviceID, list[tuple[str, AllocatedDevice, bool]]] = {}
    for key, allocation, in_flight in allocations:
        for result in allocation.devices:
            if not result.admin_access:
                out.setdefault(result.device_id, []).append((key, result, in_flight))
    return out


def _twice(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """(claim key, device) for an allocation in flight naming a device twice, admin access or not, other than as
    shares (a device a claim's search chose is passed over by its other requests)."""
    for key, allocation in ctx.ssn.cache.dra.pending.items():
        seen: set[DeviceID] = set()
        for result in allocation.devices:
            if result.share_id:
                continue
            if result.device_id in seen:
                yield key, "/".join(result.device_id)
            seen.add(result.device_id)


@invariant("dra.devices-not-oversubscribed", "no device is allocated to two claims (or twice) unless every holder has "
           "a share of it (consumable capacity, allowMultipleAllocations) or admin access (not twice in one claim), "
           "and its shares consume no more than each of its capacities; judged where an allocation in flight is "
           "among the holders", "node",
           "k8s v1.36.1 dynamicresources.go (GatherAllocatedState); k8s.io/dynamic-resource-allocation "
           "structured/internal/incubating (deviceInUse, CmpRequestOverCapacity)",
           (OPERATION, ACTION, CLOSE), state_only=True, applies_when=dra_in_play)
def dra_devices_not_oversubscribed(ctx: CheckContext) -> Iterator[Violation]:
    if not ctx.ssn.cache.dra.pending:
        return  # nothing in flight: nothing of this run's to judge
    for key, name in _twice(ctx):
        yield Violation("", f"claim {key} is allocated device {name} twice", [f"device {name}", f"claim {key}"],
                        "once per claim", "twice")
    devices = None
    for device_id, holders in _holders(ctx).items():
        if not any(in_flight for _, _, in_flight in holders):
            continue
        name = "/".join(device_id)
        claims = sorted({key for key, _, _ in holders})
        whole = [key for key, result, _ in holders if not result.share_id]
        if len(holders) > 1 and whole:
            yield Violation("", f"device {name} is held by {len(holders)} allocations ({', '.join(claims)}), "
                                f"{len(whole)} of them whole", [f"device {name}", *(f"claim {k}" for k in claims)],
                            "one holder, or shares only", f"{len(holders)} holders")
            continue
        if devices is None:
            devices = _devices(ctx)
        device = devices.get(device_id)
        if device is None:
            continue
        for dimension, value in device.capacity.items():
            total = sum((r.consumed_capacity[dimension].as_fraction() for _, r, _ in holders
                         if dimension in r.consumed_capacity), Fraction(0))
            if total > value.as_fraction():
                yield Violation("", f"device {name}: its shares ({', '.join(claims)}) consume {float(total):g} of "
                                    f"{dimension}, beyond its capacity {value}",
                                [f"device {name}", *(f"claim {k}" for k in claims)], str(value), f"{float(total):g}")


def _match_violation(claim: ResourceClaim, allocation: ClaimAllocation, devices: dict[DeviceID, Device]
                     ) -> Iterator[tuple[str, list[str]]]:
    """(attribute, the distinct values found) for each matchAttribute constraint the devices break."""
    from schedcheck.reference.plugins.dra_allocator import lookup_attribute

    for constraint in claim.constraints:
        if not constraint.match_attribute:
            continue
        values = set()
        for result in allocation.devices:
            base = result.request.partition("/")[0]
            if constraint.requests and base not in constraint.requests and result.request not in constraint.requests:
                continue
            device = devices.get(result.device_id)
            if device is None:
                continue
            value = lookup_attribute(device, result.driver, constraint.match_attribute)
            values.add((type(value).__name__, repr(value) if value is not None else "(none)"))
        if len(values) > 1 or ("NoneType", "(none)") in values:
            yield constraint.match_attribute, sorted(v for _, v in values)


def _in_flight(ctx: CheckContext) -> Iterator[tuple[str, ClaimAllocation, ResourceClaim]]:
    """(claim key, allocation, claim) of the allocations in flight (Reserve made them, PreBind has not written them)."""
    tracker = ctx.ssn.cache.dra
    for key, allocation in tracker.pending.items():
        claim = tracker.claims.get(key)
        if claim is not None:
            yield key, allocation, claim


@invariant("dra.match-attribute-held", "every claim allocation in flight gives the devices of the requests a "
           "matchAttribute constraint names one type and one value of that attribute (and never a device without "
           "it)", "node",
           "k8s.io/dynamic-resource-allocation v0.36.1 structured/internal/incubating (matchAttributeConstraint; "
           "allocateDevice adds every device to its claim's constraints)",
           (OPERATION, ACTION, CLOSE), state_only=True, applies_when=dra_in_play)
def dra_match_attribute_held(ctx: CheckContext) -> Iterator[Violation]:
    devices = None
    for key, allocation, claim in _in_flight(ctx):
        devices = devices if devices is not None else _devices(ctx)
        for attribute, values in _match_violation(claim, allocation, devices):
            yield Violation("", f"claim {key}: the devices of its matchAttribute {attribute} constraint carry "
                                f"{', '.join(values)}", [f"claim {key}"], f"one value of {attribute}",
                            ", ".join(values))


def _request_tolerations(claim: ResourceClaim, request_name: str) -> list | None:
    """The tolerations of the request (or `<request>/<subrequest>`) a result names; None when not found."""
    base, _, sub = request_name.partition("/")
    for request in claim.requests:
        if request.name != base:
            continue
        if not sub:
            return request.tolerations
        return next((s.tolerations for s in request.first_available if s.name == sub), None)
    return None


@invariant("dra.taints-tolerated", "no device tainted NoSchedule or NoExecute is allocated to a request that does "
           "not tolerate every such taint of it (DeviceTaints); judged on the allocations in flight", "node",
           "k8s.io/dynamic-resource-allocation v0.36.1 structured/internal/incubating (taintPreventsAllocation), "
           "resourceclaim/devicetoleration.go (ToleratesTaint)",
           (OPERATION, ACTION, CLOSE), state_only=True, applies_when=dra_in_play)
def dra_taints_tolerated(ctx: CheckContext) -> Iterator[Violation]:
    devices = None
    for key, allocation, claim in _in_flight(ctx):
        for result in allocation.devices:
            devices = devices if devices is not None else _devices(ctx)
            device = devices.get(result.device_id)
            tolerations = _request_tolerations(claim, result.request)
            if device is None or tolerations is None:
                continue
            for taint in device.taints:
                # the toleration rule restated for node taints (placement.py): device taints match the same way
                if taint.effect in ("NoSchedule", "NoExecute") and not any(tolerates(t, taint) for t in tolerations):
                    name = "/".join(result.device_id)
                    yield Violation("", f"claim {key}: request {result.request} got device {name}, tainted "
                                        f"{taint.key}={taint.value}:{taint.effect}, without tolerating it",
                                    [f"claim {key}", f"device {name}"], "no untolerated NoSchedule/NoExecute taint",
                                    f"{taint.key}={taint.value}:{taint.effect}")


def _counter_pools(slices: list) -> dict[tuple[str, str], tuple[dict[str, dict], dict[str, Device]]]:
    """(driver, pool) -> (counter set -> counters, device name -> device), at each pool's newest generation."""
    newest: dict[tuple[str, str], int] = {}
    for s in slices:
        newest[(s.driver, s.pool)] = max(newest.get((s.driver, s.pool), s.pool_generation), s.pool_generation)
    out: dict[tuple[str, str], tuple[dict[str, dict], dict[str, Device]]] = {}
    for s in slices:
        if s.pool_generation != newest[(s.driver, s.pool)]:
            continue
        sets, devices = out.setdefault((s.driver, s.pool), ({}, {}))
        for counter_set in s.shared_counters:
            sets.setdefault(counter_set.name, counter_set.counters)
        for device in s.devices:
            devices.setdefault(device.name, device)
    return out


@invariant("dra.counters-not-exceeded", "no counter of a pool's counter sets (partitionable devices' "
           "sharedCounters) is consumed beyond its value by the pool's devices allocated whole, in claims' "
           "allocations or in flight; judged on the counter sets an allocation in flight consumes from", "node",
           "k8s.io/dynamic-resource-allocation v0.36.1 structured/internal/incubating (checkAvailableCounters, "
           "buildPool); k8s v1.36.1 dynamicresources.go (GatherAllocatedState)",
           (OPERATION, ACTION, CLOSE), state_only=True, applies_when=dra_in_play)
def dra_counters_not_exceeded(ctx: CheckContext) -> Iterator[Violation]:
    tracker = ctx.ssn.cache.dra
    if not tracker.pending or not any(s.shared_counters for s in tracker.slices):
        return
    holders = _holders(ctx)
    for (driver, pool), (sets, devices) in sorted(_counter_pools(tracker.slices).items()):
        judged: set[str] = set()
        used: dict[tuple[str, str], Fraction] = {}
        users: dict[str, set[str]] = {}
        for name, device in devices.items():
            whole = [(key, flight) for key, result, flight in holders.get((driver, pool, name), [])
                     if not result.share_id]
            if not whole or not device.consumes_counters:
                continue
            for consumption in device.consumes_counters:
                if any(flight for _, flight in whole):
                    judged.add(consumption.counter_set)
                users.setdefault(consumption.counter_set, set()).update(key for key, _ in whole)
                for counter, amount in consumption.counters.items():
                    slot = (consumption.counter_set, counter)
                    used[slot] = used.get(slot, Fraction(0)) + amount.as_fraction()
        for set_name in sorted(judged):
            for counter, value in sets.get(set_name, {}).items():
                total = used.get((set_name, counter), Fraction(0))
                if total > value.as_fraction():
                    where, amount = f"{driver}/{pool}/{set_name}", Quantity(total, value.format)
                    claims = sorted(users.get(set_name, ()))
                    yield Violation("", f"counter set {where}: its devices allocated whole ({', '.join(claims)}) "
                                        f"consume {amount} of {counter}, beyond its {value}",
                                    [f"counter set {where}", *(f"claim {k}" for k in claims)], str(value), str(amount))


def _request_admin_access(claim: ResourceClaim, request_name: str) -> bool | None:
    """Whether the request a result names asks for admin access (a subrequest, `<request>/<subrequest>`, never
    does: resource.k8s.io/v1 gives it no adminAccess); None when not found."""
    base, _, sub = request_name.partition("/")
    for request in claim.requests:
        if request.name == base:
            return False if sub else request.admin_access
    return None


@invariant("dra.admin-access-as-requested", "every device result of a claim allocation in flight carries adminAccess "
           "exactly when its request asks for admin access (a subrequest never does)", "node",
           "k8s.io/dynamic-resource-allocation v0.36.1 structured/internal/incubating (allocateDevice sets the "
           "result's adminAccess from the request)",
           (OPERATION, ACTION, CLOSE), state_only=True, applies_when=dra_in_play)
def dra_admin_access_as_requested(ctx: CheckContext) -> Iterator[Violation]:
    for key, allocation, claim in _in_flight(ctx):
        for result in allocation.devices:
            asked = _request_admin_access(claim, result.request)
            if asked is not None and asked != result.admin_access:
                name = "/".join(result.device_id)
                yield Violation("", f"claim {key}: request {result.request} got device {name} with adminAccess "
                                    f"{str(result.admin_access).lower()}, asking {str(asked).lower()}",
                                [f"claim {key}", f"device {name}"], f"adminAccess {str(asked).lower()}",
                                f"adminAccess {str(result.admin_access).lower()}")


def _bound_this_session(ctx: CheckContext) -> list[str]:
    """The pods whose bind reached the binder in this session (PreBind passed, nothing waiting)."""
    start = ctx.session_state.get("binds_at_open", 0)
    return [record.task for record in ctx.ssn.cache.log.binds[start:] if not record.pre_bind]


def _unmet(claim: ResourceClaim) -> Iterator[tuple[str, str]]:
    """(device, what is wrong) for each result of the claim's allocation whose binding conditions are not all True
    in the claim's status.devices, or whose binding failure condition is True."""
    if claim.allocation is None:
        return
    for result in claim.allocation.devices:
        if not result.binding_conditions:
            continue
        name = "/".join(result.device_id)
        status = claim.device_status(result)
        failed = [kind for kind in result.binding_failure_conditions if status is not None and status.is_true(kind)]
        pending = [kind for kind in result.binding_conditions if status is None or not status.is_true(kind)]
        if failed:
            yield name, f"failure condition {', '.join(failed)} True"
        elif pending:
            yield name, f"binding condition {', '.join(pending)} not True"


@invariant("dra.bound-with-binding-conditions-met", "no pod reaches the binder while a claim of it holds a device "
           "whose binding conditions (DRADeviceBindingConditions) are not all True in the claim's status.devices, "
           "or whose binding failure condition is True; judged on the binds of the session, with the predicates "
           "plugin's DRA on", "node",
           "k8s v1.36.1 dynamicresources.go PreBind (isPodReadyForBinding: every binding condition True, no "
           "failure condition True, else wait, fail or time out); Volcano cache.go executePreBinds (a failed "
           "PreBind never reaches the binder)",
           (CLOSE,), requires=("predicates",), applies_when=dra_in_play)
def dra_bound_with_binding_conditions_met(ctx: CheckContext) -> Iterator[Violation]:
    from schedcheck.reference.plugins import dynamic_resources

    plugin = ctx.ssn.plugins.get("predicates")
    if plugin is None or not getattr(plugin, "dra_enable", False):
        return
    bound = _bound_this_session(ctx)
    if not bound:
        return
    tracker = ctx.ssn.cache.dra
    pods = {t.key: t.pod for job in ctx.ssn.jobs.values() for t in job.tasks.values()}
    for key in bound:
        pod = pods.get(key)
        claims = dynamic_resources.pod_claims(tracker, pod) if pod is not None and pod.resource_claims else []
        for claim in claims if isinstance(claims, list) else []:
            for device, wrong in _unmet(claim):
                yield Violation("", f"pod {key} was bound with claim {claim.key}, whose device {device} has its "
                                    f"{wrong}", [f"task {key}", f"claim {claim.key}", f"device {device}"],
                                "every binding condition True, no failure condition True", wrong)


def _pins_one_node(allocation: ClaimAllocation) -> bool:
    selector = allocation.node_selector or []
    return len(selector) == 1 and not selector[0].match_expressions and len(selector[0].match_fields) == 1 \
        and selector[0].match_fields[0].key == "metadata.name" and selector[0].match_fields[0].operator == "In" \
        and len(selector[0].match_fields[0].values) == 1


@invariant("dra.binding-parameters-carried", "every device result of a claim allocation in flight carries its "
           "device's bindingConditions and bindingFailureConditions, and an allocation holding a device with "
           "bindsToNode is pinned to one node (metadata.name In [node])", "node",
           "k8s.io/dynamic-resource-allocation v0.36.1 structured/internal/incubating (Allocate copies the "
           "device's binding conditions into the result; createNodeSelector: BindsToNode pins the node)",
           (OPERATION, ACTION, CLOSE), state_only=True, applies_when=dra_in_play)
def dra_binding_parameters_carried(ctx: CheckContext) -> Iterator[Violation]:
    devices = None
    for key, allocation, _ in _in_flight(ctx):
        devices = devices if devices is not None else _devices(ctx)
        for result in allocation.devices:
            device = devices.get(result.device_id)
            if device is None:
                continue
            name = "/".join(result.device_id)
            want = (device.binding_conditions, device.binding_failure_conditions)
            got = (result.binding_conditions, result.binding_failure_conditions)
            if want != got:
                yield Violation("", f"claim {key}: the result for device {name} carries binding conditions {got[0]} "
                                    f"and failure conditions {got[1]}, the device {want[0]} and {want[1]}",
                                [f"claim {key}", f"device {name}"], str(want), str(got))
            if device.binds_to_node and not _pins_one_node(allocation):
                yield Violation("", f"claim {key}: device {name} binds to its node, but the allocation's node "
                                    "selector does not pin one node", [f"claim {key}", f"device {name}"],
                                "metadata.name In [node]", "another selector" if allocation.node_selector else "none")

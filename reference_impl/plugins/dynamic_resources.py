"""Kubernetes' DynamicResources plugin (k8s 1.36 pkg/scheduler/framework/plugins/dynamicresources) as
upstream's predicates plugin runs it (`predicate.DynamicResourceAllocationEnable`, on by default as the
DynamicResourceAllocation feature gate): PreFilter, Filter, Reserve, Unreserve and PreBind, for claims
named by the pod (spec.resourceClaims[].resourceClaimName) and allocated from ResourceSlices
(dra_allocator.py).

PreFilter: a pod without claims is Skip; a claim that is missing, being deleted, allocated and reserved for
as many consumers as allowed but not this pod ("resourceclaim in use"), in flight for another pod ("resource
claim <ns/name> is in the process of being allocated") or whose request names a DeviceClass that does not
exist ("request <r>: device class <c> does not exist") makes the pod unschedulable everywhere. With claims
to allocate, it makes an allocator over the devices in use now. Filter: an allocated claim whose
allocation's node selector does not match the node -> "resourceclaim not available on the node"; the
allocator finding no devices -> "cannot allocate all claims" (both UnschedulableAndUnresolvable); an
allocator error (a selector failing) -> Error with its message; otherwise the node's allocation is kept.
Reserve (on pod.spec.nodeName) signals the kept allocations as in flight; Unreserve withdraws them; PreBind
writes each claim's allocation and the pod into its status.reservedFor (cache/dra_claims.py).

Binding conditions (DRADeviceBindingConditions, on at 1.36; cache/dra_binding.py): Filter also finds an
allocated claim unavailable when a binding failure condition of its devices is True, or when it is not
ready and its allocationTimestamp is the binding timeout (600 s) old; PreBind writes the allocationTimestamp
with the allocation (the session's clock) and, when a written claim has binding conditions, asks the
framework handle for an event recorder, which Volcano's handle does not have: master panics there (the
reference raises the upstream assertion, known finding F61). Past it (the assertion off, or a handle with
a recorder) PreBind checks the conditions at once: ready, the bind goes on; failed or timed out, PreBind
fails; otherwise the bind waits (DeviceBindingWait) until its deadline, as no driver sets conditions in the
harness's world.

A claim from a ResourceClaimTemplate is the one pod.status.resourceClaimStatuses names (none yet: "ResourceClaim
not created yet"; named as none: skipped), and must be controlled by the pod. No controller runs in the world,
so a claim is generated only if the scenario has it. Extended resources backed by DRA (DRAExtendedResource)
never reach this plugin in Volcano: the DRA manager's class resolver is never fed, so PreFilter finds no
class for the pod's resources, and allocate's own resource check refuses nodes not advertising them first.
Not modelled: node-allocatable claims. Volcano calls no PostFilter, so nothing deallocates a claim (as upstream).

Score (Volcano's predicates registers it, weight 1; scores(): its BatchNodeOrder share): a node whose
Filter kept an allocation scores, for every firstAvailable request, 8 - i when the claim's result names
its i-th subrequest (so earlier alternatives score higher); the node scores are then normalized to 0..100
against the best (DefaultNormalizeScore). Upstream pairs the pod's claims, allocated ones included, with
the node's results, which hold only the claims it allocated: with an allocated claim before one to
allocate the pairs are off by one, and the last claim has no result, which is an error ("number of
allocations ... is smaller than number of claims") that makes Volcano's PrioritizeNodes return no scores at
all (reproduced: ScoringError).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from schedcheck.reference.api.unschedule_info import ScoringError, Status, StatusCode
from schedcheck.reference.cache import dra_binding
from schedcheck.reference.cache.dra_binding import DeviceBindingWait
from schedcheck.reference.cache.dra_claims import ClaimTracker, can_be_reserved
from schedcheck.reference.k8s import Node, Pod
from schedcheck.reference.k8s_dra import FIRST_AVAILABLE_MAX, ClaimAllocation, ResourceClaim
from schedcheck.reference.plugins.dra_allocator import AllocationError, Allocator, NodeFailure
from schedcheck.reference.plugins.k8s_mirror import node_selector_terms_match
from schedcheck.reference.util.assertion import assertf

NAME = "DynamicResources"
ENABLE = "predicate.DynamicResourceAllocationEnable"
REASON_IN_USE = "resourceclaim in use"
REASON_NOT_AVAILABLE = "resourceclaim not available on the node"
REASON_CANNOT_ALLOCATE = "cannot allocate all claims"


@dataclass
class DRAState:
    """The cycle state of one pod: its claims, the allocator (claims to allocate) and each node's result."""

    claims: list[ResourceClaim]
    allocator: Allocator | None = None
    node_allocations: dict[str, list[ClaimAllocation]] = field(default_factory=dict)
    now: float = 0.0  # the session's clock (binding conditions' timeout)

    def to_allocate(self) -> list[ResourceClaim]:
        return [claim for claim in self.claims if claim.allocation is None]


def _unresolvable(reason: str) -> Status:
    return Status(StatusCode.UnschedulableAndUnresolvable, reason)


def pod_claims(tracker: ClaimTracker, pod: Pod) -> list[ResourceClaim] | Status:
    """foreachPodResourceClaim: each claim by name (resourceclaim.Name: the pod's own, or the one its status
    says was generated from the template), and a generated claim must be controlled by the pod (IsForPod)."""
    claims = []
    for pod_claim in pod.resource_claims:
        name = pod_claim.resource_claim_name
        if not name:
            if pod_claim.name not in pod.resource_claim_statuses:
                return _unresolvable(f'pod "{pod.key}": ResourceClaim not created yet')
            name = pod.resource_claim_statuses[pod_claim.name]
            if name is None:
                continue  # the controller made no claim for it, on purpose: skipped
        claim = tracker.claim(pod.namespace, name)
        if claim is None:
            return _unresolvable(f'resourceclaim.resource.k8s.io "{name}" not found')
        if claim.deletion_timestamp:
            return _unresolvable(f'resourceclaim "{claim.name}" is being deleted')
        if pod_claim.resource_claim_template_name and claim.controller_uid != pod.uid:
            return _unresolvable(f"ResourceClaim {claim.key} was not created for Pod {pod.key} (Pod is not owner)")
        claims.append(claim)
    return claims


def pre_filter(tracker: ClaimTracker, pod: Pod, now: float = 0.0) -> DRAState | Status:
    """The pod's state, or a Skip / unschedulable status."""
    claims = pod_claims(tracker, pod)
    if isinstance(claims, Status):
        return claims
    if not claims:
        return Status(StatusCode.Skip, "")
    for claim in claims:
        if claim.allocation is not None:
            if not can_be_reserved(claim) and pod.uid not in claim.reserved_for:
                return _unresolvable(REASON_IN_USE)
            continue
        if claim.key in tracker.pending:
            return _unresolvable(f"resource claim {claim.key} is in the process of being allocated")
        for request in claim.requests:
            named = [(f"{request.name}/{sub.name}", sub.device_class_name) for sub in request.first_available]
            for name, device_class in named or [(request.name, request.device_class_name)]:
                if device_class not in tracker.classes:
                    return _unresolvable(f"request {name}: device class {device_class} does not exist")
    state = DRAState(claims, now=now)
    if state.to_allocate():
        state.allocator = Allocator(tracker.classes, tracker.slices, *tracker.allocated_state())
    return state


def filter_node(state: DRAState, node: Node) -> Status | None:
    unavailable = False
    for claim in state.claims:
        selector = claim.allocation.node_selector if claim.allocation is not None else None
        if selector is not None and not node_selector_terms_match(selector, node):
            unavailable = True
        elif claim.allocation is not None and dra_binding.unavailable(claim, state.now):
            unavailable = True  # its devices' binding failed, or timed out
    allocations: list[ClaimAllocation] = []
    if state.allocator is not None:
        try:
            result = state.allocator.allocate(node, state.to_allocate())
        except AllocationError as err:
            return Status(StatusCode.Error, str(err))
        except NodeFailure as err:
            return _unresolvable(str(err))
        if result is None:
            return _unresolvable(REASON_CANNOT_ALLOCATE)
        allocations = result
    if unavailable:
        return _unresolvable(REASON_NOT_AVAILABLE)
    if state.allocator is not None:
        state.node_allocations[node.name] = allocations
    return None


def reserve(tracker: ClaimTracker, state: DRAState, node_name: str) -> Exception | None:
    """Signal the node's allocations as in flight (nothing to do when every claim is allocated)."""
    to_allocate = state.to_allocate()
    if not to_allocate or state.allocator is None:
        return None
    allocations = state.node_allocations.get(node_name)
    if not allocations:
        return Exception("claim allocation not found for node")
    for claim, allocation in zip(to_allocate, allocations):
        tracker.pending[claim.key] = allocation
    return None


def unreserve(tracker: ClaimTracker, state: DRAState) -> None:
    for claim in state.claims:
        tracker.pending.pop(claim.key, None)


def pre_bind(tracker: ClaimTracker, state: DRAState, pod: Pod, now: float = 0.0
             ) -> DeviceBindingWait | Exception | None:
    """Record each claim's allocation (the one in flight, stamped with `now` if unstamped) and the pod as its
    consumer; then wait for the devices' binding conditions, if any (cache/dra_binding.py)."""
    for index, claim in enumerate(state.claims):
        if pod.uid in claim.reserved_for:
            continue
        allocation = claim.allocation or tracker.pending.get(claim.key)
        if allocation is None:
            return Exception(f"claim {claim.key}: allocation not found")  # unreachable after Reserve
        try:
            state.claims[index] = tracker.write(claim, allocation, pod.uid, now)
        except LookupError as err:
            return Exception(f"update ResourceClaim {claim.key}: {err}")
    if not dra_binding.has_binding_conditions(state.claims):
        return None
    # Kubernetes' PreBind records a "BindingConditionsPending" event before it waits, through the framework
    # handle's EventRecorder, and Volcano's handle returns none: master panics here in the bind goroutine,
    # whether or not the conditions are already met (docs/findings.md; volcano-sh/volcano#5812). With the
    # assertion off, what follows is Kubernetes' wait, as a handle with a recorder (PR #5817) would give.
    assertf(False, f"DynamicResources PreBind of pod {pod.key}: invalid memory address or nil pointer dereference "
                   "(a claim's devices have binding conditions, and Volcano's framework handle returns no "
                   "EventRecorder for the BindingConditionsPending event)")
    return dra_binding.pre_bind_wait([tracker.claims.get(c.key, c) for c in state.claims], pod.node_name, now)


def score(state: DRAState, node_name: str) -> int:
    """computeScore for one node (0 without claims, or when the Filter kept no allocation for the node)."""
    allocations = state.node_allocations.get(node_name)
    if not state.claims or allocations is None:
        return 0
    total = 0
    for index, claim in enumerate(state.claims):
        if index >= len(allocations):
            raise ScoringError(f"calculate {NAME} priority failed number of allocations {len(allocations)} is "
                               "smaller than number of claims")
        chosen = {device.request for device in allocations[index].devices if "/" in device.request}
        for request in claim.requests:
            for position, sub in enumerate(request.first_available):
                if f"{request.name}/{sub.name}" in chosen:
                    total += FIRST_AVAILABLE_MAX - position
    return total


def scores(state: DRAState, node_names: list[str]) -> dict[str, float]:
    """The plugin's normalized scores for the candidate nodes (DefaultNormalizeScore to 100, weight 1)."""
    raw = {name: score(state, name) for name in node_names}
    best = max(raw.values(), default=0)
    if best == 0:
        return {}
    return {name: float(100 * value // best) for name, value in raw.items()}

"""Device binding conditions (DRADeviceBindingConditions, beta and on by default at k8s 1.36, with
DRAResourceClaimDeviceStatus, beta and on since 1.33): what Kubernetes' DynamicResources plugin (k8s v1.36.1
pkg/scheduler/framework/plugins/dynamicresources) checks of an allocated claim, and how long a bind waits.

A device result carries the device's bindingConditions and bindingFailureConditions (the allocator copies
them). A claim is ready for binding when, for every result with binding conditions, the claim's
status.devices entry of that device (driver, pool, device) has each binding condition True; a result
without a status entry is not ready; a binding failure condition True is a failure ("device binding
failed"), checked before the binding conditions. A claim times out when some result has binding conditions
and its allocationTimestamp lies the binding timeout or more in the past: Volcano builds the plugin without
a BindingTimeout, so Kubernetes' default of 600 s applies.

Filter: an allocated claim that failed, or is not ready and timed out, is unavailable on every node
("resourceclaim not available on the node"). Kubernetes' PostFilter would then deallocate it; Volcano runs
no PostFilter (allocate.go says so in a TODO), so the pod is refused for good (docs/findings.md).

PreBind, once the claims are written (the allocationTimestamp is set then if absent): when some claim's
allocation has binding conditions, it polls the claims every 5 s, the first time at once, for at most the
binding timeout: all ready ends the wait (the bind goes on), a failure or a timed-out claim (the first claim
not ready decides) fails it, and so does the poll's own deadline. Volcano runs PreBind in the bind
goroutine, so sessions go on meanwhile and the task stays Binding on its node in the cache. A failed PreBind
resyncs the task (Pending again) without rolling the predicates plugin back (executePreBind rolls back only
the binders before the failing one), so the claim keeps its allocation and the pod in reservedFor.

The clock: the reference's session clock stands for the moment the session opens; the Filter and PreBind
run a moment later, so a timeout falling exactly on a session's clock has passed for them. No driver runs
in the harness's world, so no condition changes while a bind waits: the wait ends by its deadline
(`wait_deadline`), which the first session opening after it sees.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from schedcheck.reference.k8s_dra import ResourceClaim

BINDING_TIMEOUT_SECONDS = 600.0  # config.DynamicResourcesBindingTimeoutDefault (Volcano sets no BindingTimeout)
POLL_SECONDS = 5.0  # PreBind's wait.PollUntilContextTimeout interval


class BindingFailed(Exception):
    """A binding failure condition is True (ErrDeviceBindingFailed)."""


@dataclass
class DeviceBindingWait:
    """PreBind wrote the claims and waits for their devices' binding conditions until `deadline` (seconds since
    the epoch); a session opening after it finds the bind failed and the task Pending again."""

    node: str
    deadline: float
    claim: str  # namespace/name of the claim the wait is on (the first not ready)


def claim_ready(claim: ResourceClaim) -> bool:
    """isClaimReadyForBinding; BindingFailed when a failure condition of a result is True."""
    if claim.allocation is None:
        return False
    for result in claim.allocation.devices:
        if not result.binding_conditions:
            continue
        status = claim.device_status(result)
        if status is None:
            return False
        for kind in result.binding_failure_conditions:
            if status.is_true(kind):
                failed = status.conditions[kind]
                raise BindingFailed(f"device binding failed: claim={claim.name}, reason={failed.reason}, "
                                    f'message="{failed.message}"')
        if not all(status.is_true(kind) for kind in result.binding_conditions):
            return False
    return True


def claim_timed_out(claim: ResourceClaim, now: float) -> bool:
    """isClaimTimeout, at a moment after `now` (see the module's note on the clock)."""
    allocation = claim.allocation
    if allocation is None or allocation.timestamp is None:
        return False
    return any(result.binding_conditions for result in allocation.devices) \
        and allocation.timestamp + BINDING_TIMEOUT_SECONDS <= now


def unavailable(claim: ResourceClaim, now: float) -> bool:
    """Filter's binding check of an allocated claim: failed, or not ready and timed out."""
    try:
        return not claim_ready(claim) and claim_timed_out(claim, now)
    except BindingFailed:
        return True


def has_binding_conditions(claims: list[ResourceClaim]) -> bool:
    return any(result.binding_conditions for claim in claims if claim.allocation is not None
               for result in claim.allocation.devices)


def pre_bind_wait(claims: list[ResourceClaim], node: str, now: float) -> DeviceBindingWait | Exception | None:
    """PreBind's wait on the written claims: None when all are ready at the first poll, the error when one
    failed or timed out, else the wait (isPodReadyForBinding: the first claim not ready decides)."""
    for claim in claims:
        try:
            if claim_ready(claim):
                continue
        except BindingFailed as err:
            return err
        if claim_timed_out(claim, now):
            return Exception(f"device binding timeout: claim={claim.name}")
        assert claim.allocation is not None and claim.allocation.timestamp is not None  # written by PreBind
        return DeviceBindingWait(node, wait_deadline(now, claim.allocation.timestamp), claim.key)
    return None


def wait_deadline(start: float, allocated: float) -> float:
    """When a wait that starts at `start` on a claim allocated at `allocated` ends: at the first later poll
    (every 5 s) that finds the claim timed out, or at the poll's own deadline, the binding timeout after the
    start, whichever comes first."""
    polls = max(1, math.ceil((allocated + BINDING_TIMEOUT_SECONDS - start) / POLL_SECONDS))
    return start + min(BINDING_TIMEOUT_SECONDS, polls * POLL_SECONDS)

"""DRA device counts per DeviceClass (upstream api.DRAResource, counts only: consumable capacity is not
modelled), shared by the capacity plugin's quotas and the session's queue status."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

COUNT_PREFIX = "deviceclass/"  # a queue resource name counting devices of a class
INT64_MAX = 2**63 - 1
Counts = dict[str, int]  # DeviceClass -> devices


def saturating_add(left: int, right: int) -> int:
    return min(left + right, INT64_MAX)


def merge(dst: Counts, src: Mapping[str, int] | None, times: int = 1) -> None:
    """dst += src * times, saturating at int64's maximum as upstream's SaturatingAdd / SaturatingMul."""
    for device_class, count in (src or {}).items():
        dst[device_class] = saturating_add(dst.get(device_class, 0), min(count * times, INT64_MAX))


def charge_task(counts: Counts, claim_refs: dict[str, int], task: Any) -> None:
    """A task's devices into `counts`; a claim shared by several tasks is charged by its first holder only
    (`claim_refs` counts the holders per claim). Capacity's addTaskDRAAllocated and the session's
    addTaskDRAAllocatedByQueue both count this way."""
    if not task.claim_dra_resreq:
        merge(counts, task.dra_resreq)
        return
    for key in task.claim_keys:
        request = task.claim_dra_resreq.get(key)
        if not request:
            continue
        if claim_refs.get(key, 0) == 0:
            merge(counts, request)
        claim_refs[key] = claim_refs.get(key, 0) + 1

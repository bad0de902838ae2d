"""DRA device counts per DeviceClass (upstream api.DRAResource, counts only: consumable capacity is not
modelled), shared by the capacity plugin's quotas and the session's queue status."""

from __future__ import annotations

from collections.abc import Mapping

COUNT_PREFIX = "deviceclass/"  # a queue resource name counting devices of a class
INT64_MAX = 2**63 - 1
Counts = dict[str, int]  # DeviceClass -> devices


def saturating_add(left: int, right: int) -> int:
    return min(left + right, INT64_MAX)


def merge(dst: Counts, src: Mapping[str, int] | None, times: int = 1) -> None:
    """dst += src * times, saturating at int64's maximum as upstream's SaturatingAdd / SaturatingMul."""
    for device_class, count in (src or {}).items():
        dst[device_class] = saturating_add(dst.get(device_class, 0), min(count * times, INT64_MAX))

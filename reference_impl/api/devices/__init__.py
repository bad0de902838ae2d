"""Shared devices on a node (pkg/scheduler/api/devices, api/shared_device_pool.go).

A NodeInfo keeps one pool per registered device kind in `others` (upstream's NodeInfo.Others): the
GPU-share pool (`gpushare.py`, device name "GpuShare") and the HAMi vGPU pool (`vgpu.py`, "hamivgpu").
Which pools exist is decided by the deviceshare plugin's switches (`DeviceFlags`); upstream keeps them in
package-level variables that the plugin sets when it is built, the reference keeps them on the cache.

Every pool answers the same calls as upstream's `api.Devices`: add_resource / sub_resource (a task
added to or removed from the node, read from the pod's own annotations), has_device_request,
filter_node (code, reason, error), score_node, allocate / release (the session's choice of device,
returned as the annotations the scheduler writes on the pod at bind), deep_copy.
"""

from __future__ import annotations

from dataclasses import dataclass

from schedcheck.reference.quantity import Quantity

# Status codes of a device filter (api/devices/util.go)
SUCCESS = 0
ERROR = 1
UNSCHEDULABLE = 2
UNSCHEDULABLE_AND_UNRESOLVABLE = 3

INT64_MAX = 2**63 - 1


@dataclass(frozen=True)
class DeviceFlags:
    """The deviceshare plugin's switches the device model reads (upstream: package variables)."""

    gpu_sharing: bool = False  # deviceshare.GPUSharingEnable
    gpu_number: bool = False  # deviceshare.GPUNumberEnable
    vgpu: bool = False  # deviceshare.VGPUEnable
    schedule_policy: str = ""  # deviceshare.SchedulePolicy (vgpu.SchedulePolicy)

    @property
    def any(self) -> bool:
        return self.gpu_sharing or self.gpu_number or self.vgpu

    def registered(self) -> list[str]:
        """api.RegisteredDevices, in upstream's registration order."""
        from schedcheck.reference.api.devices import gpushare, vgpu

        names = []
        if self.gpu_sharing or self.gpu_number:
            names.append(gpushare.DEVICE_NAME)
        if self.vgpu:
            names.append(vgpu.DEVICE_NAME)
        return names


def as_int64(q: Quantity) -> tuple[int, bool]:
    """resource.Quantity.AsInt64: the value when it is a whole number within int64, else (0, False)."""
    value = q.value()
    if Quantity(value) != q or not -INT64_MAX - 1 <= value <= INT64_MAX:
        return 0, False
    return value, True


def node_devices(node, flags: DeviceFlags) -> dict:
    """setNodeOthersResource: the pools a node carries under the given switches."""
    from schedcheck.reference.api.devices import gpushare, vgpu

    others: dict = {}
    if node is None or not flags.any:
        return others
    if flags.gpu_sharing or flags.gpu_number:
        pool = gpushare.GPUDevices.from_node(node, flags)
        if pool is not None:
            others[gpushare.DEVICE_NAME] = pool
    if flags.vgpu:
        pool = vgpu.GPUDevices.from_node(node, flags)
        if pool is not None:
            others[vgpu.DEVICE_NAME] = pool
    return others

"""What the device pools share: the plugin's switches, filter codes, quantity reading."""

from __future__ import annotations

from dataclasses import dataclass

from schedcheck.reference.api.devices.config import DEFAULT_CM_NAME, DEFAULT_CM_NAMESPACE, DEFAULT_CONFIG, \
    DeviceConfig
from schedcheck.reference.quantity import Quantity

# Status codes of a device filter (api/devices/util.go)
SUCCESS = 0
ERROR = 1
UNSCHEDULABLE = 2
UNSCHEDULABLE_AND_UNRESOLVABLE = 3

INT64_MAX = 2**63 - 1
GPUSHARE_DEVICE = "GpuShare"
VGPU_DEVICE = "hamivgpu"
MINDCLUSTER_VNPU_DEVICE = "ascend310p-vNPU"


@dataclass(frozen=True)
class DeviceFlags:
    """The deviceshare plugin's switches the device model reads (upstream: package variables)."""

    gpu_sharing: bool = False  # deviceshare.GPUSharingEnable
    gpu_number: bool = False  # deviceshare.GPUNumberEnable
    vgpu: bool = False  # deviceshare.VGPUEnable
    schedule_policy: str = ""  # deviceshare.SchedulePolicy (vgpu.SchedulePolicy)
    ascend_hami: bool = False  # deviceshare.AscendHAMiVNPUEnable (hami.AscendHAMiVNPUEnable)
    ascend_mindcluster: bool = False  # deviceshare.AscendMindClusterVNPUEnable (vnpu.AscendMindClusterVNPUEnable)
    node_lock: bool = False  # deviceshare.NodeLockEnable (gpushare / vgpu / HAMi Ascend NodeLockEnable)
    # deviceshare.KnownGeometriesCMName / -Namespace of the first build (config.InitDevicesConfig runs once)
    cm_name: str = DEFAULT_CM_NAME
    cm_namespace: str = DEFAULT_CM_NAMESPACE
    config: DeviceConfig = DEFAULT_CONFIG  # the loaded device config (the cache resolves it from the world)

    @property
    def any(self) -> bool:
        return self.gpu_sharing or self.gpu_number or self.vgpu or self.ascend_hami or self.ascend_mindcluster

    def registered(self) -> list[str]:
        """api.RegisteredDevices, in upstream's registration order."""
        names = []
        if self.gpu_sharing or self.gpu_number:
            names.append(GPUSHARE_DEVICE)
        if self.vgpu:
            names.append(VGPU_DEVICE)
        if self.ascend_mindcluster:
            names.append(MINDCLUSTER_VNPU_DEVICE)
        if self.ascend_hami:  # one name per vNPU kind of the device configuration
            names += [c.common_word for c in self.config.vnpu_configs]
        return names


def as_int64(q: Quantity) -> tuple[int, bool]:
    """resource.Quantity.AsInt64: the value when it is a whole number within int64, else (0, False)."""
    value = q.value()
    if Quantity(value) != q or not -INT64_MAX - 1 <= value <= INT64_MAX:
        return 0, False
    return value, True


"""Shared devices on a node (pkg/scheduler/api/devices, api/shared_device_pool.go).

A NodeInfo keeps one pool per registered device kind in `others` (upstream's NodeInfo.Others): the
GPU-share pool (`gpushare.py`, device name "GpuShare"), the HAMi vGPU pool (`vgpu.py`, "hamivgpu") and
a HAMi Ascend vNPU pool per configured vNPU kind (`ascend_hami.py`, "Ascend310P" by default) and
the mindcluster 310P vNPU pool (`ascend310p_vnpu.py`, "ascend310p-vNPU", on every node).
Which pools exist is decided by the deviceshare plugin's switches (`DeviceFlags`); upstream keeps them in
package-level variables that the plugin sets when it is built, the reference keeps them on the cache.

Every pool answers the same calls as upstream's `api.Devices`: add_resource / sub_resource (a task
added to or removed from the node, read from the pod's own annotations), has_device_request,
filter_node (code, reason, error), score_node, allocate / release (the session's choice of device,
returned as the annotations the scheduler writes on the pod at bind), deep_copy.
"""

from __future__ import annotations

from schedcheck.reference.api.devices import ascend310p_vnpu, ascend_hami, gpushare, vgpu
from schedcheck.reference.api.devices.base import DeviceFlags

__all__ = ["DeviceFlags", "node_devices"]


def node_devices(node, flags: DeviceFlags) -> dict:
    """setNodeOthersResource: the pools a node carries under the given switches."""
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
    if flags.ascend_mindcluster:  # every node, whatever it offers (initialised at session open)
        others[ascend310p_vnpu.DEVICE_NAME] = ascend310p_vnpu.node_pool(node, flags)
    if flags.ascend_hami:
        others.update(ascend_hami.node_pools(node, flags))
    return others

"""The device configuration (api/devices/config): resource names the vGPU pool reads.

Upstream loads it once per process from the ConfigMap named by `deviceshare.KnownGeometriesCMName`
(kube-system/volcano-vgpu-device-config, key device-config.yaml) and falls back to its built-in default
when the ConfigMap cannot be read. The reference always uses the default (README "Not modelled"): a
ConfigMap in a scenario is not read. Note that the default names no memory-percentage resource, so
`volcano.sh/vgpu-memory-percentage` is not read either.
"""

from __future__ import annotations

from dataclasses import dataclass

VOLCANO_VGPU_MEMORY = "volcano.sh/vgpu-memory"
VOLCANO_VGPU_MEMORY_PERCENTAGE = "volcano.sh/vgpu-memory-percentage"
VOLCANO_VGPU_CORES = "volcano.sh/vgpu-cores"
VOLCANO_VGPU_NUMBER = "volcano.sh/vgpu-number"
VOLCANO_VGPU_REGISTER = "volcano.sh/node-vgpu-register"

DEFAULT_CM_NAME = "volcano-vgpu-device-config"
DEFAULT_CM_NAMESPACE = "kube-system"


@dataclass(frozen=True)
class NvidiaConfig:
    resource_count_name: str = VOLCANO_VGPU_NUMBER
    resource_memory_name: str = VOLCANO_VGPU_MEMORY
    resource_core_name: str = VOLCANO_VGPU_CORES
    resource_memory_percentage_name: str = ""  # not set in upstream's default
    device_split_count: int = 10


DEFAULT_NVIDIA = NvidiaConfig()

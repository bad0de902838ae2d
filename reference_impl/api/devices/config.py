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


# -- Ascend vNPU (api/devices/config/vnpu.go, GetDefaultDevicesConfig) --------------------------------
# The default configuration knows one vNPU kind, the 310P3 chip under the common word "Ascend310P";
# `hamiVnpuCore` is off unless a node's annotation `hami-vnpu-core` says "true".


@dataclass(frozen=True)
class VNPUTemplate:
    name: str
    memory: int
    ai_core: int = 0
    ai_cpu: int = 0


@dataclass(frozen=True)
class VNPUConfig:
    common_word: str
    chip_name: str
    resource_name: str
    resource_memory_name: str
    memory_allocatable: int
    memory_capacity: int
    ai_core: int
    ai_cpu: int
    templates: tuple[VNPUTemplate, ...]  # upstream sorts them by memory when it builds a device kind


DEFAULT_VNPU_HAMI_CORE = False
DEFAULT_VNPUS = (
    VNPUConfig(common_word="Ascend310P", chip_name="310P3", resource_name="huawei.com/Ascend310P",
               resource_memory_name="huawei.com/Ascend310P-memory", memory_allocatable=21527,
               memory_capacity=24576, ai_core=8, ai_cpu=7,
               templates=(VNPUTemplate("vir01", 3072, 1, 1), VNPUTemplate("vir02", 6144, 2, 2),
                          VNPUTemplate("vir04", 12288, 4, 4))),
)

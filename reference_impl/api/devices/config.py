"""The device configuration (api/devices/config): resource names and MIG geometries the vGPU pool reads.

Upstream loads it once per process, when the deviceshare plugin is first built, from the ConfigMap named by
`deviceshare.KnownGeometriesCMName` in `deviceshare.KnownGeometriesCMNamespace` (defaults
kube-system/volcano-vgpu-device-config): the YAML text under the data key `device-config.yaml`, decoded
into its Config type. The decoded document replaces the default whole (no field is merged with the
default: a ConfigMap without `nvidia.resourceMemoryName` leaves that name empty, and no container then
asks for vGPU memory). Upstream falls back to its built-in default when the ConfigMap is missing, has no
`device-config.yaml` key or does not decode (any error of yaml.v2's Unmarshal: invalid YAML, or a value
of the wrong type anywhere in a field the Config type has; nothing of a partly decoded document is kept);
the scenario reader warns about such a document, naming the first refused field.

Read here (the fields the scheduler consults): `nvidia.resourceCountName`, `resourceMemoryName`,
`resourceCoreName`, `resourceMemoryPercentageName`, `knownMigGeometries` (models, allowedGeometries: group,
geometries: name, memory, count) and `gpuMemoryFactor`; the other NvidiaConfig fields are decoded for their
type only (deviceSplitCount, defaultMemory, ...: the device plugin's, not the scheduler's); `vnpus`
(`hamiVnpuCore` and `configs`, or the older bare list: commonWord, chipName, resourceName,
resourceMemoryName, memoryAllocatable, memoryCapacity, aiCore, aiCPU, templates) gives HAMi Ascend its kinds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from schedcheck.reference.api.devices import yaml_v2

VOLCANO_VGPU_MEMORY = "volcano.sh/vgpu-memory"
VOLCANO_VGPU_MEMORY_PERCENTAGE = "volcano.sh/vgpu-memory-percentage"
VOLCANO_VGPU_CORES = "volcano.sh/vgpu-cores"
VOLCANO_VGPU_NUMBER = "volcano.sh/vgpu-number"
VOLCANO_VGPU_REGISTER = "volcano.sh/node-vgpu-register"

DEFAULT_CM_NAME = "volcano-vgpu-device-config"
DEFAULT_CM_NAMESPACE = "kube-system"
DATA_KEY = "device-config.yaml"
UINT_MAX = 2**64 - 1
INT_RANGE = (-(2**63), 2**63 - 1)


@dataclass(frozen=True)
class MigTemplate:
    name: str
    memory: int
    count: int


@dataclass(frozen=True)
class Geometry:
    group: str
    instances: tuple[MigTemplate, ...]


@dataclass(frozen=True)
class AllowedMigGeometries:
    models: tuple[str, ...]
    geometries: tuple[Geometry, ...]


@dataclass(frozen=True)
class NvidiaConfig:
    resource_count_name: str = VOLCANO_VGPU_NUMBER
    resource_memory_name: str = VOLCANO_VGPU_MEMORY
    resource_core_name: str = VOLCANO_VGPU_CORES
    resource_memory_percentage_name: str = ""  # not set in upstream's default
    device_split_count: int = 10
    mig_geometries_list: tuple[AllowedMigGeometries, ...] = ()
    gpu_memory_factor: int = 0


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
EMPTY_NVIDIA = NvidiaConfig("", "", "", "", 0)  # a decoded document without an `nvidia` section


@dataclass(frozen=True)
class DeviceConfig:
    """config.Config: where it came from ("" for upstream's default), the NVIDIA part, the raw `vnpus` and
    what HAMi Ascend reads of it (a ConfigMap replaces the default whole: without `vnpus`, no vNPU kind)."""

    source: str = ""
    nvidia: NvidiaConfig = DEFAULT_NVIDIA
    vnpus: Any = field(default=None, compare=False)
    vnpu_hami_core: bool = DEFAULT_VNPU_HAMI_CORE
    vnpu_configs: tuple[VNPUConfig, ...] = DEFAULT_VNPUS


DEFAULT_CONFIG = DeviceConfig()


class DeviceConfigError(ValueError):
    """A device-config.yaml value that upstream's YAML decoding refuses; `field` is its path."""

    def __init__(self, field_path: str, reason: str) -> None:
        super().__init__(f"{field_path}: {reason}")
        self.field = field_path
        self.reason = reason


UINT, INT64, INT32 = ("uint", 64), ("int", 64), ("int", 32)
_MIG_TEMPLATE = ("struct", {"name": "str", "memory": UINT, "count": INT64})
_GEOMETRY = ("struct", {"group": "str", "geometries": ("list", _MIG_TEMPLATE)})
_ALLOWED = ("struct", {"models": ("list", "str"), "allowedGeometries": ("list", _GEOMETRY)})
NVIDIA_SCHEMA = ("struct", {
    "resourceCountName": "str", "resourceMemoryName": "str", "resourceCoreName": "str",
    "resourceMemoryPercentageName": "str", "resourcePriorityName": "str", "overwriteEnv": "bool",
    "defaultMemory": UINT, "defaultCores": UINT, "defaultGPUNum": UINT, "deviceSplitCount": UINT,
    "deviceMemoryScaling": "float", "deviceCoreScaling": "float", "disableCoreLimit": "bool",
    "knownMigGeometries": ("list", _ALLOWED), "gpuMemoryFactor": UINT})
_TEMPLATE = ("struct", {"name": "str", "memory": INT64, "aiCore": INT32, "aiCPU": INT32})
_VNPU = ("struct", {"commonWord": "str", "chipName": "str", "resourceName": "str", "resourceMemoryName": "str",
                    "memoryAllocatable": INT64, "memoryCapacity": INT64, "aiCore": INT32, "aiCPU": INT32,
                    "templates": ("list", _TEMPLATE)})
# VNPUsConfig.UnmarshalYAML: a mapping is the wrapper {hamiVnpuCore, configs}, a list the configs alone
VNPUS_SCHEMA = ("either", ("struct", {"hamiVnpuCore": "bool", "configs": ("list", _VNPU)}), ("list", _VNPU))
CONFIG_SCHEMA = ("struct", {"nvidia": NVIDIA_SCHEMA, "vnpus": VNPUS_SCHEMA})


def _get(doc: dict[str, Any] | None, key: str, zero: Any) -> Any:
    """A decoded struct's field: Go's zero value when absent or null."""
    value = (doc or {}).get(key)
    return zero if value is None else value


def _nvidia(doc: dict[str, Any]) -> NvidiaConfig:
    known = tuple(
        AllowedMigGeometries(tuple(m if m is not None else "" for m in _get(entry, "models", [])),
                             tuple(Geometry(_get(g, "group", ""),
                                            tuple(MigTemplate(_get(t, "name", ""), _get(t, "memory", 0),
                                                              _get(t, "count", 0))
                                                  for t in _get(g, "geometries", [])))
                                   for g in _get(entry, "allowedGeometries", [])))
        for entry in _get(doc, "knownMigGeometries", []))
    return NvidiaConfig(
        resource_count_name=_get(doc, "resourceCountName", ""),
        resource_memory_name=_get(doc, "resourceMemoryName", ""),
        resource_core_name=_get(doc, "resourceCoreName", ""),
        resource_memory_percentage_name=_get(doc, "resourceMemoryPercentageName", ""),
        device_split_count=_get(doc, "deviceSplitCount", 0),
        mig_geometries_list=known,
        gpu_memory_factor=_get(doc, "gpuMemoryFactor", 0),
    )


def _vnpus(value: Any) -> tuple[bool, tuple[VNPUConfig, ...]]:
    """The decoded VNPUsConfig: hami-core and the configs (a list alone: hami-core off). A kind whose
    commonWord starts with "Ascend910" chooses and scores devices by their network ids
    (ascend_hami.select_with_topology, AscendDevices.score_node)."""
    if isinstance(value, dict):
        hami_core, items = _get(value, "hamiVnpuCore", False), _get(value, "configs", [])
    else:
        hami_core, items = False, value or []
    configs = tuple(VNPUConfig(
        common_word=_get(doc, "commonWord", ""), chip_name=_get(doc, "chipName", ""),
        resource_name=_get(doc, "resourceName", ""), resource_memory_name=_get(doc, "resourceMemoryName", ""),
        memory_allocatable=_get(doc, "memoryAllocatable", 0), memory_capacity=_get(doc, "memoryCapacity", 0),
        ai_core=_get(doc, "aiCore", 0), ai_cpu=_get(doc, "aiCPU", 0),
        templates=tuple(VNPUTemplate(_get(t, "name", ""), _get(t, "memory", 0), _get(t, "aiCore", 0),
                                     _get(t, "aiCPU", 0)) for t in _get(doc, "templates", [])))
        for doc in items)
    return hami_core, configs


def parse_device_config(text: Any, source: str) -> DeviceConfig:
    """loadConfigFromCM's decoding of the `device-config.yaml` text (yaml.v2's Unmarshal, yaml_v2.py); raises
    DeviceConfigError (the field path under `data.device-config.yaml`, the first refused value in document
    order) where upstream's decoding fails."""
    base = f"data.{DATA_KEY}"
    if not isinstance(text, str):
        raise DeviceConfigError(base, f"expected a string (YAML text), got {type(text).__name__}")
    try:
        doc = yaml_v2.decode(text, CONFIG_SCHEMA, base)
    except yaml_v2.YamlError as exc:
        raise DeviceConfigError(exc.field, exc.reason) from None
    nvidia = EMPTY_NVIDIA if _get(doc, "nvidia", None) is None else _nvidia(doc["nvidia"])
    hami_core, vnpus = _vnpus(_get(doc, "vnpus", None))
    return DeviceConfig(source, nvidia, _get(doc, "vnpus", None), hami_core, vnpus)


def unread_keys(text: str) -> list[str]:
    """Keys of a decodable document that the Config type has no field for (yaml.v2 ignores them)."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return []
    if not isinstance(doc, dict):
        return []
    out = [k for k in doc if k not in ("nvidia", "vnpus")]
    nvidia = doc.get("nvidia")
    if isinstance(nvidia, dict):
        known = {"resourceCountName", "resourceMemoryName", "resourceCoreName", "resourceMemoryPercentageName",
                 "resourcePriorityName", "overwriteEnv", "defaultMemory", "defaultCores", "defaultGPUNum",
                 "deviceSplitCount", "deviceMemoryScaling", "deviceCoreScaling", "disableCoreLimit",
                 "knownMigGeometries", "gpuMemoryFactor"}
        out += [f"nvidia.{k}" for k in nvidia if k not in known]
    return [str(k) for k in out]


def device_config_problem(config_maps, name: str, namespace: str) -> DeviceConfigError | None:
    """Why upstream refuses the named ConfigMap's document (and falls back to its default), or None."""
    for cm in config_maps:
        if cm.name == name and cm.namespace == namespace and DATA_KEY in cm.data:
            try:
                parse_device_config(cm.data[DATA_KEY], f"{namespace}/{name}")
            except DeviceConfigError as exc:
                return exc
    return None


def load_device_config(config_maps, name: str, namespace: str) -> DeviceConfig:
    """InitDevicesConfig: the named ConfigMap's document, else the default (a missing ConfigMap or key, or a
    document yaml.v2 refuses: loadConfigFromCM returns the error and nothing of the document is kept)."""
    for cm in config_maps:
        if cm.name == name and cm.namespace == namespace:
            text = cm.data.get(DATA_KEY)
            if text is None:
                return DEFAULT_CONFIG
            try:
                return parse_device_config(text, f"{namespace}/{name}")
            except DeviceConfigError:
                return DEFAULT_CONFIG
    return DEFAULT_CONFIG

"""The device configuration (api/devices/config): resource names and MIG geometries the vGPU pool reads.

Upstream loads it once per process, when the deviceshare plugin is first built, from the ConfigMap named by
`deviceshare.KnownGeometriesCMName` in `deviceshare.KnownGeometriesCMNamespace` (defaults
kube-system/volcano-vgpu-device-config): the YAML text under the data key `device-config.yaml`, decoded
into its Config type. The decoded document replaces the default whole (no field is merged with the
default: a ConfigMap without `nvidia.resourceMemoryName` leaves that name empty, and no container then
asks for vGPU memory). Upstream falls back to its built-in default when the ConfigMap is missing, has no
`device-config.yaml` key or does not decode; the scenario reader refuses a document that does not decode
(one line naming the field), so in a scenario only the first two fall back.

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


def _kind(value: Any) -> str:
    return type(value).__name__ if value is not None else "null"


def _mapping(value: Any, path: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DeviceConfigError(path, f"expected a mapping, got {_kind(value)}")
    return value


def _sequence(value: Any, path: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise DeviceConfigError(path, f"expected a list, got {_kind(value)}")
    return value


def _string(value: Any, path: str) -> str:
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise DeviceConfigError(path, f"expected a string, got {_kind(value)}")
    if not isinstance(value, str):
        raise DeviceConfigError(path, f"expected a string, got {_kind(value)} {value!r} (quote it)")
    return value


def _integer(value: Any, path: str, unsigned: bool) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise DeviceConfigError(path, f"expected an integer, got {_kind(value)} {value!r}")
    low, high = (0, UINT_MAX) if unsigned else INT_RANGE
    if not low <= value <= high:
        raise DeviceConfigError(path, f"{value} is out of range for {'uint' if unsigned else 'int'}")
    return value


def _check(value: Any, path: str, kind: str) -> None:
    """A field the scheduler does not read: only its type is checked (yaml.v2 would refuse it)."""
    if value is None:
        return
    if kind == "bool" and not isinstance(value, bool):
        raise DeviceConfigError(path, f"expected a boolean, got {_kind(value)}")
    if kind == "float" and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise DeviceConfigError(path, f"expected a number, got {_kind(value)}")
    if kind == "uint":
        _integer(value, path, True)


def _geometry(value: Any, path: str) -> Geometry:
    doc = _mapping(value, path)
    instances = []
    for i, item in enumerate(_sequence(doc.get("geometries"), f"{path}.geometries")):
        p = f"{path}.geometries[{i}]"
        inst = _mapping(item, p)
        instances.append(MigTemplate(_string(inst.get("name"), f"{p}.name"),
                                     _integer(inst.get("memory"), f"{p}.memory", True),
                                     _integer(inst.get("count"), f"{p}.count", False)))
    return Geometry(_string(doc.get("group"), f"{path}.group"), tuple(instances))


def parse_nvidia(value: Any, path: str = "nvidia") -> NvidiaConfig:
    doc = _mapping(value, path)
    for key, kind in (("overwriteEnv", "bool"), ("disableCoreLimit", "bool"), ("defaultMemory", "uint"),
                      ("defaultCores", "uint"), ("defaultGPUNum", "uint"), ("deviceMemoryScaling", "float"),
                      ("deviceCoreScaling", "float")):
        _check(doc.get(key), f"{path}.{key}", kind)
    _string(doc.get("resourcePriorityName"), f"{path}.resourcePriorityName")
    known = []
    for i, item in enumerate(_sequence(doc.get("knownMigGeometries"), f"{path}.knownMigGeometries")):
        p = f"{path}.knownMigGeometries[{i}]"
        entry = _mapping(item, p)
        models = tuple(_string(m, f"{p}.models[{j}]") for j, m in enumerate(_sequence(entry.get("models"),
                                                                                       f"{p}.models")))
        groups = tuple(_geometry(g, f"{p}.allowedGeometries[{j}]")
                       for j, g in enumerate(_sequence(entry.get("allowedGeometries"), f"{p}.allowedGeometries")))
        known.append(AllowedMigGeometries(models, groups))
    return NvidiaConfig(
        resource_count_name=_string(doc.get("resourceCountName"), f"{path}.resourceCountName"),
        resource_memory_name=_string(doc.get("resourceMemoryName"), f"{path}.resourceMemoryName"),
        resource_core_name=_string(doc.get("resourceCoreName"), f"{path}.resourceCoreName"),
        resource_memory_percentage_name=_string(doc.get("resourceMemoryPercentageName"),
                                                f"{path}.resourceMemoryPercentageName"),
        device_split_count=_integer(doc.get("deviceSplitCount"), f"{path}.deviceSplitCount", True),
        mig_geometries_list=tuple(known),
        gpu_memory_factor=_integer(doc.get("gpuMemoryFactor"), f"{path}.gpuMemoryFactor", True),
    )


def parse_device_config(text: Any, source: str) -> DeviceConfig:
    """loadConfigFromCM's decoding of the `device-config.yaml` text; raises DeviceConfigError (field path
    under `data.device-config.yaml`) where upstream's decoding fails."""
    base = f"data.{DATA_KEY}"
    if not isinstance(text, str):
        raise DeviceConfigError(base, f"expected a string (YAML text), got {_kind(text)}")
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise DeviceConfigError(base, f"not valid YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    doc = _mapping(doc, base)
    nvidia = parse_nvidia(doc.get("nvidia"), f"{base}.nvidia") if doc.get("nvidia") is not None else EMPTY_NVIDIA
    hami_core, vnpus = parse_vnpus(doc.get("vnpus"), f"{base}.vnpus")
    return DeviceConfig(source, nvidia, doc.get("vnpus"), hami_core, vnpus)


def _bits(value: Any, path: str, bits: int) -> int:
    number = _integer(value, path, False)
    if not -(2 ** (bits - 1)) <= number < 2 ** (bits - 1):
        raise DeviceConfigError(path, f"{number} is out of range for int{bits}")
    return number


def parse_vnpus(value: Any, path: str = "vnpus") -> tuple[bool, tuple[VNPUConfig, ...]]:
    """VNPUsConfig's decoding: a mapping {hamiVnpuCore, configs} or, the older form, the list of configs
    alone (hami-core off). A kind whose commonWord starts with "Ascend910" chooses and scores devices by
    their network ids (ascend_hami.select_with_topology, AscendDevices.score_node)."""
    if value is None:
        return False, ()
    if isinstance(value, dict):
        core = value.get("hamiVnpuCore")
        if core is not None and not isinstance(core, bool):
            raise DeviceConfigError(f"{path}.hamiVnpuCore", f"expected a boolean, got {_kind(core)}")
        hami_core, items, where = bool(core), _sequence(value.get("configs"), f"{path}.configs"), f"{path}.configs"
    else:
        hami_core, items, where = False, _sequence(value, path), path
    configs = []
    for i, item in enumerate(items):
        p = f"{where}[{i}]"
        doc = _mapping(item, p)
        templates = []
        for j, t in enumerate(_sequence(doc.get("templates"), f"{p}.templates")):
            tp = f"{p}.templates[{j}]"
            tdoc = _mapping(t, tp)
            templates.append(VNPUTemplate(_string(tdoc.get("name"), f"{tp}.name"),
                                          _bits(tdoc.get("memory"), f"{tp}.memory", 64),
                                          _bits(tdoc.get("aiCore"), f"{tp}.aiCore", 32),
                                          _bits(tdoc.get("aiCPU"), f"{tp}.aiCPU", 32)))
        word = _string(doc.get("commonWord"), f"{p}.commonWord")
        configs.append(VNPUConfig(
            common_word=word, chip_name=_string(doc.get("chipName"), f"{p}.chipName"),
            resource_name=_string(doc.get("resourceName"), f"{p}.resourceName"),
            resource_memory_name=_string(doc.get("resourceMemoryName"), f"{p}.resourceMemoryName"),
            memory_allocatable=_bits(doc.get("memoryAllocatable"), f"{p}.memoryAllocatable", 64),
            memory_capacity=_bits(doc.get("memoryCapacity"), f"{p}.memoryCapacity", 64),
            ai_core=_bits(doc.get("aiCore"), f"{p}.aiCore", 32), ai_cpu=_bits(doc.get("aiCPU"), f"{p}.aiCPU", 32),
            templates=tuple(templates)))
    return hami_core, tuple(configs)


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


def load_device_config(config_maps, name: str, namespace: str) -> DeviceConfig:
    """InitDevicesConfig: the named ConfigMap's document, else the default (missing ConfigMap or key)."""
    for cm in config_maps:
        if cm.name == name and cm.namespace == namespace:
            text = cm.data.get(DATA_KEY)
            if text is None:
                return DEFAULT_CONFIG
            return parse_device_config(text, f"{namespace}/{name}")
    return DEFAULT_CONFIG

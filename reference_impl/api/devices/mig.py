"""MIG sharing of a vGPU card (api/devices/nvidia/vgpu/mig.go, sharing_factory.go).

A card registered with mode `mig` takes the geometries (`allowedGeometries`) of the first
`nvidia.knownMigGeometries` entry of the device config one of whose models is a substring of the card's
type; with none (upstream's default config has none) the card falls back to hami-core. The pool's mode is
the mode the last card of the register annotation decided: a `mig` pool shares every card with the MIG
rules below, a `hami-core` pool every card with hami-core's (a card's template is then unused). Every
other mode string, `mps` included, is hami-core: upstream registers no MPS sharing and maps any unknown
mode to hami-core, so a pod asking `volcano.sh/vgpu-mode: mps` fits no node.

A card's MIG state (MigInUse): the index of the geometry group in use (-1: none yet) and a usage list, one
entry per instance name in use, with the instance's memory and the sorted instance indexes taken.

Placing (TryAddPod, in the filter and the allocation): the request memory times `gpuMemoryFactor` (when
above 1) is matched: with a group in use, in that group only, else in every group in order; within a
group the instances are taken by ascending memory (upstream's sort.Slice; instance lists are short enough
for its insertion sort, which keeps ties in order); with no usage the first instance big enough is taken
at its first index, with usage only an instance name already in the list with an index left and memory
enough (an instance name of the group not yet in use is never opened once some is). The chosen instance is
named `<card uuid>[<group>-<position>]`, the position being the counts of the instances before it plus the
lowest free index. The card is charged one task, the instance's memory divided by the factor (above 1)
and the request's cores; the usage list is not touched (only AddPod on a pod's annotation does that), so
two pods placed in one session on one card are given the same instance (docs/findings.md).

AddPod / SubPod (a placed pod, read from `volcano.sh/vgpu-ids-new`): the MIG id is decoded
(`[group-position]`: exactly one "-" inside the brackets, an integer position; else the entry is
skipped); the group is looked up by name on the card, made the card's group in use, the position turned
into (instance, index); the index is inserted into (removed from) that instance's usage entry and the
instance's memory (over the factor) charged (returned) with one task and the entry's cores. A position
beyond the group's instances panics upstream (index -1); the reference skips the entry.
"""

from __future__ import annotations

import re

from schedcheck.reference.api.devices.config import Geometry, NvidiaConfig

MIG = "mig"
HAMI_CORE = "hami-core"
UINT_MOD = 2**64
_ATOI = re.compile(r"[+-]?[0-9]+\Z")


class MigUsage:
    """config.MigTemplateUsage: an instance name in use, its memory and the indexes taken (sorted)."""

    __slots__ = ("name", "memory", "used_index")

    def __init__(self, name: str, memory: int, used_index: list[int]) -> None:
        self.name, self.memory, self.used_index = name, memory, used_index


class MigInUse:
    __slots__ = ("index", "usage_list")

    def __init__(self, index: int = -1, usage_list: list[MigUsage] | None = None) -> None:
        self.index = index
        self.usage_list = usage_list or []

    def copy(self) -> MigInUse:
        return MigInUse(self.index, [MigUsage(u.name, u.memory, list(u.used_index)) for u in self.usage_list])


def sharing_mode(mode: str) -> str:
    """getSharingMode: mig, or hami-core for anything else (mps included)."""
    return MIG if mode == MIG else HAMI_CORE


def geometry_for_type(card_type: str, cfg: NvidiaConfig) -> tuple[Geometry, ...] | None:
    """extractGeometryFromType: the geometries of the first known entry naming a model in the type."""
    for entry in cfg.mig_geometries_list:
        if any(model in card_type for model in entry.models):
            return entry.geometries
    return None


def _position(group: Geometry, count: int, used_index: list[int], index: int) -> int:
    position = sum(group.instances[i].count for i in range(index))
    for i in range(count):
        if i not in used_index:
            return position + i
    return position


def find_position(group: Geometry, position: int) -> tuple[int, int]:
    total = 0
    for i, inst in enumerate(group.instances):
        if position < total + inst.count:
            return i, position - total
        total += inst.count
    return -1, -1


def pick_from_group(group: Geometry, usage: list[MigUsage], request: int) -> tuple[bool, int, int]:
    order = sorted(range(len(group.instances)), key=lambda i: group.instances[i].memory)
    for i in order:
        inst = group.instances[i]
        if not usage and inst.memory >= request:
            return True, _position(group, inst.count, [], i), inst.memory
        for used in usage:
            if used.name == inst.name and inst.count - len(used.used_index) > 0 and inst.memory >= request:
                return True, _position(group, inst.count, used.used_index, i), inst.memory
    return False, -1, 0


def encode_mig_id(uuid: str, group: str, position: int) -> str:
    return f"{uuid}[{group}-{position}]"


def decode_mig_id(dev_id: str) -> tuple[str, int] | None:
    start, end = dev_id.find("["), dev_id.find("]")
    if start == -1 or end == -1 or start > end:
        return None
    parts = dev_id[start + 1:end].split("-")
    if len(parts) != 2 or not _ATOI.match(parts[1]):
        return None
    return parts[0], int(parts[1])


def find_match(uuid: str, request: int, usage: MigInUse, template: tuple[Geometry, ...]) -> tuple[bool, str, int]:
    if usage.index >= 0:
        group = template[usage.index]
        fitted, position, memory = pick_from_group(group, usage.usage_list, request)
        return (True, encode_mig_id(uuid, group.group, position), memory) if fitted else (False, "", 0)
    for group in template:
        fitted, position, memory = pick_from_group(group, [], request)
        if fitted:
            return True, encode_mig_id(uuid, group.group, position), memory
    return False, "", 0


def instance_ids(uuid: str, template: tuple[Geometry, ...]) -> set[str]:
    """Every MIG id the card's geometries can name (what device.assigned-exists accepts)."""
    return {encode_mig_id(uuid, g.group, p) for g in template for p in range(sum(i.count for i in g.instances))}


def add_mig_used(dev, group_name: str, position: int) -> int | None:
    """addMigUsed: the instance's memory (0 when the group is unknown); None where upstream panics."""
    for group_index, group in enumerate(dev.mig_template):
        if group.group != group_name:
            continue
        dev.mig_usage.index = group_index
        inst_index, res_index = find_position(group, position)
        if inst_index < 0:
            return None
        inst = group.instances[inst_index]
        for used in dev.mig_usage.usage_list:
            if used.name == inst.name:
                if res_index not in used.used_index:  # insert: a duplicate leaves the list alone
                    used.used_index.append(res_index)
                    used.used_index.sort()
                return used.memory
        dev.mig_usage.usage_list.append(MigUsage(inst.name, inst.memory, [res_index]))
        return inst.memory
    return 0


def sub_mig_used(dev, group_name: str, position: int) -> int | None:
    for group_index, group in enumerate(dev.mig_template):
        if group.group != group_name:
            continue
        dev.mig_usage.index = group_index
        inst_index, res_index = find_position(group, position)
        if inst_index < 0:
            return None
        name = group.instances[inst_index].name
        for k, used in enumerate(dev.mig_usage.usage_list):
            if used.name != name:
                continue
            if res_index in used.used_index:
                used.used_index.remove(res_index)
            if not used.used_index:
                del dev.mig_usage.usage_list[k]
            return used.memory
        return 0
    return 0


def factor_of(cfg: NvidiaConfig) -> int:
    return cfg.gpu_memory_factor if cfg.gpu_memory_factor > 1 else 1

"""The nodeinfo.volcano.sh/v1alpha1 Numatopology object (volcano.sh/apis nodeinfo/v1alpha1), as the scenario
loader reads it: cluster-scoped, named as its node, written by the node's resource exporter."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from schedcheck.reference.quantity import Quantity

API_VERSION = "nodeinfo.volcano.sh/v1alpha1"
EMPTY: frozenset[int] = frozenset()


class CPUInfo(NamedTuple):
    numa: int = 0
    socket: int = 0
    core: int = 0


CPUDetails = dict  # cpu id -> CPUInfo


def cpu_list(cpus: frozenset[int]) -> list[int]:
    """CPUSet.List(): the ids in ascending order."""
    return sorted(cpus)


def format_cpuset(cpus: frozenset[int]) -> str:
    """CPUSet.String(): ascending ranges joined by commas ("0-3,6")."""
    out: list[str] = []
    ids = sorted(cpus)
    i = 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        out.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return ",".join(out)


class CPUSetSyntaxError(ValueError):
    pass


def parse_cpuset(text: str) -> frozenset[int]:
    """cpuset.Parse: "" is empty; comma-separated ids or inclusive ranges "a-b" with a <= b."""
    if text == "":
        return EMPTY
    out: set[int] = set()
    for part in text.split(","):
        bounds = part.split("-", 1)
        try:
            if len(bounds) == 1:
                out.add(_atoi(bounds[0]))
                continue
            start, end = _atoi(bounds[0]), _atoi(bounds[1])
        except ValueError:
            raise CPUSetSyntaxError(f"{part!r} is not a CPU id or a range of them") from None
        if start > end:
            raise CPUSetSyntaxError(f"invalid range {part!r} ({start} > {end})")
        if end - start > 4096:
            raise CPUSetSyntaxError(f"range {part!r} spans more than 4096 CPUs")
        out.update(range(start, end + 1))
    return frozenset(out)


def _atoi(text: str) -> int:
    """strconv.Atoi: an optional sign, then decimal digits only."""
    body = text[1:] if text[:1] in "+-" else text
    if not body.isdigit() or not body.isascii():
        raise ValueError(text)
    return int(text)


@dataclass
class PodAllocation:
    """spec.podAllocations[]: a pod the exporter saw the kubelet assign (containerAllocations not read)."""

    uid: str = ""
    name: str = ""
    namespace: str = ""


@dataclass
class NumaResource:
    """spec.numares[<resource>]: the allocatable ids and the capacity (a count, not read by the plugin)."""

    allocatable: frozenset[int] = EMPTY
    capacity: int = 0


@dataclass
class Numatopology:
    name: str
    policies: dict[str, str] = field(default_factory=dict)  # spec.policies: CPUManagerPolicy, TopologyManagerPolicy
    numa_res: dict[str, NumaResource] = field(default_factory=dict)  # spec.numares
    cpu_detail: dict[int, CPUInfo] = field(default_factory=dict)  # spec.cpuDetail, by CPU id
    res_reserved: dict[str, Quantity] = field(default_factory=dict)  # spec.resReserved
    pod_allocations: list[PodAllocation] = field(default_factory=list)  # spec.podAllocations

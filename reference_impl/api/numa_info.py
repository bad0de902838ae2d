"""A node's NUMA topology as the scheduler holds it (pkg/scheduler/api/numa_info.go, node_info.go).

The resource exporter on each node publishes a cluster-scoped `Numatopology` object named as the node
(nodeinfo.volcano.sh/v1alpha1): the kubelet's CPU manager and topology manager policies, per resource
the allocatable CPU ids (a cpuset string), each CPU's NUMA node, socket and core, the reserved
quantities, and the pods it has seen the kubelet assign. The cache keeps it as the node's `numa_info`.

At every snapshot (`refresh_numa_scheduler_info`, upstream RefreshNumaSchedulerInfoByCrd) the node's
`numa_scheduler_info` becomes a copy of it; when some pod the numa-aware plugin placed on the node in an
earlier session is not yet listed among the object's pod allocations, the CPU sets the plugin chose for
*every* recorded pod are taken out of that copy's allocatable (the pre-occupation), and the records are
kept; once every record is listed, all are dropped.

CPU sets are frozensets of CPU ids (k8s.io/utils/cpuset: `List()` is the sorted list); a resource's
sets per name are a ResNumaSets (a dict). CPU details map a CPU id to its (NUMA node, socket, core);
the helpers below mirror the kubelet's topology.CPUDetails: a CPU the details do not list reads as
NUMA node 0, socket 0, core 0 where upstream indexes the map directly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from schedcheck.reference.k8s_numa import (  # noqa: F401 (re-exported: the api's names for them)
    EMPTY,
    CPUInfo,
    CPUSetSyntaxError,
    NumaResource,
    Numatopology,
    PodAllocation,
    format_cpuset,
    parse_cpuset,
)
from schedcheck.reference.quantity import Quantity
from schedcheck.reference.util.assertion import assertf

CPU_MANAGER_POLICY = "CPUManagerPolicy"
TOPOLOGY_MANAGER_POLICY = "TopologyManagerPolicy"
DEFAULT_MAX_NODE_SCORE = 100

CPUSet = frozenset  # of int

# -- topology.CPUDetails -------------------------------------------------------------------


def detail(details: dict[int, CPUInfo], cpu: int) -> CPUInfo:
    """details[cpu], Go's zero value for a CPU the map does not hold."""
    return details.get(cpu, CPUInfo())


def numa_nodes(details: dict[int, CPUInfo]) -> frozenset[int]:
    return frozenset(info.numa for info in details.values())


def sockets(details: dict[int, CPUInfo]) -> frozenset[int]:
    return frozenset(info.socket for info in details.values())


def cores(details: dict[int, CPUInfo]) -> frozenset[int]:
    return frozenset(info.core for info in details.values())


def cpus(details: dict[int, CPUInfo]) -> frozenset[int]:
    return frozenset(details)


def cpus_in_numa_nodes(details: dict[int, CPUInfo], *ids: int) -> frozenset[int]:
    wanted = set(ids)
    return frozenset(cpu for cpu, info in details.items() if info.numa in wanted)


def cpus_in_sockets(details: dict[int, CPUInfo], *ids: int) -> frozenset[int]:
    wanted = set(ids)
    return frozenset(cpu for cpu, info in details.items() if info.socket in wanted)


def cpus_in_cores(details: dict[int, CPUInfo], *ids: int) -> frozenset[int]:
    wanted = set(ids)
    return frozenset(cpu for cpu, info in details.items() if info.core in wanted)


def cores_in_sockets(details: dict[int, CPUInfo], *ids: int) -> frozenset[int]:
    wanted = set(ids)
    return frozenset(info.core for info in details.values() if info.socket in wanted)


def keep_only(details: dict[int, CPUInfo], keep: frozenset[int]) -> dict[int, CPUInfo]:
    return {cpu: info for cpu, info in details.items() if cpu in keep}


# -- ResNumaSets ---------------------------------------------------------------------------


ResNumaSets = dict  # resource name -> frozenset of CPU ids


def res_sets_allocate(sets: dict[str, frozenset[int]], task_sets: dict[str, frozenset[int]]) -> None:
    """ResNumaSets.Allocate: take the task's ids out of each resource the node's sets hold."""
    for name, taken in task_sets.items():
        if name in sets:
            sets[name] = sets[name] - taken


def res_sets_release(sets: dict[str, frozenset[int]], task_sets: dict[str, frozenset[int]]) -> None:
    """ResNumaSets.Release: give the task's ids back to each resource the node's sets hold."""
    for name, given in task_sets.items():
        if name in sets:
            sets[name] = sets[name] | given


# -- NumatopoInfo ----------------------------------------------------------------------------


@dataclass(frozen=True)
class PodMeta:
    """The key of a pod's pre-occupation record: uid, name, namespace."""

    uid: str
    name: str
    namespace: str


@dataclass
class NumatopoInfo:
    name: str
    policies: dict[str, str] = field(default_factory=dict)
    numa_res_map: dict[str, NumaResource] = field(default_factory=dict)
    cpu_detail: dict[int, CPUInfo] = field(default_factory=dict)
    res_reserved: dict[str, Quantity] = field(default_factory=dict)
    pod_allocations: list[PodAllocation] = field(default_factory=list)

    def deep_copy(self) -> NumatopoInfo:
        return NumatopoInfo(
            self.name, dict(self.policies),
            {k: NumaResource(v.allocatable, v.capacity) for k, v in self.numa_res_map.items()},
            dict(self.cpu_detail), dict(self.res_reserved),
            [PodAllocation(p.uid, p.name, p.namespace) for p in self.pod_allocations],
        )

    def allocate(self, sets: dict[str, frozenset[int]]) -> None:
        """NumatopoInfo.Allocate: take the recorded ids out of each resource. Upstream indexes the resource map
        directly, so a record naming a resource the object lacks is a nil dereference there: the scheduler
        panics at the snapshot. A record always names cpu, even for a pod placed on a node whose object has
        no cpu entry (a Guaranteed pod without a policy on a static, non-none node gets an empty cpu set),
        so such a node crashes upstream at the next session; here it is an upstream assertion."""
        for name, taken in sets.items():
            res = self.numa_res_map.get(name)
            assertf(res is not None, f"Numatopology {self.name}: a recorded NUMA assignment names resource {name}, "
                                     f"which spec.numares lacks (upstream dereferences nil and panics)")
            if res is not None:
                res.allocatable = res.allocatable - taken

    def check_numa_pod_assigned(self, meta: PodMeta) -> bool:
        """The exporter lists the pod: by uid, or by namespace and name."""
        return any(p.uid == meta.uid or (p.name == meta.name and p.namespace == meta.namespace)
                   for p in self.pod_allocations)

    def reserved_cpus(self) -> int | None:
        """ceil(resReserved.cpu): the number of CPUs the provider keeps out, None when cpu is not reserved."""
        quantity = self.res_reserved.get("cpu")
        if quantity is None:
            return None
        return math.ceil(quantity.milli_value() / 1000)


def numa_info_from_object(obj: Numatopology) -> NumatopoInfo:
    """getNumaInfo: the cache's copy of a Numatopology object."""
    return NumatopoInfo(obj.name, dict(obj.policies),
                        {k: NumaResource(v.allocatable, v.capacity) for k, v in obj.numa_res.items()},
                        dict(obj.cpu_detail), dict(obj.res_reserved),
                        [PodAllocation(p.uid, p.name, p.namespace) for p in obj.pod_allocations])


def refresh_numa_scheduler_info(numa_info: NumatopoInfo | None,
                                unassigned: dict[PodMeta, dict[str, frozenset[int]]],
                                ) -> tuple[NumatopoInfo | None, dict[PodMeta, dict[str, frozenset[int]]]]:
    """RefreshNumaSchedulerInfoByCrd: (the session's NUMA view, the records kept). With any record the
    exporter has not listed yet, every record's sets are pre-occupied and all records kept; with none
    unlisted, all are dropped."""
    if numa_info is None:
        return None, unassigned
    view = numa_info.deep_copy()
    if not any(not numa_info.check_numa_pod_assigned(meta) for meta in unassigned):
        return view, {}
    for sets in unassigned.values():
        view.allocate(sets)
    return view, unassigned


def generate_node_res_numa_sets(nodes: dict[str, object]) -> dict[str, dict[str, frozenset[int]]]:
    """GenerateNodeResNumaSets: every NUMA-aware node's allocatable sets, by node and resource."""
    out: dict[str, dict[str, frozenset[int]]] = {}
    for name, node in nodes.items():
        info = getattr(node, "numa_scheduler_info", None)
        if info is None:
            continue
        out[name] = {res: r.allocatable for res, r in info.numa_res_map.items()}
    return out


def generate_numa_nodes(nodes: dict[str, object]) -> dict[str, list[int]]:
    """GenerateNumaNodes: every NUMA-aware node's NUMA ids, ascending."""
    out: dict[str, list[int]] = {}
    for name, node in nodes.items():
        info = getattr(node, "numa_scheduler_info", None)
        if info is not None:
            out[name] = sorted(numa_nodes(info.cpu_detail))
    return out

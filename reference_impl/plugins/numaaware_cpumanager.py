"""The numa-aware plugin's one hint provider, the CPU manager
(pkg/scheduler/plugins/numaaware/provider/cpumanager/: cpu_mng.go, cpu_assignment.go).

A container asks for CPUs only with an integer cpu request (`2`, `2000m`; `1500m` asks for none).
Reserved CPUs: ceil(resReserved.cpu) of them, taken by topology from all the node's CPUs; they are
never offered. Hints: every subset of the node's NUMA ids (by size, then lexicographic) holding at
least the requested number of *available* CPUs is a hint; the hints whose size equals the smallest
subset that could hold the request on the whole node (free or not) are preferred.

Assignment (Allocate): with a hint, up to the request is taken by topology from the available CPUs of
the hint's NUMA nodes, then the rest from whatever is left; a failed take answers the empty set.

Taking by topology (takeByTopology, an older copy of the kubelet's accumulator, with its quirks kept):
- whole sockets first, when the request is at least the CPUs per socket: the candidates are the ids
  that are both a free socket id and a free CPU id (upstream intersects the two sets), and a
  candidate's free CPUs are taken whether or not the socket is whole;
- then whole cores while at least the CPUs per core are still needed, cores ordered socket by socket:
  the sockets sorted by Go's sort.Slice with "fewer free cores, or lower id" (not a strict weak
  order), starting from Go's map order of the socket ids, which is random; the reference starts from
  ascending ids, so with several sockets upstream may pick other cores than the reference does;
- then single CPUs, cores sorted by Go's sort.Slice with a comparator ORing five tests (socket
  already used more, socket with fewer free, core with fewer free, lower socket, lower core), not an
  order either: the result is what Go's pdqsort makes of it (reference_impl/util/go_sort.py).
"""

from __future__ import annotations

from schedcheck.reference.api.numa_info import (
    EMPTY,
    CPUInfo,
    NumatopoInfo,
    cores,
    cores_in_sockets,
    cpus,
    cpus_in_cores,
    cpus_in_numa_nodes,
    cpus_in_sockets,
    detail,
    keep_only,
    numa_nodes,
    sockets,
)
from schedcheck.reference.k8s import Container
from schedcheck.reference.plugins.numaaware_policy import TopologyHint, iterate_bit_masks, mask_bits, mask_count
from schedcheck.reference.quantity import Quantity
from schedcheck.reference.util.go_sort import go_sort_slice

CPU = "cpu"


class TakeError(Exception):
    pass


class CPUTopology:
    def __init__(self, details: dict[int, CPUInfo]) -> None:
        self.details = details
        self.num_cpus = len(details)
        self.num_cores = len({(info.socket, info.core) for info in details.values()})  # getPhysicalCoresNum
        self.num_sockets = len(sockets(details))

    def cpus_per_core(self) -> int:
        return 0 if self.num_cores == 0 else self.num_cpus // self.num_cores

    def cpus_per_socket(self) -> int:
        return 0 if self.num_sockets == 0 else self.num_cpus // self.num_sockets


def guaranteed_cpus(container: Container) -> int:
    """The whole number of CPUs the container requests, 0 for a fractional (or no) request."""
    quantity = container.requests.get(CPU, Quantity(0))
    value, milli = quantity.value(), quantity.milli_value()
    if value * 1000 != milli:
        return 0
    return value


class _Accumulator:
    def __init__(self, topo: CPUTopology, available: frozenset[int], num_cpus: int) -> None:
        self.topo = topo
        self.details = keep_only(topo.details, available)
        self.needed = num_cpus
        self.result: frozenset[int] = EMPTY

    def take(self, taken: frozenset[int]) -> None:
        self.result = self.result | taken
        self.details = keep_only(self.details, cpus(self.details) - self.result)
        self.needed -= len(taken)

    def free_sockets(self) -> list[int]:
        return sorted(sockets(self.details) & cpus(self.details))

    def free_cores(self) -> list[int]:
        socket_ids = sorted(sockets(self.details))  # upstream: Go map order (random)
        free = {s: len(cores_in_sockets(self.details, s) & cpus(self.details)) for s in socket_ids}
        go_sort_slice(socket_ids, lambda i, j: free[i] < free[j] or i < j)
        out: list[int] = []
        for s in socket_ids:
            out.extend(sorted(cores_in_sockets(self.details, s) & cpus(self.details)))
        return out

    def free_cpus(self) -> list[int]:
        topo = self.topo.details
        core_ids = sorted(cores(self.details))

        def first_socket(core: int) -> int:
            return topo[min(cpus_in_cores(topo, core))].socket

        def less(i: int, j: int) -> bool:
            i_socket, j_socket = first_socket(i), first_socket(j)
            return (len(cpus_in_sockets(topo, i_socket) & self.result)
                    > len(cpus_in_sockets(topo, j_socket) & self.result)
                    or len(cpus_in_sockets(self.details, i_socket)) < len(cpus_in_sockets(self.details, j_socket))
                    or len(cpus_in_cores(self.details, i)) < len(cpus_in_cores(self.details, j))
                    or i_socket < j_socket
                    or i < j)

        go_sort_slice(core_ids, less)
        out: list[int] = []
        for core in core_ids:
            out.extend(sorted(cpus_in_cores(self.details, core)))
        return out

    def needs(self, n: int) -> bool:
        return self.needed >= n

    def satisfied(self) -> bool:
        return self.needed < 1

    def failed(self) -> bool:
        return self.needed > len(self.details)


def take_by_topology(topo: CPUTopology, available: frozenset[int], num_cpus: int) -> frozenset[int]:
    acc = _Accumulator(topo, available, num_cpus)
    if acc.satisfied():
        return acc.result
    if acc.failed():
        raise TakeError("not enough cpus available to satisfy request")
    if acc.needs(topo.cpus_per_socket()):
        for s in acc.free_sockets():
            acc.take(cpus_in_sockets(acc.details, s))
            if acc.satisfied():
                return acc.result
            if not acc.needs(topo.cpus_per_socket()):
                break
    if acc.needs(topo.cpus_per_core()):
        for c in acc.free_cores():
            acc.take(cpus_in_cores(acc.details, c))
            if acc.satisfied():
                return acc.result
            if not acc.needs(topo.cpus_per_core()):
                break
    for c in acc.free_cpus():
        if acc.needs(1):
            acc.take(frozenset((c,)))
        if acc.satisfied():
            return acc.result
    raise TakeError("failed to allocate cpus")


def _reserved(topo: CPUTopology, info: NumatopoInfo) -> frozenset[int]:
    count = info.reserved_cpus()
    if count is None:
        return EMPTY
    try:
        return take_by_topology(topo, cpus(topo.details), count)
    except TakeError:
        return EMPTY


def generate_cpu_topology_hints(available: frozenset[int], details: dict[int, CPUInfo],
                                request: int) -> list[TopologyHint]:
    nodes = sorted(numa_nodes(details))
    min_size = [len(nodes)]
    found: list[tuple[int, bool]] = []

    def visit(mask: int) -> None:
        in_mask = cpus_in_numa_nodes(details, *mask_bits(mask))
        if len(in_mask) >= request and mask_count(mask) < min_size[0]:
            min_size[0] = mask_count(mask)
        matching = sum(1 for c in available if mask >> detail(details, c).numa & 1)
        if matching < request:
            return
        found.append((mask, False))

    iterate_bit_masks(nodes, visit)
    return [TopologyHint(mask, mask_count(mask) == min_size[0]) for mask, _ in found]


def get_topology_hints(container: Container, info: NumatopoInfo,
                       res_sets: dict[str, frozenset[int]]) -> dict[str, list[TopologyHint]] | None:
    """GetTopologyHints: None (no preference) for a container without a cpu request, with a fractional
    one, or on a node without cpu sets; else {cpu: hints}."""
    if CPU not in container.requests:
        return None
    request = guaranteed_cpus(container)
    if request == 0:
        return None
    topo = CPUTopology(info.cpu_detail)
    reserved = _reserved(topo, info)
    if CPU not in res_sets:
        return None
    available = res_sets[CPU] - reserved
    return {CPU: generate_cpu_topology_hints(available, info.cpu_detail, request)}


def allocate(container: Container, best: TopologyHint, info: NumatopoInfo,
             res_sets: dict[str, frozenset[int]]) -> dict[str, frozenset[int]]:
    """Allocate: the container's CPU ids ({cpu: set}); the empty set when a take fails."""
    topo = CPUTopology(info.cpu_detail)
    reserved = _reserved(topo, info)
    request = guaranteed_cpus(container)
    available = res_sets.get(CPU, EMPTY) - reserved
    result: frozenset[int] = EMPTY
    if best.affinity is not None:
        aligned: frozenset[int] = EMPTY
        for numa in mask_bits(best.affinity):
            aligned = aligned | (available & cpus_in_numa_nodes(topo.details, numa))
        try:
            result = result | take_by_topology(topo, aligned, min(request, len(aligned)))
        except TakeError:
            return {CPU: EMPTY}
    try:
        result = result | take_by_topology(topo, available - result, request - len(result))
    except TakeError:
        return {CPU: EMPTY}
    return {CPU: result}

"""Read the nodeinfo.volcano.sh/v1alpha1 Numatopology kind (the numa-aware plugin's view of a node's CPUs);
objects.py registers the reader and schema here.

Read: metadata.name (the node's name; cluster-scoped), spec.policies (CPUManagerPolicy,
TopologyManagerPolicy), spec.numares (per resource: allocatable, a cpuset string such as "0-3,8";
capacity, an integer), spec.cpuDetail (CPU id -> numa, socket, core), spec.resReserved (resource ->
quantity), spec.podAllocations[] (uid, name, namespace; containerAllocations is accepted and not read,
as upstream's scheduler does not read it). Upstream logs and carries on past a cpuset, CPU id or
reserved quantity that does not parse (an empty set, CPU 0, no reservation); here each is a one-line
error, as is a NUMA id outside 0-63 (upstream's bitmask cannot hold it and its callers then
dereference a nil mask), and more than 8 distinct NUMA nodes on one object (upstream has no bound; its
hint provider tries all 2^n subsets for every container on every node).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedcheck.reference import k8s
from schedcheck.reference.k8s_numa import (
    API_VERSION,
    CPUInfo,
    CPUSetSyntaxError,
    NumaResource,
    Numatopology,
    PodAllocation,
    parse_cpuset,
)
from schedcheck.scenario.errors import describe
from schedcheck.scenario.fields import Fields

__all__ = ["API_VERSION", "SCHEMAS", "read_numatopology", "numa_warnings"]

LEAF = None
_META_KEYS = ["name", "namespace", "uid", "labels", "annotations", "creationTimestamp", "deletionTimestamp",
              "resourceVersion", "generation", "managedFields", "selfLink", "ownerReferences", "finalizers",
              "generateName", "deletionGracePeriodSeconds"]
POLICY_KEYS = ("CPUManagerPolicy", "TopologyManagerPolicy")
SCHEMAS: dict[str, Any] = {
    "Numatopology": {"metadata": dict.fromkeys(_META_KEYS), "spec": {
        "policies": dict.fromkeys(POLICY_KEYS),
        "numares": LEAF,  # resource -> {allocatable, capacity}: checked by the reader
        "cpuDetail": LEAF,  # CPU id -> {numa, socket, core}: checked by the reader
        "resReserved": LEAF,
        "podAllocations": [dict.fromkeys(["uid", "name", "namespace", "containerAllocations"])],
    }},
}
MAX_NUMA_ID = 63
MAX_NUMA_NODES = 8  # upstream has no bound, but 2^n subsets per container and node: machines have 8 at most


def read_numatopology(f: Fields, doc: Mapping[str, Any], name: str, _ns: str, _uid: str,
                      out: k8s.ClusterObjects) -> None:
    spec = f.mapping(doc.get("spec"), "spec")
    policies = f.str_map(spec.get("policies"), "spec.policies")
    numa_res: dict[str, NumaResource] = {}
    for resource, value in f.mapping(spec.get("numares"), "spec.numares").items():
        field = f"spec.numares.{resource}"
        entry = f.mapping(value, field)
        for key in entry:
            if key not in ("allocatable", "capacity"):
                f.fail(f"{field}.{key}", "unknown field (expected allocatable and capacity)")
        text = f.string(entry.get("allocatable"), f"{field}.allocatable")
        try:
            allocatable = parse_cpuset(text)
        except CPUSetSyntaxError as err:
            f.fail(f"{field}.allocatable", f"{describe(text)} is not a cpuset: {err}")
        capacity = f.integer(entry.get("capacity"), f"{field}.capacity", default=0, minimum=0, bits=64)
        numa_res[resource] = NumaResource(allocatable, capacity)
    cpu_detail: dict[int, CPUInfo] = {}
    for key, value in f.mapping(spec.get("cpuDetail"), "spec.cpuDetail").items():
        field = f"spec.cpuDetail.{key}"
        if not key.isascii() or not key.isdigit():
            f.fail(field, f"the key must be a CPU id (a non-negative integer), got {describe(key)}")
        entry = f.mapping(value, field)
        for sub in entry:
            if sub not in ("numa", "socket", "core"):
                f.fail(f"{field}.{sub}", "unknown field (expected numa, socket and core)")
        numa = f.integer(entry.get("numa"), f"{field}.numa", default=0, minimum=0)
        if numa > MAX_NUMA_ID:
            f.fail(f"{field}.numa", f"NUMA ids go from 0 to {MAX_NUMA_ID} (a 64-bit mask), got {numa}")
        cpu = int(key)
        if cpu in cpu_detail:
            f.fail(field, f"CPU {cpu} is listed twice")
        cpu_detail[cpu] = CPUInfo(numa, f.integer(entry.get("socket"), f"{field}.socket", default=0, minimum=0),
                                  f.integer(entry.get("core"), f"{field}.core", default=0, minimum=0))
    numa_ids = {info.numa for info in cpu_detail.values()}
    if len(numa_ids) > MAX_NUMA_NODES:
        f.fail("spec.cpuDetail", f"{len(numa_ids)} NUMA nodes; at most {MAX_NUMA_NODES} are read (the CPU manager "
                                 f"tries every subset of them for every container on every node)")
    res_reserved = f.resources(spec.get("resReserved"), "spec.resReserved")
    allocations = []
    for i, item in enumerate(f.sequence(spec.get("podAllocations"), "spec.podAllocations")):
        field = f"spec.podAllocations[{i}]"
        entry = f.mapping(item, field)
        allocations.append(PodAllocation(f.string(entry.get("uid"), f"{field}.uid"),
                                         f.string(entry.get("name"), f"{field}.name"),
                                         f.string(entry.get("namespace"), f"{field}.namespace")))
    out.numatopologies.append(Numatopology(name, policies, numa_res, cpu_detail, res_reserved, allocations))


def numa_warnings(objects: k8s.ClusterObjects, warnings: list[str]) -> None:
    """A Numatopology naming no node is never seen by a session (upstream's placeholder node is not Ready)."""
    nodes = {node.name for node in objects.nodes}
    orphans = [t.name for t in objects.numatopologies if t.name not in nodes]
    if orphans:
        warnings.append(f"Numatopology {', '.join(orphans)}: no Node of that name; ignored")

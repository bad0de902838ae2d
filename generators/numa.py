"""What the numa-aware plugin reads: Numatopology objects (a node's CPU ids, their NUMA node, socket and core,
the kubelet's CPU-manager and topology-manager policies, the ids still free, the reserved CPUs, the pods the
kubelet already pinned) and Guaranteed pods with whole-CPU requests and a `volcano.sh/numa-topology-policy`.

Drawn only when the conf has numa-aware (scenarios.py). Some nodes get an object; its CPU count is the node's
whole allocatable CPUs, split evenly over 1, 2 or 4 NUMA nodes (one socket each, or two NUMA nodes per
socket), with or without two hardware threads per core, numbered as Linux does (the second threads after
all the first ones). Running Guaranteed pods with whole CPUs are pinned to the lowest free ids and listed
among the pod allocations, as the resource exporter reports them. Most jobs' pending pods become
Guaranteed (limits equal to requests, the cpu rounded up to whole CPUs), and most such jobs carry a policy,
usually one of the nodes'. Shrinks to no object and no policy.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st

from schedcheck.generators.quantities import choice, rarely, sometimes
from schedcheck.generators.vocabulary import GROUP_NAME
from schedcheck.reference.k8s_numa import format_cpuset
from schedcheck.reference.quantity import Quantity

API_VERSION = "nodeinfo.volcano.sh/v1alpha1"
POLICY_KEY = "volcano.sh/numa-topology-policy"
TOPOLOGY_POLICIES = ("single-numa-node", "best-effort", "restricted", "none")
NUMA_COUNTS = (2, 1, 4)
MAX_CPUS = 64  # larger nodes are described with their first 64 CPUs only (the generator's bound)


def _cpus_of(quantity: str) -> int:
    """The whole CPUs of a node's allocatable cpu ("7500m" -> 7)."""
    return math.floor(Quantity.parse(quantity).as_fraction())


def _whole_cpus(quantity: str) -> int:
    """A pod's cpu request rounded up to whole CPUs (at least 1)."""
    return max(1, math.ceil(Quantity.parse(quantity).as_fraction()))


@st.composite
def cpu_details(draw: st.DrawFn, total: int) -> dict[str, dict[str, int]]:
    """cpuDetail for `total` CPUs: NUMA nodes, sockets and (hyper-threaded or not) cores."""
    numas = draw(choice(tuple(n for n in NUMA_COUNTS if total % n == 0))) if total > 1 else 1
    smt = 2 if total % (2 * numas) == 0 and draw(sometimes(40)) else 1
    numa_per_socket = 2 if numas == 4 and draw(rarely(30)) else 1
    cores = total // smt
    per_numa = cores // numas
    out = {}
    for cpu in range(total):
        core = cpu % cores  # Linux: thread siblings are cpu and cpu + cores
        numa = core // per_numa
        out[str(cpu)] = {"numa": numa, "socket": numa // numa_per_socket, "core": core}
    return out


def _integer_cpu(quantity: str) -> bool:
    value = Quantity.parse(quantity).as_fraction()
    return value > 0 and value.denominator == 1


def _guaranteed_cpus(pod: dict[str, Any]) -> int:
    """The whole CPUs the static CPU manager pins for a pod: a Guaranteed pod's containers with whole-CPU
    limits (0 for any other pod)."""
    spec = pod["spec"]
    total = 0
    for container in [*spec.get("containers", []), *spec.get("initContainers", [])]:
        resources = container.get("resources", {})
        requests, limits = resources.get("requests", {}), resources.get("limits", {})
        if not {"cpu", "memory"} <= set(limits) or any(requests.get(k, limits[k]) != limits[k] for k in limits):
            return 0
    for container in spec.get("containers", []):
        cpu = container["resources"]["limits"]["cpu"]
        if _integer_cpu(cpu):
            total += _whole_cpus(cpu)
    return total


@st.composite
def numatopology(draw: st.DrawFn, node: dict[str, Any], pinned: list[tuple[dict[str, Any], int]]) -> dict[str, Any]:
    """The object of one node; `pinned` are its running Guaranteed pods and their whole CPUs."""
    name = node["metadata"]["name"]
    total = min(MAX_CPUS, max(1, _cpus_of(node["status"]["allocatable"]["cpu"])))
    details = draw(cpu_details(total))
    free = list(range(total))
    allocations = []
    for pod, count in pinned:
        taken, free = free[:count], free[count:]
        if taken:
            allocations.append({"uid": pod["metadata"].get("uid", f"{pod['metadata']['namespace']}-"
                                                                  f"{pod['metadata']['name']}"),
                                "name": pod["metadata"]["name"], "namespace": pod["metadata"]["namespace"]})
    if free and draw(rarely(15)):  # the exporter's view lags: some ids already gone
        free = free[:-draw(st.integers(1, len(free)))] or free[:1]
    spec: dict[str, Any] = {
        "policies": {"CPUManagerPolicy": "static" if draw(st.integers(0, 99)) < 92 else "none",
                     "TopologyManagerPolicy": draw(choice(TOPOLOGY_POLICIES))},
        "numares": {"cpu": {"allocatable": format_cpuset(frozenset(free)), "capacity": total}},
        "cpuDetail": details,
    }
    if total > 2 and draw(rarely(20)):
        spec["resReserved"] = {"cpu": draw(choice(("1", "500m", "2")))}
    if allocations:
        spec["podAllocations"] = allocations
    return {"apiVersion": API_VERSION, "kind": "Numatopology", "metadata": {"name": name}, "spec": spec}


def _make_guaranteed(pod: dict[str, Any]) -> None:
    """Limits equal to requests, the cpu rounded up to whole CPUs, memory kept (1Gi when there is none). The
    dicts are replaced, never changed in place: a job draft may share its request mapping between pods."""
    for container in pod["spec"].get("containers", []):
        resources = dict(container.get("resources", {}))
        requests = dict(resources.get("requests", {}))
        requests["cpu"] = str(_whole_cpus(requests.get("cpu", "1")))
        requests.setdefault("memory", "1Gi")
        resources["requests"] = requests
        resources["limits"] = {"cpu": requests["cpu"], "memory": requests["memory"]}
        container["resources"] = resources


def apply_numa(draw: st.DrawFn, node_docs: list[dict[str, Any]], job_docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Make some pending jobs Guaranteed (with a policy, mostly), and return the Numatopology objects."""
    pods_by_group: dict[str, list[dict[str, Any]]] = {}
    for doc in job_docs:
        if doc["kind"] == "Pod":
            group = doc["metadata"].get("annotations", {}).get(GROUP_NAME, "")
            pods_by_group.setdefault(f"{doc['metadata']['namespace']}/{group}", []).append(doc)
    for doc in job_docs:  # some running pods with whole CPUs were Guaranteed all along (requests unchanged)
        containers = doc["spec"].get("containers", []) if doc["kind"] == "Pod" else []
        if doc["kind"] == "Pod" and doc["spec"].get("nodeName") and containers and draw(sometimes(40)) and all(
                _integer_cpu(c.get("resources", {}).get("requests", {}).get("cpu", "0.5"))
                and "memory" in c.get("resources", {}).get("requests", {}) for c in containers) \
                and not doc["spec"].get("initContainers"):
            for c in containers:
                requests = c["resources"]["requests"]
                c["resources"] = {**c["resources"], "limits": {"cpu": requests["cpu"], "memory": requests["memory"]}}
    topologies = []
    for node in node_docs:
        if not draw(sometimes(70)):
            continue
        pinned = [(p, n) for p in job_docs if p["kind"] == "Pod" and p["spec"].get("nodeName") == node["metadata"]["name"]
                  for n in [_guaranteed_cpus(p)] if n]
        topologies.append(draw(numatopology(node, pinned)))
    policies = tuple(dict.fromkeys(t["spec"]["policies"]["TopologyManagerPolicy"] for t in topologies)) or ("none",)
    for key in sorted(pods_by_group):
        pods = [p for p in pods_by_group[key] if not p["spec"].get("nodeName")]
        if not pods or not draw(sometimes(70)):
            continue
        for pod in pods:
            _make_guaranteed(pod)
        if draw(sometimes(80)):
            policy = draw(choice(policies)) if draw(sometimes(85)) else draw(choice(TOPOLOGY_POLICIES))
            for pod in pods:
                pod["metadata"].setdefault("annotations", {})[POLICY_KEY] = policy
    return topologies

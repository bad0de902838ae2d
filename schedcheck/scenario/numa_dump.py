"""Numatopology objects written back as nodeinfo.volcano.sh/v1alpha1 documents (numa_objects.py's counterpart)."""

from __future__ import annotations

from typing import Any

from schedcheck.reference.k8s_numa import API_VERSION, Numatopology, format_cpuset


def numatopology_document(topo: Numatopology) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if topo.policies:
        spec["policies"] = dict(topo.policies)
    if topo.numa_res:
        spec["numares"] = {name: {"allocatable": format_cpuset(res.allocatable), "capacity": res.capacity}
                           for name, res in topo.numa_res.items()}
    if topo.cpu_detail:
        spec["cpuDetail"] = {str(cpu): {"numa": info.numa, "socket": info.socket, "core": info.core}
                             for cpu, info in sorted(topo.cpu_detail.items())}
    if topo.res_reserved:
        spec["resReserved"] = {name: str(q) for name, q in topo.res_reserved.items()}
    if topo.pod_allocations:
        spec["podAllocations"] = [{k: v for k, v in (("uid", p.uid), ("name", p.name), ("namespace", p.namespace))
                                   if v} for p in topo.pod_allocations]
    return {"apiVersion": API_VERSION, "kind": "Numatopology", "metadata": {"name": topo.name}, "spec": spec}

"""Helpers shared by several plugins (pkg/scheduler/plugins/util)."""

from __future__ import annotations

from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.resource_info import CPU, IGNORED_DEVICES, MEMORY, PODS, Resource, is_scalar_resource_name


def format_resource_names(prefix: str, verb: str, names: list[str]) -> str:
    """plugins/util FormatResourceNames: "prefix: verb a, verb b"."""
    if not names:
        return prefix
    return f"{prefix}: " + ", ".join(f"{verb} {name}" for name in names)


def inqueue_resource(job: JobInfo, allocated: Resource) -> Resource:
    """plugins/util GetInqueueResource: per dimension named in minResources, max(min - allocated, 0).

    A scalar that `allocated` lacks keeps the full minimum; count quotas, non-scalar names
    (e.g. ephemeral-storage) and ignored devices are skipped.
    """
    assert job.pod_group is not None and job.pod_group.min_resources is not None
    names = job.pod_group.min_resources
    minimum = Resource.from_resource_list(names)
    out = Resource()
    for name in names:
        if name == CPU:
            out.milli_cpu = max(minimum.milli_cpu - allocated.milli_cpu, 0.0)
        elif name == MEMORY:
            out.memory = max(minimum.memory - allocated.memory, 0.0)
        elif name == PODS:
            reserved = minimum.get(PODS) - allocated.get(PODS)
            if reserved > 0:
                out.set_scalar(PODS, reserved)
        elif _reservable_scalar(name):
            _reserve_scalar(out, name, minimum.get(name), allocated)
    return out


def _reservable_scalar(name: str) -> bool:
    if name.startswith("count/") or not is_scalar_resource_name(name):
        return False
    return not any(device and device in name for device in IGNORED_DEVICES)


def _reserve_scalar(out: Resource, name: str, minimum: float, allocated: Resource) -> None:
    if out.scalars is None:
        out.scalars = {}
    if allocated.scalars is None or name not in allocated.scalars:
        out.scalars[name] = minimum
    elif minimum - allocated.scalars[name] > 0:
        out.scalars[name] = minimum - allocated.scalars[name]

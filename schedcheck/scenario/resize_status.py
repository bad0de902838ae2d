"""A pod's in-place resize status (InPlacePodVerticalScaling, GA and locked on in k8s v1.36.1;
InPlacePodLevelResourcesVerticalScaling, beta and on).

Read: `status.containerStatuses[]` and `status.initContainerStatuses[]` by `name` (`resources.requests` /
`.limits`, what the kubelet actuated; `allocatedResources`, what it admitted), and at pod level
`status.resources` and `status.allocatedResources`. The pod's PodResizePending condition (reason Infeasible)
is read with the other conditions. Who counts what (reference_impl/util/pod_resources.py,
reference_impl/api/task_info.py):
- Volcano's task request (GetPodResourceRequest) and limit (GetPodResourceLimit): the containers' and
  sidecars' status; never the pod-level status;
- the k8s NodeInfo sums nodeorder's scorers read (PodInfo.CalculateResource): the containers', sidecars' and
  pod-level status; the scorers' count of the incoming pod: the spec alone.

A status entry is attached to the container of the same name in the matching list (Volcano looks regular
containers up in containerStatuses and sidecars in initContainerStatuses; Kubernetes' helper merges both
lists, so an entry filed under the other list would count for one and not the other: the kubelet never
writes one, and it is a one-line error here, as is an entry naming no container or a name given twice).
The other fields of a status entry (state, ready, image, restartCount, ...) are the kubelet's report and no
scheduler code reads them: they are read without a warning. Status resources are not defaulted (the kubelet
writes what it applied; API defaulting is for the spec).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedcheck.reference import k8s
from schedcheck.scenario.fields import Fields

_RESOURCES = {"requests": None, "limits": None}
# The kubelet's report: no scheduler code reads these (LEAF is None in the schema tables)
_REPORTED = ["state", "lastState", "ready", "restartCount", "image", "imageID", "containerID", "started",
             "volumeMounts", "user", "allocatedResourcesStatus", "stopSignal"]
CONTAINER_STATUS = {"name": None, "resources": _RESOURCES, "allocatedResources": None,
                    **dict.fromkeys(_REPORTED)}
STATUS_SCHEMA = {
    "containerStatuses": [CONTAINER_STATUS],
    "initContainerStatuses": [CONTAINER_STATUS],
    "resources": _RESOURCES,
    "allocatedResources": None,
}


def _requirements(f: Fields, value: Any, field: str) -> k8s.PodResources:
    doc = f.mapping(value, field)
    return k8s.PodResources(requests=f.resources(doc.get("requests"), f"{field}.requests"),
                            limits=f.resources(doc.get("limits"), f"{field}.limits"))


def _attach(f: Fields, status: Mapping[str, Any], key: str, own: list[k8s.Container],
            other: list[k8s.Container], own_list: str, other_list: str) -> None:
    by_name = {c.name: c for c in own}
    other_names = {c.name for c in other}
    seen: set[str] = set()
    for i, item in enumerate(f.sequence(status.get(key), f"status.{key}")):
        field = f"status.{key}[{i}]"
        entry = f.mapping(item, field)
        name = f.string(entry.get("name"), f"{field}.name", required=True)
        if name in seen:
            f.fail(f"{field}.name", f"container {name!r} has two entries in status.{key}")
        seen.add(name)
        container = by_name.get(name)
        if container is None:
            where = f" (it is in {other_list}: the kubelet files its status under status." \
                    f"{'initContainerStatuses' if key == 'containerStatuses' else 'containerStatuses'})" \
                if name in other_names else ""
            f.fail(f"{field}.name", f"names no container of {own_list}{where}")
        if entry.get("resources") is not None:
            container.status_resources = _requirements(f, entry["resources"], f"{field}.resources")
        container.allocated_resources = f.resources(entry.get("allocatedResources"), f"{field}.allocatedResources")


def read_resize_status(f: Fields, status: Mapping[str, Any], containers: list[k8s.Container],
                       init_containers: list[k8s.Container]) -> tuple[k8s.PodResources | None, k8s.ResourceList]:
    """Attach the containers' status resources; return the pod-level status.resources and allocatedResources."""
    _attach(f, status, "containerStatuses", containers, init_containers, "spec.containers", "spec.initContainers")
    _attach(f, status, "initContainerStatuses", init_containers, containers, "spec.initContainers",
            "spec.containers")
    pod_level = None
    if status.get("resources") is not None:
        pod_level = _requirements(f, status["resources"], "status.resources")
    return pod_level, f.resources(status.get("allocatedResources"), "status.allocatedResources")

"""Warnings on the objects read, taken together.

Names that point at no object (queues, PodGroups, nodes, PriorityClasses)
and phases that are none of their kind's; `listing` shortens the names in
any aggregated warning.
"""

from __future__ import annotations

from collections import defaultdict

from schedcheck.reference import k8s

_POD_PHASES = {"Pending", "Running", "Succeeded", "Failed", "Unknown"}
POD_GROUP_PHASES = {"Pending", "Inqueue", "Running", "Unknown", "Completed"}
_SHOWN = 8  # names or fields listed in one aggregated warning


def listing(names: list[str]) -> str:
    shown = ", ".join(names[:_SHOWN])
    return shown + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")


def reference_warnings(objects: k8s.ClusterObjects, warnings: list[str]) -> None:
    """Warn, once per missing target, about names that point at no object."""
    # The scheduler creates the `default` and `root` queues at start-up when they are absent.
    queues = {q.name for q in objects.queues} | {"default", "root"}
    groups = {g.key for g in objects.pod_groups}
    nodes = {n.name for n in objects.nodes}
    missing: dict[tuple[str, str], list[str]] = defaultdict(list)
    for group in objects.pod_groups:
        if group.queue not in queues:
            missing[("queue", group.queue)].append(f"PodGroup {group.key}")
    for pod in objects.pods:
        group = pod.annotations.get(k8s.GROUP_NAME_ANNOTATION)
        if group and f"{pod.namespace}/{group}" not in groups:
            missing[("podgroup", f"{pod.namespace}/{group}")].append(f"Pod {pod.key}")
        elif (
            not group
            and pod.scheduler_name == k8s.DEFAULT_SCHEDULER_NAME
            and pod.phase == "Pending"
            and not pod.node_name
        ):
            missing[("nogroup", "")].append(f"Pod {pod.key}")
        if pod.node_name and pod.node_name not in nodes and pod.phase not in ("Succeeded", "Failed"):
            missing[("node", pod.node_name)].append(f"Pod {pod.key}")
    consequence = {
        "queue": "upstream leaves a job whose queue is missing out of the session, so it is never scheduled",
        "podgroup": "its pods belong to no schedulable job (upstream skips a job without its PodGroup)",
        "node": "upstream holds its pods on an uninitialised node, which is NotReady and left out of the snapshot",
    }
    for (what, target), users in missing.items():
        if what == "nogroup":
            warnings.append(
                f"{listing(users)}: no {k8s.GROUP_NAME_ANNOTATION} annotation, so no job; in a cluster Volcano's "
                "controller would create a PodGroup, here the pod is never scheduled"
            )
        else:
            warnings.append(
                f"{what} {target}, named by {listing(users)}, is not among the objects: {consequence[what]}"
            )
    for pod in objects.pods:
        if pod.phase not in _POD_PHASES:
            warnings.append(
                f"Pod {pod.key}: status.phase {pod.phase} is no pod phase; upstream treats the task as Unknown"
            )
    for group in objects.pod_groups:
        if group.phase and group.phase not in POD_GROUP_PHASES:
            warnings.append(f"PodGroup {group.key}: status.phase {group.phase} is no PodGroup phase")
    _priority_class_warnings(objects, warnings)


def _priority_class_warnings(objects: k8s.ClusterObjects, warnings: list[str]) -> None:
    classes = {c.name for c in objects.priority_classes}
    defaults = [c for c in objects.priority_classes if c.global_default]
    if len(defaults) > 1:
        warnings.append(
            f"several global default PriorityClasses ({', '.join(c.name for c in defaults)}); "
            f"upstream keeps the last one it sees ({defaults[-1].name})"
        )
    fallback = f"the global default's value ({defaults[-1].value}, {defaults[-1].name})" if defaults else "0"
    users: dict[str, list[str]] = defaultdict(list)
    for group in objects.pod_groups:
        if group.priority_class_name and group.priority_class_name not in classes:
            users[group.priority_class_name].append(f"PodGroup {group.key}")
    for pod in objects.pods:  # a pod with spec.priority set needs no class
        if pod.priority is None and pod.priority_class_name and pod.priority_class_name not in classes:
            users[pod.priority_class_name].append(f"Pod {pod.key}")
    for name, names in users.items():
        warnings.append(
            f"priorityClassName {name}, named by {listing(names)}, has no PriorityClass among the objects: "
            f"it gets {fallback}"
        )

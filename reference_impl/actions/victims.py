"""Victim helpers shared by preempt and reclaim.

- ValidateVictims (pkg/scheduler/util/scheduler_helper.go): the node's FutureIdle plus the victims'
  requests must cover the preemptor's InitResreq; an empty victim list passes when FutureIdle alone
  suffices.
- PodPriority (pkg/scheduler/actions/preempt/preempt.go): the pod's spec.priority, 0 when unset
  (not the task's priority, whose default is 1).
- podTerminatingByPreemption (preempt.go): deleting, and the first DisruptionTarget condition is
  True with reason PreemptionByScheduler.

This module registers no action.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.resource_info import Zero
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.k8s import Pod

DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
PREEMPT_NEVER = "Never"

TaskFilter = Callable[[TaskInfo], bool]


def validate_victims(preemptor: TaskInfo, node: NodeInfo, victims: Iterable[TaskInfo] | None) -> bool:
    """ValidateVictims: True when FutureIdle + Σ victims.Resreq >= preemptor.InitResreq (Zero)."""
    future_idle = node.future_idle()
    for victim in victims or ():
        future_idle.add(victim.resreq)
    return preemptor.init_resreq.less_equal(future_idle, Zero)


def clone_filtered_tasks(node: NodeInfo, task_filter: TaskFilter | None) -> list[TaskInfo]:
    """Clones of the node's tasks that pass the filter (normalPreempt / SelectVictimsOnNode)."""
    if task_filter is None:
        return [task.clone() for task in node.tasks.values()]
    return [task.clone() for task in node.tasks.values() if task_filter(task)]


def guided_order(ssn: Any, tasks: list[TaskInfo]) -> list[TaskInfo]:
    """Upstream lists a node's tasks in Go map order (random), and plugins such as gang offer the
    first of them as victims. The reference keeps snapshot order; a guided replay (conform) puts the
    implementation's own victims first, which is one of upstream's legal orders."""
    preferred = getattr(ssn.tie_chooser, "preferred_victims", None)
    if preferred is None:
        return tasks
    chosen = preferred(ssn)
    return sorted(tasks, key=lambda task: task.key not in chosen) if chosen else tasks


def pod_priority(pod: Pod) -> int:
    """PodPriority: spec.priority, or 0 for a pod created without one."""
    return pod.priority if pod.priority is not None else 0


def preemption_policy_never(task: TaskInfo) -> bool:
    """spec.preemptionPolicy == Never."""
    return task.pod.preemption_policy == PREEMPT_NEVER


def pod_terminating_by_preemption(pod: Pod) -> bool:
    """podTerminatingByPreemption: only the first DisruptionTarget condition is consulted."""
    if not pod.deletion_timestamp:
        return False
    for condition in pod.conditions:
        if condition.type == DISRUPTION_TARGET:
            return condition.status == "True" and condition.reason == PREEMPTION_BY_SCHEDULER
    return False

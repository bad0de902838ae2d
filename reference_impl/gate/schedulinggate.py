"""SchGateManager (pkg/scheduler/gate/schedulinggate.go): removing Volcano's queue-allocation gate.

With the SchedulingGatesQueueAdmission feature gate on, a pod opts in with the annotation
`scheduling.volcano.sh/queue-allocation-gate: "true"` (a webhook gives it the gate of the same name at
creation). Once allocate finds the pod's queue has room for it, the manager patches the gate away
(a strategic-merge patch deleting that gate by name), asynchronously, so the pod becomes schedulable
in a later session. Upstream queues the request to worker goroutines and gives up when their buffer
is full (5 workers x 200); the reference hands the request to the world, which applies every one
between sessions, before the next snapshot (the adapter waits for upstream's workers likewise). The
buffer limit is not modelled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from schedcheck.reference.api.task_info import has_only_volcano_scheduling_gate

if TYPE_CHECKING:
    from schedcheck.reference.api.task_info import TaskInfo
    from schedcheck.reference.cache.cache import SchedulerCache


class SchGateManager:
    """Present on the session only when the feature gate is on (Session.SchGateManager is nil otherwise)."""

    def __init__(self, cache: SchedulerCache) -> None:
        self.cache = cache

    def enqueue(self, task: TaskInfo) -> bool:
        """Queue the removal; refused (False) unless Volcano's gate is the pod's only gate."""
        if not has_only_volcano_scheduling_gate(task.pod):
            return False
        self.cache.remove_volcano_sch_gate(task)
        return True

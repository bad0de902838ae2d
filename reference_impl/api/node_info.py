"""NodeInfo: a node's resource ledger (pkg/scheduler/api/node_info.go; semantics §3).

Idle starts equal to Allocatable; Used, Releasing and Pipelined start empty.
AddTask/RemoveTask move a task's request between them according to the task's
status; Idle may go negative (upstream only logs it).
"""

from __future__ import annotations

from schedcheck.reference.api.numa_info import NumatopoInfo
from schedcheck.reference.api.resource_info import Resource, Zero
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import NodePhase, TaskStatus
from schedcheck.reference.k8s import Node


class NodeError(Exception):
    """AddTask refused the task (already elsewhere, already here, Binding without room)."""


class NodeInfo:
    __slots__ = (
        "name", "node", "allocatable", "capacity", "idle", "used", "releasing", "pipelined",
        "tasks", "state", "negative_idle_events", "_future_idle", "image_states", "others",
        "numa_info", "numa_scheduler_info",
    )

    def __init__(self, node: Node | None, name: str = "") -> None:
        self.node = node
        self.name = node.name if node is not None else name
        if node is not None:
            self.allocatable = Resource.from_resource_list(node.allocatable)
            self.capacity = Resource.from_resource_list(node.capacity)
            # Upstream's setNodeState ignores the node's Ready condition: every known node is Ready.
            self.state = NodePhase.Ready
        else:
            self.allocatable = Resource()
            self.capacity = Resource()
            self.state = NodePhase.NotReady  # "UnInitialized": a pod names a node not seen yet
        self.idle = self.allocatable.clone()
        self.used = Resource()
        self.releasing = Resource()
        self.pipelined = Resource()
        self.tasks: dict[str, TaskInfo] = {}
        # How often Idle went negative on an add (upstream logs "Idle resources turn into negative").
        self.negative_idle_events = 0
        self._future_idle: Resource | None = None
        # {image name: (size, nodes holding it)} as the cache summarised it (ImageStates; read-only)
        self.image_states: dict[str, tuple[int, int]] = {}
        # NumaInfo (the node's Numatopology object) and NumaSchedulerInfo (what a session sees of it, the
        # cache's pre-occupations taken out at the snapshot): api/numa_info.py
        self.numa_info: NumatopoInfo | None = None
        self.numa_scheduler_info: NumatopoInfo | None = None
        # Shared-device pools by device name (upstream's Others; api/devices), set by the cache
        self.others: dict = {}

    def ready(self) -> bool:
        return self.state == NodePhase.Ready

    def future_idle(self) -> Resource:
        """Idle + Releasing - Pipelined; may be negative. A fresh object the caller may change."""
        return self.idle.clone().add(self.releasing).sub_without_assert(self.pipelined)

    def future_idle_view(self) -> Resource:
        """FutureIdle for read-only comparisons on hot paths, recomputed after a ledger change."""
        view = self._future_idle
        if view is None:
            view = self._future_idle = self.future_idle()
        return view

    def _allocate_idle_resource(self, task: TaskInfo) -> None:
        if not task.resreq.less_equal_with_resources_name(self.idle, Zero)[0]:
            self.negative_idle_events += 1
        self.idle.sub_without_assert(task.resreq)

    def add_task(self, task: TaskInfo) -> None:
        """Put a clone of the task on the node and account for it by its status."""
        if task.node_name and self.name and task.node_name != self.name:
            raise NodeError(f"task <{task.key}> already on different node <{task.node_name}>")
        key = task.pod_key
        if key in self.tasks:
            raise NodeError(f"task <{task.key}> already on node <{self.name}>")
        stored = task.clone()
        self._future_idle = None
        if self.node is not None:
            status = stored.status
            if status == TaskStatus.Releasing:
                self._allocate_idle_resource(stored)
                self.releasing.add(stored.resreq)
                self.used.add(stored.resreq)
            elif status == TaskStatus.Pipelined:
                self.pipelined.add(stored.resreq)
            elif status == TaskStatus.Binding:
                ok, names = stored.resreq.less_equal_with_resources_name(self.idle, Zero)
                if not ok:
                    raise NodeError(
                        f"node {self.name} resources {names} are not enough to put task <{task.key}>, "
                        f"idle: {self.idle}, req: {stored.resreq}"
                    )
                self._allocate_idle_resource(stored)
                self.used.add(stored.resreq)
                self._add_devices(stored)
            else:
                self._allocate_idle_resource(stored)
                self.used.add(stored.resreq)
                self._add_devices(stored)
        task.node_name = self.name
        stored.node_name = self.name
        self.tasks[key] = stored

    def remove_task(self, task: TaskInfo) -> None:
        """Undo the accounting of the STORED task (by pod key); a missing task is a no-op."""
        key = task.pod_key
        stored = self.tasks.get(key)
        if stored is None:
            return
        self._future_idle = None
        if self.node is not None:
            if stored.status == TaskStatus.Releasing:
                self.releasing.sub(stored.resreq)
                self.idle.add(stored.resreq)
                self.used.sub(stored.resreq)
            elif stored.status == TaskStatus.Pipelined:
                self.pipelined.sub(stored.resreq)
            else:
                self.idle.add(stored.resreq)
                self.used.sub(stored.resreq)
                for pool in self.others.values():  # subResource, of the passed task's pod as upstream
                    pool.sub_resource(task.pod)
        del self.tasks[key]

    def _add_devices(self, task: TaskInfo) -> None:
        """addResource: the shared devices the pod's own annotations name."""
        for pool in self.others.values():
            pool.add_resource(task.pod)

    def update_task(self, task: TaskInfo) -> None:
        self.remove_task(task)
        self.add_task(task)  # upstream is fatal if this fails

    def clone(self) -> NodeInfo:
        """A fresh ledger rebuilt by re-adding every stored task, as upstream's Clone."""
        c = NodeInfo(self.node, self.name)
        c.state = self.state
        c.image_states = self.image_states
        c.numa_info = self.numa_info
        if self.numa_scheduler_info is not None:
            c.numa_scheduler_info = self.numa_scheduler_info.deep_copy()
        for task in self.tasks.values():
            try:
                c.add_task(task)
            except NodeError:
                pass  # upstream logs the failed re-add and carries on
        # upstream rebuilds the pools through AddTask, then replaces them by deep copies (CloneOthers)
        c.others = {name: pool.deep_copy() for name, pool in self.others.items()}
        return c

    def set_others(self, others: dict) -> None:
        """setNodeOthersResource, before any task is added."""
        self.others = others

    def pods(self) -> list[TaskInfo]:
        return list(self.tasks.values())

    def __repr__(self) -> str:
        return f"Node({self.name} idle=<{self.idle}> used=<{self.used}>)"

"""drf: dominant resource fairness between jobs, optionally hierarchical between queues.

Upstream: pkg/scheduler/plugins/drf/drf.go (volcano-semantics §9.3).

A job's share is the largest allocated / total over the cluster total's resource names (pods
included, so a job of many tiny pods can be pods-dominant); allocated sums the requests of
AllocatedStatus tasks and is kept current by the event handlers. JobOrder puts the lower share
first. Preemptable keeps a running allocation per preemptee job, subtracts each preemptee with the
asserting Sub, and takes it as a victim when the preemptor's share (its job's allocated plus its
own request) is below the preemptee job's remaining share or within 1e-6 of it.

Hierarchy (`enableHierarchy: true` on drf): queues are placed in a tree by the annotations
volcano.sh/hierarchy ("root/a/b") and volcano.sh/hierarchy-weights ("1/w1/w2", weights below 1
become 1); jobs are leaves. QueueOrder and Reclaimable compare queues down that tree. Upstream
recomputes the whole tree after every allocation; so does this module.

Namespace fair-share no longer exists upstream: the namespace ordering was removed (commit
4ee689ac2, 2023) and the plugin's namespaceOpts map is dead, so it is not modelled.

Simplifications: metrics are not reported. At session open the tree is recomputed once after all
jobs are added instead of once per job; only the final state is ever observed, and every recompute
rebuilds every node from the leaves, so the result is the same.
"""

from __future__ import annotations

from typing import Any

from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.queue_info import QueueInfo
from schedcheck.reference.api.resource_info import Resource, share
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import allocated_status
from schedcheck.reference.framework.event import Event, EventHandler
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import PERMIT, Session

PLUGIN_NAME = "drf"
SHARE_DELTA = 0.000001
HIERARCHY_ANNOTATION = "volcano.sh/hierarchy"
HIERARCHY_WEIGHTS_ANNOTATION = "volcano.sh/hierarchy-weights"


class DrfAttr:
    """A job's (or tree node's) allocated resources and dominant share."""

    __slots__ = ("allocated", "dominant_resource", "share")

    def __init__(self, allocated: Resource, share_: float = 0.0, dominant: str = "") -> None:
        self.allocated = allocated
        self.share = share_
        self.dominant_resource = dominant

    def __repr__(self) -> str:
        return f"DrfAttr(share={self.share:.6f} dominant={self.dominant_resource} allocated={self.allocated})"


class HierarchicalNode:
    """A node of the hierarchical-DRF tree; leaves (children None) are jobs."""

    __slots__ = ("attr", "children", "hierarchy", "parent", "request", "saturated", "weight")

    def __init__(self, hierarchy: str, weight: float, attr: DrfAttr, request: Resource,
                 children: dict[str, HierarchicalNode] | None, parent: HierarchicalNode | None = None) -> None:
        self.parent = parent
        self.attr = attr
        self.request = request
        self.weight = weight
        self.saturated = False
        self.hierarchy = hierarchy
        self.children = children

    def clone(self, parent: HierarchicalNode | None) -> HierarchicalNode:
        attr = DrfAttr(self.attr.allocated.clone(), self.attr.share, self.attr.dominant_resource)
        node = HierarchicalNode(self.hierarchy, self.weight, attr, self.request.clone(), None, parent)
        node.saturated = self.saturated
        if self.children is not None:
            node.children = {child.hierarchy: child.clone(node) for child in self.children.values()}
        return node


def new_root() -> HierarchicalNode:
    return HierarchicalNode("root", 1.0, DrfAttr(Resource()), Resource(), {})


def queue_hierarchy(queue: QueueInfo) -> tuple[str, str]:
    """(volcano.sh/hierarchy, volcano.sh/hierarchy-weights) of a queue; "" when unset."""
    annotations = queue.queue.annotations
    return annotations.get(HIERARCHY_ANNOTATION, ""), annotations.get(HIERARCHY_WEIGHTS_ANNOTATION, "")


def parse_go_float(text: str) -> float:
    """strconv.ParseFloat, whose error upstream ignores (the value is then 0)."""
    if text != text.strip() or "_" in text:
        return 0.0
    try:
        return float(text)
    except ValueError:
        return 0.0


def resource_saturated(allocated: Resource, request: Resource, demanding: set[str]) -> bool:
    """Some dimension is fully served (allocated >= request > 0), or requested but no longer demanding."""
    for name in allocated.resource_names():
        requested = request.get(name)
        value = allocated.get(name)
        if value != 0 and requested != 0 and value >= requested:
            return True
        if name not in demanding and requested != 0:
            return True
    return False


def hierarchy_enabled(ssn: Session, plugin_name: str) -> bool:
    """The enableHierarchy flag of the plugin's first entry in the conf (ssn.HierarchyEnabled)."""
    option = ssn.conf.plugin(plugin_name)
    return option is not None and option.enabled("enableHierarchy")


class DrfPlugin(Plugin):
    name = PLUGIN_NAME

    def __init__(self, arguments: dict[str, Any]) -> None:
        super().__init__(arguments)
        self.total_resource = Resource()
        self.total_allocated = Resource()
        self.job_attrs: dict[str, DrfAttr] = {}
        self.hierarchical_root = new_root()
        self.hierarchy_enabled = False
        self._total_names: list[str] = []

    def on_session_open(self, ssn: Session) -> None:
        self.ssn = ssn
        self.total_resource.add(ssn.total_resource)
        self._total_names = self.total_resource.resource_names()
        self.hierarchy_enabled = hierarchy_enabled(ssn, self.name)
        for job in ssn.jobs.values():
            attr = DrfAttr(job_allocated(job))
            self.update_share(attr)
            self.job_attrs[job.uid] = attr
            if self.hierarchy_enabled:
                self.total_allocated.add(attr.allocated)
                self._build_hierarchy(self.hierarchical_root, job, attr, *queue_hierarchy(ssn.queues[job.queue]))
        if self.hierarchy_enabled:
            self._refresh_tree(self.hierarchical_root, self.total_allocated)
            ssn.add_fn("queue_order", self.name, self.queue_order)
            ssn.add_fn("reclaimable", self.name, self.reclaimable)
        ssn.add_fn("preemptable", self.name, self.preemptable)
        ssn.add_fn("job_order", self.name, self.job_order)
        ssn.add_event_handler(EventHandler(self._on_allocate, self._on_deallocate))

    # -- shares ---------------------------------------------------------------------------------

    def calculate_share(self, allocated: Resource) -> tuple[str, float]:
        """(dominant resource, share): the largest allocated / total over the total's dimensions."""
        result, dominant = 0.0, ""
        total = self.total_resource
        for name in self._total_names:
            value = share(allocated.get(name), total.get(name))
            if value > result:
                result, dominant = value, name
        return dominant, result

    def update_share(self, attr: DrfAttr) -> None:
        attr.dominant_resource, attr.share = self.calculate_share(attr.allocated)

    # -- job order and preemption ---------------------------------------------------------------

    def job_order(self, left: JobInfo, right: JobInfo) -> int:
        """The lower share first; 0 on exact equality."""
        left_share, right_share = self.job_attrs[left.uid].share, self.job_attrs[right.uid].share
        if left_share == right_share:
            return 0
        return -1 if left_share < right_share else 1

    def preemptable(self, preemptor: TaskInfo, preemptees: list[TaskInfo]) -> tuple[list[TaskInfo] | None, int]:
        preemptor_attr = self.job_attrs.get(preemptor.job)
        if preemptor_attr is None:
            return None, PERMIT
        _, left_share = self.calculate_share(preemptor_attr.allocated.clone().add(preemptor.resreq))
        victims: list[TaskInfo] = []
        allocations: dict[str, Resource] = {}
        for preemptee in preemptees:
            allocated = allocations.get(preemptee.job)
            if allocated is None:
                attr = self.job_attrs.get(preemptee.job)
                if attr is None:
                    continue
                allocated = allocations[preemptee.job] = attr.allocated.clone()
            _, right_share = self.calculate_share(allocated.sub(preemptee.resreq))
            if left_share < right_share or abs(left_share - right_share) <= SHARE_DELTA:
                victims.append(preemptee)
        return victims, PERMIT

    # -- hierarchy ------------------------------------------------------------------------------

    def _build_hierarchy(self, root: HierarchicalNode, job: JobInfo, attr: DrfAttr,
                         hierarchy: str, weights: str) -> None:
        """Create the queue path's missing nodes and (re)place the job's leaf under it."""
        node = root
        paths, weight_list = hierarchy.split("/"), weights.split("/")
        for depth in range(1, len(paths)):
            child = node.children.get(paths[depth])  # type: ignore[union-attr]
            if child is None:
                if depth >= len(weight_list):
                    raise IndexError(f"drf: queue hierarchy {hierarchy!r} has no weight at level {depth} "
                                     f"in {weights!r} (upstream panics: index out of range)")
                weight = max(parse_go_float(weight_list[depth]), 1.0)
                child = HierarchicalNode(paths[depth], weight, DrfAttr(Resource()), Resource(), {}, node)
                node.children[paths[depth]] = child  # type: ignore[index]
            node = child
        leaf = HierarchicalNode(job.uid, 1.0, attr, job.total_request.clone(), None)
        node.children[job.uid] = leaf  # type: ignore[index]

    def _demanding(self, total_allocated: Resource) -> set[str]:
        total = self.total_resource
        return {name for name in self._total_names if total_allocated.get(name) < total.get(name)}

    def _refresh_tree(self, root: HierarchicalNode, total_allocated: Resource) -> None:
        self._update_node(root, self._demanding(total_allocated))

    def _update_hierarchical_share(self, root: HierarchicalNode, total_allocated: Resource, job: JobInfo,
                                   attr: DrfAttr, queue: QueueInfo) -> None:
        """UpdateHierarchicalShare: place the job's leaf, then recompute the whole tree."""
        demanding = self._demanding(total_allocated)
        self._build_hierarchy(root, job, attr, *queue_hierarchy(queue))
        self._update_node(root, demanding)

    def _update_node(self, node: HierarchicalNode, demanding: set[str]) -> None:
        """Leaves: saturation. Inner nodes: children scaled to the smallest unsaturated dominant share."""
        if node.children is None:
            node.saturated = resource_saturated(node.attr.allocated, node.request, demanding)
            return
        min_dominant = 1.0
        for child in node.children.values():
            self._update_node(child, demanding)
            if child.attr.share != 0 and not child.saturated:
                _, child_share = self.calculate_share(child.attr.allocated)
                min_dominant = min(min_dominant, child_share)
        allocated = Resource()
        saturated = True
        for child in node.children.values():
            if not child.saturated:
                saturated = False
            if child.attr.share == 0:
                continue
            if child.saturated:
                allocated.add(child.attr.allocated)
            else:
                allocated.add(child.attr.allocated.clone().multi(min_dominant / child.attr.share))
        node.attr.allocated = allocated
        node.attr.dominant_resource, node.attr.share = self.calculate_share(allocated)
        node.saturated = saturated

    def compare_queues(self, root: HierarchicalNode, left: QueueInfo, right: QueueInfo) -> float:
        """Walk both queue paths down the tree: unsaturated before saturated, then share / weight."""
        left_paths, right_paths = queue_hierarchy(left)[0].split("/"), queue_hierarchy(right)[0].split("/")
        left_node, right_node = root, root
        depth = min(len(left_paths), len(right_paths))
        for level in range(depth):
            if left_node is None or right_node is None:
                raise LookupError("drf: queue path missing from the hierarchy tree (upstream: nil dereference)")
            if not left_node.saturated and right_node.saturated:
                return -1
            if left_node.saturated and not right_node.saturated:
                return 1
            left_value = left_node.attr.share / left_node.weight
            right_value = right_node.attr.share / right_node.weight
            if left_value != right_value:
                return left_value - right_value
            if level < depth - 1:
                left_node = (left_node.children or {}).get(left_paths[level + 1])
                right_node = (right_node.children or {}).get(right_paths[level + 1])
        return 0

    def queue_order(self, left: QueueInfo, right: QueueInfo) -> int:
        result = self.compare_queues(self.hierarchical_root, left, right)
        if result < 0:
            return -1
        return 1 if result > 0 else 0

    def reclaimable(self, reclaimer: TaskInfo, reclaimees: list[TaskInfo]) -> tuple[list[TaskInfo] | None, int]:
        """On a copy of the tree holding the reclaimer's request, a reclaimee is a victim when,
        with it removed (one at a time, restored afterwards), the reclaimer's queue compares lower."""
        ssn = self.ssn
        left_job = ssn.jobs.get(reclaimer.job)
        left_queue = ssn.queues.get(left_job.queue) if left_job is not None else None
        attr = self.job_attrs.get(reclaimer.job)
        if left_job is None or left_queue is None or attr is None:
            return None, PERMIT
        total_allocated = self.total_allocated.clone()
        root = self.hierarchical_root.clone(None)
        left_attr = DrfAttr(attr.allocated.clone().add(reclaimer.resreq))
        total_allocated.add(reclaimer.resreq)
        self.update_share(left_attr)
        self._update_hierarchical_share(root, total_allocated, left_job, left_attr, left_queue)
        victims: list[TaskInfo] = []
        for reclaimee in reclaimees:
            if self._reclaim_lowers_reclaimer(root, total_allocated, left_queue, reclaimee):
                victims.append(reclaimee)
        return victims, PERMIT

    def _reclaim_lowers_reclaimer(self, root: HierarchicalNode, total_allocated: Resource,
                                  left_queue: QueueInfo, reclaimee: TaskInfo) -> bool:
        right_job = self.ssn.jobs.get(reclaimee.job)
        right_queue = self.ssn.queues.get(right_job.queue) if right_job is not None else None
        if right_job is None or right_queue is None:
            return False
        total_allocated.sub(reclaimee.resreq)
        attr = self.job_attrs.get(right_job.uid)
        if attr is None:
            total_allocated.add(reclaimee.resreq)
            return False
        right_attr = DrfAttr(attr.allocated.clone().sub(reclaimee.resreq))
        self.update_share(right_attr)
        self._update_hierarchical_share(root, total_allocated, right_job, right_attr, right_queue)
        result = self.compare_queues(root, left_queue, right_queue)
        total_allocated.add(reclaimee.resreq)
        right_attr.allocated.add(reclaimee.resreq)
        self.update_share(right_attr)
        self._update_hierarchical_share(root, total_allocated, right_job, right_attr, right_queue)
        return result < 0

    # -- events ---------------------------------------------------------------------------------

    def _on_allocate(self, event: Event) -> None:
        self._apply(event.task, adding=True)

    def _on_deallocate(self, event: Event) -> None:
        self._apply(event.task, adding=False)

    def _apply(self, task: TaskInfo, adding: bool) -> None:
        job = self.ssn.jobs.get(task.job)
        attr = self.job_attrs.get(task.job)
        if job is None or attr is None:
            return
        if adding:
            attr.allocated.add(task.resreq)
        elif self.ssn.conf.persistent_pipelines:
            attr.allocated.sub_floored(task.resreq)
        else:
            attr.allocated.sub(task.resreq)
        self.update_share(attr)
        if not self.hierarchy_enabled:
            return
        queue = self.ssn.queues.get(job.queue)
        if queue is None:
            return
        if adding:
            self.total_allocated.add(task.resreq)
        else:
            self.total_allocated.sub(task.resreq)
        self._update_hierarchical_share(self.hierarchical_root, self.total_allocated, job, attr, queue)


def job_allocated(job: JobInfo) -> Resource:
    """Σ request of the job's AllocatedStatus tasks."""
    allocated = Resource()
    for status, tasks in job.task_status_index.items():
        if allocated_status(status):
            for task in tasks.values():
                allocated.add(task.resreq)
    return allocated


register_plugin_builder(DrfPlugin.name, DrfPlugin)

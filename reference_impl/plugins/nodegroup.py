"""nodegroup: queues pinned to groups of nodes (pkg/scheduler/plugins/nodegroup/nodegroup.go, errors.go).

A node belongs to the nodegroup named by its label `volcano.sh/nodegroup-name`. A queue names groups in
its spec.affinity: nodeGroupAffinity and nodeGroupAntiAffinity, each with a required and a preferred
list (`...DuringSchedulingIgnoredDuringExecution`). A task is judged by its job's queue.

Arguments: `strict` (default true) and `enablePreferredOrder` (default false), read as Arguments.GetBool.
With `enableHierarchy: true` on the plugin, a queue without spec.affinity takes the affinity of its
nearest ancestor that has one (spec.parent, "" meaning `root`; the walk stops at root, at a parent that
is not in the session, or on a cycle). A queue whose spec.affinity is present but empty ({}) inherits
nothing: upstream tests the pointer, not the lists.

Predicate, in this order, every failure UnschedulableAndUnresolvable with the reason in quotes:
1. the task's job is not in the session: a plain error (not a FitError);
2. the queue's `volcano.sh/nodegroup-resource-limits` annotation does not parse:
   "node group resource limit annotation invalid", on every node;
3. the node has no group label: passes when `strict` is false and the queue's affinity is unset (none,
   or all four lists empty), else "node group label not found";
4. the node has a group but the queue's affinity is unset: "node group affinity not specified";
5. the group is admitted when it is in required or preferred affinity, then refused when in required
   anti-affinity, then admitted again when in preferred anti-affinity (so a group in both anti lists
   passes); otherwise "node does not satisfy the node group affinity";
6. the queue has a resource limit for the group, and the queue's tasks already on the group plus this
   task's request exceed it in a named dimension by at least 0.1 (milli-cpu, bytes, milli-units):
   "node group resource limit exceeded".

NodeOrder: 0 for a node without a group label, a job not in the session or a queue without affinity;
otherwise +100 when the group is required, +50 when preferred (with `enablePreferredOrder`, instead
50 * (n − i) / n for the group's index i among the n distinct preferred groups, a repeated group keeping
its last index), and the whole score is −1 when the group is in preferred anti-affinity. Required
anti-affinity does not enter the score.

Resource limits: the annotation is JSON, {"<group>": {"<resource>": <quantity>, ...}, ...}; a quantity is
a string or a bare number, null reads as 0, a null group as no limit; anything else is invalid. Only
the resource names given are limited. The queue's usage per group starts from its jobs' tasks in an
allocated status (Allocated, Binding, Bound, Running) on nodes of that group, and follows the session's
allocate and deallocate events (a pipelined task is counted once it is pipelined, as upstream).

Reference notes: upstream builds every queue's ancestor list (with repeats, in map order) and copies
the first ancestor affinity it finds; walking the parent chain nearest first gives the same affinity
for every queue, cycles included. A quantity written with JSON escapes ("\\u0033") parses here but not
upstream, which strips the quotes without decoding. The exceeded dimensions are only logged upstream
(in map order); the reference lists them sorted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.queue_info import QueueInfo
from schedcheck.reference.api.resource_info import CPU, MEMORY, MIN_RESOURCE, Resource
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import allocated_status
from schedcheck.reference.api.unschedule_info import FitError, Status, StatusCode
from schedcheck.reference.framework.arguments import as_arguments
from schedcheck.reference.framework.event import Event, EventHandler
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import Session
from schedcheck.reference.k8s import QueueAffinity
from schedcheck.reference.plugins.drf import hierarchy_enabled
from schedcheck.reference.quantity import Quantity

PLUGIN_NAME = "nodegroup"
NODE_GROUP_LABEL = "volcano.sh/nodegroup-name"
RESOURCE_LIMITS_ANNOTATION = "volcano.sh/nodegroup-resource-limits"
ROOT_QUEUE = "root"
BASE_SCORE = 100.0

AFFINITY_NOT_FOUND = "node group affinity not specified"
LABEL_NOT_FOUND = "node group label not found"
NODE_UNSATISFIED = "node does not satisfy the node group affinity"
LIMIT_INVALID = "node group resource limit annotation invalid"
LIMIT_EXCEEDED = "node group resource limit exceeded"


@dataclass
class GroupAffinity:
    """queueGroupAffinity: the four lists as sets, and the preferred groups' positions."""

    required: set[str] = field(default_factory=set)
    preferred: set[str] = field(default_factory=set)
    anti_required: set[str] = field(default_factory=set)
    anti_preferred: set[str] = field(default_factory=set)
    preferred_index: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, affinity: QueueAffinity | None) -> GroupAffinity | None:
        if affinity is None:
            return None
        out = cls()
        terms = affinity.node_group_affinity
        if terms is not None:
            out.required, out.preferred = set(terms.required), set(terms.preferred)
            out.preferred_index = {group: i for i, group in enumerate(terms.preferred)}
        anti = affinity.node_group_anti_affinity
        if anti is not None:
            out.anti_required, out.anti_preferred = set(anti.required), set(anti.preferred)
        return out

    def unset(self) -> bool:
        return not (self.required or self.preferred or self.anti_required or self.anti_preferred)

    def admits(self, group: str) -> bool:
        if group in self.anti_preferred:
            return True
        if group in self.anti_required:
            return False
        return group in self.required or group in self.preferred

    def score(self, group: str, preferred_order: bool) -> float:
        if group in self.anti_preferred:
            return -1.0
        score = BASE_SCORE if group in self.required else 0.0
        if preferred_order:
            index = self.preferred_index.get(group)
            if index is not None:
                n = len(self.preferred_index)
                score += 0.5 * BASE_SCORE * float(n - index) / float(n)
        elif group in self.preferred:
            score += 0.5 * BASE_SCORE
        return score


@dataclass
class GroupLimit:
    resource: Resource
    names: set[str]


class LimitAnnotationError(ValueError):
    """The resource-limits annotation is not a JSON map of resource lists."""


def _reject_constant(text: str) -> Any:
    raise LimitAnnotationError(f"invalid JSON value {text}")  # Go's JSON has no NaN or Infinity


def _quantity(value: Any) -> Quantity:
    """resource.Quantity's UnmarshalJSON: a string or the number's own text; null is zero."""
    if value is None:
        return Quantity(0)
    if not isinstance(value, str):
        raise LimitAnnotationError(f"not a quantity: {value!r}")
    try:
        return Quantity.parse(value.strip())
    except ValueError as err:
        raise LimitAnnotationError(str(err)) from None


def parse_resource_limits(annotations: dict[str, str]) -> dict[str, GroupLimit]:
    """parseNodeGroupResourceLimits; raises LimitAnnotationError when upstream's json.Unmarshal fails."""
    raw = annotations.get(RESOURCE_LIMITS_ANNOTATION, "")
    if not raw:
        return {}
    try:
        # Numbers stay as their text, so "3" and 3 parse alike, as Quantity does from JSON.
        doc = json.loads(raw, parse_int=str, parse_float=str, parse_constant=_reject_constant)
    except ValueError as err:
        raise LimitAnnotationError(f"parse annotation {RESOURCE_LIMITS_ANNOTATION}: {err}") from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise LimitAnnotationError(f"parse annotation {RESOURCE_LIMITS_ANNOTATION}: not an object")
    limits = {}
    for group, resources in doc.items():
        if resources is None:
            resources = {}
        if not isinstance(resources, dict):
            raise LimitAnnotationError(f"parse annotation {RESOURCE_LIMITS_ANNOTATION}: group {group} not an object")
        quantities = {name: _quantity(value) for name, value in resources.items()}
        limits[group] = GroupLimit(Resource.from_resource_list(quantities), set(quantities))
    return limits


def _over(used: float, limit: float) -> bool:
    return used > limit and used - limit >= MIN_RESOURCE


def exceeded_names(used: Resource, limit: GroupLimit) -> list[str]:
    """limitedResourceExceededNames: the limited dimensions `used` goes over."""
    names = []
    if CPU in limit.names and _over(used.milli_cpu, limit.resource.milli_cpu):
        names.append(CPU)
    if MEMORY in limit.names and _over(used.memory, limit.resource.memory):
        names.append(MEMORY)
    for name in sorted(limit.names - {CPU, MEMORY}):
        if _over(used.get(name), limit.resource.get(name)):
            names.append(name)
    return names


@dataclass
class QueueAttr:
    affinity: GroupAffinity | None
    limits: dict[str, GroupLimit]
    limit_error: str | None
    allocated: dict[str, Resource] = field(default_factory=dict)  # group -> the queue's usage there

    @classmethod
    def of(cls, queue: QueueInfo) -> QueueAttr:
        try:
            limits, error = parse_resource_limits(queue.queue.annotations), None
        except LimitAnnotationError as err:
            limits, error = {}, str(err)
        return cls(GroupAffinity.of(queue.queue.affinity), limits, error)

    def unset_affinity(self) -> bool:
        return self.affinity is None or self.affinity.unset()

    def limit_exceeded(self, task: TaskInfo, group: str) -> bool:
        limit = self.limits.get(group)
        if limit is None:
            return False
        future = self.allocated.get(group, Resource()).clone().add(task.resreq)
        return bool(exceeded_names(future, limit))


def node_group(node: NodeInfo | None) -> str | None:
    if node is None or node.node is None or NODE_GROUP_LABEL not in node.node.labels:
        return None
    return node.node.labels[NODE_GROUP_LABEL]


def inherited_affinity(queues: dict[str, QueueInfo], attrs: dict[str, QueueAttr], name: str
                       ) -> GroupAffinity | None:
    """buildAncestors + updateAffinityFromAncestor: the affinity of the nearest ancestor that has its own."""
    seen, current = {name}, name
    while current != ROOT_QUEUE:
        parent = queues[current].queue.parent or ROOT_QUEUE
        if parent not in queues or parent in seen:
            return None
        if attrs[parent].affinity is not None:
            return attrs[parent].affinity
        seen.add(parent)
        current = parent
    return None


def _unfit(task: TaskInfo, node: NodeInfo, reason: str) -> FitError:
    return FitError(task.key, node.name, [Status(StatusCode.UnschedulableAndUnresolvable, reason)])


class NodeGroupPlugin(Plugin):
    name = PLUGIN_NAME

    def __init__(self, arguments: dict[str, Any]) -> None:
        super().__init__(arguments)
        args = as_arguments(arguments)
        self.strict = args.get_bool("strict", True)
        self.preferred_order = args.get_bool("enablePreferredOrder", False)
        self.attrs: dict[str, QueueAttr] = {}

    def on_session_open(self, ssn: Session) -> None:
        self.ssn = ssn
        self.attrs = {name: QueueAttr.of(queue) for name, queue in ssn.queues.items()}
        if hierarchy_enabled(ssn, self.name):
            inherited = {name: inherited_affinity(ssn.queues, self.attrs, name)
                         for name, attr in self.attrs.items() if attr.affinity is None}
            for name, affinity in inherited.items():
                self.attrs[name].affinity = affinity
        self._count_allocated()
        ssn.add_fn("node_order", self.name, self.node_order)
        ssn.add_fn("predicate", self.name, self.predicate)
        ssn.add_event_handler(EventHandler(allocate_func=self._on_allocate, deallocate_func=self._on_deallocate))

    def on_session_close(self, ssn: Session) -> None:
        self.attrs = {}

    def _count_allocated(self) -> None:
        for job in self.ssn.jobs.values():
            attr = self.attrs.get(job.queue)
            if attr is None:
                continue
            for status, tasks in job.task_status_index.items():
                if allocated_status(status):
                    for task in tasks.values():
                        self._charge(attr, task, add=True)

    def _charge(self, attr: QueueAttr, task: TaskInfo, add: bool) -> None:
        group = node_group(self.ssn.nodes.get(task.node_name)) if task.node_name else None
        if group is None:
            return
        used = attr.allocated.get(group)
        if add:
            attr.allocated.setdefault(group, Resource()).add(task.resreq)
        elif used is not None:
            used.sub(task.resreq)

    def _task_attr(self, task: TaskInfo) -> QueueAttr | None:
        job = self.ssn.jobs.get(task.job)
        return None if job is None else self.attrs.get(job.queue)

    def _on_allocate(self, event: Event) -> None:
        attr = self._task_attr(event.task)
        if attr is not None:
            self._charge(attr, event.task, add=True)

    def _on_deallocate(self, event: Event) -> None:
        attr = self._task_attr(event.task)
        if attr is not None:
            self._charge(attr, event.task, add=False)

    def node_order(self, task: TaskInfo, node: NodeInfo) -> float:
        group = node_group(node)
        attr = self._task_attr(task) if group is not None else None
        if group is None or attr is None or attr.affinity is None:
            return 0.0
        return attr.affinity.score(group, self.preferred_order)

    def predicate(self, task: TaskInfo, node: NodeInfo) -> Exception | None:
        job = self.ssn.jobs.get(task.job)
        if job is None:
            return LookupError(f"job {task.job} not found in session")
        attr = self.attrs.get(job.queue)
        if attr is not None and attr.limit_error is not None:
            return _unfit(task, node, LIMIT_INVALID)
        unset = attr is None or attr.unset_affinity()
        group = node_group(node)
        if group is None:
            return None if not self.strict and unset else _unfit(task, node, LABEL_NOT_FOUND)
        if unset:
            return _unfit(task, node, AFFINITY_NOT_FOUND)
        assert attr is not None and attr.affinity is not None
        if not attr.affinity.admits(group):
            return _unfit(task, node, NODE_UNSATISFIED)
        if attr.limit_exceeded(task, group):
            return _unfit(task, node, LIMIT_EXCEEDED)
        return None


register_plugin_builder(PLUGIN_NAME, NodeGroupPlugin)

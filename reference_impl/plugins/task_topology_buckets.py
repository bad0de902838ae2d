"""task-topology's buckets and per-job manager (pkg/scheduler/plugins/task-topology/bucket.go, manager.go,
util.go). The plugin itself, the annotations and the scores are in task_topology.py.

A job's tasks are named by their pod's `volcano.sh/task-spec` annotation (the label is not read here,
though the annotation check in task_topology.py accepts role names taken from either). A task name has
topology when some affinity or anti-affinity group of the job names it; a group of one name is
self-(anti-)affinity, a larger group (anti-)affinity between every pair of its names. Each name gets the
highest priority among the kinds it appears in: self anti-affinity 4, inter affinity 3, self affinity 2,
inter anti-affinity 1. The task-order annotation gives its n names the values n, n-1, ..., 1 (a name
listed twice keeps its last value; unlisted names 0). The task-order list alone gives no name topology.

Buckets are built once per session, for jobs with Pending tasks. Tasks without a name or whose name
has no topology are out of every bucket. The others are sorted: tasks with a node first, whatever their
status (a finished or releasing pod keeps its node), by node name; then pending tasks by task-order
value, then topology priority (both descending), then pod name. A task with a node joins the bucket of
its node (one bucket per node, opened in that order). A pending task joins the bucket with the highest
affinity to it: the sum over the bucket's task names of their counts, +count where the pair has
affinity and -count where it has anti-affinity (one name can add both). Ties go to the bucket with the
lower request score (the earlier one on equal scores); when the best is below 0, or there is no bucket
yet, it opens a new one. A pending task in a bucket counts toward its request and its request score
(milli-cpu + memory in MiB + every scalar in the units of Resource, so a pod's `pods: 1` adds 1).

`max_size` is the largest task count (pending + with a node) any bucket reached while being built.
Binding a task in the session (the allocate event, however fired) counts it on its node's task-name set
and, if it is in a bucket, moves it from the bucket's pending tasks and request to the bucket's count on
that node. No deallocate handler exists upstream, so nothing of this is undone when a statement is
discarded; a task bound twice is counted twice and its request subtracted twice, through the asserting
Resource.sub as upstream's Sub. When the bucket's pending request is smaller that assertion fails and
upstream panics: seen through the Go adapter when gang discards an allocation that preempt then
pipelines again, and when a discarded eviction of a bucket member fires its allocate event.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from schedcheck.reference.api.resource_info import Resource
from schedcheck.reference.k8s import TASK_SPEC_KEY

if TYPE_CHECKING:
    from schedcheck.reference.api.task_info import TaskInfo

SELF_ANTI_AFFINITY = 4
INTER_AFFINITY = 3
SELF_AFFINITY = 2
INTER_ANTI_AFFINITY = 1


def task_name(task: TaskInfo) -> str:
    """getTaskName: the pod's task-spec annotation only."""
    return task.pod.annotations.get(TASK_SPEC_KEY, "")


def request_score(req: Resource) -> float:
    """CalcResReq's score: 1 milli-cpu, 1 MiB and one unit of any scalar weigh the same."""
    score = req.milli_cpu + req.memory / 1024 / 1024
    for value in (req.scalars or {}).values():
        score += value
    return score


@dataclass
class Bucket:
    index: int
    tasks: dict[str, TaskInfo] = field(default_factory=dict)  # pending tasks by pod uid, in joining order
    task_names: dict[str, int] = field(default_factory=dict)  # every member's task name -> count
    req_score: float = 0.0
    request: Resource = field(default_factory=Resource)
    bound: int = 0
    nodes: dict[str, int] = field(default_factory=dict)  # node -> members bound there

    def add(self, name: str, task: TaskInfo) -> None:
        self.task_names[name] = self.task_names.get(name, 0) + 1
        if task.node_name:
            self._count_on_node(task.node_name)
            return
        self.tasks[task.uid] = task
        self.req_score += request_score(task.resreq)
        self.request.add(task.resreq)

    def task_bound(self, task: TaskInfo) -> None:
        self._count_on_node(task.node_name)
        self.tasks.pop(task.uid, None)
        self.req_score -= request_score(task.resreq)
        self.request.sub(task.resreq)

    def _count_on_node(self, node: str) -> None:
        self.nodes[node] = self.nodes.get(node, 0) + 1
        self.bound += 1

    def size(self) -> int:
        return len(self.tasks) + self.bound


def _link(pairs: dict[str, set[str]], group: list[str]) -> None:
    for i, src in enumerate(group):
        for dst in group[:i]:
            pairs.setdefault(src, set()).add(dst)
            pairs.setdefault(dst, set()).add(src)


class JobManager:
    """JobManager: a job's topology tables, its buckets, and where its tasks were bound this session."""

    def __init__(self, job_uid: str) -> None:
        self.job_uid = job_uid
        self.buckets: list[Bucket] = []
        self.pod_in_bucket: dict[str, int] = {}  # pod uid -> bucket index; absent: out of bucket
        self.pod_task_name: dict[str, str] = {}
        self.priority: dict[str, int] = {}
        self.order: dict[str, int] = {}
        self.inter_affinity: dict[str, set[str]] = {}
        self.self_affinity: set[str] = set()
        self.inter_anti_affinity: dict[str, set[str]] = {}
        self.self_anti_affinity: set[str] = set()
        self.max_size = 0
        self.node_task_names: dict[str, dict[str, int]] = {}  # node -> task name -> bound this session

    # -- topology ---------------------------------------------------------------------

    def _mark(self, name: str, priority: int) -> None:
        if priority > self.priority.get(name, 0):
            self.priority[name] = priority

    def apply(self, affinity: list[list[str]], anti_affinity: list[list[str]], task_order: list[str]) -> None:
        """ApplyTaskTopology."""
        self._apply_groups(affinity, self.self_affinity, self.inter_affinity, SELF_AFFINITY, INTER_AFFINITY)
        self._apply_groups(anti_affinity, self.self_anti_affinity, self.inter_anti_affinity,
                           SELF_ANTI_AFFINITY, INTER_ANTI_AFFINITY)
        for i, name in enumerate(task_order):
            self.order[name] = len(task_order) - i

    def _apply_groups(self, groups: list[list[str]], selves: set[str], pairs: dict[str, set[str]],
                      self_priority: int, inter_priority: int) -> None:
        for group in groups:
            if len(group) == 1:
                selves.add(group[0])
                self._mark(group[0], self_priority)
                continue
            _link(pairs, group)
            for name in group:
                self._mark(name, inter_priority)

    def affinity_order(self, left: TaskInfo, right: TaskInfo) -> int:
        """taskAffinityOrder: -1, 0, 1 by task-order value, then topology priority, of the two task names."""
        lname, rname = self.pod_task_name.get(left.uid, ""), self.pod_task_name.get(right.uid, "")
        if lname == rname:
            return 0
        lkey = (self.order.get(lname, 0), self.priority.get(lname, 0))
        rkey = (self.order.get(rname, 0), self.priority.get(rname, 0))
        return (lkey > rkey) - (lkey < rkey)

    def affinity_to(self, name: str, names: dict[str, int], only_anti: bool) -> int:
        """checkTaskSetAffinity: +count per affine name, -count per anti-affine name (anti only if asked)."""
        if not name:
            return 0
        total = 0
        for other, count in names.items():
            same = other == name
            if not only_anti:
                affine = name in self.self_affinity if same else other in self.inter_affinity.get(name, ())
                total += count if affine else 0
            anti = name in self.self_anti_affinity if same else other in self.inter_anti_affinity.get(name, ())
            total -= count if anti else 0
        return total

    # -- buckets ----------------------------------------------------------------------

    def construct(self, tasks: list[TaskInfo]) -> None:
        """ConstructBucket: keep the tasks with topology, sort them, place them one by one."""
        members = []
        for task in tasks:
            name = task_name(task)
            if name and name in self.priority:
                self.pod_task_name[task.uid] = name
                members.append(task)
        members.sort(key=self._construction_key)
        by_node: dict[str, Bucket] = {}
        for task in members:
            self._place(task, by_node)

    def _construction_key(self, task: TaskInfo) -> tuple:
        if task.node_name:
            return (0, task.node_name)
        name = self.pod_task_name[task.uid]
        return (1, -self.order.get(name, 0), -self.priority.get(name, 0), task.name)

    def _place(self, task: TaskInfo, by_node: dict[str, Bucket]) -> None:
        name = self.pod_task_name[task.uid]
        if task.node_name:
            best, best_affinity = by_node.get(task.node_name), 0
        else:
            best, best_affinity = self._best_bucket(name)
        if best is None or best_affinity < 0:
            best = Bucket(len(self.buckets))
            self.buckets.append(best)
            if task.node_name:
                by_node[task.node_name] = best
        self.pod_in_bucket[task.uid] = best.index
        best.add(name, task)
        self.max_size = max(self.max_size, best.size())

    def _best_bucket(self, name: str) -> tuple[Bucket | None, int]:
        best, best_affinity = None, 0
        for bucket in self.buckets:
            affinity = self.affinity_to(name, bucket.task_names, only_anti=False)
            if best is None or affinity > best_affinity:
                best, best_affinity = bucket, affinity
            elif affinity == best_affinity and bucket.req_score < best.req_score:
                best = bucket
        return best, best_affinity

    def bucket_of(self, task: TaskInfo) -> Bucket | None:
        index = self.pod_in_bucket.get(task.uid)
        return None if index is None else self.buckets[index]

    def task_bound(self, task: TaskInfo) -> None:
        """TaskBound: the allocate event of one of the job's tasks."""
        name = task_name(task)
        if name:
            names = self.node_task_names.setdefault(task.node_name, {})
            names[name] = names.get(name, 0) + 1
        bucket = self.bucket_of(task)
        if bucket is not None:
            bucket.task_bound(task)

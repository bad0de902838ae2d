"""task-topology: keep a job's related tasks together, or apart (pkg/scheduler/plugins/task-topology/
topology.go, util.go; buckets in task_topology_buckets.py after manager.go and bucket.go).

A job opts in with PodGroup annotations naming its task roles (the pods' `volcano.sh/task-spec`):
`volcano.sh/task-topology-affinity` and `volcano.sh/task-topology-anti-affinity`, groups separated by
";" and names within a group by ","; `volcano.sh/task-topology-task-order`, names separated by ",".
The text is split as written, empty names included. Every non-empty name must be the role of one of
the job's tasks ("task X do not exist in job <ns/name>") and appear once per group ("task X is
duplicate in job <ns/name>"); the affinity is checked first, then the anti-affinity, then the order,
and any error leaves the job without topology for the session. A job with none of the three keys,
or without Pending tasks, has none either. See task_topology_buckets.py for how a job's tasks are
grouped into buckets.

- TaskOrder: between two tasks of jobs that both have topology, the one in a bucket goes first (even
  across jobs); otherwise tasks of different jobs, or both out of bucket, are equal. In one job, the
  task whose bucket has more pending tasks goes first, then the older bucket; in one bucket, the higher
  task-order value, then the higher topology priority (task_topology_buckets.py); same-named tasks tie.
- NodeOrder: 0 when the task's request does not fit the node's idle + releasing (LessPartly, Zero), or
  its job has no topology, or it is out of bucket. Otherwise the bucket's count of members on the node,
  plus the anti-affinity (negative only) of the task's name with the names bound to the node in this
  session, plus the bucket's pending task count; when the bucket's pending request does not fit the node
  (LessEqual, Zero), one point less per other pending member taken out of that request until it fits.
  The score times the `task-topology.weight` argument (an int, default 1) is scaled to 100 by the
  largest bucket size of the job.
- Allocate event: counts the task on its node (task_topology_buckets.JobManager.task_bound).

Reference notes: upstream takes the other bucket members out of the request in Go map order, so when
they request different amounts the score can differ from run to run; the reference takes them in the
order they joined the bucket. The request score's scalars are summed in insertion order, not map order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.resource_info import Zero
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.framework.arguments import as_arguments
from schedcheck.reference.framework.event import Event, EventHandler
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import Session
from schedcheck.reference.plugins.task_topology_buckets import JobManager, task_name

PLUGIN_NAME = "task-topology"
WEIGHT_KEY = "task-topology.weight"
AFFINITY_ANNOTATION = "volcano.sh/task-topology-affinity"
ANTI_AFFINITY_ANNOTATION = "volcano.sh/task-topology-anti-affinity"
TASK_ORDER_ANNOTATION = "volcano.sh/task-topology-task-order"
MAX_NODE_SCORE = 100.0


class TopologyAnnotationError(ValueError):
    """A topology annotation names a task role the job lacks, or one twice in a group."""


@dataclass
class TaskTopology:
    affinity: list[list[str]] | None = None
    anti_affinity: list[list[str]] | None = None
    task_order: list[str] | None = None


def check_groups(job: JobInfo, groups: list[list[str]]) -> None:
    """affinityCheck: every non-empty name is a task role of the job, once per group."""
    roles = {task.task_role for task in job.tasks.values()}
    for group in groups:
        seen: set[str] = set()
        for name in group:
            if not name:
                continue
            if name not in roles:
                raise TopologyAnnotationError(f"task {name} do not exist in job <{job.namespace}/{job.name}>")
            if name in seen:
                raise TopologyAnnotationError(f"task {name} is duplicate in job <{job.namespace}/{job.name}>")
            seen.add(name)


def split_groups(job: JobInfo, text: str) -> list[list[str]]:
    groups = [part.split(",") for part in text.split(";")]
    check_groups(job, groups)
    return groups


def read_topology(job: JobInfo) -> TaskTopology | None:
    """readTopologyFromPgAnnotations: None without any of the keys; raises TopologyAnnotationError."""
    annotations = job.pod_group.annotations if job.pod_group is not None else {}
    keys = (AFFINITY_ANNOTATION, ANTI_AFFINITY_ANNOTATION, TASK_ORDER_ANNOTATION)
    if not any(key in annotations for key in keys):
        return None
    topology = TaskTopology()
    if AFFINITY_ANNOTATION in annotations:
        topology.affinity = split_groups(job, annotations[AFFINITY_ANNOTATION])
    if ANTI_AFFINITY_ANNOTATION in annotations:
        topology.anti_affinity = split_groups(job, annotations[ANTI_AFFINITY_ANNOTATION])
    if TASK_ORDER_ANNOTATION in annotations:
        topology.task_order = annotations[TASK_ORDER_ANNOTATION].split(",")
        check_groups(job, [topology.task_order])
    return topology


def job_manager(job: JobInfo) -> JobManager | None:
    """initBucket for one job: its manager with buckets built, or None when it has no topology."""
    if not job.task_status_index.get(TaskStatus.Pending):
        return None
    try:
        topology = read_topology(job)
    except TopologyAnnotationError:
        return None  # upstream logs it at V(4) and leaves the job alone
    if topology is None:
        return None
    manager = JobManager(job.uid)
    manager.apply(topology.affinity or [], topology.anti_affinity or [], topology.task_order or [])
    manager.construct(list(job.tasks.values()))
    return manager


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)


class TaskTopologyPlugin(Plugin):
    name = PLUGIN_NAME

    def __init__(self, arguments: dict[str, Any]) -> None:
        super().__init__(arguments)
        self.weight = as_arguments(arguments).get_int(WEIGHT_KEY, 1)
        self.managers: dict[str, JobManager] = {}

    def on_session_open(self, ssn: Session) -> None:
        for job in ssn.jobs.values():
            manager = job_manager(job)
            if manager is not None:
                self.managers[job.uid] = manager
        ssn.add_fn("task_order", self.name, self.task_order)
        ssn.add_fn("node_order", self.name, self.node_order)
        ssn.add_event_handler(EventHandler(allocate_func=self._on_allocate))

    def on_session_close(self, ssn: Session) -> None:
        self.managers = {}

    def task_order(self, left: TaskInfo, right: TaskInfo) -> int:
        lmanager, rmanager = self.managers.get(left.job), self.managers.get(right.job)
        if lmanager is None or rmanager is None:
            return 0
        lbucket, rbucket = lmanager.bucket_of(left), rmanager.bucket_of(right)
        if (lbucket is None) != (rbucket is None):
            return -1 if lbucket is not None else 1
        if left.job != right.job or lbucket is None or rbucket is None:
            return 0
        if len(lbucket.tasks) != len(rbucket.tasks):
            return -1 if len(lbucket.tasks) > len(rbucket.tasks) else 1
        if lbucket.index == rbucket.index:
            return -lmanager.affinity_order(left, right)
        return _sign(lbucket.index - rbucket.index)

    def bucket_score(self, task: TaskInfo, node: NodeInfo) -> tuple[int, JobManager | None]:
        """calcBucketScore: the unweighted score, and the job's manager when the task fits the node."""
        room = node.idle.clone().add(node.releasing)
        if room.less_partly(task.resreq, Zero):
            return 0, None
        manager = self.managers.get(task.job)
        bucket = manager.bucket_of(task) if manager is not None else None
        if manager is None or bucket is None:
            return 0, manager
        score = bucket.nodes.get(node.name, 0)
        bound_here = manager.node_task_names.get(node.name)
        if bound_here is not None:
            score += min(0, manager.affinity_to(task_name(task), bound_here, only_anti=True))
        score += len(bucket.tasks)
        if bucket.request.less_equal(room, Zero):
            return score, manager
        remains = bucket.request.clone()
        for uid, member in bucket.tasks.items():
            if uid == task.uid:
                continue
            remains.sub(member.resreq)
            score -= 1
            if remains.less_equal(room, Zero):
                break
        return score, manager

    def node_order(self, task: TaskInfo, node: NodeInfo) -> float:
        score, manager = self.bucket_score(task, node)
        weighted = float(score * self.weight)
        if manager is not None and manager.max_size != 0:
            weighted = weighted * MAX_NODE_SCORE / float(manager.max_size)
        return weighted

    def _on_allocate(self, event: Event) -> None:
        manager = self.managers.get(event.task.job)
        if manager is not None:
            manager.task_bound(event.task)


register_plugin_builder(PLUGIN_NAME, TaskTopologyPlugin)

"""SubJobs: the groups a PodGroup's subGroupPolicy cuts a job into (pkg/scheduler/api/sub_job_info.go).

A pod matching a policy's labelSelector belongs to the subjob named by the policy and the values of its
matchLabelKeys labels (a pod missing one of them matches no policy); every other pod belongs to the
job's default subjob. A subjob of a policy needs subGroupSize pods (1 when unset); the default subjob of a
job without policies needs the job's minMember, of a job with policies 1. Each subjob carries its own copy
of a network topology (the policy's, or the job's for the default subjob), its allocated hypernode and
the hypernode gangpreempt / gangreclaim nominated for it (read by allocate's fast path). A job's clone
copies both (CloneStatusFrom), but the cache's copy is only ever given the allocated one back at session
close (updateJobInfo), so a nomination lives for the rest of its session only.

A subjob keeps its own status index, written the way upstream writes it: a task leaves the bucket of the
status the task object *passed in* carries, not the one the job holds. A statement replaying a saved copy
(RecoverOperations) passes a copy whose status differs from the job's record, so the record stays behind
in its old bucket: after a hypernode search, say, an allocated task is still listed Pending. Counters,
worksheets and the subjob's minimum resources read that index, stale entries included.
"""

from __future__ import annotations

import copy
import re
from typing import TYPE_CHECKING

from schedcheck.reference.api.resource_info import Resource
from schedcheck.reference.api.types import TaskStatus, allocated_status
from schedcheck.reference.k8s import NetworkTopology, Pod, SubGroupPolicy

if TYPE_CHECKING:
    from schedcheck.reference.api.job_info import JobInfo
    from schedcheck.reference.api.task_info import TaskInfo

_READY = (TaskStatus.Bound, TaskStatus.Binding, TaskStatus.Running, TaskStatus.Allocated, TaskStatus.Succeeded)


class SubJobInfo:
    __slots__ = ("gid", "uid", "job", "min_available", "match_index", "network_topology", "allocated_hyper_node",
                 "nominated_hyper_node", "task_uids", "status_index", "priority", "task_priorities")

    def __init__(self, gid: str, uid: str, job: JobInfo, min_available: int = 1,
                 network_topology: NetworkTopology | None = None, match_values: list[str] | None = None) -> None:
        self.gid, self.uid, self.job = gid, uid, job
        self.min_available = min_available
        self.network_topology = copy.copy(network_topology)
        self.match_index = _atoi(match_values[0]) if match_values else 0
        self.allocated_hyper_node = ""
        self.nominated_hyper_node = ""
        self.task_uids: set[str] = set()
        self.status_index: dict[TaskStatus, dict[str, TaskInfo]] = {}
        # upstream's Priority (the highest task priority added, from 0) and taskPriorities
        self.priority = 0
        self.task_priorities: dict[int, set[str]] = {}

    def clone_for(self, job: JobInfo) -> SubJobInfo:
        """An empty copy: the job's clone adds every task again, so the copy's index starts clean."""
        c = SubJobInfo.__new__(SubJobInfo)
        c.gid, c.uid, c.job, c.min_available = self.gid, self.uid, job, self.min_available
        c.network_topology = copy.copy(self.network_topology)
        c.match_index, c.allocated_hyper_node = self.match_index, self.allocated_hyper_node
        c.nominated_hyper_node = self.nominated_hyper_node
        c.task_uids, c.status_index = set(), {}
        c.priority, c.task_priorities = 0, {}
        return c

    def add_task(self, task: TaskInfo) -> None:
        self.task_uids.add(task.uid)
        self.status_index.setdefault(task.status, {})[task.uid] = task
        self.task_priorities.setdefault(task.priority, set()).add(task.uid)
        if task.priority > self.priority:
            self.priority = task.priority

    def delete_task(self, task: TaskInfo) -> None:
        """Leaves the bucket of the passed object's status (see the module docstring)."""
        self.task_uids.discard(task.uid)
        bucket = self.status_index.get(task.status)
        if bucket is not None:
            bucket.pop(task.uid, None)
            if not bucket:
                del self.status_index[task.status]
        uids = self.task_priorities.get(task.priority)
        if uids is not None:
            uids.discard(task.uid)
            if not uids:
                del self.task_priorities[task.priority]
                # as upstream: recomputed only when the leaving priority exceeds the subjob's, so a subjob's
                # priority does not drop when its highest-priority task leaves
                if task.priority > self.priority:
                    self.priority = max([0, *self.task_priorities])

    def tasks(self) -> list[TaskInfo]:
        tasks = self.job.tasks
        return [tasks[uid] for uid in sorted(self.task_uids) if uid in tasks]

    def _count(self, statuses) -> int:
        return sum(len(self.status_index.get(s, ())) for s in statuses)

    def tasks_with_status(self, status: TaskStatus) -> list[TaskInfo]:
        """The index's bucket (the objects as indexed, stale ones included), by uid."""
        bucket = self.status_index.get(status, {})
        return [bucket[uid] for uid in sorted(bucket)]

    def ready_task_num(self) -> int:
        return self._count(_READY)

    def pending_best_effort_task_num(self) -> int:
        return sum(1 for t in self.status_index.get(TaskStatus.Pending, {}).values() if t.best_effort)

    def waiting_task_num(self) -> int:
        return self._count((TaskStatus.Pipelined,))

    def allocated_task_num(self) -> int:
        return sum(len(bucket) for status, bucket in self.status_index.items() if allocated_status(status))

    def is_ready(self) -> bool:
        return self.ready_task_num() + self.pending_best_effort_task_num() >= self.min_available

    def is_pipelined(self) -> bool:
        return self.waiting_task_num() + self.ready_task_num() + self.pending_best_effort_task_num() >= \
            self.min_available

    def min_resources(self) -> Resource:
        """GetMinResources: the pending tasks' requests (a subjob is scheduled as a whole)."""
        total = Resource()
        for task in self.status_index.get(TaskStatus.Pending, {}).values():
            total.add(task.init_resreq)
        return total

    def hard_mode(self) -> tuple[bool, int]:
        nt = self.network_topology
        if nt is None or nt.highest_tier_allowed is None:
            return False, 0
        return nt.mode == "hard", nt.highest_tier_allowed

    def __repr__(self) -> str:
        return f"SubJob({self.uid} min={self.min_available} tasks={len(self.task_uids)})"


def _atoi(text: str) -> int:
    """strconv.Atoi, 0 when it fails."""
    return int(text) if re.fullmatch(r"[+-]?\d+", text) and abs(int(text)) < 2**63 else 0


def sub_job_match_values(policy: SubGroupPolicy, pod: Pod) -> list[str] | None:
    """getSubJobMatchValues: None when the pod is not of this policy, else its match label values."""
    from schedcheck.reference.plugins.interpod_affinity import selector_matches

    if policy.label_selector is not None and not selector_matches(policy.label_selector, pod.labels):
        return None
    values = []
    for key in policy.match_label_keys:
        value = pod.labels.get(key, "")
        if not value:
            return None
        values.append(value)
    return values


def sub_job_gid(job: str, policy: str) -> str:
    return f"{job}/{policy}"


# apimachinery's util/rand alphabet (no vowels), which SafeEncodeString indexes by each character's code
_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
MAX_SUB_JOB_ID_BYTES = 128


def _fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def sub_job_id(job: str, policy: str, values: list[str]) -> str:
    """The policy's label values joined by dashes; longer than 128 bytes, their 32-bit FNV-1a hash in decimal,
    each digit mapped through SafeEncodeString (two long values that hash alike share one subjob, as upstream)."""
    joined = "-".join(values)
    if len(joined.encode()) > MAX_SUB_JOB_ID_BYTES:
        joined = "".join(_SAFE_ALPHABET[ord(c) % len(_SAFE_ALPHABET)] for c in str(_fnv32a(joined.encode())))
    return f"{job}/{policy}-{joined}"

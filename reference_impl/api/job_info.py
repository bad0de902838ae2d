"""JobInfo: a PodGroup and its tasks (pkg/scheduler/api/job_info.go; semantics §4).

Subgroup policies (subGroupPolicy) are not part of the scenario format, so a
job has only upstream's default subjob and the subjob checks reduce to the job
checks, as they do upstream for jobs without a policy.
"""

from __future__ import annotations

import copy
from collections import Counter

from schedcheck.reference.api.resource_info import Resource, exceeded_part
from schedcheck.reference.api.task_info import TaskInfo, parse_go_bool
from schedcheck.reference.api.types import TaskStatus, allocated_status, scheduled_status
from schedcheck.reference.api.unschedule_info import FitErrors
from schedcheck.reference.api.sub_job_info import SubJobInfo, sub_job_gid, sub_job_id, sub_job_match_values
from schedcheck.reference.k8s import PREEMPTABLE_KEY, NetworkTopology, PodGroup
from schedcheck.reference.util.timestamps import parse_timestamp

_READY = (TaskStatus.Bound, TaskStatus.Binding, TaskStatus.Running, TaskStatus.Allocated, TaskStatus.Succeeded)
_VALID = (TaskStatus.Allocated, TaskStatus.Binding, TaskStatus.Bound, TaskStatus.Running,
          TaskStatus.Succeeded, TaskStatus.Pipelined, TaskStatus.Pending)


class JobInfo:
    def __init__(self, uid: str) -> None:
        self.uid = uid
        self.name = ""
        self.namespace = ""
        self.queue = ""
        self.priority = 0
        self.min_available = 0
        # Network topology (hyper_node_info.go): the job's own copy of spec.networkTopology, which the
        # session adjusts (tier names resolved, soft mode made hard up to the cluster top), and the lowest
        # hypernode holding its tasks. SubJobs (sub_job_info.py): the default one and one per subGroupPolicy
        # match, which task is in which, and each policy's minSubGroups.
        self.network_topology: NetworkTopology | None = None
        self.allocated_hyper_node = ""
        self.sub_jobs: dict[str, SubJobInfo] = {}
        self.task_to_sub_job: dict[str, str] = {}
        self.min_sub_jobs: dict[str, int] = {}
        self.task_min_available: dict[str, int] = {}
        self.task_min_available_total = 0
        self.creation_timestamp = parse_timestamp("")
        self.pod_group: PodGroup | None = None
        self.preemptable = False
        self.tasks: dict[str, TaskInfo] = {}
        self.task_status_index: dict[TaskStatus, dict[str, TaskInfo]] = {}
        self.allocated = Resource()
        self.total_request = Resource()
        self.nodes_fit_errors: dict[str, FitErrors] = {}
        self.job_fit_errors = ""
        # Persistent pipelines (seed 004 / PR #4552): ReadyTaskNum and the per-role ready counts
        # include Pipelined tasks, a gang semantics change the PR makes. Off: upstream.
        self.pipelined_ready = False

    # -- membership ---------------------------------------------------------------------

    def set_pod_group(self, pod_group: PodGroup) -> None:
        self.name = pod_group.name
        self.namespace = pod_group.namespace
        self.min_available = pod_group.min_member
        self.queue = pod_group.queue
        self.creation_timestamp = parse_timestamp(pod_group.creation_timestamp)
        value = pod_group.annotations.get(PREEMPTABLE_KEY, pod_group.labels.get(PREEMPTABLE_KEY))
        self.preemptable = parse_go_bool(value) is True if value is not None else False
        self.task_min_available = dict(pod_group.min_task_member)
        self.task_min_available_total = sum(self.task_min_available.values())
        old = self.pod_group
        self.pod_group = pod_group
        self.network_topology = copy.copy(pod_group.network_topology)
        if old is None or old.sub_group_policy != pod_group.sub_group_policy:
            self.sub_jobs, self.task_to_sub_job = {}, {}
            for task in self.tasks.values():
                self._sub_job_for(task).add_task(task)
            self.min_sub_jobs = {sub_job_gid(self.uid, p.name): p.min_sub_groups or 0
                                 for p in pod_group.sub_group_policy}

    # -- subjobs ------------------------------------------------------------------------

    @property
    def default_sub_job_id(self) -> str:
        return self.uid

    @property
    def sub_job(self) -> SubJobInfo:
        """The default subjob (getOrCreateDefaultSubJob)."""
        found = self.sub_jobs.get(self.uid)
        if found is None:
            policies = self.pod_group is not None and bool(self.pod_group.sub_group_policy)
            found = self.sub_jobs[self.uid] = SubJobInfo(self.uid, self.uid, self,
                                                         1 if policies else self.min_available,
                                                         self.network_topology)
        return found

    def _sub_job_for(self, task: TaskInfo) -> SubJobInfo:
        """getOrCreateSubJob: the subjob the task's pod matches now (by policy, else the default one),
        matched again on every add as upstream does (a pod whose labels changed, or an extender victim's copy
        with other labels, moves), and remembered until the task is deleted."""
        target = None
        for policy in self.pod_group.sub_group_policy if self.pod_group is not None else ():
            values = sub_job_match_values(policy, task.pod)
            if values is not None:
                uid = sub_job_id(self.uid, policy.name, values)
                target = self.sub_jobs.get(uid)
                if target is None:
                    size = policy.sub_group_size if policy.sub_group_size is not None else 1
                    target = self.sub_jobs[uid] = SubJobInfo(sub_job_gid(self.uid, policy.name), uid, self, size,
                                                             policy.network_topology, values)
                break
        if target is None:
            target = self.sub_job
        self.task_to_sub_job[task.uid] = target.uid
        return target

    def contains_sub_job_policy(self) -> bool:
        return self.pod_group is not None and bool(self.pod_group.sub_group_policy)

    def sub_job_of(self, task: TaskInfo) -> SubJobInfo | None:
        uid = self.task_to_sub_job.get(task.uid)
        return self.sub_jobs.get(uid) if uid is not None else None

    def _sub_job_condition(self, condition) -> bool:
        if not any(self.min_sub_jobs.values()):
            return True
        counts: dict[str, int] = {}
        for sub in self.sub_jobs.values():
            counts[sub.gid] = counts.get(sub.gid, 0) + (1 if condition(sub) else 0)
        return all(counts.get(gid, 0) >= n for gid, n in self.min_sub_jobs.items() if n)

    def check_sub_job_ready(self) -> bool:
        return self._sub_job_condition(lambda sub: sub.is_ready())

    def check_sub_job_pipelined(self) -> bool:
        return self._sub_job_condition(lambda sub: sub.is_pipelined())

    def check_sub_job_valid(self) -> bool:
        if not any(self.min_sub_jobs.values()):
            return True
        counts: dict[str, int] = {}
        for sub in self.sub_jobs.values():
            counts[sub.gid] = counts.get(sub.gid, 0) + 1
        return all(counts.get(gid, 0) >= n for gid, n in self.min_sub_jobs.items())

    def add_task_info(self, task: TaskInfo) -> None:
        self._sub_job_for(task).add_task(task)
        self.tasks[task.uid] = task
        self.task_status_index.setdefault(task.status, {})[task.uid] = task
        self.total_request.add(task.resreq)
        if allocated_status(task.status):
            self.allocated.add(task.resreq)

    def delete_task_info(self, task: TaskInfo) -> None:
        stored = self.tasks.get(task.uid)
        if stored is None:
            return
        self.total_request.sub(stored.resreq)
        if allocated_status(stored.status):
            self.allocated.sub(stored.resreq)
        del self.tasks[stored.uid]
        bucket = self.task_status_index.get(stored.status)
        if bucket is not None:
            bucket.pop(stored.uid, None)
            if not bucket:
                del self.task_status_index[stored.status]
        sub = self.sub_jobs.get(self.task_to_sub_job.get(task.uid, ""))
        if sub is not None:
            sub.delete_task(task)  # the passed object, not the stored one: upstream's subjob index can go stale
        self.task_to_sub_job.pop(task.uid, None)

    def update_task_status(self, task: TaskInfo, status: TaskStatus) -> None:
        """Delete (if present), set the status, add: the passed object replaces the stored one."""
        if task.uid in self.tasks:
            self.delete_task_info(task)
        task.status = status
        self.add_task_info(task)

    def clone(self) -> JobInfo:
        c = JobInfo(self.uid)
        c.name, c.namespace, c.queue = self.name, self.namespace, self.queue
        c.priority = self.priority
        c.min_available = self.min_available
        c.task_min_available = dict(self.task_min_available)
        c.task_min_available_total = self.task_min_available_total
        c.creation_timestamp = self.creation_timestamp
        if self.pod_group is not None:
            # The session writes only the phase and replaces conditions: a shallow copy isolates it.
            c.pod_group = copy.copy(self.pod_group)
            c.pod_group.conditions = list(self.pod_group.conditions)
        c.preemptable = self.preemptable
        c.network_topology = copy.copy(self.network_topology)
        c.allocated_hyper_node = self.allocated_hyper_node
        c.sub_jobs = {uid: sub.clone_for(c) for uid, sub in self.sub_jobs.items()}
        c.min_sub_jobs = dict(self.min_sub_jobs)
        c.job_fit_errors = self.job_fit_errors
        c.pipelined_ready = self.pipelined_ready
        for task in self.tasks.values():
            c.add_task_info(task.clone())
        # Upstream's Clone starts with no subjobs: only those its tasks land in exist in the copy (an emptied one,
        # or a default one no task is in, is not carried over).
        c.sub_jobs = {uid: sub for uid, sub in c.sub_jobs.items() if sub.task_uids}
        return c

    def hard_mode(self) -> tuple[bool, int]:
        """IsHardTopologyMode: (hard, highest tier allowed)."""
        nt = self.network_topology
        if nt is None or nt.highest_tier_allowed is None:
            return False, 0
        return nt.mode == "hard", nt.highest_tier_allowed

    def reset_fit_err(self) -> None:
        self.job_fit_errors = ""
        self.nodes_fit_errors = {}

    def contains_hard_topology(self) -> bool:
        return self.hard_mode()[0] or any(sub.hard_mode()[0] for sub in self.sub_jobs.values())

    def contains_network_topology(self) -> bool:
        return self.network_topology is not None or any(
            sub.network_topology is not None for sub in self.sub_jobs.values())

    # -- counters (semantics §4.3) ------------------------------------------------------

    def _count(self, statuses) -> int:
        index = self.task_status_index
        return sum(len(index.get(s, ())) for s in statuses)

    def tasks_with_status(self, status: TaskStatus) -> list[TaskInfo]:
        return list(self.task_status_index.get(status, {}).values())

    def ready_task_num(self) -> int:
        if self.pipelined_ready:
            return self._count(_READY + (TaskStatus.Pipelined,))
        return self._count(_READY)

    def waiting_task_num(self) -> int:
        return self._count((TaskStatus.Pipelined,))

    def pending_best_effort_task_num(self) -> int:
        return sum(1 for t in self.task_status_index.get(TaskStatus.Pending, {}).values() if t.best_effort)

    def valid_task_num(self) -> int:
        return self._count(_VALID)

    def allocated_task_num(self) -> int:
        return sum(len(b) for s, b in self.task_status_index.items() if allocated_status(s))

    def scheduled_task_num(self) -> int:
        return sum(len(b) for s, b in self.task_status_index.items() if scheduled_status(s))

    def releasing_scheduled_task_num(self) -> int:
        return sum(1 for t in self.task_status_index.get(TaskStatus.Releasing, {}).values() if t.node_name)

    def is_ready(self) -> bool:
        return self.ready_task_num() + self.pending_best_effort_task_num() >= self.min_available

    def is_pipelined(self) -> bool:
        return (self.waiting_task_num() + self.ready_task_num() + self.pending_best_effort_task_num()
                >= self.min_available)

    def is_starving(self) -> bool:
        return self.waiting_task_num() + self.ready_task_num() < self.min_available

    def is_pending(self) -> bool:
        return self.pod_group is None or self.pod_group.phase in ("Pending", "")

    # -- per-role checks (§4.4) ----------------------------------------------------------

    def _occupied_roles(self, with_pipelined: bool) -> Counter[str]:
        occupied: Counter[str] = Counter()
        for status, bucket in self.task_status_index.items():
            if allocated_status(status) or status == TaskStatus.Succeeded or (
                with_pipelined and status == TaskStatus.Pipelined
            ):
                for task in bucket.values():
                    occupied[task.task_role] += 1
            elif status == TaskStatus.Pending:
                for task in bucket.values():
                    if task.init_resreq.is_empty():
                        occupied[task.task_role] += 1
        return occupied

    def _roles_meet_minimum(self, occupied: Counter[str]) -> bool:
        return all(occupied[role] >= n for role, n in self.task_min_available.items())

    def check_task_ready(self) -> bool:
        if self.min_available < self.task_min_available_total:
            return True
        return self._roles_meet_minimum(self._occupied_roles(with_pipelined=self.pipelined_ready))

    def check_task_pipelined(self) -> bool:
        if self.min_available < self.task_min_available_total:
            return True
        return self._roles_meet_minimum(self._occupied_roles(with_pipelined=True))

    def check_task_valid(self) -> bool:
        if self.min_available < self.task_min_available_total:
            return True
        actual: Counter[str] = Counter()
        for status in _VALID:
            for task in self.task_status_index.get(status, {}).values():
                actual[task.task_role] += 1
        return all(actual[role] >= n for role, n in self.task_min_available.items() if n != 0)

    # -- allocation-loop helpers (§4.5) --------------------------------------------------

    def fit_failed_roles(self, sub_job: str | None = None) -> set[str]:
        """FitFailedRoles: roles of the (sub)job's tasks that failed the predicates."""
        return {self.tasks[uid].task_role for uid in self.nodes_fit_errors
                if uid in self.tasks and (sub_job is None or self.task_to_sub_job.get(uid) == sub_job)}

    def task_has_fit_errors(self, task: TaskInfo, sub_job: str | None = None) -> bool:
        return bool(task.task_role) and task.task_role in self.fit_failed_roles(sub_job or self.task_to_sub_job.get(task.uid))

    def reset_sub_job_fit_err(self, sub_job: str) -> None:
        for uid in [uid for uid in self.nodes_fit_errors if self.task_to_sub_job.get(uid) == sub_job]:
            del self.nodes_fit_errors[uid]

    def need_continue_allocating(self, sub_job: str | None = None) -> bool:
        if self.min_available == len(self.tasks):
            return False
        sub = self.sub_jobs.get(sub_job if sub_job is not None else self.uid)
        if sub is not None and sub.min_available >= sum(1 for uid in sub.task_uids if uid in self.tasks):
            return False
        if self.contains_sub_job_policy():
            return True  # upstream: the role strategies below do not apply to subgroup jobs
        failed = self.fit_failed_roles(sub.uid if sub is not None else None)
        if self.min_available < self.task_min_available_total:
            left = sum(1 for t in self.task_status_index.get(TaskStatus.Pending, {}).values()
                       if t.task_role not in failed)
            return self.ready_task_num() + left >= self.min_available
        occupied = self._occupied_roles(with_pipelined=False)
        for role in failed:
            minimum = self.task_min_available.get(role, 0)
            if minimum and occupied[role] < minimum:
                return False
        return True

    # -- resource views (§4.6) -----------------------------------------------------------

    def get_min_resources(self) -> Resource:
        if self.pod_group is None or self.pod_group.min_resources is None:
            return Resource()
        return Resource.from_resource_list(self.pod_group.min_resources)

    def get_elastic_resources(self) -> Resource:
        return exceeded_part(self.allocated, self.get_min_resources())

    def sch_gated_pod_resources(self) -> Resource:
        """GetSchGatedPodResources: requests of gated tasks, except those held only by Volcano's queue gate."""
        total = Resource()
        for task in self.tasks.values():
            if task.sch_gated and task.is_sch_gated_by_others():
                total.add(task.resreq)
        return total

    def deduct_sch_gated_resources(self, res: Resource) -> Resource:
        """DeductSchGatedResources: res minus the gated requests, each dimension floored at 0.

        Only scalars present in `res` are touched; with nothing gated, `res` itself is returned.
        """
        gated = self.sch_gated_pod_resources()
        if gated.is_empty():
            return res
        result = res.clone()
        result.milli_cpu = max(result.milli_cpu - gated.milli_cpu, 0.0)
        result.memory = max(result.memory - gated.memory, 0.0)
        gated_scalars = gated.scalars or {}
        for name, value in (res.scalars or {}).items():
            if name in gated_scalars:
                result.set_scalar(name, max(value - gated_scalars[name], 0.0))
        return result

    def record_fit_errors(self, task: TaskInfo, fit_errors: FitErrors) -> None:
        self.nodes_fit_errors[task.uid] = fit_errors

    def __repr__(self) -> str:
        return f"Job({self.uid} queue={self.queue} min={self.min_available} tasks={len(self.tasks)})"


def task_scheduling_reason(task) -> tuple[str, str, str]:
    """(reason, message, nominated node) for a task left unbound (TaskSchedulingReason)."""
    ctx = task.last_transaction
    status = ctx.status if ctx is not None else task.status
    node_name = ctx.node_name if ctx is not None else task.node_name
    eviction = ctx.eviction_occurred if ctx is not None else task.eviction_occurred
    if status == TaskStatus.Allocated:
        return "Schedulable", f"can possibly be assigned to {node_name} once minAvailable is satisfied", ""
    if status == TaskStatus.Pipelined:
        nominated = node_name if eviction else ""
        return "Unschedulable", f"can possibly be assigned to {node_name} once resource is released", nominated
    if status == TaskStatus.Pending:
        return "Unschedulable", "", ""
    return str(status), "", ""

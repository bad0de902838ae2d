"""Victim bundles for gang-aware eviction (pkg/scheduler/actions/utils/bundle.go): a victim job's
candidates split into a "safe" bundle (taken while the job stays gang-ready) and a "whole" bundle,
their ROI against the preemptor's need, and their order (see actions/gangpreempt.py, step 3)."""


import enum
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.resource_info import Resource
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import (
    TaskStatus,
    allocated_status,
)
from schedcheck.reference.framework.session import Session

MAX_DOMAINS_KEY = "maxDomains"


class BundleType(enum.IntEnum):
    SAFE = 0
    WHOLE = 1


@dataclass
class Bundle:
    type: BundleType
    job: JobInfo
    tasks: list[TaskInfo]
    local_res: Resource
    global_res: Resource


def sum_resreq(tasks: list[TaskInfo]) -> Resource:
    total = Resource()
    for task in tasks:
        total.add(task.resreq)
    return total


def sum_init_resreq(tasks: list[TaskInfo]) -> Resource:
    total = Resource()
    for task in tasks:
        total.add(task.init_resreq)
    return total


def sum_idle_and_releasing(nodes: list[NodeInfo]) -> Resource:
    total = Resource()
    for node in nodes:
        total.add(Resource().add(node.idle).add(node.releasing))
    return total


def _role_surplus(job: JobInfo) -> dict[str, int] | None:
    """Per role, how many tasks it can lose above its minimum; None when roles are not enforced."""
    if job.min_available < job.task_min_available_total:
        return None  # CheckTaskReady's own bypass
    ready: dict[str, int] = {}
    for status, bucket in job.task_status_index.items():
        for task in bucket.values():
            counted = allocated_status(status) or status == TaskStatus.Succeeded or (
                status == TaskStatus.Pending and task.init_resreq.is_empty())
            if counted:
                ready[task.task_role] = ready.get(task.task_role, 0) + 1
    return {role: ready.get(role, 0) - minimum for role, minimum in job.task_min_available.items()}


def create_job_bundles(job: JobInfo, local_tasks: list[TaskInfo]) -> list[Bundle]:
    """Split a victim job's candidate tasks into a safe bundle and a whole bundle (CreateJobBundles)."""
    if not local_tasks:
        return []
    local_tasks.sort(key=lambda t: (t.priority, t.uid))
    job_surplus = job.ready_task_num() - job.min_available
    if job_surplus < 0:
        return [Bundle(BundleType.SAFE, job, local_tasks, sum_resreq(local_tasks), Resource())]
    role_surplus = _role_surplus(job)
    # Subgroup policies with minSubGroups: per group, the ready subjobs beyond the minimum; a subjob
    # already missing a pod ("broken") costs nothing more (CheckSubJobReady's count).
    enforce_sub_jobs = bool(job.min_sub_jobs)
    broken: set[str] = set()
    group_surplus: dict[str, int] = {}
    if enforce_sub_jobs:
        for sub in job.sub_jobs.values():
            if sub.is_ready():
                group_surplus[sub.gid] = group_surplus.get(sub.gid, 0) + 1
            else:
                broken.add(sub.uid)
        for gid, minimum in job.min_sub_jobs.items():
            group_surplus[gid] = group_surplus.get(gid, 0) - minimum
    safe, whole = [], []
    for task in local_tasks:
        has_role_min = role_surplus is not None and task.task_role in job.task_min_available
        role_safe = not has_role_min or role_surplus[task.task_role] > 0  # type: ignore[index]
        sub = None
        group_safe = True
        if enforce_sub_jobs:
            sub = job.sub_jobs.get(job.task_to_sub_job.get(task.uid, ""))
            # an orphan task goes to the whole bundle
            group_safe = sub is not None and (sub.uid in broken or group_surplus.get(sub.gid, 0) > 0)
        if job_surplus > 0 and role_safe and group_safe:
            safe.append(task)
            job_surplus -= 1
            if has_role_min:
                role_surplus[task.task_role] -= 1  # type: ignore[index]
            if sub is not None and sub.uid not in broken:  # its first eviction breaks the subjob
                broken.add(sub.uid)
                group_surplus[sub.gid] = group_surplus.get(sub.gid, 0) - 1
        else:
            whole.append(task)
    bundles = []
    if safe:
        bundles.append(Bundle(BundleType.SAFE, job, safe, sum_resreq(safe), Resource()))
    if whole:
        all_tasks = sum_resreq(list(job.tasks.values()))
        bundles.append(Bundle(BundleType.WHOLE, job, whole, sum_resreq(whole), all_tasks))
    return bundles


def flatten_bundles(bundles: list[Bundle]) -> list[TaskInfo]:
    return [task for bundle in bundles for task in bundle.tasks]


def apply_allowed_tasks(bundles: list[Bundle], allowed: set[str]) -> list[Bundle]:
    """Safe bundles keep their allowed tasks; a whole bundle survives only if all are allowed."""
    valid = []
    for bundle in bundles:
        if not bundle.tasks:
            continue
        approved = [t for t in bundle.tasks if t.uid in allowed]
        if bundle.type == BundleType.WHOLE:
            if len(approved) == len(bundle.tasks):
                valid.append(bundle)
        elif approved:
            valid.append(replace(bundle, tasks=approved, local_res=sum_resreq(approved)))
    return valid


def score_against_need(res: Resource, need: Resource, cap_at_need: bool) -> float:
    score = 0.0
    for name in need.resource_names():
        wanted = need.get(name)
        if wanted <= 0:
            continue
        value = res.get(name)
        if cap_at_need and value > wanted:
            value = wanted
        score += value / wanted
    return score


def bundle_roi(bundle: Bundle, need: Resource) -> float:
    local = score_against_need(bundle.local_res, need, True)
    whole = score_against_need(bundle.global_res, need, False)
    return math.inf if whole == 0 else local / whole


def _stable_bundle_less(left: Bundle, right: Bundle) -> bool:
    if left.job.uid != right.job.uid:
        return left.job.uid < right.job.uid
    left_first = left.tasks[0].uid if left.tasks else ""
    right_first = right.tasks[0].uid if right.tasks else ""
    if left_first != right_first:
        return left_first < right_first
    return len(left.tasks) < len(right.tasks)


BundleLess = Callable[[Bundle, Bundle], "bool | None"]


def sort_bundles(bundles: list[Bundle], need: Resource, owner_less: BundleLess) -> None:
    """sort.SliceStable with: type, then `owner_less` (None: undecided), then ROI, then identity."""

    def less(left: Bundle, right: Bundle) -> bool:
        if left.type != right.type:
            return left.type < right.type
        decided = owner_less(left, right)
        if decided is not None:
            return decided
        left_roi, right_roi = bundle_roi(left, need), bundle_roi(right, need)
        if left_roi != right_roi:
            return left_roi > right_roi
        return _stable_bundle_less(left, right)

    def compare(left: Bundle, right: Bundle) -> int:
        if less(left, right):
            return -1
        return 1 if less(right, left) else 0

    bundles.sort(key=functools.cmp_to_key(compare))


def victim_job_less(ssn: Session) -> BundleLess:
    """SortBundlesForPreempt's job key: the job that would be scheduled later goes first."""

    def less(left: Bundle, right: Bundle) -> bool | None:
        if left.job.uid == right.job.uid:
            return None
        ij = not ssn.job_order_fn(left.job, right.job)
        ji = not ssn.job_order_fn(right.job, left.job)
        return ij if ij != ji else None

    return less

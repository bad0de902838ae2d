"""gangpreempt: gang-aware preemption inside a queue (pkg/scheduler/actions/gangpreempt/gangpreempt.go,
actions/utils/{bundle,simulate,util}.go; semantics §8.7). Also the machinery gangreclaim shares.

For every queue (in queue order), every starving job of it (job order; a job is considered when it
is not Pending, passes JobValid and its queue exists) gets one statement:
1. pending = the job's Pending tasks that are neither scheduling-gated nor best-effort, in task
   order; need = Σ InitResreq. Nothing pending: the statement stays empty.
2. Candidates in the domain: tasks that are Bound or Running and preemptable, of jobs in the SAME
   queue with a strictly lower job priority, whose PodGroup does not opt out of preemption
   (`volcano.sh/preemptable` annotation or label; unset means allowed). Per victim job the
   candidates are split into bundles: "safe" tasks (lowest task priority first, then UID), taken
   while the job stays gang-ready (ReadyTaskNum − minAvailable and the per-role surplus), and a
   "whole" bundle of the rest, whose eviction breaks the gang. A job already not ready is one safe
   bundle.
3. Bundles are sorted: safe before whole, then the victim job that would be scheduled later first
   (!JobOrderFn), then ROI (freed resources capped at the need, over the job's whole request;
   safe bundles have an infinite ROI), then job UID, first task UID, size. The flattened list goes
   through ssn.unified_evictable (kind GangPreempt); a safe bundle keeps its allowed tasks, a whole
   bundle survives only if all its tasks are allowed; the survivors are sorted again, and whole
   bundles are dropped when `allowWholeBundle` is false.
4. Bundles are added cumulatively. Once need <= Σ(Idle + Releasing) of the domain + Σ the selected
   victims' requests, a nomination plan is dry-run: evict all selected victims, then pipeline
   every pending task (allocatable check, PrePredicate, the predicates in preempt mode after a
   FutureIdle check, allocate's idle-then-future-idle node choice, a final FutureIdle fit) with
   EvictionOccurred = "there are victims"; the plan holds if JobReady or JobPipelined holds after
   the pipelines and JobPipelined holds. The dry run is undone (statements discarded in reverse,
   which leaves last-transaction contexts on the tasks, as upstream) and the plan, saved as task
   clones, is replayed into the job's statement. A failed plan, or a failed replay (whose replayed
   part stays in the statement), moves on to the next bundle.
5. The statement is committed if JobPipelined holds for the job, else discarded.

Hypernodes. Upstream picks up to `maxDomains` (default 8) candidate hypernode domains from the
HyperNodeGradientForJob plugins and searches per sub-job within gradients; on commit it records
each sub-job's nominated hypernode for the next allocate. The scenario format has no hypernodes or
subgroup policies, so here there is exactly one domain, upstream's virtual cluster-top hypernode
holding every node in session node order, and one sub-job holding every task (its readiness is the
job's). `maxDomains` is parsed and validated but cannot matter, and no nomination is recorded.
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from schedcheck.reference.actions.allocate import PREDICATE_ERROR_CACHE_KEY, insufficient_resource_reason
from schedcheck.reference.actions.base import Action, register_action
from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.queue_info import QueueInfo
from schedcheck.reference.api.resource_info import Resource, Zero
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import (
    EvictionContext,
    EvictionKind,
    TaskStatus,
    allocated_status,
    preemptable_status,
)
from schedcheck.reference.api.unschedule_info import FitError, Status, StatusCode
from schedcheck.reference.framework.arguments import as_arguments
from schedcheck.reference.framework.session import Session
from schedcheck.reference.framework.statement import (
    Statement,
    StatementError,
    StatementOp,
    recover_operations,
    save_operations,
)
from schedcheck.reference.k8s import PREEMPTABLE_KEY
from schedcheck.reference.util.priority_queue import PriorityQueue
from schedcheck.reference.util.scheduler_helper import PredicateHelper, best_node_by_idle_then_future_idle

MAX_DOMAINS_KEY = "maxDomains"
ALLOW_WHOLE_BUNDLE_KEY = "allowWholeBundle"
DEFAULT_MAX_DOMAINS = 8
CLUSTER_TOP_HYPER_NODE = "<cluster-top-hypernode>"
REASON_GANG_PREEMPT = "gangpreempt"
REASON_GANG_RECLAIM = "gangreclaim"


@dataclass
class GangEvictionSettings:
    max_domains: int = DEFAULT_MAX_DOMAINS
    allow_whole_bundle: bool = True
    enable_predicate_error_cache: bool = True


def parse_settings(ssn: Session, action: str) -> GangEvictionSettings:
    """The action's own arguments; the predicate error cache flag is borrowed from allocate."""
    args = as_arguments(ssn.action_arguments(action))
    max_domains = args.get_int(MAX_DOMAINS_KEY, DEFAULT_MAX_DOMAINS)
    return GangEvictionSettings(
        max_domains=max_domains if max_domains > 0 else DEFAULT_MAX_DOMAINS,
        allow_whole_bundle=args.get_bool(ALLOW_WHOLE_BUNDLE_KEY, True),
        enable_predicate_error_cache=as_arguments(ssn.action_arguments("allocate")).get_bool(
            PREDICATE_ERROR_CACHE_KEY, True),
    )


# -- bundles (actions/utils/bundle.go) ----------------------------------------------------------


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
    safe, whole = [], []
    for task in local_tasks:
        has_role_min = role_surplus is not None and task.task_role in job.task_min_available
        role_safe = not has_role_min or role_surplus[task.task_role] > 0  # type: ignore[index]
        if job_surplus > 0 and role_safe:
            safe.append(task)
            job_surplus -= 1
            if has_role_min:
                role_surplus[task.task_role] -= 1  # type: ignore[index]
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


def is_job_preemptable_for_gang_eviction(job: JobInfo) -> bool:
    """An explicit `volcano.sh/preemptable` on the PodGroup decides; unset means allowed."""
    pod_group = job.pod_group
    if pod_group is None:
        return True
    if PREEMPTABLE_KEY in pod_group.annotations or PREEMPTABLE_KEY in pod_group.labels:
        return job.preemptable
    return True


# -- pending tasks and the nomination plan (actions/utils/simulate.go) ---------------------------


def eviction_worksheet(ssn: Session, job: JobInfo) -> PriorityQueue:
    """The job's pending, non-gated, non-best-effort tasks in task order (organizeEvictionWorksheet)."""
    tasks: PriorityQueue = PriorityQueue(ssn.task_order_fn)
    for task in job.tasks_with_status(TaskStatus.Pending):
        if task.sch_gated or task.resreq.is_empty():
            continue
        tasks.push(task)
    return tasks


def collect_pending_tasks(ssn: Session, job: JobInfo) -> list[TaskInfo]:
    """CollectPendingTasksForGangEviction: with a single sub-job, ready or not, all its pending tasks."""
    tasks = eviction_worksheet(ssn, job).clone()
    out = []
    while not tasks.empty():
        out.append(tasks.pop())
    return out


def simulate_predicate(ssn: Session, task: TaskInfo, node: NodeInfo) -> Exception | None:
    ok, names = task.init_resreq.less_equal_with_resources_name(node.future_idle(), Zero)
    if not ok:
        return FitError(task.key, node.name, [Status(StatusCode.Unschedulable, insufficient_resource_reason(names))])
    return ssn.predicate_for_preempt_action(task, node)


def _intersect_by_name(primary: list[NodeInfo], allowed: list[NodeInfo]) -> list[NodeInfo]:
    if not allowed:
        return primary
    names = {n.name for n in allowed}
    return [n for n in primary if n.name in names]


def _place_task(ssn: Session, trial: Statement, helper: PredicateHelper, queue: QueueInfo | None,
                task: TaskInfo, candidates: list[NodeInfo], victims_present: bool, enable_cache: bool) -> bool:
    """One task of a dry run: False when it cannot be pipelined anywhere in the domain."""
    if queue is not None and not ssn.allocatable(queue, task):
        return False
    nodes = _intersect_by_name(candidates, ssn.filter_out_unschedulable_and_unresolvable_nodes(task))
    if not nodes or ssn.pre_predicate_fn(task) is not None:
        return False
    feasible, _ = helper.predicate_nodes(task, nodes, lambda t, n: simulate_predicate(ssn, t, n), enable_cache)
    best = best_node_by_idle_then_future_idle(ssn, task, feasible) if feasible else None
    if best is None or not task.init_resreq.less_equal(best.future_idle(), Zero):
        return False
    try:
        trial.pipeline(task, best.name, victims_present)
    except StatementError:
        # Pipeline already rolled back; upstream rolls back once more, firing DeallocateFunc twice.
        trial.un_pipeline(task)
        return False
    return True


def run_simulate_trial(ssn: Session, queue: QueueInfo | None, job: JobInfo, worksheet: PriorityQueue,
                       victims_present: bool, enable_cache: bool) -> Statement | None:
    """Pipeline every pending task in a fresh statement; on failure the statement is discarded."""
    candidates = list(ssn.node_list)
    if not candidates:
        return None
    trial = Statement(ssn)
    tasks = worksheet.clone()
    helper = PredicateHelper(ssn)
    while not tasks.empty():
        if not _place_task(ssn, trial, helper, queue, tasks.pop(), candidates, victims_present, enable_cache):
            trial.discard()
            return None
    if not trial.operations or not (ssn.job_ready(job) or ssn.job_pipelined(job)):
        trial.discard()
        return None
    return trial


def build_nomination_plan(ssn: Session, queue: QueueInfo | None, job: JobInfo, victims: list[TaskInfo],
                          reason: str, enable_cache: bool) -> list[StatementOp] | None:
    """BuildNominationPlanInDomain for the single cluster-wide domain; the session is unchanged after."""
    if not ssn.node_list:
        return None
    worksheet = eviction_worksheet(ssn, job)
    if worksheet.empty():
        return None
    chain: list[Statement] = []
    try:
        if victims:
            evictions = Statement(ssn)
            for victim in victims:
                evictions.evict(victim, reason)
            chain.append(evictions)
        trial = run_simulate_trial(ssn, queue, job, worksheet, bool(victims), enable_cache)
        if trial is None:
            return None
        chain.append(trial)
        if not ssn.job_pipelined(job):
            return None
        return save_operations(chain)
    finally:
        for stmt in reversed(chain):
            stmt.discard()


# -- the action skeleton shared with gangreclaim -------------------------------------------------


class GangEvictionAction(Action):
    """The common loop of gangpreempt and gangreclaim; subclasses pick candidates and their order."""

    reason = ""
    kind = EvictionKind.Unknown
    skip_overused_queues = False

    def execute(self, ssn: Session) -> None:
        self.ssn = ssn
        self.settings = parse_settings(ssn, self.name)
        queues, starving = self._starving_jobs()
        while not queues.empty():
            queue = queues.pop()
            if self.skip_overused_queues and ssn.overused(queue):
                continue
            jobs = starving.get(queue.uid)
            while jobs is not None and not jobs.empty():
                self._evict_for(queue, jobs.pop())

    def _starving_jobs(self) -> tuple[PriorityQueue, dict[str, PriorityQueue]]:
        ssn = self.ssn
        queues: PriorityQueue = PriorityQueue(ssn.queue_order_fn)
        seen: set[str] = set()
        starving: dict[str, PriorityQueue] = {}
        for job in ssn.jobs.values():
            if job.is_pending() or ssn.job_valid(job) is not None:
                continue
            queue = ssn.queues.get(job.queue)
            if queue is None:
                continue
            if queue.uid not in seen:
                seen.add(queue.uid)
                queues.push(queue)
            if ssn.job_starving(job):
                starving.setdefault(job.queue, PriorityQueue(ssn.job_order_fn)).push(job)
        return queues, starving

    def _evict_for(self, queue: QueueInfo, job: JobInfo) -> None:
        stmt = Statement(self.ssn)
        self.evict_in_domains(stmt, queue, job)
        if self.ssn.job_pipelined(job):
            stmt.commit()
        else:
            stmt.discard()

    def admits(self, queue: QueueInfo, pending: list[TaskInfo]) -> bool:
        """Whether the queue may evict for these tasks at all (gangreclaim asks Preemptive)."""
        return True

    def evict_in_domains(self, stmt: Statement, queue: QueueInfo, job: JobInfo) -> None:
        ssn = self.ssn
        pending = collect_pending_tasks(ssn, job)
        if not pending or not self.admits(queue, pending):
            return
        need = sum_init_resreq(pending)
        for domain in [CLUSTER_TOP_HYPER_NODE]:  # upstream: up to maxDomains hypernode domains
            nodes = list(ssn.node_list)
            if not nodes:
                continue
            bundles = self.select_domain_bundles(job, pending, need, domain, nodes)
            if bundles and self._try_bundles(stmt, queue, job, need, bundles, nodes):
                return

    def _try_bundles(self, stmt: Statement, queue: QueueInfo, job: JobInfo, need: Resource,
                     bundles: list[Bundle], nodes: list[NodeInfo]) -> bool:
        idle = sum_idle_and_releasing(nodes)
        selected: list[TaskInfo] = []
        for bundle in bundles:
            selected.extend(bundle.tasks)
            if not need.less_equal(idle.clone().add(sum_resreq(selected)), Zero):
                continue
            plan = build_nomination_plan(self.ssn, queue, job, list(selected), self.reason,
                                         self.settings.enable_predicate_error_cache)
            if plan is not None and recover_operations(stmt, plan):
                return True
        return False

    def select_domain_bundles(self, job: JobInfo, pending: list[TaskInfo], need: Resource, domain: str,
                              nodes: list[NodeInfo]) -> list[Bundle]:
        ssn = self.ssn
        if not nodes or not pending:
            return []
        by_job: dict[str, list[TaskInfo]] = {}
        for node in nodes:
            for task in node.tasks.values():
                if self.is_candidate(job, task):
                    by_job.setdefault(task.job, []).append(task.clone())
        bundles = [b for uid, tasks in by_job.items() for b in create_job_bundles(ssn.jobs[uid], tasks)]
        if not bundles:
            return []
        self.sort(bundles, need, job)
        allowed = ssn.unified_evictable(EvictionContext(self.kind, job=job, hyper_node=domain),
                                        flatten_bundles(bundles))
        if not allowed:
            return []
        valid = apply_allowed_tasks(bundles, {t.uid for t in allowed})
        if not valid:
            return []
        self.sort(valid, need, job)
        return [b for b in valid if b.type == BundleType.SAFE or self.settings.allow_whole_bundle]

    def is_candidate(self, job: JobInfo, task: TaskInfo) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def sort(self, bundles: list[Bundle], need: Resource, job: JobInfo) -> None:  # pragma: no cover
        raise NotImplementedError


class GangPreempt(GangEvictionAction):
    name = "gangpreempt"
    reason = REASON_GANG_PREEMPT
    kind = EvictionKind.GangPreempt

    def is_candidate(self, job: JobInfo, task: TaskInfo) -> bool:
        """Bound/Running, preemptable, same queue, strictly lower job priority, not the job itself."""
        if not preemptable_status(task.status) or not task.preemptable:
            return False
        victim_job = self.ssn.jobs.get(task.job)
        if victim_job is None or victim_job.queue != job.queue:
            return False
        if not is_job_preemptable_for_gang_eviction(victim_job):
            return False
        return job.priority > victim_job.priority and task.job != job.uid

    def sort(self, bundles: list[Bundle], need: Resource, job: JobInfo) -> None:
        sort_bundles(bundles, need, victim_job_less(self.ssn))


register_action(GangPreempt)

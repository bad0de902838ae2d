"""The nomination plan of gang-aware eviction, dry-run on a trial statement
(pkg/scheduler/actions/utils/simulate.go; see actions/gangpreempt.py, step 4)."""



from schedcheck.reference.actions.allocate import insufficient_resource_reason
from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.queue_info import QueueInfo
from schedcheck.reference.api.resource_info import Zero
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import (
    TaskStatus,
)
from schedcheck.reference.api.unschedule_info import FitError, Status, StatusCode
from schedcheck.reference.framework.session import Session
from schedcheck.reference.framework.statement import (
    Statement,
    StatementError,
    StatementOp,
    save_operations,
)
from schedcheck.reference.util.priority_queue import PriorityQueue
from schedcheck.reference.util.scheduler_helper import (
    PredicateHelper,
    best_node_by_idle_then_future_idle,
)

MAX_DOMAINS_KEY = "maxDomains"


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

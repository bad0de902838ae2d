"""The nomination plan of gang-aware eviction, dry-run on trial statements
(pkg/scheduler/actions/utils/simulate.go; see actions/gangpreempt.py, step 4).

The pending work is read as allocate reads it: per subjob, from the subjob's own status index (which,
as upstream's, can still list as Pending a task a hypernode search has placed: api/sub_job_info.py),
the subjobs ordered as allocate's worksheet orders them."""

from schedcheck.reference.actions.allocate import JobWorksheet, insufficient_resource_reason, organize_worksheet
from schedcheck.reference.api.hyper_node_info import CLUSTER_TOP_HYPER_NODE, HyperNodeInfo
from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.queue_info import QueueInfo
from schedcheck.reference.api.resource_info import Zero
from schedcheck.reference.api.sub_job_info import SubJobInfo
from schedcheck.reference.api.task_info import TaskInfo
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
PURPOSE_EVICT = "evict"


# -- pending tasks and the nomination plan (actions/utils/simulate.go) ---------------------------


def eviction_worksheet(ssn: Session, job: JobInfo) -> JobWorksheet:
    """organizeEvictionWorksheet: allocate's worksheet, without gated (by anyone) or best-effort tasks."""
    return organize_worksheet(ssn, job, lambda task: not task.sch_gated and not task.resreq.is_empty())


def collect_pending_tasks(ssn: Session, job: JobInfo) -> list[TaskInfo]:
    """CollectPendingTasksForGangEviction: a ready job asks for its first subjob's pending tasks, a job
    starting up for every subjob's, subjob by subjob."""
    worksheet = eviction_worksheet(ssn, job)
    sub_jobs, out = worksheet.sub_jobs.clone(), []
    first_only = ssn.job_ready(job)
    while not sub_jobs.empty():
        tasks = worksheet.tasks[sub_jobs.pop().uid].clone()
        while not tasks.empty():
            out.append(tasks.pop())
        if first_only and out:
            break
    return out


def candidate_domains(ssn: Session, job: JobInfo, max_domains: int) -> list[str]:
    """GetCandidateDomains: the job's evict gradients flattened (first sight, at most max_domains); the
    cluster top when there is none and the job has no hard topology."""
    top = ssn.hyper_nodes.get(CLUSTER_TOP_HYPER_NODE)
    domains: list[str] = []
    for gradient in ssn.hyper_node_gradient_for_job_fn(job, top, PURPOSE_EVICT):
        for hyper_node in gradient:
            if hyper_node is None or hyper_node.name in domains:
                continue
            domains.append(hyper_node.name)
            if len(domains) >= max_domains:
                return domains
    if not domains and top is not None and not job.contains_hard_topology():
        domains.append(top.name)
    return domains


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
    """One task of a dry run: False when it cannot be pipelined anywhere in the hypernode."""
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


def run_simulate_trial(ssn: Session, queue: QueueInfo | None, job: JobInfo, sub: SubJobInfo,
                       tasks: PriorityQueue, hyper_node: str, victims_present: bool,
                       enable_cache: bool) -> Statement | None:
    """runSimulateTrialAtHyperNode: pipeline the subjob's tasks onto the hypernode's nodes in a fresh
    statement, kept only when the subjob is then ready or pipelined; else discarded."""
    candidates = list(ssn.real_nodes_list.get(hyper_node, []))
    if not candidates:
        return None
    trial = Statement(ssn)
    tasks = tasks.clone()
    helper = PredicateHelper(ssn)
    while not tasks.empty():
        if not _place_task(ssn, trial, helper, queue, tasks.pop(), candidates, victims_present, enable_cache):
            trial.discard()
            return None
    if not trial.operations or not (ssn.sub_job_ready(job, sub) or ssn.sub_job_pipelined(job, sub)):
        trial.discard()
        return None
    return trial


def _trial_for_sub_job(ssn: Session, queue: QueueInfo | None, job: JobInfo, sub: SubJobInfo,
                       tasks: PriorityQueue, domain: HyperNodeInfo, victims_present: bool,
                       enable_cache: bool) -> tuple[Statement | None, str]:
    """A hard-topology job tries the subjob's evict gradients inside the domain, first success wins;
    any other job tries the domain itself."""
    if not job.contains_hard_topology():
        return run_simulate_trial(ssn, queue, job, sub, tasks, domain.name, victims_present, enable_cache), \
            domain.name
    for gradient in ssn.hyper_node_gradient_for_sub_job_fn(sub, domain, PURPOSE_EVICT):
        for hyper_node in gradient:
            if hyper_node is None:
                continue
            trial = run_simulate_trial(ssn, queue, job, sub, tasks, hyper_node.name, victims_present, enable_cache)
            if trial is not None:
                return trial, hyper_node.name
    return None, ""


def build_nomination_plan(ssn: Session, queue: QueueInfo | None, job: JobInfo, domain: HyperNodeInfo,
                          victims: list[TaskInfo], reason: str,
                          enable_cache: bool) -> tuple[list[StatementOp], dict[str, str]] | None:
    """BuildNominationPlanInDomain: evict the victims, then dry-run subjob after subjob (worksheet order)
    until the job was ready already or is pipelined now; the plan (saved task copies) and each placed
    subjob's hypernode, or None. The session is unchanged after."""
    if not ssn.real_nodes_list.get(domain.name):
        return None
    worksheet = eviction_worksheet(ssn, job)
    if worksheet.empty():
        return None
    was_ready = ssn.job_ready(job)
    chain: list[Statement] = []
    try:
        if victims:
            evictions = Statement(ssn)
            for victim in victims:
                evictions.evict(victim, reason)
            chain.append(evictions)
        placed: dict[str, str] = {}
        pipelined = False
        while not worksheet.sub_jobs.empty():
            sub = worksheet.sub_jobs.pop()
            tasks = worksheet.tasks.get(sub.uid)
            if tasks is None or tasks.empty():
                continue
            trial, hyper_node = _trial_for_sub_job(ssn, queue, job, sub, tasks, domain, bool(victims), enable_cache)
            if trial is None:
                return None
            chain.append(trial)
            placed[sub.uid] = hyper_node
            pipelined = ssn.job_pipelined(job)
            if was_ready or pipelined:
                break
        if not pipelined:
            return None
        return save_operations(chain), placed
    finally:
        for stmt in reversed(chain):
            stmt.discard()

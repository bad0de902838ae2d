"""allocate: place pending tasks, a gang at a time (pkg/scheduler/actions/allocate/allocate.go; semantics §8.2).

Queues are popped in queue order, one job per pop; a job's tasks are taken in
task order until the job is ready, and its statement is committed only then.
A merely pipelined job's statement is neither committed nor discarded: its
decisions stay applied for the rest of the session, as upstream leaves them.

Persistent pipelines (conf pipelinePersistence: persistent; seed 004, unmerged upstream): a task
an earlier session pipelined comes back Pipelined on its node, its reservation charged to the
plugins. Before the main loop, a fast path walks those tasks (job order, then task order): one whose
node now has Idle room is allocated there, without predicates (the PR's short-cut on the pipelined
node) and without the queue checks (its share is charged already); the job's statement commits when
the job is ready (Pipelined counting as ready, as the PR has it) and is discarded otherwise, which
puts the tasks back Pipelined. A kept decision whose node left the session is released, and the task
is placed afresh by the main loop as a pending one.

Network topology (allocateForJob / allocateForSubJob): a job with a network topology (soft mode is
made hard up to the cluster top when the session opens) is placed by a search over hypernodes. The
job's gradient (HyperNodeGradientForJobFn) gives the eligible hypernodes tier by tier, lowest first;
in each, the job's default subjob is dry-run in turn on every hypernode of its own gradient within
that one (a statement saved, then discarded), the best of those by HyperNodeOrderFn is replayed, and
the first tier with any solution wins, the job going to the hypernode whose subjob scores summed
highest. The hypernode a job and its subjob hold is their lowest common ancestor with the new one,
recorded after the job's statement commits. Jobs wait while the topology is not ready.

Nomination fast path (allocateFromNomination): a subjob gangpreempt or gangreclaim nominated earlier
in the session (SubJobInfo.nominated_hyper_node) is tried first, in the flat branch and at the start of
allocateForSubJob: every worksheet task must be allocatable, carry a pod nominated node among the
nominated hypernode's leaves and in the session, and pass PrePredicate and allocate's predicate there,
all judged before any is placed; then each is allocated (Idle) or pipelined (FutureIdle) on its node, or
silently left when neither fits, and the worksheet is emptied; the statement is not checked for the
subjob being ready. Any miss (or a failed allocation, whose statement is discarded) clears the
nomination and the worksheet tasks' pods' nominated nodes (the pods are the cache's, as upstream shares
them) and the normal path runs. A committed job's nomination is cleared.

Not modelled: scheduling-gate removal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cmp_to_key

from schedcheck.reference.actions.base import Action, register_action
from schedcheck.reference.api.hyper_node_info import CLUSTER_TOP_HYPER_NODE, HyperNodeInfo, lca_hyper_node
from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.sub_job_info import SubJobInfo
from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.resource_info import Zero
from schedcheck.reference.api.task_info import TaskInfo, has_queue_allocation_gate_annotation
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.api.unschedule_info import (
    FitError,
    FitErrors,
    Status,
    StatusCode,
)
from schedcheck.reference.framework.arguments import as_arguments
from schedcheck.reference.framework.session import NominationRecord, Session
from schedcheck.reference.framework.statement import (
    Statement,
    StatementError,
    StatementOp,
    recover_operations,
    save_operations,
)
from schedcheck.reference.util.priority_queue import PriorityQueue
from schedcheck.reference.util.scheduler_helper import (
    PredicateHelper,
    find_hyper_node_for_node,
    best_node_by_idle_then_future_idle,
)

PREDICATE_ERROR_CACHE_KEY = "predicateErrorCacheEnable"


def insufficient_resource_reason(names: list[str]) -> str:
    return f"Insufficient {names[0]}" if names else "Insufficient resources"


@dataclass
class JobWorksheet:
    """A job's subjobs with pending work (in subjob order) and each one's tasks (in task order)."""

    sub_jobs: PriorityQueue
    tasks: dict[str, PriorityQueue]

    def empty(self) -> bool:
        return self.sub_jobs.empty()

    def clone(self) -> JobWorksheet:
        return JobWorksheet(self.sub_jobs.clone(), {uid: tasks.clone() for uid, tasks in self.tasks.items()})

    def replace_with(self, other: JobWorksheet) -> None:
        """ShallowCopyFrom: inherit what a dry run left."""
        self.sub_jobs, self.tasks = other.sub_jobs, other.tasks


def organize_worksheet(ssn: Session, job: JobInfo, keep: Callable[[TaskInfo], bool]) -> JobWorksheet:
    """The subjobs with pending work, those needed to reach a policy's minSubGroups first, then in
    subjob order; each with the Pending tasks of its own index that `keep` accepts, in task order."""
    counts: dict[str, int] = {}
    waiting = []
    for sub in job.sub_jobs.values():
        if ssn.sub_job_ready(job, sub):
            counts[sub.gid] = counts.get(sub.gid, 0) + 1
        else:
            waiting.append(sub)
    waiting.sort(key=cmp_to_key(lambda l, r: -1 if ssn.sub_job_order_fn(l, r) else 1))
    required: set[str] = set()
    for sub in waiting:
        if counts.get(sub.gid, 0) < job.min_sub_jobs.get(sub.gid, 0):
            required.add(sub.uid)
            counts[sub.gid] = counts.get(sub.gid, 0) + 1

    def less(left, right) -> bool:
        if (left.uid in required) != (right.uid in required):
            return left.uid in required
        return ssn.sub_job_order_fn(left, right)

    worksheet = JobWorksheet(PriorityQueue(less), {})
    for sub in job.sub_jobs.values():
        tasks: PriorityQueue = PriorityQueue(ssn.task_order_fn, [t for t in sub.tasks_with_status(TaskStatus.Pending)
                                                                 if keep(t)])
        if not tasks.empty():
            worksheet.sub_jobs.push(sub)
            worksheet.tasks[sub.uid] = tasks
    return worksheet


def _in_order(tasks: PriorityQueue) -> list[TaskInfo]:
    """The queue's items as popping a copy of it gives them."""
    preview, out = tasks.clone(), []
    while not preview.empty():
        out.append(preview.pop())
    return out


def _placed(saved: dict[str, list[StatementOp]], names: list[str]) -> list[TaskInfo]:
    """The tasks the saved dry runs of these hypernodes placed."""
    return [op.task for name in names for op in saved[name]]


class Allocate(Action):
    name = "allocate"

    def execute(self, ssn: Session) -> None:
        self.ssn = ssn
        self.enable_predicate_error_cache = as_arguments(ssn.action_arguments(self.name)).get_bool(
            PREDICATE_ERROR_CACHE_KEY, True
        )
        if ssn.conf.persistent_pipelines:
            self._allocate_kept_pipelines()
        queues, jobs_by_queue, worksheets = self._build_context()
        self._allocate_resources(queues, jobs_by_queue, worksheets)

    # -- persistent pipelines: the fast path ---------------------------------------------

    def _allocate_kept_pipelines(self) -> None:
        ssn = self.ssn
        jobs: PriorityQueue = PriorityQueue(ssn.job_order_fn)
        for job in ssn.jobs.values():
            if job.task_status_index.get(TaskStatus.Pipelined):
                jobs.push(job)
        while not jobs.empty():
            job = jobs.pop()
            tasks: PriorityQueue = PriorityQueue(ssn.task_order_fn, job.tasks_with_status(TaskStatus.Pipelined))
            stmt = Statement(ssn)
            while not tasks.empty():
                task = tasks.pop()
                node = ssn.nodes.get(task.node_name)
                if node is None:
                    ssn.release_pipelined(task)  # the node left: the main loop places it afresh
                    continue
                if task.init_resreq.less_equal(node.idle, Zero):
                    try:
                        stmt.allocate(task, node)
                    except StatementError:
                        continue  # rolled back: pipelined again
            if ssn.job_ready(job):
                stmt.commit()
            else:
                stmt.discard()

    # -- context ------------------------------------------------------------------------

    def _build_context(self):
        ssn = self.ssn
        queues: PriorityQueue = PriorityQueue(ssn.queue_order_fn)
        jobs_by_queue: dict[str, PriorityQueue] = {}
        worksheets: dict[str, JobWorksheet] = {}
        for job in ssn.jobs.values():  # upstream walks a Go map here; the reference uses snapshot order
            if job.is_pending():
                if "enqueue" in ssn.enabled_actions:
                    continue
                job.pod_group.phase = "Inqueue"  # type: ignore[union-attr]
            if ssn.job_valid(job) is not None:
                continue
            if job.queue not in ssn.queues:
                continue
            if not ssn.hyper_nodes_ready and job.contains_network_topology():
                continue  # hypernodes are not ready for scheduling
            worksheet = self._organize_job_worksheet(job)
            if worksheet.empty():
                continue
            if job.queue not in jobs_by_queue:
                jobs_by_queue[job.queue] = PriorityQueue(ssn.job_order_fn)
                queues.push(ssn.queues[job.queue])
            jobs_by_queue[job.queue].push(job)
            worksheets[job.uid] = worksheet
        return queues, jobs_by_queue, worksheets

    def _organize_job_worksheet(self, job: JobInfo) -> JobWorksheet:
        """organizeJobWorksheet: BestEffort tasks are left to backfill, and a task gated by anyone but
        Volcano waits."""
        return organize_worksheet(self.ssn, job, lambda task: not task.resreq.is_empty() and not (
            task.sch_gated and task.is_sch_gated_by_others()))

    # -- main loop ----------------------------------------------------------------------

    def _allocate_resources(self, queues, jobs_by_queue, worksheets) -> None:
        ssn = self.ssn
        while not queues.empty():
            queue = queues.pop()
            if ssn.overused(queue):
                continue  # dropped for the rest of the action
            jobs = jobs_by_queue.get(queue.uid)
            if jobs is None or jobs.empty():
                continue
            job = jobs.pop()
            worksheet = worksheets[job.uid]
            if job.contains_hard_topology() or job.contains_sub_job_policy():
                stmt, decision = self.allocate_for_job(job, worksheet, ssn.hyper_nodes[CLUSTER_TOP_HYPER_NODE])
                if stmt is not None and ssn.job_ready(job):
                    stmt.commit()
                    self._update_decision_to_job(job, decision)
                    if not worksheet.empty():
                        jobs.push(job)
            else:
                sub = job.sub_jobs.get(job.default_sub_job_id)
                tasks = worksheet.tasks.get(job.default_sub_job_id)
                if sub is not None and tasks is not None:
                    stmt = None
                    if sub.nominated_hyper_node:  # gangpreempt / gangreclaim's pin, honoured first
                        stmt, _ = self.allocate_from_nomination(job, sub, tasks)
                    if stmt is None:
                        stmt = self.allocate_resources_for_tasks(job, tasks, sub=sub)
                    if stmt is not None and ssn.job_ready(job):
                        stmt.commit()
                        sub.nominated_hyper_node = ""  # redeemed
                        if len(tasks) > 0:
                            jobs.push(job)
            queues.push(queue)

    # -- the hypernode search (hard network topology, subgroup policies) -------------------

    def allocate_for_job(self, job: JobInfo, worksheet: JobWorksheet, top: HyperNodeInfo
                         ) -> tuple[Statement | None, tuple[str, dict[str, str]]]:
        """allocateForJob: the statement of the best hypernode (or None) and the decision (the hypernode
        for the job, each subjob's new allocated hypernode); the worksheet keeps what is left."""
        ssn = self.ssn
        if worksheet.empty():
            return None, ("", {})
        kept = {uid: job.sub_jobs[uid].allocated_hyper_node for uid in worksheet.tasks if uid in job.sub_jobs}
        for gradient in ssn.hyper_node_gradient_for_job_fn(job, top, "allocate"):
            saved, left, scores, decisions = {}, {}, {}, {}
            for hyper_node in gradient:
                job.reset_fit_err()
                copy = worksheet.clone()
                stmts: list[Statement] = []
                score = 0.0
                sub_decisions: dict[str, str] = {}
                while not copy.sub_jobs.empty():
                    sub = copy.sub_jobs.pop()
                    stmt, sub_score = self.allocate_for_sub_job(job, sub, copy.tasks[sub.uid], hyper_node)
                    if stmt is not None and stmt.operations:
                        stmts.append(stmt)
                        score += sub_score
                        sub_decisions[sub.uid] = sub.allocated_hyper_node
                        if not copy.tasks[sub.uid].empty():
                            copy.sub_jobs.push(sub)
                        if ssn.job_ready(job):
                            break
                for uid, allocated in kept.items():  # recorder.RecoverSubJobStatus
                    job.sub_jobs[uid].allocated_hyper_node = allocated
                merged = save_operations(stmts)
                if not merged:
                    continue
                if ssn.job_ready(job) or ssn.job_pipelined(job):
                    saved[hyper_node.name], left[hyper_node.name] = merged, copy
                    scores[hyper_node.name], decisions[hyper_node.name] = score, sub_decisions
                for stmt in stmts:
                    stmt.discard()
            if not scores:
                continue
            best = self._best_of(job, scores, saved)
            final = Statement(ssn)
            if not recover_operations(final, saved[best]):
                return None, ("", {})
            worksheet.replace_with(left[best])
            return final, (best, decisions[best])
        return None, ("", {})

    def allocate_for_sub_job(self, job: JobInfo, sub: SubJobInfo, tasks: PriorityQueue,
                             hyper_node_for_job: HyperNodeInfo) -> tuple[Statement | None, float]:
        """allocateForSubJob over the subjob's gradient inside the job's hypernode; on success the tasks
        left replace `tasks` in place and the subjob holds the LCA of its hypernode and the best one."""
        ssn = self.ssn
        if tasks.empty():
            return None, 0.0
        if sub.nominated_hyper_node:
            stmt, score = self.allocate_from_nomination(job, sub, tasks)
            if stmt is not None:
                return stmt, score
        for gradient in ssn.hyper_node_gradient_for_sub_job_fn(sub, hyper_node_for_job, "allocate"):
            saved, left = {}, {}
            for hyper_node in gradient:
                job.reset_sub_job_fit_err(sub.uid)
                copy = tasks.clone()
                stmt = self.allocate_resources_for_tasks(job, copy, hyper_node.name, sub)
                if stmt is not None and stmt.operations:
                    saved[hyper_node.name], left[hyper_node.name] = save_operations([stmt]), copy
                    stmt.discard()
            if not saved:
                continue
            candidates = {name: ssn.real_nodes_list.get(name, []) for name in saved}
            totals: dict[str, float] = {name: 0.0 for name in candidates}
            for scores in ssn.hyper_node_order_map_fn(sub, candidates).values():
                for name, score in scores.items():
                    if name in totals:
                        totals[name] += score
            grouped: dict[float, list[str]] = {}
            for name in candidates:
                grouped.setdefault(totals[name], []).append(name)
            best_score = max(grouped)
            best = self._pick(sub.uid, grouped[best_score], best_score, _placed(saved, grouped[best_score]))
            final = Statement(ssn)
            if not recover_operations(final, saved[best]):
                return None, 0.0
            sub.allocated_hyper_node = lca_hyper_node(ssn.hyper_nodes, sub.allocated_hyper_node, best)
            tasks.replace_with(left[best])
            return final, best_score
        return None, 0.0

    def _best_of(self, job: JobInfo, scores: dict[str, float], saved: dict[str, list[StatementOp]]) -> str:
        """selectBestHyperNodeForJob: the highest summed score (upstream keeps the first it meets in
        map order, so equal scores are a seeded choice here)."""
        best_score = max(scores.values())
        tied = [name for name, score in scores.items() if score == best_score]
        return self._pick(job.uid, tied, best_score, _placed(saved, tied))

    def _pick(self, owner: str, names: list[str], score: float, tasks: list[TaskInfo]) -> str:
        """One of equally scored hypernodes for a job or subjob (`owner`), recorded as a tie: the seeded
        generator's, or, in a replay guided by another implementation (conform), the one holding the
        nodes it gave the tasks the tied dry runs placed."""
        names = sorted(names)
        if len(names) == 1:
            return names[0]
        ssn = self.ssn
        guide = getattr(ssn.tie_chooser, "choose_hyper_node", None)
        guided = guide(ssn, tasks, names) if guide is not None else None
        chosen = guided if guided in names else names[ssn.rng.randrange(len(names))]
        ssn.record_hyper_node_tie(owner, names, chosen, score)
        return chosen

    def _update_decision_to_job(self, job: JobInfo, decision: tuple[str, dict[str, str]]) -> None:
        """recorder.UpdateDecisionToJob, after the job's statement committed."""
        for_job, for_sub_jobs = decision
        if not for_job:
            return
        hyper_nodes = self.ssn.hyper_nodes
        job.allocated_hyper_node = lca_hyper_node(hyper_nodes, job.allocated_hyper_node, for_job)
        for uid, hyper_node in for_sub_jobs.items():
            sub = job.sub_jobs.get(uid)
            if sub is not None:
                sub.allocated_hyper_node = lca_hyper_node(hyper_nodes, sub.allocated_hyper_node, hyper_node)
                sub.nominated_hyper_node = ""  # the nomination is redeemed by this commit

    # -- the nomination fast path (allocateFromNomination) -------------------------------

    def allocate_from_nomination(self, job: JobInfo, sub: SubJobInfo, tasks: PriorityQueue
                                 ) -> tuple[Statement | None, float]:
        """Place the subjob's worksheet tasks each on its pod's nominated node under the subjob's nominated
        hypernode, without a search: (statement, score 0) on success, the worksheet drained and the
        subjob holding the LCA of its hypernode and the nominated one; (None, 0) on any miss, after the
        nomination and the worksheet tasks' pods' nominated nodes are cleared."""
        ssn = self.ssn
        pinned = sub.nominated_hyper_node
        record = NominationRecord(ssn.current_action, job.uid, sub.uid, pinned, "invalidated",
                                  {t.key: t.pod.nominated_node_name for t in _in_order(tasks)})
        ssn.nominations.append(record)
        leaves = ssn.real_nodes_list.get(pinned) or []
        plan = self._validate_nomination(job, sub, tasks, {n.name for n in leaves}) if leaves else None
        stmt: Statement | None = None
        if plan is not None:
            stmt = Statement(ssn)
            for task, node in plan:
                if sub.network_topology is not None:
                    task.job_allocated_hyper_node = pinned
                try:
                    self.allocate_resources_for_task(stmt, task, node)
                except StatementError:
                    stmt.discard()
                    stmt = None
                    break
        if stmt is None:
            sub.nominated_hyper_node = ""  # invalidateSubJobNomination
            for task in _in_order(tasks):
                if task.pod.nominated_node_name:
                    task.pod.nominated_node_name = ""
            return None, 0.0
        while not tasks.empty():  # the worksheet is spent: no search follows
            tasks.pop()
        record.outcome = "redeemed"
        record.placed = {task.key: node.name for task, node in plan or ()
                         if task.status in (TaskStatus.Allocated, TaskStatus.Pipelined) and task.node_name == node.name}
        sub.allocated_hyper_node = lca_hyper_node(ssn.hyper_nodes, sub.allocated_hyper_node, pinned)
        return stmt, 0.0

    def _validate_nomination(self, job: JobInfo, sub: SubJobInfo, tasks: PriorityQueue,
                             leaf_names: set[str]) -> list[tuple[TaskInfo, NodeInfo]] | None:
        """validateNomination: every task in task order, each against the state before any of them is
        placed: allocatable, a nominated node inside the pinned leaves and in the session, PrePredicate,
        then allocate's predicate on that node. The (task, node) plan, or None at the first miss."""
        ssn = self.ssn
        queue = ssn.queues[job.queue]
        helper = PredicateHelper(ssn)
        plan: list[tuple[TaskInfo, NodeInfo]] = []
        for task in _in_order(tasks):
            if not ssn.allocatable(queue, task):
                return None
            nominated = task.pod.nominated_node_name
            if not nominated or nominated not in leaf_names:
                return None
            node = ssn.nodes.get(nominated)
            if node is None:
                return None
            if ssn.pre_predicate_fn(task) is not None:
                return None
            candidates, _ = helper.predicate_nodes(task, [node], self.predicate, self.enable_predicate_error_cache)
            if not candidates:
                return None
            plan.append((task, node))
        return plan

    # -- placing a job's tasks ----------------------------------------------------------

    def allocate_resources_for_tasks(self, job: JobInfo, tasks: PriorityQueue,
                                     hyper_node: str = CLUSTER_TOP_HYPER_NODE,
                                     sub: SubJobInfo | None = None) -> Statement | None:
        ssn = self.ssn
        sub = sub if sub is not None else job.sub_job
        queue = ssn.queues[job.queue]
        nodes = ssn.real_nodes_list.get(hyper_node, [])
        if not nodes:
            return None
        leaf_set = ssn.real_nodes_set.get(hyper_node, set())
        with_topology = sub.network_topology is not None
        allocated_hyper_node = sub.allocated_hyper_node
        stmt = Statement(ssn)
        helper = PredicateHelper(ssn)
        while not tasks.empty():
            task = tasks.pop()
            if not ssn.allocatable(queue, task):
                continue
            # SchedulingGatesQueueAdmission: the queue has room for an opted-in gated task, so its gate is
            # removed (asynchronously: the task still waits this session); the manager refuses a pod with
            # another gate besides Volcano's
            if ssn.sch_gate_manager is not None and task.sch_gated and \
                    has_queue_allocation_gate_annotation(task.pod):
                ssn.sch_gate_manager.enqueue(task)
            if task.sch_gated:
                continue
            if job.task_has_fit_errors(task, sub.uid):
                fit_errors = FitErrors()
                fit_errors.set_error(f"Task {task.name} with role spec {task.task_role} has already predicated failed, skip")
                job.nodes_fit_errors[task.uid] = fit_errors
                continue
            err = ssn.pre_predicate_fn(task)
            if err is not None:
                fit_errors = FitErrors()
                for node in nodes:
                    fit_errors.set_node_error(node.name, err)
                job.nodes_fit_errors[task.uid] = fit_errors
                if job.need_continue_allocating(sub.uid):
                    continue
                break
            candidates: list[NodeInfo] = []
            fit_errors = None
            nominated = ssn.nodes.get(task.pod.nominated_node_name) if task.pod.nominated_node_name else None
            if nominated is not None and nominated.name not in leaf_set:
                nominated = None  # honoured only inside this hypernode
            if nominated is not None and task.init_resreq.less_equal(nominated.future_idle_view(), Zero):
                candidates, fit_errors = helper.predicate_nodes(task, [nominated], self.predicate,
                                                                self.enable_predicate_error_cache)
            if not candidates:
                candidates, fit_errors = helper.predicate_nodes(task, nodes, self.predicate,
                                                                self.enable_predicate_error_cache)
            if not candidates:
                job.nodes_fit_errors[task.uid] = fit_errors  # type: ignore[assignment]
                if job.need_continue_allocating(sub.uid):
                    continue
                break
            if with_topology:
                task.job_allocated_hyper_node = allocated_hyper_node
            best = self.prioritize_nodes(task, candidates)
            if best is None:
                continue
            try:
                self.allocate_resources_for_task(stmt, task, best)
            except StatementError:
                continue
            if with_topology:  # getNewAllocatedHyperNode
                lowest = find_hyper_node_for_node(ssn, best.name)
                if lowest:
                    allocated_hyper_node = lca_hyper_node(ssn.hyper_nodes, lowest, allocated_hyper_node)
            if ssn.sub_job_ready(job, sub):
                break
        if ssn.sub_job_ready(job, sub):
            return stmt
        if ssn.sub_job_pipelined(job, sub):
            return stmt
        stmt.discard()
        return None

    def predicate(self, task: TaskInfo, node: NodeInfo) -> Exception | None:
        ok, names = task.init_resreq.less_equal_with_resources_name(node.future_idle_view(), Zero)
        if not ok:
            return FitError(task.key, node.name, [Status(StatusCode.Unschedulable, insufficient_resource_reason(names))])
        return self.ssn.predicate_for_allocate_action(task, node)

    def prioritize_nodes(self, task: TaskInfo, candidates: list[NodeInfo]) -> NodeInfo | None:
        """Idle-fitting nodes first, then FutureIdle-fitting ones; score only when several remain."""
        return best_node_by_idle_then_future_idle(self.ssn, task, candidates)

    def allocate_resources_for_task(self, stmt: Statement, task: TaskInfo, node: NodeInfo) -> None:
        if task.init_resreq.less_equal(node.idle, Zero):
            stmt.allocate(task, node)
        elif task.init_resreq.less_equal(node.future_idle_view(), Zero):
            stmt.pipeline(task, node.name, False)


register_action(Allocate)

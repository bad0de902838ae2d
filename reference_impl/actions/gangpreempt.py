"""gangpreempt: gang-aware preemption inside a queue (pkg/scheduler/actions/gangpreempt/gangpreempt.go;
semantics §8.7), and the action loop gangreclaim shares. Bundles are in actions/utils/bundle.py and
the nomination plan in actions/utils/simulate.py, where upstream keeps them (actions/utils).

For every queue (in queue order), every starving job of it (job order; a job is considered when it
is not Pending, passes JobValid and its queue exists) gets one statement:
1. pending = the Pending tasks, neither scheduling-gated nor best-effort, of the job's subjobs as
   their own indexes list them (subjob order, then task order; a job already ready asks only for its
   first such subjob's); need = Σ InitResreq. Nothing pending: the statement stays empty.
2. Candidates in the domain: tasks that are Bound or Running and preemptable, of jobs in the SAME
   queue with a strictly lower job priority, whose PodGroup does not opt out of preemption
   (`volcano.sh/preemptable` annotation or label; unset means allowed). Per victim job the
   candidates are split into bundles: "safe" tasks (lowest task priority first, then UID), taken
   while the job stays gang-ready (ReadyTaskNum − minAvailable, the per-role surplus and, with
   subgroup policies, each group's ready subjobs beyond minSubGroups, where a subjob already missing
   a pod costs nothing more), and a "whole" bundle of the rest, whose eviction breaks the gang. A
   job already not ready is one safe bundle.
3. Bundles are sorted: safe before whole, then the victim job that would be scheduled later first
   (!JobOrderFn), then ROI (freed resources capped at the need, over the job's whole request;
   safe bundles have an infinite ROI), then job UID, first task UID, size. The flattened list goes
   through ssn.unified_evictable (kind GangPreempt); a safe bundle keeps its allowed tasks, a whole
   bundle survives only if all its tasks are allowed; the survivors are sorted again, and whole
   bundles are dropped when `allowWholeBundle` is false.
4. Bundles are added cumulatively. Once need <= Σ(Idle + Releasing) of the domain + Σ the selected
   victims' requests, a nomination plan is dry-run: evict all selected victims, then, subjob by
   subjob, pipeline its pending tasks in a trial statement (allocatable check, PrePredicate, the
   predicates in preempt mode after a FutureIdle check, allocate's idle-then-future-idle node choice,
   a final FutureIdle fit) with EvictionOccurred = "there are victims", kept if the subjob is then
   ready or pipelined; a subjob no trial places fails the plan, and the walk stops once the job was
   ready before the plan or is pipelined now. The plan holds if JobPipelined holds. The dry run is
   undone (statements discarded in reverse, which leaves last-transaction contexts on the tasks, as
   upstream) and the plan, saved as task clones, is replayed into the job's statement. A failed plan,
   or a failed replay (whose replayed part stays in the statement), moves on to the next bundle.
5. The statement is committed if JobPipelined holds for the job, else discarded.

Hypernodes. The domains are up to `maxDomains` (default 8) hypernodes from the job's evict gradients
(HyperNodeGradientForJobFn), or the virtual cluster top for a job without a hard topology when there is
none; each domain is searched with its own nodes. Inside a domain the plan goes subjob by subjob (the
worksheet allocate would build, read from the subjobs' own status indexes): a hard-topology job tries
each subjob on the hypernodes of the subjob's evict gradients in the domain, first success wins; any
other job on the domain's nodes. On commit each subjob the plan placed is nominated to the hypernode it
was placed in (SubJobInfo.nominated_hyper_node; the domain itself for a job without a hard topology);
only a later allocate of the same session reads it, since the cache is never given it back. The pods'
nominated nodes are written at session close as for every pipeline after an eviction.
"""

from __future__ import annotations

from dataclasses import dataclass

from schedcheck.reference.actions.allocate import (
    PREDICATE_ERROR_CACHE_KEY,
)
from schedcheck.reference.actions.base import Action, register_action
from schedcheck.reference.actions.utils.bundle import (
    Bundle,
    BundleType,
    apply_allowed_tasks,
    create_job_bundles,
    flatten_bundles,
    sort_bundles,
    sum_idle_and_releasing,
    sum_init_resreq,
    sum_resreq,
    victim_job_less,
)
from schedcheck.reference.actions.utils.simulate import (
    build_nomination_plan,
    candidate_domains,
    collect_pending_tasks,
)
from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.queue_info import QueueInfo
from schedcheck.reference.api.resource_info import Resource, Zero
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import (
    EvictionContext,
    EvictionKind,
    preemptable_status,
)
from schedcheck.reference.framework.arguments import as_arguments
from schedcheck.reference.framework.session import Session
from schedcheck.reference.framework.statement import (
    Statement,
    recover_operations,
)
from schedcheck.reference.k8s import PREEMPTABLE_KEY
from schedcheck.reference.util.priority_queue import PriorityQueue

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


def is_job_preemptable_for_gang_eviction(job: JobInfo) -> bool:
    """An explicit `volcano.sh/preemptable` on the PodGroup decides; unset means allowed."""
    pod_group = job.pod_group
    if pod_group is None:
        return True
    if PREEMPTABLE_KEY in pod_group.annotations or PREEMPTABLE_KEY in pod_group.labels:
        return job.preemptable
    return True


def apply_sub_job_nominations(job: JobInfo, placed: dict[str, str]) -> None:
    """ApplySubJobNominations, after the job's statement committed: each subjob the plan placed is
    nominated to its hypernode (allocate's fast path honours it later in the same session)."""
    for uid, hyper_node in placed.items():
        sub = job.sub_jobs.get(uid)
        if sub is not None and hyper_node:
            sub.nominated_hyper_node = hyper_node


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
        placed = self.evict_in_domains(stmt, queue, job)
        if self.ssn.job_pipelined(job):
            stmt.commit()
            apply_sub_job_nominations(job, placed)
        else:
            stmt.discard()

    def admits(self, queue: QueueInfo, pending: list[TaskInfo]) -> bool:
        """Whether the queue may evict for these tasks at all (gangreclaim asks Preemptive)."""
        return True

    def evict_in_domains(self, stmt: Statement, queue: QueueInfo, job: JobInfo) -> dict[str, str]:
        """The plan replayed into `stmt`, if any; returns the hypernode of each subjob it placed."""
        ssn = self.ssn
        pending = collect_pending_tasks(ssn, job)
        if not pending or not self.admits(queue, pending):
            return {}
        need = sum_init_resreq(pending)
        for domain in candidate_domains(ssn, job, self.settings.max_domains):
            nodes = list(ssn.real_nodes_list.get(domain, []))
            if not nodes:
                continue
            bundles = self.select_domain_bundles(job, pending, need, domain, nodes)
            placed = self._try_bundles(stmt, queue, job, need, bundles, domain, nodes) if bundles else None
            if placed is not None:
                return placed
        return {}

    def _try_bundles(self, stmt: Statement, queue: QueueInfo, job: JobInfo, need: Resource,
                     bundles: list[Bundle], domain: str, nodes: list[NodeInfo]) -> dict[str, str] | None:
        ssn = self.ssn
        idle = sum_idle_and_releasing(nodes)
        hyper_node = ssn.hyper_nodes.get(domain) or ssn.hyper_nodes[CLUSTER_TOP_HYPER_NODE]
        selected: list[TaskInfo] = []
        for bundle in bundles:
            selected.extend(bundle.tasks)
            if not need.less_equal(idle.clone().add(sum_resreq(selected)), Zero):
                continue
            found = build_nomination_plan(ssn, queue, job, hyper_node, list(selected), self.reason,
                                          self.settings.enable_predicate_error_cache)
            if found is not None and recover_operations(stmt, found[0]):
                return found[1]
        return None

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

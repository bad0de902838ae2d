"""The scheduling session: snapshot state plus extension-point dispatch.

Mirrors pkg/scheduler/framework/session.go and session_plugins.go. Plugins
register callbacks keyed by their name; every dispatcher walks the tiers in
order, and plugins within a tier in order, honouring each plugin's enable flag.
The three combination rules (first non-zero compare, vote, tiered
intersection) are each written once here.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.queue_info import QueueInfo
from schedcheck.reference.api.resource_info import Resource
from schedcheck.reference.api.task_info import TaskInfo, parse_go_int
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.api.unschedule_info import (
    ALLOCATE_FAILING,
    PREEMPT_FAILING,
    FitError,
    FitErrors,
)
from schedcheck.reference.cache.cache import BindContext
from schedcheck.reference.cache.errors import CacheError
from schedcheck.reference.framework.conf import SchedulerConf, Tier
from schedcheck.reference.framework.event import Event, EventHandler
from schedcheck.reference.util.priority_queue import PriorityQueue

if TYPE_CHECKING:
    from schedcheck.reference.cache.cache import SchedulerCache
    from schedcheck.reference.framework.plugin import Plugin
    from schedcheck.reference.gate.schedulinggate import SchGateManager

PERMIT = 1
ABSTAIN = 0
REJECT = -1

# extension point -> the enable flag that gates it (None: always on)
EXTENSION_FLAGS: dict[str, str | None] = {
    "job_order": "enableJobOrder",
    "queue_order": "enableQueueOrder",
    "task_order": "enableTaskOrder",
    "victim_queue_order": None,
    "predicate": "enablePredicate",
    "pre_predicate": "enablePredicate",
    "best_node": "enableBestNode",
    "node_order": "enableNodeOrder",
    "batch_node_order": "enableNodeOrder",
    "node_map": "enableNodeOrder",
    "node_reduce": "enableNodeOrder",
    "preemptable": "enablePreemptable",
    "reclaimable": "enableReclaimable",
    "overused": "enabledOverused",
    "allocatable": "enabledAllocatable",
    "preemptive": "enablePreemptive",
    "job_ready": "enableJobReady",
    "job_pipelined": "enableJobPipelined",
    "job_enqueueable": "enableJobEnqueued",
    "job_enqueued": "enableJobEnqueued",
    "job_valid": None,
    "job_starving": "enableJobStarving",
    "target_job": "enableTargetJob",
    "victim_tasks": "enabledVictim",
    "reserved_nodes": "enableReservedNodes",
    "unified_evictable": None,
    "simulate_predicate": "enablePredicate",
    "simulate_allocatable": "enabledAllocatable",
    # Simulate Add/RemoveTask run when EnabledPreemptable OR EnabledAllocatable is on.
    "simulate_add_task": "enablePreemptable|enabledAllocatable",
    "simulate_remove_task": "enablePreemptable|enabledAllocatable",
    "hyper_node_order": "enabledHyperNodeOrder",
    "hyper_node_gradient_for_job": "enabledHyperNodeGradient",
    "hyper_node_gradient_for_sub_job": "enabledHyperNodeGradient",
    "sub_job_ready": "enabledSubJobReady",
    "sub_job_pipelined": "enabledSubJobPipelined",
    "sub_job_order": "enabledSubJobOrder",
}


@dataclass
class ValidateResult:
    passed: bool
    reason: str = ""
    message: str = ""


@dataclass
class TieRecord:
    """A decision where several nodes (or hypernodes) were equally good; the seeded generator chose one."""

    action: str
    task: str  # the task placed; for a hypernode tie, the job or subjob placed
    candidates: list[str]
    chosen: str
    score: float
    kind: str = "node"  # or "hyperNode"


@dataclass
class NominationRecord:
    """One try of allocate's nomination fast path on a subjob a gang action nominated: the hypernode, each
    worksheet task's pod nominated node as validation read it, and, when the plan was placed ("redeemed"),
    the node each task went to; "invalidated" when validation or the plan missed."""

    action: str
    job: str
    sub_job: str
    hyper_node: str
    outcome: str  # "redeemed" | "invalidated"
    nominated_nodes: dict[str, str] = field(default_factory=dict)  # task key -> pod's nominated node
    placed: dict[str, str] = field(default_factory=dict)  # task key -> node (redeemed only)


@dataclass
class Operation:
    """One scheduling operation as it happened in the session (for traces and reports)."""

    action: str
    op: str  # allocate | pipeline | evict | unallocate | unpipeline | unevict | bind
    task: str
    node: str
    job: str = ""
    from_status: TaskStatus | None = None  # the task's status before the operation
    statement: int = 0  # the statement it belongs to (0: none, e.g. ssn.allocate or a bind at commit)
    eviction_occurred: bool = False  # pipeline only
    task_uid: str = ""
    # the undo of a failed operation, inside Statement's rollback: the allocate handlers already ran for the
    # failed step, so plugin accounting settles only when its caller's own undo (e.g. a dry run's UnPipeline)
    # follows; the state right after it is not a state any scheduler decision reads
    rollback: bool = False


@dataclass
class SessionObserverHooks:
    """The narrow hook interface the invariant engine observes through."""

    on_session_open: list[Callable[[Session], None]] = field(default_factory=list)
    on_operation: list[Callable[[Session, Operation], None]] = field(default_factory=list)
    on_statement_begin: list[Callable[[Session, Any], None]] = field(default_factory=list)
    on_action_end: list[Callable[[Session, str], None]] = field(default_factory=list)
    on_statement_end: list[Callable[[Session, str, list], None]] = field(default_factory=list)
    on_session_close: list[Callable[[Session], None]] = field(default_factory=list)  # before plugins close
    on_session_closed: list[Callable[[Session], None]] = field(default_factory=list)  # after the cache took over


class Session:
    def __init__(self, cache: SchedulerCache, conf: SchedulerConf, cycle: int, seed: int) -> None:
        self.uid = f"session-{cycle}"
        self.cycle = cycle
        self.cache = cache
        self.conf = conf
        self.tiers: list[Tier] = conf.tiers
        self.rng = random.Random(seed * 1_000_003 + cycle)
        self.jobs: dict[str, JobInfo] = {}
        self.nodes: dict[str, NodeInfo] = {}
        self.node_list: list[NodeInfo] = []
        self.queues: dict[str, QueueInfo] = {}
        self.total_resource = Resource()
        self.resource_quotas: list = []  # the cluster's ResourceQuota objects (resourcequota plugin)
        self.nodes_in_shard: set[str] = set()  # NodesInShard: the nodes this scheduler's shard may use
        # The network topology (framework/topology.py): hypernodes with the virtual cluster top, the
        # session's nodes under each, hypernodes by tier, the tiers in ascending order.
        self.hyper_nodes: dict = {}
        self.hyper_nodes_set_by_tier: dict[int, set[str]] = {}
        self.hyper_nodes_tiers: list[int] = []
        self.hyper_node_tier_names: dict[str, int] = {}
        self.real_nodes_list: dict[str, list[NodeInfo]] = {}
        self.real_nodes_set: dict[str, set[str]] = {}
        self.hyper_nodes_ready = True
        self.now = 0.0  # the session's clock, seconds since the epoch (sla waiting times)
        self.plugins: dict[str, Plugin] = {}
        self.event_handlers: list[EventHandler] = []
        self.current_action = ""
        self.aborted = False  # an exception (an upstream assertion: upstream panics) cut the actions short
        self.enabled_actions: set[str] = set(conf.actions)
        self.ties: list[TieRecord] = []
        self.nominations: list[NominationRecord] = []  # allocate's nomination fast path, in order
        # A guided replay (conform): (ssn, task, tied nodes) -> chosen node or None (None: the seeded
        # choice stands); optional methods preferred_victims(ssn) and record_scores(ssn, task, scores).
        self.tie_chooser: Callable[..., Any] | None = None
        self._statement_ids = 0
        self.operations: list[Operation] = []
        # jobs whose saved plan RecoverOperations could not replay whole this session (what it replayed stays)
        self.failed_recoveries: set[str] = set()
        self.rolling_back = False  # Statement is undoing a failed step (Operation.rollback)
        # An observer (a harness's checks) is calling the session's functions, not the scheduler: a plugin
        # with outside effects (the extender's HTTP calls) answers from what it already answered.
        self.observing = False
        self.hooks = SessionObserverHooks()
        self.pod_group_old_phase: dict[str, str] = {}
        self._fns: dict[str, dict[str, Callable[..., Any]]] = {point: {} for point in EXTENSION_FLAGS}
        # Per-task scratch state shared by a task's extension points (upstream's k8s CycleState).
        self.cycle_states: dict[str, dict[str, Any]] = {}
        self._tiered_cache: dict[str, list[list[Callable[..., Any]]]] = {}
        self._flat_cache: dict[str, list[Callable[..., Any]]] = {}  # point -> its callbacks in tier order
        # The scheduling-gate manager (gate/schedulinggate.py); None with SchedulingGatesQueueAdmission off.
        self.sch_gate_manager: SchGateManager | None = None

    def new_statement_id(self) -> int:
        self._statement_ids += 1
        return self._statement_ids

    # -- registration (upstream AddXxxFn) -----------------------------------------------

    def add_fn(self, point: str, plugin_name: str, fn: Callable[..., Any]) -> None:
        """AddJobOrderFn, AddPredicateFn, ...: one registry keyed by the extension point's name."""
        if point not in EXTENSION_FLAGS:
            raise KeyError(f"plugin {plugin_name}: unknown extension point {point!r}")
        self._fns[point][plugin_name] = fn
        self._tiered_cache.clear()
        self._flat_cache.clear()

    def add_event_handler(self, handler: EventHandler) -> None:
        self.event_handlers.append(handler)

    def add_unassigned_numa_pods(self, allocated: dict[Any, dict[str, dict[str, frozenset[int]]]]) -> None:
        """AddUnassignedNumaPods: the numa-aware plugin's CPU sets of the pods it placed, kept by the cache."""
        self.cache.add_unassigned_numa_pods(allocated)

    def _tiered(self, point: str) -> list[list[Callable[..., Any]]]:
        """The registered callbacks of a point, grouped by tier, in plugin order, flags applied."""
        cached = self._tiered_cache.get(point)
        if cached is not None:
            return cached
        flag = EXTENSION_FLAGS[point]
        registered = self._fns[point]
        tiers = []
        flags = flag.split("|") if flag else []
        for tier in self.tiers:
            fns = []
            for option in tier.plugins:
                if flags and not any(option.enabled(f) for f in flags):
                    continue
                fn = registered.get(option.name)
                if fn is not None:
                    fns.append(fn)
            tiers.append(fns)
        self._tiered_cache[point] = tiers
        return tiers

    def registered(self, point: str) -> list[list[tuple[str, Callable[..., Any]]]]:
        """(plugin name, callback) of a point by tier, flags applied: what _tiered calls, with names."""
        flag = EXTENSION_FLAGS[point]
        flags = flag.split("|") if flag else []
        return [[(option.name, self._fns[point][option.name]) for option in tier.plugins
                 if option.name in self._fns[point] and not (flags and not any(option.enabled(f) for f in flags))]
                for tier in self.tiers]

    def _flat(self, point: str) -> list[Callable[..., Any]]:
        cached = self._flat_cache.get(point)
        if cached is None:
            cached = self._flat_cache[point] = [fn for tier in self._tiered(point) for fn in tier]
        return cached

    def has_fn(self, point: str) -> bool:
        return bool(self._flat(point))

    # -- ordering: first non-zero comparison --------------------------------------------

    def _first_nonzero(self, point: str, left: Any, right: Any) -> int:
        for fn in self._flat(point):
            result = fn(left, right)
            if result != 0:
                return result
        return 0

    def job_order_compare_fn(self, left: JobInfo, right: JobInfo) -> int:
        return self._first_nonzero("job_order", left, right)

    def job_order_fn(self, left: JobInfo, right: JobInfo) -> bool:
        result = self._first_nonzero("job_order", left, right)
        if result != 0:
            return result < 0
        if left.creation_timestamp == right.creation_timestamp:
            return left.uid < right.uid
        return left.creation_timestamp < right.creation_timestamp

    def queue_order_fn(self, left: QueueInfo, right: QueueInfo) -> bool:
        result = self._first_nonzero("queue_order", left, right)
        if result != 0:
            return result < 0
        if left.creation_timestamp == right.creation_timestamp:
            return left.uid < right.uid
        return left.creation_timestamp < right.creation_timestamp

    def task_compare_fns(self, left: TaskInfo, right: TaskInfo) -> int:
        return self._first_nonzero("task_order", left, right)

    def task_order_fn(self, left: TaskInfo, right: TaskInfo) -> bool:
        result = self._first_nonzero("task_order", left, right)
        if result != 0:
            return result < 0
        return compare_task(left, right)

    def victim_queue_order_fn(self, left: QueueInfo, right: QueueInfo, preemptor: QueueInfo) -> bool:
        for fn in self._flat("victim_queue_order"):
            result = fn(left, right, preemptor)
            if result != 0:
                return result < 0
        return not self.queue_order_fn(left, right)

    # -- predicates: all must pass ------------------------------------------------------

    def predicate_fn(self, task: TaskInfo, node: NodeInfo) -> Exception | None:
        for fn in self._flat("predicate"):
            err = fn(task, node)
            if err is not None:
                return err
        return None

    def pre_predicate_fn(self, task: TaskInfo) -> Exception | None:
        for fn in self._flat("pre_predicate"):
            err = fn(task)
            if err is not None:
                return err
        return None

    def predicate_for_allocate_action(self, task: TaskInfo, node: NodeInfo) -> Exception | None:
        err = self.predicate_fn(task, node)
        if err is None:
            return None
        if not isinstance(err, FitError) or err.codes() & ALLOCATE_FAILING:
            return err
        return None

    def predicate_for_preempt_action(self, task: TaskInfo, node: NodeInfo) -> Exception | None:
        err = self.predicate_fn(task, node)
        if err is None:
            return None
        if not isinstance(err, FitError) or err.codes() & PREEMPT_FAILING:
            return err
        return None

    # -- scoring ------------------------------------------------------------------------

    def best_node_fn(self, task: TaskInfo, node_scores: dict[float, list[NodeInfo]]) -> NodeInfo | None:
        for fn in self._flat("best_node"):
            node = fn(task, node_scores)
            if node is not None:
                return node
        return None

    def _node_order_plugins(self) -> list[tuple[Callable[..., Any] | None, Callable[..., Any] | None, str]]:
        """(order fn, map fn, plugin name) of every plugin with node ordering enabled, in tier order."""
        cached = self._tiered_cache.get("_node_order_plugins")
        if cached is None:
            cached = []
            for tier in self.tiers:
                for option in tier.plugins:
                    if not option.enabled("enableNodeOrder"):
                        continue
                    order_fn = self._fns["node_order"].get(option.name)
                    map_fn = self._fns["node_map"].get(option.name)
                    if order_fn is not None or map_fn is not None:
                        cached.append((order_fn, map_fn, option.name))
            self._tiered_cache["_node_order_plugins"] = cached  # type: ignore[assignment]
        return cached  # type: ignore[return-value]

    def has_node_order_map(self) -> bool:
        """Some plugin with node ordering enabled has a NodeOrderFn or NodeMapFn."""
        return bool(self._node_order_plugins())

    def node_order_map_fn(self, task: TaskInfo, node: NodeInfo) -> tuple[dict[str, float], float]:
        map_scores: dict[str, float] = {}
        order_score = 0.0
        for order_fn, map_fn, name in self._node_order_plugins():
            if order_fn is not None:
                order_score += order_fn(task, node)
            if map_fn is not None:
                map_scores[name] = map_fn(task, node)
        return map_scores, order_score

    def node_order_reduce_fn(
        self, task: TaskInfo, plugin_scores: dict[str, list[list[Any]]]
    ) -> dict[str, float]:
        """Each plugin's reduce normalises its [node, score] list in place; the results are summed."""
        totals: dict[str, float] = {}
        for tier in self.tiers:
            for option in tier.plugins:
                if not option.enabled("enableNodeOrder"):
                    continue
                fn = self._fns["node_reduce"].get(option.name)
                if fn is None:
                    continue
                scores = plugin_scores.get(option.name, [])
                fn(task, scores)
                for name, score in scores:
                    totals[name] = totals.get(name, 0.0) + float(score)
        return totals

    def hyper_node_order_map_fn(self, sub_job: Any, hyper_nodes: dict[str, list[NodeInfo]]
                                ) -> dict[str, dict[str, float]]:
        """HyperNodeOrderMapFn: each plugin's score of each candidate hypernode for the subjob."""
        return {name: fn(sub_job, hyper_nodes) for tier in self.registered("hyper_node_order") for name, fn in tier}

    def hyper_node_gradient_for_job_fn(self, job: JobInfo, hyper_node: Any, purpose: str) -> list[list[Any]]:
        """HyperNodeGradientForJobFn: the first registered plugin decides; without one, the given hypernode."""
        fns = self._flat("hyper_node_gradient_for_job")
        return fns[0](job, hyper_node, purpose) if fns else [[hyper_node]]

    def hyper_node_gradient_for_sub_job_fn(self, sub_job: Any, hyper_node: Any, purpose: str) -> list[list[Any]]:
        fns = self._flat("hyper_node_gradient_for_sub_job")
        return fns[0](sub_job, hyper_node, purpose) if fns else [[hyper_node]]

    def batch_node_order_fn(self, task: TaskInfo, nodes: list[NodeInfo]) -> dict[str, float]:
        fns = self._flat("batch_node_order")
        if len(fns) == 1:  # one batch scorer (nodeorder): the sum below without the lookups
            return {name: 0.0 + score for name, score in fns[0](task, nodes).items()}
        totals: dict[str, float] = {}
        for fn in fns:
            for name, score in fn(task, nodes).items():
                totals[name] = totals.get(name, 0.0) + score
        return totals

    # -- victims: tiered intersection ---------------------------------------------------

    def _tiered_intersection(self, point: str, *args: Any) -> list[TaskInfo] | None:
        victims: list[TaskInfo] | None = None
        for tier in self._tiered(point):
            for fn in tier:
                candidates, vote = fn(*args)
                if vote == ABSTAIN:
                    continue
                if not candidates:
                    victims = None
                    break
                if victims is None:
                    victims = list(candidates)
                else:  # upstream's nested loop: each victim once per candidate of its UID (every UID is read)
                    matches = Counter(c.uid for c in candidates)
                    victims = [v for v in victims for _ in range(matches.get(v.uid, 0))] or None
            if victims is not None:
                return victims
        return None

    def preemptable(self, preemptor: TaskInfo, preemptees: list[TaskInfo]) -> list[TaskInfo] | None:
        return self._tiered_intersection("preemptable", preemptor, preemptees)

    def reclaimable(self, reclaimer: TaskInfo, reclaimees: list[TaskInfo]) -> list[TaskInfo] | None:
        return self._tiered_intersection("reclaimable", reclaimer, reclaimees)

    def unified_evictable(self, context: Any, candidates: list[TaskInfo]) -> list[TaskInfo] | None:
        """The gang* actions' victim filter: tiered intersection, no enable flag."""
        return self._tiered_intersection("unified_evictable", context, candidates)

    def build_victims_priority_queue(self, victims: list[TaskInfo], preemptor: TaskInfo) -> PriorityQueue:
        """Victims in eviction order: the first popped is evicted first (BuildVictimsPriorityQueue)."""
        jobs, queues = self.jobs, self.queues

        def job_then_task(left_job: JobInfo, right_job: JobInfo, left: TaskInfo, right: TaskInfo) -> bool:
            result = self.job_order_compare_fn(left_job, right_job)
            if result != 0:
                return result > 0  # the job that would be scheduled later is evicted first
            return not self.task_order_fn(left, right)

        def less(left: TaskInfo, right: TaskInfo) -> bool:
            if left.job == right.job:
                return not self.task_order_fn(left, right)
            left_job, right_job = jobs.get(left.job), jobs.get(right.job)
            preemptor_job = jobs.get(preemptor.job)
            if left_job is None or right_job is None:
                if left_job is None and right_job is None:
                    return not self.task_order_fn(left, right)
                return left_job is None  # an orphan goes first
            if preemptor_job is None:
                return job_then_task(left_job, right_job, left, right)
            if left_job.queue != right_job.queue:
                return self.victim_queue_order_fn(queues[left_job.queue], queues[right_job.queue],
                                                  queues[preemptor_job.queue])
            return job_then_task(left_job, right_job, left, right)

        return PriorityQueue(less, victims)

    # -- simulation (topology-aware preemption's dry runs) ------------------------------

    def get_cycle_state(self, task_uid: str) -> dict[str, Any]:
        """The task's cycle state; a task without one (e.g. a running victim) gets a fresh one."""
        return self.cycle_states.setdefault(task_uid, {})

    def simulate_predicate_fn(self, state: dict[str, Any], task: TaskInfo, node: NodeInfo) -> Exception | None:
        for fn in self._flat("simulate_predicate"):
            err = fn(state, task, node)
            if err is not None:
                return err
        return None

    def simulate_allocatable_fn(self, state: dict[str, Any], queue: QueueInfo, task: TaskInfo) -> bool:
        return all(fn(state, queue, task) for fn in self._flat("simulate_allocatable"))

    def simulate_add_task_fn(self, state: dict[str, Any], task_to_schedule: TaskInfo, task_to_add: TaskInfo,
                             node: NodeInfo) -> Exception | None:
        for fn in self._flat("simulate_add_task"):
            err = fn(state, task_to_schedule, task_to_add, node)
            if err is not None:
                return err
        return None

    def simulate_remove_task_fn(self, state: dict[str, Any], task_to_schedule: TaskInfo, task_to_remove: TaskInfo,
                                node: NodeInfo) -> Exception | None:
        for fn in self._flat("simulate_remove_task"):
            err = fn(state, task_to_schedule, task_to_remove, node)
            if err is not None:
                return err
        return None

    # -- queue and job validation -------------------------------------------------------

    def overused(self, queue: QueueInfo) -> bool:
        return any(fn(queue) for fn in self._flat("overused"))

    def allocatable(self, queue: QueueInfo, task: TaskInfo) -> bool:
        return all(fn(queue, task) for fn in self._flat("allocatable"))

    def preemptive(self, queue: QueueInfo, candidates: TaskInfo | list[TaskInfo]) -> bool:
        """All must pass. Upstream passes a list of candidate tasks; plugins sum their requests."""
        return all(fn(queue, candidates) for fn in self._flat("preemptive"))

    def job_ready(self, job: JobInfo) -> bool:
        return all(fn(job) for fn in self._flat("job_ready"))

    def _vote(self, point: str, job: JobInfo) -> bool:
        for tier in self._tiered(point):
            permitted = False
            for fn in tier:
                result = fn(job)
                if result < 0:
                    return False
                if result > 0:
                    permitted = True
            if permitted:
                return True
        return True

    def job_pipelined(self, job: JobInfo) -> bool:
        return self._vote("job_pipelined", job)

    def sub_job_ready(self, job: JobInfo, sub_job: Any) -> bool:
        """SubJobReady: the job's readiness for a job without subgroup policies."""
        if not job.contains_sub_job_policy():
            return self.job_ready(job)
        return all(fn(sub_job) for fn in self._flat("sub_job_ready"))

    def sub_job_pipelined(self, job: JobInfo, sub_job: Any) -> bool:
        if not job.contains_sub_job_policy():
            return self.job_pipelined(job)
        return self._vote("sub_job_pipelined", sub_job)

    def sub_job_order_fn(self, left: Any, right: Any) -> bool:
        """SubJobOrderFn: the first plugin with a preference, else match index, then uid."""
        result = self._first_nonzero("sub_job_order", left, right)
        if result != 0:
            return result < 0
        if left.match_index != right.match_index:
            return left.match_index < right.match_index
        return left.uid < right.uid

    def job_enqueueable(self, job: JobInfo) -> bool:
        return self._vote("job_enqueueable", job)

    def job_enqueued(self, job: JobInfo) -> None:
        for fn in self._flat("job_enqueued"):
            fn(job)

    def job_valid(self, job: JobInfo) -> ValidateResult | None:
        for fn in self._flat("job_valid"):
            result = fn(job)
            if result is not None and not result.passed:
                return result
        return None

    def job_starving(self, job: JobInfo) -> bool:
        for tier in self._tiered("job_starving"):
            if not tier:
                continue
            for fn in tier:
                if not fn(job):
                    return False
            return True
        return False

    def victim_tasks(self, tasks: list[TaskInfo]) -> list[TaskInfo]:
        for tier in self._tiered("victim_tasks"):
            union: dict[str, TaskInfo] = {}
            for fn in tier:
                for task in fn(tasks) or []:
                    union[task.uid] = task
            if union:
                return list(union.values())
        return []

    # -- nodes --------------------------------------------------------------------------

    def filter_out_unschedulable_and_unresolvable_nodes(self, task: TaskInfo) -> list[NodeInfo]:
        """Nodes not marked UnschedulableAndUnresolvable for this task earlier in the session."""
        from schedcheck.reference.api.unschedule_info import StatusCode

        job = self.jobs.get(task.job)
        fit_errors: FitErrors | None = job.nodes_fit_errors.get(task.uid) if job else None
        if fit_errors is None:
            return list(self.node_list)
        # Upstream iterates the node map here (random order); the reference keeps node-list order.
        return [
            node for node in self.node_list
            if not (node.name in fit_errors.nodes
                    and StatusCode.UnschedulableAndUnresolvable in fit_errors.nodes[node.name].codes())
        ]

    # -- events and observation ---------------------------------------------------------

    def fire_allocate(self, task: TaskInfo) -> Exception | None:
        event = Event(task)
        for handler in self.event_handlers:
            if handler.allocate_func is not None:
                handler.allocate_func(event)
        return event.err

    def fire_deallocate(self, task: TaskInfo) -> Exception | None:
        event = Event(task)
        for handler in self.event_handlers:
            if handler.deallocate_func is not None:
                handler.deallocate_func(event)
        return event.err

    def record(self, op: str, task: TaskInfo, node: str, from_status: TaskStatus | None = None,
               statement: int = 0) -> None:
        operation = Operation(self.current_action, op, task.key, node, task.job, from_status, statement,
                              task.eviction_occurred if op == "pipeline" else False, task.uid, self.rolling_back)
        self.operations.append(operation)
        for hook in self.hooks.on_operation:
            hook(self, operation)

    def record_tie(self, task: TaskInfo, candidates: list[NodeInfo], chosen: NodeInfo, score: float) -> None:
        self.ties.append(TieRecord(self.current_action, task.key, [n.name for n in candidates], chosen.name, score))

    def record_hyper_node_tie(self, owner: str, candidates: list[str], chosen: str, score: float) -> None:
        """Equally scored hypernodes for a job or subjob (`owner`): allocate's choice among them."""
        self.ties.append(TieRecord(self.current_action, owner, list(candidates), chosen, score, "hyperNode"))

    # -- session-level operations (no statement) ----------------------------------------

    def allocate(self, task: TaskInfo, node: NodeInfo) -> Exception | None:
        """ssn.Allocate (backfill): allocate, then dispatch the job's allocated tasks if it is ready.

        No rollback on failure, as upstream: a failed AddTask leaves the task Allocated in its job.
        """
        from schedcheck.reference.api.node_info import NodeError

        task.pod.node_name = node.name
        from_status = task.status
        job = self.jobs.get(task.job)
        if job is None:
            return LookupError(f"failed to find job {task.job}")
        job.update_task_status(task, TaskStatus.Allocated)
        task.node_name = node.name
        if node.name not in self.nodes:
            return LookupError(f"failed to find node {node.name}")
        try:
            node.add_task(task)
        except NodeError as exc:
            return exc
        self.fire_allocate(task)  # upstream ignores handler errors here
        self.record("allocate", task, node.name, from_status)
        if self.job_ready(job):
            for allocated in job.tasks_with_status(TaskStatus.Allocated):
                try:
                    self.dispatch(allocated)
                except CacheError as exc:
                    return exc
        return None

    def dispatch(self, task: TaskInfo) -> None:
        """Send an allocated task to the cache's binder; the session task becomes Binding."""
        self.cache.add_bind_task(task, self.create_bind_context(task))
        from_status = task.status
        job = self.jobs.get(task.job)
        if job is not None:
            job.update_task_status(task, TaskStatus.Binding)
        self.record("bind", task, task.node_name, from_status)

    def create_bind_context(self, task: TaskInfo) -> BindContext:
        """CreateBindContext: each plugin with a bind extension adds it, from the task's cycle state."""
        context = BindContext(task)
        for plugin in self.plugins.values():
            setup = getattr(plugin, "setup_bind_context_extension", None)
            if setup is not None:
                setup(self.cycle_states.get(task.uid, {}), context)
        return context

    def evict(self, task: TaskInfo, reason: str) -> Exception | None:
        """ssn.Evict (shuffle): the cache first (a refusal raises CacheError), then the session."""
        self.cache.evict(task, reason)
        from_status = task.status
        job = self.jobs.get(task.job)
        if job is None:
            return LookupError(f"failed to find job {task.job}")
        job.update_task_status(task, TaskStatus.Releasing)
        node = self.nodes.get(task.node_name)
        if node is not None:
            node.update_task(task)
        self.fire_deallocate(task)
        self.record("evict", task, task.node_name, from_status)
        return None

    def release_pipelined(self, task: TaskInfo) -> None:
        """Persistent mode: drop a kept pipelined reservation whose node left the session (the plugins'
        charge for it is released with it)."""
        from_status = task.status
        job = self.jobs.get(task.job)
        if job is not None:
            job.update_task_status(task, TaskStatus.Pending)
        node = self.nodes.get(task.node_name)
        if node is not None:
            node.remove_task(task)
        self.fire_deallocate(task)
        self.record("release", task, task.node_name, from_status)
        task.node_name = ""

    def action_arguments(self, action: str) -> dict[str, Any]:
        return self.conf.action_arguments(action)


def compare_task(left: TaskInfo, right: TaskInfo) -> bool:
    """Upstream's default task order: the pod name's index, then the pod's creation time, then UID."""
    li, ri = pod_index(left.pod.name), pod_index(right.pod.name)
    if li is None or ri is None or li == ri:
        if left.creation_timestamp == right.creation_timestamp:
            return left.uid < right.uid
        return left.creation_timestamp < right.creation_timestamp
    return li < ri


@lru_cache(maxsize=1 << 14)  # asked twice at every task comparison, of the same few names
def pod_index(name: str) -> int | None:
    """GetPodIndexUnderTask: the number after a pod name's last dash, in a name of three parts or more."""
    parts = name.split("-")
    if len(parts) < 3:
        return None
    return parse_go_int(parts[-1])

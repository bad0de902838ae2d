"""preempt's topology-aware path, kube-scheduler style (pkg/scheduler/actions/preempt/preempt.go:
topologyAwarePreempt, findCandidates, GetOffsetAndNumCandidates, DryRunPreemption,
SelectVictimsOnNode, SelectCandidate / pickOneNodeForPreemption, prepareCandidate; semantics §8.4).

Upstream dry-runs nodes in parallel (topologyAwarePreemptWorkerNum workers) and cancels once enough
candidates were found. The reference runs the dry runs sequentially, in the fixed order
offset, offset+1, ... (mod n), and stops at the numCandidates-th candidate; the random offset comes
from the session's seeded generator. Candidates are kept in that order, and the final "first node"
tie-break of pickOneNodeForPreemption uses it (upstream's order there is a Go map's).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from schedcheck.reference.actions.victims import (
    TaskFilter,
    clone_filtered_tasks,
    guided_order,
    pod_priority,
    validate_victims,
)
from schedcheck.reference.api.node_info import NodeError, NodeInfo
from schedcheck.reference.api.queue_info import QueueInfo
from schedcheck.reference.api.resource_info import Zero
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.framework.session import Session
from schedcheck.reference.framework.statement import Statement, StatementError
from schedcheck.reference.util.timestamps import parse_timestamp

MAX_INT32_PLUS_ONE = 2**31


@dataclass
class TopologySettings:
    """The preempt arguments of the topology-aware path, with upstream's defaults."""

    worker_num: int = 16
    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 1
    max_candidate_nodes_absolute: int = 100


@dataclass
class Candidate:
    """A node where evicting `victims` lets the preemptor fit (victims in reprieve order)."""

    name: str
    victims: list[TaskInfo]


def topology_aware_preempt(ssn: Session, settings: TopologySettings, stmt: Statement, preemptor: TaskInfo,
                           task_filter: TaskFilter, nodes: list[NodeInfo]) -> bool:
    """topologyAwarePreempt: dry runs, pick a candidate, evict its victims, Pipeline(p, node, true)."""
    candidates = find_candidates(ssn, settings, preemptor, task_filter, nodes)
    best = select_candidate(candidates, ssn.now)
    if best is None or not best.name:
        return False
    tmp = Statement(ssn)
    for victim in best.victims:  # prepareCandidate
        tmp.evict(victim, "preempt")
    try:
        tmp.pipeline(preemptor, best.name, True)
    except StatementError:
        tmp.discard()
        return False
    stmt.merge(tmp)
    return True


def calculate_num_candidates(num_nodes: int, settings: TopologySettings) -> int:
    """calculateNumCandidates: n·pct/100 clamped to [minAbs, maxAbs], never above num_nodes."""
    n = num_nodes * settings.min_candidate_nodes_percentage // 100
    n = max(n, settings.min_candidate_nodes_absolute)
    n = min(n, settings.max_candidate_nodes_absolute)
    return min(n, num_nodes)


def find_candidates(ssn: Session, settings: TopologySettings, preemptor: TaskInfo, task_filter: TaskFilter,
                    nodes: list[NodeInfo]) -> list[Candidate]:
    """findCandidates: a random offset (rand.Intn) and the candidate count, then the dry runs."""
    if not nodes:
        return []
    offset = ssn.rng.randrange(len(nodes))
    return dry_run_preemption(ssn, preemptor, nodes, offset, calculate_num_candidates(len(nodes), settings),
                              task_filter)


def dry_run_preemption(ssn: Session, preemptor: TaskInfo, nodes: list[NodeInfo], offset: int, num_candidates: int,
                       task_filter: TaskFilter) -> list[Candidate]:
    """DryRunPreemption: SelectVictimsOnNode on a clone of each node and a clone of the cycle state."""
    job = ssn.jobs.get(preemptor.job)
    if job is None:
        return []
    queue = ssn.queues[job.queue]
    state = ssn.get_cycle_state(preemptor.uid)
    candidates: list[Candidate] = []
    total = len(nodes)
    for index in range(total):
        node_copy = nodes[(offset + index) % total].clone()
        victims = select_victims_on_node(ssn, clone_cycle_state(state), preemptor, queue, node_copy, task_filter)
        if victims:  # success with no victim is not a candidate ("expected at least one victim")
            candidates.append(Candidate(node_copy.name, victims))
            if len(candidates) >= num_candidates:
                break
    return candidates


def clone_cycle_state(state: dict[str, Any]) -> dict[str, Any]:
    """CycleState.Clone: every entry cloned through its own clone(), else deep-copied."""
    return {key: value.clone() if hasattr(value, "clone") else copy.deepcopy(value) for key, value in state.items()}


def select_victims_on_node(ssn: Session, state: dict[str, Any], preemptor: TaskInfo, queue: QueueInfo,
                           node: NodeInfo, task_filter: TaskFilter) -> list[TaskInfo] | None:
    """SelectVictimsOnNode on a node clone: remove victims until the preemptor fits, then reprieve
    from the highest priority down. None when the node is not a candidate."""
    all_victims = ssn.preemptable(preemptor, guided_order(ssn, clone_filtered_tasks(node, task_filter)))
    if not validate_victims(preemptor, node, all_victims):
        return None
    victims_queue = ssn.build_victims_priority_queue(all_victims or [], preemptor)
    potential: list[TaskInfo] = []
    while not victims_queue.empty():
        victim = victims_queue.pop()
        potential.append(victim)
        if not _simulate_remove(ssn, state, preemptor, victim, node):
            return None
        if _fits(ssn, state, queue, preemptor, node):
            break
    if not potential:
        return None
    if ssn.simulate_predicate_fn(state, preemptor, node) is not None:
        return None
    return _reprieve(ssn, state, queue, preemptor, node, potential)


def _reprieve(ssn: Session, state: dict[str, Any], queue: QueueInfo, preemptor: TaskInfo, node: NodeInfo,
              potential: list[TaskInfo]) -> list[TaskInfo] | None:
    """Re-add each potential victim, highest priority first; keep it evicted only if needed."""
    victims: list[TaskInfo] = []
    for victim in reversed(potential):
        if ssn.simulate_add_task_fn(state, preemptor, victim, node) is not None:
            return None
        try:
            node.add_task(victim)
        except NodeError:
            return None
        if not _fits(ssn, state, queue, preemptor, node):
            if not _simulate_remove(ssn, state, preemptor, victim, node):
                return None
            victims.append(victim)
    return victims


def _simulate_remove(ssn: Session, state: dict[str, Any], preemptor: TaskInfo, victim: TaskInfo,
                     node: NodeInfo) -> bool:
    if ssn.simulate_remove_task_fn(state, preemptor, victim, node) is not None:
        return False
    node.remove_task(victim)
    return True


def _fits(ssn: Session, state: dict[str, Any], queue: QueueInfo, preemptor: TaskInfo, node: NodeInfo) -> bool:
    """SimulateAllocatable && InitResreq <= FutureIdle && SimulatePredicate."""
    return (ssn.simulate_allocatable_fn(state, queue, preemptor)
            and preemptor.init_resreq.less_equal(node.future_idle_view(), Zero)
            and ssn.simulate_predicate_fn(state, preemptor, node) is None)


# -- SelectCandidate ----------------------------------------------------------------------


def select_candidate(candidates: list[Candidate], now: float) -> Candidate | None:
    """SelectCandidate / pickOneNodeForPreemption: the five-key ordering, first candidate last."""
    if not candidates:
        return None
    if len(candidates) == 1:
        return candidates[0]
    remaining = candidates
    for score in (_min_highest_priority, _min_sum_priorities, _min_num_victims,
                  lambda c: _latest_start_time(c, now)):
        best = max(score(c) for c in remaining)
        remaining = [c for c in remaining if score(c) == best]
        if len(remaining) == 1:
            break
    return remaining[0]


def _min_highest_priority(candidate: Candidate) -> int:
    """The first victim is taken as the highest-priority one, as upstream assumes."""
    return -pod_priority(candidate.victims[0].pod)


def _min_sum_priorities(candidate: Candidate) -> int:
    return -sum(pod_priority(v.pod) + MAX_INT32_PLUS_ONE for v in candidate.victims)


def _min_num_victims(candidate: Candidate) -> int:
    return -len(candidate.victims)


def _latest_start_time(candidate: Candidate, now: float) -> float:
    """GetEarliestPodStartTime among the highest-priority victims; later is better."""
    return earliest_start_time_of_highest_priority(candidate.victims, now)


def earliest_start_time_of_highest_priority(victims: list[TaskInfo], now: float) -> float:
    """GetEarliestPodStartTime: the earliest start among the victims of the highest pod priority."""
    highest = pod_priority(victims[0].pod)
    earliest = pod_start_time(victims[0], now)
    for victim in victims:
        priority = pod_priority(victim.pod)
        if priority == highest:
            earliest = min(earliest, pod_start_time(victim, now))
        elif priority > highest:
            highest, earliest = priority, pod_start_time(victim, now)
    return earliest


def pod_start_time(task: TaskInfo, now: float) -> float:
    """GetPodStartTime: status.startTime, else the current time."""
    return parse_timestamp(task.pod.start_time) if task.pod.start_time else now

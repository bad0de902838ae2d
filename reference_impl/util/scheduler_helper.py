"""Predicate and scoring helpers (pkg/scheduler/util/predicate_helper.go, scheduler_helper.go).

Upstream evaluates predicates and scores in parallel workers; the reference
evaluates them sequentially in the same logical order, so results are
deterministic. Where upstream picks uniformly at random among equally scored
nodes, the session's seeded generator picks, and the tie is recorded.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from schedcheck.reference.api.unschedule_info import FitErrors, ScoringError
from schedcheck.reference.features import VOLCANO_FEATURE_GATES

if TYPE_CHECKING:
    from schedcheck.reference.api.node_info import NodeInfo
    from schedcheck.reference.api.task_info import TaskInfo
    from schedcheck.reference.framework.session import Session

BASELINE_PERCENTAGE_OF_NODES_TO_FIND = 50
NONE_SHARDING, HARD_SHARDING, SOFT_SHARDING = "none", "hard", "soft"  # pkg/util/util.go


@dataclass
class ServerOptions:
    """The scheduler flags that change decisions (defaults as upstream's)."""

    min_nodes_to_find: int = 100  # --minimum-feasible-nodes
    min_percentage_of_nodes_to_find: int = 5  # --minimum-percentage-nodes-to-find
    percentage_of_nodes_to_find: int = 0  # --percentage-nodes-to-find (0: adaptive)
    sharding_mode: str = NONE_SHARDING  # --scheduler-sharding-mode: none | hard | soft
    shard_name: str = "volcano"  # --scheduler-sharding-name: the NodeShard this instance uses
    # --ignored-provisioners: claims of these provisioners are not counted against CSI volume limits
    # (the cache adds upstream's defaults, rancher.io/local-path and hostpath.csi.k8s.io)
    ignored_provisioners: tuple[str, ...] = ()
    # --feature-gates: the Volcano gates a scenario sets (name -> on); the rest keep their defaults
    feature_gates: dict[str, bool] = field(default_factory=dict)

    def feature_enabled(self, name: str) -> bool:
        """utilfeature.DefaultFeatureGate.Enabled for a Volcano gate."""
        return self.feature_gates.get(name, VOLCANO_FEATURE_GATES[name])


def calculate_num_of_feasible_nodes_to_find(num_all_nodes: int, opts: ServerOptions) -> int:
    if num_all_nodes <= opts.min_nodes_to_find or opts.percentage_of_nodes_to_find >= 100:
        return num_all_nodes
    percentage = opts.percentage_of_nodes_to_find
    if percentage <= 0:
        percentage = BASELINE_PERCENTAGE_OF_NODES_TO_FIND - num_all_nodes // 125
        percentage = max(percentage, opts.min_percentage_of_nodes_to_find)
    return max(num_all_nodes * percentage // 100, opts.min_nodes_to_find)


class NotInShard(Exception):
    """Hard sharding: the node is outside this scheduler's shard (predicate_helper.go)."""


def outside_shard(ssn: Session, node: NodeInfo) -> bool:
    return node.name not in ssn.nodes_in_shard


def split_by_shard(ssn: Session, nodes: list[NodeInfo]) -> tuple[list[NodeInfo], list[NodeInfo]]:
    """(nodes in this scheduler's shard, nodes of other shards); in any mode but soft every node counts
    as in the shard (GetPredicatedNodeByShard)."""
    if ssn.cache.server_options.sharding_mode != SOFT_SHARDING:
        return list(nodes), []
    inside = [node for node in nodes if node.name in ssn.nodes_in_shard]
    outside = [node for node in nodes if node.name not in ssn.nodes_in_shard]
    return inside, outside


class PredicateHelper:
    """Runs a predicate over nodes from a rotating start index, with a per-task-group error cache."""

    def __init__(self, ssn: Session) -> None:
        self.ssn = ssn
        self.error_cache: dict[str, dict[str, Exception]] = {}

    def predicate_nodes(
        self,
        task: TaskInfo,
        nodes: list[NodeInfo],
        fn: Callable[[TaskInfo, NodeInfo], Exception | None],
        enable_error_cache: bool,
    ) -> tuple[list[NodeInfo], FitErrors]:
        fit_errors = FitErrors()
        if not task.task_role:
            enable_error_cache = False
        total = len(nodes)
        if total == 0:
            return [], fit_errors
        state = self.ssn.cache
        to_find = calculate_num_of_feasible_nodes_to_find(total, state.server_options)
        group = f"{task.job}/{task.task_role}"
        node_errors = self.error_cache.get(group)
        failed_before = node_errors is not None
        if node_errors is None:
            node_errors = {}
        start = state.last_processed_node_index % total
        found: list[NodeInfo] = []
        processed = 0
        hard_shard = state.server_options.sharding_mode == HARD_SHARDING
        for index in range(total):
            node = nodes[(start + index) % total]
            processed += 1
            if enable_error_cache and failed_before and node.name in node_errors:
                fit_errors.set_node_error(node.name, node_errors[node.name])
                continue
            if hard_shard and outside_shard(self.ssn, node):
                err = NotInShard("node isn't in scheduler node shard")
            else:
                err = fn(task, node)
            if err is not None:
                node_errors[node.name] = err
                self.error_cache[group] = node_errors
                fit_errors.set_node_error(node.name, err)
                continue
            if len(found) == to_find:
                break  # one feasible node past the target cancels the search
            found.append(node)
        state.last_processed_node_index = (start + processed) % total
        return found, fit_errors


def prioritize_nodes(ssn: Session, task: TaskInfo, nodes: list[NodeInfo]) -> dict[float, list[NodeInfo]]:
    """Score every node: node-order sums + reduced map scores (floored) + batch scores."""
    plugin_scores: dict[str, list[list]] = {}
    order_scores: dict[str, float] = {}
    # no plugin scores node by node (the default conf: nodeorder batches, ImageLocality only with images):
    # every map score is absent and every order score 0.0, which the .get defaults below give
    for node in nodes if ssn.has_node_order_map() else ():
        map_scores, order_score = ssn.node_order_map_fn(task, node)
        for plugin, score in map_scores.items():
            plugin_scores.setdefault(plugin, []).append([node.name, math.floor(score)])
        order_scores[node.name] = order_score
    try:
        reduce_scores = ssn.node_order_reduce_fn(task, plugin_scores)
        batch_scores = ssn.batch_node_order_fn(task, nodes)
    except ScoringError:
        return {}  # upstream logs the error and returns an empty score map
    grouped: dict[float, list[NodeInfo]] = {}
    if reduce_scores or order_scores:
        for node in nodes:
            name = node.name
            score = reduce_scores.get(name, 0.0) + order_scores.get(name, 0.0) + batch_scores.get(name, 0.0)
            grouped.setdefault(score, []).append(node)
    else:  # batch scores alone (the default conf); 0.0 + 0.0 + x is x
        for node in nodes:
            grouped.setdefault(batch_scores.get(node.name, 0.0), []).append(node)
    record_scores = getattr(ssn.tie_chooser, "record_scores", None)  # a guided replay reports scores
    if record_scores is not None:
        record_scores(ssn, task, grouped)
    return grouped


def select_best_node_and_score(ssn: Session, task: TaskInfo, node_scores: dict[float, list[NodeInfo]]) -> tuple[NodeInfo | None, float]:
    if not node_scores:
        return None, 0.0
    best_score = max(node_scores)
    best = node_scores[best_score]
    if not best:
        return None, 0.0
    if len(best) == 1:
        return best[0], best_score
    chosen = best[ssn.rng.randrange(len(best))]
    if ssn.tie_chooser is not None:  # a replay guided by another implementation's choices (conform)
        chosen = ssn.tie_chooser(ssn, task, best) or chosen
    ssn.record_tie(task, best, chosen, best_score)
    return chosen, best_score


def best_scored_node(ssn: Session, task: TaskInfo, nodes: list[NodeInfo]) -> NodeInfo | None:
    """Score the nodes; a BestNodeFn answer wins, else the highest score (seeded choice among ties)."""
    scores = prioritize_nodes(ssn, task, nodes)
    best = ssn.best_node_fn(task, scores)
    if best is None:
        best, _ = select_best_node_and_score(ssn, task, scores)
    return best


def best_node_by_idle_then_future_idle(ssn: Session, task: TaskInfo, nodes: list[NodeInfo]) -> NodeInfo | None:
    """Nodes where the task fits Idle first, then those where it fits only FutureIdle, each split
    in soft sharding into this scheduler's shard first and other shards after; a lone node in a group
    is taken without scoring (allocate.go prioritizeNodes, classic path)."""
    from schedcheck.reference.api.resource_info import Zero

    request = task.init_resreq
    idle_fit: list[NodeInfo] = []
    future_fit: list[NodeInfo] = []
    for node in nodes:
        if request.less_equal(node.idle, Zero):
            idle_fit.append(node)
        elif request.less_equal(node.future_idle_view(), Zero):
            future_fit.append(node)
    for group in (*split_by_shard(ssn, idle_fit), *split_by_shard(ssn, future_fit)):
        if len(group) == 1:
            return group[0]
        if group:
            best = best_scored_node(ssn, task, group)
            if best is not None:
                return best
    return None


def sort_nodes(node_scores: dict[float, list[NodeInfo]], ssn: Session | None = None,
               task: TaskInfo | None = None) -> list[NodeInfo]:
    """Nodes by descending score. Within one score upstream's order is the predicate workers'
    completion order (not reproducible); a guided replay (ssn.tie_chooser, conform) may put the
    implementation's node first among equals."""
    ordered: list[NodeInfo] = []
    for score in sorted(node_scores, reverse=True):
        group = node_scores[score]
        if ssn is not None and task is not None and ssn.tie_chooser is not None and len(group) > 1:
            first = ssn.tie_chooser(ssn, task, group)
            if first is not None:
                group = [first] + [node for node in group if node is not first]
        ordered.extend(group)
    return ordered


def find_hyper_node_for_node(ssn: Session, node_name: str) -> str:
    """util.FindHyperNodeForNode: the node's hypernode in the lowest tier ("" when none)."""
    if not ssn.hyper_nodes_tiers:
        return ""
    for name in sorted(ssn.hyper_nodes_set_by_tier.get(ssn.hyper_nodes_tiers[0], ())):
        if node_name in ssn.real_nodes_set.get(name, ()):
            return name
    return ""

"""Eviction minimality: evict where the preemptor lands, only when needed, and no more than needed.

Resource-level rules (FutureIdle and the preemptor's request, as preempt and reclaim test fit).
They are quality rules: upstream evicts victims in priority order until the preemptor fits, which
can evict more than the fewest needed (a known upstream behaviour), so a violation here is a
finding about eviction quality, not a broken ledger.
"""

from __future__ import annotations

from collections.abc import Iterator

from schedcheck.invariants.catalog.victims import preemptions, task_of
from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.registry import QUALITY, STATEMENT, invariant
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.resource_info import Resource, Zero


def _future_idle_before(ctx: CheckContext):
    """For each preemption: (preemptor task, victim tasks, FutureIdle before its evictions), replayed backwards."""
    found = preemptions(ctx)
    if not found:
        return []
    by_node: dict[str, list] = {}
    for p in found:
        by_node.setdefault(p.preemptor.node, []).append(p)
    results = []
    for node_name, items in by_node.items():
        node = ctx.ssn.nodes.get(node_name)
        if node is None:
            continue
        future = node.future_idle()
        for p in reversed(items):
            preemptor = task_of(ctx, p.preemptor)
            victims = [task_of(ctx, r) for r in p.victims]
            if preemptor is None or any(v is None for v in victims):
                continue
            future.add(preemptor.resreq)  # undo the pipeline
            for victim in victims:
                future.sub_without_assert(victim.resreq)  # undo the eviction
            results.append((preemptor, victims, future.clone(), node))
    return results


def _near_pod_limit(node) -> bool:
    # Evicting can be needed for the pod-count predicate alone; leave such nodes to that predicate.
    return len(node.tasks) >= node.allocatable.max_task_num - 1


def _asks_node_devices(ctx: CheckContext, preemptor, node) -> bool:
    """The preemptor asks a shared-device pool of the node: preempt also evicts until its device predicate
    passes (preemptorFitsOnNode asks PredicateFn, upstream 5a15213d8), which FutureIdle does not show."""
    for name in ctx.ssn.cache.device_flags.registered():
        pool = node.others.get(name) if node.others else None
        if pool is not None and pool.has_device_request(preemptor.pod):
            return True
    return False


@invariant("eviction.same-node", "every eviction of a committed preempt or reclaim is on the node where its "
           "preemptor is pipelined", "eviction", "preempt.go / reclaim.go (per-node statements)", (STATEMENT,))
def eviction_same_node(ctx: CheckContext) -> Iterator[Violation]:
    if ctx.statement_kind != "commit" or ctx.action not in ("preempt", "reclaim"):
        return
    pipelined_nodes = {r.node for r in ctx.statement_records if r.op == "pipeline"}
    for record in ctx.statement_records:
        if record.op == "evict" and record.node not in pipelined_nodes:
            yield Violation("", f"{ctx.action} evicted {record.task} on {record.node}, where no preemptor of the "
                                f"statement was placed", [f"task {record.task}", f"node {record.node}"],
                            sorted(pipelined_nodes), record.node)


@invariant("eviction.needed", "no eviction happens when FutureIdle already fits the preemptor (one asking a "
           "shared device of the node aside: its device predicate can need evictions)", "eviction",
           "preempt.go ValidateVictims / normalPreempt; semantics §8.4", (STATEMENT,), severity=QUALITY)
def eviction_needed(ctx: CheckContext) -> Iterator[Violation]:
    for preemptor, victims, before, node in _future_idle_before(ctx):
        if victims and not _near_pod_limit(node) and preemptor.init_resreq.less_equal(before, Zero) \
                and not _asks_node_devices(ctx, preemptor, node):
            yield Violation("", f"{preemptor.key} fitted node {node.name} (FutureIdle <{before}>) before "
                                f"{len(victims)} eviction(s)", [f"task {preemptor.key}", f"node {node.name}"]
                            + [f"task {v.key}" for v in victims], 0, len(victims))


@invariant("eviction.one-minimal", "no victim could have been spared: without any single victim the preemptor "
           "would not fit (one asking a shared device of the node aside)", "eviction", "upstream issue on excess evictions; semantics §8.4 (reprieve in the "
           "topology-aware path)", (STATEMENT,), severity=QUALITY)
def eviction_one_minimal(ctx: CheckContext) -> Iterator[Violation]:
    for preemptor, victims, before, node in _future_idle_before(ctx):
        if len(victims) < 2 or _near_pod_limit(node) or _asks_node_devices(ctx, preemptor, node):
            continue
        freed = Resource()
        for victim in victims:
            freed.add(victim.resreq)
        for victim in victims:
            without = before.clone().add(freed).sub_without_assert(victim.resreq)
            if preemptor.init_resreq.less_equal(without, Zero):
                yield Violation("", f"{victim.key} was evicted from {node.name} but {preemptor.key} fits without "
                                    f"that eviction ({len(victims)} victims, FutureIdle before them <{before}>)",
                                [f"task {victim.key}", f"task {preemptor.key}", f"node {node.name}"],
                                len(victims) - 1, len(victims))


@invariant("eviction.reclaim-stops-when-fits", "reclaim evicts on a node only until the reclaimer fits: before "
           "each of its evictions, FutureIdle plus what it had already freed there did not fit the reclaimer",
           "eviction", "reclaim.go (evict while InitResreq does not fit FutureIdle + evicted); seed 001 "
           "(FutureIdle)", (STATEMENT,))
def eviction_reclaim_stops_when_fits(ctx: CheckContext) -> Iterator[Violation]:
    if ctx.action != "reclaim":
        return
    for preemptor, victims, before, node in _future_idle_before(ctx):
        available = before.clone()
        for count, victim in enumerate(victims):
            if preemptor.init_resreq.less_equal(available, Zero):
                yield Violation("", f"reclaim evicted {victim.key} from {node.name} although {preemptor.key} "
                                    f"already fitted there after {count} eviction(s) (FutureIdle + freed "
                                    f"<{available}>)", [f"task {victim.key}", f"task {preemptor.key}",
                                                         f"node {node.name}"], count, len(victims))
                break
            available.add(victim.resreq)

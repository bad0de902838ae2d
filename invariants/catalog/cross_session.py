"""Cross-session rules: what one session leaves to the next (seed 004, semantics §11).

These rules need memory of earlier sessions of the same run. The engine hands every session the
run's memory (`session_state["run"]`); each rule keeps its own key there, so a rule that is not
selected (`only=`) leaves no state behind. A rule's memory is per run: one engine, one scheduler.

Mode: `cross.pipelined-kept` applies only when the conf has `pipelinePersistence: persistent`. In
upstream mode losing a pipelined decision at session close is the designed behaviour (only the
nominated node survives an eviction), so it is not a violation there; what the loss costs shows up
in the quality rules `cross.no-oscillation` (evictions repeated for the same preemptor) and
`cross.pipelined-liveness` (a task re-pipelined session after session on a node that has room for
it, never bound), which apply in both modes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from schedcheck.invariants.catalog.victims import preemptions, task_of
from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.registry import CLOSE, QUALITY, STATEMENT, invariant
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.resource_info import Zero
from schedcheck.reference.api.types import TaskStatus

SOURCE = "seed 004 (task state persistence across sessions); volcano-semantics §11"
OSCILLATION_WINDOW = 4  # K: sessions without a new pod within which evictions must not repeat
LIVENESS_BOUND = 2  # N: sessions a pipelined task may wait on a node with Idle room for it


def _memory(ctx: CheckContext, key: str) -> dict[str, Any]:
    run = ctx.session_state.setdefault("run", {})
    return run.setdefault(key, {})


def _persistent(ctx: CheckContext) -> bool:
    return ctx.ssn.conf.persistent_pipelines


def _pipelined(ctx: CheckContext) -> dict[str, tuple[str, str]]:
    """uid -> (pod key, node) of every task Pipelined on a node in the session now."""
    return {uid: (task.key, task.node_name) for job in ctx.ssn.jobs.values()
            for uid, task in job.task_status_index.get(TaskStatus.Pipelined, {}).items() if task.node_name}


@invariant("cross.pipelined-kept", "persistent mode: a task pipelined to a node at one session's close is, at the "
           "next session's open, still pipelined there, bound there, gone, or explicitly released by the cache",
           "session", SOURCE + "; cache.py _restore_pipelined", (CLOSE,))
def pipelined_kept(ctx: CheckContext) -> Iterator[Violation]:
    if not _persistent(ctx):
        return
    memory = _memory(ctx, "pipelined-kept")
    previous: dict[str, tuple[str, str]] = memory.get("pipelined", {})
    prev_cycle = memory.get("cycle")
    at_open: dict[str, tuple[Any, str]] = ctx.session_state.get("cache_at_open", {})
    if prev_cycle is not None and prev_cycle == ctx.cycle - 1:
        released = {r.task for r in ctx.ssn.cache.log.releases[memory.get("releases", 0):]}
        for uid, (key, node) in sorted(previous.items()):
            if uid not in at_open or key in released:
                continue
            status, now_node = at_open[uid]
            if now_node == node and status in (TaskStatus.Pipelined, TaskStatus.Binding, TaskStatus.Bound,
                                                TaskStatus.Running):
                continue
            yield Violation("", f"{key} was pipelined on {node} when session {prev_cycle} closed, but session "
                                f"{ctx.cycle} opened with it {status.name} on {now_node or 'no node'} and no release "
                                f"was recorded: the decision was lost", [f"task {key}", f"node {node}"],
                            f"Pipelined@{node}", f"{status.name}@{now_node or '-'}")
    memory["pipelined"] = _pipelined(ctx)
    memory["cycle"] = ctx.cycle
    memory["releases"] = len(ctx.ssn.cache.log.releases)


@invariant("cross.single-placement", "no task sits on two nodes of the cache, and no pod is bound twice unless its "
           "earlier bind failed or it was evicted since", "session",
           SOURCE + " (no duplicate AddTask for pipelined -> allocated; binder)", (CLOSE,))
def single_placement(ctx: CheckContext) -> Iterator[Violation]:
    cache = ctx.ssn.cache
    where: dict[str, list[str]] = {}
    for name, node in cache.nodes.items():
        for key in node.tasks:
            where.setdefault(key, []).append(name)
    for key, names in sorted(where.items()):
        if len(names) > 1:
            yield Violation("", f"{key} is held by {len(names)} nodes of the cache ({', '.join(sorted(names))})",
                            [f"task {key}"] + [f"node {n}" for n in sorted(names)], 1, len(names))
    memory = _memory(ctx, "single-placement")
    placed: dict[str, str] = memory.setdefault("placed", {})  # pod key -> node of a successful bind
    start = memory.get("outcomes", 0)
    outcomes = cache.log.bind_outcomes
    for outcome in outcomes[start:]:
        if outcome.outcome == "bound":
            placed[outcome.task] = outcome.node
    memory["outcomes"] = len(outcomes)
    for record in cache.log.evictions:
        placed.pop(record.task, None)
    first_bind = ctx.session_state.get("binds_at_open", 0)
    for record in cache.log.binds[first_bind:]:
        if record.task in placed:
            yield Violation("", f"{record.task} was bound to {record.node} though an earlier session's bind already "
                                f"placed it on {placed[record.task]}", [f"task {record.task}", f"node {record.node}"],
                            "one bind", "a second bind")


@invariant("cross.no-oscillation", f"within {OSCILLATION_WINDOW} sessions without a new pod, no pod is evicted twice, "
           "no task is a preemptor in two sessions, and no two queues reclaim from each other", "eviction",
           SOURCE + " (overkill, oscillation)", (STATEMENT,), severity=QUALITY)
def no_oscillation(ctx: CheckContext) -> Iterator[Violation]:
    found = preemptions(ctx)
    memory = _memory(ctx, "no-oscillation")
    if memory.get("open_cycle") != ctx.cycle:  # first evicting statement of this session
        uids = frozenset(ctx.session_state.get("cache_at_open", {}))  # once a session: a set of every pod
        memory["open_cycle"] = ctx.cycle
        if not uids <= memory.get("uids", frozenset()):
            memory["quiet_since"] = ctx.cycle  # a pod arrived: a new window starts
        memory["uids"] = memory.get("uids", frozenset()) | uids
    quiet_since = memory.get("quiet_since", ctx.cycle)
    evicted: dict[str, int] = memory.setdefault("evicted", {})
    preemptors: dict[str, int] = memory.setdefault("preemptors", {})
    reclaims: dict[tuple[str, str], int] = memory.setdefault("reclaims", {})

    def recent(cycle: int | None) -> bool:
        return cycle is not None and cycle >= quiet_since and ctx.cycle - cycle < OSCILLATION_WINDOW

    for p in found:
        preemptor = task_of(ctx, p.preemptor)
        if not p.victims or preemptor is None:
            continue
        earlier = preemptors.get(preemptor.key)
        if earlier is not None and earlier != ctx.cycle and recent(earlier):
            yield Violation("", f"{preemptor.key} had pods evicted for it in session {earlier} and again in session "
                                f"{ctx.cycle} with no new pod in between: its first decision was not kept",
                            [f"task {preemptor.key}"] + [f"task {v.task}" for v in p.victims], earlier, ctx.cycle)
        preemptors[preemptor.key] = ctx.cycle
        own_queue = ctx.ssn.jobs[preemptor.job].queue if preemptor.job in ctx.ssn.jobs else ""
        for record in p.victims:
            if recent(evicted.get(record.task)) and evicted[record.task] != ctx.cycle:
                yield Violation("", f"{record.task} was evicted in session {evicted[record.task]} and again in "
                                    f"session {ctx.cycle}", [f"task {record.task}"], 1, 2)
            evicted[record.task] = ctx.cycle
            victim = task_of(ctx, record)
            victim_queue = ctx.ssn.jobs[victim.job].queue if victim is not None and victim.job in ctx.ssn.jobs else ""
            if ctx.action != "reclaim" or not own_queue or not victim_queue or own_queue == victim_queue:
                continue
            back = reclaims.get((victim_queue, own_queue))
            if recent(back):
                yield Violation("", f"queue {own_queue} reclaimed from {victim_queue} in session {ctx.cycle} after "
                                    f"{victim_queue} reclaimed from {own_queue} in session {back}",
                                [f"queue {own_queue}", f"queue {victim_queue}"], "one direction", "both directions")
            reclaims[(own_queue, victim_queue)] = ctx.cycle


@invariant("cross.pipelined-liveness", f"a task pipelined to a node with Idle room for it is bound "
           f"within {LIVENESS_BOUND} sessions", "session", SOURCE + " (allocate fast path)", (CLOSE,), severity=QUALITY)
def pipelined_liveness(ctx: CheckContext) -> Iterator[Violation]:
    memory = _memory(ctx, "pipelined-liveness")
    streaks: dict[str, int] = memory.get("streaks", {})
    now: dict[str, int] = {}
    for job in ctx.ssn.jobs.values():
        for uid, task in job.task_status_index.get(TaskStatus.Pipelined, {}).items():
            node = ctx.ssn.nodes.get(task.node_name)
            if node is None or not task.init_resreq.less_equal(node.idle, Zero):
                continue
            now[uid] = streaks.get(uid, 0) + 1
            if now[uid] > LIVENESS_BOUND:
                yield Violation("", f"{task.key} has been pipelined on {node.name} with Idle room for it at the close "
                                    f"of {now[uid]} sessions in a row", [f"task {task.key}", f"node {node.name}"],
                                f"bound within {LIVENESS_BOUND} sessions", now[uid])
    memory["streaks"] = now


@invariant("cross.phase-written-back", "after a session closes, the cache holds every PodGroup with the phase the "
           "session computed for it, so the next session starts from it", "session",
           SOURCE + "; framework/job_updater.go (UpdatePodGroup to the cache)", (CLOSE,))
def phase_written_back(ctx: CheckContext) -> Iterator[Violation]:
    for uid, job in ctx.ssn.jobs.items():
        cached = ctx.ssn.cache.jobs.get(uid)
        if job.pod_group is None or cached is None or cached.pod_group is None:
            continue
        if cached.pod_group.phase != job.pod_group.phase:
            yield Violation("", f"job {uid}: the session closed it as {job.pod_group.phase} but the cache keeps "
                                f"{cached.pod_group.phase or 'no phase'} for the next session",
                            [f"job {uid}"], job.pod_group.phase, cached.pod_group.phase)

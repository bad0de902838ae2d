"""Statements as transactions (volcano-semantics §7; pkg/scheduler/framework/statement.go)."""

from __future__ import annotations

from collections.abc import Iterator

from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.snapshot import take_snapshot
from schedcheck.invariants.registry import CLOSE, QUALITY, STATEMENT, invariant
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.types import TaskStatus


def _close(a: dict[str, float], b: dict[str, float]) -> bool:
    for key in set(a) | set(b):
        x, y = a.get(key, 0.0), b.get(key, 0.0)
        if abs(x - y) > max(0.01, 1e-9 * abs(y)):
            return False
    return True


@invariant("statement.discard-restores", "Discard restores the exact prior state: ledgers, task placements and "
           "plugin accounting", "statement", "statement.go Discard (reverse order); seed 000 (Statement)", (STATEMENT,))
def discard_restores(ctx: CheckContext) -> Iterator[Violation]:
    if ctx.statement_kind != "discard" or ctx.before is None:
        return
    after = take_snapshot(ctx.ssn, {})
    before = ctx.before
    labels = ("Idle", "Used", "Releasing", "Pipelined")
    # unevict always restores Running, even for a Bound victim (statement.go): judged by its own rule.
    # Nested statements (preempt's per-node ones) may have unevicted within this one's window too.
    unevicted = {op.task_uid for op in ctx.ssn.operations if op.op == "unevict"}
    unevicted_keys = {op.task for op in ctx.ssn.operations if op.op == "unevict"}

    def same(key_or_uid: str, old: TaskStatus, new: TaskStatus, evicted: set[str]) -> bool:
        return old == new or (key_or_uid in evicted and old == TaskStatus.Bound and new == TaskStatus.Running)
    for name, ledgers in before.nodes.items():
        now = after.nodes.get(name)
        if now is None:
            continue
        for label, old, new in zip(labels, ledgers, now):
            if not _close(old, new):
                yield Violation("", f"node {name}: {label} is {new} after the discard, was {old} before the statement",
                                [f"node {name}"], old, new)
        old_tasks, new_tasks = before.node_tasks[name], after.node_tasks[name]
        if old_tasks.keys() != new_tasks.keys() or not all(
                same(k, old_tasks[k], new_tasks[k], unevicted_keys) for k in old_tasks):
            yield Violation("", f"node {name}: its tasks differ after the discard", [f"node {name}"],
                            {k: str(v) for k, v in before.node_tasks[name].items()},
                            {k: str(v) for k, v in after.node_tasks[name].items()})
    for uid, (status, node) in before.tasks.items():
        now = after.tasks.get(uid)
        if now is not None and (not same(uid, status, now[0], unevicted) or now[1] != node):
            yield Violation("", f"task {uid} is {now[0].name} on {now[1] or '-'} after the discard, was "
                                f"{status.name} on {node or '-'}", [f"task {uid}"],
                            f"{status.name}@{node or '-'}", f"{now[0].name}@{now[1] or '-'}")
    for plugin, digest in before.plugins.items():
        if after.plugins.get(plugin) != digest:
            yield Violation("", f"plugin {plugin}: its accounting differs after the discard",
                            [f"plugin {plugin}"], digest, after.plugins.get(plugin))


@invariant("statement.discard-no-trace", "after a discard every task of the statement is back where it was",
           "statement", "statement.go unallocate/unpipeline/unevict", (STATEMENT,))
def discard_no_trace(ctx: CheckContext) -> Iterator[Violation]:
    if ctx.statement_kind != "discard":
        return
    for record in ctx.statement_records:
        job = ctx.ssn.jobs.get(record.job)
        task = job.tasks.get(record.task_uid) if job is not None else None
        if task is None or record.from_status is None:
            continue
        expected = TaskStatus.Running if record.op == "evict" else record.from_status
        if task.status != expected:
            yield Violation("", f"task {record.task} is {task.status.name} after the discard of its {record.op}, "
                                f"expected {expected.name}", [f"task {record.task}"], expected.name, task.status.name)
        if record.op in ("allocate", "pipeline") and record.from_status == TaskStatus.Pending:
            node = ctx.ssn.nodes.get(record.node)
            if task.node_name or (node is not None and task.key in node.tasks):
                yield Violation("", f"task {record.task} still sits on node {record.node} after the discard of its "
                                    f"{record.op}", [f"task {record.task}", f"node {record.node}"], "no node",
                                task.node_name or record.node)


@invariant("statement.events-balanced", "each operation fires one allocate or deallocate event; a discard fires "
           "the opposite one, a commit none", "statement", "statement.go (event handlers); semantics §6.3",
           (STATEMENT,))
def events_balanced(ctx: CheckContext) -> Iterator[Violation]:
    if ctx.before is None:
        return
    events = ctx.session_state.get("events", {})
    for op in ctx.statement_ops:
        uid = op.task.uid
        allocs, deallocs = events.get(uid, (0, 0))
        before_allocs, before_deallocs = ctx.before.events.get(uid, (0, 0))
        net = (allocs - before_allocs) - (deallocs - before_deallocs)
        already_charged = any(r.task_uid == uid and r.op == "allocate" and r.from_status == TaskStatus.Pipelined
                              for r in ctx.statement_records)
        if ctx.statement_kind == "discard" or already_charged:
            expected = 0  # a discard undoes; a kept pipelined task allocated in place was charged already
        else:
            expected = -1 if op.name == "evict" else 1
        if net != expected:
            yield Violation("", f"task {op.task.key}: {op.name} then {ctx.statement_kind} left a net of {net} "
                                f"allocate events (allocate +1, deallocate -1), expected {expected}: plugin "
                                f"accounting drifts", [f"task {op.task.key}"], expected, net)


@invariant("statement.unevict-keeps-status", "discarding an eviction gives the victim back the status it had",
           "statement", "statement.go unevict (always Running); semantics §7", (STATEMENT,), severity=QUALITY)
def unevict_keeps_status(ctx: CheckContext) -> Iterator[Violation]:
    # Quality: upstream's unevict sets Running whatever the victim was, so a Bound victim of a
    # discarded preemption comes back Running (found by the gate, seed 1).
    if ctx.statement_kind != "discard":
        return
    for record in ctx.statement_records:
        if record.op != "evict" or record.from_status is None:
            continue
        job = ctx.ssn.jobs.get(record.job)
        task = job.tasks.get(record.task_uid) if job is not None else None
        if task is not None and task.status != record.from_status:
            yield Violation("", f"task {record.task} was {record.from_status.name} before its eviction was "
                                f"discarded and is {task.status.name} after", [f"task {record.task}"],
                            record.from_status.name, task.status.name)


@invariant("statement.evictions-reach-the-cache", "at session close the pods the cache evicted this session are "
           "exactly those the session evicted and did not take back (committed statements and shuffle's direct "
           "evictions; nothing from a discarded statement)", "statement",
           "statement.go Commit (cache.Evict per evict op), Discard (no cache call); session.go Evict; seed 000 "
           "(Statement)", (CLOSE,))
def evictions_reach_the_cache(ctx: CheckContext) -> Iterator[Violation]:
    net: dict[str, int] = {}
    for op in ctx.ssn.operations:
        if op.op == "evict":
            net[op.task] = net.get(op.task, 0) + 1
        elif op.op == "unevict":
            net[op.task] = net.get(op.task, 0) - 1
    session = {task for task, count in net.items() if count > 0}
    start = ctx.session_state.get("evictions_at_open", 0)
    cache = {record.task for record in ctx.ssn.cache.log.evictions[start:]}
    for task in sorted(session - cache):
        yield Violation("", f"{task} was evicted in the session and never taken back, but the cache did not evict "
                            f"it: a committed eviction was lost", [f"task {task}"], "evicted in the cache",
                        "not evicted")
    for task in sorted(cache - session):
        yield Violation("", f"the cache evicted {task}, which the session did not evict or took back (a discarded "
                            f"statement): an eviction leaked out of a statement", [f"task {task}"],
                        "not evicted", "evicted in the cache")

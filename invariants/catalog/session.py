"""Session isolation (volcano-semantics §0, §6.1; framework.go OpenSession/CloseSession)."""

from __future__ import annotations

from collections.abc import Iterator

from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.registry import CLOSE, invariant
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.types import TaskStatus


@invariant("session.cache-isolated", "the cache changes during a session only through committed binds and evictions",
           "session", "volcano-semantics §0 (only binds, evictions and status outlive a session)", (CLOSE,))
def cache_isolated(ctx: CheckContext) -> Iterator[Violation]:
    at_open = ctx.session_state.get("cache_at_open")
    if at_open is None:
        return
    log = ctx.ssn.cache.log
    bound = {r.task for r in log.binds[ctx.session_state.get("binds_at_open", 0):]}
    evicted = {r.task for r in log.evictions[ctx.session_state.get("evictions_at_open", 0):]}
    for job in ctx.ssn.cache.jobs.values():
        for uid, task in job.tasks.items():
            old = at_open.get(uid)
            if old is None or (task.status, task.node_name) == old:
                continue
            allowed = (task.status == TaskStatus.Binding and task.key in bound) or (
                task.status == TaskStatus.Releasing and task.key in evicted)
            if not allowed:
                yield Violation("", f"cache task {task.key} changed from {old[0].name} on {old[1] or '-'} to "
                                    f"{task.status.name} on {task.node_name or '-'} without a committed bind or "
                                    f"eviction", [f"task {task.key}"], f"{old[0].name}@{old[1] or '-'}",
                                f"{task.status.name}@{task.node_name or '-'}")

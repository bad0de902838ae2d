"""Session isolation (volcano-semantics §0, §6.1; framework.go OpenSession/CloseSession)."""

from __future__ import annotations

from collections.abc import Iterator

from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.registry import ACTION, CLOSE, collect_at_open, invariant
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


_SHARED = "objects_shared_with_cache"


def _shared_with_cache(ssn) -> list[str]:
    """Session objects that are the cache's own objects (by identity), as the session opened."""
    shared: list[str] = []
    cache = ssn.cache
    for name, node in ssn.nodes.items():
        cached = cache.nodes.get(name)
        if cached is None:
            continue
        if node is cached:
            shared.append(f"node {name}")
            continue
        for field in ("idle", "used", "releasing", "pipelined", "allocatable"):
            if getattr(node, field, None) is not None and getattr(node, field) is getattr(cached, field, None):
                shared.append(f"node {name} ({field})")
    for uid, job in ssn.jobs.items():
        cached = cache.jobs.get(uid)
        if cached is None:
            continue
        if job is cached or (job.pod_group is not None and job.pod_group is cached.pod_group):
            shared.append(f"job {uid}")
            continue
        for task_uid, task in job.tasks.items():
            cached_task = cached.tasks.get(task_uid)
            if cached_task is not None and (task is cached_task or task.pod is cached_task.pod):
                shared.append(f"task {task.key}")
    for name, queue in ssn.queues.items():
        if cache.queues.get(name) is queue:
            shared.append(f"queue {name}")
    return shared


collect_at_open(_SHARED, ("session.no-shared-objects",))(_shared_with_cache)


@invariant("session.no-shared-objects", "the session works on its own copies: no node, job, task, pod, PodGroup, "
           "queue or node ledger is the cache's object", "session",
           "volcano-semantics §0, §6.1 (OpenSession snapshots the cache); cache.go Snapshot (deep copies)", (ACTION,))
def no_shared_objects(ctx: CheckContext) -> Iterator[Violation]:
    shared = ctx.session_state.pop(_SHARED, None)  # judged once, at the first action's end
    if shared:
        yield Violation("", f"the session shares {len(shared)} object(s) with the cache ({', '.join(shared[:5])}"
                            f"{', ...' if len(shared) > 5 else ''}): whatever the session tries and discards "
                            f"reaches the cache", [s.split(' (')[0] for s in shared[:10]], 0, len(shared))

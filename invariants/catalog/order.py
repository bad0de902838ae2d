"""Order functions must be strict weak orders, or heaps and sorts misbehave (volcano-semantics §6.2, §8.0)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.registry import ACTION, invariant
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.types import TaskStatus

MAX_PAIRS_ITEMS = 60
MAX_TRIPLE_ITEMS = 16


def strict_weak_order_violations(items: Sequence[Any], less: Callable[[Any, Any], bool],
                                 label: Callable[[Any], str]) -> Iterator[tuple[str, list[str]]]:
    """Irreflexivity, asymmetry, transitivity, and transitivity of incomparability."""
    items = list(items)[:MAX_PAIRS_ITEMS]
    table = {(i, j): less(a, b) for i, a in enumerate(items) for j, b in enumerate(items)}
    for i, a in enumerate(items):
        if table[i, i]:
            yield f"{label(a)} < {label(a)}", [label(a)]
    for i, j in itertools.combinations(range(len(items)), 2):
        if table[i, j] and table[j, i]:
            yield f"{label(items[i])} < {label(items[j])} and the reverse", [label(items[i]), label(items[j])]
    n = min(len(items), MAX_TRIPLE_ITEMS)
    for i, j, k in itertools.permutations(range(n), 3):
        if table[i, j] and table[j, k] and not table[i, k]:
            yield (f"{label(items[i])} < {label(items[j])} < {label(items[k])} but not "
                   f"{label(items[i])} < {label(items[k])}", [label(items[x]) for x in (i, j, k)])
        inc_ij = not table[i, j] and not table[j, i]
        inc_jk = not table[j, k] and not table[k, j]
        if inc_ij and inc_jk and (table[i, k] or table[k, i]):
            yield (f"{label(items[i])} ~ {label(items[j])} ~ {label(items[k])} but {label(items[i])} and "
                   f"{label(items[k])} are ordered", [label(items[x]) for x in (i, j, k)])


def _report(kind: str, found: Iterator[tuple[str, list[str]]]) -> Iterator[Violation]:
    for message, objects in itertools.islice(found, 5):
        yield Violation("", f"{kind} order is not a strict weak order: {message}", objects)


@invariant("order.job", "the session's job order is a strict weak order on its jobs", "order",
           "session_plugins.go JobOrderFn; util/priority_queue.go", (ACTION,))
def job_order(ctx: CheckContext) -> Iterator[Violation]:
    jobs = sorted(ctx.ssn.jobs.values(), key=lambda j: j.uid)
    yield from _report("job", strict_weak_order_violations(jobs, ctx.ssn.job_order_fn, lambda j: f"job {j.uid}"))


@invariant("order.task", "the session's task order is a strict weak order on each job's pending tasks", "order",
           "session_plugins.go TaskOrderFn", (ACTION,))
def task_order(ctx: CheckContext) -> Iterator[Violation]:
    for job in sorted(ctx.ssn.jobs.values(), key=lambda j: j.uid):
        tasks = sorted(job.tasks_with_status(TaskStatus.Pending), key=lambda t: t.uid)
        if len(tasks) > 1:
            yield from _report("task", strict_weak_order_violations(tasks, ctx.ssn.task_order_fn,
                                                                     lambda t: f"task {t.key}"))


@invariant("order.queue", "the session's queue order is a strict weak order on the queues that have jobs", "order",
           "session_plugins.go QueueOrderFn", (ACTION,))
def queue_order(ctx: CheckContext) -> Iterator[Violation]:
    # Upstream only ever orders queues with jobs (proportion keeps attributes for those alone).
    with_jobs = {job.queue for job in ctx.ssn.jobs.values()}
    queues = sorted((q for q in ctx.ssn.queues.values() if q.uid in with_jobs), key=lambda q: q.uid)
    yield from _report("queue", strict_weak_order_violations(queues, ctx.ssn.queue_order_fn,
                                                              lambda q: f"queue {q.uid}"))

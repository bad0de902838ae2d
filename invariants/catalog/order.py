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
    rows = [[less(a, b) for b in items] for a in items]
    if _ranked(rows) or _holds(rows, min(len(items), MAX_TRIPLE_ITEMS)):
        return
    table = {(i, j): rows[i][j] for i in range(len(items)) for j in range(len(items))}
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


def _ranked(rows: list[list[bool]]) -> bool:
    """Whether i < j exactly when fewer items are below i than below j: then the relation is a strict weak
    order over every item (its classes ranked by how many items lie below them), and the checks below would find
    nothing. Cheaper than them where it holds; where it does not, they decide."""
    below = [sum(column) for column in zip(*rows)]  # for each item, how many items are below it
    return all(row == [mine < theirs for theirs in below] for row, mine in zip(rows, below))


def _holds(rows: list[list[bool]], n: int) -> bool:
    """Whether the enumeration below would find nothing: each property as bit masks over the comparison table,
    O(n^2) where the enumeration walks every triple. Pairs over every row; triples over the first n items, as
    the enumeration does."""
    size = len(rows)
    below = [sum(1 << j for j, smaller in enumerate(row) if smaller) for row in rows]  # i < j for each j bit
    for i in range(size):
        if below[i] >> i & 1 or below[i] & sum(1 << j for j in range(size) if below[j] >> i & 1):
            return False  # i < i, or i < j and j < i
    window = (1 << n) - 1
    above = [sum(1 << j for j in range(n) if below[j] >> i & 1) for i in range(n)]  # j < i for each j bit
    for i in range(n):
        others = window & ~(1 << i)
        for j in range(n):
            if below[i] >> j & 1 and below[j] & others & ~below[i] & ~(1 << j):
                return False  # i < j < k but not i < k
        incomparable = others & ~below[i] & ~above[i]
        for j in range(n):
            if incomparable >> j & 1:
                mate = window & ~(1 << j) & ~below[j] & ~above[j]  # what j is incomparable with
                if mate & ~(1 << i) & ~incomparable:
                    return False  # i ~ j ~ k but i and k ordered
    return True


def _report(kind: str, found: Iterator[tuple[str, list[str]]]) -> Iterator[Violation]:
    for message, objects in itertools.islice(found, 5):
        yield Violation("", f"{kind} order is not a strict weak order: {message}", objects)


@invariant("order.job", "the session's job order is a strict weak order on its jobs", "order",
           "session_plugins.go JobOrderFn; util/priority_queue.go", (ACTION,), state_only=True)
def job_order(ctx: CheckContext) -> Iterator[Violation]:
    jobs = sorted(ctx.ssn.jobs.values(), key=lambda j: j.uid)
    yield from _report("job", strict_weak_order_violations(jobs, ctx.ssn.job_order_fn, lambda j: f"job {j.uid}"))


@invariant("order.task", "the session's task order is a strict weak order on each job's pending tasks", "order",
           "session_plugins.go TaskOrderFn", (ACTION,), state_only=True)
def task_order(ctx: CheckContext) -> Iterator[Violation]:
    for job in sorted(ctx.ssn.jobs.values(), key=lambda j: j.uid):
        tasks = sorted(job.tasks_with_status(TaskStatus.Pending), key=lambda t: t.uid)
        if len(tasks) > 1:
            yield from _report("task", strict_weak_order_violations(tasks, ctx.ssn.task_order_fn,
                                                                     lambda t: f"task {t.key}"))


@invariant("order.queue", "the session's queue order is a strict weak order on the queues that have jobs", "order",
           "session_plugins.go QueueOrderFn", (ACTION,), state_only=True)
def queue_order(ctx: CheckContext) -> Iterator[Violation]:
    # Upstream only ever orders queues with jobs (proportion keeps attributes for those alone).
    with_jobs = {job.queue for job in ctx.ssn.jobs.values()}
    queues = sorted((q for q in ctx.ssn.queues.values() if q.uid in with_jobs), key=lambda q: q.uid)
    yield from _report("queue", strict_weak_order_violations(queues, ctx.ssn.queue_order_fn,
                                                              lambda q: f"queue {q.uid}"))


_ORDER_JUDGED = "priority_order_judged"


def _decides_first(ssn, point: str, plugin: str) -> bool:
    """Whether `plugin`'s comparator is the first one the session asks at `point` (so it decides every pair
    it does not find equal)."""
    flat = ssn._flat(point)
    own = ssn._fns.get(point, {}).get(plugin)
    return bool(flat) and own is not None and flat[0] is own


def _pairs_by(items: list, key: Callable[[Any], Any]) -> list[tuple[Any, Any]]:
    """Neighbours of different key after sorting by key, highest first (enough to test an order by key)."""
    ordered = sorted(items, key=key, reverse=True)
    return [(a, b) for a, b in zip(ordered, ordered[1:]) if key(a) != key(b)]


def _sign(value: float) -> int:
    return (value > 0) - (value < 0)


def _restated_job_orders(ssn) -> dict[str, Callable[[Any, Any], int]]:
    """Each known plugin's job order, written from its rule (negative: the left job goes first)."""
    drf = ssn.plugins.get("drf")
    orders: dict[str, Callable[[Any, Any], int]] = {
        "priority": lambda a, b: _sign(b.priority - a.priority),  # higher priority first
        "gang": lambda a, b: 0 if a.is_ready() == b.is_ready() else (1 if a.is_ready() else -1),  # not ready first
    }
    if drf is not None:
        attrs = drf.job_attrs
        orders["drf"] = lambda a, b: _sign(attrs[a.uid].share - attrs[b.uid].share)  # lower dominant share first
    return orders


def _job_order_restated(ssn) -> Iterator[Violation]:
    """Every pair of jobs, ordered by the session as the first plugin (in conf order) that tells them apart
    would order them; pairs that reach a plugin not restated here are left alone."""
    restated = _restated_job_orders(ssn)
    names = {id(fn): name for name, fn in ssn._fns.get("job_order", {}).items()}
    chain = [names.get(id(fn), "?") for fn in ssn._flat("job_order")]
    if not chain:
        return
    jobs = list(ssn.jobs.values())[:MAX_TRIPLE_ITEMS]
    for a, b in itertools.combinations(jobs, 2):
        want = 0
        for name in chain:
            order = restated.get(name)
            if order is None:
                break  # a plugin whose rule is not restated here decides from now on
            try:
                want = order(a, b)
            except KeyError:
                break
            if want:
                break
        if not want:
            continue
        found = _sign(ssn.job_order_compare_fn(a, b))
        if found != want:
            first, second = (a, b) if want < 0 else (b, a)
            yield Violation("", f"job {first.uid} should come before job {second.uid} (decided by {name}'s rule: "
                                f"priority {first.priority} vs {second.priority}, ready {first.is_ready()} vs "
                                f"{second.is_ready()}), but the session orders them the other way or as equal",
                            [f"job {first.uid}", f"job {second.uid}"], f"{first.uid} first", "not first")
            return


@invariant("order.priority-decides", "jobs are ordered as the first plugin that tells them apart rules (priority: "
           "higher first; gang: not ready first; drf: lower dominant share first); where priority's task order is "
           "asked first, a higher-priority task comes first; where proportion's queue order is asked first, a higher "
           "spec.priority queue comes first, then the lower share", "order",
           "priority.go, gang.go, drf.go JobOrderFn; priority.go TaskOrderFn; proportion.go QueueOrderFn; seed 003; "
           "volcano-semantics §10 (effective job order)", (ACTION,))
def priority_decides(ctx: CheckContext) -> Iterator[Violation]:
    ssn = ctx.ssn
    if ctx.session_state.get(_ORDER_JUDGED):
        return
    ctx.session_state[_ORDER_JUDGED] = True  # the comparators do not change within a session
    yield from _job_order_restated(ssn)
    if _decides_first(ssn, "task_order", "priority"):
        for job in ssn.jobs.values():
            pending = [t for t in job.tasks.values() if t.status == TaskStatus.Pending]
            wrong = next(((h, l) for h, l in _pairs_by(pending, lambda t: t.priority)
                          if ssn.task_compare_fns(h, l) >= 0), None)
            if wrong is not None:
                high, low = wrong
                yield Violation("", f"task {high.key} (priority {high.priority}) is not ordered before task "
                                    f"{low.key} (priority {low.priority}) of the same job",
                                [f"task {high.key}", f"task {low.key}"], f"{high.key} first", "not first")
                break
    plugin = ssn.plugins.get("proportion")
    if plugin is not None and _decides_first(ssn, "queue_order", "proportion"):
        queues = [ssn.queues[name] for name in plugin.queue_attrs if name in ssn.queues]
        for high, low in _pairs_by(queues, lambda q: q.priority):
            if ssn._first_nonzero("queue_order", high, low) >= 0:
                yield Violation("", f"queue {high.name} (priority {high.priority}) is not ordered before queue "
                                    f"{low.name} (priority {low.priority})", [f"queue {high.name}",
                                                                               f"queue {low.name}"],
                                f"{high.name} first", "not first")
                return
        shares = plugin.queue_attrs
        by_share = sorted(queues, key=lambda q: (q.priority, -shares[q.name].share), reverse=True)
        for a, b in zip(by_share, by_share[1:]):
            if a.priority == b.priority and shares[a.name].share < shares[b.name].share \
                    and ssn._first_nonzero("queue_order", a, b) >= 0:
                yield Violation("", f"queue {a.name} (share {shares[a.name].share:.3g}) is not ordered before queue "
                                    f"{b.name} (share {shares[b.name].share:.3g}) of the same priority",
                                [f"queue {a.name}", f"queue {b.name}"], f"{a.name} first", "not first")
                return

"""A binary heap that reproduces Go's container/heap exactly (pkg/scheduler/util/priority_queue.go).

Upstream's queues are Go heaps: items are ordered only when pushed or popped,
and equal items come out in heap-structure order. Tie behaviour matters for
fidelity, so push (append, sift up) and pop (swap root and last, sift down,
remove last) are reproduced step by step rather than using heapq.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T")


class PriorityQueue(Generic[T]):
    __slots__ = ("items", "less")

    def __init__(self, less: Callable[[T, T], bool], items: Iterable[T] = ()) -> None:
        self.less = less
        self.items: list[T] = []
        for item in items:
            self.push(item)

    def __len__(self) -> int:
        return len(self.items)

    def empty(self) -> bool:
        return not self.items

    def push(self, item: T) -> None:
        self.items.append(item)
        self._up(len(self.items) - 1)

    def pop(self) -> T | None:
        items = self.items
        if not items:
            return None
        n = len(items) - 1
        items[0], items[n] = items[n], items[0]
        self._down(0, n)
        return items.pop()

    def replace_with(self, other: PriorityQueue[T]) -> None:
        """Take the other queue's items (a worksheet inheriting a dry run's remains)."""
        self.items = list(other.items)

    def clone(self) -> PriorityQueue[T]:
        c = PriorityQueue.__new__(PriorityQueue)
        c.less = self.less
        c.items = list(self.items)
        return c

    def _up(self, j: int) -> None:
        items, less = self.items, self.less
        while j > 0:
            i = (j - 1) // 2
            if not less(items[j], items[i]):
                break
            items[i], items[j] = items[j], items[i]
            j = i

    def _down(self, i: int, n: int) -> None:
        items, less = self.items, self.less
        while True:
            j1 = 2 * i + 1
            if j1 >= n:
                break
            j = j1
            j2 = j1 + 1
            if j2 < n and less(items[j2], items[j1]):
                j = j2
            if not less(items[j], items[i]):
                break
            items[i], items[j] = items[j], items[i]
            i = j

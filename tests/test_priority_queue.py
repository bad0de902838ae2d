"""The Go-heap replica: ordering and Go's exact tie behaviour."""

import heapq
import random

from schedcheck.reference.util.priority_queue import PriorityQueue


def test_pops_in_order():
    rng = random.Random(3)
    values = [rng.randrange(100) for _ in range(200)]
    q = PriorityQueue(lambda a, b: a < b, values)
    assert [q.pop() for _ in range(len(values))] == sorted(values)
    assert q.pop() is None and q.empty()


def _drain(keys: list[int]) -> str:
    q = PriorityQueue(lambda a, b: a[0] < b[0])
    for index, key in enumerate(keys):
        q.push((key, str(index)))
    return "".join(q.pop()[1] for _ in keys)


def test_ties_come_out_in_go_heap_order_not_insertion_order():
    # Expected strings were produced by Go's container/heap with the same pushes
    # (go1.26, a Less on the key only): ties leave in heap-structure order.
    assert _drain([0, 0, 0, 0, 0]) == "04321"
    assert _drain([3, 1, 3, 2, 1, 3, 2, 1]) == "14736025"


def test_matches_heapq_on_distinct_keys():
    rng = random.Random(7)
    values = rng.sample(range(1000), 300)
    q = PriorityQueue(lambda a, b: a < b)
    h: list[int] = []
    for v in values:
        q.push(v)
        heapq.heappush(h, v)
    assert [q.pop() for _ in values] == [heapq.heappop(h) for _ in values]

"""The strict-weak-order check's fast paths: the bit masks say "nothing to report" exactly when the enumeration of
pairs and triples finds nothing, and the ranking check passes every strict weak order and nothing the enumeration
would report (both only skip that enumeration)."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from schedcheck.invariants.catalog.order import MAX_TRIPLE_ITEMS, _holds, _ranked, strict_weak_order_violations


def _enumerated(rows: list[list[bool]]) -> list:
    """The enumeration alone: a fast path that never answers."""
    import schedcheck.invariants.catalog.order as order

    originals = order._holds, order._ranked
    order._holds, order._ranked = (lambda rows, n: False), (lambda rows: False)
    try:
        return list(strict_weak_order_violations(range(len(rows)), lambda a, b: rows[a][b], str))
    finally:
        order._holds, order._ranked = originals


relations = st.integers(1, 20).flatmap(lambda n: st.lists(st.lists(st.booleans(), min_size=n, max_size=n),
                                                          min_size=n, max_size=n))


def _by_rank(ranks: list[int]) -> list[list[bool]]:
    return [[a < b for b in ranks] for a in ranks]


@settings(max_examples=400, deadline=None)
@given(relations)
def test_fast_path_agrees_with_the_enumeration_on_any_relation(rows):
    assert _holds(rows, min(len(rows), MAX_TRIPLE_ITEMS)) == (not _enumerated(rows))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=20), st.data())
def test_fast_path_agrees_near_strict_weak_orders(ranks, data):
    rows = _by_rank(ranks)  # a strict weak order: ties are the incomparable classes
    flips = data.draw(st.lists(st.tuples(st.integers(0, len(ranks) - 1), st.integers(0, len(ranks) - 1)),
                               max_size=2))
    for i, j in flips:  # one or two flipped comparisons: usually no longer a strict weak order
        rows[i][j] = not rows[i][j]
    assert _holds(rows, min(len(rows), MAX_TRIPLE_ITEMS)) == (not _enumerated(rows))
    if _ranked(rows):  # (a flip back and forth, or none)
        assert not _enumerated(rows)


def test_a_strict_weak_order_passes_and_a_cycle_is_reported():
    assert _holds(_by_rank([2, 0, 1, 1, 3]), 5) and _ranked(_by_rank([2, 0, 1, 1, 3]))
    cycle = [[False, True, False], [False, False, True], [True, False, False]]  # 0 < 1 < 2 < 0
    assert not _holds(cycle, 3) and not _ranked(cycle)
    assert list(strict_weak_order_violations(range(3), lambda a, b: cycle[a][b], str))


@settings(max_examples=400, deadline=None)
@given(relations)
def test_the_ranking_check_passes_only_what_the_enumeration_passes(rows):
    if _ranked(rows):
        assert not _enumerated(rows)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=60))
def test_the_ranking_check_passes_every_strict_weak_order(ranks):
    assert _ranked(_by_rank(ranks))

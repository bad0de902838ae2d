"""Lists: cel-go's lists extension at version 3 (slice, flatten, lists.range, reverse, distinct, sort, sortBy's
@sortByAssociatedKeys; first and last come with the optional library), Kubernetes' list library (isSorted,
sum, min, max, indexOf, lastIndexOf) and cel-go's sets extension (sets.contains, equivalent, intersects).
"""

from __future__ import annotations

from typing import Any

from schedcheck.reference.util.cel.libs.std import add, compare, contains
from schedcheck.reference.util.cel.registry import overload, singleton
from schedcheck.reference.util.cel.values import (COMPARER, Err, Optional, UInt, equal, go_value, has_trait,
                                                  no_such_overload, type_name)
from schedcheck.reference.util.go_sort import go_sort_slice

COMPARABLE = ("int", "uint", "double", "bool", "google.protobuf.Duration", "google.protobuf.Timestamp", "string",
              "bytes")


@overload("list_slice", varargs=True)
def slice_(items: list[Any], start: int, end: int) -> Any:
    if start < 0 or end < 0:
        return Err(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        return Err(f"cannot slice({start}, {end}), start index must be less than or equal to end index")
    if len(items) < end:
        return Err(f"cannot slice({start}, {end}), list is length {len(items)}")
    return items[start:end]


def _flatten(items: list[Any], depth: int) -> Any:
    if depth < 0:
        return Err("level must be non-negative")
    out: list[Any] = []
    for item in items:
        if isinstance(item, list) and depth > 0:
            out += _flatten(item, depth - 1)
        else:
            out.append(item)
    return out


@overload("list_flatten", unguarded=True)
def flatten(items: Any) -> Any:
    if not isinstance(items, list):
        return items if isinstance(items, Err) else Err(f"no such overload: {type_name(items)}.flatten()")
    return _flatten(items, 1)


@overload("list_flatten_int", unguarded=True)
def flatten_depth(items: Any, depth: Any) -> Any:
    if not isinstance(items, list) or isinstance(depth, bool) or not isinstance(depth, int) or isinstance(depth, UInt):
        return items if isinstance(items, Err) else \
            Err(f"no such overload: {type_name(items)}.flatten({type_name(depth)})")
    return _flatten(items, depth)


overload("lists_range")(lambda n: list(range(n)))
overload("list_reverse")(lambda items: items[::-1])


@overload("list_distinct")
def distinct(items: list[Any]) -> Any:
    out: list[Any] = []
    for item in items:
        if not any(equal(item, seen) is True for seen in out):
            out.append(item)
    return out


def sort_by_keys(items: list[Any], keys: list[Any]) -> Any:
    if len(items) != len(keys):
        return Err(f"@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but "
                   f"got {len(items)} and {len(keys)} elements respectively")
    if not items:
        return items
    first = keys[0]
    if not has_trait(first, COMPARER):
        return Err("list elements must be comparable")
    problem: list[Err] = []
    order = list(range(len(items)))

    def less(i: int, j: int) -> bool:
        if type_name(keys[i]) != type_name(first) or type_name(keys[j]) != type_name(first):
            problem.append(Err("list elements must have the same type"))
            return False
        return compare(keys[i], keys[j]) == -1
    go_sort_slice(order, less)
    return problem[0] if problem else [items[i] for i in order]


singleton("sort", "lister")(lambda items: sort_by_keys(items, items) if isinstance(items, list) else
                            no_such_overload(items))
singleton("@sortByAssociatedKeys", "lister")(sort_by_keys)
overload("list_first")(lambda items: Optional(True, items[0]) if items else Optional(False))
overload("list_last")(lambda items: Optional(True, items[-1]) if items else Optional(False))


# -- Kubernetes' list library ------------------------------------------------------------------------------------
def is_sorted(items: Any) -> Any:
    previous = None
    for item in items:
        if not has_trait(item, COMPARER):
            return no_such_overload(item)
        if previous is not None and compare(previous, item) == 1:
            return False
        previous = item
    return True


def _sum(zero: Any) -> Any:
    def total(items: Any) -> Any:
        acc = zero
        for item in items:
            if not has_trait(item, "adder"):
                return no_such_overload(item)
            acc = add(acc, item)
            if not has_trait(acc, "adder"):
                return no_such_overload(acc)
        return acc
    return total


def _extreme(name: str, prefer: int) -> Any:
    def pick(items: Any) -> Any:
        best = None
        for item in items:
            if not has_trait(item, COMPARER):
                return no_such_overload(item)
            if best is None:
                best = item
            elif compare(best, item) == prefer:
                best = item
        return Err(f"{name} called on empty list") if best is None else best
    return pick


_ZERO = {"int": 0, "uint": UInt(0), "double": 0.0}
for _t in COMPARABLE:
    _short = {"google.protobuf.Duration": "duration", "google.protobuf.Timestamp": "timestamp"}.get(_t, _t)
    overload(f"list_{_short}_is_sorted_bool")(is_sorted)
    overload(f"list_{_short}_max_{_short}")(_extreme("max", -1))
    overload(f"list_{_short}_min_{_short}")(_extreme("min", 1))
for _short, _zero in _ZERO.items():
    overload(f"list_{_short}_sum_{_short}")(_sum(_zero))


def _duration_zero() -> Any:
    from schedcheck.reference.util.cel.values import Duration
    return Duration(0)


overload("list_duration_sum_duration")(_sum(_duration_zero()))


@overload("list_a_index_of_int")
def index_of(items: list[Any], item: Any) -> int:
    for i, value in enumerate(items):
        if equal(value, item) is True:
            return i
    return -1


@overload("list_a_last_index_of_int")
def last_index_of(items: list[Any], item: Any) -> int:
    for i in range(len(items) - 1, -1, -1):
        if equal(items[i], item) is True:
            return i
    return -1


# -- sets ----------------------------------------------------------------------------------------------------------
def sets_contains(items: list[Any], sub: list[Any]) -> Any:
    for item in sub:
        found = contains(item, items)
        if found is not True:
            return found
    return True


overload("list_sets_contains_list")(sets_contains)
overload("list_sets_equivalent_list")(lambda a, b: sets_contains(a, b) if sets_contains(a, b) is not True
                                      else sets_contains(b, a))
overload("list_sets_intersects_list")(lambda a, b: any(contains(x, b) is True for x in a))


@overload("optional_unwrap", "optional_unwrapOpt")
def unwrap(items: list[Any]) -> Any:
    out = []
    for item in items:
        if not isinstance(item, Optional):
            return Err(f"value {go_value(item)} is not optional")
        if item.present:
            out.append(item.value)
    return out


# -- the two-variable comprehensions' map accumulator (cel.@mapInsert) ----------------------------------------------
def _insert(target: Any, key: Any, value: Any) -> Any:
    from schedcheck.reference.util.cel.evaluator import MutableMap
    if isinstance(target, MutableMap):
        return target.insert(key, value)
    if target.has_key(key):
        return Err(f"insert failed: key {go_value(key)} already exists")
    return target.with_item(key, value)


@overload("@mapInsert_map_key_value", varargs=True)
def map_insert(target: Any, key: Any, value: Any) -> Any:
    return _insert(target, key, value)


@overload("@mapInsert_map_map")
def map_insert_all(target: Any, update: Any) -> Any:
    for key, value in update.items():
        target = _insert(target, key, value)
        if isinstance(target, Err):
            return target
    return target

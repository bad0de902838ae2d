"""What one call costs at run time, as cel-go's cost tracker counts it in Kubernetes' environment.

In order: an overload's own tracker (the lists and sets extensions), then Kubernetes' CallCost (by function
name: its libraries, and `==` on its types), then cel-go's default (a traversal of the string or bytes for the
O(n) string functions, the smaller operand for comparisons, the list for `in`, and one for everything else).
A tracker that asserts a type panics on an error argument as its Go code does (GoPanic).
"""

from __future__ import annotations

import math
from typing import Any, Callable

from schedcheck.reference.util.cel.values import (CIDR, IP, URL, CelMap, CelQuantity, Err, GoPanic, NamedFormat,
                                                  Semver, actual_size)

STRING_FACTOR = 0.1
REGEX_FACTOR = 0.25
COMPARABLE = ("int", "uint", "double", "bool", "google.protobuf.Duration", "google.protobuf.Timestamp", "string",
              "bytes")


def _sizer(value: Any) -> int:
    """The extensions' and Kubernetes' actualSize: a Sizer's size, else 1 (an optional is not unwrapped)."""
    if isinstance(value, (str, bytes, list, CelMap, IP, CIDR)):
        return actual_size(value)
    return 1


def _lister(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise GoPanic(f"interface conversion: {_go_iface(value)} is not traits.Lister: missing method Add")
    return value


def _go_iface(value: Any) -> str:
    from schedcheck.reference.util.cel.values import go_type
    return go_type(value)


def _self_compare(items: Any) -> int:
    items = _lister(items)
    factor = 2.0
    if items and type(items[0]) in (str, bytes):
        factor += STRING_FACTOR
    return int(len(items) * len(items) * factor) + 1 + 10 if items else 1 + 10


def _flatten(args: list[Any], _result: Any) -> int:
    depth = 1.0
    if len(args) == 2:
        if not isinstance(args[1], int):
            raise GoPanic(f"interface conversion: ref.Val is {_go_iface(args[1])}, not types.Int")
        depth = float(args[1])
    return int(_sizer(args[0]) * depth) + 1 + 10


def _output_size(_args: list[Any], result: Any) -> int:
    return int(_sizer(result) * 1.0) + 1 + 10


def _sets(factor: float) -> Callable[[list[Any], Any], int]:
    return lambda args, _result: 1 + int(_sizer(args[0]) * _sizer(args[1]) * factor)


OVERLOAD_TRACKERS: dict[str, Callable[[list[Any], Any], int]] = {
    "list_slice": _output_size, "lists_range": _output_size, "list_reverse": _output_size,
    "list_flatten": _flatten, "list_flatten_int": _flatten,
    "list_distinct": lambda args, _r: _self_compare(args[0]),
    "list_sets_contains_list": _sets(1), "list_sets_intersects_list": _sets(1),
    "list_sets_equivalent_list": _sets(2),
}
for _t in COMPARABLE:
    OVERLOAD_TRACKERS[f"list_{_t}_sort"] = lambda args, _r: _self_compare(args[0])
    OVERLOAD_TRACKERS[f"list_{_t}_sortByAssociatedKeys"] = lambda args, _r: _self_compare(args[1])


def _ceil(value: float) -> int:
    return math.ceil(value)


def _traversal(value: Any) -> int:
    """Kubernetes' traversalCost: a tenth of a string's or bytes' length in bytes (rounded down), the sum over
    a list's items or a map's keys and values, else 1."""
    if isinstance(value, str):
        return int(len(value.encode("utf-8")) * STRING_FACTOR)
    if isinstance(value, bytes):
        return int(len(value) * STRING_FACTOR)
    if isinstance(value, list):
        return sum(_traversal(v) for v in value)
    if isinstance(value, CelMap):
        return sum(_traversal(k) + _traversal(v) for k, v in value.items())
    return 1


_ONE = {"sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add",
        "sub", "major", "minor", "patch", "getScheme", "getHostname", "getHost", "getPort", "getEscapedPath",
        "getQuery", "format.named", "masked", "prefixLength", "family", "isUnspecified", "isLoopback",
        "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast", "serviceAccount", "path", "group",
        "resource", "subresource", "namespace", "name", "allowed", "reason", "error", "errored"}
_ONE_PASS = {"url", "lowerAscii", "upperAscii", "substring", "trim", "cidr", "isIP", "isCIDR", "quantity",
             "isQuantity", "semver", "isSemver"}


def _kubernetes(function: str, overload: str, args: list[Any], result: Any) -> int | None:
    """Kubernetes' library.CostEstimator.CallCost."""
    if function == "check":
        return 350000
    if function in _ONE:
        return 1
    if function in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf"):
        return _traversal(args[0]) if args else 0
    if function in _ONE_PASS and args:
        return _ceil(_sizer(args[0]) * STRING_FACTOR)
    if function == "ip" and args:
        return 1 if overload == "cidr_ip" else _ceil(_sizer(args[0]) * STRING_FACTOR)
    if function in ("replace", "split") and args:
        return _ceil(_sizer(args[0]) * 2 * STRING_FACTOR)
    if function == "join" and args:
        return _ceil(_sizer(result) * 2 * STRING_FACTOR)
    if function in ("find", "findAll") and len(args) >= 2:
        return _ceil((1.0 + _sizer(args[0])) * STRING_FACTOR) * _ceil(_sizer(args[1]) * REGEX_FACTOR)
    if function == "ip.isCanonical" and args:
        return _ceil(_sizer(args[0]) * 2 * STRING_FACTOR)
    if function in ("containsIP", "containsCIDR") and len(args) >= 2:
        cidr, other = _sizer(args[0]), _sizer(args[1])
        cost = _ceil((cidr + cidr) * STRING_FACTOR)
        if function == "containsCIDR":
            cost += _ceil(cidr * STRING_FACTOR) + 1
        if overload in ("cidr_contains_ip_string", "cidr_contains_cidr_string"):
            cost += _ceil(other * STRING_FACTOR)
        return cost
    if function == "validate" and len(args) >= 2 and isinstance(args[0], NamedFormat):
        return _ceil((1.0 + _sizer(args[1])) * STRING_FACTOR) * _ceil(args[0].max_regex_size * REGEX_FACTOR)
    if function == "_==_" and len(args) == 2:
        if isinstance(args[0], (CelQuantity, IP, CIDR, NamedFormat, URL, Semver)):
            return 1
    return None


_SCAN_FIRST = {"starts_with_string", "ends_with_string", "string_to_bytes", "bytes_to_string", "strings_quote",
               "string_format"}
_SMALLER = {f"{op}_{t}" for op in ("less", "greater", "less_equals", "greater_equals") for t in ("string", "bytes")}
_SMALLER |= {"equals", "not_equals"}


def call_cost(function: str, overload: str, args: list[Any], result: Any) -> int:
    """CostTracker.costCall."""
    tracker = OVERLOAD_TRACKERS.get(overload)
    if tracker is not None:
        return tracker(args, result)
    cost = _kubernetes(function, overload, args, result)
    if cost is not None:
        return cost
    if overload in _SCAN_FIRST:
        return _ceil(actual_size(args[0]) * STRING_FACTOR)
    if overload == "in_list":
        return actual_size(args[1])
    if overload in _SMALLER:
        return _ceil(min(actual_size(args[0]), actual_size(args[1])) * STRING_FACTOR)
    if overload in ("add_string", "add_bytes"):
        return _ceil((actual_size(args[0]) + actual_size(args[1])) * STRING_FACTOR)
    if overload == "matches_string":
        return _ceil((1.0 + actual_size(args[0])) * STRING_FACTOR) * _ceil(actual_size(args[1]) * REGEX_FACTOR)
    if overload == "contains_string":
        return _ceil(actual_size(args[0]) * STRING_FACTOR) * _ceil(actual_size(args[1]) * STRING_FACTOR)
    return 1


def is_error(value: Any) -> bool:
    return isinstance(value, Err)

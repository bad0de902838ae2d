"""The estimated cost of one call (cel-go's coster.functionCost): the lists and sets extensions' own estimators
first, then the DRA compiler's and Kubernetes' library estimator (by function name), then cel-go's built-in
rules (string traversals, comparisons, `in`, `&&`/`||`, `?:`, concatenation), else one unit; the arguments'
costs are added to all but the logical operators and the conditional.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from schedcheck.reference.util.cel.nodes import Lit
from schedcheck.reference.util.cel.cost_sizes import (MAX, Node, Range, add, device_size, entry_union, mul, mul_factor,
                                                      union)
from schedcheck.reference.util.cel.values import UInt

if TYPE_CHECKING:
    from schedcheck.reference.util.cel.cost import Coster

STRING, REGEX = 0.1, 0.25
ONE: Range = (1, 1)
UNKNOWN: Range = (0, MAX)
Estimate = tuple[Range, Range | None]
_WRAP = 2**64


def _size(node: Node) -> Range:
    """sizeEstimate / estimateSize: the computed size, else the DRA size estimator's, else unknown."""
    if node.size is not None:
        return node.size
    found = device_size(node.path)
    return found if found is not None else UNKNOWN


def _int_literal(node: Node, default: int) -> int:
    expr = node.expr
    if isinstance(expr, Lit) and isinstance(expr.value, int) and not isinstance(expr.value, (bool, UInt)):
        return 0 if expr.value < 0 else expr.value
    return default


def _list_call(factor: float, size: Range, allocates: bool = True) -> Estimate:
    cost = add(mul_factor(size, factor), ONE)
    if allocates:
        cost = add(cost, (10, 10))
    return cost, size


def _extension(overload: str, target: Node | None, args: list[Node]) -> Estimate | None:
    """The OverloadCostEstimate options of the lists (v3) and sets extensions."""
    if overload == "list_slice" and target is not None and len(args) == 2:
        size = _size(target)
        start, end = _int_literal(args[0], 0), _int_literal(args[1], size[1])
        width = (end - start) % _WRAP
        return _list_call(1, (width, width))
    if overload == "lists_range" and target is None and len(args) == 1:
        n = _int_literal(args[0], MAX)
        return _list_call(1, (n, n))
    if overload == "list_reverse" and target is not None and not args:
        return _list_call(1, _size(target))
    if overload in ("list_flatten", "list_flatten_int") and target is not None and len(args) <= 1:
        depth = _int_literal(args[0], MAX) if args else 1
        return _list_call(float(depth), _size(target))
    if overload == "list_distinct" and target is not None and not args:
        size = _size(target)
        return _list_call(2.0, mul(size, size))
    if overload.endswith("_sort") and overload.startswith("list_") and target is not None and not args:
        return _sort(_size(target), overload[5:-5])
    if overload.endswith("_sortByAssociatedKeys") and target is not None and len(args) == 1:
        return _sort(_size(args[0]), overload[5:-len("_sortByAssociatedKeys")])
    if overload in ("list_sets_contains_list", "list_sets_intersects_list", "list_sets_equivalent_list") \
            and len(args) == 2:
        factor = 2.0 if overload == "list_sets_equivalent_list" else 1.0
        return add(mul_factor(mul(_size(args[0]), _size(args[1])), factor), ONE), None
    return None


def _sort(size: Range, element: str) -> Estimate:
    factor = 2.0 + (STRING if element in ("string", "bytes") else 0.0)
    return _list_call(factor, mul(size, size))


def _go_f2u(value: float) -> int:
    """Go's uint64(f) on amd64, out-of-range values included."""
    if value < 2.0**63:
        return int(value)
    rest = value - 2.0**63
    return 0 if rest >= 2.0**63 else int(rest) ^ (1 << 63)


def _element(node: Node) -> Node | None:
    """listElementNode: the list's items as a node (their path below the list's)."""
    if not node.type.params:
        return None
    path = node.path + ["@items"] if node.path is not None else None
    return Node(path, node.type.params[0], None, None)


def _kubernetes(function: str, overload: str, target: Node | None, args: list[Node]) -> Estimate | None:
    """Kubernetes' library.CostEstimator.EstimateCallCost (and the DRA compiler's for `includes`)."""
    if function == "includes" and overload == "dra_includes_dyn_dyn" and target is not None:
        return (0, 48), None
    if function == "check":
        return (350000, 350000), None
    if function in ("serviceAccount", "path", "group", "resource", "subresource", "namespace", "name", "allowed",
                    "reason", "error", "errored", "masked", "prefixLength", "family", "isUnspecified", "isLoopback",
                    "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast", "format.named", "sign",
                    "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add",
                    "sub", "major", "minor", "patch", "getScheme", "getHostname", "getHost", "getPort",
                    "getEscapedPath", "getQuery"):
        return ONE, None
    if function in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf") and target is not None:
        element = _element(target)
        if element is None:
            return mul_factor(_size(target), STRING), None
        cost = ONE
        if element.type.kind in ("string", "bytes"):
            cost = add(cost, mul_factor(_size(element), STRING))
        return mul(_size(target), cost), None
    if function == "url" and len(args) == 1:
        size = _size(args[0])
        return mul_factor(size, STRING), size
    if function in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
        size = _size(target)
        return mul_factor(size, STRING), size
    if function == "replace" and target is not None and len(args) >= 2:
        return _replace(_size(target), _size(args[0]), _size(args[1]))
    if function == "split" and target is not None:
        size = _size(target)
        most = size[1]
        if len(args) > 1 and isinstance(args[1].expr, Lit) and type(args[1].expr.value) is int:
            most = args[1].expr.value % _WRAP
        return mul_factor(size, 2 * STRING), (0, most)
    if function == "join" and target is not None:
        return _join(target, args)
    if function in ("find", "findAll") and target is not None and args:
        size = _size(target)
        cost = mul(mul_factor(add(size, ONE), STRING), mul_factor(_size(args[0]), REGEX))
        return cost, (0, size[1])
    if function in ("cidr", "isIP", "isCIDR", "quantity", "isQuantity", "semver", "isSemver") and args:
        return mul_factor(_size(args[0]), STRING), None
    if function == "ip":
        if overload == "cidr_ip":
            return ONE, None
        if args:
            return mul_factor(_size(args[0]), STRING), None
    if function == "ip.isCanonical" and args:
        return mul_factor(_size(args[0]), 2 * STRING), None
    if function in ("containsIP", "containsCIDR") and args:
        width = (4, 16)
        cost = mul_factor(add(width, width), STRING)
        if function == "containsCIDR":
            cost = add(add(cost, mul_factor(width, STRING)), ONE)
        if overload in ("cidr_contains_ip_string", "cidr_contains_cidr_string"):
            cost = add(cost, mul_factor(_size(args[0]), STRING))
        return cost, None
    if function == "validate" and args:
        return mul_factor(mul_factor(_size(args[0]), STRING), 128 * REGEX), None
    if function == "_==_" and len(args) == 2:
        return _k8s_equality(args[0], args[1])
    return None


def _replace(size: Range, old: Range, new: Range) -> Estimate:
    count_min = count_max = retained_min = retained_max = 0
    if old[0] == 0:
        count_max, retained_max = (size[1] + 1 if size[1] < MAX else size[1]), size[1]
    elif new[1] <= old[0]:
        count_max, retained_max = 0, size[1]
    else:
        count_max = _go_f2u(math.ceil(float(size[1]) / float(old[0])))
    if old[1] == 0:
        count_min, retained_min = (size[0] + 1 if size[0] < MAX else size[0]), size[0]
    elif old[1] <= new[0]:
        count_min, retained_min = 0, size[0]
    else:
        count_min = _go_f2u(math.ceil(float(size[0]) / float(old[1])))
    result = add(mul((count_min, count_max), new), (retained_min, retained_max))
    return mul_factor(size, 2 * STRING), result


def _join(target: Node, args: list[Node]) -> Estimate:
    size: Range = (0, 0)
    count = _size(target)
    element = _element(target)
    if element is not None:
        size = mul(count, _size(element))
    if args:
        separators = (count[0] - 1 if count[0] > 0 else 0, count[1] - 1 if count[1] > 0 else 0)
        size = add(size, mul(_size(args[0]), separators))
    return mul_factor(size, STRING), size


def _k8s_equality(lhs: Node, rhs: Node) -> Estimate | None:
    if lhs.type.name != rhs.type.name:
        return None
    t = lhs.type
    if t.kind == "opaque" and t.name in ("net.IP", "net.CIDR"):
        return ONE, None
    if t.kind == "struct":
        if t.name in ("kubernetes.Quantity", "kubernetes.Semver", "kubernetes.authorization.Authorizer",
                      "kubernetes.authorization.PathCheck", "kubernetes.authorization.GroupCheck",
                      "kubernetes.authorization.ResourceCheck", "kubernetes.authorization.Decision"):
            return ONE, None
        if t.name == "kubernetes.NamedFormat":
            return mul_factor((1, 64), STRING), None
        if t.name == "kubernetes.URL":
            size = ONE
            if rhs.size is not None:
                size = union(rhs.size, rhs.size)
            return mul_factor((1, size[1]), STRING), None
    return None


def _sum(costs: list[Range]) -> Range:
    total = (0, 0)
    for cost in costs:
        total = add(total, cost)
    return total


def call_estimate(coster: Coster, e: Any, overload: str, target: Node | None, args: list[Node],
                  arg_costs: list[Range]) -> Estimate:
    """functionCost for one of the call's overloads: (its cost with the arguments', its result size)."""
    arg_sum = _sum(arg_costs)
    found = _extension(overload, target, args)
    if found is None:
        found = _kubernetes(e.function, overload, target, args)
    if found is not None:
        return add(found[0], arg_sum), found[1]
    size_of = coster.size_or_unknown
    if overload == "string_format" and target is not None:
        return add(mul_factor(size_of(target), STRING), arg_sum), None
    if overload in ("string_to_bytes", "bytes_to_string", "strings_quote") and len(args) == 1:
        size = size_of(args[0])
        result = {"string_to_bytes": (size[0], (size[1] * 4) % _WRAP), "bytes_to_string": (size[0] // 4, size[1]),
                  "strings_quote": ((size[0] + 2) % _WRAP, (size[1] * 2 + 2) % _WRAP)}[overload]
        return add(mul_factor(size, STRING), arg_sum), result
    if overload in ("starts_with_string", "ends_with_string") and len(args) == 1:
        return add(mul_factor(size_of(args[0]), STRING), arg_sum), None
    if overload == "in_list" and len(args) == 2:
        return add(mul_factor(size_of(args[1]), 1), arg_sum), None
    if overload == "matches_string" and target is not None and len(args) == 1:
        text = mul_factor(add(size_of(target), ONE), STRING)
        return add(mul(text, mul_factor(size_of(args[0]), REGEX)), arg_sum), None
    if overload == "contains_string" and target is not None and len(args) == 1:
        return add(mul(mul_factor(size_of(target), STRING), mul_factor(size_of(args[0]), STRING)), arg_sum), None
    if overload in ("logical_or", "logical_and"):
        lhs, rhs = arg_costs
        return (lhs[0], add(lhs, rhs)[1]), None
    if overload == "conditional":
        size = union(size_of(args[1]), size_of(args[2]))
        entry = entry_union(coster.entry(args[1].expr), coster.entry(args[2].expr))
        if entry is not None:
            coster.entries[e.id] = entry
        return add(arg_costs[0], union(arg_costs[1], arg_costs[2])), size
    if overload in ("add_string", "add_bytes", "add_list") and len(args) == 2:
        result = add(size_of(args[0]), size_of(args[1]))
        entry = entry_union(coster.entry(args[0].expr), coster.entry(args[1].expr))
        if entry is not None:
            coster.entries[e.id] = entry
        if overload == "add_list":
            return add(ONE, arg_sum), result
        return add(mul_factor(result, STRING), arg_sum), result
    if overload in _SMALLER and len(args) == 2:
        smallest = min(size_of(args[0])[1], size_of(args[1])[1])
        return add(mul_factor((1 if smallest > 0 else 0, smallest), STRING), arg_sum), None
    return add(ONE, arg_sum), None


_SMALLER = {f"{op}_{t}" for op in ("less", "greater", "less_equals", "greater_equals") for t in ("string", "bytes")}
_SMALLER |= {"equals", "not_equals"}

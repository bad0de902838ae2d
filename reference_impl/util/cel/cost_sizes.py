"""Saturating cost and size ranges, and the DRA compiler's size estimator (what a path into `device` may hold at
most, from resource.k8s.io/v1's limits)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

MAX = 2**64 - 1
Range = tuple[int, int]

# resource.k8s.io/v1 limits (DriverNameMaxLength, DeviceMaxDomainLength, DeviceMaxIDLength,
# DeviceAttributeMaxValueLength, ResourceSliceMaxAttributesAndCapacitiesPerDevice)
_DRIVER, _DOMAIN, _ID, _VALUE, _PER_DEVICE = 63, 63, 32, 64, 32
# The declared type of `device`: a node is (max elements, fields, key node, element node); "attribute" marks the
# attribute value type, which any unknown name under an attribute map resolves to.
_ATTRIBUTE = ("attribute", _VALUE)
_QUANTITY = ("quantity", 0)
_STRING_DOMAIN, _STRING_ID = ("domain", _DOMAIN), ("id", _ID)
_INNER_ATTRIBUTES = ("map", _PER_DEVICE, _STRING_ID, _ATTRIBUTE)
_INNER_CAPACITY = ("map", _PER_DEVICE, _STRING_ID, _QUANTITY)
_FIELDS = {"driver": ("driver", _DRIVER), "allowMultipleAllocations": ("bool", 1),
           "attributes": ("map", _PER_DEVICE, _STRING_DOMAIN, _INNER_ATTRIBUTES),
           "capacity": ("map", _PER_DEVICE, _STRING_DOMAIN, _INNER_CAPACITY)}


def device_size(path: list[str] | None) -> Range | None:
    """sizeEstimator.EstimateSize: (0, the declared maximum) for a path starting at `device`, else None."""
    if not path or path[0] != "device":
        return None
    node: tuple = ("device", 0)
    for name in path[1:]:
        if name in ("@items", "@values"):
            if node[0] != "map":
                return None
            node = node[3]
        elif name == "@keys":
            if node[0] != "map":
                return None
            node = node[2]
        elif node[0] == "device" and name in _FIELDS:
            node = _FIELDS[name]
        elif node[0] == "map" and node[3] is _ATTRIBUTE:
            node = _ATTRIBUTE
        else:
            return None
    return (0, node[1])


def add_u(x: int, y: int) -> int:
    return MAX if y > 0 and x > MAX - y else x + y


def mul_u(x: int, y: int) -> int:
    return MAX if y != 0 and x > MAX // y else x * y


def factor_u(x: int, factor: float) -> int:
    """multiplyByCostFactor: x times a float factor, rounded up, saturating."""
    xf = float(x)
    if xf > 0 and factor > 0 and xf > float(MAX) / factor:
        return MAX
    ceil = math.ceil(xf * factor)
    return MAX if ceil >= 2.0**64 else int(ceil)


def add(a: Range, b: Range) -> Range:
    return (add_u(a[0], b[0]), add_u(a[1], b[1]))


def mul(a: Range, b: Range) -> Range:
    return (mul_u(a[0], b[0]), mul_u(a[1], b[1]))


def mul_factor(a: Range, factor: float) -> Range:
    return (factor_u(a[0], factor), factor_u(a[1], factor))


def union(a: Range, b: Range) -> Range:
    return (min(a[0], b[0]), max(a[1], b[1]))


def entry_union(a: tuple[str, Range, Range] | None, b: tuple[str, Range, Range] | None) \
        -> tuple[str, Range, Range] | None:
    if a is None or b is None:
        return None
    return (a[0], union(a[1], b[1]), union(a[2], b[2]))


@dataclass
class Node:
    """What an estimator sees of an argument (cel-go's AstNode): its path into `device`, its type, the
    expression (a literal's value is read) and its computed size."""
    path: list[str] | None
    type: Any
    expr: Any
    size: Range | None

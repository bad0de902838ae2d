"""The evaluator's activations, cost tracker, attributes and qualifiers (cel-go's interpreter/attributes.go,
re-implemented): an identifier or a chain of field selections and index operations is one attribute whose
qualifiers apply in turn; each qualifier costs one unit as cel-go's observer counts it (when it qualifies, or
in an optional chain when the key is present), the attribute itself one more when evaluated as an expression.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from schedcheck.reference.util.cel.values import (NONE, CelMap, CostLimitExceeded, Err, Optional, UInt, go_type,
                                                  go_value, type_name)

if TYPE_CHECKING:
    from schedcheck.reference.util.cel.evaluator import Node


class Tracker:
    __slots__ = ("cost", "limit")

    def __init__(self, limit: int | None) -> None:
        self.cost, self.limit = 0, limit

    def add(self, amount: int) -> None:
        self.cost += amount
        if self.limit is not None and self.cost > self.limit:
            raise CostLimitExceeded()


class Activation:
    """Variables by name; a fold's activation adds its accumulator and iteration variables."""

    def __init__(self, names: dict[str, Any], tracker: Tracker, parent: Activation | None = None) -> None:
        self.names, self.tracker, self.parent = names, tracker, parent

    def resolve(self, name: str) -> tuple[bool, Any]:
        if name in self.names:
            return True, self.names[name]
        return self.parent.resolve(name) if self.parent is not None else (False, None)


# -- attributes and qualifiers -----------------------------------------------------------------------------
class Qualifier:
    id: int
    optional: bool = False

    def qualify(self, act: Activation, obj: Any, presence: bool) -> tuple[Any, bool]:
        """(value, present): Qualify, or with `presence` QualifyIfPresent; an Err value when it fails."""
        raise NotImplementedError


_go_fmt = go_value


def qualify_with(key: Any, obj: Any, presence: bool, field: bool = False) -> tuple[Any, bool]:
    """A constant qualifier applied to a value (cel-go's string/int/uint/bool/double qualifiers, refQualify)."""
    if field:  # a declared field of the device
        return obj[key], True
    if isinstance(obj, CelMap):
        found, value = obj.find(key)
        if found:
            return value, True
        if presence:
            return None, False
        return Err(f"no such key: {_go_fmt(key)}"), False
    if isinstance(obj, list):
        index = _index(key)
        if isinstance(index, Err):
            return index, False
        if 0 <= index < len(obj):
            return obj[index], True
        if presence:
            return None, False
        return Err(f"index out of bounds: {_go_fmt(key)}"), False
    if isinstance(obj, Err):
        return obj, False
    if presence:
        return None, False
    return Err(f"no such key: {_go_fmt(key)}"), False


def _index(key: Any) -> Any:
    if isinstance(key, bool) or not isinstance(key, (int, float)):
        return Err(f"unsupported index type '{type_name(key)}' in list")
    if isinstance(key, float):
        if key == key and key == int(key) and -2.0**63 <= key < 2.0**63:
            return int(key)
        return Err(f"unsupported index value {_go_fmt(key)} in list")
    if isinstance(key, UInt) and key > 2**63 - 1:
        return Err(f"unsupported index value {_go_fmt(key)} in list")
    return int(key)


class ConstQual(Qualifier):
    """A constant key or field name (cel-go's constant qualifiers, observed: one unit of cost each time one
    qualifies, or, when an optional chain asks whether it is present, each time it is)."""

    def __init__(self, node_id: int, key: Any, optional: bool = False, field: bool = False,
                 test_only: bool = False) -> None:
        self.id, self.key, self.optional, self.field, self.test_only = node_id, key, optional, field, test_only

    def qualify(self, act: Activation, obj: Any, presence: bool) -> tuple[Any, bool]:
        if not presence:
            value, present = qualify_with(self.key, obj, self.test_only, self.field)
            act.tracker.add(1)
            if self.test_only and not isinstance(value, Err):
                return present, True
            return value, True
        value, present = qualify_with(self.key, obj, True, self.field)
        if present:
            act.tracker.add(1)
            if self.test_only:
                value = True
        return value, present


class AttrQual(Qualifier):
    """An attribute (an identifier, a selection, any expression) used as an index: one unit of cost as the
    qualifier, besides what resolving the index costs."""

    def __init__(self, node_id: int, attr: Attribute, optional: bool = False) -> None:
        self.id, self.attr, self.optional = node_id, attr, optional

    def qualify(self, act: Activation, obj: Any, presence: bool) -> tuple[Any, bool]:
        key = self.attr.resolve(act)
        if isinstance(key, Err):
            value, present = key, False
        elif isinstance(key, Optional) or not (isinstance(key, (str, int, float))):
            value, present = Err(f"invalid qualifier type: {go_type(key)}"), False
        else:
            value, present = qualify_with(key, obj, presence, False)
            if not presence:
                present = True
        if present or not presence:
            act.tracker.add(1)
        return value, present


class Attribute:
    id: int
    quals: list[Qualifier]

    def add(self, qual: Qualifier) -> None:
        self.quals.append(qual)

    def attr_id(self) -> int:
        return self.quals[-1].id if self.quals else self.id

    def root(self, act: Activation) -> Any:
        raise NotImplementedError

    def resolve(self, act: Activation) -> Any:
        obj = self.root(act)
        if isinstance(obj, Err):
            return obj
        return apply_qualifiers(act, obj, self.quals)


def apply_qualifiers(act: Activation, obj: Any, quals: list[Qualifier]) -> Any:
    is_opt = isinstance(obj, Optional)
    if is_opt:
        if not obj.present:
            return obj
        obj = obj.value
    for qual in quals:
        is_opt = is_opt or qual.optional
        value, present = qual.qualify(act, obj, is_opt)
        if isinstance(value, Err):
            return value
        if is_opt and not present:
            return NONE
        obj = value
    return Optional(True, obj) if is_opt else obj


class AbsoluteAttr(Attribute):
    def __init__(self, node_id: int, name: str) -> None:
        self.id, self.name, self.quals = node_id, name, []

    def root(self, act: Activation) -> Any:
        found, value = act.resolve(self.name)
        if not found:
            return Err(f"no such attribute(s): {self.name}")
        return value


class RelativeAttr(Attribute):
    def __init__(self, node_id: int, operand: Node) -> None:
        self.id, self.operand, self.quals = node_id, operand, []

    def root(self, act: Activation) -> Any:
        return self.operand.eval(act)


class ConditionalAttr(Attribute):
    def __init__(self, node_id: int, cond: Node, truthy: Attribute, falsy: Attribute) -> None:
        self.id, self.cond, self.truthy, self.falsy, self.quals = node_id, cond, truthy, falsy, []

    def add(self, qual: Qualifier) -> None:
        self.truthy.add(qual)
        self.falsy.add(qual)

    def attr_id(self) -> int:
        return self.truthy.attr_id() if self.truthy.attr_id() == self.falsy.attr_id() else self.id

    def resolve(self, act: Activation) -> Any:
        value = self.cond.eval(act)
        if value is True:
            return self.truthy.resolve(act)
        if value is False:
            return self.falsy.resolve(act)
        return value if isinstance(value, Err) else Err("no such overload")

"""The evaluator's nodes (cel-go's interpretables, re-implemented) and what each costs as cel-go's cost observer
counts it: a call its call cost (runtime_cost.py) once its arguments are evaluated, a list literal 10, a map
literal 30, the logical operators, folds, constants and set lookups nothing of their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from schedcheck.reference.util.cel import registry
from schedcheck.reference.util.cel.attributes import Activation, Attribute, ConditionalAttr
from schedcheck.reference.util.cel.nodes import Comp
from schedcheck.reference.util.cel.runtime_cost import call_cost
from schedcheck.reference.util.cel.values import (ITERABLE, RECEIVER, CelMap, Err, GoPanic, Optional, equal, go_type,
                                                  go_value, has_trait, hash_key, type_name)

_go_fmt = go_value
CONVERSIONS = {"bool", "bytes", "double", "duration", "dyn", "int", "string", "timestamp", "type", "uint"}


class Node:
    id: int

    def eval(self, act: Activation) -> Any:
        raise NotImplementedError


@dataclass
class Const(Node):
    id: int
    value: Any

    def eval(self, act: Activation) -> Any:
        return self.value


class AttrNode(Node):
    """An attribute evaluated as an expression: one unit of cost (a conditional's none) after its qualifiers."""

    def __init__(self, attr: Attribute) -> None:
        self.attr = attr

    @property
    def id(self) -> int:  # type: ignore[override]
        return self.attr.attr_id()

    def eval(self, act: Activation) -> Any:
        value = self.attr.resolve(act)
        if not isinstance(self.attr, ConditionalAttr):
            act.tracker.add(1)
        return value


class TestOnly(Node):
    """has(x.f): the qualifiers' cost, none of its own (presence tests are free in Kubernetes' environment)."""

    def __init__(self, node_id: int, attr: Attribute) -> None:
        self.id, self.attr = node_id, attr

    def eval(self, act: Activation) -> Any:
        value = self.attr.resolve(act)
        if isinstance(value, Optional):
            return value.present
        return value


class CallNode(Node):
    def __init__(self, node_id: int, function: str, overload: str, args: list[Node],
                 binding: registry.Binding | None, arity: str) -> None:
        self.id, self.function, self.overload, self.args = node_id, function, overload, args
        self.binding, self.arity = binding, arity

    def eval(self, act: Activation) -> Any:
        strict = not (self.binding is not None and self.binding.non_strict)
        values: list[Any] = []
        for i, arg in enumerate(self.args):
            values.append(arg.eval(act))
            if strict and isinstance(values[-1], Err) and self.arity == "varargs":
                if i == len(self.args) - 1:  # every argument was evaluated: the call is costed all the same
                    act.tracker.add(call_cost(self.function, self.overload, values, values[-1]))
                return values[-1]  # the remaining arguments are not evaluated: no call cost
        result = self._call(values, strict)
        cost = call_cost(self.function, self.overload, values, result)
        act.tracker.add(cost)
        return result

    def _call(self, values: list[Any], strict: bool) -> Any:
        if strict:
            for value in values:
                if isinstance(value, Err):
                    return value
        if not values:
            return self.binding.fn() if self.binding is not None else Err(f"no such overload: {self.function}")
        first = values[0]
        binding = self.binding
        if binding is not None and (binding.trait is None or not strict and isinstance(first, Err)
                                    or has_trait(first, binding.trait)):
            return binding.fn(*values)
        if has_trait(first, RECEIVER):
            return receive(self.function, first, values[1:])
        if self.arity == "varargs":
            return Err(f"no such overload: {self.function} {self.id}")
        return Err(f"no such overload: {self.function}")


def receive(function: str, receiver: Any, args: list[Any]) -> Any:
    from schedcheck.reference.util.cel.libs.receivers import RECEIVERS
    handler = RECEIVERS.get((type_name(receiver), function, len(args)))
    return handler(receiver, *args) if handler is not None else Err("no such overload")


class Logic(Node):
    def __init__(self, node_id: int, absorbing: bool, terms: list[Node]) -> None:
        self.id, self.absorbing, self.terms = node_id, absorbing, terms

    def eval(self, act: Activation) -> Any:
        error = None
        for term in self.terms:
            value = term.eval(act)
            if value is self.absorbing:
                return self.absorbing
            if not isinstance(value, bool) and error is None:
                error = value if isinstance(value, Err) else Err("no such overload")
        return error if error is not None else not self.absorbing


class Equality(Node):
    def __init__(self, node_id: int, negate: bool, lhs: Node, rhs: Node) -> None:
        self.id, self.negate, self.lhs, self.rhs = node_id, negate, lhs, rhs

    def eval(self, act: Activation) -> Any:
        left, right = self.lhs.eval(act), self.rhs.eval(act)
        if isinstance(left, Err):
            result: Any = left
        elif isinstance(right, Err):
            result = right
        else:
            same = equal(left, right)
            result = (same is not True) if self.negate else same
        function = "_!=_" if self.negate else "_==_"
        act.tracker.add(call_cost(function, "not_equals" if self.negate else "equals", [left, right], result))
        return result


class ListNode(Node):
    def __init__(self, node_id: int, elems: list[Node], optional: frozenset[int]) -> None:
        self.id, self.elems, self.optional = node_id, elems, optional

    def eval(self, act: Activation) -> Any:
        result = self._build(act)
        act.tracker.add(10)
        return result

    def _build(self, act: Activation) -> Any:
        out: list[Any] = []
        for i, elem in enumerate(self.elems):
            value = elem.eval(act)
            if isinstance(value, Err):
                return value
            if i in self.optional:
                if not isinstance(value, Optional):
                    return Err(f"cannot initialize optional list element from non-optional value {_go_fmt(value)}")
                if not value.present:
                    continue
                value = value.value
            out.append(value)
        return out


class MapNode(Node):
    def __init__(self, node_id: int, entries: list[tuple[Node, Node, bool]]) -> None:
        self.id, self.entries = node_id, entries

    def eval(self, act: Activation) -> Any:
        result = self._build(act)
        act.tracker.add(30)
        return result

    def _build(self, act: Activation) -> Any:
        out = CelMap()
        for key_node, value_node, optional in self.entries:
            key = key_node.eval(act)
            if isinstance(key, Err):
                return key
            value = value_node.eval(act)
            if isinstance(value, Err):
                return value
            if optional:
                if not isinstance(value, Optional):
                    return Err(f"cannot initialize optional entry '{_go_fmt(key)}' from non-optional value "
                               f"{_go_fmt(value)}")
                if not value.present:
                    out = CelMap((k, v) for k, v in out.items() if equal(k, key) is not True)
                    continue
                value = value.value
            out = out.with_item(key, value)
        return out


class OptionalOr(Node):
    """`a.or(b)` and `a.orValue(b)` (the optional library's decorator): b only when a is none; no call cost."""

    def __init__(self, node_id: int, or_value: bool, lhs: Node, rhs: Node) -> None:
        self.id, self.or_value, self.lhs, self.rhs = node_id, or_value, lhs, rhs

    def eval(self, act: Activation) -> Any:
        left = self.lhs.eval(act)
        if not isinstance(left, Optional):
            return left
        if left.present:
            return left.value if self.or_value else left
        return self.rhs.eval(act)


class SetMembership(Node):
    """`x in [constants]` (the Optimize decorator): a lookup in a hash set of the constants, numbers also
    under their lossless int, uint and double twins; no cost of its own."""

    def __init__(self, node_id: int, arg: Node, members: set[tuple[str, Any]]) -> None:
        self.id, self.arg, self.members = node_id, arg, members

    def eval(self, act: Activation) -> Any:
        value = self.arg.eval(act)
        if isinstance(value, Err):
            return value
        if type_name(value) in ("kubernetes.Semver", "kubernetes.NamedFormat", "bytes"):
            raise GoPanic(f"runtime error: hash of unhashable type {go_type(value)}")
        if type_name(value) not in ("bool", "int", "uint", "double", "string"):
            return False
        return hash_key(value) in self.members


class MutableList(list):
    """A comprehension's list accumulator, appended in place."""


class MutableMap(CelMap):
    """A comprehension's map accumulator, inserted into in place."""

    __slots__ = ()

    def insert(self, key: Any, value: Any) -> Any:
        found, _ = self.find(key)
        if found:
            return Err(f"insert failed: key {_go_fmt(key)} already exists")
        self._items[hash_key(key)] = (key, value)
        return self


class Fold(Node):
    def __init__(self, node_id: int, comp: Comp, iter_range: Node, accu: Node, cond: Node, step: Node,
                 result: Node) -> None:
        self.id, self.comp = node_id, comp
        self.iter_range, self.accu, self.cond, self.step, self.result = iter_range, accu, cond, step, result

    def eval(self, act: Activation) -> Any:
        folder = _Folder(self, act)
        items = self.iter_range.eval(act)
        if isinstance(items, Err):
            return items
        if self.comp.iter_var2:
            if isinstance(items, CelMap):
                pairs = items.items()
            elif isinstance(items, list):
                pairs = list(enumerate(items))
            else:
                return Err(f"unsupported comprehension range type: {go_type(items)}")
            for key, value in pairs:
                if not folder.step_once(key, value):
                    break
            return folder.result()
        if not has_trait(items, ITERABLE):
            return Err(f"got '{go_type(items)}', expected iterable type")
        for item in (items.keys() if isinstance(items, CelMap) else list(items)):
            if not folder.step_once(item, None):
                break
        return folder.result()


class _Folder(Activation):
    def __init__(self, fold: Fold, act: Activation) -> None:
        super().__init__({}, act.tracker, act)
        self.fold, self.outer = fold, act
        self.initialized = self.computing_result = False
        self.accu_value: Any = None
        self.var1: Any = None
        self.var2: Any = None

    def resolve(self, name: str) -> tuple[bool, Any]:
        comp = self.fold.comp
        if name == comp.accu_var:
            if not self.initialized:
                self.initialized = True
                value = self.fold.accu.eval(self.outer)
                if isinstance(value, list) and not value:
                    value = MutableList()
                elif isinstance(value, CelMap) and len(value) == 0:
                    value = MutableMap()
                self.accu_value = value
            return True, self.accu_value
        if not self.computing_result:
            if name == comp.iter_var:
                return True, self.var1
            if comp.iter_var2 and name == comp.iter_var2:
                return True, self.var2
        return self.outer.resolve(name)

    def step_once(self, var1: Any, var2: Any) -> bool:
        self.var1, self.var2 = var1, var2
        cond = self.fold.cond.eval(self)
        if cond is not True and isinstance(cond, bool):
            return False
        self.accu_value = self.fold.step.eval(self)
        self.initialized = True
        return True

    def result(self) -> Any:
        self.computing_result = True
        value = self.fold.result.eval(self)
        if isinstance(value, MutableList):
            return list(value)
        if isinstance(value, MutableMap):
            return CelMap(value.items())
        return value

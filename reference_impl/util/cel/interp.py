"""The evaluator: cel-go's planner and interpretables, re-implemented, with its runtime cost tracking.

`plan` turns a checked expression into a tree of nodes as cel-go's planner does: identifiers, field selections
and index operations become attributes with qualifiers, `?:` a conditional attribute, calls bind to their
overloads, and the optimizations Kubernetes' environment turns on apply (list and map literals of constants
folded, `x in [constants]` a set lookup, conversions of a constant folded, constant regular expressions
compiled, a failure there being a compile error). `evaluate` runs the tree; its cost tracker counts as cel-go's
does (one per attribute and per qualifier, the call costs of cost.py, 10 per list and 30 per map built) and
stops past the limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from schedcheck.reference.util.cel import registry, typesys as ty
from schedcheck.reference.util.cel.nodes import Call, Comp, Expr, Ident, ListLit, Lit, MapLit, Select
from schedcheck.reference.util.cel.checker import Checked, type_value
from schedcheck.reference.util.cel.decls import FUNCTIONS, Overload
from schedcheck.reference.util.cel.errors import CompileError
from schedcheck.reference.util.cel.runtime_cost import call_cost
from schedcheck.reference.util.cel.values import (ITERABLE, NONE, RECEIVER, CelMap, CostLimitExceeded, Err, GoPanic,
                                                  Optional, UInt, equal, go_type, go_value, has_trait, hash_key,
                                                  type_name)

CONVERSIONS = {"bool", "bytes", "double", "duration", "dyn", "int", "string", "timestamp", "type", "uint"}


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


# -- nodes ---------------------------------------------------------------------------------------------------
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


# -- the planner ---------------------------------------------------------------------------------------------
class Planner:
    def __init__(self, checked: Checked) -> None:
        self.checked = checked

    def plan(self, e: Expr) -> Node:
        if isinstance(e, Lit):
            return Const(e.id, e.value)
        if isinstance(e, Ident):
            found = self.checked.idents.get(e.id)
            if found is not None and found[0] == "type":
                return Const(e.id, type_value(found[1]))
            if found is not None and found[0] == "const":
                return Const(e.id, found[1])
            return AttrNode(AbsoluteAttr(e.id, e.name))
        if isinstance(e, Select):
            return self.plan_select(e)
        if isinstance(e, Call):
            return self.plan_call(e)
        if isinstance(e, ListLit):
            node: Node = ListNode(e.id, [self.plan(x) for x in e.elems], e.optional)
            return self._fold_constant(node, node.elems)  # type: ignore[attr-defined]
        if isinstance(e, MapLit):
            node = MapNode(e.id, [(self.plan(k), self.plan(v), o) for k, v, o in e.entries])
            return self._fold_constant(node, [x for k, v, _ in node.entries for x in (k, v)])  # type: ignore
        if isinstance(e, Comp):
            return Fold(e.id, e, self.plan(e.iter_range), self.plan(e.accu_init), self.plan(e.loop_cond),
                        self.plan(e.loop_step), self.plan(e.result))
        raise CompileError(f"unsupported expression {e!r}")

    @staticmethod
    def _fold_constant(node: Node, parts: list[Node]) -> Node:
        if all(isinstance(p, Const) for p in parts):
            value = node._build(Activation({}, Tracker(None)))  # type: ignore[attr-defined]
            return Const(node.id, value)
        return node

    def as_attr(self, node: Node, node_id: int) -> Attribute:
        if isinstance(node, AttrNode):
            return node.attr
        return RelativeAttr(node_id, node)

    def plan_select(self, e: Select) -> Node:
        operand = self.plan(e.operand)
        attr = self.as_attr(operand, operand.id)
        is_field = self.checked.type(e.operand) == ty.DEVICE
        attr.add(ConstQual(e.id, e.field, field=is_field, test_only=e.test_only))
        if e.test_only:
            return TestOnly(e.id, attr)
        return operand if isinstance(operand, AttrNode) else AttrNode(attr)

    def plan_call(self, e: Call) -> Node:
        args = ([self.plan(e.target)] if e.target is not None else []) + [self.plan(a) for a in e.args]
        fn = e.function
        if fn in ("_&&_", "_||_"):
            return Logic(e.id, fn == "_||_", args)
        if fn == "_?_:_":
            truthy = args[1].attr if isinstance(args[1], AttrNode) else RelativeAttr(args[1].id, args[1])
            falsy = args[2].attr if isinstance(args[2], AttrNode) else RelativeAttr(args[2].id, args[2])
            return AttrNode(ConditionalAttr(e.id, args[0], truthy, falsy))
        if fn in ("_==_", "_!=_"):
            return Equality(e.id, fn == "_!=_", args[0], args[1])
        if fn in ("_[_]", "_[?_]", "_?._"):
            return self.plan_index(e, args, fn != "_[_]")
        overloads = self.checked.overloads.get(e.id, [])
        overload = overloads[0].id if len(overloads) == 1 else ""
        binding = None
        if fn in ("or", "orValue") and len(args) == 2 and overload in ("", "optional_or_optional",
                                                                       "optional_orValue_value"):
            return OptionalOr(e.id, fn == "orValue", args[0], args[1])
        if overload in registry.OVERLOADS:
            raw = registry.OVERLOADS[overload]
            binding = registry.Binding(guarded(overloads[0], raw), None, raw.non_strict, raw.varargs)
        if binding is None:
            binding = _function_binding(fn)
        arity = {0: "zero", 1: "unary", 2: "binary"}.get(len(args), "varargs")
        if binding is not None and binding.varargs and arity in ("unary", "binary"):
            arity = "varargs"
        node: Node = CallNode(e.id, fn, overload, args, binding, arity)
        return self._optimize(node)

    def plan_index(self, e: Call, args: list[Node], optional: bool) -> Node:
        operand, index = args
        attr = self.as_attr(operand, operand.id)
        if isinstance(index, Const):
            if not isinstance(index.value, (str, int, float)):
                raise CompileError(f"program instantiation failed: invalid qualifier type: {go_type(index.value)}")
            is_field = self.checked.type(e.args[0]) == ty.DEVICE and isinstance(index.value, str)
            attr.add(ConstQual(e.id, index.value, optional=optional, field=is_field))
        elif isinstance(index, AttrNode):
            attr.add(AttrQual(e.id, index.attr, optional=optional))
        else:
            attr.add(AttrQual(e.id, RelativeAttr(e.id, index), optional=optional))
        return operand if isinstance(operand, AttrNode) else AttrNode(attr)

    def _optimize(self, node: CallNode) -> Node:
        from schedcheck.reference.util.cel.optimize import optimize_call
        return optimize_call(node)


def _function_binding(function: str) -> registry.Binding | None:
    """What cel-go's dispatcher finds under the function's name: its singleton, its only overload, or a
    dispatcher over its overloads in declaration order."""
    if function in registry.SINGLETONS:
        return registry.SINGLETONS[function]
    declared = [o for o in FUNCTIONS.get(function, []) if o.id in registry.OVERLOADS]
    if not declared:
        return None
    if len(declared) == 1:
        raw = registry.OVERLOADS[declared[0].id]
        return registry.Binding(guarded(declared[0], raw), None, raw.non_strict, raw.varargs)
    unguarded = all(registry.OVERLOADS[o.id].unguarded for o in declared)

    def dispatch(*values: Any) -> Any:
        for candidate in declared:
            if matches_signature(candidate, values, unguarded):
                return registry.OVERLOADS[candidate.id].fn(*values)
        return no_such_overload_call(function, values)
    return registry.Binding(dispatch, None, any(registry.OVERLOADS[o.id].non_strict for o in declared), True)


def no_such_overload_call(function: str, values: Any) -> Any:
    """MaybeNoSuchOverload: an error argument, else "no such overload: fn(type, ...)"."""
    for value in values:
        if isinstance(value, Err):
            return value
    return Err(f"no such overload: {function}({', '.join(type_name(v) for v in values)})")


def runtime_assignable(t: ty.T, value: Any) -> bool:
    """Type.IsAssignableRuntimeType: the type name, and for a list or a map its first element's."""
    if isinstance(value, Err):
        return False
    if t.kind not in ("dyn", "any", "typeparam") and t.name != type_name(value):
        return False
    if t.kind == "list" and value:
        return runtime_assignable(t.params[0], value[0])
    if t.kind == "map" and len(value):
        key, item = value.items()[0]
        return runtime_assignable(t.params[0], key) and runtime_assignable(t.params[1], item)
    return True


def matches_signature(overload: Overload, values: Any, unguarded: bool = False) -> bool:
    if len(values) != len(overload.args):
        return False
    if unguarded:
        return not any(isinstance(v, Err) for v in values)
    return all(runtime_assignable(t, v) for t, v in zip(overload.args, values))


def guarded(overload: Overload, binding: registry.Binding) -> Callable[..., Any]:
    if binding.unguarded:
        return binding.fn

    def call(*values: Any) -> Any:
        if not matches_signature(overload, values):
            return no_such_overload_call(overload.function, values)
        return binding.fn(*values)
    return call

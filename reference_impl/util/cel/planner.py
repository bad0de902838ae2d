"""The planner (cel-go's interpreter/planner.go, re-implemented): a checked expression becomes the evaluator's
nodes; identifiers, field selections and index operations become attributes with qualifiers, `?:` a conditional
attribute, `&&`/`||`/`==`/`!=` their own nodes, a call its overload's binding (the one overload the checker
left, behind its runtime type guard, else the function's singleton or a dispatcher over its overloads), and the
plan-time optimizations of optimize.py apply.
"""

from __future__ import annotations

from typing import Any, Callable

from schedcheck.reference.util.cel import registry, typesys as ty
from schedcheck.reference.util.cel.attributes import (AbsoluteAttr, AttrQual, Attribute, ConditionalAttr, ConstQual,
                                                      RelativeAttr, Tracker, Activation)
from schedcheck.reference.util.cel.checker import Checked, type_value
from schedcheck.reference.util.cel.decls import FUNCTIONS, Overload
from schedcheck.reference.util.cel.errors import CompileError
from schedcheck.reference.util.cel.evaluator import (AttrNode, CallNode, Const, Equality, Fold, ListNode, Logic,
                                                     MapNode, Node, OptionalOr, TestOnly)
from schedcheck.reference.util.cel.nodes import Call, Comp, Expr, Ident, ListLit, Lit, MapLit, Select
from schedcheck.reference.util.cel.optimize import optimize_call
from schedcheck.reference.util.cel.values import Err, go_type, type_name


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

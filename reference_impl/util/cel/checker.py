"""The type checker (cel-go's checker, re-implemented) over Kubernetes' DRA environment.

`check` types every node, resolves every identifier and every call to its overloads (all that fit, as cel-go
keeps them), rewrites qualified names (`net.IP`, `sets.contains(...)`) as cel-go does, and then runs the AST
validators Kubernetes' base environment adds: homogeneous aggregate literals, and duration, timestamp and
regular expression literals. A `CompileError` is what cel-go reports as an issue.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from schedcheck.reference.util.cel import typesys as ty
from schedcheck.reference.util.cel.nodes import (Call, Comp, Expr, Ident, ListLit, Lit, MapLit, Select, StructLit,
                                               children, qualified_name)
from schedcheck.reference.util.cel.decls import FUNCTIONS, Overload
from schedcheck.reference.util.cel.errors import CompileError, NotModelled
from schedcheck.reference.util.cel.typesys import DYN, T, Mapping
from schedcheck.reference.util.cel.values import CelType, UInt

DEVICE_FIELDS = {"driver": ty.STRING, "allowMultipleAllocations": ty.BOOL,
                 "attributes": ty.map_of(ty.STRING, ty.map_of(ty.STRING, ty.ANY)),
                 "capacity": ty.map_of(ty.STRING, ty.map_of(ty.STRING, ty.QUANTITY))}
_TYPE_IDENTS = {t.name: t for t in (ty.BOOL, ty.BYTES, ty.DOUBLE, ty.DURATION, ty.INT, ty.NULL, ty.STRING,
                                    ty.TIMESTAMP, ty.TYPE, ty.UINT)}
_TYPE_IDENTS.update({"list": ty.list_of(ty.param("A")), "map": ty.map_of(ty.param("A"), ty.param("B")),
                     "net.IP": ty.IP_T, "net.CIDR": ty.CIDR_T, "optional_type": ty.T("opaque", "optional_type")})
# Known to the type provider, refused when the program is planned ("reference to undefined type").
_UNDEFINED_TYPES = {"kubernetes.DRADevice", "google.protobuf.Any", "google.protobuf.Value", "google.protobuf.Struct",
                    "google.protobuf.ListValue", "google.protobuf.BoolValue", "google.protobuf.BytesValue",
                    "google.protobuf.DoubleValue", "google.protobuf.FloatValue", "google.protobuf.Int32Value",
                    "google.protobuf.Int64Value", "google.protobuf.StringValue", "google.protobuf.UInt32Value",
                    "google.protobuf.UInt64Value"}
_NOT_MODELLED_IDENTS = {"google.protobuf.Empty"}  # a protobuf message type: literals and values not modelled
_CONSTANTS = {"google.protobuf.NullValue.NULL_VALUE": 0}


@dataclass
class Checked:
    """The checked expression: its root, each node's type, each identifier's and call's resolution."""
    root: Expr
    types: dict[int, T] = field(default_factory=dict)
    idents: dict[int, Any] = field(default_factory=dict)  # id -> ("var", name) | ("type", T) | ("const", value)
    overloads: dict[int, list[Overload]] = field(default_factory=dict)

    def type(self, e: Expr) -> T:
        return self.types[e.id]


class _Checker:
    def __init__(self, stored: bool) -> None:
        self.stored = stored
        self.out = Checked(None)  # type: ignore[arg-type]
        self.mapping = Mapping()
        self.free = 0
        self.scopes: list[dict[str, T]] = [{"device": ty.DEVICE}]

    # -- helpers --
    def fail(self, message: str) -> CompileError:
        return CompileError(message)

    def set_type(self, e: Expr, t: T) -> None:
        self.out.types[e.id] = t

    def get_type(self, e: Expr) -> T:
        return self.out.types[e.id]

    def new_var(self) -> T:
        self.free += 1
        return ty.param(f"_var{self.free - 1}")

    def assignable(self, t1: T, t2: T) -> bool:
        subs = ty.assignable(self.mapping, t1, t2)
        if subs is None:
            return False
        self.mapping = subs
        return True

    def lookup_ident(self, name: str) -> tuple[str, Any] | None:
        name = name.removeprefix(".")
        for scope in reversed(self.scopes):
            if name in scope:
                return ("var", scope[name])
        if name in _TYPE_IDENTS:
            return ("type", _TYPE_IDENTS[name])
        if name in _CONSTANTS:
            return ("const", _CONSTANTS[name])
        if name in _UNDEFINED_TYPES:
            raise self.fail(f"program instantiation failed: reference to undefined type: {name}")
        if name in _NOT_MODELLED_IDENTS:
            raise NotModelled(f"the protobuf message type {name}")
        return None

    def lookup_function(self, name: str) -> list[Overload] | None:
        overloads = FUNCTIONS.get(name.removeprefix("."))
        if overloads is None or name == "__not_strictly_false__":
            return None
        if not self.stored:
            overloads = [o for o in overloads if not o.stored_only]
        return overloads or None

    # -- the walk --
    def check(self, e: Expr) -> Expr:
        if isinstance(e, Lit):
            self.set_type(e, _literal_type(e.value))
        elif isinstance(e, Ident):
            return self.check_ident(e)
        elif isinstance(e, Select):
            return self.check_select(e)
        elif isinstance(e, Call):
            return self.check_call(e)
        elif isinstance(e, ListLit):
            self.check_list(e)
        elif isinstance(e, MapLit):
            self.check_map(e)
        elif isinstance(e, StructLit):
            self.check_struct(e)
        elif isinstance(e, Comp):
            self.check_comp(e)
        return e

    def check_ident(self, e: Ident) -> Expr:
        found = self.lookup_ident(e.name)
        if found is None:
            raise self.fail(f"undeclared reference to '{e.name.removeprefix('.')}' (in container '')")
        return self._resolved(e, e.name.removeprefix("."), found)

    def _resolved(self, e: Expr, name: str, found: tuple[str, Any]) -> Expr:
        kind, value = found
        node = Ident(e.id, name)
        if kind == "var":
            self.set_type(node, value)
        elif kind == "type":
            self.set_type(node, ty.type_of(value))
        else:
            self.set_type(node, ty.INT)
        self.out.idents[node.id] = found
        return node

    def check_select(self, e: Select) -> Expr:
        qname = qualified_name(e)
        if qname is not None:
            found = self.lookup_ident(qname)
            if found is not None:
                return self._resolved(e, qname, found)
        e.operand = self.check(e.operand)
        result = self.select_field(e.operand, e.field, optional=False)
        if e.test_only:
            result = ty.BOOL
        self.set_type(e, ty.substitute(self.mapping, result, False))
        return e

    def select_field(self, operand: Expr, name: str, optional: bool) -> T:
        operand_type = ty.substitute(self.mapping, self.get_type(operand), False)
        target, is_opt = ty.unwrap_optional(operand_type)
        if target.kind == "map":
            result = target.params[1]
        elif target.kind == "struct":
            if target != ty.DEVICE:
                raise self.fail(f"type '{target}' does not support field selection")
            if name not in DEVICE_FIELDS:
                raise self.fail(f"undefined field '{name}'")
            result = DEVICE_FIELDS[name]
        elif target.kind == "typeparam":
            self.assignable(DYN, target)
            result = DYN
        else:
            if not ty.is_dyn_or_error(target):
                raise self.fail(f"type '{target}' does not support field selection")
            result = DYN
        return ty.optional_of(result) if is_opt or optional else result

    def check_call(self, e: Call) -> Expr:
        if e.function == "_?._":
            operand, name = e.args
            if not (isinstance(name, Lit) and isinstance(name.value, str)):
                raise self.fail("unsupported optional field selection")
            e.args[0] = self.check(operand)
            self.set_type(name, ty.STRING)
            self.set_type(e, ty.substitute(self.mapping, self.select_field(e.args[0], name.value, True), False))
            self.out.overloads[e.id] = FUNCTIONS["_?._"]
            return e
        e.args = [self.check(a) for a in e.args]
        if e.target is None:
            fn = self.lookup_function(e.function)
            if fn is None:
                raise self.fail(f"undeclared reference to '{e.function.removeprefix('.')}' (in container '')")
            e.function = e.function.removeprefix(".")
            self.resolve(e, fn, None)
            return e
        qname = qualified_name(e.target)
        if qname is not None:
            fn = self.lookup_function(f"{qname}.{e.function}")
            if fn is not None:
                call = Call(e.id, f"{qname.removeprefix('.')}.{e.function}", None, e.args)
                self.resolve(call, fn, None)
                return call
        e.target = self.check(e.target)
        fn = self.lookup_function(e.function)
        if fn is None:
            raise self.fail(f"undeclared reference to '{e.function}' (in container '')")
        self.resolve(e, fn, e.target)
        return e

    def resolve(self, e: Call, overloads: list[Overload], target: Expr | None) -> None:
        arg_types = ([self.get_type(target)] if target is not None else []) + [self.get_type(a) for a in e.args]
        result: T | None = None
        matched: list[Overload] = []
        for overload in overloads:
            if overload.member != (target is not None):
                continue
            if e.function in ("_&&_", "_||_"):
                for t in arg_types:
                    if not self.assignable(t, ty.BOOL):
                        raise self.fail(f"expected type 'bool' but found '{t}'")
                self.out.overloads[e.id] = [overload]
                self.set_type(e, ty.BOOL)
                return
            params, res = list(overload.args), overload.result
            names = overload.type_params()
            if names:
                fresh = Mapping()
                for name in names:
                    fresh.add(ty.param(name), self.new_var())
                params = [ty.substitute(fresh, p, False) for p in params]
                res = ty.substitute(fresh, res, False)
            subs = ty.assignable_list(self.mapping, arg_types, params)
            if subs is None:
                continue
            self.mapping = subs
            matched.append(overload)
            fn_result = ty.substitute(self.mapping, res, False)
            if result is None:
                result = fn_result
            elif not ty.is_dyn(result) and fn_result != result:
                result = DYN
        if result is None:
            shown = [ty.substitute(self.mapping, t, True) for t in arg_types]
            if target is not None:
                text = f"{shown[0]}.({', '.join(str(t) for t in shown[1:])})"
            else:
                text = f"({', '.join(str(t) for t in shown)})"
            raise self.fail(f"found no matching overload for '{e.function}' applied to '{text}'")
        self.out.overloads[e.id] = matched
        self.set_type(e, result)

    def join(self, previous: T | None, current: T) -> T:
        if previous is None:
            return current
        if self.assignable(previous, current):
            return ty.most_general(previous, current)
        return DYN

    def check_list(self, e: ListLit) -> None:
        elems: T | None = None
        for i, elem in enumerate(e.elems):
            e.elems[i] = elem = self.check(elem)
            elem_type = self.get_type(elem)
            if i in e.optional:
                elem_type, is_opt = ty.unwrap_optional(elem_type)
                if not is_opt and not ty.is_dyn(elem_type):
                    raise self.fail(f"expected type 'optional_type({elem_type})' but found '{elem_type}'")
            elems = self.join(elems, elem_type)
        self.set_type(e, ty.list_of(elems if elems is not None else self.new_var()))

    def check_map(self, e: MapLit) -> None:
        keys: T | None = None
        values: T | None = None
        for i, (key, value, optional) in enumerate(e.entries):
            key = self.check(key)
            keys = self.join(keys, self.get_type(key))
            value = self.check(value)
            value_type = self.get_type(value)
            if optional:
                value_type, is_opt = ty.unwrap_optional(value_type)
                if not is_opt and not ty.is_dyn(value_type):
                    raise self.fail(f"expected type 'optional_type({value_type})' but found '{value_type}'")
            values = self.join(values, value_type)
            e.entries[i] = (key, value, optional)
        if keys is None:
            keys, values = self.new_var(), self.new_var()
        self.set_type(e, ty.map_of(keys, values))  # type: ignore[arg-type]

    def check_struct(self, e: StructLit) -> None:
        """A protobuf message literal (`google.protobuf.Timestamp{seconds: 1}`, a wrapper, ...): not modelled."""
        raise NotModelled(f"a protobuf message literal of {e.type_name.removeprefix('.')}")

    def check_comp(self, e: Comp) -> None:
        e.iter_range = self.check(e.iter_range)
        e.accu_init = self.check(e.accu_init)
        range_type = ty.substitute(self.mapping, self.get_type(e.iter_range), False)
        accu_type = self.get_type(e.accu_init)
        self.scopes.append({e.accu_var: accu_type})
        if range_type.kind == "list":
            var_type, var2_type = range_type.params[0], None
            if e.iter_var2:
                var_type, var2_type = ty.INT, range_type.params[0]
        elif range_type.kind == "map":
            var_type, var2_type = range_type.params[0], range_type.params[1] if e.iter_var2 else None
        elif range_type.kind in ("dyn", "any", "error", "typeparam"):
            self.assignable(DYN, range_type)
            var_type, var2_type = DYN, DYN if e.iter_var2 else None
        else:
            raise self.fail(f"expression of type '{range_type}' cannot be the range of a comprehension (must be "
                            "list, map, or dynamic)")
        scope = {e.iter_var: var_type}
        if e.iter_var2:
            scope[e.iter_var2] = var2_type  # type: ignore[assignment]
        self.scopes.append(scope)
        e.loop_cond = self.check(e.loop_cond)
        self.assert_type(e.loop_cond, ty.BOOL)
        e.loop_step = self.check(e.loop_step)
        self.assert_type(e.loop_step, accu_type)
        self.scopes.pop()
        e.result = self.check(e.result)
        self.scopes.pop()
        self.set_type(e, ty.substitute(self.mapping, self.get_type(e.result), False))

    def assert_type(self, e: Expr, t: T) -> None:
        if not self.assignable(t, self.get_type(e)):
            raise self.fail(f"expected type '{ty.substitute(self.mapping, t, True)}' but found "
                            f"'{ty.substitute(self.mapping, self.get_type(e), True)}'")


def _literal_type(value: Any) -> T:
    if isinstance(value, bool):
        return ty.BOOL
    if isinstance(value, UInt):
        return ty.UINT
    if isinstance(value, int):
        return ty.INT
    if isinstance(value, float):
        return ty.DOUBLE
    if isinstance(value, str):
        return ty.STRING
    if isinstance(value, bytes):
        return ty.BYTES
    if value is None:
        return ty.NULL
    raise AssertionError(value)


def check(root: Expr, stored: bool, validators: list[Callable[[Checked], None]] | None = None) -> Checked:
    """Type-check a parsed expression in Kubernetes' environment (`stored`: the StoredExpressions one)."""
    checker = _Checker(stored)
    root = checker.check(root)
    checker.out.root = root
    for node_id, t in list(checker.out.types.items()):
        checker.out.types[node_id] = ty.substitute(checker.mapping, t, True)
    _homogeneous(checker.out)
    for validate in validators or []:
        validate(checker.out)
    return checker.out


def walk(e: Expr, parents: tuple[Expr, ...] = ()) -> Any:
    """Every node with its ancestors."""
    yield e, parents
    for child in children(e):
        yield from walk(child, parents + (e,))


def _equivalent(a: T, b: T) -> bool:
    if a.kind != b.kind or len(a.params) != len(b.params):
        return False
    if a.kind != "typeparam" and a.name != b.name:
        return False
    return all(_equivalent(x, y) for x, y in zip(a.params, b.params))


def _homogeneous(checked: Checked) -> None:
    """ValidateHomogeneousAggregateLiterals: the elements of a list literal, the keys and the values of a map
    literal of one type each (lists and maps inside a string format call are exempt)."""
    for node, parents in walk(checked.root):
        if any(isinstance(p, Call) and p.function == "format" for p in parents):
            continue
        if isinstance(node, ListLit):
            first: T | None = None
            for i, elem in enumerate(node.elems):
                t = checked.type(elem)
                if i in node.optional:
                    t = _optional_parameter(t)
                if first is None:
                    first = t
                elif not _equivalent(first, t):
                    raise CompileError(f"expected type '{first}' but found '{t}'")
        elif isinstance(node, MapLit):
            key_t: T | None = None
            value_t: T | None = None
            for key, value, optional in node.entries:
                kt, vt = checked.type(key), checked.type(value)
                if optional:
                    vt = _optional_parameter(vt)
                if key_t is None:
                    key_t, value_t = kt, vt
                    continue
                if not _equivalent(key_t, kt):
                    raise CompileError(f"expected type '{key_t}' but found '{kt}'")
                if not _equivalent(value_t, vt):  # type: ignore[arg-type]
                    raise CompileError(f"expected type '{value_t}' but found '{vt}'")


def _optional_parameter(t: T) -> T:
    """The validator takes an optional entry's type parameter; a dynamic one has none, and cel-go panics."""
    if not t.params:
        raise CompileError("panic: runtime error: index out of range [0] with length 0")
    return t.params[0]


def type_value(t: T) -> CelType:
    """The runtime value of a type identifier."""
    return CelType(t.name if t.kind != "typeparam" else "dyn")

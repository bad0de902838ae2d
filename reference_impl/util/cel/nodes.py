"""The parsed expression, as cel-go's AST holds it after macro expansion: literals, identifiers, field selections,
calls (operators are calls: `_+_`, `_[_]`, `_?_:_`, `@in`, ...), list, map and message literals, and
comprehensions (every macro becomes one). Each node has an id, unique in its expression, as cel-go numbers them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ACCU = "@result"  # the accumulator variable cel-go's macros use (hidden: an expression cannot name it)


@dataclass(eq=False)
class Expr:
    id: int


@dataclass(eq=False)
class Lit(Expr):
    value: Any


@dataclass(eq=False)
class Ident(Expr):
    name: str


@dataclass(eq=False)
class Select(Expr):
    operand: Expr
    field: str
    test_only: bool = False  # has(operand.field)


@dataclass(eq=False)
class Call(Expr):
    function: str
    target: Expr | None
    args: list[Expr]


@dataclass(eq=False)
class ListLit(Expr):
    elems: list[Expr]
    optional: frozenset[int] = frozenset()  # indices written `?x`


@dataclass(eq=False)
class MapLit(Expr):
    entries: list[tuple[Expr, Expr, bool]]  # key, value, optional (`?k: v`)


@dataclass(eq=False)
class StructLit(Expr):
    type_name: str
    fields: list[tuple[str, Expr, bool]] = field(default_factory=list)


@dataclass(eq=False)
class Comp(Expr):
    iter_range: Expr
    iter_var: str
    iter_var2: str  # "" unless a two-variable comprehension
    accu_var: str
    accu_init: Expr
    loop_cond: Expr
    loop_step: Expr
    result: Expr


def children(e: Expr) -> list[Expr]:
    if isinstance(e, Select):
        return [e.operand]
    if isinstance(e, Call):
        return ([e.target] if e.target is not None else []) + list(e.args)
    if isinstance(e, ListLit):
        return list(e.elems)
    if isinstance(e, MapLit):
        return [x for k, v, _ in e.entries for x in (k, v)]
    if isinstance(e, StructLit):
        return [v for _, v, _ in e.fields]
    if isinstance(e, Comp):
        return [e.iter_range, e.accu_init, e.loop_cond, e.loop_step, e.result]
    return []


def qualified_name(e: Expr) -> str | None:
    """The dotted name an identifier or a chain of field selections spells (containers.ToQualifiedName)."""
    if isinstance(e, Ident):
        return e.name
    if isinstance(e, Select) and not e.test_only:
        prefix = qualified_name(e.operand)
        return None if prefix is None else f"{prefix}.{e.field}"
    return None

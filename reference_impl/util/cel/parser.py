"""CEL's parser (cel-go's grammar and its macros), producing the AST of ast.py.

Operators become calls named as cel-go names them; `&&` and `||` chains become balanced trees as cel-go builds
them; a call that matches a macro of Kubernetes' environment is expanded into a comprehension as cel-go expands
it: has, all, exists, exists_one, map, filter (the standard macros), their two-variable forms and
transformList/transformMap/transformMapEntry (ext.TwoVarComprehensions), cel.bind (ext.Bindings), sortBy
(ext.Lists v3), optMap and optFlatMap (cel.OptionalTypes).
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from schedcheck.reference.util.cel.nodes import (ACCU, Call, Comp, Expr, Ident, ListLit, Lit, MapLit, Select,
                                               StructLit, children)
from schedcheck.reference.util.cel.errors import CompileError
from schedcheck.reference.util.cel.lexer import RESERVED, string_literal, tokenize
from schedcheck.reference.util.cel.values import INT_MAX, INT_MIN, UINT_MAX, UInt

MAX_NESTING = 250  # cel-go's parser: "expression recursion limit exceeded"
# Parsing, checking, costing and evaluating recurse once per nesting level, a few frames each: room for 250 levels.
if sys.getrecursionlimit() < 20_000:
    sys.setrecursionlimit(20_000)
LEGACY_ACCU = "__result__"
_RELATIONS = {"==": "_==_", "!=": "_!=_", "<": "_<_", "<=": "_<=_", ">": "_>_", ">=": "_>=_", "in": "@in"}


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens, self.pos, self.depth, self.next_id = tokens, 0, 0, 0

    # -- ids and node helpers --
    def nid(self) -> int:
        self.next_id += 1
        return self.next_id

    def call(self, function: str, *args: Expr, target: Expr | None = None) -> Call:
        return Call(self.nid(), function, target, list(args))

    def ident(self, name: str) -> Ident:
        return Ident(self.nid(), name)

    def lit(self, value: Any) -> Lit:
        return Lit(self.nid(), value)

    def copy(self, e: Expr) -> Expr:
        """The same expression under fresh ids (a macro using an argument twice)."""
        clone = type(e).__new__(type(e))
        clone.__dict__.update(e.__dict__)
        clone.id = self.nid()
        if isinstance(e, Select):
            clone.operand = self.copy(e.operand)
        elif isinstance(e, Call):
            clone.target = self.copy(e.target) if e.target is not None else None
            clone.args = [self.copy(a) for a in e.args]
        elif isinstance(e, ListLit):
            clone.elems = [self.copy(a) for a in e.elems]
        elif isinstance(e, MapLit):
            clone.entries = [(self.copy(k), self.copy(v), o) for k, v, o in e.entries]
        elif isinstance(e, StructLit):
            clone.fields = [(n, self.copy(v), o) for n, v, o in e.fields]
        elif isinstance(e, Comp):
            for name in ("iter_range", "accu_init", "loop_cond", "loop_step", "result"):
                setattr(clone, name, self.copy(getattr(e, name)))
        return clone

    # -- tokens --
    def peek(self) -> str | None:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, str]:
        if self.pos >= len(self.tokens):
            raise CompileError("syntax error: unexpected end of expression")
        token = self.tokens[self.pos]
        if expected is not None and token[1] != expected:
            raise CompileError(f"syntax error: expected {expected!r}, got {token[1]!r}")
        self.pos += 1
        return token

    # -- grammar --
    def expr(self) -> Expr:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise CompileError(f"expression recursion limit exceeded: {MAX_NESTING}")
        try:
            cond = self.logic("||", self.conjunction)
            if self.peek() != "?":
                return cond
            self.take()
            yes = self.logic("||", self.conjunction)
            self.take(":")
            return self.call("_?_:_", cond, yes, self.expr())
        finally:
            self.depth -= 1

    def conjunction(self) -> Expr:
        return self.logic("&&", self.relation)

    def logic(self, op: str, operand: Callable[[], Expr]) -> Expr:
        terms = [operand()]
        while self.peek() == op:
            self.take()
            terms.append(operand())
        return self._balanced("_||_" if op == "||" else "_&&_", terms)

    def _balanced(self, function: str, terms: list[Expr]) -> Expr:
        """cel-go's logic manager: a chain of n operands as a balanced tree of n-1 binary calls."""
        if len(terms) == 1:
            return terms[0]

        def tree(lo: int, hi: int) -> Expr:
            mid = (lo + hi + 1) // 2
            left = terms[mid] if mid == lo else tree(lo, mid - 1)
            right = terms[mid + 1] if mid == hi else tree(mid + 1, hi)
            return self.call(function, left, right)
        return tree(0, len(terms) - 2)

    def relation(self) -> Expr:
        left = self.addition()
        while self.peek() in _RELATIONS:
            op = self.take()[1]
            left = self.call(_RELATIONS[op], left, self.addition())
        return left

    def addition(self) -> Expr:
        left = self.multiplication()
        while self.peek() in ("+", "-"):
            op = self.take()[1]
            left = self.call(f"_{op}_", left, self.multiplication())
        return left

    def multiplication(self) -> Expr:
        left = self.unary()
        while self.peek() in ("*", "/", "%"):
            op = self.take()[1]
            left = self.call(f"_{op}_", left, self.unary())
        return left

    def unary(self) -> Expr:
        """`!`s or `-`s before a member: an even run cancels out, an odd run is one operator; a `-` right
        before a number is the literal's sign."""
        op = self.peek()
        if op not in ("!", "-"):
            return self.postfix(self.primary())
        count = 0
        while self.peek() == op:
            self.take()
            count += 1
        kind, text = self.tokens[self.pos] if self.pos < len(self.tokens) else ("", "")
        if op == "-" and count == 1 and kind in ("num", "hex", "float") and not text.lower().endswith("u"):
            self.take()
            operand, count = self.postfix(self.number(kind, text, negative=True)), count - 1
        elif self.peek() in ("!", "-"):
            raise CompileError(f"syntax error: unexpected {self.peek()!r}")
        else:
            operand = self.postfix(self.primary())
        if count % 2 == 0:
            return operand
        return self.call("!_" if op == "!" else "-_", operand)

    def args(self, close: str) -> list[Expr]:
        """A call's arguments (no trailing comma, unlike a list or a map)."""
        out: list[Expr] = []
        if self.peek() != close:
            out.append(self.expr())
            while self.peek() == ",":
                self.take()
                out.append(self.expr())
        self.take(close)
        return out

    def postfix(self, expr: Expr) -> Expr:
        while self.peek() in (".", "[", ".?", "{"):
            token = self.peek()
            if token == "{":
                name = _dotted(expr)
                if name is None:
                    break
                self.take()
                expr = self.struct(name)
                continue
            self.take()
            if token == "[":
                optional = self.peek() == "?"
                if optional:
                    self.take()
                key = self.expr()
                self.take("]")
                expr = self.call("_[?_]" if optional else "_[_]", expr, key)
                continue
            kind, name = self.take()
            if kind != "id":
                raise CompileError(f"syntax error: expected a field name after {token!r}, got {name!r}")
            if token == ".?":
                expr = self.call("_?._", expr, self.lit(name))
            elif self.peek() == "(":
                self.take()
                expr = self.call_or_macro(name, expr, self.args(")"))
            else:
                expr = Select(self.nid(), expr, name)
        return expr

    def struct(self, name: str) -> Expr:
        fields: list[tuple[str, Expr, bool]] = []
        while self.peek() != "}":
            optional = self.peek() == "?"
            if optional:
                self.take()
            kind, field = self.take()
            if kind != "id":
                raise CompileError(f"syntax error: expected a field name, got {field!r}")
            self.take(":")
            fields.append((field, self.expr(), optional))
            if self.peek() != "}":
                self.take(",")
        self.take("}")
        return StructLit(self.nid(), name, fields)

    @staticmethod
    def _number(kind: str, text: str, negative: bool = False) -> Expr:
        sign = -1 if negative else 1
        if kind == "float":
            return Lit(0, sign * float(text))
        unsigned = text.lower().endswith("u")
        digits = text[:-1] if unsigned else text
        value = int(digits, 16) if kind == "hex" else int(digits)
        if unsigned:
            if value > UINT_MAX:
                raise CompileError(f"invalid uint literal {text}")
            return Lit(0, UInt(value))
        value *= sign
        if not INT_MIN <= value <= INT_MAX:
            raise CompileError(f"invalid int literal {text}")
        return Lit(0, value)

    def number(self, kind: str, text: str, negative: bool = False) -> Expr:
        node = self._number(kind, text, negative)
        node.id = self.nid()
        return node

    def primary(self) -> Expr:
        kind, text = self.take()
        if kind in ("num", "hex", "float"):
            return self.number(kind, text)
        if kind == "str":
            return self.lit(string_literal(text))
        if kind == "id":
            return self._identifier(text)
        if text == ".":
            kind, name = self.take()
            if kind != "id":
                raise CompileError("syntax error: expected an identifier after a leading '.'")
            return self._identifier(name, leading_dot=True)
        if text == "(":
            expr = self.expr()
            self.take(")")
            return expr
        if text == "[":
            elems, optional = [], set()
            while self.peek() != "]":
                if self.peek() == "?":
                    self.take()
                    optional.add(len(elems))
                elems.append(self.expr())
                if self.peek() != "]":
                    self.take(",")
            self.take("]")
            return ListLit(self.nid(), elems, frozenset(optional))
        if text == "{":
            entries: list[tuple[Expr, Expr, bool]] = []
            while self.peek() != "}":
                optional = self.peek() == "?"
                if optional:
                    self.take()
                key = self.expr()
                self.take(":")
                entries.append((key, self.expr(), optional))
                if self.peek() != "}":
                    self.take(",")
            self.take("}")
            return MapLit(self.nid(), entries)
        raise CompileError(f"syntax error: unexpected {text!r}")

    def _identifier(self, text: str, leading_dot: bool = False) -> Expr:
        if text in RESERVED or text == "in":
            raise CompileError(f"reserved identifier {text}")
        if not leading_dot and text in ("true", "false"):
            return self.lit(text == "true")
        if not leading_dot and text == "null":
            return self.lit(None)
        name = "." + text if leading_dot else text
        if self.peek() == "(":
            self.take()
            return self.call_or_macro(name, None, self.args(")"))
        return self.ident(name)

    # -- macros --
    def call_or_macro(self, name: str, target: Expr | None, args: list[Expr]) -> Expr:
        expander = _MACROS.get((name, len(args), target is not None))
        if expander is not None:
            expanded = expander(self, target, args)
            if expanded is not None:
                return expanded
        return self.call(name, *args, target=target)

    def comprehension(self, iter_range: Expr, var: str, var2: str, init: Expr, cond: Expr, step: Expr,
                      result: Expr) -> Comp:
        return Comp(self.nid(), iter_range, var, var2, ACCU, init, cond, step, result)


def _dotted(e: Expr) -> str | None:
    if isinstance(e, Ident):
        return e.name
    if isinstance(e, Select) and not e.test_only:
        prefix = _dotted(e.operand)
        return None if prefix is None else f"{prefix}.{e.field}"
    return None


def _iter_var(arg: Expr, message: str) -> str:
    if not isinstance(arg, Ident):
        raise CompileError(message)
    if arg.name in (ACCU, LEGACY_ACCU):
        raise CompileError("iteration variable overwrites accumulator variable")
    return arg.name


def _quantifier(kind: str, two: bool) -> Callable[[_Parser, Expr, list[Expr]], Expr]:
    def expand(p: _Parser, target: Expr, args: list[Expr]) -> Expr:
        var, var2, body = _vars(p, args, two)
        if kind == "all":
            init, cond = p.lit(True), p.call("@not_strictly_false", p.ident(ACCU))
            step, result = p.call("_&&_", p.ident(ACCU), body), p.ident(ACCU)
        elif kind == "exists":
            init, cond = p.lit(False), p.call("@not_strictly_false", p.call("!_", p.ident(ACCU)))
            step, result = p.call("_||_", p.ident(ACCU), body), p.ident(ACCU)
        else:
            init, cond = p.lit(0), p.lit(True)
            step = p.call("_?_:_", body, p.call("_+_", p.ident(ACCU), p.lit(1)), p.ident(ACCU))
            result = p.call("_==_", p.ident(ACCU), p.lit(1))
        return p.comprehension(target, var, var2, init, cond, step, result)
    return expand


def _vars(p: _Parser, args: list[Expr], two: bool) -> tuple[str, str, Expr]:
    if not two:
        return _iter_var(args[0], "argument must be a simple name"), "", args[1]
    first = _iter_var(args[0], "argument must be a simple name")
    if not isinstance(args[1], Ident):
        raise CompileError("argument must be a simple name")
    if args[1].name == first:
        raise CompileError(f"duplicate variable name: {first}")
    return first, _iter_var(args[1], "argument must be a simple name"), args[-1]


def _map(p: _Parser, target: Expr, args: list[Expr]) -> Expr:
    var = _iter_var(args[0], "argument is not an identifier")
    fn, flt = (args[2], args[1]) if len(args) == 3 else (args[1], None)
    step: Expr = p.call("_+_", p.ident(ACCU), ListLit(p.nid(), [fn]))
    if flt is not None:
        step = p.call("_?_:_", flt, step, p.ident(ACCU))
    return p.comprehension(target, var, "", ListLit(p.nid(), []), p.lit(True), step, p.ident(ACCU))


def _filter(p: _Parser, target: Expr, args: list[Expr]) -> Expr:
    var = _iter_var(args[0], "argument is not an identifier")
    step: Expr = p.call("_+_", p.ident(ACCU), ListLit(p.nid(), [args[0]]))
    step = p.call("_?_:_", args[1], step, p.ident(ACCU))
    return p.comprehension(target, var, "", ListLit(p.nid(), []), p.lit(True), step, p.ident(ACCU))


def _transform(kind: str) -> Callable[[_Parser, Expr, list[Expr]], Expr]:
    def expand(p: _Parser, target: Expr, args: list[Expr]) -> Expr:
        var, var2, fn = _vars(p, args, True)
        flt = args[2] if len(args) == 4 else None
        if kind == "list":
            init: Expr = ListLit(p.nid(), [])
            step: Expr = p.call("_+_", p.ident(ACCU), ListLit(p.nid(), [fn]))
        elif kind == "map":
            init, step = MapLit(p.nid(), []), p.call("cel.@mapInsert", p.ident(ACCU), p.ident(var), fn)
        else:
            init, step = MapLit(p.nid(), []), p.call("cel.@mapInsert", p.ident(ACCU), fn)
        if flt is not None:
            step = p.call("_?_:_", flt, step, p.ident(ACCU))
        return p.comprehension(target, var, var2, init, p.lit(True), step, p.ident(ACCU))
    return expand


def _has(p: _Parser, _target: Expr | None, args: list[Expr]) -> Expr:
    arg = args[0]
    if not isinstance(arg, Select):
        raise CompileError("invalid argument to has() macro")
    return Select(p.nid(), arg.operand, arg.field, test_only=True)


def _bind(p: _Parser, target: Expr, args: list[Expr]) -> Expr | None:
    if not (isinstance(target, Ident) and target.name == "cel"):
        return None
    if not isinstance(args[0], Ident):
        raise CompileError("cel.bind() variable names must be simple identifiers")
    name = args[0].name
    return Comp(p.nid(), ListLit(p.nid(), []), "#unused", "", name, args[1], p.lit(False), p.ident(name), args[2])


def _opt_map(flat: bool) -> Callable[[_Parser, Expr, list[Expr]], Expr]:
    def expand(p: _Parser, target: Expr, args: list[Expr]) -> Expr:
        if not isinstance(args[0], Ident):
            raise CompileError(f"{'optFlatMap' if flat else 'optMap'}() variable name must be a simple identifier")
        name = args[0].name
        bound: Expr = Comp(p.nid(), ListLit(p.nid(), []), "#unused", "", name,
                           p.call("value", target=p.copy(target)), p.lit(False), p.ident(name), args[1])
        if not flat:
            bound = p.call("optional.of", bound)
        return p.call("_?_:_", p.call("hasValue", target=target), bound, p.call("optional.none"))
    return expand


def _sort_by(p: _Parser, target: Expr, args: list[Expr]) -> Expr:
    if not isinstance(target, (ListLit, Select, Ident, Comp, Call)):
        raise CompileError("sortBy can only be applied to a list, identifier, comprehension, call or select "
                           "expression")
    var = "@__sortBy_input__"
    keys = _map(p, p.ident(var), args)
    body = p.call("@sortByAssociatedKeys", keys, target=p.ident(var))
    return Comp(p.nid(), ListLit(p.nid(), []), "#unused", "", var, target, p.lit(False), p.ident(var), body)


_MACROS: dict[tuple[str, int, bool], Callable[..., Expr | None]] = {
    ("has", 1, False): _has,
    ("all", 2, True): _quantifier("all", False), ("exists", 2, True): _quantifier("exists", False),
    ("exists_one", 2, True): _quantifier("exists_one", False),
    ("map", 2, True): _map, ("map", 3, True): _map, ("filter", 2, True): _filter,
    ("all", 3, True): _quantifier("all", True), ("exists", 3, True): _quantifier("exists", True),
    ("existsOne", 3, True): _quantifier("exists_one", True), ("exists_one", 3, True): _quantifier("exists_one", True),
    ("transformList", 3, True): _transform("list"), ("transformList", 4, True): _transform("list"),
    ("transformMap", 3, True): _transform("map"), ("transformMap", 4, True): _transform("map"),
    ("transformMapEntry", 3, True): _transform("entry"), ("transformMapEntry", 4, True): _transform("entry"),
    ("bind", 3, True): _bind, ("optMap", 2, True): _opt_map(False), ("optFlatMap", 2, True): _opt_map(True),
    ("sortBy", 2, True): _sort_by,
}


def parse(text: str) -> Expr:
    """The expression's AST, macros expanded; CompileError where cel-go's parser refuses it."""
    tokens = tokenize(text)
    parser = _Parser(tokens)
    expr = parser.expr()
    if parser.pos != len(tokens):
        raise CompileError(f"syntax error: unexpected {tokens[parser.pos][1]!r}")
    _check_ids(expr)
    return expr


def _check_ids(expr: Expr) -> None:
    seen: set[int] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        assert node.id not in seen and node.id > 0, f"duplicate or missing id {node.id}"
        seen.add(node.id)
        stack.extend(children(node))

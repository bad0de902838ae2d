"""The subset of CEL that device selectors (DeviceClass and claim request selectors) are evaluated in.

Kubernetes compiles each selector with cel-go against a `device` variable: `device.driver` (string),
`device.attributes` and `device.capacity` (maps from a domain to a map of names; a domain the device does
not have reads as an empty map, k8s.io/dynamic-resource-allocation/cel), `device.allowMultipleAllocations`.
Modelled here: literals (strings, integers, true/false), `device.<field>`, `x.name` and `x["key"]`
lookups (a missing key is the runtime error "no such key: <key>"), `key in map`, `!`, `==`, `!=`, `<`,
`<=`, `>`, `>=` (same-type operands; CEL's equality across types is false), `&&` and `||` with CEL's
error absorption (`false && error` is false), and parentheses. Anything else (function and method calls
such as semver() or quantity(), macros, arithmetic, the ternary) raises NotModelled when parsed, so a
selector the reference cannot evaluate is reported, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from schedcheck.reference.quantity import Quantity

_TOKEN = re.compile(r"""\s*(?:(?P<num>\d+)|(?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|(?P<id>[A-Za-z_][A-Za-z0-9_]*)
                        |(?P<op>==|!=|<=|>=|&&|\|\||[<>!()\[\].]))""", re.VERBOSE)
_RELATIONS = ("==", "!=", "<", "<=", ">", ">=", "in")


class NotModelled(ValueError):
    """The expression uses CEL the reference does not evaluate."""


class CelRuntimeError(ValueError):
    """Evaluation failed (cel-go's runtime error text)."""


@dataclass(frozen=True)
class Expr:
    op: str  # lit | var | field | index | not | and | or | == != < <= > >= in
    args: tuple[Any, ...]


class DefaultMap(dict):
    """A map whose missing keys read as an empty map (device.attributes, device.capacity)."""


def parse(text: str) -> Expr:
    tokens = _tokenize(text)
    parser = _Parser(tokens, text)
    expr = parser.disjunction()
    if parser.pos != len(tokens):
        raise NotModelled(f"unexpected {tokens[parser.pos][1]!r}")
    if expr.op == "lit" and not isinstance(expr.args[0], bool):
        raise NotModelled("must evaluate to bool")
    return expr


def _tokenize(text: str) -> list[tuple[str, str]]:
    tokens, pos = [], 0
    while pos < len(text):
        if not text[pos:].strip():
            break
        match = _TOKEN.match(text, pos)
        if match is None:
            raise NotModelled(f"unexpected character {text[pos:].strip()[0]!r}")
        kind = match.lastgroup or ""
        tokens.append((kind, match.group(kind)))
        pos = match.end()
    return tokens


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]], text: str) -> None:
        self.tokens, self.pos, self.text = tokens, 0, text

    def peek(self) -> str | None:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, str]:
        if self.pos >= len(self.tokens):
            raise NotModelled("unexpected end of expression")
        token = self.tokens[self.pos]
        if expected is not None and token[1] != expected:
            raise NotModelled(f"expected {expected!r}, got {token[1]!r}")
        self.pos += 1
        return token

    def disjunction(self) -> Expr:
        left = self.conjunction()
        while self.peek() == "||":
            self.take()
            left = Expr("or", (left, self.conjunction()))
        return left

    def conjunction(self) -> Expr:
        left = self.relation()
        while self.peek() == "&&":
            self.take()
            left = Expr("and", (left, self.relation()))
        return left

    def relation(self) -> Expr:
        left = self.unary()
        if self.peek() in _RELATIONS:
            op = self.take()[1]
            return Expr(op, (left, self.unary()))
        return left

    def unary(self) -> Expr:
        if self.peek() == "!":
            self.take()
            return Expr("not", (self.unary(),))
        return self.postfix()

    def postfix(self) -> Expr:
        expr = self.primary()
        while self.peek() in (".", "["):
            if self.take()[1] == ".":
                kind, name = self.take()
                if kind != "id":
                    raise NotModelled(f"expected a field name after '.', got {name!r}")
                if self.peek() == "(":
                    raise NotModelled(f"method call .{name}()")
                expr = Expr("field", (expr, name))
            else:
                key = self.disjunction()
                self.take("]")
                expr = Expr("index", (expr, key))
        return expr

    def primary(self) -> Expr:
        kind, text = self.take()
        if kind == "num":
            return Expr("lit", (int(text),))
        if kind == "str":
            return Expr("lit", (bytes(text[1:-1], "utf-8").decode("unicode_escape"),))
        if kind == "id":
            if self.peek() == "(":
                raise NotModelled(f"function call {text}()")
            if text in ("true", "false"):
                return Expr("lit", (text == "true",))
            if text != "device":
                raise NotModelled(f"unknown identifier {text}")
            return Expr("var", (text,))
        if text == "(":
            expr = self.disjunction()
            self.take(")")
            return expr
        raise NotModelled(f"unexpected {text!r}")


def evaluate(expr: Expr, device: dict[str, Any]) -> Any:
    op, args = expr.op, expr.args
    if op == "lit":
        return args[0]
    if op == "var":
        return device
    if op in ("field", "index"):
        target = evaluate(args[0], device)
        key = args[1] if op == "field" else evaluate(args[1], device)
        if not isinstance(target, dict):
            raise CelRuntimeError(f"no such key: {key}")
        if key in target:
            return target[key]
        if isinstance(target, DefaultMap):
            return {}
        raise CelRuntimeError(f"no such key: {key}")
    if op == "not":
        value = evaluate(args[0], device)
        if not isinstance(value, bool):
            raise CelRuntimeError("no such overload")
        return not value
    if op in ("and", "or"):
        return _logical(op, args, device)
    left, right = evaluate(args[0], device), evaluate(args[1], device)
    if op == "in":
        if not isinstance(right, dict):
            raise CelRuntimeError("no such overload")
        return left in right
    same = type(left) is type(right)
    if op == "==":
        return same and left == right
    if op == "!=":
        return not (same and left == right)
    if not same or not isinstance(left, (int, str, Quantity)) or isinstance(left, bool):
        raise CelRuntimeError("no such overload")
    return {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op]


def _logical(op: str, args: tuple[Any, ...], device: dict[str, Any]) -> bool:
    """CEL's commutative && and ||: a deciding operand wins over an error in the other."""
    absorbing = op == "or"  # true decides ||, false decides &&
    error: CelRuntimeError | None = None
    for arg in args:
        try:
            value = evaluate(arg, device)
        except CelRuntimeError as err:
            error = error or err
            continue
        if not isinstance(value, bool):
            error = error or CelRuntimeError("no such overload")
        elif value == absorbing:
            return absorbing
    if error is not None:
        raise error
    return not absorbing


def device_variable(driver: str, attributes: dict[str, Any], capacity: dict[str, Quantity]) -> dict[str, Any]:
    """The `device` variable: attribute and capacity names without a domain belong to the driver's."""
    attrs: DefaultMap = DefaultMap()
    for name, value in attributes.items():
        domain, _, ident = name.rpartition("/")
        attrs.setdefault(domain or driver, {})[ident] = value
    caps: DefaultMap = DefaultMap()
    for name, value in capacity.items():
        domain, _, ident = name.rpartition("/")
        caps.setdefault(domain or driver, {})[ident] = value
    return {"driver": driver, "attributes": attrs, "capacity": caps, "allowMultipleAllocations": False}

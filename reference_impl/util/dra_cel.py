"""CEL for device selectors (DeviceClass and claim request selectors), as Kubernetes v1.36 compiles and runs them.

Kubernetes compiles each selector with cel-go in its base environment (k8s.io/apiserver pkg/cel/environment) plus a
`device` variable of an object type (k8s.io/dynamic-resource-allocation/cel): `device.driver` (string),
`device.allowMultipleAllocations` (bool; DRAConsumableCapacity, on at 1.36), `device.attributes` (domain -> name ->
value typed `any`: bool, int, string or a Semver) and `device.capacity` (domain -> name -> Quantity). A domain the
device lacks reads as an empty map; a missing name is the runtime error "no such key: <name>".

This module is a small CEL front end and interpreter for that environment, in two steps as in cel-go: `parse` reads
the text and type-checks it (a `CompileError` is what the API server refuses at admission and the allocator reports
as "CEL compile error"); `evaluate` runs it on one device (a `CelRuntimeError` is a "CEL runtime error", which
fails the whole allocation attempt, not just that device).

Why not a CEL package: cel-python 0.5 (celpy, pure Python) has no type checker, so it cannot tell what the API
server refuses, and it lacks cross-type numeric comparison and the strings extension; cel-expr-python 0.1.3 (cel-
cpp bindings) brings protobuf and a binary wheel per Python version, and its interface (0.1.3's stubs) passes only
plain values, protobuf messages and a few well-known types, not opaque values such as Kubernetes' Semver and
Quantity, nor a map whose missing keys read as empty. Either would still need Kubernetes' libraries and cel-go's
quirks written here, and it is cel-go's answers, not the CEL spec's, that the scheduler acts on.

Evaluated as cel-go does: literals of every kind (int, uint, double, string, raw and bytes literals, null, lists
and maps, homogeneous only), arithmetic with int64/uint64 overflow errors, comparisons (numeric ones across int,
uint and double; equality across types false at run time and a compile error when the static types differ), `in`,
`?:`, `&&`/`||` with error absorption, `has()`, the macros all/exists/exists_one/map (two and three
argument)/filter, the two-variable all/exists/existsOne/transformList/transformMap, cel.bind, conversions (int,
uint, double, string, bool, bytes, dyn, type), size, the string functions (contains, startsWith, endsWith, matches,
and the strings extension's charAt, indexOf, lastIndexOf, lowerAscii, upperAscii, replace, split, substring, trim,
join), the regex library's find and findAll, Kubernetes' list library (isSorted, sum, min, max, indexOf,
lastIndexOf), the lists extension's distinct, flatten, lists.range, reverse, slice and sort,
sets.contains/equivalent/ intersects, the semver library (semver, isSemver, isGreaterThan, isLessThan, compareTo,
major, minor, patch) and the quantity library (quantity, isQuantity, isGreaterThan, isLessThan, compareTo, add,
sub, asInteger, asApproximateFloat, isInteger).

Optional types: `.?field`, `[?key]`, optional.of/ofNonZeroValue/none, hasValue, value, orValue, or, and the lists
extension's first/last.

Not evaluated (NotModelled, so a selector using it is reported, never guessed): optional list elements and map
entries (`[?x]`, `{?k: v}`), optMap/optFlatMap, url, ip, cidr, timestamp, duration, string format,
transformMapEntry, sortBy, and the authz library.

Capacities are Quantities held as apimachinery would hold the canonical form the API server stores (isInteger and
asInteger depend on it). Upstream quirks reproduced: docs/findings.md rows 46-48. Not checked: the estimated cost
limit (an expression whose worst case exceeds 1,000,000 is refused at admission, and one that runs past it fails at
run time). Regular expressions run on Python's `re`, not RE2: patterns both accept agree. An empty list literal has
a dynamic element type here; cel-go binds it to the first overload that takes it and so refuses a few expressions
(`[].sort().join("-")`) accepted here.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from collections.abc import Iterator
from typing import Any, Callable

from schedcheck.reference.quantity import Quantity

INT_MIN, INT_MAX, UINT_MAX = -(2**63), 2**63 - 1, 2**64 - 1
MAX_LENGTH = 10 * 1024  # resourceapi.CELSelectorExpressionMaxLength
MAX_NESTING = 250  # cel-go's parser: "expression recursion limit exceeded"
# Parsing, checking and evaluating recurse once per nesting level, a few frames each: room for 250 levels.
if sys.getrecursionlimit() < 10_000:
    sys.setrecursionlimit(10_000)


class NotModelled(ValueError):
    """The expression uses CEL the reference does not evaluate."""


class CompileError(ValueError):
    """cel-go (with Kubernetes' environment) refuses the expression: the API server rejects it at admission."""


class CelRuntimeError(ValueError):
    """Evaluation failed (cel-go's runtime error text)."""


class UInt(int):
    """A CEL uint (Python's int is CEL's int)."""


@dataclass(frozen=True)
class CelType:
    name: str


@dataclass(frozen=True)
class Semver:
    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()

    def key(self) -> tuple:
        pre = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.pre)
        return (self.major, self.minor, self.patch, 1 if not self.pre else 0, pre)


@dataclass(frozen=True)
class Optional:
    """A CEL optional value (cel-go's OptionalTypes, on in Kubernetes' environment)."""
    present: bool
    value: Any = None


NONE = Optional(False)


@dataclass(frozen=True)
class CelQuantity:
    """A Kubernetes Quantity as CEL sees it: the value, and how apimachinery holds it, an int64 amount
    (value, scale) or an arbitrary-precision decimal (None); isInteger and asInteger answer from the latter
    (an int64 amount with a negative scale, or a decimal, is never an integer to them, whatever its value)."""
    value: Quantity
    amount: tuple[int, int] | None
    boxed: bool = False  # a result of add() or sub(), which Kubernetes returns by pointer

    def key(self) -> Fraction:
        return self.value.as_fraction()


@dataclass(frozen=True)
class Expr:
    op: str
    args: tuple[Any, ...]


class DefaultMap(dict):
    """A map whose missing keys read as an empty map (device.attributes, device.capacity)."""


# -- static types -------------------------------------------------------------------------------------------
# A type is a string ("bool", "int", "uint", "double", "string", "bytes", "null", "type", "Quantity",
# "Semver", "device", "dyn", "any") or a tuple ("list", elem) / ("map", key, value).
DYN, ANY = "dyn", "any"
ATTRS = ("map", "string", ("map", "string", ANY))
CAPS = ("map", "string", ("map", "string", "Quantity"))
DEVICE_FIELDS = {"driver": "string", "attributes": ATTRS, "capacity": CAPS, "allowMultipleAllocations": "bool"}
NUMERIC = ("int", "uint", "double")


def _loose(t: Any) -> bool:
    return t in (DYN, ANY)


def _kind(t: Any) -> str:
    return t[0] if isinstance(t, tuple) else t


def _same(a: Any, b: Any) -> bool:
    """Assignable either way, dyn matching anything."""
    if _loose(a) or _loose(b):
        return True
    if isinstance(a, tuple) and isinstance(b, tuple):
        return a[0] == b[0] and all(_same(x, y) for x, y in zip(a[1:], b[1:]))
    return a == b


def _name(t: Any) -> str:
    if isinstance(t, tuple):
        return f"{t[0]}({', '.join(_name(x) for x in t[1:])})"
    return {"Quantity": "kubernetes.Quantity", "Semver": "kubernetes.Semver", "device": "kubernetes.DRADevice",
            "null": "null_type"}.get(t, t)


# -- lexer --------------------------------------------------------------------------------------------------
_TOKEN = re.compile(r"""\s*(?:
    (?P<float>(?:\d+\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\.\d+(?:[eE][+-]?\d+)?))
  | (?P<hex>0[xX][0-9a-fA-F]+[uU]?)
  | (?P<num>\d+[uU]?)
  | (?P<str>[rRbB]{0,2}(?:\"\"\"(?:[^\\]|\\.)*?\"\"\"|'''(?:[^\\]|\\.)*?'''|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'))
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>==|!=|<=|>=|&&|\|\||\.\?|[<>!()\[\]{}.,:?+\-*/%]))""", re.VERBOSE | re.DOTALL)
_RESERVED = {"as", "break", "const", "continue", "else", "for", "function", "if", "import", "let", "loop",
             "package", "namespace", "return", "var", "void", "while"}
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'",
            '"': '"', "`": "`", "?": "?"}


def _tokenize(text: str) -> list[tuple[str, str]]:
    tokens, pos = [], 0
    while pos < len(text):
        if not text[pos:].strip():
            break
        match = _TOKEN.match(text, pos)
        if match is None:
            raise CompileError(f"syntax error at {text[pos:].strip()[:10]!r}")
        kind = match.lastgroup or ""
        tokens.append((kind, match.group(kind)))
        pos = match.end()
    return tokens


def _string_literal(token: str) -> str | bytes:
    try:
        return _unquote(token)
    except (ValueError, IndexError, UnicodeError) as err:  # a malformed escape: cel-go's lexer refuses it
        raise CompileError(f"invalid escape sequence in {token}") from err


def _digits(text: str, base: int, width: int) -> int:
    allowed = "0123456789abcdefABCDEF" if base == 16 else "01234567"
    if len(text) != width or any(c not in allowed for c in text):
        raise ValueError(f"bad escape digits {text!r}")
    return int(text, base)


def _unquote(token: str) -> str | bytes:
    prefix = re.match(r"[rRbB]*", token).group(0).lower()  # type: ignore[union-attr]
    body = token[len(prefix):]
    quote = 3 if body[:3] in ('"""', "'''") else 1
    body = body[quote:-quote]
    is_bytes = "b" in prefix
    if "r" in prefix:
        return body.encode("utf-8") if is_bytes else body
    out: list[bytes] = []  # UTF-8 pieces; in a bytes literal \x and octal escapes are single bytes
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch.encode("utf-8"))
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt].encode("utf-8"))
            i += 2
        elif nxt in "uU":
            width = 4 if nxt == "u" else 8
            if is_bytes:
                raise CompileError("unicode escape in a bytes literal")
            out.append(chr(_digits(body[i + 2:i + 2 + width], 16, width)).encode("utf-8"))
            i += 2 + width
        elif nxt in "xX" or nxt in "0123":
            code = _digits(body[i + 2:i + 4], 16, 2) if nxt in "xX" else _digits(body[i + 1:i + 4], 8, 3)
            out.append(bytes([code]) if is_bytes else chr(code).encode("utf-8"))
            i += 4
        else:
            raise CompileError(f"invalid escape sequence \\{nxt}")
    data = b"".join(out)
    return data if is_bytes else data.decode("utf-8")


# -- parser -------------------------------------------------------------------------------------------------
_MACROS = {"all", "exists", "exists_one", "map", "filter"}
_RELATIONS = ("==", "!=", "<", "<=", ">", ">=", "in")


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens, self.pos, self.depth = tokens, 0, 0

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

    def expr(self) -> Expr:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise CompileError(f"expression recursion limit exceeded: {MAX_NESTING}")
        try:
            return self._conditional()
        finally:
            self.depth -= 1

    def _conditional(self) -> Expr:
        cond = self.disjunction()
        if self.peek() != "?":
            return cond
        self.take()
        yes = self.disjunction()
        self.take(":")
        return Expr("cond", (cond, yes, self.expr()))

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
        left = self.addition()
        while self.peek() in _RELATIONS:
            op = self.take()[1]
            left = Expr("binop", (op, left, self.addition()))
        return left

    def addition(self) -> Expr:
        left = self.multiplication()
        while self.peek() in ("+", "-"):
            op = self.take()[1]
            left = Expr("binop", (op, left, self.multiplication()))
        return left

    def multiplication(self) -> Expr:
        left = self.unary()
        while self.peek() in ("*", "/", "%"):
            op = self.take()[1]
            left = Expr("binop", (op, left, self.unary()))
        return left

    def unary(self) -> Expr:
        """`!`s or `-`s before a member, as cel-go's parser reads them: an even run cancels out (`!!x` is x,
        with x's type), an odd run is one operator; a `-` right before a number is the literal's sign."""
        op = self.peek()
        if op not in ("!", "-"):
            return self.postfix(self.primary())
        count = 0
        while self.peek() == op:
            self.take()
            count += 1
        kind, text = self.tokens[self.pos] if self.pos < len(self.tokens) else ("", "")
        if op == "-" and kind in ("num", "hex", "float") and not text.lower().endswith("u"):
            self.take()
            operand, count = self.postfix(self._number(kind, text, negative=True)), count - 1
        elif self.peek() in ("!", "-"):
            raise CompileError(f"syntax error: unexpected {self.peek()!r}")
        else:
            operand = self.postfix(self.primary())
        if count % 2 == 0:
            return operand
        return Expr("not" if op == "!" else "neg", (operand,))

    def args(self, close: str) -> list[Expr]:
        out: list[Expr] = []
        while self.peek() != close:
            out.append(self.expr())
            if self.peek() != close:
                self.take(",")
                if close == "]" and self.peek() == "?":
                    raise NotModelled("optional list element [?...]")
        self.take(close)
        return out

    def postfix(self, expr: Expr) -> Expr:
        while self.peek() in (".", "[", ".?"):
            token = self.take()[1]
            if token == "[":
                optional = self.peek() == "?"
                if optional:
                    self.take()
                key = self.expr()
                self.take("]")
                expr = Expr("optindex" if optional else "index", (expr, key))
                continue
            if token == ".?":
                kind, name = self.take()
                if kind != "id":
                    raise CompileError(f"syntax error: expected a field name after '.?', got {name!r}")
                expr = Expr("optselect", (expr, name))
                continue
            kind, name = self.take()
            if kind != "id":
                raise CompileError(f"syntax error: expected a field name after '.', got {name!r}")
            if self.peek() == "(":
                self.take()
                args = self.args(")")
                expr = self._call(name, expr, args)
            else:
                expr = Expr("select", (expr, name))
        return expr

    def _call(self, name: str, target: Expr | None, args: list[Expr]) -> Expr:
        if target is not None and name in _MACROS and 2 <= len(args) <= 3:
            if len(args) == 3 and name != "map":
                return self._two_variable("exists_one" if name == "exists_one" else name, target, args)
            if not args[0].op == "ident":
                raise CompileError(f"argument of {name}() must be a simple name")
            if len(args) == 3:
                return Expr("comp", ("map", target, args[0].args[0], args[2], args[1]))
            if name != "map" or len(args) == 2:
                return Expr("comp", (name, target, args[0].args[0], args[1], None))
        if target is not None and (name == "existsOne" and len(args) == 3
                                   or name in ("transformList", "transformMap") and len(args) in (3, 4)):
            return self._two_variable(name, target, args)
        if target is not None and name in ("transformMapEntry", "sortBy", "optMap", "optFlatMap"):
            raise NotModelled(f"macro {name}()")
        if target is not None and target.op == "ident" and target.args[0] == "cel" and name == "bind":
            if len(args) != 3 or args[0].op != "ident":
                raise CompileError("cel.bind() takes a name, a value and an expression")
            return Expr("bind", (args[0].args[0], args[1], args[2]))
        if target is None and name == "has":
            if len(args) != 1 or args[0].op != "select":
                raise CompileError("invalid argument to has() macro")
            return Expr("has", (args[0],))
        if target is not None and target.op == "ident" and target.args[0] in ("sets", "lists", "optional",
                                                                               "strings", "math", "base64"):
            return Expr("call", (f"{target.args[0]}.{name}", None, tuple(args)))
        return Expr("call", (name, target, tuple(args)))

    @staticmethod
    def _two_variable(name: str, target: Expr, args: list[Expr]) -> Expr:
        """The two-variable comprehensions (cel-go's ext.TwoVarComprehensions): index or key, then value."""
        if args[0].op != "ident" or args[1].op != "ident":
            raise CompileError(f"argument of {name}() must be a simple name")
        first, second = args[0].args[0], args[1].args[0]
        if first == second:
            raise CompileError(f"duplicate variable name: {first}")
        kind = {"existsOne": "exists_one"}.get(name, name)
        cond = args[2] if len(args) == 4 else None
        return Expr("comp2", (kind, target, first, second, args[-1], cond))

    @staticmethod
    def _number(kind: str, text: str, negative: bool = False) -> Expr:
        sign = -1 if negative else 1
        if kind == "float":
            return Expr("lit", (sign * float(text),))
        unsigned = text.lower().endswith("u")
        digits = text[:-1] if unsigned else text
        value = int(digits, 16) if kind == "hex" else int(digits)
        if unsigned:
            if value > UINT_MAX:
                raise CompileError(f"invalid uint literal {text}")
            return Expr("lit", (UInt(value),))
        value *= sign
        if not INT_MIN <= value <= INT_MAX:
            raise CompileError(f"invalid int literal {text}")
        return Expr("lit", (value,))

    def primary(self) -> Expr:
        kind, text = self.take()
        if kind in ("num", "hex", "float"):
            return self._number(kind, text)
        if kind == "str":
            return Expr("lit", (_string_literal(text),))
        if kind == "id":
            if text in _RESERVED:
                raise CompileError(f"reserved identifier {text}")
            if text in ("true", "false"):
                return Expr("lit", (text == "true",))
            if text == "null":
                return Expr("lit", (None,))
            if self.peek() == "(":
                self.take()
                return self._call(text, None, self.args(")"))
            return Expr("ident", (text,))
        if text == "(":
            expr = self.expr()
            self.take(")")
            return expr
        if text == "[":
            if self.peek() == "?":
                raise NotModelled("optional list element [?...]")
            return Expr("list", tuple(self.args("]")))
        if text == "{":
            if self.peek() == "?":
                raise NotModelled("optional map entry {?...}")
            entries: list[tuple[Expr, Expr]] = []
            while self.peek() != "}":
                key = self.expr()
                self.take(":")
                entries.append((key, self.expr()))
                if self.peek() != "}":
                    self.take(",")
                    if self.peek() == "?":
                        raise NotModelled("optional map entry {?...}")
            self.take("}")
            return Expr("map", tuple(entries))
        if text == ".":
            raise CompileError("syntax error: leading '.'")
        raise CompileError(f"syntax error: unexpected {text!r}")


def parse(text: str) -> Expr:
    """Parse and type-check a selector: CompileError where Kubernetes refuses it, NotModelled where it uses
    CEL this module does not evaluate."""
    if len(text) > MAX_LENGTH:
        raise CompileError(f"longer than {MAX_LENGTH} characters")
    tokens = _tokenize(text)
    parser = _Parser(tokens)
    expr = parser.expr()
    if parser.pos != len(tokens):
        raise CompileError(f"syntax error: unexpected {tokens[parser.pos][1]!r}")
    result = _Checker().check(expr, {"device": "device"})
    if result not in ("bool", ANY):
        raise CompileError(f"must evaluate to bool or the unknown type, not {_name(result)}")
    return expr


# -- functions ----------------------------------------------------------------------------------------------
# name -> list of (receiver type or None for a global, argument types, result type). "T" stands for any type
# (list element), "L" for any list, "M" for any map, "N" for int/uint/double.
_SIGS: dict[str, list[tuple[Any, tuple[Any, ...], Any]]] = {
    "size": [(None, ("string",), "int"), (None, ("bytes",), "int"), (None, ("L",), "int"), (None, ("M",), "int"),
             ("string", (), "int"), ("bytes", (), "int"), ("L", (), "int"), ("M", (), "int")],
    "contains": [("string", ("string",), "bool")],
    "startsWith": [("string", ("string",), "bool")],
    "endsWith": [("string", ("string",), "bool")],
    "matches": [("string", ("string",), "bool"), (None, ("string", "string"), "bool")],
    "charAt": [("string", ("int",), "string")],
    "indexOf": [("string", ("string",), "int"), ("string", ("string", "int"), "int"), ("L", ("T",), "int")],
    "lastIndexOf": [("string", ("string",), "int"), ("string", ("string", "int"), "int"), ("L", ("T",), "int")],
    "lowerAscii": [("string", (), "string")],
    "upperAscii": [("string", (), "string")],
    "replace": [("string", ("string", "string"), "string"), ("string", ("string", "string", "int"), "string")],
    "split": [("string", ("string",), ("list", "string")), ("string", ("string", "int"), ("list", "string"))],
    "substring": [("string", ("int",), "string"), ("string", ("int", "int"), "string")],
    "trim": [("string", (), "string")],
    "join": [(("list", "string"), (), "string"), (("list", "string"), ("string",), "string")],
    "find": [("string", ("string",), "string")],
    "findAll": [("string", ("string",), ("list", "string")), ("string", ("string", "int"), ("list", "string"))],
    "isSorted": [("L", (), "bool")],
    "sum": [("L", (), "T")], "min": [("L", (), "T")], "max": [("L", (), "T")],
    "distinct": [("L", (), "L")], "flatten": [("L", (), DYN), ("L", ("int",), DYN)], "reverse": [("L", (), "L")],
    "slice": [("L", ("int", "int"), "L")], "sort": [("L", (), "L")],
    "lists.range": [(None, ("int",), ("list", "int"))],
    "sets.contains": [(None, ("L", "L"), "bool")], "sets.equivalent": [(None, ("L", "L"), "bool")],
    "sets.intersects": [(None, ("L", "L"), "bool")],
    "semver": [(None, ("string",), "Semver"), (None, ("string", "bool"), "Semver")],
    "isSemver": [(None, ("string",), "bool"), (None, ("string", "bool"), "bool")],
    "isGreaterThan": [("Semver", ("Semver",), "bool"), ("Quantity", ("Quantity",), "bool")],
    "isLessThan": [("Semver", ("Semver",), "bool"), ("Quantity", ("Quantity",), "bool")],
    "compareTo": [("Semver", ("Semver",), "int"), ("Quantity", ("Quantity",), "int")],
    "major": [("Semver", (), "int")], "minor": [("Semver", (), "int")], "patch": [("Semver", (), "int")],
    "quantity": [(None, ("string",), "Quantity")], "isQuantity": [(None, ("string",), "bool")],
    "add": [("Quantity", ("Quantity",), "Quantity"), ("Quantity", ("int",), "Quantity")],
    "sub": [("Quantity", ("Quantity",), "Quantity"), ("Quantity", ("int",), "Quantity")],
    "asInteger": [("Quantity", (), "int")], "asApproximateFloat": [("Quantity", (), "double")],
    "isInteger": [("Quantity", (), "bool")],
    "int": [(None, (t,), "int") for t in ("int", "uint", "double", "string")],
    "uint": [(None, (t,), "uint") for t in ("int", "uint", "double", "string")],
    "double": [(None, (t,), "double") for t in ("int", "uint", "double", "string")],
    "string": [(None, (t,), "string") for t in ("int", "uint", "double", "string", "bytes", "bool")],
    "bool": [(None, ("bool",), "bool"), (None, ("string",), "bool")],
    "bytes": [(None, ("bytes",), "bytes"), (None, ("string",), "bytes")],
    "dyn": [(None, ("T",), DYN)], "type": [(None, ("T",), "type")],
    "optional.of": [(None, ("T",), "O")], "optional.ofNonZeroValue": [(None, ("T",), "O")],
    "optional.none": [(None, (), "O")], "hasValue": [("O", (), "bool")], "value": [("O", (), "T")],
    "orValue": [("O", ("T",), "T")], "or": [("O", ("O",), "O")], "first": [("L", (), "O")], "last": [("L", (), "O")],
}
# Known to Kubernetes' environment, not evaluated here.
_UNMODELLED = {"url", "isURL", "getScheme", "getHost", "getHostname", "getPort", "getEscapedPath", "getQuery",
               "ip", "isIP", "cidr", "isCIDR", "family", "containsIP", "containsCIDR", "prefixLength", "masked",
               "isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast",
               "ip.isCanonical", "timestamp", "duration", "getFullYear", "getMonth", "getDate", "getDayOfMonth",
               "getDayOfWeek", "getDayOfYear", "getHours", "getMinutes", "getSeconds", "getMilliseconds",
               "format", "strings.quote", "validate", "named", "authorizer", "path", "group",
               "serviceAccount", "resource", "subresource", "namespace", "name", "check", "allowed", "reason",
               "errored", "error", "fieldSelector", "labelSelector", "math.greatest", "math.least", "math.ceil",
               "math.floor", "math.round", "math.abs", "math.sign", "math.isNaN", "math.isInf", "math.isFinite",
               "base64.encode", "base64.decode", "math.bitAnd", "math.bitOr", "math.bitNot", "math.bitXor",
               "math.bitShiftLeft", "math.bitShiftRight", "math.trunc", "math.sqrt"}
_CONVERSIONS = ("int", "uint", "double", "string", "bool", "bytes")


def _unify(param: Any, arg: Any, binding: dict[str, Any]) -> bool:
    if _loose(arg):
        return True
    if param == "T":
        if "T" in binding and not _same(binding["T"], arg):
            return False
        binding.setdefault("T", arg)
        return True
    if param == "L":
        if _kind(arg) != "list":
            return False
        return _unify("T", arg[1], binding) if isinstance(arg, tuple) else True
    if param == "M":
        return _kind(arg) == "map"
    if param == "O":
        if _kind(arg) != "optional":
            return False
        return _unify("T", arg[1], binding) if isinstance(arg, tuple) else True
    return _same(param, arg)


def _result(result: Any, binding: dict[str, Any]) -> Any:
    if result == "T":
        return binding.get("T", DYN)
    if result == "L":
        return ("list", binding.get("T", DYN))
    if result == "O":
        return ("optional", binding.get("T", DYN))
    return result


class _Checker:
    def check(self, expr: Expr, scope: dict[str, Any]) -> Any:
        op, args = expr.op, expr.args
        if op == "lit":
            return _type_of(args[0])
        if op == "ident":
            name = args[0]
            if name in scope:
                return scope[name]
            if name in ("int", "uint", "double", "string", "bool", "bytes", "list", "map", "null_type", "type"):
                return "type"
            raise CompileError(f"undeclared reference to '{name}'")
        if op == "select":
            return self._select(self.check(args[0], scope), args[1])
        if op in ("optselect", "optindex"):
            target = self.check(args[0], scope)
            if _kind(target) == "optional":
                target = target[1]
            if op == "optselect":
                return ("optional", self._select(target, args[1]))
            key = self.check(args[1], scope)
            if _loose(target):
                return ("optional", DYN)
            if _kind(target) == "list" and _same(key, "int"):
                return ("optional", target[1])
            if _kind(target) == "map" and _same(key, target[1]):
                return ("optional", target[2])
            raise CompileError(f"found no matching overload for '_[?_]' applied to '({_name(target)}, {_name(key)})'")
        if op == "has":
            target, field = args[0].args
            self._select(self.check(target, scope), field)
            return "bool"
        if op == "index":
            target, key = self.check(args[0], scope), self.check(args[1], scope)
            if _loose(target):
                return DYN
            if _kind(target) == "list" and _same(key, "int"):
                return target[1]
            if _kind(target) == "map" and _same(key, target[1]):
                return target[2]
            raise CompileError(f"found no matching overload for '_[_]' applied to '({_name(target)}, {_name(key)})'")
        if op in ("and", "or", "not"):
            for arg in args:
                if not _same(self.check(arg, scope), "bool"):
                    raise CompileError(f"found no matching overload for '{op}' applied to a non-bool operand")
            return "bool"
        if op == "neg":
            operand = self.check(args[0], scope)
            if not (_loose(operand) or operand in ("int", "double")):
                raise CompileError(f"found no matching overload for '-_' applied to '({_name(operand)})'")
            return operand
        if op == "cond":
            cond, yes, no = (self.check(a, scope) for a in args)
            if not _same(cond, "bool"):
                raise CompileError(f"found no matching overload for '_?_:_' applied to '({_name(cond)}, ...)'")
            if not _same(yes, no):
                raise CompileError(f"found no matching overload for '_?_:_' applied to '(bool, {_name(yes)}, "
                                   f"{_name(no)})'")
            return no if _loose(yes) else yes
        if op == "binop":
            return self._binop(args[0], self.check(args[1], scope), self.check(args[2], scope))
        if op == "list":
            return ("list", self._homogeneous([self.check(a, scope) for a in args]))
        if op == "map":
            keys = self._homogeneous([self.check(k, scope) for k, _ in args])
            return ("map", keys, self._homogeneous([self.check(v, scope) for _, v in args]))
        if op == "comp":
            kind, target, var, body, cond = args
            range_type = self.check(target, scope)
            if _loose(range_type):
                elem = DYN
            elif _kind(range_type) in ("list", "map"):
                elem = range_type[1]
            else:
                raise CompileError(f"expression of type '{_name(range_type)}' cannot be the range of a "
                                   "comprehension (must be list, map, or dynamic)")
            inner = {**scope, var: elem}
            if cond is not None and not _same(self.check(cond, inner), "bool"):
                raise CompileError(f"{kind}() filter must be bool")
            body_type = self.check(body, inner)
            if kind in ("all", "exists", "exists_one", "filter") and not _same(body_type, "bool"):
                raise CompileError(f"{kind}() predicate must be bool")
            return "bool" if kind in ("all", "exists", "exists_one") else \
                ("list", body_type) if kind == "map" else ("list", elem)
        if op == "comp2":
            kind, target, first, second, body, cond = args
            range_type = self.check(target, scope)
            if _loose(range_type):
                types = (DYN, DYN)
            elif _kind(range_type) == "list":
                types = ("int", range_type[1])
            elif _kind(range_type) == "map":
                types = (range_type[1], range_type[2])
            else:
                raise CompileError(f"expression of type '{_name(range_type)}' cannot be the range of a "
                                   "comprehension (must be list, map, or dynamic)")
            inner = {**scope, first: types[0], second: types[1]}
            if cond is not None and not _same(self.check(cond, inner), "bool"):
                raise CompileError(f"{kind}() filter must be bool")
            body_type = self.check(body, inner)
            if kind in ("all", "exists", "exists_one"):
                if not _same(body_type, "bool"):
                    raise CompileError(f"{kind}() predicate must be bool")
                return "bool"
            if kind == "transformList":
                return ("list", body_type)
            return ("map", types[0] if not _loose(range_type) and _kind(range_type) == "map" else
                    ("int" if not _loose(range_type) else DYN), body_type)
        if op == "bind":
            var, value, body = args
            return self.check(body, {**scope, var: self.check(value, scope)})
        if op == "call":
            return self._call(expr, scope)
        raise AssertionError(op)

    @staticmethod
    def _homogeneous(types: list[Any]) -> Any:
        """HomogeneousAggregateLiterals: every element of one static type (dyn and any are types here)."""
        for t in types[1:]:
            if t != types[0] and not (isinstance(t, tuple) and _same(types[0], t)):
                raise CompileError(f"expected type '{_name(types[0])}' but found '{_name(t)}'")
        return types[0] if types else DYN

    @staticmethod
    def _select(target: Any, field: str) -> Any:
        if target == "device":
            if field not in DEVICE_FIELDS:
                raise CompileError(f"undefined field '{field}'")
            return DEVICE_FIELDS[field]
        if _loose(target):
            return DYN
        if _kind(target) == "map" and _same(target[1], "string"):
            return target[2]
        raise CompileError(f"type '{_name(target)}' does not support field selection")

    @staticmethod
    def _binop(op: str, left: Any, right: Any) -> Any:
        def fail() -> CompileError:
            return CompileError(f"found no matching overload for '_{op}_' applied to '({_name(left)}, {_name(right)})'")
        if op in ("==", "!="):
            if not _same(left, right):
                raise fail()
            return "bool"
        if op == "in":
            if _loose(right):
                return "bool"
            if _kind(right) in ("list", "map") and _same(left, right[1]):
                return "bool"
            raise fail()
        if op in ("<", "<=", ">", ">="):
            ordered = NUMERIC + ("string", "bytes", "bool")
            if any(not _loose(t) and t not in ordered for t in (left, right)):
                raise fail()
            if _loose(left) or _loose(right):
                return "bool"
            if left in NUMERIC and right in NUMERIC or left == right and left in ("string", "bytes", "bool"):
                return "bool"
            raise fail()
        # arithmetic
        if _loose(left) and _loose(right):
            return DYN
        known = right if _loose(left) else left
        if not _same(left, right):
            raise fail()
        allowed = {"+": ("int", "uint", "double", "string", "bytes", "list"), "-": NUMERIC, "*": NUMERIC,
                   "/": NUMERIC, "%": ("int", "uint")}[op]
        if _kind(known) not in allowed:
            raise fail()
        if _kind(known) == "list" and isinstance(left, tuple) and isinstance(right, tuple):
            return left if not _loose(left[1]) else right
        return known

    def _call(self, expr: Expr, scope: dict[str, Any]) -> Any:
        name, target, args = expr.args
        if target is not None and target.op == "ident" and target.args[0] not in scope and \
                f"{target.args[0]}.{name}" in _UNMODELLED:
            raise NotModelled(f"function {target.args[0]}.{name}()")
        if name in _UNMODELLED:
            raise NotModelled(f"function {name}()")
        if name not in _SIGS:
            raise CompileError(f"undeclared reference to '{name}'")
        receiver = self.check(target, scope) if target is not None else None
        arg_types = [self.check(a, scope) for a in args]
        results = []
        for recv, params, result in _SIGS[name]:
            if (recv is None) != (target is None) or len(params) != len(arg_types):
                continue
            binding: dict[str, Any] = {}
            if recv is not None and not _unify(recv, receiver, binding):
                continue
            if all(_unify(p, a, binding) for p, a in zip(params, arg_types)):
                results.append(_result(result, binding))
        if name in ("sum", "min", "max") and receiver is not None and isinstance(receiver, tuple):
            allowed = NUMERIC if name == "sum" else NUMERIC + ("string", "bytes", "bool")
            if not _loose(receiver[1]) and receiver[1] not in allowed:
                results = []
        if not results:
            shown = ", ".join(_name(a) for a in arg_types)
            on = f"{_name(receiver)}." if target is not None else ""
            raise CompileError(f"found no matching overload for '{name}' applied to '{on}({shown})'")
        if name == "matches" and args and args[-1].op == "lit" and isinstance(args[-1].args[0], str):
            try:
                re.compile(args[-1].args[0])
            except re.error as err:
                raise CompileError(f"invalid matches argument ({err})") from err
        if name in ("find", "findAll") and args and args[0].op == "lit" and isinstance(args[0].args[0], str):
            try:  # Kubernetes' regex library compiles a literal pattern when the program is planned
                re.compile(args[0].args[0])
            except re.error as err:
                raise CompileError(f"program instantiation failed: error parsing regexp: {err}") from err
        if name in _CONVERSIONS and target is None and len(args) == 1 and args[0].op == "lit":
            try:
                _CALLS[name](None, [args[0].args[0]])
            except CelRuntimeError as err:  # cel-go folds a conversion of a literal when it plans the program
                raise CompileError(f"program instantiation failed: {err}") from err
        return results[0] if all(r == results[0] for r in results) else DYN


def _type_of(value: Any) -> Any:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, UInt):
        return "uint"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bytes):
        return "bytes"
    if value is None:
        return "null"
    if isinstance(value, CelQuantity):
        return "Quantity"
    if isinstance(value, Semver):
        return "Semver"
    if isinstance(value, CelType):
        return "type"
    if isinstance(value, Optional):
        return ("optional", DYN)
    if isinstance(value, list):
        return ("list", DYN)
    if isinstance(value, dict):
        return ("map", DYN, DYN)
    return DYN


# -- evaluation ---------------------------------------------------------------------------------------------
def _int(value: int) -> int:
    if not INT_MIN <= value <= INT_MAX:
        raise CelRuntimeError("integer overflow")
    return value


def _uint(value: int) -> UInt:
    if not 0 <= value <= UINT_MAX:
        raise CelRuntimeError("unsigned integer overflow")
    return UInt(value)


def _is_num(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _num_cmp(a: Any, b: Any) -> int:
    """cel-go's numeric comparison: ints and uints exactly, an int or uint with a double in double precision
    (the integer rounded to the nearest double), past the integer's range by sign."""
    if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
        return 2  # unordered
    if isinstance(a, float) != isinstance(b, float):
        flip = isinstance(b, float)
        d, i = (b, a) if flip else (a, b)
        low, high = (0.0, 2.0**64) if isinstance(i, UInt) else (-(2.0**63), 2.0**63)
        order = -1 if d < low else 1 if d > high else (d > float(i)) - (d < float(i))
        return -order if flip else order
    return (a > b) - (a < b)


def equal(a: Any, b: Any) -> bool:
    if isinstance(a, (Semver, CelQuantity)):
        # Kubernetes' Semver and Quantity refuse to compare with another type; Quantity.Equal also refuses the
        # pointer that add() and sub() return, so `q == x.add(y)` fails while `x.add(y) == q` does not
        if type(a) is not type(b) or isinstance(b, CelQuantity) and b.boxed:
            raise CelRuntimeError("no such overload")
        return a.key() == b.key()
    if isinstance(b, (Semver, CelQuantity)):
        return False  # while cel-go's own values find another type unequal
    if _is_num(a) and _is_num(b):
        return _num_cmp(a, b) == 0
    if type(a) is not type(b) and not (isinstance(a, dict) and isinstance(b, dict)):
        if not (isinstance(a, str) and isinstance(b, str) and not isinstance(a, bytes)):
            return False
    if isinstance(a, Optional):
        return a.present == b.present and (not a.present or equal(a.value, b.value))
    if isinstance(a, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return len(a) == len(b) and all(any(equal(k, j) and equal(v, b[j]) for j in b) for k, v in a.items())
    if isinstance(a, Semver):
        return a.key() == b.key()
    return a == b


def _compare(a: Any, b: Any) -> int:
    if _is_num(a) and _is_num(b):
        return _num_cmp(a, b)
    if type(a) is type(b) and isinstance(a, (str, bytes, bool)):
        return (a > b) - (a < b)
    raise CelRuntimeError("no such overload")


def _arith(op: str, a: Any, b: Any) -> Any:
    if op == "+" and isinstance(a, list) and isinstance(b, list):
        return a + b
    if op == "+" and type(a) is type(b) and isinstance(a, (str, bytes)):
        return a + b
    if type(a) is not type(b) or not _is_num(a):
        raise CelRuntimeError("no such overload")
    if isinstance(a, float):
        if op == "%":
            raise CelRuntimeError("no such overload")
        if op == "/":
            if b == 0:
                return math.copysign(math.inf, a) * math.copysign(1, b) if a != 0 else math.nan
            return a / b
        return {"+": a + b, "-": a - b, "*": a * b}[op]
    wrap = _uint if isinstance(a, UInt) else _int
    if op in ("/", "%"):
        if b == 0:
            raise CelRuntimeError("division by zero" if op == "/" else "modulus by zero")
        quotient = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
        if op == "/":
            return wrap(quotient)
        if not isinstance(a, UInt) and a == INT_MIN and b == -1:
            raise CelRuntimeError("integer overflow")
        return wrap(a - b * quotient)
    return wrap({"+": a + b, "-": a - b, "*": a * b}[op])


def evaluate(expr: Expr, device: dict[str, Any], scope: dict[str, Any] | None = None) -> Any:
    scope = scope if scope is not None else {"device": device}
    op, args = expr.op, expr.args
    if op == "lit":
        return args[0]
    if op == "ident":
        if args[0] in scope:
            return scope[args[0]]
        return CelType(args[0])
    if op in ("select", "index"):
        target = evaluate(args[0], device, scope)
        key = args[1] if op == "select" else evaluate(args[1], device, scope)
        if isinstance(target, list):
            if not _is_num(key) or isinstance(key, float) and key != int(key):
                raise CelRuntimeError("no such overload")
            if not 0 <= int(key) < len(target):
                raise CelRuntimeError(f"index out of bounds: {key}")
            return target[int(key)]
        if not isinstance(target, dict):
            raise CelRuntimeError("no such overload")
        for candidate in target:
            if equal(candidate, key):
                return target[candidate]
        if isinstance(target, DefaultMap):
            return {}
        raise CelRuntimeError(f"no such key: {key}")
    if op in ("optselect", "optindex"):
        target = evaluate(args[0], device, scope)
        if isinstance(target, Optional):
            if not target.present:
                return NONE
            target = target.value
        key = args[1] if op == "optselect" else evaluate(args[1], device, scope)
        if isinstance(target, list):
            if not _is_num(key) or isinstance(key, float) and key != int(key):
                raise CelRuntimeError("no such overload")
            return Optional(True, target[int(key)]) if 0 <= int(key) < len(target) else NONE
        if not isinstance(target, dict):
            raise CelRuntimeError("no such overload")
        for candidate in target:
            if equal(candidate, key):
                return Optional(True, target[candidate])
        return Optional(True, {}) if isinstance(target, DefaultMap) else NONE
    if op == "has":
        target = evaluate(args[0].args[0], device, scope)
        if not isinstance(target, dict):
            return False
        return args[0].args[1] in target or isinstance(target, DefaultMap)
    if op == "not":
        value = evaluate(args[0], device, scope)
        if not isinstance(value, bool):
            raise CelRuntimeError("no such overload")
        return not value
    if op == "neg":
        value = evaluate(args[0], device, scope)
        if isinstance(value, float):
            return -value
        if not _is_num(value) or isinstance(value, UInt):
            raise CelRuntimeError("no such overload")
        return _int(-value)
    if op in ("and", "or"):
        return _logical(op, args, device, scope)
    if op == "cond":
        cond = evaluate(args[0], device, scope)
        if not isinstance(cond, bool):
            raise CelRuntimeError("no such overload")
        return evaluate(args[1] if cond else args[2], device, scope)
    if op == "binop":
        operator = args[0]
        if operator == "in" and _constant_list(args[2]):
            return _set_membership(args[1], args[2], device, scope)
        left, right = evaluate(args[1], device, scope), evaluate(args[2], device, scope)
        if operator == "==":
            return equal(left, right)
        if operator == "!=":
            return not equal(left, right)
        if operator == "in":
            if not isinstance(right, (list, dict)):
                raise CelRuntimeError("no such overload")
            for item in right:  # cel-go's Contains: only a true comparison counts, errors are passed over
                try:
                    if equal(left, item):
                        return True
                except CelRuntimeError:
                    continue
            return False
        if operator in ("<", "<=", ">", ">="):
            order = _compare(left, right)
            if order == 2:
                return False
            return {"<": order < 0, "<=": order <= 0, ">": order > 0, ">=": order >= 0}[operator]
        return _arith(operator, left, right)
    if op == "list":
        return [evaluate(a, device, scope) for a in args]
    if op == "map":
        out: dict[Any, Any] = {}
        for key_expr, value_expr in args:
            key = evaluate(key_expr, device, scope)
            for seen in [k for k in out if equal(key, k)]:
                del out[seen]
            out[key] = evaluate(value_expr, device, scope)
        return out
    if op == "comp":
        return _comprehension(args, device, scope)
    if op == "comp2":
        return _comprehension2(args, device, scope)
    if op == "bind":
        var, value, body = args
        return evaluate(body, device, {**scope, var: evaluate(value, device, scope)})
    if op == "call":
        name, target, call_args = args
        try:
            receiver = evaluate(target, device, scope) if target is not None else None
        except CelRuntimeError as err:
            if name in ("sort", "distinct") and not _attribute_error(target, device, scope):
                # cel-go's cost tracker asserts a list and panics on the error value (as measured: not when
                # the error is a missing attribute read straight into the list literal)
                raise CelRuntimeError("internal error: interface conversion: *types.Err is not traits.Lister: "
                                      "missing method Add") from err
            raise
        values = [evaluate(a, device, scope) for a in call_args]
        if name not in _STANDARD:
            _dispatch(name, receiver if target is not None else None, target is not None, values)
        return _CALLS[name](receiver, values)
    raise AssertionError(op)


# Functions of CEL's standard library; the others (extensions, Kubernetes' libraries) are dispatched on their
# declared overloads, and a call that fits none fails with "no such overload: name(types)".
_STANDARD = {"size", "contains", "startsWith", "endsWith", "matches", "dyn", "type"}


def _dispatch(name: str, receiver: Any, member: bool, values: list[Any]) -> None:
    types = [_type_of(v) for v in values]
    recv_type = _type_of(receiver) if member else None
    for recv, params, _result in _SIGS[name]:
        if (recv is None) == member or len(params) != len(values):
            continue
        binding: dict[str, Any] = {}
        if recv is not None and not _unify(recv, recv_type, binding):
            continue
        if all(_unify(p, t, binding) for p, t in zip(params, types)):
            return
    raise _no_overload(name, *([receiver] if member else []), *values)


def _constant(expr: Expr) -> bool:
    """A literal, or a conversion of one (which cel-go folds when it plans the program)."""
    if expr.op == "lit":
        return True
    if expr.op == "neg":
        return _constant(expr.args[0])
    return expr.op == "call" and expr.args[0] in _CONVERSIONS and expr.args[1] is None and len(expr.args[2]) == 1 \
        and _constant(expr.args[2][0])


def _constant_list(expr: Expr) -> bool:
    return expr.op == "list" and all(_constant(e) for e in expr.args)


def _set_membership(left_expr: Expr, list_expr: Expr, device: dict[str, Any], scope: dict[str, Any]) -> bool:
    """`x in [constants]`, as cel-go plans it: an empty list is the constant false (x is not evaluated); a list
    of bools, numbers and strings becomes a hash set (numbers also under their exact int, uint and double
    forms); x's value is looked up in it, and a value Go cannot hash (a Semver) panics, which cel-go reports
    as an internal error."""
    if not list_expr.args:
        return False
    items = [evaluate(e, device, scope) for e in list_expr.args]
    left = evaluate(left_expr, device, scope)
    if not all(isinstance(i, (bool, int, float, str)) for i in items):
        return any(_equal_or_false(left, item) for item in items)
    if isinstance(left, Semver):
        raise CelRuntimeError("internal error: runtime error: hash of unhashable type cel.Semver")
    for item in items:
        if isinstance(left, bool) or isinstance(item, bool):
            if type(left) is type(item) and left == item:
                return True
        elif _is_num(left) and _is_num(item):
            if _num_cmp(left, item) == 0 and (not isinstance(left, float) or left == int(left)):
                return True
        elif isinstance(left, str) and isinstance(item, str) and left == item:
            return True
    return False


def _equal_or_false(a: Any, b: Any) -> bool:
    try:
        return equal(a, b)
    except CelRuntimeError:
        return False


def _attribute_error(target: Expr, device: dict[str, Any], scope: dict[str, Any]) -> bool:
    """Whether the first element of a list literal that fails is a plain field or index read."""
    if target.op != "list":
        return False
    for element in target.args:
        try:
            evaluate(element, device, scope)
        except CelRuntimeError:
            return element.op in ("select", "index", "ident")
    return False


def _comprehension(args: tuple[Any, ...], device: dict[str, Any], scope: dict[str, Any]) -> Any:
    kind, target, var, body, cond = args
    items = evaluate(target, device, scope)
    if not isinstance(items, (list, dict)):
        raise CelRuntimeError("no such overload")
    if kind in ("all", "exists"):
        absorbing = kind == "exists"
        error: CelRuntimeError | None = None
        for item in items:
            try:
                value = evaluate(body, device, {**scope, var: item})
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
    if kind == "exists_one":
        count = 0
        for item in items:
            value = evaluate(body, device, {**scope, var: item})
            if not isinstance(value, bool):
                raise CelRuntimeError("no such overload")
            count += value
        return count == 1
    out = []
    for item in items:
        inner = {**scope, var: item}
        if kind == "filter":
            keep = evaluate(body, device, inner)
            if not isinstance(keep, bool):
                raise CelRuntimeError("no such overload")
            if keep:
                out.append(item)
            continue
        if cond is not None:
            keep = evaluate(cond, device, inner)
            if not isinstance(keep, bool):
                raise CelRuntimeError("no such overload")
            if not keep:
                continue
        out.append(evaluate(body, device, inner))
    return out


def _comprehension2(args: tuple[Any, ...], device: dict[str, Any], scope: dict[str, Any]) -> Any:
    kind, target, first, second, body, cond = args
    items = evaluate(target, device, scope)
    if isinstance(items, list):
        pairs = list(enumerate(items))
    elif isinstance(items, dict):
        pairs = list(items.items())
    else:
        raise CelRuntimeError("no such overload")
    scopes = [{**scope, first: a, second: b} for a, b in pairs]
    if kind in ("all", "exists"):
        return _absorbing_fold(((body, inner) for inner in scopes), device, kind == "exists")
    if kind == "exists_one":
        count = 0
        for inner in scopes:
            value = evaluate(body, device, inner)
            if not isinstance(value, bool):
                raise CelRuntimeError("no such overload")
            count += value
        return count == 1
    out_list: list[Any] = []
    out_map: dict[Any, Any] = {}
    for (key, _value), inner in zip(pairs, scopes):
        if cond is not None:
            keep = evaluate(cond, device, inner)
            if not isinstance(keep, bool):
                raise CelRuntimeError("no such overload")
            if not keep:
                continue
        result = evaluate(body, device, inner)
        if kind == "transformList":
            out_list.append(result)
        else:
            out_map[key] = result
    return out_list if kind == "transformList" else out_map


def _logical(op: str, args: tuple[Any, ...], device: dict[str, Any], scope: dict[str, Any]) -> bool:
    """CEL's commutative && and ||: a deciding operand wins over an error in the other."""
    return _absorbing_fold(((arg, scope) for arg in args), device, op == "or")  # true decides ||, false &&


def _absorbing_fold(operands: Iterator[tuple[Any, dict[str, Any]]], device: dict[str, Any], absorbing: bool) -> bool:
    """Evaluate each (expression, scope) in turn: the first value equal to `absorbing` decides, over any error
    met before or after it (CEL's commutative logic, and the all / exists macros); otherwise the first error (a
    non-bool value is "no such overload"), or `not absorbing`."""
    error: CelRuntimeError | None = None
    for expression, scope in operands:
        try:
            value = evaluate(expression, device, scope)
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


# -- function implementations (receiver, arguments) ------------------------------------------------------------
def _want(value: Any, *types: type) -> Any:
    if not isinstance(value, types) or isinstance(value, bool) and bool not in types:
        raise CelRuntimeError("no such overload")
    return value


def _size(recv: Any, args: list[Any]) -> int:
    value = recv if recv is not None else args[0]
    if isinstance(value, (str, bytes, list, dict)):
        return len(value)
    raise CelRuntimeError("no such overload")


def _str_fn(fn: Callable[..., Any]) -> Callable[[Any, list[Any]], Any]:
    def call(recv: Any, args: list[Any]) -> Any:
        if recv is None:
            recv, args = args[0], args[1:]
        if not isinstance(recv, str):
            raise CelRuntimeError("no such overload")
        return fn(recv, *args)
    return call


def _char_at(s: str, i: int) -> str:
    if not 0 <= _want(i, int) <= len(s):
        raise CelRuntimeError(f"index out of range: {i}")
    return s[i:i + 1]


def _index_of(s: str, sub: str, start: int | None = None) -> int:
    _want(sub, str)
    if start is None:
        return s.find(sub)
    if sub == "":
        return start
    if start < 0:
        raise CelRuntimeError(f"index out of range: {start}")
    return -1 if start >= len(s) else s.find(sub, start)


def _last_index_of(s: str, sub: str, end: int | None = None) -> int:
    _want(sub, str)
    if end is None:
        return s.rfind(sub)
    if sub == "":
        return end
    if end < 0:
        raise CelRuntimeError(f"index out of range: {end}")
    if end >= len(s):
        return -1
    return s.rfind(sub, 0, min(end, len(s) - len(sub)) + len(sub))


def _replace(s: str, old: str, new: str, count: int = -1) -> str:
    if count < 0:
        return s.replace(old, new)
    return s.replace(old, new, count)


def _split(s: str, sep: str, count: int = -1) -> list[str]:
    if count == 0:
        return []
    if sep == "":
        chars = list(s)
        if count > 0 and len(chars) > count:
            chars = chars[:count - 1] + ["".join(chars[count - 1:])]
        return chars
    return s.split(sep) if count < 0 else s.split(sep, count - 1)


def _substring(s: str, start: int, end: int | None = None) -> str:
    end = len(s) if end is None else end
    if not 0 <= start <= len(s):
        raise CelRuntimeError(f"index out of range: {start}")
    if not 0 <= end <= len(s):
        raise CelRuntimeError(f"index out of range: {end}")
    if start > end:
        raise CelRuntimeError(f"invalid substring range. start: {start}, end: {end}")
    return s[start:end]


def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(_want(pattern, str))
    except re.error as err:
        raise CelRuntimeError(f"error parsing regexp: {err}") from err


def _find_all(s: str, pattern: str, limit: int = -1) -> list[str]:
    found = [m.group(0) for m in _regex(pattern).finditer(s)]
    return found if limit < 0 else found[:limit]


def _join(recv: Any, args: list[Any]) -> str:
    if not isinstance(recv, list) or not all(isinstance(x, str) for x in recv):
        raise _no_overload("join", recv, *args)
    return _want(args[0], str).join(recv) if args else "".join(recv)


def _list_fn(fn: Callable[..., Any]) -> Callable[[Any, list[Any]], Any]:
    def call(recv: Any, args: list[Any]) -> Any:
        if not isinstance(recv, list):
            raise CelRuntimeError("no such overload")
        return fn(recv, *args)
    return call


def _comparable(items: list[Any]) -> None:
    for a, b in zip(items, items[1:]):
        _compare(a, b)


def _sorted(items: list[Any]) -> list[Any]:
    _comparable(items)
    import functools
    return sorted(items, key=functools.cmp_to_key(_compare))


def _sum(items: list[Any]) -> Any:
    total: Any = 0
    if items:
        total = items[0]
        for item in items[1:]:
            total = _arith("+", total, item)
    return total


def _extreme(name: str, sign: int) -> Callable[[list[Any]], Any]:
    def fn(items: list[Any]) -> Any:
        if not items:
            raise CelRuntimeError(f"{name} called on empty list")
        best = items[0]
        for item in items[1:]:
            if _compare(item, best) * sign > 0:
                best = item
        return best
    return fn


def _index(items: list[Any], value: Any, last: bool = False) -> int:
    found = [i for i, item in enumerate(items) if equal(item, value)]
    return (found[-1] if last else found[0]) if found else -1


def _distinct(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if not any(equal(item, seen) for seen in out):
            out.append(item)
    return out


def _flatten(items: list[Any], depth: int = 1) -> list[Any]:
    if depth < 0:
        raise CelRuntimeError("level must be non-negative")
    out: list[Any] = []
    for item in items:
        out += _flatten(item, depth - 1) if isinstance(item, list) and depth > 0 else [item]
    return out


def _slice(items: list[Any], start: int, end: int) -> list[Any]:
    if start < 0 or end < 0:
        raise CelRuntimeError(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise CelRuntimeError(f"cannot slice({start}, {end}), start index must be less than or equal to end index")
    if end > len(items):
        raise CelRuntimeError(f"cannot slice({start}, {end}), list is length {len(items)}")
    return items[start:end]


def _sets(test: Callable[[list[Any], list[Any]], bool]) -> Callable[[Any, list[Any]], bool]:
    def call(_recv: Any, args: list[Any]) -> bool:
        a, b = (_want(x, list) for x in args)
        return test(a, b)
    return call


def _has(items: list[Any], value: Any) -> bool:
    return any(equal(value, item) for item in items)


_ALPHANUM = re.compile(r"[0-9A-Za-z-]*")


def _number(text: str, what: str) -> int:
    """One of major, minor, patch as blang/semver reads it (its error texts)."""
    if not text.isdigit() and text != "":
        raise CelRuntimeError(f'Invalid character(s) found in {what} number "{text}"')
    if len(text) > 1 and text[0] == "0":
        raise CelRuntimeError(f'{what.capitalize()} number must not contain leading zeroes "{text}"')
    if text == "" or int(text) > UINT_MAX:
        problem = "invalid syntax" if text == "" else "value out of range"
        raise CelRuntimeError(f'strconv.ParseUint: parsing "{text}": {problem}')
    return int(text)


def parse_semver(text: str, normalize: bool = False) -> Semver:
    """blang/semver's Parse (Kubernetes' semver library; with `normalize`, a leading v dropped, leading zeroes
    trimmed and a short version filled up with zeroes first)."""
    if normalize:
        parts = text.removeprefix("v").split(".", 2)
        parts = [("0" + p.lstrip("0") if not p.lstrip("0")[:1].isdigit() else p.lstrip("0")) if len(p) > 1 else p
                 for p in parts]
        if len(parts) < 3:
            if any(c in parts[-1] for c in "+-"):
                raise CelRuntimeError("short version cannot contain PreRelease/Build meta data")
            parts += ["0"] * (3 - len(parts))
        text = ".".join(parts)
    if text == "":
        raise CelRuntimeError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise CelRuntimeError("No Major.Minor.Patch elements found")
    major, minor = _number(parts[0], "major"), _number(parts[1], "minor")
    rest, build, pre = parts[2], None, None
    if "+" in rest:
        rest, build = rest.split("+", 1)
    if "-" in rest:
        rest, pre = rest.split("-", 1)
    patch = _number(rest, "patch")
    identifiers = []
    for item in pre.split(".") if pre is not None else []:
        if item == "":
            raise CelRuntimeError("Prerelease is empty")
        if item.isdigit():
            if len(item) > 1 and item[0] == "0":
                raise CelRuntimeError(f'Numeric PreRelease version must not contain leading zeroes "{item}"')
            if int(item) > UINT_MAX:
                raise CelRuntimeError(f'strconv.ParseUint: parsing "{item}": value out of range')
        elif not _ALPHANUM.fullmatch(item):
            raise CelRuntimeError(f'Invalid character(s) found in prerelease "{item}"')
        identifiers.append(item)
    for item in build.split(".") if build is not None else []:
        if item == "":
            raise CelRuntimeError("Build meta data is empty")
        if not _ALPHANUM.fullmatch(item):
            raise CelRuntimeError(f'Invalid character(s) found in build meta data "{item}"')
    return Semver(major, minor, patch, tuple(identifiers))


def _semver(_recv: Any, args: list[Any]) -> Semver:
    return parse_semver(_want(args[0], str), bool(args[1]) if len(args) > 1 else False)


def _is_semver(_recv: Any, args: list[Any]) -> bool:
    try:
        _semver(None, args)
    except CelRuntimeError:
        return False
    return True


def _order(name: str) -> Callable[[Any, list[Any]], Any]:
    def call(recv: Any, args: list[Any]) -> Any:
        other = args[0]
        if isinstance(recv, Semver) and isinstance(other, Semver):
            a, b = recv.key(), other.key()
        elif isinstance(recv, CelQuantity) and isinstance(other, CelQuantity):
            a, b = recv.key(), other.key()
        else:
            raise _no_overload(name, recv, other)
        order = (a > b) - (a < b)
        return {"isGreaterThan": order > 0, "isLessThan": order < 0, "compareTo": order}[name]
    return call


def _semver_part(index: int) -> Callable[[Any, list[Any]], int]:
    def call(recv: Any, _args: list[Any]) -> int:
        if not isinstance(recv, Semver):
            raise _no_overload(("major", "minor", "patch")[index], recv)
        return (recv.major, recv.minor, recv.patch)[index]
    return call


def _no_overload(name: str, *values: Any) -> CelRuntimeError:
    """Kubernetes' library functions, called at run time with a value of another type (cel-go's text)."""
    return CelRuntimeError(f"no such overload: {name}({', '.join(_type_name(v) for v in values)})")


def _type_name(value: Any) -> str:
    return _name(_kind(_type_of(value)))


_QUANTITY_SYNTAX = re.compile(r"([+-]?)0*([0-9]*)(?:\.([0-9]*))?(.*)", re.DOTALL)


def _int64_amount(text: str) -> tuple[int, int] | None:
    """How apimachinery's ParseQuantity holds `text`: an int64 amount (value, scale) when the digits and the
    suffix leave enough precision, else None (an arbitrary-precision decimal)."""
    if text == "0":
        return (0, 0)
    sign, num, denom, suffix = _QUANTITY_SYNTAX.fullmatch(text).groups()  # type: ignore[union-attr]
    num, denom = num or "0", denom or ""
    _base, exponent, fmt = Quantity._interpret_suffix(suffix)
    mantissa = 1
    if fmt == "BinarySI":
        scale = 0
        if exponent >= 0 and not denom:
            mantissa = 1 << exponent
            precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        else:
            precision = -1
    else:
        scale, precision = exponent, 18 - len(num) - len(denom)
    if precision >= 0:
        scale -= len(denom)
        if scale >= -9:
            result = int(num + denom) * mantissa
            if result <= INT_MAX:
                return (-result if sign == "-" else result, scale)
    return None


def _scaled(value: int, scale: int) -> int | None:
    result = value * 10**scale
    return result if INT_MIN <= result <= INT_MAX else None


def _amount_add(a: tuple[int, int] | None, b: tuple[int, int] | None) -> tuple[int, int] | None:
    """int64Amount.Add: None once it would overflow (the quantity turns into a decimal)."""
    if a is None or b is None:
        return None
    if b[0] == 0:
        return a
    if a[0] == 0:
        return b
    (x, xs), (y, ys) = a, b
    if xs > ys:
        x, xs = _scaled(x, xs - ys), ys  # type: ignore[assignment]
    elif ys > xs:
        y, ys = _scaled(y, ys - xs), xs  # type: ignore[assignment]
    if x is None or y is None or not INT_MIN <= x + y <= INT_MAX:
        return None
    return (x + y, xs)


def _as_int64(q: CelQuantity) -> int | None:
    if q.amount is None or q.amount[1] < 0:
        return None
    return _scaled(*q.amount)


def cel_quantity(value: Quantity, text: str | None = None) -> CelQuantity:
    """A capacity as the scheduler decodes it: `text` if given, else the canonical form the API server
    stores (which is what an informer hands the scheduler)."""
    return CelQuantity(value, _int64_amount(str(value) if text is None else text))


def _quantity(_recv: Any, args: list[Any]) -> CelQuantity:
    text = _want(args[0], str)
    try:
        if text != text.strip():
            raise ValueError("spaces")
        return cel_quantity(Quantity.parse(text), text)
    except ValueError as err:
        raise CelRuntimeError("quantities must match the regular expression "
                              "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'") from err


def _is_quantity(_recv: Any, args: list[Any]) -> bool:
    try:
        _quantity(None, args)
    except CelRuntimeError:
        return False
    return True


def _q_arith(name: str, sign: int) -> Callable[[Any, list[Any]], CelQuantity]:
    def call(recv: Any, args: list[Any]) -> CelQuantity:
        other = args[0]
        if not isinstance(recv, CelQuantity) or not (isinstance(other, CelQuantity) or _is_num(other)
                                                     and not isinstance(other, (float, UInt))):
            raise _no_overload(name, recv, other)
        if isinstance(other, CelQuantity):
            value, amount = other.key(), other.amount
        else:
            value, amount = Fraction(other), (other, 0)
        if recv.amount is not None and amount is not None:
            if sign < 0:  # int64Amount.Sub negates without a check: -(-2^63) stays -2^63 (an addition)
                amount = (amount[0] if amount[0] == INT_MIN else -amount[0], amount[1])
            total = _amount_add(recv.amount, amount)
            if total is not None:
                return CelQuantity(Quantity(Fraction(total[0]) * Fraction(10) ** total[1], recv.value.format), total,
                                   True)
        return CelQuantity(Quantity(recv.key() + sign * value, recv.value.format), None, True)
    return call


def _as_integer(recv: Any, _args: list[Any]) -> int:
    if not isinstance(recv, CelQuantity):
        raise _no_overload("asInteger", recv)
    value = _as_int64(recv)
    if value is None:
        raise CelRuntimeError("cannot convert value to integer")
    return value


def _is_integer(recv: Any, _args: list[Any]) -> bool:
    if not isinstance(recv, CelQuantity):
        raise _no_overload("isInteger", recv)
    return _as_int64(recv) is not None


def _as_float(recv: Any, _args: list[Any]) -> float:
    if not isinstance(recv, CelQuantity):
        raise _no_overload("asApproximateFloat", recv)
    return float(recv.key())


def _to_int(_recv: Any, args: list[Any]) -> int:
    value = args[0]
    if isinstance(value, str):
        if not re.fullmatch(r"[+-]?\d+", value):
            raise CelRuntimeError("type conversion error from 'string' to 'int'")
        value = int(value)
    elif isinstance(value, float):
        if not math.isfinite(value) or not INT_MIN < value < INT_MAX:
            raise CelRuntimeError("integer overflow")
        value = int(value)
    elif not _is_num(value):
        raise CelRuntimeError("no such overload")
    return _int(int(value))


def _to_uint(_recv: Any, args: list[Any]) -> UInt:
    value = args[0]
    if isinstance(value, str):
        if not re.fullmatch(r"\+?\d+", value):
            raise CelRuntimeError("type conversion error from 'string' to 'uint'")
        value = int(value)
    elif isinstance(value, float):
        if not math.isfinite(value) or not -1 < value < 2.0**64:
            raise CelRuntimeError("unsigned integer overflow")
        value = int(value)
    elif not _is_num(value):
        raise CelRuntimeError("no such overload")
    return _uint(int(value))


def _to_double(_recv: Any, args: list[Any]) -> float:
    value = args[0]
    if isinstance(value, str):
        problem = CelRuntimeError("type conversion error from 'string' to 'double'")
        if value != value.strip() or "_" in value:
            raise problem
        try:
            result = float(value)
        except ValueError as err:
            raise problem from err
        if math.isinf(result) and "inf" not in value.lower():
            raise problem  # out of range: Go's ParseFloat fails
        return result
    if not _is_num(value):
        raise CelRuntimeError("no such overload")
    return float(value)


def _format_double(value: float) -> str:
    """Go's %g (cel-go's string(double)): the shortest digits, in exponent form below 1e-4 or from 1e6."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0"
    shortest = Decimal(repr(abs(value)))
    digits = "".join(map(str, shortest.as_tuple().digits)).rstrip("0") or "0"
    exponent = shortest.adjusted()
    if exponent < -4 or exponent >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    if exponent < 0:
        return f"{sign}0.{'0' * (-exponent - 1)}{digits}"
    whole = digits[:exponent + 1].ljust(exponent + 1, "0")
    rest = digits[exponent + 1:]
    return sign + whole + ("." + rest if rest else "")


def _to_string(_recv: Any, args: list[Any]) -> str:
    value = args[0]
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _format_double(value)
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as err:
            raise CelRuntimeError("invalid UTF-8 in bytes, cannot convert to string") from err
    raise CelRuntimeError("no such overload")


def _to_bool(_recv: Any, args: list[Any]) -> bool:
    value = args[0]
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        truth = {"1": True, "t": True, "T": True, "true": True, "TRUE": True, "True": True,
                 "0": False, "f": False, "F": False, "false": False, "FALSE": False, "False": False}
        if value in truth:
            return truth[value]
        raise CelRuntimeError("type conversion error from 'string' to 'bool'")
    raise CelRuntimeError("no such overload")


def _to_bytes(_recv: Any, args: list[Any]) -> bytes:
    value = args[0]
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    raise CelRuntimeError("no such overload")


def _type(_recv: Any, args: list[Any]) -> CelType:
    kind = _kind(_type_of(args[0]))
    return CelType({"null": "null_type", "Quantity": "kubernetes.Quantity", "Semver": "kubernetes.Semver"}
                   .get(kind, kind))


def _zero(value: Any) -> bool:
    if value is None or isinstance(value, (list, dict, str, bytes)) and not value:
        return True
    return _is_num(value) and value == 0 or value is False


def _opt(recv: Any) -> Optional:
    if not isinstance(recv, Optional):
        raise CelRuntimeError("no such overload")
    return recv


def _opt_value(recv: Any, _args: list[Any]) -> Any:
    if not _opt(recv).present:
        raise CelRuntimeError("optional.none() dereference")
    return recv.value


_CALLS: dict[str, Callable[[Any, list[Any]], Any]] = {
    "optional.of": lambda _r, args: Optional(True, args[0]),
    "optional.ofNonZeroValue": lambda _r, args: NONE if _zero(args[0]) else Optional(True, args[0]),
    "optional.none": lambda _r, _args: NONE,
    "hasValue": lambda recv, _args: _opt(recv).present,
    "value": _opt_value,
    "orValue": lambda recv, args: recv.value if _opt(recv).present else args[0],
    "or": lambda recv, args: recv if _opt(recv).present else _opt(args[0]),
    "first": lambda recv, _args: Optional(True, recv[0]) if _want(recv, list) else NONE,
    "last": lambda recv, _args: Optional(True, recv[-1]) if _want(recv, list) else NONE,
    "size": _size,
    "contains": _str_fn(lambda s, sub: s.find(_want(sub, str)) >= 0),
    "startsWith": _str_fn(lambda s, p: s.startswith(_want(p, str))),
    "endsWith": _str_fn(lambda s, p: s.endswith(_want(p, str))),
    "matches": _str_fn(lambda s, p: _regex(p).search(s) is not None),
    "charAt": _str_fn(_char_at), "lowerAscii": _str_fn(lambda s: "".join(c.lower() if c.isascii() else c for c in s)),
    "upperAscii": _str_fn(lambda s: "".join(c.upper() if c.isascii() else c for c in s)),
    "replace": _str_fn(_replace), "split": _str_fn(_split), "substring": _str_fn(_substring),
    "trim": _str_fn(lambda s: s.strip(" \t\n\v\f\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
                                      "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")),
    "join": _join,
    "find": _str_fn(lambda s, p: (lambda m: m.group(0) if m else "")(_regex(p).search(s))),
    "findAll": _str_fn(_find_all),
    "isSorted": _list_fn(lambda items: (_comparable(items), all(_compare(a, b) <= 0 for a, b in zip(items, items[1:])))[1]),
    "sum": _list_fn(_sum), "min": _list_fn(_extreme("min", -1)), "max": _list_fn(_extreme("max", 1)),
    "distinct": _list_fn(_distinct), "flatten": _list_fn(_flatten), "reverse": _list_fn(lambda items: items[::-1]),
    "slice": _list_fn(_slice), "sort": _list_fn(_sorted),
    "lists.range": lambda _r, args: list(range(_want(args[0], int))),
    "sets.contains": _sets(lambda a, b: all(_has(a, x) for x in b)),
    "sets.equivalent": _sets(lambda a, b: all(_has(a, x) for x in b) and all(_has(b, x) for x in a)),
    "sets.intersects": _sets(lambda a, b: any(_has(a, x) for x in b)),
    "semver": _semver, "isSemver": _is_semver,
    "isGreaterThan": _order("isGreaterThan"), "isLessThan": _order("isLessThan"), "compareTo": _order("compareTo"),
    "major": _semver_part(0), "minor": _semver_part(1), "patch": _semver_part(2),
    "quantity": _quantity, "isQuantity": _is_quantity, "add": _q_arith("add", 1), "sub": _q_arith("sub", -1),
    "asInteger": _as_integer, "isInteger": _is_integer, "asApproximateFloat": _as_float,
    "int": _to_int, "uint": _to_uint, "double": _to_double, "string": _to_string, "bool": _to_bool,
    "bytes": _to_bytes, "dyn": lambda _r, args: args[0], "type": _type,
}


def _index_of_any(recv: Any, args: list[Any]) -> int:
    if isinstance(recv, list):
        return _index(recv, args[0])
    return _str_fn(_index_of)(recv, args)


def _last_index_of_any(recv: Any, args: list[Any]) -> int:
    if isinstance(recv, list):
        return _index(recv, args[0], last=True)
    return _str_fn(_last_index_of)(recv, args)


_CALLS["indexOf"], _CALLS["lastIndexOf"] = _index_of_any, _last_index_of_any


def result_bool(value: Any) -> bool:
    """DeviceMatches' conversion of the result to a Go bool (cel-go's error texts)."""
    if isinstance(value, bool):
        return value
    kind = _name(_kind(_type_of(value)))
    detail = ("unsupported native conversion from string to 'bool'" if kind == "string"
              else f"type conversion error from '{kind.removeprefix('kubernetes.')}' to 'bool'"
              if kind.startswith("kubernetes.") else f"unsupported type conversion from '{kind}' to bool")
    raise CelRuntimeError(f"CEL result of type {kind} could not be converted to bool: {detail}")


def device_variable(driver: str, attributes: dict[str, Any], capacity: dict[str, Quantity],
                    allow_multiple_allocations: bool = False) -> dict[str, Any]:
    """The `device` variable: attribute and capacity names without a domain belong to the driver's; a version
    attribute is a Semver (one that does not parse is a runtime error, as upstream's DeviceMatches)."""
    attrs: DefaultMap = DefaultMap()
    for name, value in attributes.items():
        domain, _, ident = name.rpartition("/")
        if _is_version(value):
            try:
                value = parse_semver(str(value))
            except CelRuntimeError as err:
                value = _BadVersion(f"attribute {name}: parse semantic version: {err}")
        attrs.setdefault(domain or driver, {})[ident] = value
    caps: DefaultMap = DefaultMap()
    for name, value in capacity.items():
        domain, _, ident = name.rpartition("/")
        caps.setdefault(domain or driver, {})[ident] = cel_quantity(value)
    return {"driver": driver, "attributes": attrs, "capacity": caps,
            "allowMultipleAllocations": allow_multiple_allocations}


@dataclass(frozen=True)
class _BadVersion:
    message: str


def _is_version(value: Any) -> bool:
    return type(value).__name__ == "SemVer"  # k8s_dra.SemVer, without importing the API module here


def bad_version(variable: dict[str, Any]) -> str | None:
    """The error upstream's DeviceMatches returns before evaluating, when a version attribute does not parse."""
    for names in variable["attributes"].values():
        for value in names.values():
            if isinstance(value, _BadVersion):
                return value.message
    return None

"""CEL's standard library (cel-go's common/stdlib): operators, size, type, dyn, the conversions, the string
predicates. Operators are singletons behind an operand trait (the value's own Add, Compare, ... decide, and a
type they do not take is "no such overload"); the conversions and string predicates are bound per overload.
"""

from __future__ import annotations

import math
import re
from typing import Any

from schedcheck.reference.util.cel.registry import overload, singleton
from schedcheck.reference.util.cel.regex import compile_pattern
from schedcheck.reference.util.cel.values import (ADDER, COMPARER, DIVIDER, INDEXER, INT_MAX, INT_MIN,
                                                  MATCHER, MODDER, MULTIPLIER, NEGATER, SIZER, SUBTRACTOR, UINT_MAX,
                                                  CelMap, CelType, ConcatList, Duration, Err, Timestamp, UInt,
                                                  compare_numbers, equal, format_double, is_num, no_such_overload,
                                                  type_name)

OVERFLOW, UOVERFLOW = Err("integer overflow"), Err("unsigned integer overflow")


def checked_int(value: int) -> Any:
    return value if INT_MIN <= value <= INT_MAX else OVERFLOW


def checked_uint(value: int) -> Any:
    return UInt(value) if 0 <= value <= UINT_MAX else UOVERFLOW


def _same_kind(a: Any, b: Any) -> bool:
    return type(a) is type(b) and not isinstance(a, bool)


# -- arithmetic ------------------------------------------------------------------------------------------------
@singleton("_+_", ADDER)
def add(a: Any, b: Any) -> Any:
    from schedcheck.reference.util.cel.libs import timestamps as celtime
    from schedcheck.reference.util.cel.evaluator import MutableList
    if isinstance(a, (Timestamp, Duration)):
        return celtime.add(a, b)
    if isinstance(a, list):
        if not isinstance(b, list):
            return no_such_overload(b)
        if isinstance(a, MutableList):
            a.extend(b)
            return a
        if not b:
            return a
        if not a:
            return b
        return ConcatList(a + b)
    if not _same_kind(a, b):
        return no_such_overload(b)
    if isinstance(a, (str, bytes)):
        return a + b
    if isinstance(a, float):
        return a + b
    return checked_uint(a + b) if isinstance(a, UInt) else checked_int(a + b)


@singleton("_-_", SUBTRACTOR)
def subtract(a: Any, b: Any) -> Any:
    from schedcheck.reference.util.cel.libs import timestamps as celtime
    if isinstance(a, (Timestamp, Duration)):
        return celtime.subtract(a, b)
    if not _same_kind(a, b):
        return no_such_overload(b)
    if isinstance(a, float):
        return a - b
    return checked_uint(a - b) if isinstance(a, UInt) else checked_int(a - b)


@singleton("_*_", MULTIPLIER)
def multiply(a: Any, b: Any) -> Any:
    if not _same_kind(a, b):
        return no_such_overload(b)
    if isinstance(a, float):
        return a * b
    return checked_uint(a * b) if isinstance(a, UInt) else checked_int(a * b)


def _truncated(a: int, b: int) -> int:
    return abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)


@singleton("_/_", DIVIDER)
def divide(a: Any, b: Any) -> Any:
    if not _same_kind(a, b):
        return no_such_overload(b)
    if isinstance(a, float):
        if b == 0:
            return math.copysign(math.inf, a) * math.copysign(1, b) if a != 0 and a == a else math.nan
        return a / b
    if b == 0:
        return Err("division by zero")
    return checked_uint(_truncated(a, b)) if isinstance(a, UInt) else checked_int(_truncated(a, b))


@singleton("_%_", MODDER)
def modulo(a: Any, b: Any) -> Any:
    if not _same_kind(a, b):
        return no_such_overload(b)
    if b == 0:
        return Err("modulus by zero")
    if isinstance(a, UInt):
        return UInt(a % b)
    if a == INT_MIN and b == -1:
        return OVERFLOW
    return a - b * _truncated(a, b)


@singleton("-_", NEGATER)
def negate(a: Any) -> Any:
    if isinstance(a, Duration):
        return checked_duration(-a.nanos)
    if isinstance(a, bool):
        return no_such_overload(a)
    if isinstance(a, float):
        return -a
    return checked_int(-a)


def checked_duration(nanos: int) -> Any:
    from schedcheck.reference.util.cel.libs.timestamps import duration_or_overflow
    return duration_or_overflow(nanos)


@singleton("!_")
def logical_not(a: Any) -> Any:
    return (not a) if isinstance(a, bool) else no_such_overload(a)


@overload("not_strictly_false", non_strict=True)
def not_strictly_false(a: Any) -> Any:
    return a if isinstance(a, bool) else True


# -- ordering ----------------------------------------------------------------------------------------------------
def compare(a: Any, b: Any) -> Any:
    """Comparer.Compare: -1, 0, 1, or an error."""
    if is_num(a):
        if not is_num(b):
            return no_such_overload(b)
        if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
            return Err("NaN values cannot be ordered")
        return compare_numbers(a, b)
    if isinstance(a, (str, bytes, bool)):
        if type(a) is not type(b):
            return no_such_overload(b)
        if isinstance(a, str):  # Go compares strings byte-wise (UTF-8)
            a, b = a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass")
        return (a > b) - (a < b)
    if isinstance(a, (Timestamp, Duration)):
        if type(a) is not type(b):
            return no_such_overload(b)
        return (a.key() > b.key()) - (a.key() < b.key())
    return no_such_overload(b)


def _relation(name: str, accept: tuple[int, ...]) -> None:
    @singleton(name, COMPARER)
    def relation(a: Any, b: Any) -> Any:
        order = compare(a, b)
        return order if isinstance(order, Err) else order in accept


_relation("_<_", (-1,))
_relation("_<=_", (-1, 0))
_relation("_>_", (1,))
_relation("_>=_", (1, 0))


@singleton("_[_]", INDEXER)
def index(a: Any, key: Any) -> Any:
    from schedcheck.reference.util.cel.attributes import qualify_with
    return qualify_with(key, a, False)[0]


@singleton("@in")
def contains(element: Any, container: Any) -> Any:
    if isinstance(container, CelMap):
        return container.has_key(element)
    if isinstance(container, list):
        for item in container:
            if equal(element, item) is True:
                return True
        return False
    return no_such_overload(container)


@singleton("size", SIZER)
def size(value: Any) -> Any:
    from schedcheck.reference.util.cel.values import actual_size
    return actual_size(value)


@singleton("type")
def type_of(value: Any) -> Any:
    return CelType(type_name(value))


@singleton("dyn")
def dyn(value: Any) -> Any:
    return value


@singleton("matches", MATCHER)
def matches(text: Any, pattern: Any) -> Any:
    if not isinstance(pattern, str):
        return no_such_overload(pattern)
    compiled = compile_pattern(pattern)
    return compiled if isinstance(compiled, Err) else compiled.search(text)


def _strings(fn: Any) -> Any:
    def call(a: Any, b: Any) -> Any:
        if not isinstance(a, str):
            return no_such_overload(a)
        if not isinstance(b, str):
            return no_such_overload(b)
        return fn(a, b)
    return call


overload("contains_string", unguarded=True)(_strings(lambda s, sub: sub in s))
overload("starts_with_string", unguarded=True)(_strings(lambda s, p: s.startswith(p)))
overload("ends_with_string", unguarded=True)(_strings(lambda s, p: s.endswith(p)))


# -- conversions -------------------------------------------------------------------------------------------------
def _conversion_error(source: str, target: str) -> Err:
    return Err(f"type conversion error from '{source}' to '{target}'")


overload("int64_to_int64", "uint64_to_uint64", "double_to_double", "string_to_string", "bool_to_bool",
         "bytes_to_bytes", "timestamp_to_timestamp", "duration_to_duration")(lambda v: v)


@overload("uint64_to_int64", "double_to_int64", "string_to_int64")
def to_int(value: Any) -> Any:
    if isinstance(value, str):
        if not re.fullmatch(r"[+-]?[0-9]+", value) or not INT_MIN <= int(value) <= INT_MAX:
            return _conversion_error("string", "int")
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value) or not -9.223372036854776e18 < value < 9.223372036854776e18:
            return OVERFLOW
        return int(value)
    return checked_int(int(value))


@overload("int64_to_uint64", "double_to_uint64", "string_to_uint64")
def to_uint(value: Any) -> Any:
    if isinstance(value, str):
        if not re.fullmatch(r"[0-9]+", value) or int(value) > UINT_MAX:
            return _conversion_error("string", "uint")
        return UInt(int(value))
    if isinstance(value, float):
        if not math.isfinite(value) or not 0 <= value < 1.8446744073709552e19:
            return UOVERFLOW
        return UInt(int(value))
    return checked_uint(int(value))


_GO_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_GO_HEX = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+")
_GO_SPECIAL = re.compile(r"[+-]?inf(?:inity)?|nan", re.IGNORECASE)


def _underscores_ok(text: str) -> bool:
    """Go's rule: an underscore only between digits, or between a base prefix and a digit."""
    body = text[1:] if text[:1] in "+-" else text
    hexadecimal = body[:2].lower() == "0x"
    last = "0" if body[:2].lower() in ("0x", "0o", "0b") else "^"
    for char in body[2:] if last == "0" else body:
        if char.isdigit() or (hexadecimal and char.lower() in "abcdef"):
            last = "0"
        elif char == "_":
            if last != "0":
                return False
            last = "_"
        elif last == "_":
            return False
        else:
            last = "!"
    return last != "_"


def go_parse_float(text: str) -> float | None:
    """strconv.ParseFloat(text, 64): decimal or hexadecimal, Go's underscores, inf/infinity/nan; None if Go fails."""
    if _GO_SPECIAL.fullmatch(text):
        return float(text)
    if "_" in text:
        if not _underscores_ok(text):
            return None
        text = text.replace("_", "")
    try:
        if _GO_DECIMAL.fullmatch(text):
            result = float(text)
        elif _GO_HEX.fullmatch(text):
            result = float.fromhex(text)
        else:
            return None
    except OverflowError:
        return None
    return None if math.isinf(result) else result  # out of range: Go's ParseFloat fails


@overload("int64_to_double", "uint64_to_double", "string_to_double")
def to_double(value: Any) -> Any:
    if isinstance(value, str):
        result = go_parse_float(value)
        return _conversion_error("string", "double") if result is None else result
    return float(value)


@overload("int64_to_string", "uint64_to_string", "double_to_string", "bool_to_string", "bytes_to_string")
def to_string(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return format_double(value)
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return Err("invalid UTF-8 in bytes, cannot convert to string")


_BOOLS = {"1": True, "t": True, "T": True, "true": True, "TRUE": True, "True": True,
          "0": False, "f": False, "F": False, "false": False, "FALSE": False, "False": False}


@overload("string_to_bool")
def to_bool(value: Any) -> Any:
    return _BOOLS[value] if value in _BOOLS else _conversion_error("string", "bool")


@overload("string_to_bytes")
def to_bytes(value: Any) -> Any:
    return value.encode("utf-8", "surrogatepass")

"""Kubernetes' own CEL libraries on values of its types: semantic versions (blang/semver, as the semver library
parses them), Quantities (apimachinery's int64 amount or decimal, which isInteger and asInteger answer from),
and the regex library's find and findAll.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from schedcheck.reference.quantity import Quantity
from schedcheck.reference.util.cel.regex import compile_pattern
from schedcheck.reference.util.cel.registry import overload
from schedcheck.reference.util.cel.values import INT_MAX, INT_MIN, UINT_MAX, CelQuantity, Err, Semver, no_such_overload


class SemverError(ValueError):
    """blang/semver refuses the text (its error message)."""


_ALPHANUM = re.compile(r"[0-9A-Za-z-]*")


def _number(text: str, what: str) -> int:
    """One of major, minor, patch as blang/semver reads it (its error texts)."""
    if not text.isdigit() and text != "":
        raise SemverError(f'Invalid character(s) found in {what} number "{text}"')
    if len(text) > 1 and text[0] == "0":
        raise SemverError(f'{what.capitalize()} number must not contain leading zeroes "{text}"')
    if text == "" or int(text) > UINT_MAX:
        problem = "invalid syntax" if text == "" else "value out of range"
        raise SemverError(f'strconv.ParseUint: parsing "{text}": {problem}')
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
                raise SemverError("short version cannot contain PreRelease/Build meta data")
            parts += ["0"] * (3 - len(parts))
        text = ".".join(parts)
    if text == "":
        raise SemverError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
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
            raise SemverError("Prerelease is empty")
        if item.isdigit():
            if len(item) > 1 and item[0] == "0":
                raise SemverError(f'Numeric PreRelease version must not contain leading zeroes "{item}"')
            if int(item) > UINT_MAX:
                raise SemverError(f'strconv.ParseUint: parsing "{item}": value out of range')
        elif not _ALPHANUM.fullmatch(item):
            raise SemverError(f'Invalid character(s) found in prerelease "{item}"')
        identifiers.append(item)
    for item in build.split(".") if build is not None else []:
        if item == "":
            raise SemverError("Build meta data is empty")
        if not _ALPHANUM.fullmatch(item):
            raise SemverError(f'Invalid character(s) found in build meta data "{item}"')
    return Semver(major, minor, patch, tuple(identifiers))


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


def as_int64(q: CelQuantity) -> int | None:
    if q.amount is None or q.amount[1] < 0:
        return None
    return _scaled(*q.amount)


def cel_quantity(value: Quantity, text: str | None = None) -> CelQuantity:
    """A capacity as the scheduler decodes it: `text` if given, else the canonical form the API server
    stores (which is what an informer hands the scheduler)."""
    return CelQuantity(value, _int64_amount(str(value) if text is None else text))


# -- semver --------------------------------------------------------------------------------------------------------
def _to_semver(text: Any, normalize: Any = False) -> Any:
    if not isinstance(text, str) or not isinstance(normalize, bool):
        return no_such_overload(text)
    try:
        return parse_semver(text, normalize)
    except SemverError as err:
        return Err(str(err))


overload("string_to_semver", "string_bool_to_semver")(_to_semver)
overload("is_semver_string", "is_semver_string_bool")(lambda *args: not isinstance(_to_semver(*args), Err))


def _versions(fn: Any) -> Any:
    def call(a: Any, b: Any) -> Any:
        if not isinstance(a, Semver) or not isinstance(b, Semver):
            return no_such_overload(a)
        order = (a.key() > b.key()) - (a.key() < b.key())
        return fn(order)
    return call


overload("semver_is_greater_than")(_versions(lambda order: order > 0))
overload("semver_is_less_than")(_versions(lambda order: order < 0))
overload("semver_compare_to")(_versions(lambda order: order))
overload("semver_major")(lambda v: v.major)
overload("semver_minor")(lambda v: v.minor)
overload("semver_patch")(lambda v: v.patch)


# -- quantity ------------------------------------------------------------------------------------------------------
_QUANTITY_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


@overload("string_to_quantity")
def to_quantity(text: str) -> Any:
    try:
        if text != text.strip():
            raise ValueError("spaces")
        return cel_quantity(Quantity.parse(text), text)
    except ValueError:
        return Err(_QUANTITY_ERROR)


overload("is_quantity_string")(lambda text: not isinstance(to_quantity(text), Err))


def _quantities(fn: Any) -> Any:
    def call(a: Any, b: Any) -> Any:
        order = (a.key() > b.key()) - (a.key() < b.key())
        return fn(order)
    return call


overload("quantity_is_greater_than")(_quantities(lambda order: order > 0))
overload("quantity_is_less_than")(_quantities(lambda order: order < 0))
overload("quantity_compare_to")(_quantities(lambda order: order))
overload("quantity_sign")(lambda q: (q.key() > 0) - (q.key() < 0))
overload("quantity_get_float")(lambda q: float(q.key()))
overload("quantity_is_integer")(lambda q: as_int64(q) is not None)


@overload("quantity_get_int")
def as_integer(q: CelQuantity) -> Any:
    value = as_int64(q)
    return Err("cannot convert value to integer") if value is None else value


def _arith(sign: int) -> Any:
    def call(recv: CelQuantity, other: Any) -> Any:
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


overload("quantity_add", "quantity_add_int")(_arith(1))
overload("quantity_sub", "quantity_sub_int")(_arith(-1))


# -- regex ---------------------------------------------------------------------------------------------------------
def _regex(pattern: str) -> Any:
    compiled = compile_pattern(pattern)
    return Err(f"Illegal regex: {compiled.message}") if isinstance(compiled, Err) else compiled


@overload("string_find_string")
def find(text: str, pattern: str) -> Any:
    compiled = _regex(pattern)
    return compiled if isinstance(compiled, Err) else compiled.find(text)


@overload("string_find_all_string")
def find_all(text: str, pattern: str, limit: int = -1) -> Any:
    compiled = _regex(pattern)
    return compiled if isinstance(compiled, Err) else compiled.find_all(text, limit)


overload("string_find_all_string_int", varargs=True)(find_all)


# -- DRA's `includes` (StoredExpressions only: DRAListTypeAttributes gates it for new selectors) ------------------
@overload("dra_includes_dyn_dyn")
def includes(target: Any, item: Any) -> Any:
    """includesFunc: a list holds the item (at most 48 values are looked at), a scalar equals it."""
    from schedcheck.reference.util.cel.values import equal
    if isinstance(target, list):
        for i, value in enumerate(target):
            if i >= 48:
                return Err("'includes' function cannot be applied to lists longer than 48 values")
            if equal(value, item) is True:
                return True
        return False
    return equal(target, item) is True

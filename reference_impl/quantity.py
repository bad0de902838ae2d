"""An exact Kubernetes resource.Quantity (k8s.io/apimachinery pkg/api/resource).

The value is held as a Fraction. Parsing follows the apimachinery scanner:
sign, digits, optional fraction, then a suffix that is a decimal SI suffix,
a binary SI suffix or a decimal exponent. As there, a parsed value finer than
one nano-unit is rounded away from zero to the next nano-unit, and a binary
value is capped at 2^63-1. One deliberate difference: apimachinery accepts a
number part with no digit at all ("m", ".", "-" all parse as 0); here that is
rejected, since the API server never prints such a string.
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction
from functools import total_ordering

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"

_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT = {e: s for s, e in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_EXPONENT = {e: s for s, e in _BINARY_SUFFIXES.items()}

_SYNTAX = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)")
_EXPONENT_DIGITS = re.compile(r"[+-]?[0-9]+")
_NANO = 10**9
_MAX_BINARY = 2**63 - 1
# Beyond this the value is either far below one nano-unit or absurdly large;
# bounding it keeps Fraction arithmetic and str() cheap.
_MAX_EXPONENT = 1000


def _round_to_nano(value: Fraction) -> Fraction:
    """Round away from zero to a whole number of nano-units."""
    scaled = value * _NANO
    if scaled.denominator == 1:
        return value
    magnitude = math.ceil(abs(scaled))
    return Fraction(magnitude if value > 0 else -magnitude, _NANO)


def _away_from_zero(value: Fraction) -> int:
    return math.ceil(value) if value >= 0 else math.floor(value)


@total_ordering
class Quantity:
    """An exact quantity; compare and hash by value, print canonically."""

    __slots__ = ("_value", "_format", "_int", "_milli")  # _int, _milli: value() and milli_value(), once

    def __init__(self, value: int | Fraction = 0, fmt: str = DECIMAL_SI) -> None:
        if fmt not in (DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT):
            raise ValueError(f"unknown quantity format {fmt!r}")
        self._value = _round_to_nano(Fraction(value))
        self._format = fmt
        self._int: int | None = None
        self._milli: int | None = None

    def __copy__(self) -> Quantity:  # immutable: a copy is the same value
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Quantity:
        return self

    @classmethod
    def parse(cls, text: str | int | float | Quantity) -> Quantity:
        """Parse a quantity as the API server does; raise ValueError otherwise."""
        if isinstance(text, Quantity):
            return text
        if isinstance(text, bool) or not isinstance(text, (str, int, float)):
            raise ValueError(f"{text!r} is not a Kubernetes quantity (expected a string or a number)")
        if isinstance(text, float) and not math.isfinite(text):
            raise ValueError(f"{text!r} is not a Kubernetes quantity")
        raw = str(text) if isinstance(text, int) else repr(text) if isinstance(text, float) else text
        try:
            return cls._parse_string(raw.strip())
        except ValueError as err:
            raise ValueError(f'"{raw}" is not a Kubernetes quantity ({err})') from None

    @classmethod
    def _parse_string(cls, text: str) -> Quantity:
        return _parse_cached(text) if cls is Quantity else cls._parse_uncached(text)

    @classmethod
    def _parse_uncached(cls, text: str) -> Quantity:
        match = _SYNTAX.fullmatch(text)
        if not match:
            raise ValueError("expected a number with an optional suffix, such as 500m, 4Gi or 1e3")
        sign, whole, fraction, suffix = match.groups()
        fraction = fraction or ""
        if not whole and not fraction:
            raise ValueError("no digits")
        base, exponent, fmt = cls._interpret_suffix(suffix)
        mantissa = Fraction(int(whole or "0") * 10 ** len(fraction) + int(fraction or "0"), 10 ** len(fraction))
        if sign == "-":
            mantissa = -mantissa
        if base == 10 and exponent < -_MAX_EXPONENT:
            value = Fraction(0) if mantissa == 0 else Fraction(1 if mantissa > 0 else -1, _NANO)
        elif base == 10 and exponent > _MAX_EXPONENT:
            raise ValueError("exponent too large")
        else:
            value = _round_to_nano(mantissa * Fraction(base) ** exponent)
        if fmt == BINARY_SI:
            if abs(value) > _MAX_BINARY:
                value = _MAX_BINARY if value > 0 else -_MAX_BINARY
            if 0 < abs(value) < 1:
                fmt = DECIMAL_SI
        return cls(value, fmt)

    @staticmethod
    def _interpret_suffix(suffix: str) -> tuple[int, int, str]:
        if suffix in _DECIMAL_SUFFIXES:
            return 10, _DECIMAL_SUFFIXES[suffix], DECIMAL_SI
        if suffix in _BINARY_SUFFIXES:
            return 2, _BINARY_SUFFIXES[suffix], BINARY_SI
        if len(suffix) > 1 and suffix[0] in "eE" and _EXPONENT_DIGITS.fullmatch(suffix[1:]):
            exponent = int(suffix[1:])
            if abs(exponent) >= 2**31:
                raise ValueError("exponent too large")
            return 10, exponent, DECIMAL_EXPONENT
        raise ValueError(f"unknown suffix {suffix!r}")

    def as_fraction(self) -> Fraction:
        return self._value

    @property
    def format(self) -> str:
        return self._format

    def is_negative(self) -> bool:
        return self._value < 0

    def is_zero(self) -> bool:
        return self._value == 0

    def value(self) -> int:
        """Kubernetes Value(): the integer value, rounded away from zero."""
        if self._int is None:
            self._int = _away_from_zero(self._value)
        return self._int

    def milli_value(self) -> int:
        """Kubernetes MilliValue(): the value in thousandths, rounded away from zero."""
        if self._milli is None:
            self._milli = _away_from_zero(self._value * 1000)
        return self._milli

    def __str__(self) -> str:
        value = self._value
        if value == 0:
            return "0"
        sign = "-" if value < 0 else ""
        magnitude = abs(value)
        if self._format == BINARY_SI and magnitude >= 1024 and magnitude.denominator == 1:
            number, exponent = int(magnitude), 0
            while number % 1024 == 0 and exponent < 60:
                number //= 1024
                exponent += 10
            return f"{sign}{number}{_BINARY_BY_EXPONENT.get(exponent, '')}"
        # Decimal forms: an integer mantissa and an exponent that is a multiple of 3.
        number, exponent = int(magnitude * _NANO), -9
        while number % 10 == 0:
            number //= 10
            exponent += 1
        shift = exponent % 3
        number, exponent = number * 10**shift, exponent - shift
        if self._format == DECIMAL_EXPONENT:
            return f"{sign}{number}" + (f"e{exponent}" if exponent else "")
        if exponent > 18:
            number, exponent = number * 10 ** (exponent - 18), 18
        return f"{sign}{number}{_DECIMAL_BY_EXPONENT[exponent]}"

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return self._value == other._value
        return NotImplemented

    def __lt__(self, other: Quantity) -> bool:
        if isinstance(other, Quantity):
            return self._value < other._value
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._value)


@functools.lru_cache(maxsize=8192)
def _parse_cached(text: str) -> Quantity:
    """Quantities are immutable and scenarios spell the same few values again and again ("1", "2Gi")."""
    return Quantity._parse_uncached(text)

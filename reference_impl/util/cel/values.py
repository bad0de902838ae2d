"""Runtime values of the CEL interpreter, as cel-go represents them.

Python's bool, int, float, str, bytes and None are CEL's bool, int, double, string, bytes and null; `UInt` is
uint. A list is a Python list (`ConcatList` when `+` built it, which compares differently); a map is a `CelMap`.
An evaluation error is a value, `Err`, that flows through the interpreter as cel-go's error values do (the
logical operators absorb it); only what cel-go reports as a panic or a cancellation is a Python exception.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterator

INT_MIN, INT_MAX, UINT_MAX = -(2**63), 2**63 - 1, 2**64 - 1


class UInt(int):
    """A CEL uint (a Python int is CEL's int)."""

    def __repr__(self) -> str:
        return f"{int(self)}u"


@dataclass(frozen=True)
class Err:
    """An error value (cel-go's *types.Err); `message` is the text the evaluation ends with."""
    message: str


def no_such_overload(value: Any = None) -> Any:
    """types.MaybeNoSuchOverloadErr: the value itself when it is an error, else "no such overload"."""
    return value if isinstance(value, Err) else Err("no such overload")


class GoPanic(Exception):
    """A Go runtime panic inside cel-go or a Kubernetes library; cel-go reports "internal error: <text>"."""


class CostLimitExceeded(Exception):
    """The runtime cost tracker passed its limit."""


@dataclass(frozen=True)
class CelType:
    """A type value: `type(x)`, or an identifier naming a type."""
    name: str


@dataclass(frozen=True)
class Optional:
    """cel-go's optional value (OptionalTypes)."""
    present: bool
    value: Any = None


NONE = Optional(False)


class ConcatList(list):
    """A list made by `+` of two non-empty lists (cel-go's concatList: equality reports element errors)."""


class CelMap:
    """A CEL map: keys as cel-go's Go map holds them (1, 1u and 1.0 are three keys), insertion order kept."""

    __slots__ = ("_items",)

    def __init__(self, pairs: Any = ()) -> None:
        self._items: dict[tuple[str, Any], tuple[Any, Any]] = {}
        for key, value in pairs:
            self._items[hash_key(key)] = (key, value)

    def __len__(self) -> int:
        return len(self._items)

    def keys(self) -> list[Any]:
        return [k for k, _ in self._items.values()]

    def items(self) -> list[tuple[Any, Any]]:
        return list(self._items.values())

    def __iter__(self) -> Iterator[Any]:
        return iter(self.keys())

    def find(self, key: Any) -> tuple[bool, Any]:
        """refValMapAccessor.Find: the key itself, then a number's lossless int or uint twin."""
        found = self._items.get(hash_key(key))
        if found is not None:
            return True, found[1]
        for other in _numeric_twins(key):
            found = self._items.get(hash_key(other))
            if found is not None:
                return True, found[1]
        return False, None

    def has_key(self, key: Any) -> bool:
        """Whether the key is there (`in`: a DefaultMap's missing domain is not)."""
        return CelMap.find(self, key)[0]

    def with_item(self, key: Any, value: Any) -> CelMap:
        out = CelMap()
        out._items = dict(self._items)
        out._items[hash_key(key)] = (key, value)
        return out

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in self.items()) + "}"


class DefaultMap(CelMap):
    """device.attributes and device.capacity: a domain the device lacks reads as an empty map."""

    __slots__ = ()

    def find(self, key: Any) -> tuple[bool, Any]:
        found, value = super().find(key)
        return (True, value) if found else (True, CelMap())


def _numeric_twins(key: Any) -> list[Any]:
    if isinstance(key, bool):
        return []
    if isinstance(key, float):
        out: list[Any] = []
        if math.isfinite(key) and key == int(key):
            if INT_MIN <= key < 2.0**63:
                out.append(int(key))
            elif 0 <= key < 2.0**64:
                out.append(UInt(int(key)))
        return out[:1]
    if isinstance(key, UInt):
        return [int(key)] if key <= INT_MAX else []
    if isinstance(key, int):
        return [UInt(key)] if key >= 0 else []
    return []


def hash_key(value: Any) -> tuple[str, Any]:
    """How a Go map keyed by ref.Val tells keys apart: by type, then by value."""
    if isinstance(value, (list, CelMap)):
        return ("unhashable", id(value))
    return (type_name(value), value.key() if hasattr(value, "key") else value)


# -- Kubernetes' and the standard library's opaque values ------------------------------------------------------
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
class CelQuantity:
    """A Kubernetes Quantity as CEL sees it: the value, and how apimachinery holds it, an int64 amount
    (value, scale) or an arbitrary-precision decimal (None); isInteger and asInteger answer from the latter."""
    value: Any  # schedcheck.reference.quantity.Quantity
    amount: tuple[int, int] | None
    boxed: bool = False  # a result of add() or sub(), which Kubernetes returns by pointer

    def key(self) -> Fraction:
        return self.value.as_fraction()


@dataclass(frozen=True)
class Timestamp:
    """A google.protobuf.Timestamp as cel-go holds it (a Go time.Time): Unix seconds (rounded down), the
    nanoseconds past them, and the zone offset it prints in (a parsed "+02:00" stays; the getters use UTC)."""
    seconds: int
    nanos: int = 0
    offset: int = field(default=0, compare=False)

    def key(self) -> tuple[int, int]:
        return (self.seconds, self.nanos)


@dataclass(frozen=True)
class Duration:
    """A google.protobuf.Duration as cel-go holds it (a Go time.Duration): nanoseconds, within int64."""
    nanos: int

    def key(self) -> int:
        return self.nanos


@dataclass(frozen=True)
class IP:
    """Kubernetes' net.IP (a Go netip.Addr): 4 or 16 address bytes, a zone never (the library refuses one)."""
    packed: bytes
    text: str = field(compare=False)
    mapped4: bool = False  # an IPv4-mapped IPv6 address (::ffff:a.b.c.d) stays IPv6

    def key(self) -> bytes:
        return self.packed + (b"\x01" if self.mapped4 else b"")


@dataclass(frozen=True)
class CIDR:
    """Kubernetes' net.CIDR (a Go netip.Prefix): the address as written and the prefix length."""
    ip: IP
    bits: int

    def key(self) -> tuple[bytes, int]:
        return (self.ip.key(), self.bits)


@dataclass(frozen=True)
class URL:
    """Kubernetes' URL (a parsed Go net/url.URL); `text` is what URL.String() prints."""
    scheme: str
    opaque: str
    user: str | None
    host: str
    path: str
    raw_path: str
    force_query: bool
    raw_query: str
    fragment: str
    raw_fragment: str
    text: str = field(compare=False, default="")

    def key(self) -> str:
        return self.text


@dataclass(frozen=True)
class NamedFormat:
    """Kubernetes' format library: a named validation (its regular expression size bounds the cost)."""
    name: str
    max_regex_size: int

    def key(self) -> str:
        return self.name


# -- type names and traits ------------------------------------------------------------------------------------
_OPAQUE_NAMES = {Semver: "kubernetes.Semver", CelQuantity: "kubernetes.Quantity",
                 Timestamp: "google.protobuf.Timestamp", Duration: "google.protobuf.Duration", IP: "net.IP",
                 CIDR: "net.CIDR", URL: "kubernetes.URL", NamedFormat: "kubernetes.NamedFormat",
                 Optional: "optional_type", CelType: "type", Err: "*types.Err"}


def type_name(value: Any) -> str:
    """The runtime type name cel-go prints (ref.Type.TypeName)."""
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
        return "null_type"
    if isinstance(value, list):
        return "list"
    if isinstance(value, CelMap):
        return "map"
    return _OPAQUE_NAMES.get(type(value), type(value).__name__)


def is_num(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


ADDER, COMPARER, CONTAINER, DIVIDER, INDEXER, ITERABLE, MATCHER, MODDER, MULTIPLIER, NEGATER, RECEIVER, SIZER, \
    SUBTRACTOR = ("adder", "comparer", "container", "divider", "indexer", "iterable", "matcher", "modder",
                  "multiplier", "negater", "receiver", "sizer", "subtractor")
_TRAITS = {
    "bool": {COMPARER, NEGATER},
    "int": {ADDER, COMPARER, DIVIDER, MODDER, MULTIPLIER, NEGATER, SUBTRACTOR},
    "uint": {ADDER, COMPARER, DIVIDER, MODDER, MULTIPLIER, SUBTRACTOR},
    "double": {ADDER, COMPARER, DIVIDER, MULTIPLIER, NEGATER, SUBTRACTOR},
    "string": {ADDER, COMPARER, MATCHER, RECEIVER, SIZER},
    "bytes": {ADDER, COMPARER, SIZER},
    "list": {ADDER, CONTAINER, INDEXER, ITERABLE, SIZER, "lister"},
    "map": {CONTAINER, INDEXER, ITERABLE, SIZER},
    "google.protobuf.Timestamp": {ADDER, COMPARER, RECEIVER, SUBTRACTOR},
    "google.protobuf.Duration": {ADDER, COMPARER, NEGATER, RECEIVER, SUBTRACTOR},
}


def has_trait(value: Any, trait: str) -> bool:
    return trait in _TRAITS.get(type_name(value), ())


def actual_size(value: Any) -> int:
    """cel-go's actualSize for cost: a Sizer's size (an IP's and a CIDR's in bytes), an optional's value's, else 1."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, (bytes, list, CelMap)):
        return len(value)
    if isinstance(value, IP):
        return len(value.packed)
    if isinstance(value, CIDR):
        return math.ceil(value.bits / 8)
    if isinstance(value, Optional) and value.present:
        return actual_size(value.value)
    return 1


def is_zero(value: Any) -> bool:
    """IsZeroValue, as optional.ofNonZeroValue asks it."""
    if value is None or value is False:
        return True
    if isinstance(value, (str, bytes, list, CelMap)):
        return len(value) == 0
    if is_num(value):
        return value == 0
    if isinstance(value, Timestamp):
        return value.seconds == -62135596800 and value.nanos == 0
    if isinstance(value, Duration):
        return value.nanos == 0
    return False


# -- equality and ordering ------------------------------------------------------------------------------------
def compare_numbers(a: Any, b: Any) -> int:
    """cel-go's cross-type numeric comparison (neither is NaN): ints and uints exactly, an integer with a
    double in double precision, past the integer type's range by sign."""
    if isinstance(a, float) != isinstance(b, float):
        flip = isinstance(b, float)
        d, i = (b, a) if flip else (a, b)
        low, high = (0.0, 1.8446744073709552e19) if isinstance(i, UInt) else (-9.223372036854776e18, 9.223372036854776e18)
        order = -1 if d < low else 1 if d > high else (d > float(i)) - (d < float(i))
        return -order if flip else order
    return (a > b) - (a < b)


def equal(a: Any, b: Any) -> Any:
    """types.Equal: True, False, or an error value (Kubernetes' types refuse another type)."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, (Semver, CelQuantity, URL, NamedFormat)):
        if type(a) is not type(b) or isinstance(b, CelQuantity) and b.boxed:
            return no_such_overload(b)
        return a.key() == b.key()
    if isinstance(a, (IP, CIDR)):
        if type(a) is not type(b):
            return no_such_overload(b)
        return a.key() == b.key()
    if is_num(a):
        if not is_num(b):
            return False
        if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
            return False
        return compare_numbers(a, b) == 0
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            return False
        error = None
        for x, y in zip(a, b):
            same = equal(x, y)
            if same is False:
                return False
            if isinstance(same, Err) and error is None:
                error = same
        return error if error is not None and isinstance(a, ConcatList) else True
    if isinstance(a, CelMap):
        if not isinstance(b, CelMap) or len(a) != len(b):
            return False
        for key, value in a.items():
            found, other = b.find(key)
            if not found or equal(value, other) is False:
                return False
        return True
    if isinstance(a, Optional):
        if not isinstance(b, Optional):
            return False
        if not a.present or not b.present:
            return a.present == b.present
        return equal(a.value, b.value)
    if isinstance(a, CelType):
        return isinstance(b, CelType) and a.name == b.name
    if isinstance(a, (Timestamp, Duration)):
        return type(a) is type(b) and a.key() == b.key()
    return type(a) is type(b) and a == b


# -- how Go prints values in cel-go's error messages ----------------------------------------------------------
_GO_TYPES = {"bool": "types.Bool", "int": "types.Int", "uint": "types.Uint", "double": "types.Double",
             "string": "types.String", "bytes": "types.Bytes", "null_type": "types.Null", "list": "*types.baseList",
             "map": "*types.baseMap", "type": "*types.Type", "optional_type": "*types.Optional",
             "google.protobuf.Timestamp": "types.Timestamp", "google.protobuf.Duration": "types.Duration",
             "kubernetes.Semver": "cel.Semver", "kubernetes.Quantity": "cel.Quantity", "net.IP": "cel.IP",
             "net.CIDR": "cel.CIDR", "kubernetes.URL": "cel.URL", "kubernetes.NamedFormat": "cel.Format"}


def go_type(value: Any) -> str:
    """%T of a CEL value."""
    if isinstance(value, CelQuantity) and value.boxed:
        return "*cel.Quantity"
    return _GO_TYPES.get(type_name(value), type_name(value))


def format_double(value: float) -> str:
    """Go's %g, shortest (strconv.FormatFloat(d, 'g', -1, 64), and %v): exponent form below 1e-4 or from 1e6."""
    from decimal import Decimal
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


def go_quote(text: str) -> str:
    """strconv.Quote: Go's double-quoted string literal (printable runes kept, others escaped)."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in "\a\b\f\n\r\t\v":
            out.append({"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
                        "\v": "\\v"}[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8 (carried as a surrogate escape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif not ch.isprintable() and ch != " ":
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "".join(out) + '"'


def go_value(value: Any) -> str:
    """%v of a CEL value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return format_double(value)
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return "[" + " ".join(str(b) for b in value) + "]"
    if value is None:
        return "NULL_VALUE"
    if isinstance(value, Err):
        return value.message
    if isinstance(value, CelType):
        return value.name
    if isinstance(value, list):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    return str(value)

"""The strings extension's `format` (version 1 formatter, locale en_US, as Kubernetes' environment has it):
%s %d %f %e %b %x %X %o and %%, precision for %f. Numbers for %f and %e go through golang.org/x/text's
English printer, as cel-go's do: %f groups thousands with commas, %e writes "1.234500×10⁰³" (and its
precision is taken as a width), infinities print as ∞. A constant format string with a list literal is checked
when the expression is compiled.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, Callable

from schedcheck.reference.util.cel import typesys as ty
from schedcheck.reference.util.cel.nodes import Call, ListLit, Lit, MapLit
from schedcheck.reference.util.cel.errors import CompileError
from schedcheck.reference.util.cel.registry import overload
from schedcheck.reference.util.cel.values import CelMap, CelType, Duration, Err, Timestamp, UInt, go_quote, type_name

_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


class FormatError(ValueError):
    pass


def _to_string(value: Any) -> str:
    """FormatString: the %s text of a value."""
    from schedcheck.reference.util.cel.libs.std import to_string
    from schedcheck.reference.util.cel.libs.timestamps import format_duration, format_timestamp
    if isinstance(value, list):
        return _list(value)
    if isinstance(value, CelMap):
        return _map(value)
    if value is None:
        return "null"
    if isinstance(value, Timestamp):
        return format_timestamp(value)
    if isinstance(value, Duration):
        return format_duration(value.nanos)
    if isinstance(value, CelType):
        return value.name
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float, bytes)):
        return to_string(value)
    raise FormatError("string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, "
                      f"durations, and timestamps, was given {type_name(value)}")


def _member(value: Any) -> str:
    """A list element or map value: formatted by its type, then quoted as CEL would write it."""
    if isinstance(value, float):
        text = "+Inf" if value == math.inf else "-Inf" if value == -math.inf else "NaN" if value != value \
            else f"{value:.6f}"
        return go_quote(text) if not math.isfinite(value) else text
    if isinstance(value, Timestamp):
        return f'timestamp("{_to_string(value)}")'
    if isinstance(value, Duration):
        return f'duration("{_to_string(value)}")'
    if isinstance(value, (int, bool, str, bytes, list, CelMap, CelType)) or value is None:
        text = _decimal(value) if isinstance(value, int) and not isinstance(value, bool) else _to_string(value)
        if isinstance(value, str):
            return go_quote(text)
        if isinstance(value, bytes):
            return "b" + go_quote(text)
        return text
    raise FormatError(f"no formatting function for {type_name(value)}")


def _list(items: list[Any]) -> str:
    return "[" + ", ".join(_member(v) for v in items) + "]"


def _map(items: CelMap) -> str:
    pairs = []
    for key, value in items.items():
        if isinstance(key, (str, bool)):
            shown = _to_string(key)
        elif isinstance(key, int):
            shown = _decimal(key)
        else:
            raise FormatError(f"no formatting function for map key of type {type_name(key)}")
        pairs.append((go_quote(shown) if isinstance(key, str) else shown, _member(value)))
    pairs.sort(key=lambda p: p[0].encode("utf-8"))
    return "{" + ", ".join(f"{k}:{v}" for k, v in pairs) + "}"


def _decimal(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormatError(f"decimal clause can only be used on integers, was given {type_name(value)}")
    return str(int(value))


def _float_arg(value: Any, clause: str) -> float:
    if isinstance(value, str) and value in ("NaN", "Infinity", "-Infinity"):
        return float(value.replace("Infinity", "inf"))
    if not isinstance(value, float):
        raise FormatError(f"{clause} clause can only be used on doubles, was given {type_name(value)}")
    return value


def _special(value: float) -> str | None:
    if value != value:
        return "NaN"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    return None


def _fixed(precision: int) -> Callable[[Any], str]:
    def run(value: Any) -> str:
        number = _float_arg(value, "fixed-point")
        special = _special(number)
        if special is not None:
            return special
        return format(Decimal(abs(number) if number == 0 else number), f",.{precision}f")
    return run


def _scientific(width: int) -> Callable[[Any], str]:
    def run(value: Any) -> str:
        number = _float_arg(value, "scientific")
        special = _special(number)
        if special is None:
            mantissa, _, exponent = f"{abs(number):.6e}".partition("e")
            digits = f"{abs(int(exponent)):02d}"
            special = ("-" if number < 0 else "") + f"{mantissa}×10" + \
                (("-" if int(exponent) < 0 else "") + digits).translate(_SUPERSCRIPT)
        return special.rjust(width)
    return run


def _binary(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if not isinstance(value, int):
        raise FormatError(f"only integers and bools can be formatted as binary, was given {type_name(value)}")
    return format(int(value), "b")


def _hex(upper: bool) -> Callable[[Any], str]:
    def run(value: Any) -> str:
        if isinstance(value, str):
            text = value.encode("utf-8", "surrogatepass").hex()
        elif isinstance(value, bytes):
            text = value.hex()
        elif isinstance(value, int) and not isinstance(value, bool):
            text = format(int(value), "x")
        else:
            raise FormatError("only integers, byte buffers, and strings can be formatted as hex, was given "
                              f"{type_name(value)}")
        return text.upper() if upper else text
    return run


def _octal(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormatError(f"octal clause can only be used on integers, was given {type_name(value)}")
    return format(int(value), "o")


def _clause(text: str) -> tuple[int, str, int | None]:
    """parseFormattingClause: (characters read, verb, precision)."""
    i, precision = 0, None
    if text[:1] == ".":
        i = 1
        digits = ""
        while True:
            if i >= len(text):
                raise FormatError("could not parse formatting clause: error while parsing precision: could not "
                                  "find end of precision specifier")
            if not (text[i].isascii() and text[i].isdigit()):
                break
            digits += text[i]
            i += 1
        if not digits:
            raise FormatError('could not parse formatting clause: error while parsing precision: error while '
                              'converting precision to integer: strconv.Atoi: parsing "": invalid syntax')
        precision = int(digits)
    verb = text[i]
    if verb not in "sdfebxXo":
        raise FormatError(f'could not parse formatting clause: unrecognized formatting clause "{verb}"')
    return i + 1, verb, precision


def format_string(template: str, args: list[Any],
                  check: Callable[[str, int, int | None], None] | None = None) -> tuple[str, int]:
    """parseFormatString: the text and how many arguments it asked for (with `check`, the compile-time
    checker's callbacks instead of formatting)."""
    out, i, index = [], 0, 0
    data = template
    while i < len(data):
        if data[i] != "%":
            out.append(data[i])
            i += 1
            continue
        if data[i + 1:i + 2] == "%":
            out.append("%")
            i += 2
            continue
        if check is None and index >= len(args):
            raise FormatError(f"index {index} out of range")
        if i + 1 >= len(data):
            raise FormatError("unexpected end of string")
        if index >= len(args):
            raise FormatError(f"index {index} out of range")
        read, verb, precision = _clause(data[i + 1:])
        if check is not None:
            check(verb, index, precision)
        else:
            value = args[index]
            try:
                out.append(_VERBS[verb](value) if verb not in "feXx" else
                           _fixed(6 if precision is None else precision)(value) if verb == "f" else
                           _scientific(6 if precision is None else precision)(value) if verb == "e" else
                           _hex(verb == "X")(value))
            except FormatError as err:
                raise FormatError(f"error during formatting: {err}") from err
        i += 1 + read
        index += 1
    return "".join(out), index


_VERBS: dict[str, Callable[[Any], str]] = {"s": _to_string, "d": _decimal, "b": _binary, "o": _octal}


@overload("string_format", varargs=True)
def string_format(template: str, args: list[Any]) -> Any:
    try:
        return format_string(template, list(args))[0]
    except FormatError as err:
        return Err(str(err))


# -- the compile-time check (stringFormatValidator) -----------------------------------------------------------------
_STRINGABLE = ("list", "map", "int", "uint", "double", "bool", "string", "timestamp", "bytes", "duration", "type",
               "null_type")


def validate_format_calls(checked: Any) -> None:
    from schedcheck.reference.util.cel.checker import walk
    for node, _parents in walk(checked.root):
        if not (isinstance(node, Call) and node.target is not None and node.function == "format"):
            continue
        ids = [o.id for o in checked.overloads.get(node.id, [])]
        if ids and "string_format" not in ids:
            continue
        if not (isinstance(node.target, Lit) and isinstance(node.target.value, str) and len(node.args) == 1
                and isinstance(node.args[0], ListLit)):
            continue
        elems = node.args[0].elems

        def kind(e: Any) -> ty.T:
            return checked.type(e)

        def one_of(e: Any, *kinds: str) -> bool:
            t = kind(e)
            return t == ty.DYN or t.kind in kinds

        def stringable(e: Any) -> bool:
            if not one_of(e, *_STRINGABLE):
                return False
            if isinstance(e, ListLit):
                return all(stringable(x) for x in e.elems)
            if isinstance(e, MapLit):
                return all(stringable(k) and stringable(v) for k, v, _ in e.entries)
            return True

        def check(verb: str, index: int, _precision: int | None) -> None:
            arg = elems[index]
            allowed = {"d": ("int", "uint"), "f": ("double", "string"), "e": ("double", "string"),
                       "b": ("int", "uint", "bool"), "x": ("int", "uint", "string", "bytes"),
                       "X": ("int", "uint", "string", "bytes"), "o": ("int", "uint")}
            ok = stringable(arg) if verb == "s" else one_of(arg, *allowed[verb])
            if not ok:
                raise CompileError(f"error during formatting: a {verb} clause does not take {kind(arg)}")
        try:
            _text, asked = format_string(node.target.value, list(elems), check)
        except FormatError as err:
            raise CompileError(str(err)) from err
        if len(elems) > asked:
            raise CompileError(f"too many arguments supplied to string.format (expected {asked}, got {len(elems)})")


__all__ = ["string_format", "validate_format_calls", "UInt"]

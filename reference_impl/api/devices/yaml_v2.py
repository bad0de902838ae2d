"""gopkg.in/yaml.v2's Unmarshal (v2.4.0, what upstream's device config is read with), for typed Go targets.

The text is composed into nodes by PyYAML (plain scalars keep their text untagged, so the resolution is
yaml.v2's own, resolve.go), then decoded as decode.go decodes into a Go struct:

- a scalar resolves by yaml.v2's rules: `y`/`yes`/`on`/`true` (and their capitalisations) are booleans,
  `~`/`null`/empty are null, integers are read with Go's base prefixes (0x, 0o, 0b, a leading 0 for octal)
  after removing underscores, then as unsigned, then as floats; anything else is a string. A quoted scalar
  is a string; an explicit tag (`!!int 5`) is checked against its value;
- a string field takes any scalar's text (`5`, `true` and `1.5` included); an integer field takes integers
  and floats (truncated toward zero, Go's conversion on amd64 for values out of range), within its type;
  an unsigned one refuses negative integers; a float field takes integers and floats; a boolean field only
  booleans; null leaves the zero value; a mapping or list where a scalar is wanted, or the reverse, is an
  error;
- a struct reads the keys it has fields for (exact names; `<<` merges mappings in) and ignores the others,
  without decoding them; a list skips the elements that fail (their error stands).

Any error, type error or not, makes Unmarshal return an error (upstream then uses its default config):
`decode` raises `YamlError` with the field path and the reason of the first one in document order.
Timestamps (plain or tagged `!!timestamp`) resolve by parseTimestamp's four layouts: a string field takes the
text, any other field refuses it. Not reproduced: PyYAML's and libyaml's few differences on what is well-formed
YAML, and the wording of yaml.v2's messages.
"""

from __future__ import annotations

import base64
import binascii
import calendar
import math
import re
from typing import Any

import yaml

PREFIX = "tag:yaml.org,2002:"
STR, BOOL, INT, FLOAT, NULL = (PREFIX + t for t in ("str", "bool", "int", "float", "null"))
BINARY, MERGE, TIMESTAMP = PREFIX + "binary", PREFIX + "merge", PREFIX + "timestamp"
_RESOLVABLE = {"", STR, BOOL, INT, FLOAT, NULL, TIMESTAMP}
_MAP: dict[str, tuple[str, Any]] = {
    **{v: (BOOL, True) for v in ("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")},
    **{v: (BOOL, False) for v in ("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")},
    **{v: (NULL, None) for v in ("", "~", "null", "Null", "NULL")},
    **{v: (FLOAT, math.nan) for v in (".nan", ".NaN", ".NAN")},
    **{v: (FLOAT, math.inf) for v in (".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF")},
    **{v: (FLOAT, -math.inf) for v in ("-.inf", "-.Inf", "-.INF")},
    "<<": (MERGE, "<<"),
}
_STYLE_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_DOT_FLOAT = re.compile(r"^\.[0-9]+([eE][-+]?[0-9]+)?$")
INT64, UINT64 = (-(2**63), 2**63 - 1), (0, 2**64 - 1)


class YamlError(ValueError):
    """Unmarshal's error: `field` is the path of the value at fault ("" for the text as a whole)."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}" if field else reason)
        self.field = field
        self.reason = reason


class Uint(int):
    """An integer that only ParseUint read (above int64): yaml.v2 resolves it as uint64."""


class _Loader(yaml.SafeLoader):
    """Composes only: a plain scalar without a tag keeps the tag "" (yaml.v2 resolves it itself), a quoted
    one is a string."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is yaml.ScalarNode:
            return "" if implicit[0] else STR
        return super().resolve(kind, value, implicit)


def compose(text: str, field: str) -> yaml.Node | None:
    """The first document's node (yaml.v2 reads no further), None for an empty stream."""
    try:
        return next(iter(yaml.compose_all(text, Loader=_Loader)), None)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = " ".join(str(getattr(exc, "problem", None) or exc).split())  # one line
        raise YamlError(field, f"not valid YAML{where}: {problem}") from None


def _go_int(text: str, unsigned: bool) -> int | None:
    """strconv.ParseInt / ParseUint with base 0 (the text has no underscores left)."""
    sign, body = 1, text
    if not unsigned and body and body[0] in "+-":
        sign, body = (-1 if body[0] == "-" else 1), body[1:]
    base, digits = 10, body
    if len(body) > 1 and body[0] == "0":
        base, digits = {"x": (16, body[2:]), "o": (8, body[2:]), "b": (2, body[2:])}.get(body[1].lower(), (8, body[1:]))
    if not digits or not all(c in "0123456789abcdef"[:base] for c in digits.lower()):
        return None
    value = sign * int(digits, base)
    low, high = UINT64 if unsigned else INT64
    return value if low <= value <= high else None


def resolve(tag: str, text: str, field: str) -> tuple[str, Any]:
    """resolve.go: the tag and value of a scalar, failing where an explicit tag does not fit its value."""
    if tag not in _RESOLVABLE:
        return tag, text
    rtag, value = _resolve_plain(text) if tag not in (STR, BINARY) else (STR, text)
    if tag in ("", rtag, STR, BINARY):
        return rtag, value
    if tag == FLOAT and rtag == INT:
        return FLOAT, float(value)
    raise YamlError(field, f"cannot decode {_short(rtag)} `{text}` as a {_short(tag)}")


def _resolve_plain(text: str) -> tuple[str, Any]:
    if text in _MAP:
        return _MAP[text]
    if is_timestamp(text):  # before the numbers, as resolve.go tries it; the value is the text itself
        return TIMESTAMP, text
    hint = text[:1]
    if hint == "." and _DOT_FLOAT.match(text) and not math.isinf(float(text)):  # ParseFloat's range error
        return FLOAT, float(text)
    if hint and hint in "+-0123456789":
        plain = text.replace("_", "")
        for unsigned in (False, True):  # base 0 reads 0b too: the resolver's own 0b branch adds nothing
            value = _go_int(plain, unsigned)
            if value is not None:
                return INT, Uint(value) if unsigned else value
        if _STYLE_FLOAT.match(plain) and not math.isinf(float(plain)):
            return FLOAT, float(plain)
    return STR, text


# parseTimestamp's layouts (time.Parse): date, then optionally a T, t or space, the clock, nine or fewer fraction
# digits after a point or comma, and with T or t a Z or a +hh:mm offset; one or two digits for month, day, hour,
# minute and second
_TIMESTAMP = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})"
                        r"(?:(?:([Tt])|( ))(\d{1,2}):(\d{1,2}):(\d{1,2})(?:[.,]\d+)?"
                        r"(?(4)(?:Z|[+-](\d\d):(\d\d))|))?", re.ASCII)


def is_timestamp(text: str) -> bool:
    """yaml.v2's parseTimestamp: four digits and a dash, then one of its four layouts as Go's time.Parse reads
    them, with Go's range checks (month, the month's days, hour, minute, second, offset)."""
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        return False
    year, month, day = (int(match.group(i)) for i in (1, 2, 3))
    if not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(year, month)[1]:
        return False
    if match.group(6) is not None and not (int(match.group(6)) < 24 and int(match.group(7)) < 60
                                           and int(match.group(8)) < 60):
        return False
    return match.group(9) is None or (int(match.group(9)) <= 24 and int(match.group(10)) <= 60)


def _short(tag: str) -> str:
    return "!!" + tag[len(PREFIX):] if tag.startswith(PREFIX) else tag


def _to_int64(value: float) -> int:
    """Go's int64(f) on amd64: truncation, and the minimum for what does not fit."""
    truncated = math.trunc(value) if math.isfinite(value) else INT64[0]
    return truncated if INT64[0] <= truncated <= INT64[1] else INT64[0]


def _to_uint64(value: float) -> int:
    """Go's uint64(f) on amd64: below 2^63 through int64 (negatives wrap), else int64(f - 2^63) | 1<<63."""
    if value < 2.0**63:
        return _to_int64(value) % 2**64
    return (_to_int64(value - 2.0**63) % 2**64) | (1 << 63)


class Decoder:
    """decode.go's decoder for a schema: "str", "bool", "float", ("int", bits), ("uint", bits),
    ("list", elem), ("struct", {name: schema}), ("either", struct schema, list schema) (a mapping read as the
    struct, a list as the list: VNPUsConfig.UnmarshalYAML)."""

    def __init__(self) -> None:
        self.active: set[int] = set()

    def decode(self, node: yaml.Node | None, schema: Any, path: str) -> Any:
        if node is None:
            return None
        if id(node) in self.active:
            raise YamlError(path, "anchor value contains itself")
        self.active.add(id(node))
        try:
            return self._decode(node, schema, path)
        finally:
            self.active.discard(id(node))

    def _decode(self, node: yaml.Node, schema: Any, path: str) -> Any:
        kind = schema if isinstance(schema, str) else schema[0]
        if isinstance(node, yaml.ScalarNode):
            tag, value = resolve(node.tag, node.value, path)
            if tag == BINARY:
                try:
                    value = base64.b64decode(value, validate=True).decode("utf-8", "replace")
                except (binascii.Error, ValueError):
                    raise YamlError(path, "!!binary value contains invalid base64 data") from None
            if value is None:
                return None
            return self._scalar(node, tag, value, schema, kind, path)
        if kind == "either":
            if isinstance(node, yaml.MappingNode):
                self.check_interface(node, path, top=True)
                return self._decode(node, schema[1], path)
            return self._decode(node, schema[2], path)
        if isinstance(node, yaml.SequenceNode) and kind == "list":
            return [self.decode(item, schema[1], f"{path}[{i}]") for i, item in enumerate(node.value)]
        if isinstance(node, yaml.MappingNode) and kind == "struct":
            out: dict[str, Any] = {}
            self._struct(node, schema[1], path, out)
            return out
        what = "!!seq" if isinstance(node, yaml.SequenceNode) else "!!map"
        raise YamlError(path, f"cannot unmarshal {what} into {_go_type(schema)}")

    def _scalar(self, node: yaml.ScalarNode, tag: str, value: Any, schema: Any, kind: str, path: str) -> Any:
        if kind == "str":
            return value if tag == BINARY else node.value
        if isinstance(value, bool) or tag not in (INT, FLOAT):
            if kind == "bool" and isinstance(value, bool):
                return value
            raise _refused(node, tag, schema, path)
        if kind == "float":
            return float(value)
        if kind == "int":
            low, high = -(2 ** (schema[1] - 1)), 2 ** (schema[1] - 1) - 1
            number = value
            if isinstance(value, float):
                if math.isnan(value) or value > 2.0**63:
                    raise _refused(node, tag, schema, path)
                number = _to_int64(value)
            if isinstance(value, Uint) or not low <= number <= high:
                raise _refused(node, tag, schema, path)
            return number
        if kind == "uint":
            number = value
            if isinstance(value, float):
                if math.isnan(value) or value > 2.0**64:
                    raise _refused(node, tag, schema, path)
                number = _to_uint64(value)
            if not 0 <= number <= 2 ** schema[1] - 1:
                raise _refused(node, tag, schema, path)
            return number
        raise _refused(node, tag, schema, path)

    def _struct(self, node: yaml.MappingNode, fields: dict[str, Any], path: str, out: dict[str, Any]) -> None:
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == "<<" and key.tag in ("", MERGE):
                self._merge(value, fields, path, out)
                continue
            name = self.decode(key, "str", f"{path} (a key)")
            if name in fields:
                out[name] = self.decode(value, fields[name], f"{path}.{name}" if path else name)

    def _merge(self, node: yaml.Node, fields: dict[str, Any], path: str, out: dict[str, Any]) -> None:
        items = [node] if isinstance(node, yaml.MappingNode) else \
            list(reversed(node.value)) if isinstance(node, yaml.SequenceNode) else [node]
        if not all(isinstance(item, yaml.MappingNode) for item in items):
            raise YamlError(path, "map merge requires map or sequence of maps as the value")
        for item in items:
            self._struct(item, fields, path, out)

    def check_interface(self, node: yaml.Node, path: str, top: bool = False) -> None:
        """Decoding into map[string]interface{} (the first try of VNPUsConfig.UnmarshalYAML) fails only on
        a tag that does not fit its value, bad base64, or a key that is a mapping or a list."""
        if isinstance(node, yaml.ScalarNode):
            tag, value = resolve(node.tag, node.value, path)
            if tag == BINARY:
                try:
                    base64.b64decode(value, validate=True)
                except (binascii.Error, ValueError):
                    raise YamlError(path, "!!binary value contains invalid base64 data") from None
            return
        if isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                self.check_interface(item, f"{path}[{i}]")
            return
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                raise YamlError(path, "cannot unmarshal !!map into string" if top else "invalid map key")
            self.check_interface(key, f"{path} (a key)")
            self.check_interface(value, f"{path}.{key.value}")


def _refused(node: yaml.ScalarNode, tag: str, schema: Any, path: str) -> YamlError:
    shown = node.value if len(node.value) <= 10 else node.value[:7] + "..."
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in shown)  # one line
    return YamlError(path, f"cannot unmarshal {_short(tag)} `{shown}` into {_go_type(schema)}")


def _go_type(schema: Any) -> str:
    kind = schema if isinstance(schema, str) else schema[0]
    if kind in ("int", "uint"):
        return f"{kind}{'' if schema[1] == 64 else schema[1]}"
    if kind == "list":
        return "[]" + _go_type(schema[1])
    return {"str": "string", "bool": "bool", "float": "float64"}.get(kind, "a struct")


def decode(text: str, schema: Any, field: str = "") -> Any:
    """yaml.Unmarshal of the text into the schema's Go type: the decoded value (None for an empty stream or a
    null document), or YamlError."""
    return Decoder().decode(compose(text, field), schema, field)

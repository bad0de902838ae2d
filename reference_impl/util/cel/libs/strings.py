"""cel-go's strings extension at version 2 (Kubernetes' environment from 1.29): charAt, indexOf, lastIndexOf,
lowerAscii, upperAscii, replace, split, substring, trim, join, strings.quote (and format, in strformat.py);
indices count code points, as cel-go's do (it converts to runes).
"""

from __future__ import annotations

from typing import Any

from schedcheck.reference.util.cel.registry import overload
from schedcheck.reference.util.cel.values import Err

_SPACE = " \t\n\v\f\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029" \
         "\u202f\u205f\u3000"


@overload("string_char_at_int")
def char_at(s: str, i: int) -> Any:
    if not 0 <= i <= len(s):
        return Err(f"index out of range: {i}")
    return s[i:i + 1]


def _index_of(s: str, sub: str, offset: int) -> Any:
    if sub == "":
        return offset
    if offset < 0:
        return Err(f"index out of range: {offset}")
    if offset >= len(s):
        return -1
    return s.find(sub, offset)


def _last_index_of(s: str, sub: str, offset: int) -> Any:
    if sub == "":
        return offset
    if offset < 0:
        return Err(f"index out of range: {offset}")
    if offset >= len(s):
        return -1
    start = min(offset, len(s) - len(sub))
    return s.rfind(sub, 0, start + len(sub)) if start >= 0 else -1


overload("string_index_of_string")(lambda s, sub: _index_of(s, sub, 0))
overload("string_index_of_string_int", varargs=True)(_index_of)
overload("string_last_index_of_string")(lambda s, sub: len(s) if sub == "" else _last_index_of(s, sub, len(s) - 1))
overload("string_last_index_of_string_int", varargs=True)(_last_index_of)
overload("string_lower_ascii")(lambda s: "".join(c.lower() if c.isascii() else c for c in s))
overload("string_upper_ascii")(lambda s: "".join(c.upper() if c.isascii() else c for c in s))
overload("string_trim")(lambda s: s.strip(_SPACE))


@overload("string_replace_string_string", "string_replace_string_string_int", varargs=True)
def replace(s: str, old: str, new: str, count: int = -1) -> str:
    return s.replace(old, new) if count < 0 else s.replace(old, new, count)


def _split(s: str, sep: str, count: int = -1) -> list[str]:
    if count == 0:
        return []
    if sep == "":
        chars = list(s)
        if 0 < count < len(chars):
            chars = chars[:count - 1] + ["".join(chars[count - 1:])]
        return chars
    return s.split(sep) if count < 0 else s.split(sep, count - 1)


overload("string_split_string")(_split)
overload("string_split_string_int", varargs=True)(_split)


@overload("string_substring_int")
def substring(s: str, start: int) -> Any:
    if not 0 <= start <= len(s):
        return Err(f"index out of range: {start}")
    return s[start:]


@overload("string_substring_int_int", varargs=True)
def substring_range(s: str, start: int, end: int) -> Any:
    if start > end:
        return Err(f"invalid substring range. start: {start}, end: {end}")
    if not 0 <= start <= len(s):
        return Err(f"index out of range: {start}")
    if not 0 <= end <= len(s):
        return Err(f"index out of range: {end}")
    return s[start:end]


def _join(items: list[Any], separator: str = "") -> Any:
    for item in items:
        if not isinstance(item, str):
            from schedcheck.reference.util.cel.values import go_value
            return Err(f"join: invalid input: {go_value(item)}")
    return separator.join(items)


overload("list_join")(_join)
overload("list_join_string")(_join)

_QUOTES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v", "\\": "\\\\",
           '"': '\\"'}


@overload("strings_quote")
def quote(s: str) -> str:
    return '"' + "".join(_QUOTES.get(c, c) for c in s) + '"'

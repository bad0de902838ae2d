"""CEL's lexical grammar (as cel-go's ANTLR lexer reads it): tokens and the unquoting of string and bytes literals."""

from __future__ import annotations

import re

from schedcheck.reference.util.cel.errors import CompileError

_TOKEN = re.compile(r"""\s*(?:
    (?P<float>(?:\d+\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\.\d+(?:[eE][+-]?\d+)?))
  | (?P<hex>0[xX][0-9a-fA-F]+[uU]?)
  | (?P<num>\d+[uU]?)
  | (?P<str>[rRbB]{0,2}(?:\"\"\"(?:[^\\]|\\.)*?\"\"\"|'''(?:[^\\]|\\.)*?'''|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'))
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>==|!=|<=|>=|&&|\|\||\.\?|[<>!()\[\]{}.,:?+\-*/%]))""", re.VERBOSE | re.DOTALL)
RESERVED = {"as", "break", "const", "continue", "else", "for", "function", "if", "import", "let", "loop",
             "package", "namespace", "return", "var", "void", "while"}
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'",
            '"': '"', "`": "`", "?": "?"}


def tokenize(text: str) -> list[tuple[str, str]]:
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


def string_literal(token: str) -> str | bytes:
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

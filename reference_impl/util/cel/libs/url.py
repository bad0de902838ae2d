"""Kubernetes' URL library over Go's net/url (Go 1.26, strict colons), re-implemented: url() validates with
ParseRequestURI and keeps what Parse makes of the text; getScheme, getHost, getHostname, getPort,
getEscapedPath, getQuery; isURL; equality compares URL.String(). Go works on the UTF-8 bytes; so does this
module (a byte that is not valid UTF-8 after unescaping is carried as a surrogate escape).
"""

from __future__ import annotations

from typing import Any

from schedcheck.reference.util.cel.libs.net import AddrError, parse_addr
from schedcheck.reference.util.cel.registry import overload
from schedcheck.reference.util.cel.values import URL, CelMap, Err, go_quote

PATH, PATH_SEGMENT, HOST, ZONE, USER_PASSWORD, QUERY_COMPONENT, FRAGMENT = range(7)
_UNRESERVED = set(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_HEX = set(b"0123456789abcdefABCDEF")


class _URLError(ValueError):
    pass


def should_escape(c: int, mode: int) -> bool:
    if c in _UNRESERVED:
        return False
    if mode in (HOST, ZONE) and c in b"!$&'()*+,;=:[]<>\"":
        return False
    if c in b"-_.~":
        return False
    if c in b"$&+,/:;=?@":
        if mode == PATH:
            return c == ord("?")
        if mode == PATH_SEGMENT:
            return c in b"/;,?"
        if mode == USER_PASSWORD:
            return c in b"@/?:"
        if mode == QUERY_COMPONENT:
            return True
        if mode == FRAGMENT:
            return False
    if mode == FRAGMENT and c in b"!()*":
        return False
    return True


def _quote(data: bytes) -> str:
    return go_quote(data.decode("utf-8", "surrogateescape"))


def unescape(s: bytes, mode: int) -> bytes:
    count, plus, i = 0, False, 0
    while i < len(s):
        c = s[i]
        if c == ord("%"):
            count += 1
            if i + 2 >= len(s) or s[i + 1] not in _HEX or s[i + 2] not in _HEX:
                raise _URLError("invalid URL escape " + _quote(s[i:i + 3]))
            value = int(s[i + 1:i + 3], 16)
            if mode == HOST and int(chr(s[i + 1]), 16) < 8 and s[i:i + 3] != b"%25":
                raise _URLError("invalid URL escape " + _quote(s[i:i + 3]))
            if mode == ZONE and s[i:i + 3] != b"%25" and value != 0x20 and should_escape(value, HOST):
                raise _URLError("invalid URL escape " + _quote(s[i:i + 3]))
            i += 3
        elif c == ord("+"):
            plus = mode == QUERY_COMPONENT
            i += 1
        else:
            if mode in (HOST, ZONE) and c < 0x80 and should_escape(c, mode):
                raise _URLError("invalid character " + _quote(s[i:i + 1]) + " in host name")
            i += 1
    if count == 0 and not plus:
        return s
    out, i = bytearray(), 0
    while i < len(s):
        c = s[i]
        if c == ord("%"):
            out.append(int(s[i + 1:i + 3], 16))
            i += 3
            continue
        out.append(ord(" ") if c == ord("+") and mode == QUERY_COMPONENT else c)
        i += 1
    return bytes(out)


def escape(s: bytes, mode: int) -> bytes:
    out = bytearray()
    for c in s:
        if c == ord(" ") and mode == QUERY_COMPONENT:
            out.append(ord("+"))
        elif should_escape(c, mode):
            out += b"%" + b"%02X" % c
        else:
            out.append(c)
    return bytes(out)


def _valid_port(port: bytes) -> bool:
    return port == b"" or port[:1] == b":" and all(48 <= b <= 57 for b in port[1:])


def _parse_host(scheme: bytes, host: bytes) -> bytes:
    bracket = host.rfind(b"[")
    if bracket > 0:
        raise _URLError("invalid IP-literal")
    if bracket == 0:
        close = host.rfind(b"]")
        if close < 0:
            raise _URLError("missing ']' in host")
        port = host[close + 1:]
        if not _valid_port(port):
            raise _URLError(f"invalid port {_quote(port)} after host")
        port = unescape(port, HOST)
        name = host[1:close]
        zone_at = name.find(b"%25")
        if zone_at >= 0:
            name = unescape(name[:zone_at], HOST) + unescape(name[zone_at:], ZONE)
        else:
            name = unescape(name, HOST)
        try:
            packed, _zone = parse_addr(name.decode("utf-8", "surrogateescape"))
        except AddrError as err:
            raise _URLError(f"invalid host: {err}") from err
        if len(packed) == 4:
            raise _URLError("invalid IP-literal")
        return b"[" + name + b"]" + port
    colon = host.find(b":")
    if colon != -1:
        if host.rfind(b":") != colon and scheme not in (b"http", b"https"):  # Go 1.26: strict for http(s) only
            colon = host.rfind(b":")
        port = host[colon:]
        if not _valid_port(port):
            raise _URLError(f"invalid port {_quote(port)} after host")
    return unescape(host, HOST)


def _scheme(raw: bytes) -> tuple[bytes, bytes]:
    for i, c in enumerate(raw):
        if 65 <= c <= 90 or 97 <= c <= 122:
            continue
        if 48 <= c <= 57 or c in b"+-.":
            if i == 0:
                return b"", raw
            continue
        if c == ord(":"):
            if i == 0:
                raise _URLError("missing protocol scheme")
            return raw[:i], raw[i + 1:]
        return b"", raw
    return b"", raw


def _valid_userinfo(s: bytes) -> bool:
    return all(c in _UNRESERVED or c in b"-._:~!$&'()*+,;=%@" for c in s)


def _parse(raw: bytes, via_request: bool) -> dict[str, Any]:
    if any(c < 0x20 or c == 0x7F for c in raw):
        raise _URLError("net/url: invalid control character in URL")
    if raw == b"" and via_request:
        raise _URLError("empty url")
    u: dict[str, Any] = {"scheme": b"", "opaque": b"", "user": None, "host": b"", "path": b"", "raw_path": b"",
                         "force_query": False, "raw_query": b"", "omit_host": False}
    if raw == b"*":
        u["path"] = b"*"
        return u
    scheme, rest = _scheme(raw)
    u["scheme"] = scheme.lower()
    if rest.endswith(b"?") and rest.count(b"?") == 1:
        u["force_query"], rest = True, rest[:-1]
    else:
        rest, _, u["raw_query"] = rest.partition(b"?")
    if not rest.startswith(b"/"):
        if u["scheme"]:
            u["opaque"] = rest
            return u
        if via_request:
            raise _URLError("invalid URI for request")
        if b":" in rest.partition(b"/")[0]:
            raise _URLError("first path segment in URL cannot contain colon")
    if (u["scheme"] or not via_request and not rest.startswith(b"///")) and rest.startswith(b"//"):
        authority, rest = rest[2:], b""
        cut = authority.find(b"/")
        if cut >= 0:
            authority, rest = authority[:cut], authority[cut:]
        at = authority.rfind(b"@")
        u["host"] = _parse_host(u["scheme"], authority[at + 1:] if at >= 0 else authority)
        if at >= 0:
            info = authority[:at]
            if not _valid_userinfo(info):
                raise _URLError("net/url: invalid userinfo")
            if b":" not in info:
                u["user"] = (unescape(info, USER_PASSWORD), None)
            else:
                name, _, password = info.partition(b":")
                u["user"] = (unescape(name, USER_PASSWORD), unescape(password, USER_PASSWORD))
    elif u["scheme"] and rest.startswith(b"/"):
        u["omit_host"] = True
    path = unescape(rest, PATH)
    u["path"], u["raw_path"] = path, (b"" if escape(path, PATH) == rest else rest)
    return u


def _valid_encoded(s: bytes, mode: int) -> bool:
    return all(c in b"!$&'()*+,;=:@[]%" or not should_escape(c, mode) for c in s)


def escaped_path(u: dict[str, Any]) -> bytes:
    raw = u["raw_path"]
    if raw and _valid_encoded(raw, PATH):
        try:
            if unescape(raw, PATH) == u["path"]:
                return raw
        except _URLError:
            pass
    if u["path"] == b"*":
        return b"*"
    return escape(u["path"], PATH)


def _fragment(frag: bytes) -> tuple[bytes, bytes]:
    value = unescape(frag, FRAGMENT)
    return value, (b"" if escape(value, FRAGMENT) == frag else frag)


def _string(u: dict[str, Any], fragment: bytes, raw_fragment: bytes) -> bytes:
    out = bytearray()
    if u["scheme"]:
        out += u["scheme"] + b":"
    if u["opaque"]:
        out += u["opaque"]
    else:
        if u["scheme"] or u["host"] or u["user"] is not None:
            if not (u["omit_host"] and not u["host"] and u["user"] is None):
                if u["host"] or u["path"] or u["user"] is not None:
                    out += b"//"
                if u["user"] is not None:
                    name, password = u["user"]
                    out += escape(name, USER_PASSWORD)
                    if password is not None:
                        out += b":" + escape(password, USER_PASSWORD)
                    out += b"@"
                if u["host"]:
                    out += escape(u["host"], HOST)
        path = escaped_path(u)
        if path and path[:1] != b"/" and u["host"]:
            out += b"/"
        if not out and b":" in path.partition(b"/")[0]:
            out += b"./"
        out += path
    if u["force_query"] or u["raw_query"]:
        out += b"?" + u["raw_query"]
    if fragment:
        escaped = raw_fragment if raw_fragment and _valid_encoded(raw_fragment, FRAGMENT) and \
            _safe_unescape(raw_fragment) == fragment else escape(fragment, FRAGMENT)
        out += b"#" + escaped
    return bytes(out)


def _safe_unescape(s: bytes) -> bytes | None:
    try:
        return unescape(s, FRAGMENT)
    except _URLError:
        return None


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _error(raw: bytes, err: Exception) -> str:
    return f"parse {_quote(raw)}: {err}"


def parse_request_uri(text: str) -> str | None:
    """url.ParseRequestURI: None, or its error text."""
    raw = text.encode("utf-8", "surrogateescape")
    try:
        _parse(raw, True)
    except _URLError as err:
        return _error(raw, err)
    return None


def parse_url(text: str) -> URL | str:
    """url.Parse: the URL, or its error text."""
    raw = text.encode("utf-8", "surrogateescape")
    head, sep, frag = raw.partition(b"#")
    try:
        u = _parse(head, False)
    except _URLError as err:
        return _error(head, err)
    fragment = raw_fragment = b""
    if sep and frag:
        try:
            fragment, raw_fragment = _fragment(frag)
        except _URLError as err:
            return _error(raw, err)
    user = None if u["user"] is None else (_text(u["user"][0]), None if u["user"][1] is None else _text(u["user"][1]))
    return URL(_text(u["scheme"]), _text(u["opaque"]), None if user is None else repr(user), _text(u["host"]),
               _text(u["path"]), _text(u["raw_path"]), u["force_query"], _text(u["raw_query"]), _text(fragment),
               _text(raw_fragment), _text(_string(u, fragment, raw_fragment)))


@overload("string_to_url")
def string_to_url(text: str) -> Any:
    problem = parse_request_uri(text)
    if problem is None:
        parsed = parse_url(text)
        if isinstance(parsed, URL):
            return parsed
        problem = parsed
    return Err(f"URL parse error during conversion from string: {problem}")


overload("is_url_string")(lambda text: parse_request_uri(text) is None)
overload("url_get_scheme")(lambda u: u.scheme)
overload("url_get_host")(lambda u: u.host)


def split_host_port(host: str) -> tuple[str, str]:
    port = ""
    colon = host.rfind(":")
    if colon != -1 and _valid_port(host[colon:].encode("utf-8", "surrogateescape")):
        host, port = host[:colon], host[colon + 1:]
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, port


overload("url_get_hostname")(lambda u: split_host_port(u.host)[0])
overload("url_get_port")(lambda u: split_host_port(u.host)[1])


@overload("url_get_escaped_path")
def get_escaped_path(u: URL) -> str:
    data = {"raw_path": u.raw_path.encode("utf-8", "surrogateescape"),
            "path": u.path.encode("utf-8", "surrogateescape")}
    return _text(escaped_path(data))


@overload("url_get_query")
def get_query(u: URL) -> CelMap:
    """URL.Query(): the query's keys and values, unescaped (pairs that do not unescape, or hold a ';', dropped)."""
    values: dict[str, list[str]] = {}
    query = u.raw_query.encode("utf-8", "surrogateescape")
    if query.count(b"&") + 1 > 10000:  # urlmaxqueryparams: ParseQuery fails, Query() is then empty
        return CelMap()
    for pair in query.split(b"&") if query else []:
        if b";" in pair or not pair:
            continue
        key, _, value = pair.partition(b"=")
        try:
            k, v = unescape(key, QUERY_COMPONENT), unescape(value, QUERY_COMPONENT)
        except _URLError:
            continue
        values.setdefault(_text(k), []).append(_text(v))
    return CelMap(values.items())

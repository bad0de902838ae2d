"""Kubernetes' IP and CIDR libraries over Go's net/netip, re-implemented: parsing (with netip's error texts; a
zone or an IPv4-mapped IPv6 address refused as Kubernetes refuses it), printing (IPv6 with the longest run of
zero groups folded), family, the is* predicates, containsIP, containsCIDR, masked, prefixLength.
"""

from __future__ import annotations

from typing import Any

from schedcheck.reference.util.cel.registry import overload
from schedcheck.reference.util.cel.values import CIDR, IP, Err, go_quote, no_such_overload


class AddrError(ValueError):
    pass


def _fail(text: str, msg: str, at: str = "") -> AddrError:
    suffix = f" (at {go_quote(at)})" if at else ""
    return AddrError(f"ParseAddr({go_quote(text)}): {msg}{suffix}")


def _ipv4_fields(full: str, part: str) -> bytes:
    fields: list[int] = []
    value = digits = 0
    for i, ch in enumerate(part):
        if "0" <= ch <= "9":
            if digits == 1 and value == 0:
                raise _fail(full, "IPv4 field has octet with leading zero")
            value = value * 10 + ord(ch) - 48
            digits += 1
            if value > 255:
                raise _fail(full, "IPv4 field has value >255")
        elif ch == ".":
            if i == 0 or i == len(part) - 1 or part[i - 1] == ".":
                raise _fail(full, "IPv4 field must have at least one digit", part[i:])
            if len(fields) == 3:
                raise _fail(full, "IPv4 address too long")
            fields.append(value)
            value = digits = 0
        else:
            raise _fail(full, "unexpected character", part[i:])
    if len(fields) < 3:
        raise _fail(full, "IPv4 address too short")
    return bytes(fields + [value])


def _ipv6(text: str) -> tuple[bytes, str]:
    s, zone = text, ""
    if "%" in s:
        s, zone = s.split("%", 1)
        if zone == "":
            raise _fail(text, "zone must be a non-empty string")
    ip = bytearray(16)
    ellipsis = -1
    if s.startswith("::"):
        ellipsis, s = 0, s[2:]
        if not s:
            return bytes(ip), zone
    i = 0
    while i < 16:
        off, acc = 0, 0
        while off < len(s):
            ch = s[off]
            if ch in "0123456789abcdefABCDEF":
                acc = (acc << 4) + int(ch, 16)
            else:
                break
            if off > 3:
                raise _fail(text, "each group must have 4 or less digits", s)
            if acc > 0xFFFF:
                raise _fail(text, "IPv6 field has value >=2^16", s)
            off += 1
        if off == 0:
            raise _fail(text, "each colon-separated field must have at least one digit", s)
        if off < len(s) and s[off] == ".":
            if ellipsis < 0 and i != 12:
                raise _fail(text, "embedded IPv4 address must replace the final 2 fields of the address", s)
            if i + 4 > 16:
                raise _fail(text, "too many hex fields to fit an embedded IPv4 at the end of the address", s)
            ip[i:i + 4] = _ipv4_fields(text, s)
            s, i = "", i + 4
            break
        ip[i], ip[i + 1] = acc >> 8, acc & 0xFF
        i += 2
        s = s[off:]
        if not s:
            break
        if s[0] != ":":
            raise _fail(text, "unexpected character, want colon", s)
        if len(s) == 1:
            raise _fail(text, "colon must be followed by more characters", s)
        s = s[1:]
        if s[0] == ":":
            if ellipsis >= 0:
                raise _fail(text, "multiple :: in address", s)
            ellipsis, s = i, s[1:]
            if not s:
                break
    if s:
        raise _fail(text, "trailing garbage after address", s)
    if i < 16:
        if ellipsis < 0:
            raise _fail(text, "address string too short")
        n = 16 - i
        ip[ellipsis + n:16] = ip[ellipsis:i]
        ip[ellipsis:ellipsis + n] = bytes(n)
    elif ellipsis >= 0:
        raise _fail(text, "the :: must expand to at least one field of zeros")
    return bytes(ip), zone


def parse_addr(text: str) -> tuple[bytes, str]:
    """netip.ParseAddr: the address bytes (4 or 16) and its zone."""
    for ch in text:
        if ch == ".":
            return _ipv4_fields(text, text), ""
        if ch == ":":
            return _ipv6(text)
        if ch == "%":
            raise _fail(text, "missing IPv6 address")
    raise _fail(text, "unable to parse IP")


def _is_4in6(packed: bytes) -> bool:
    return len(packed) == 16 and packed[:12] == b"\x00" * 10 + b"\xff\xff"


def addr_string(packed: bytes) -> str:
    if len(packed) == 4:
        return ".".join(str(b) for b in packed)
    if _is_4in6(packed):
        return "::ffff:" + ".".join(str(b) for b in packed[12:])
    groups = [packed[i] << 8 | packed[i + 1] for i in range(0, 16, 2)]
    start, end = 255, 255
    for i in range(8):
        j = i
        while j < 8 and groups[j] == 0:
            j += 1
        if j - i >= 2 and j - i > end - start:
            start, end = i, j
    out, i = "", 0
    while i < 8:
        if i == start:
            out += "::"
            i = end
            if i >= 8:
                break
        elif i > 0:
            out += ":"
        out += format(groups[i], "x")
        i += 1
    return out


def to_ip(text: str) -> IP | str:
    """Kubernetes' parseIPAddr: an IP, or the error text."""
    try:
        packed, zone = parse_addr(text)
    except AddrError as err:
        return f"IP Address {go_quote(text)} parse error during conversion from string: {err}"
    if zone:
        return f"IP address {go_quote(text)} with zone value is not allowed"
    if _is_4in6(packed):
        return f"IPv4-mapped IPv6 address {go_quote(text)} is not allowed"
    return IP(packed, addr_string(packed))


def _prefix_error(text: str, msg: str) -> str:
    return f"netip.ParsePrefix({go_quote(text)}): {msg}"


_CIDR_ERROR = "network address parse error during conversion from string: "


def _parse_prefix(text: str) -> tuple[bytes, int] | str:
    """netip.ParsePrefix: (address, bits), or its error text."""
    cut = text.rfind("/")
    if cut < 0:
        return _prefix_error(text, "no '/'")
    try:
        packed, zone = parse_addr(text[:cut])
    except AddrError as err:
        return _prefix_error(text, str(err))
    if len(packed) == 16 and zone:
        return _prefix_error(text, "IPv6 zones cannot be present in a prefix")
    bits_text = text[cut + 1:]
    if len(bits_text) > 1 and not "1" <= bits_text[0] <= "9" or not (bits_text.isascii() and bits_text.isdigit()):
        return _prefix_error(text, "bad bits after slash: " + go_quote(bits_text))
    bits = int(bits_text)
    if bits > len(packed) * 8:
        return _prefix_error(text, "prefix length out of range")
    return packed, bits


def to_cidr(text: str) -> CIDR | str:
    """Kubernetes' parseCIDR: a CIDR, or its error text."""
    found = _parse_prefix(text)
    if isinstance(found, str):
        return _CIDR_ERROR + found
    packed, bits = found
    if _is_4in6(packed):
        return f"IPv4-mapped IPv6 address {go_quote(text)} is not allowed"
    return CIDR(IP(packed, addr_string(packed)), bits)


def string_to_cidr(text: str) -> Any:
    """stringToCIDR: Kubernetes prefixes parseCIDR's error once more."""
    found = to_cidr(text)
    return Err(_CIDR_ERROR + found) if isinstance(found, str) else found


def _masked(packed: bytes, bits: int) -> bytes:
    value = int.from_bytes(packed, "big")
    width = len(packed) * 8
    mask = ((1 << bits) - 1) << (width - bits) if bits else 0
    return (value & mask).to_bytes(len(packed), "big")


def contains_ip(cidr: CIDR, ip: IP) -> bool:
    if len(cidr.ip.packed) != len(ip.packed):
        return False
    return _masked(ip.packed, cidr.bits) == _masked(cidr.ip.packed, cidr.bits)


def overlaps(a: CIDR, b: CIDR) -> bool:
    if a == b:
        return True
    if len(a.ip.packed) != len(b.ip.packed):
        return False
    bits = min(a.bits, b.bits)
    return bits == 0 or _masked(a.ip.packed, bits) == _masked(b.ip.packed, bits)


def _string_ip(text: Any) -> Any:
    found = to_ip(text)
    return Err(found) if isinstance(found, str) else found


overload("string_to_ip")(_string_ip)
overload("is_ip")(lambda text: not isinstance(to_ip(text), str))
overload("ip_is_canonical")(lambda text: _string_ip(text) if isinstance(_string_ip(text), Err)
                            else _string_ip(text).text == text)
overload("ip_to_string")(lambda ip: ip.text)
overload("ip_family")(lambda ip: 4 if len(ip.packed) == 4 else 6)
overload("ip_is_unspecified")(lambda ip: not any(ip.packed))
overload("ip_is_loopback")(lambda ip: ip.packed[0] == 127 if len(ip.packed) == 4 else ip.packed == bytes(15) + b"\x01")
overload("ip_is_link_local_multicast")(lambda ip: ip.packed[:3] == b"\xe0\x00\x00" if len(ip.packed) == 4
                                       else ip.packed[0] == 0xFF and ip.packed[1] & 0x0F == 0x02)
overload("ip_is_link_local_unicast")(lambda ip: ip.packed[:2] == b"\xa9\xfe" if len(ip.packed) == 4
                                     else ip.packed[0] == 0xFE and ip.packed[1] & 0xC0 == 0x80)


@overload("ip_is_global_unicast")
def is_global_unicast(ip: IP) -> bool:
    packed = ip.packed
    if len(packed) == 4 and packed in (b"\x00\x00\x00\x00", b"\xff\xff\xff\xff"):
        return False
    loopback = packed[0] == 127 if len(packed) == 4 else packed == bytes(15) + b"\x01"
    multicast = packed[0] & 0xF0 == 0xE0 if len(packed) == 4 else packed[0] == 0xFF
    link_local = packed[:2] == b"\xa9\xfe" if len(packed) == 4 else packed[0] == 0xFE and packed[1] & 0xC0 == 0x80
    return packed != bytes(16) and not loopback and not multicast and not link_local


overload("string_to_cidr")(string_to_cidr)
overload("is_cidr")(lambda text: not isinstance(to_cidr(text), str))
overload("cidr_to_string")(lambda c: f"{c.ip.text}/{c.bits}")
overload("cidr_ip")(lambda c: c.ip)
overload("cidr_prefix_length")(lambda c: c.bits)


@overload("cidr_masked")
def masked(c: CIDR) -> CIDR:
    packed = _masked(c.ip.packed, c.bits)
    return CIDR(IP(packed, addr_string(packed)), c.bits)


@overload("cidr_contains_ip_string", "cidr_contains_ip_ip")
def cidr_contains_ip(c: Any, other: Any) -> Any:
    if isinstance(other, str):
        other = _string_ip(other)
    if not isinstance(other, IP):
        return no_such_overload(c)
    return contains_ip(c, other)


@overload("cidr_contains_cidr_string", "cidr_contains_cidr")
def cidr_contains_cidr(c: Any, other: Any) -> Any:
    if isinstance(other, str):
        other = string_to_cidr(other)
    if not isinstance(other, CIDR):
        return no_such_overload(other)
    return overlaps(c, other) and c.bits <= other.bits

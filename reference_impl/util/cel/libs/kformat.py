"""Kubernetes' format library: format.<name>() and format.named(name) give a named format, and
`f.validate(s)` the messages Kubernetes' own validation gives for s (apimachinery's DNS label, subdomain,
qualified name and label value checks, net/url's request URI, kube-openapi's uuid, byte, date and datetime), or
none when s is valid.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from schedcheck.reference.util.cel.libs.url import parse_request_uri
from schedcheck.reference.util.cel.regex import compile_pattern
from schedcheck.reference.util.cel.registry import overload
from schedcheck.reference.util.cel.values import NONE, Err, NamedFormat, Optional

_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = _LABEL + "(\\." + _LABEL + ")*"
_DNS1035 = "[a-z]([-a-z0-9]*[a-z0-9])?"
_KEY = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_UUID = r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"
_DATETIME = r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$"
_BASE64 = r"^(?:[A-Za-z0-9+\/]{4})*(?:[A-Za-z0-9+\/]{2}==|[A-Za-z0-9+\/]{3}=|[A-Za-z0-9+\/]{4})$"


def _regex_error(msg: str, pattern: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{pattern}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{pattern}')"


def _full(pattern: str, text: str) -> bool:
    return re.fullmatch(pattern, text, re.ASCII) is not None


def dns1123_label(text: str, unit: str = "characters") -> list[str]:
    errs = []
    if len(text.encode()) > 63:
        errs.append(f"must be no more than 63 {unit}")
    if not _full(_LABEL, text):
        if _full(_SUBDOMAIN, text):
            errs.append("must not contain dots")
        else:
            errs.append(_regex_error("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
                                     "'-', and must start and end with an alphanumeric character", _LABEL, "my-name",
                                     "123-abc"))
    return errs


def dns1123_subdomain(text: str, unit: str = "characters") -> list[str]:
    errs = []
    if len(text.encode()) > 253:
        errs.append(f"must be no more than 253 {unit}")
    if not _full(_SUBDOMAIN, text):
        errs.append(_regex_error("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                                 "'-' or '.', and must start and end with an alphanumeric character", _SUBDOMAIN,
                                 "example.com"))
    return errs


def dns1035_label(text: str) -> list[str]:
    errs = []
    if len(text.encode()) > 63:
        errs.append("must be no more than 63 characters")
    if not _full(_DNS1035, text):
        errs.append(_regex_error("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
                                 "with an alphabetic character, and end with an alphanumeric character", _DNS1035,
                                 "my-name", "abc-123"))
    return errs


def _mask_trailing_dash(text: str) -> str:
    """apimachinery's maskTrailingDash (it drops two bytes and appends an 'a')."""
    data = text.encode()
    if len(data) > 1 and data.endswith(b"-"):
        return (data[:-2] + b"a").decode("utf-8", "surrogateescape")
    return text


_KEY_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric " \
           "character"


def qualified_name(text: str) -> list[str]:
    """content.IsLabelKey."""
    errs: list[str] = []
    parts = text.split("/")
    if len(parts) > 2:
        return [f"a valid label key {_regex_error(_KEY_MSG, _KEY, 'MyName', 'my.name', '123-abc')} with an optional "
                "DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        if not parts[0]:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in dns1123_subdomain(parts[0], "bytes")]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errs.append("name part must be no more than 63 bytes")
    if not _full(_KEY, name):
        errs.append("name part " + _regex_error(_KEY_MSG, _KEY, "MyName", "my.name", "123-abc"))
    return errs


def label_value(text: str) -> list[str]:
    errs = []
    if len(text.encode()) > 63:
        errs.append("must be no more than 63 bytes")
    if not _full("(" + _KEY + ")?", text):
        errs.append(_regex_error("a valid label must be an empty string or consist of alphanumeric characters, '-', "
                                 "'_' or '.', and must start and end with an alphanumeric character", "(" + _KEY + ")?",
                                 "MyValue", "my_value", "12345"))
    return errs


def _is_date(text: str) -> bool:
    match = re.fullmatch(r"([0-9]{4})-([0-9]{2})-([0-9]{2})", text, re.ASCII)
    if match is None:
        return False
    year, month, day = (int(g) for g in match.groups())
    if not 1 <= month <= 12 or day < 1:
        return False
    days = 29 if month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else \
        28 if month == 2 else 30 if month in (4, 6, 9, 11) else 31
    return day <= days


def _is_datetime(text: str) -> bool:
    if len(text) < 4:
        return False
    parts = text.lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    match = re.fullmatch(_DATETIME[1:-1], parts[1], re.ASCII | re.DOTALL)
    return match is not None and match.group(1) <= "23" and match.group(2) <= "59" and match.group(3) <= "59"


def _go_match(pattern: str, text: str) -> bool:
    return compile_pattern(pattern).search(text)  # type: ignore[union-attr]


def _uri(text: str) -> list[str]:
    problem = parse_request_uri(text)
    return [] if problem is None else [problem]


_FORMATS: dict[str, tuple[str, Callable[[str], list[str]], int]] = {
    "dns1123Label": ("DNS1123Label", dns1123_label, 30),
    "dns1123Subdomain": ("DNS1123Subdomain", dns1123_subdomain, 60),
    "dns1035Label": ("DNS1035Label", dns1035_label, 30),
    "qualifiedName": ("QualifiedName", qualified_name, 60),
    "dns1123LabelPrefix": ("DNS1123LabelPrefix", lambda s: dns1123_label(_mask_trailing_dash(s)), 30),
    "dns1123SubdomainPrefix": ("DNS1123SubdomainPrefix", lambda s: dns1123_subdomain(_mask_trailing_dash(s)), 60),
    "dns1035LabelPrefix": ("DNS1035LabelPrefix", lambda s: dns1035_label(_mask_trailing_dash(s)), 30),
    "labelValue": ("LabelValue", label_value, 40),
    "uri": ("URI", _uri, 1103),
    "uuid": ("uuid", lambda s: [] if _go_match(_UUID, s) else ["does not match the UUID format"], len(_UUID)),
    "byte": ("byte", lambda s: [] if _go_match(_BASE64, s) else ["invalid base64"], 84),
    "date": ("date", lambda s: [] if _is_date(s) else ["invalid date"], len(_DATETIME)),
    "datetime": ("datetime", lambda s: [] if _is_datetime(s) else ["invalid datetime"], len(_DATETIME)),
}
_BY_NAME = {entry[0]: entry for entry in _FORMATS.values()}


def _format(key: str) -> NamedFormat:
    name, _validate, size = _FORMATS[key]
    return NamedFormat(name, size)


for _key in _FORMATS:
    overload(f"format.{_key}", varargs=True)(lambda _k=_key: _format(_k))

overload("format-named")(lambda name: Optional(True, _format(name)) if name in _FORMATS else NONE)


@overload("format-validate")
def validate(fmt: Any, text: Any) -> Any:
    if not isinstance(fmt, NamedFormat):
        return Err("no such overload")
    messages = _BY_NAME[fmt.name][1](text)
    return Optional(True, messages) if messages else NONE

"""Static types of the checker (cel-go's common/types.Type and checker/types.go), re-implemented.

A type is a `T`: a kind, a name and parameters. Kinds as cel-go's: the primitives, `null_type`, `dyn`, `any`
(google.protobuf.Any; as dynamic as dyn to the checker, but a selector may end in it and not in dyn), `error`,
`type` (with a parameter when known), `list`, `map`, `opaque` (optional_type, net.IP, net.CIDR), `struct`
(Kubernetes' object types and the protobuf messages), `timestamp`, `duration` and `typeparam` (a free type
variable of an overload or of the checker).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class T:
    kind: str
    name: str
    params: tuple[T, ...] = ()

    def __str__(self) -> str:
        return format_type(self)


def prim(kind: str) -> T:
    return T(kind, kind)


BOOL, INT, UINT, DOUBLE, STRING, BYTES = prim("bool"), prim("int"), prim("uint"), prim("double"), prim("string"), \
    prim("bytes")
NULL = T("null_type", "null_type")
DYN, ANY, ERROR = T("dyn", "dyn"), T("any", "google.protobuf.Any"), T("error", "*error*")
TIMESTAMP, DURATION = T("timestamp", "google.protobuf.Timestamp"), T("duration", "google.protobuf.Duration")
TYPE = T("type", "type")
QUANTITY, SEMVER, URL_T, FORMAT_T = T("struct", "kubernetes.Quantity"), T("struct", "kubernetes.Semver"), \
    T("struct", "kubernetes.URL"), T("struct", "kubernetes.NamedFormat")
IP_T, CIDR_T = T("opaque", "net.IP"), T("opaque", "net.CIDR")
DEVICE = T("struct", "kubernetes.DRADevice")
SCALARS = ("bool", "int", "uint", "double", "string", "bytes")


def list_of(elem: T) -> T:
    return T("list", "list", (elem,))


def map_of(key: T, value: T) -> T:
    return T("map", "map", (key, value))


def optional_of(elem: T) -> T:
    return T("opaque", "optional_type", (elem,))


def type_of(param: T | None = None) -> T:
    return T("type", "type", (param,) if param is not None else ())


def param(name: str) -> T:
    return T("typeparam", name)


def format_type(t: T) -> str:
    """cel-go's type printing (as its error messages show types)."""
    if t.kind == "typeparam":
        return t.name if t.name.startswith("_var") else f"<{t.name}>"
    if t.kind == "type":
        return f"type({format_type(t.params[0])})" if t.params else "type"
    if t.params:
        return f"{t.name}({', '.join(format_type(p) for p in t.params)})"
    return t.name


def is_dyn(t: T) -> bool:
    return t.kind in ("dyn", "any")


def is_dyn_or_error(t: T) -> bool:
    return t.kind in ("dyn", "any", "error")


def is_optional(t: T) -> bool:
    return t.kind == "opaque" and t.name == "optional_type"


def unwrap_optional(t: T) -> tuple[T, bool]:
    return (t.params[0], True) if is_optional(t) else (t, False)


def is_scalar(t: T) -> bool:
    """Known to be of a constant size (the cost estimator's isScalar)."""
    if t.kind in ("bool", "double", "duration", "int", "timestamp", "uint"):
        return True
    return is_optional(t) and is_scalar(t.params[0])


class Mapping:
    """Substitutions for type variables (cel-go's checker mapping), keyed by the printed type."""

    __slots__ = ("subs",)

    def __init__(self, subs: dict[str, T] | None = None) -> None:
        self.subs = dict(subs or {})

    def copy(self) -> Mapping:
        return Mapping(self.subs)

    def find(self, t: T) -> T | None:
        return self.subs.get(format_type(t))

    def add(self, frm: T, to: T) -> None:
        self.subs[format_type(frm)] = to


def _runtime_dyn(t: T) -> bool:
    return t.kind in ("dyn", "any", "typeparam")


def type_assignable(to: T, frm: T) -> bool:
    """Type.IsAssignableType (the default rule): `to` is dynamic, or the same kind, name and, parameter by
    parameter, assignable."""
    if to == frm or _runtime_dyn(to):
        return True
    if to.kind != frm.kind or to.name != frm.name or len(to.params) != len(frm.params):
        return False
    return all(type_assignable(a, b) for a, b in zip(to.params, frm.params))


def _less_specific(t1: T, t2: T) -> bool:
    if is_dyn(t1) or t1.kind == "typeparam":
        return True
    if is_dyn(t2) or t2.kind == "typeparam":
        return False
    if t1.kind != t2.kind:
        return False
    if t1.kind == "opaque":
        return t1.name == t2.name and len(t1.params) == len(t2.params) and \
            all(_less_specific(a, b) for a, b in zip(t1.params, t2.params))
    if t1.kind in ("list", "map"):
        return all(_less_specific(a, b) for a, b in zip(t1.params, t2.params))
    if t1.kind == "type":
        return True
    return t1 == t2


def most_general(t1: T, t2: T) -> T:
    return t1 if _less_specific(t1, t2) else t2


def _not_referenced_in(m: Mapping, t: T, within: T) -> bool:
    if t == within:
        return False
    if within.kind == "typeparam":
        sub = m.find(within)
        return True if sub is None else _not_referenced_in(m, t, sub)
    if within.kind in ("opaque", "list", "map", "type"):
        return all(_not_referenced_in(m, t, p) for p in within.params)
    return True


def _valid_substitution(m: Mapping, t1: T, t2: T) -> tuple[bool, bool]:
    if t1 == t2:
        return True, True
    sub = m.find(t2)
    if sub is not None:
        if t1 == sub:
            return True, True
        if _assignable(m, t1, sub):
            general = most_general(t1, sub)
            if _not_referenced_in(m, t2, general):
                m.add(t2, general)
            return True, True
        return False, True
    if _not_referenced_in(m, t2, t1):
        m.add(t2, t1)
        return True, False
    return False, False


def _legacy_nullable(t: T) -> bool:
    return t.kind in ("opaque", "struct", "any", "duration", "timestamp")


def _assignable(m: Mapping, t1: T, t2: T) -> bool:
    if t2.kind == "typeparam":
        valid, has_sub = _valid_substitution(m, t1, t2)
        if valid:
            return True
        if has_sub:
            return False
    if t1.kind == "typeparam":
        return _valid_substitution(m, t2, t1)[0]
    if is_dyn_or_error(t1) or is_dyn_or_error(t2):
        return True
    if t1.kind == "null_type":
        return _legacy_nullable(t2) or type_assignable(t2, NULL)
    if t2.kind == "null_type":
        return _legacy_nullable(t1) or type_assignable(t1, NULL)
    if t1.kind in SCALARS + ("any", "duration", "timestamp", "struct"):
        return type_assignable(t2, t1)
    if t1.kind == "type":
        return t2.kind == "type"
    if t1.kind in ("opaque", "list", "map"):
        return t1.kind == t2.kind and t1.name == t2.name and len(t1.params) == len(t2.params) and \
            all(_assignable(m, a, b) for a, b in zip(t1.params, t2.params))
    return False


def assignable(m: Mapping, t1: T, t2: T) -> Mapping | None:
    """isAssignable: a new mapping where t2 may stand for t1, or None."""
    copy = m.copy()
    return copy if _assignable(copy, t1, t2) else None


def assignable_list(m: Mapping, l1: list[T], l2: list[T]) -> Mapping | None:
    if len(l1) != len(l2):
        return None
    copy = m.copy()
    return copy if all(_assignable(copy, a, b) for a, b in zip(l1, l2)) else None


def substitute(m: Mapping, t: T, to_dyn: bool) -> T:
    sub = m.find(t)
    if sub is not None:
        return substitute(m, sub, to_dyn)
    if to_dyn and t.kind == "typeparam":
        return DYN
    if t.kind in ("opaque", "list", "map", "type") and t.params:
        return T(t.kind, t.name, tuple(substitute(m, p, to_dyn) for p in t.params))
    return t

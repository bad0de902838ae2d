"""CEL for device selectors (DeviceClass and claim request selectors), as Kubernetes v1.36 compiles and runs them.

The work is done by `schedcheck.reference.util.cel` (a re-implementation of cel-go v0.26.0 with Kubernetes'
environment); this module is what the reader and the allocator call:

- `admit(text)`: the API server's validation of a new selector (validateCELSelector): the length limit, a
  compile in the NewExpressions environment, the estimated cost against the limit; a CompileError is a refusal.
- `compile_selector(text)`: the scheduler's compile (StoredExpressions, no estimate), cached per text.
- `matches(program, variable)`: DeviceMatches on one device; a CelRuntimeError carries cel-go's text.
- `device_variable(...)`: the `device` variable (attribute and capacity names without a domain belong to the
  driver's, a domain the device lacks reads as an empty map, a version attribute is a Semver).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from schedcheck.reference.quantity import Quantity
from schedcheck.reference.util.cel.cost import estimate
from schedcheck.reference.util.cel.errors import CelRuntimeError, CompileError, NotModelled
from schedcheck.reference.util.cel.libs.k8s import SemverError, cel_quantity, parse_semver as _parse_semver
from schedcheck.reference.util.cel.program import COST_LIMIT, MAX_LENGTH, Program, compile_expression, run
from schedcheck.reference.util.cel.values import CelMap, DefaultMap, Err, Semver, go_type, type_name

__all__ = ["CompileError", "NotModelled", "CelRuntimeError", "Program", "admit", "compile_selector", "parse",
           "matches", "evaluate", "result_bool", "device_variable", "bad_version", "parse_semver", "COST_LIMIT"]


def admit(text: str) -> int:
    """The API server's check of a new selector: its estimated cost, or a CompileError saying why it is refused."""
    if len(text) > MAX_LENGTH:
        raise CompileError(f"longer than {MAX_LENGTH} bytes")
    cost = estimate(compile_expression(text, stored=False).checked)
    if cost > COST_LIMIT:
        raise CompileError(f"too complex, exceeds cost limit (estimated cost {cost}, limit {COST_LIMIT})")
    return cost


@functools.lru_cache(maxsize=512)
def compile_selector(text: str) -> Program:
    """The scheduler's compile (StoredExpressions, as the allocator's CEL cache compiles)."""
    return compile_expression(text, stored=True)


def parse(text: str) -> Program:
    """compile_selector, uncached (CompileError, or NotModelled for what the reference does not evaluate)."""
    return compile_expression(text, stored=True)


def evaluate(program: Program, variable: dict[str, Any]) -> Any:
    """Run the program on one device: its value, or a CelRuntimeError (cel-go's text)."""
    value, _cost = run(program, {"device": variable})
    if isinstance(value, Err):
        raise CelRuntimeError(value.message)
    return value


def matches(program: Program, variable: dict[str, Any]) -> bool:
    """DeviceMatches: a version attribute that does not parse fails first, then the result must be a bool."""
    problem = bad_version(variable)
    if problem is not None:
        raise CelRuntimeError(problem)
    return result_bool(evaluate(program, variable))


def result_bool(value: Any) -> bool:
    """DeviceMatches' conversion of the result to a Go bool (cel-go's error texts)."""
    if isinstance(value, bool):
        return value
    kind = type_name(value)
    if kind == "string":
        detail = "unsupported native conversion from string to 'bool'"
    elif kind.startswith("kubernetes."):
        detail = f"type conversion error from '{go_type(value).removeprefix('cel.').removeprefix('*cel.')}' to 'bool'"
    else:
        detail = f"unsupported type conversion from '{kind}' to bool"
    raise CelRuntimeError(f"CEL result of type {kind} could not be converted to bool: {detail}")


def parse_semver(text: str, normalize: bool = False) -> Semver:
    """blang/semver's Parse; CelRuntimeError with its text where it refuses."""
    try:
        return _parse_semver(text, normalize)
    except SemverError as err:
        raise CelRuntimeError(str(err)) from err


@dataclass(frozen=True)
class _BadVersion:
    message: str


def _is_version(value: Any) -> bool:
    return type(value).__name__ == "SemVer"  # k8s_dra.SemVer, without importing the API module here


def device_variable(driver: str, attributes: dict[str, Any], capacity: dict[str, Quantity],
                    allow_multiple_allocations: bool = False) -> dict[str, Any]:
    """The `device` variable."""
    attrs: dict[str, list[tuple[str, Any]]] = {}
    for name, value in attributes.items():
        domain, _, ident = name.rpartition("/")
        if _is_version(value):
            try:
                value = _parse_semver(str(value))
            except SemverError as err:
                value = _BadVersion(f"attribute {name}: parse semantic version: {err}")
        attrs.setdefault(domain or driver, []).append((ident, value))
    caps: dict[str, list[tuple[str, Any]]] = {}
    for name, value in capacity.items():
        domain, _, ident = name.rpartition("/")
        caps.setdefault(domain or driver, []).append((ident, cel_quantity(value)))
    return {"driver": driver, "allowMultipleAllocations": allow_multiple_allocations,
            "attributes": DefaultMap((d, CelMap(items)) for d, items in attrs.items()),
            "capacity": DefaultMap((d, CelMap(items)) for d, items in caps.items())}


def bad_version(variable: dict[str, Any]) -> str | None:
    """The error upstream's DeviceMatches returns before evaluating, when a version attribute does not parse."""
    for _domain, names in variable["attributes"].items():
        for _name, value in names.items():
            if isinstance(value, _BadVersion):
                return value.message
    return None

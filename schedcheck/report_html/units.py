"""Resource values in upstream's internal units (cpu millicores, memory bytes, scalars in milli-units,
pods a count) shown for people, and the order dimensions are drawn in."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

FIRST = ("cpu", "memory")


def number(value: Any) -> float:
    """A resource value as a float; anything unreadable is 0."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        return 0.0
    return out if out == out and abs(out) != float("inf") else 0.0


def scale(dimension: str) -> tuple[float, str]:
    """(divisor, unit) that turns an internal value of the dimension into a readable one."""
    if dimension == "cpu":
        return 1000.0, "cpu"
    if dimension == "memory":
        return float(1 << 30), "GiB"
    if dimension == "pods":
        return 1.0, "pods"
    return 1000.0, dimension.rsplit("/", 1)[-1]  # scalar resources are stored in milli-units


def readable(dimension: str, value: Any) -> str:
    divisor, unit = scale(dimension)
    amount = number(value) / divisor
    if dimension == "memory" and 0 < abs(amount) < 1:
        return f"{number(value) / (1 << 20):.3g} MiB"
    return f"{amount:.3g} {unit}"


def dimensions(maps: Iterable[Mapping[str, Any] | None], limit: int = 5) -> list[str]:
    """The dimensions any of the resource maps names with a non-zero value: cpu, memory, then the rest
    sorted (pods last), at most `limit`."""
    seen: set[str] = set()
    for values in maps:
        for key, value in (values or {}).items():
            if isinstance(key, str) and number(value) != 0:
                seen.add(key)
    rest = sorted(d for d in seen if d not in FIRST and d != "pods") + (["pods"] if "pods" in seen else [])
    return ([d for d in FIRST if d in seen] + rest)[:limit]


def readable_of(dimension: str, part: Any, whole: Any) -> str:
    """"2 of 4 cpu": the unit once."""
    whole_text = readable(dimension, whole)
    part_text = readable(dimension, part)
    number_part, _, unit = part_text.partition(" ")
    if whole_text.endswith(" " + unit):
        return f"{number_part} of {whole_text}"
    return f"{part_text} of {whole_text}"

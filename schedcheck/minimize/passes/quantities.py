"""Passes over quantities: drop resource names (`dimension_edits`), divide one resource across the
whole scenario by its common factor (`scale_edits`), and round and lower single quantities toward
small round values (`quantity_edits`: cpu to whole cores, memory to whole Gi/Mi, scalars to units)."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from schedcheck import document as d
from schedcheck.minimize.edits import Doc, Edit, dropper, lower_int, path_label
from schedcheck.reference.quantity import Quantity

GI = 1024**3
MI = 1024**2
# quantities never lowered: a pod-count limit is not a size (110 is what kubelets report)
UNSCALED = {"pods"}


def _resource_maps(doc: Doc) -> list[tuple[str, tuple[Any, ...]]]:
    """Every resource list in the scenario: (what it is, path), in document order."""
    maps: list[tuple[str, tuple[Any, ...]]] = []
    for index, obj in enumerate(d.objects(doc) or []):
        if not isinstance(obj, dict):
            continue
        kind = obj.get("kind")
        base: tuple[Any, ...] = ("objects", index)
        spec, status = d.sub(obj, "spec"), d.sub(obj, "status")
        if kind == "Pod":
            for section in ("containers", "initContainers"):
                containers = spec.get(section)
                for i, container in enumerate(containers if isinstance(containers, list) else []):
                    for key in ("requests", "limits"):
                        if isinstance(d.sub(d.sub(container, "resources"), key), dict) and \
                                d.sub(d.sub(container, "resources"), key):
                            maps.append(("request", base + ("spec", section, i, "resources", key)))
            if d.sub(spec, "overhead"):
                maps.append(("request", base + ("spec", "overhead")))
            for key in ("requests", "limits"):  # pod-level resources
                if isinstance(d.sub(d.sub(spec, "resources"), key), dict) and d.sub(d.sub(spec, "resources"), key):
                    maps.append(("request", base + ("spec", "resources", key)))
        elif kind == "Node":
            for key in ("allocatable", "capacity"):
                if d.sub(status, key):
                    maps.append(("node", base + ("status", key)))
        elif kind == "PodGroup" and d.sub(spec, "minResources"):
            maps.append(("limit", base + ("spec", "minResources")))
        elif kind == "Queue":
            for path in (("capability",), ("deserved",), ("guarantee", "resource")):
                holder = spec
                for part in path:
                    holder = d.sub(holder, part)
                if holder:
                    maps.append(("limit", base + ("spec",) + path))
        elif kind == "ResourceQuota":
            for section, key in (("spec", "hard"), ("status", "used"), ("status", "hard")):
                if d.sub(d.sub(obj, section), key):
                    maps.append(("limit", base + (section, key)))
    return maps


def dimension_edits(doc: Doc) -> list[Edit]:
    edits: list[Edit] = []
    for what, path in _resource_maps(doc):
        values = d.get(doc, path)
        for name in values:
            if what == "node" and name in ("cpu", "memory", "pods"):
                continue  # a node without cpu or memory is not simpler, it is a different cluster
            if what == "node":
                edits.append((f"drop {name} from node", _node_dropper(path, name)))
            else:
                edits.append((f"drop {name} at {path_label(path)}", dropper(path + (name,))))
    return edits


def _node_dropper(path: tuple[Any, ...], name: str) -> Callable[[Doc], list[Doc]]:
    """Drop an extended resource from both allocatable and capacity of the node."""
    def make(current: Doc) -> list[Doc]:
        status = d.get(current, path[:-1])
        for key in ("allocatable", "capacity"):
            if isinstance(status.get(key), dict):
                status[key].pop(name, None)
                if not status[key]:
                    del status[key]
        return [current]
    return make


def _quantity(value: Any) -> Fraction | None:
    try:
        return Quantity.parse(value).as_fraction()
    except (ValueError, TypeError):
        return None


def _unit(name: str, value: Fraction) -> int:
    if name == "memory" or name.endswith("storage"):
        return GI if value >= GI else MI if value >= MI else 1
    return 1


def _render(name: str, value: Fraction) -> str:
    """The plainest spelling of a value: 3, 500m, 4Gi, 512Mi."""
    if value.denominator == 1:
        n = int(value)
        if (name == "memory" or name.endswith("storage")) and n:
            for suffix, size in (("Gi", GI), ("Mi", MI), ("Ki", 1024)):
                if n % size == 0:
                    return f"{n // size}{suffix}"
        return str(n)
    milli = value * 1000
    if milli.denominator == 1:
        return f"{int(milli)}m"
    return str(Quantity(value))


def _simpler_values(name: str, value: Fraction) -> list[Fraction]:
    """Values to try instead, most aggressive first; every one is smaller or rounder."""
    if value <= 0:
        return []
    unit = _unit(name, value)
    whole = value % unit == 0
    out: list[Fraction] = []
    if not whole:
        floor = (value // unit) * unit
        ceil = floor + unit
        for candidate in (floor, ceil):
            if candidate > 0:
                out.append(Fraction(candidate))
        if unit == 1 and value < 1:  # 250m -> 1
            out = [Fraction(1)]
        return out
    n = int(value // unit)
    for m in lower_int(n, 1):
        out.append(Fraction(m * unit))
    return out


def quantity_edits(doc: Doc) -> list[Edit]:
    edits: list[Edit] = []
    for what, path in _resource_maps(doc):
        if what == "node" and path[-1] == "capacity" and d.sub(d.get(doc, path[:-1]), "allocatable"):
            continue  # changed together with allocatable
        values = d.get(doc, path)
        for name, raw in values.items():
            if name in UNSCALED:
                continue
            value = _quantity(raw)
            if value is None:
                continue
            alternatives = _simpler_values(name, value)
            spelled = _render(name, value) if value % _unit(name, value) == 0 else str(raw)
            if not alternatives and spelled == str(raw):
                continue

            def make(current: Doc, path: tuple[Any, ...] = path, name: str = name, what: str = what,
                     value: Fraction = value, raw: Any = raw, alternatives: list[Fraction] = alternatives,
                     spelled: str = spelled) -> list[Doc]:
                out = []
                if spelled != str(raw):  # the same value, spelled plainly ("2000m" -> "2")
                    out.append(_set_quantity(copy.deepcopy(current), path, name, what, value, spelled))
                for alternative in alternatives:
                    out.append(_set_quantity(copy.deepcopy(current), path, name, what, value,
                                             _render(name, alternative)))
                return out
            edits.append((f"lower {name} at {path_label(path)}", make))
    return edits


def _set_quantity(current: Doc, path: tuple[Any, ...], name: str, what: str, old: Fraction, new: str) -> Doc:
    d.get(current, path)[name] = new
    if what == "node" and path[-1] == "allocatable":  # keep capacity in step when it said the same
        capacity = d.sub(d.get(current, path[:-1]), "capacity")
        if name in capacity and _quantity(capacity[name]) == old:
            capacity[name] = new
    return current


def scale_edits(doc: Doc) -> list[Edit]:
    """Divide one resource everywhere by the common factor of its values, or halve it (ratios kept)."""
    places: dict[str, list[tuple[tuple[Any, ...], Fraction]]] = {}
    for _, path in _resource_maps(doc):
        for name, raw in d.get(doc, path).items():
            value = _quantity(raw)
            if name in UNSCALED or value is None:
                continue
            places.setdefault(name, []).append((path, value))
    edits: list[Edit] = []
    for name, found in places.items():
        unit = GI if name == "memory" or name.endswith("storage") else 1  # whole Gi, whole cores or units
        if any((v / unit).denominator != 1 for _, v in found):
            continue
        counts = [int(v / unit) for _, v in found]
        if not any(counts):
            continue
        factors = []
        divisor = math.gcd(*counts)
        if divisor > 1:
            factors.append(divisor)
        if divisor % 2 == 0 and divisor != 2:
            factors.append(2)

        def make(current: Doc, name: str = name, found: list = found, unit: int = unit,
                 factors: list[int] = factors) -> list[Doc]:
            out = []
            for factor in factors:
                candidate = copy.deepcopy(current)
                for path, value in found:
                    d.get(candidate, path)[name] = _render(name, value / factor)
                out.append(candidate)
            return out
        if factors:
            edits.append((f"scale {name} down", make))
    return edits



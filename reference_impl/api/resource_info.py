"""The multi-dimensional resource and every comparison upstream uses.

Mirrors pkg/scheduler/api/resource_info.go (see volcano-semantics.md §1 and
seed 001). The quirks are deliberate: a nil scalar map differs from an empty
one, missing dimensions default to Zero or Infinity per call, comparisons have
a 0.1 tolerance except where upstream compares strictly, and `pods` is a real
dimension except in the few functions that skip it.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import TYPE_CHECKING

from schedcheck.reference.util.assertion import assertf

if TYPE_CHECKING:
    from schedcheck.reference.k8s import ResourceList

MIN_RESOURCE = 0.1
"""Upstream's minResource: the tolerance of every tolerant comparison."""

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"
EPHEMERAL_STORAGE = "ephemeral-storage"
MAX_FLOAT = 1.7976931348623157e308
MAX_INT = 2**63 - 1

# Names upstream drops from NewResource (device plugins fill this at run time).
IGNORED_DEVICES: set[str] = set()


class DimensionDefaultValue(enum.IntEnum):
    """How a scalar missing from one side of a comparison is read."""

    ZERO = 0
    INFINITY = -1


Zero = DimensionDefaultValue.ZERO
Infinity = DimensionDefaultValue.INFINITY


def _le(left: float, right: float) -> bool:
    return left < right or abs(left - right) < MIN_RESOURCE


def is_ignored_scalar_resource(name: str) -> bool:
    return name == PODS


def is_scalar_resource_name(name: str) -> bool:
    """Kubernetes IsScalarResourceName: extended, hugepages, prefixed native, attachable volumes."""
    if name.startswith("hugepages-") or name.startswith("attachable-volumes-"):
        return True
    # Extended names (a.b/c) and prefixed native names (kubernetes.io/x) are all
    # domain-prefixed; unprefixed names other than the two above are not scalar.
    return "/" in name


class Resource:
    """A resource vector: milli-cpu, memory bytes, and named scalars (milli-units)."""

    __slots__ = ("milli_cpu", "memory", "scalars", "max_task_num")

    def __init__(
        self,
        milli_cpu: float = 0.0,
        memory: float = 0.0,
        scalars: Mapping[str, float] | None = None,
        max_task_num: int = 0,
    ) -> None:
        self.milli_cpu = float(milli_cpu)
        self.memory = float(memory)
        self.scalars: dict[str, float] | None = (
            None if scalars is None else {k: float(v) for k, v in scalars.items()}
        )
        self.max_task_num = max_task_num

    # -- construction -----------------------------------------------------------------

    @classmethod
    def empty(cls) -> Resource:
        return cls()

    @classmethod
    def infinite(cls) -> Resource:
        return cls(MAX_FLOAT, MAX_FLOAT, None, MAX_INT)

    @classmethod
    def from_resource_list(cls, resource_list: ResourceList | None) -> Resource:
        """NewResource: cpu milli, memory bytes, pods plain (and MaxTaskNum), scalars milli."""
        r = cls()
        for name, quantity in (resource_list or {}).items():
            if name == CPU:
                r.milli_cpu += quantity.milli_value()
            elif name == MEMORY:
                r.memory += quantity.value()
            elif name == PODS:
                r.max_task_num += quantity.value()
                r.add_scalar(PODS, float(quantity.value()))
            elif name == EPHEMERAL_STORAGE:
                r.add_scalar(name, float(quantity.milli_value()))
            elif name.startswith("count/"):
                continue
            elif is_scalar_resource_name(name) and name not in IGNORED_DEVICES:
                r.add_scalar(name, float(quantity.milli_value()))
        return r

    def clone(self) -> Resource:
        c = Resource.__new__(Resource)
        c.milli_cpu = self.milli_cpu
        c.memory = self.memory
        c.scalars = None if self.scalars is None else dict(self.scalars)
        c.max_task_num = self.max_task_num
        return c

    # -- accessors ----------------------------------------------------------------------

    def get(self, name: str) -> float:
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if self.scalars is None:
            return 0.0
        return self.scalars.get(name, 0.0)

    def add_scalar(self, name: str, quantity: float) -> None:
        self.set_scalar(name, (self.scalars or {}).get(name, 0.0) + quantity)

    def set_scalar(self, name: str, quantity: float) -> None:
        if self.scalars is None:
            self.scalars = {}
        self.scalars[name] = float(quantity)

    def resource_names(self) -> list[str]:
        """Names whose value is at least the tolerance, `pods` included."""
        names = []
        if self.milli_cpu >= MIN_RESOURCE:
            names.append(CPU)
        if self.memory >= MIN_RESOURCE:
            names.append(MEMORY)
        for name, value in (self.scalars or {}).items():
            if value >= MIN_RESOURCE:
                names.append(name)
        return names

    def is_empty(self) -> bool:
        """All of cpu, memory and every scalar except `pods` below the tolerance."""
        if self.milli_cpu >= MIN_RESOURCE or self.memory >= MIN_RESOURCE:
            return False
        for name, value in (self.scalars or {}).items():
            if is_ignored_scalar_resource(name):
                continue
            if value >= MIN_RESOURCE:
                return False
        return True

    def is_zero(self, name: str) -> bool:
        if name == CPU:
            return self.milli_cpu < MIN_RESOURCE
        if name == MEMORY:
            return self.memory < MIN_RESOURCE
        if self.scalars is None:
            return True
        if name not in self.scalars:
            assertf(False, f"unknown resource {name}")
        return self.scalars.get(name, 0.0) < MIN_RESOURCE

    # -- arithmetic (in place, returning self, as upstream) -----------------------------

    def add(self, rr: Resource) -> Resource:
        self.milli_cpu += rr.milli_cpu
        self.memory += rr.memory
        if rr.scalars:
            if self.scalars is None:
                self.scalars = {}
            for name, value in rr.scalars.items():
                self.scalars[name] = self.scalars.get(name, 0.0) + value
        return self

    def _sub(self, rr: Resource) -> Resource:
        self.milli_cpu -= rr.milli_cpu
        self.memory -= rr.memory
        # A nil receiver map silently drops rr's scalars (upstream quirk).
        if self.scalars is not None and rr.scalars:
            for name, value in rr.scalars.items():
                self.scalars[name] = self.scalars.get(name, 0.0) - value
        return self

    def sub(self, rr: Resource) -> Resource:
        """Sub: asserts rr <= self (Zero), then subtracts."""
        if not rr.less_equal(self, Zero):
            assertf(False, f"resource is not sufficient to do operation: <{self}> sub <{rr}>")
        return self._sub(rr)

    def sub_floored(self, rr: Resource) -> Resource:
        """Subtract, each dimension floored at zero: the persistent-pipelines plugins' guard against
        deallocating more than was allocated (seed 004; not upstream, whose Sub asserts)."""
        self.milli_cpu = max(0.0, self.milli_cpu - rr.milli_cpu)
        self.memory = max(0.0, self.memory - rr.memory)
        if self.scalars is not None and rr.scalars:
            for name, value in rr.scalars.items():
                self.scalars[name] = max(0.0, self.scalars.get(name, 0.0) - value)
        return self

    def sub_without_assert(self, rr: Resource) -> Resource:
        """SubWithoutAssert: subtracts even when the result goes negative."""
        return self._sub(rr)

    def multi(self, ratio: float) -> Resource:
        self.milli_cpu *= ratio
        self.memory *= ratio
        if self.scalars:
            for name in self.scalars:
                self.scalars[name] *= ratio
        return self

    def set_max_resource(self, rr: Resource | None) -> None:
        if rr is None:
            return
        self.milli_cpu = max(self.milli_cpu, rr.milli_cpu)
        self.memory = max(self.memory, rr.memory)
        if not rr.scalars:
            return
        if self.scalars is None:
            self.scalars = dict(rr.scalars)
            return
        for name, value in rr.scalars.items():
            if name not in self.scalars or value > self.scalars[name]:
                self.scalars[name] = value

    def fit_delta(self, rr: Resource) -> Resource:
        """For every dimension rr requests: self -= rr + tolerance. Negative = insufficient."""
        if rr.milli_cpu > 0:
            self.milli_cpu -= rr.milli_cpu + MIN_RESOURCE
        if rr.memory > 0:
            self.memory -= rr.memory + MIN_RESOURCE
        if self.scalars is None:
            self.scalars = {}
        for name, value in (rr.scalars or {}).items():
            if value > 0:
                self.scalars[name] = self.scalars.get(name, 0.0) - (value + MIN_RESOURCE)
        return self

    def min_dimension_resource(self, rr: Resource, default: DimensionDefaultValue) -> Resource:
        self.milli_cpu = min(self.milli_cpu, rr.milli_cpu)
        self.memory = min(self.memory, rr.memory)
        if self.scalars is None:
            return self
        if rr.scalars is None:
            if default == Infinity:
                return self
            for name in self.scalars:
                self.scalars[name] = 0.0
            return self
        for name, value in self.scalars.items():
            if name in rr.scalars:
                self.scalars[name] = min(value, rr.scalars[name])
            elif default == Zero:
                self.scalars[name] = 0.0
        return self

    def diff(self, rr: Resource, default: DimensionDefaultValue) -> tuple[Resource, Resource]:
        """(increased, decreased) from rr to self; -1 is the Infinity sentinel."""
        left, right = self.clone(), rr.clone()
        fill = 0.0 if default == Zero else -1.0
        left.scalars = left.scalars if left.scalars is not None else {}
        right.scalars = right.scalars if right.scalars is not None else {}
        for name in left.scalars:
            right.scalars.setdefault(name, fill)
        for name in right.scalars:
            left.scalars.setdefault(name, fill)
        increased, decreased = Resource(scalars={}), Resource(scalars={})
        if left.milli_cpu > right.milli_cpu:
            increased.milli_cpu = left.milli_cpu - right.milli_cpu
        else:
            decreased.milli_cpu = right.milli_cpu - left.milli_cpu
        if left.memory > right.memory:
            increased.memory = left.memory - right.memory
        else:
            decreased.memory = right.memory - left.memory
        for name, lv in (left.scalars or {}).items():
            rv = right.scalars[name]  # type: ignore[index]
            if lv == -1:
                increased.scalars[name] = -1.0  # type: ignore[index]
            elif rv == -1:
                decreased.scalars[name] = -1.0  # type: ignore[index]
            elif lv > rv:
                increased.scalars[name] = lv - rv  # type: ignore[index]
            else:
                decreased.scalars[name] = rv - lv  # type: ignore[index]
        return increased, decreased

    # -- comparisons --------------------------------------------------------------------

    def less(self, rr: Resource, default: DimensionDefaultValue) -> bool:
        """Every dimension strictly less."""
        if not (self.milli_cpu < rr.milli_cpu and self.memory < rr.memory):
            return False
        return self._scalars_all(rr, default, lambda l, r: l < r)

    def less_equal(self, rr: Resource, default: DimensionDefaultValue) -> bool:
        """Every dimension less or equal, within the tolerance."""
        left, right = self.milli_cpu, rr.milli_cpu  # _le inlined: the per-node fit test of every action
        if not (left < right or abs(left - right) < MIN_RESOURCE):
            return False
        left, right = self.memory, rr.memory
        if not (left < right or abs(left - right) < MIN_RESOURCE):
            return False
        if not self.scalars and (default != Infinity or not rr.scalars):
            return True
        return self._scalars_all(rr, default, _le)

    def _scalars_all(self, rr: Resource, default: DimensionDefaultValue, cmp) -> bool:
        mine = self.scalars or {}
        if default == Infinity and rr.scalars:
            # A dimension rr has and self lacks is infinite on self's side.
            for name in rr.scalars:
                if name not in mine:
                    return False
        other = rr.scalars or {}
        for name, value in mine.items():
            if name not in other:
                if default == Infinity:
                    continue
                if not cmp(value, 0.0):
                    return False
            elif not cmp(value, other[name]):
                return False
        return True

    def less_equal_with_resources_name(
        self, rr: Resource, default: DimensionDefaultValue
    ) -> tuple[bool, list[str]]:
        left, right = self.milli_cpu, rr.milli_cpu
        if not self.scalars and (left < right or abs(left - right) < MIN_RESOURCE):
            left, right = self.memory, rr.memory
            if left < right or abs(left - right) < MIN_RESOURCE:
                return True, []  # the common case on the per-node path: it fits, no names to collect
        names: list[str] = []
        if not _le(self.milli_cpu, rr.milli_cpu):
            names.append(CPU)
        if not _le(self.memory, rr.memory):
            names.append(MEMORY)
        other = rr.scalars or {}
        for name, value in (self.scalars or {}).items():
            if name not in other:
                if default == Infinity:
                    continue
                if not _le(value, 0.0):
                    names.append(name)
            elif not _le(value, other[name]):
                names.append(name)
        return not names, names

    def less_partly(self, rr: Resource, default: DimensionDefaultValue) -> bool:
        return self._partly(rr, default, lambda l, r: l < r)

    def less_equal_partly(self, rr: Resource, default: DimensionDefaultValue) -> bool:
        return self._partly(rr, default, _le)

    def _partly(self, rr: Resource, default: DimensionDefaultValue, cmp) -> bool:
        if cmp(self.milli_cpu, rr.milli_cpu) or cmp(self.memory, rr.memory):
            return True
        mine = self.scalars or {}
        if default == Zero:
            for name in rr.scalars or {}:
                if name not in mine:
                    return True
        other = rr.scalars or {}
        for name, value in mine.items():
            if name not in other:
                if default == Infinity:
                    return True
                if cmp(value, 0.0):
                    return True
            elif cmp(value, other[name]):
                return True
        return False

    def equal(self, rr: Resource, default: DimensionDefaultValue) -> bool:
        """Within the tolerance on cpu, mem and self's scalars only (asymmetric, as upstream)."""
        del default  # unused upstream too
        if abs(self.milli_cpu - rr.milli_cpu) >= MIN_RESOURCE:
            return False
        if abs(self.memory - rr.memory) >= MIN_RESOURCE:
            return False
        other = rr.scalars or {}
        for name, value in (self.scalars or {}).items():
            if abs(value - other.get(name, 0.0)) >= MIN_RESOURCE:
                return False
        return True

    def less_equal_with_dimension_and_resources_name(
        self, rr: Resource | None, req: Resource | None
    ) -> tuple[bool, list[str]]:
        """Only the dimensions `req` asks for (> 0), strictly, no tolerance; `pods` skipped."""
        if rr is None:
            return False, self.resource_names()
        if req is None:
            return self.less_equal_with_resources_name(rr, Zero)
        names: list[str] = []
        if req.milli_cpu > 0 and self.milli_cpu > rr.milli_cpu:
            names.append(CPU)
        if req.memory > 0 and self.memory > rr.memory:
            names.append(MEMORY)
        if self.scalars is not None:
            mine, other = self.scalars, rr.scalars or {}
            for name, value in (req.scalars or {}).items():
                if is_ignored_scalar_resource(name) or value <= 0:
                    continue
                if mine.get(name, 0.0) > other.get(name, 0.0):
                    names.append(name)
        return not names, names

    def less_equal_partly_with_dimension(
        self, rr: Resource, req: Resource | None
    ) -> tuple[bool, list[str]]:
        if req is None:
            return False, []
        names: list[str] = []
        if req.milli_cpu > 0 and _le(self.milli_cpu, rr.milli_cpu):
            names.append(CPU)
        if req.memory > 0 and _le(self.memory, rr.memory):
            names.append(MEMORY)
        for name, value in (req.scalars or {}).items():
            if is_ignored_scalar_resource(name) or value <= 0:
                continue
            if _le(self.get(name), rr.get(name)):
                names.append(name)
        return bool(names), names

    def less_equal_partly_with_dimension_zero_filtered(
        self, rr: Resource, req: Resource | None
    ) -> tuple[bool, list[str]]:
        if req is None:
            return False, []
        filtered = req.clone()
        if self.milli_cpu < MIN_RESOURCE and rr.milli_cpu < MIN_RESOURCE:
            filtered.milli_cpu = 0.0
        if self.memory < MIN_RESOURCE and rr.memory < MIN_RESOURCE:
            filtered.memory = 0.0
        for name in list((filtered.scalars or {}).keys()):
            if self.get(name) < MIN_RESOURCE and rr.get(name) < MIN_RESOURCE:
                filtered.scalars[name] = 0.0  # type: ignore[index]
        return self.less_equal_partly_with_dimension(rr, filtered)

    def greater_partly_with_relevant_dimensions(self, rr: Resource | None, req: Resource | None) -> bool:
        """Like greater_partly_with_dimension, on cpu/mem where rr is non-zero and scalars rr has."""
        if req is None:
            return False
        rr = rr if rr is not None else Resource()
        filtered = Resource()
        if req.milli_cpu > 0 and rr.milli_cpu >= MIN_RESOURCE:
            filtered.milli_cpu = req.milli_cpu
        if req.memory > 0 and rr.memory >= MIN_RESOURCE:
            filtered.memory = req.memory
        if req.scalars is not None:
            filtered.scalars = {
                n: v for n, v in req.scalars.items() if v > 0 and n in (rr.scalars or {})
            }
        return self.greater_partly_with_dimension(rr, filtered)

    def greater_partly(self, rr: Resource, default: DimensionDefaultValue) -> bool:
        return not self.less_equal_with_resources_name(rr, default)[0]

    def greater_partly_with_dimension(self, rr: Resource | None, req: Resource | None) -> bool:
        if req is None:
            return False
        rr = rr if rr is not None else Resource()
        if req.milli_cpu > 0 and self.milli_cpu > rr.milli_cpu:
            return True
        if req.memory > 0 and self.memory > rr.memory:
            return True
        for name, value in (req.scalars or {}).items():
            if is_ignored_scalar_resource(name) or value <= 0:
                continue
            if self.get(name) > rr.get(name):
                return True
        return False

    # -- value semantics ----------------------------------------------------------------

    def as_dict(self) -> dict[str, float]:
        out = {CPU: self.milli_cpu, MEMORY: self.memory}
        out.update(self.scalars or {})
        return out

    def deep_equal(self, other: Resource) -> bool:
        """reflect.DeepEqual: exact floats, and a nil map differs from an empty one."""
        return (
            self.milli_cpu == other.milli_cpu
            and self.memory == other.memory
            and self.scalars == other.scalars
            and self.max_task_num == other.max_task_num
        )

    def __repr__(self) -> str:
        parts = [f"cpu {self.milli_cpu:.2f}", f"memory {self.memory:.2f}"]
        for name, value in sorted((self.scalars or {}).items()):
            parts.append(f"{name} {value:.2f}")
        return ", ".join(parts)

    __str__ = __repr__


# -- helpers (pkg/scheduler/api/helpers/helpers.go) -------------------------------------


def exceeded_part(left: Resource | None, right: Resource | None) -> Resource:
    """Per dimension max(left - right, 0), scalars only where left > right."""
    if right is None:
        return left if left is not None else Resource()
    if left is None:
        return Resource()
    increased, _ = left.diff(right, Zero)
    return increased


def res_min(left: Resource, right: Resource) -> Resource:
    out = Resource(min(left.milli_cpu, right.milli_cpu), min(left.memory, right.memory))
    if left.scalars is None or right.scalars is None:
        return out
    out.scalars = {name: min(value, right.scalars.get(name, 0.0)) for name, value in left.scalars.items()}
    return out


def res_max(left: Resource, right: Resource) -> Resource:
    out = Resource(max(left.milli_cpu, right.milli_cpu), max(left.memory, right.memory))
    if left.scalars is None and right.scalars is None:
        return out
    out.scalars = {}
    for source in (left.scalars, right.scalars):
        for name, value in (source or {}).items():
            if value >= 0:
                out.scalars[name] = max(out.scalars.get(name, 0.0), value)
    return out


def semantic_deep_equal(left: Resource, right: Resource) -> bool:
    """apimachinery's equality.Semantic.DeepEqual on Resources: exact floats, a nil map equals an empty one."""
    return (
        left.milli_cpu == right.milli_cpu
        and left.memory == right.memory
        and left.max_task_num == right.max_task_num
        and (left.scalars or {}) == (right.scalars or {})
    )


def share(left: float, right: float) -> float:
    if right == 0:
        return 0.0 if left == 0 else 1.0
    return left / right


def intersection(a: Resource, b: Resource) -> list[str]:
    other = set(b.resource_names())
    return [name for name in a.resource_names() if name in other]


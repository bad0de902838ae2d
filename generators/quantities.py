"""Hypothesis strategies for Kubernetes quantity strings, and exact arithmetic on them.

Every strategy here emits the *string* a user writes in a manifest ("2",
"500m", "4Gi", "1.5"), so a generated scenario is an ordinary document. Most
values are round; some are odd ("100m", "1.5", "1500Mi") and a few sit at the
edges the scheduler's comparisons care about: zero, and amounts near the 0.1
tolerance upstream applies in its own units (milli-cpu, bytes, milli-units of
a scalar device), such as "100u" cpu (0.1 millicore) or "500m" memory (half a
byte, the classic typo for 500Mi).

Shrinking: each quantity is one `st.sampled_from` over round values (repeated,
so that they make up about 70% of the draws), then odd ones (20%), then edge ones; it
shrinks towards its first entry, the smallest round value. So a failing example
shrinks to "1" cpu, "1Gi" memory and "1" GPU (and a node to "4" cpu, "16Gi").

The helpers at the bottom turn strings into exact Fractions (via the
reference's own Quantity parser) and back, so a generator can track a node's
remaining capacity exactly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from functools import cache, lru_cache

from hypothesis import strategies as st

from schedcheck.reference.quantity import Quantity

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"
GPU = "nvidia.com/gpu"

Amounts = dict[str, Fraction]
"""A resource list as exact amounts: cpu in cores, memory in bytes, others in units."""

# Odd but ordinary values a user writes.
_ODD_CPU = ["500m", "100m", "250m", "1.5", "1500m", "750m", "200m", "2.5", "0.5"]
# Values at the edges: zero, and amounts within or around upstream's 0.1 milli-cpu tolerance.
_EDGE_CPU = ["0", "100u", "50u", "150u", "1m", "999m", "1001m", "1000100u", "1999900u"]

_ODD_MEMORY = ["512Mi", "1536Mi", "1.5Gi", "1G", "500M", "100Mi", "3000Mi", "2.5Gi"]
# Memory is counted in bytes: "500m" is half a byte (a real typo for 500Mi), "100m" is 0.1 byte.
_EDGE_MEMORY = ["0", "1", "500m", "100m", "1Ki", "1k", "1073741825", "1073741823"]

# Extended resources are whole numbers in real clusters; the edge values still exercise the
# milli-unit tolerance of scalar dimensions.
_EDGE_GPU = ["0", "100u", "1m", "500m"]

# Node-side figures: (cpu, memory) of common machine shapes, and the odd allocatable a kubelet
# reports after system reservations. The first is the shrink target.
NODE_SHAPES_ROUND: list[tuple[str, str]] = [
    ("4", "16Gi"), ("8", "32Gi"), ("16", "64Gi"), ("2", "8Gi"), ("32", "128Gi"),
    ("8", "16Gi"), ("4", "8Gi"), ("64", "256Gi"), ("16", "32Gi"),
]
NODE_SHAPES_ODD: list[tuple[str, str]] = [
    ("3920m", "15Gi"), ("7910m", "30310Mi"), ("15890m", "62Gi"), ("3.5", "16302084Ki"),
    ("7500m", "7.5Gi"), ("1900m", "3900Mi"),
]
_NODE_PODS_ROUND = ["110", "250", "64"]
_NODE_PODS_SMALL = ["1", "2", "3", "4", "8"]
_NODE_GPU = ["1", "2", "4", "8"]

# Shares of round, odd and edge values among the draws.
WEIGHTS = (0.7, 0.2, 0.1)


def weighted_values(round_values: list, odd: list, edge: list, weights: tuple[float, float, float] = WEIGHTS) -> list:
    """One list holding round, odd and edge values in about the given shares (by repetition),
    round values first, so that `st.sampled_from` over it shrinks to the first round value."""
    groups = [(values, weight) for values, weight in zip((round_values, odd, edge), weights, strict=True) if values]
    total_weight = sum(w for _, w in groups)
    size = 20 * max(len(v) for v, _ in groups)
    out: list = []
    for values, weight in groups:
        out += values * max(1, round(size * weight / total_weight / len(values)))
    return out


def _kinded(round_values: list[str], odd: list[str], edge: list[str], odd_values: bool) -> st.SearchStrategy[str]:
    """One draw among round, odd and edge values (about 70%, 20% and 10%).

    A single `sampled_from` keeps generation cheap; it shrinks to its first entry, the
    smallest round value.
    """
    if not odd_values:
        return st.sampled_from(round_values)
    return st.sampled_from(weighted_values(round_values, odd, edge))


@cache
def cpu_quantities(max_cores: int = 4, odd: bool = True) -> st.SearchStrategy[str]:
    """A container's cpu request: "1".."max_cores" mostly; sometimes "500m", "1.5", "100u", "0"."""
    return _kinded([str(n) for n in range(1, max(1, max_cores) + 1)], _ODD_CPU, _EDGE_CPU, odd)


@cache
def memory_quantities(max_gi: int = 8, odd: bool = True) -> st.SearchStrategy[str]:
    """A container's memory request: "1Gi".."<max_gi>Gi" mostly; sometimes "512Mi", "1G", "500m", "0"."""
    return _kinded([f"{n}Gi" for n in range(1, max(1, max_gi) + 1)], _ODD_MEMORY, _EDGE_MEMORY, odd)


@cache
def gpu_quantities(max_gpus: int = 2, odd: bool = True) -> st.SearchStrategy[str]:
    """A container's nvidia.com/gpu request: "1".."max_gpus"; rarely "0" or a sub-milli amount."""
    return _kinded([str(n) for n in range(1, max(1, max_gpus) + 1)], [], _EDGE_GPU, odd)


@cache
def node_shapes(odd: bool = True) -> st.SearchStrategy[tuple[str, str]]:
    """A node's allocatable (cpu, memory): a common machine shape, or what a kubelet reports
    after reservations ("3920m", "15Gi")."""
    if not odd:
        return st.sampled_from(NODE_SHAPES_ROUND)
    return st.sampled_from(weighted_values(NODE_SHAPES_ROUND, NODE_SHAPES_ODD, [], (0.75, 0.25, 0)))


@cache
def node_pods_quantities() -> st.SearchStrategy[str]:
    """A node's pod limit: usually "110"; sometimes a handful, to make the pod-count predicate bite."""
    return st.sampled_from(weighted_values(_NODE_PODS_ROUND, _NODE_PODS_SMALL, [], (0.85, 0.15, 0)))


@cache
def node_gpu_quantities() -> st.SearchStrategy[str]:
    return st.sampled_from(_NODE_GPU)


# Which dimensions a container requests, by weight. The first (cpu and memory) is the common case
# and the shrink target; others leave dimensions out, down to a BestEffort container with none.
REQUEST_SHAPES: tuple[tuple[str, ...], ...] = (
    ((CPU, MEMORY),) * 5 + ((CPU,),) * 2 + ((MEMORY,), ()) + ((CPU, MEMORY, GPU),) * 2
)


@cache
@st.composite
def requests(
    draw: st.DrawFn,
    max_cores: int = 4,
    max_gi: int = 8,
    gpu: bool | None = None,
    max_gpus: int = 2,
    odd: bool = True,
) -> dict[str, str]:
    """A container's resources.requests: cpu and memory usually, a dimension sometimes missing.

    `gpu`: True always asks for GPUs, False never, None sometimes (about one in six).
    """
    shape = draw(_shapes(gpu))
    out: dict[str, str] = {}
    if CPU in shape:
        out[CPU] = draw(cpu_quantities(max_cores, odd))
    if MEMORY in shape:
        out[MEMORY] = draw(memory_quantities(max_gi, odd))
    if GPU in shape:
        out[GPU] = draw(gpu_quantities(max_gpus, odd))
    return out


@cache
def _shapes(gpu: bool | None) -> st.SearchStrategy[tuple[str, ...]]:
    if gpu is None:
        return st.sampled_from(REQUEST_SHAPES)
    shapes = [tuple(d for d in shape if d != GPU) for shape in REQUEST_SHAPES]
    if gpu:
        shapes = [(*shape, GPU) for shape in shapes]
    return st.sampled_from(shapes)


@lru_cache(maxsize=4096)
def choice(values: tuple) -> st.SearchStrategy:
    """`st.sampled_from(values)`, built once per tuple: a strategy built inside a composite on
    every draw costs more than the draw itself."""
    return st.sampled_from(values)


@cache
def rarely(percent: int = 15) -> st.SearchStrategy[bool]:
    """True about `percent`% of the time; shrinks to False."""
    return st.integers(0, 99).map(lambda i: i >= 100 - percent)


@cache
def sometimes(percent: int = 40) -> st.SearchStrategy[bool]:
    return rarely(percent)


# ---------------------------------------------------------------- exact arithmetic


@lru_cache(maxsize=4096)
def amount(text: str) -> Fraction:
    """The exact value of a quantity string (cores, bytes, units)."""
    return Quantity.parse(text).as_fraction()


def amounts(resources: Mapping[str, str]) -> Amounts:
    return {name: amount(text) for name, text in resources.items()}


def add(total: Amounts, extra: Mapping[str, Fraction]) -> Amounts:
    out = dict(total)
    for name, value in extra.items():
        out[name] = out.get(name, Fraction(0)) + value
    return out


def maximum(left: Amounts, right: Mapping[str, Fraction]) -> Amounts:
    out = dict(left)
    for name, value in right.items():
        out[name] = max(out.get(name, Fraction(0)), value)
    return out


def fits(request: Mapping[str, Fraction], remaining: Mapping[str, Fraction]) -> bool:
    """Every dimension the request asks for (> 0) is available, exactly, with no tolerance."""
    return all(value <= 0 or remaining.get(name, Fraction(0)) >= value for name, value in request.items())


def subtract(remaining: Amounts, request: Mapping[str, Fraction]) -> None:
    for name, value in request.items():
        if value > 0:
            remaining[name] = remaining.get(name, Fraction(0)) - value


def format_quantity(name: str, value: Fraction) -> str:
    """A canonical quantity string: "2", "2500m", "4Gi", "1536Mi", "1073741825"."""
    binary = name == MEMORY or name.endswith((".memory", "storage"))
    if binary and value > 0 and value.denominator == 1:
        for suffix, scale in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if value % scale == 0:
                return f"{value // scale}{suffix}"
    return str(Quantity(value))


def format_resources(values: Mapping[str, Fraction], names: Iterable[str] | None = None) -> dict[str, str]:
    chosen = list(values) if names is None else [n for n in names if n in values]
    return {name: format_quantity(name, values[name]) for name in chosen}

"""The plugin-accounting rules' dimension comparison: its cpu-and-memory fast path answers what the walk over
every named dimension answers."""

from __future__ import annotations

from hypothesis import given, strategies as st

from schedcheck.invariants.catalog.queues import _dims_differ
from schedcheck.reference.api.resource_info import MIN_RESOURCE, Resource

amounts = st.one_of(st.sampled_from([0.0, MIN_RESOURCE, 2 * MIN_RESOURCE, 1e12, -1.0, float("nan")]),
                    st.floats(-1e6, 1e13, allow_nan=False))
# scalar names that sort before, between and after cpu and memory
scalar_names = st.sampled_from(["nvidia.com/gpu", "pods", "example.com/fpga", "accel/x"])
resources = st.builds(Resource, amounts, amounts,
                      st.one_of(st.none(), st.just({}), st.dictionaries(scalar_names, amounts, max_size=3)))


def _walked(a: Resource, b: Resource) -> list[str]:
    names = set(a.as_dict()) | set(b.as_dict())
    return sorted(n for n in names if abs(a.get(n) - b.get(n)) > max(MIN_RESOURCE, 1e-9 * abs(b.get(n))))


@given(resources, resources)
def test_the_fast_path_agrees_with_the_walk_over_every_dimension(a, b):
    assert _dims_differ(a, b) == _walked(a, b)


def test_it_names_what_differs_and_nothing_else():
    assert _dims_differ(Resource(1000, 5), Resource(1000, 5)) == []
    assert _dims_differ(Resource(1000, 5), Resource(2000, 6)) == ["cpu", "memory"]
    assert _dims_differ(Resource(0, 0, {"pods": 1.0}), Resource(0, 0)) == ["pods"]

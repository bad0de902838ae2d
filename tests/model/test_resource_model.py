"""The Z3 resource encoding agrees with reference_impl/api/resource_info.py on concrete resources.

Values are on a dyadic grid (multiples of 1/32) so float arithmetic is exact and the real-valued
model and the float reference can be compared exactly, including at the 0.1 tolerance.
"""

import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from schedcheck.model import resource as m
from schedcheck.reference.api.resource_info import Infinity, Resource, Zero

VALUES = st.sampled_from([0.0, 1 / 32, 3 / 32, 4 / 32, 0.25, 1.0, 1000.0, 1000 + 1 / 32, 2000.0, -1 / 32])
SCALARS = st.one_of(st.none(), st.dictionaries(st.sampled_from(m.SCALARS), VALUES, max_size=2))
RESOURCES = st.builds(lambda c, mem, s: Resource(c, mem, s), VALUES, VALUES, SCALARS)
DEFAULTS = st.sampled_from([(Zero, m.ZERO), (Infinity, m.INFINITY)])


def holds(term) -> bool:
    value = z3.simplify(term)
    assert z3.is_true(value) or z3.is_false(value), value
    return z3.is_true(value)


def values(sym: m.SymResource) -> dict:
    out = {"cpu": z3.simplify(sym.cpu), "memory": z3.simplify(sym.mem)}
    for n in m.SCALARS:
        if holds(sym.has[n]):
            out[n] = z3.simplify(sym.val[n])
    return {k: float(v.as_fraction()) for k, v in out.items()}, holds(sym.nil)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(RESOURCES, RESOURCES, DEFAULTS)
def test_comparisons_agree(x, y, default):
    ref_default, model_default = default
    sx, sy = m.constant(x), m.constant(y)
    assert holds(m.less_equal(sx, sy, model_default)) == x.less_equal(y, ref_default)
    assert holds(m.less(sx, sy, model_default)) == x.less(y, ref_default)
    assert holds(m.less_partly(sx, sy, model_default)) == x.less_partly(y, ref_default)
    assert holds(m.less_equal_partly(sx, sy, model_default)) == x.less_equal_partly(y, ref_default)
    assert holds(m.equal(sx, sy)) == x.equal(y, ref_default)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(RESOURCES, RESOURCES, RESOURCES)
def test_less_equal_with_dimension_agrees(x, y, req):
    expected = x.less_equal_with_dimension_and_resources_name(y, req)[0]
    assert holds(m.less_equal_with_dimension(m.constant(x), m.constant(y), m.constant(req))) == expected


@settings(max_examples=200, deadline=None, derandomize=True)
@given(RESOURCES, RESOURCES)
def test_add_and_sub_agree(x, y):
    for model_op, ref in ((m.add, x.clone().add(y)), (m.sub, x.clone().sub_without_assert(y))):
        got, nil = values(model_op(m.constant(x), m.constant(y)))
        assert nil == (ref.scalars is None)
        assert got == {"cpu": ref.milli_cpu, "memory": ref.memory, **(ref.scalars or {})}


def test_expected_refutations_are_real_on_the_reference():
    """The counterexamples prove reports are reproduced by the reference itself."""
    from schedcheck.model.resource import ob_le_transitive, ob_sub_add_inverse

    ce = ob_le_transitive().counterexample

    def build(d):
        scalars = None if d["scalarsNil"] else {n: d[n] for n in m.SCALARS if d[f"has {n}"]}
        return Resource(d["cpu"], d["memory"], scalars)

    x, y, z = build(ce["x"]), build(ce["y"]), build(ce["z"])
    assert x.less_equal(y, Zero) and y.less_equal(z, Zero) and not x.less_equal(z, Zero)
    ce = ob_sub_add_inverse().counterexample
    x, y = build(ce["x"]), build(ce["y"])
    back = x.clone().sub_without_assert(y).add(y)
    assert back.as_dict() != {**x.as_dict(), **{k: 0.0 for k in (y.scalars or {})}}

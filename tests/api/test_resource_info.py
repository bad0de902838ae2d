"""The resource model: seed 001's worked examples and upstream's quirks (semantics §1)."""

import pytest

from schedcheck.reference.api.resource_info import (
    Infinity,
    Resource,
    Zero,
    exceeded_part,
    res_max,
    res_min,
    share,
)
from schedcheck.reference.util.assertion import AssertionViolation, recorded_assertions, set_panic_on_error
from tests.builders import GI, GPU, res, rl


# -- seed 001, one test per worked example ---------------------------------------------------

def test_seed001_add():
    r = res(2000, 4 * GI, nvidia_com__gpu=1)
    r.add(res(1000, 2 * GI, nvidia_com__gpu=1))
    assert (r.milli_cpu, r.memory, r.get(GPU)) == (3000, 6 * GI, 2)


def test_seed001_less_all_dimensions():
    assert res(1000, 2 * GI, nvidia_com__gpu=1).less(res(2000, 4 * GI, nvidia_com__gpu=2), Zero)


def test_seed001_less_equal_with_resources_name_lists_short_dimensions():
    ok, names = res(3000, 8 * GI, nvidia_com__gpu=2).less_equal_with_resources_name(
        res(2000, 4 * GI, nvidia_com__gpu=4), Zero)
    assert (ok, names) == (False, ["cpu", "memory"])


def test_seed001_dimension_filtered_compare_only_checks_requested_gpu():
    ok, names = res(3000, 8 * GI).less_equal_with_dimension_and_resources_name(
        res(2000, 4 * GI), res(nvidia_com__gpu=1))
    assert (ok, names) == (True, [])


def test_seed001_diff():
    increased, decreased = res(3000, 2 * GI).diff(res(2000, 4 * GI), Zero)
    assert (increased.milli_cpu, increased.memory) == (1000, 0)
    assert (decreased.milli_cpu, decreased.memory) == (0, 2 * GI)


def test_seed001_pod_request_is_max_of_containers_sum_and_init_max():
    from schedcheck.reference.api.task_info import get_pod_resource_request
    from schedcheck.reference.k8s import Container, Pod

    p = Pod(name="p", namespace="d", uid="u",
            containers=[Container("a", rl(cpu="500m", memory="1Gi")), Container("b", rl(cpu="300m", memory="512Mi"))],
            init_containers=[Container("ia", rl(cpu="1000m", memory="512Mi")), Container("ib", rl(cpu="200m", memory="2Gi"))])
    r = get_pod_resource_request(p)
    assert (r.milli_cpu, r.memory, r.get("pods")) == (1000, 2 * GI, 1)


def test_seed001_future_idle():
    from schedcheck.reference.api.node_info import NodeInfo

    n = NodeInfo(None, "n")
    n.idle, n.releasing, n.pipelined = res(100), res(500), res(300)
    assert n.future_idle().milli_cpu == 300


def test_seed001_is_empty_ignores_pods():
    assert res(pods=1).is_empty()
    assert not res(nvidia_com__gpu=1).is_empty()


# -- tolerance and defaults ------------------------------------------------------------------

def test_less_equal_tolerates_point_one():
    assert res(1000.05).less_equal(res(1000), Zero)
    assert not res(1000.2).less_equal(res(1000), Zero)


def test_less_is_strict_so_two_zero_cpus_are_never_less():
    assert not res(0, 1).less(res(0, 2), Zero)


def test_missing_scalar_zero_vs_infinity():
    have_gpu, no_gpu = res(1, 1, nvidia_com__gpu=1000), res(2, 2)
    assert not have_gpu.less_equal(no_gpu, Zero)  # missing on the right reads 0
    assert have_gpu.less_equal(no_gpu, Infinity)  # missing on the right reads infinite
    # Infinity: a dimension only the right side has is infinite on the left
    assert not res(1, 1, pods=1).less_equal(res(2, 2, pods=1, nvidia_com__gpu=5), Infinity)
    assert not Resource(1, 1).less_equal(res(2, 2, pods=1), Infinity)


def test_less_equal_with_resources_name_has_no_infinity_key_rule():
    ok, _ = Resource(1, 1).less_equal_with_resources_name(res(2, 2, pods=1), Infinity)
    assert ok


def test_less_partly_zero_counts_keys_only_on_the_right():
    assert res(5, 5).less_partly(res(1, 1, nvidia_com__gpu=0), Zero)
    assert not res(5, 5).less_partly(res(1, 1), Zero)


def test_equal_is_asymmetric():
    assert res(1, 1).equal(res(1, 1, nvidia_com__gpu=5), Zero)
    assert not res(1, 1, nvidia_com__gpu=5).equal(res(1, 1), Zero)


def test_dimension_filtered_compare_is_strict_without_tolerance():
    ok, names = res(1000.05).less_equal_with_dimension_and_resources_name(res(1000), res(1))
    assert (ok, names) == (False, ["cpu"])
    assert res(5000).less_equal_with_dimension_and_resources_name(None, res(1)) == (False, ["cpu"])


# -- arithmetic quirks -----------------------------------------------------------------------

def test_sub_asserts_and_sub_without_assert_goes_negative():
    with pytest.raises(AssertionViolation):
        res(1000).sub(res(2000))
    assert res(1000).sub_without_assert(res(2000)).milli_cpu == -1000


def test_sub_assert_can_be_turned_off_like_panic_on_error_false():
    set_panic_on_error(False)
    assert res(1000).sub(res(2000)).milli_cpu == -1000
    assert recorded_assertions() and "not sufficient" in recorded_assertions()[0]


def test_sub_from_nil_scalar_map_drops_scalars():
    r = Resource(1000, 0)
    r.sub_without_assert(res(0, 0, nvidia_com__gpu=1000))
    assert r.scalars is None


def test_diff_infinity_sentinel():
    increased, decreased = res(1, 1, nvidia_com__gpu=5).diff(res(1, 1), Infinity)
    assert decreased.scalars == {GPU: -1}
    assert increased.scalars == {}


def test_min_dimension_resource_zero_vs_infinity():
    assert res(1, 1, nvidia_com__gpu=5).min_dimension_resource(Resource(2, 2), Infinity).get(GPU) == 5
    assert res(1, 1, nvidia_com__gpu=5).min_dimension_resource(Resource(2, 2), Zero).get(GPU) == 0
    assert res(1, 1, nvidia_com__gpu=5).min_dimension_resource(res(2, 2, nvidia_com__gpu=3), Zero).get(GPU) == 3


def test_fit_delta_subtracts_tolerance_per_requested_dimension():
    r = res(1000, 100).fit_delta(res(1000, 0))
    assert r.milli_cpu == pytest.approx(-0.1) and r.memory == 100


def test_exceeded_part_and_helpers():
    assert exceeded_part(res(3000, 10), res(1000, 20)).as_dict() == {"cpu": 2000, "memory": 0}
    assert res_min(res(1, 5), res(2, 3)).as_dict() == {"cpu": 1, "memory": 3}
    assert res_max(res(1, 5, nvidia_com__gpu=-1), res(2, 3)).as_dict() == {"cpu": 2, "memory": 5}
    assert share(0, 0) == 0 and share(5, 0) == 1 and share(1, 4) == 0.25


def test_from_resource_list_units():
    from schedcheck.reference.quantity import Quantity

    r = Resource.from_resource_list({**rl(cpu="1500m", memory="1Gi", pods="110", nvidia_com__gpu="2"),
                                     "ephemeral-storage": Quantity.parse("1"),
                                     "count/pods": Quantity.parse("5")})
    assert r.milli_cpu == 1500 and r.memory == GI
    assert r.get("pods") == 110 and r.max_task_num == 110
    assert r.get(GPU) == 2000  # scalars are milli-units
    assert r.get("ephemeral-storage") == 1000
    assert "count/pods" not in (r.scalars or {})  # quota counts are skipped


def test_set_max_resource_copies_scalars_into_nil_map():
    r = Resource(1, 1)
    r.set_max_resource(res(0, 0, nvidia_com__gpu=3))
    assert r.scalars == {GPU: 3}


def test_resource_names_include_pods():
    assert res(1000, 0, pods=1).resource_names() == ["cpu", "pods"]

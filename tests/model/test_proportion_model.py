"""The unrolled water-filling model computes the reference's deserved, and the bounds hold on it."""

from hypothesis import given, settings
from hypothesis import strategies as st

from schedcheck.model import proportion as P
from schedcheck.reference.api.queue_info import QueueInfo
from schedcheck.reference.api.resource_info import Resource
from schedcheck.reference.k8s import Queue
from schedcheck.reference.plugins.proportion import compute_deserved
from schedcheck.reference.plugins.queue_attr import QueueAttr, init_quota, total_guarantee
from schedcheck.reference.quantity import Quantity

CPU = st.integers(0, 12)
QUEUES = st.lists(st.tuples(st.integers(1, 3), CPU, st.one_of(st.none(), st.integers(1, 12)), CPU),
                  min_size=1, max_size=3)


def _reference(total_cpu: int, specs) -> tuple[list[float], list]:
    total = Resource(total_cpu * 1000.0, 0.0)
    infos, attrs = [], []
    for i, (weight, guarantee, capability, request) in enumerate(specs):
        q = Queue(name=f"q{i}", uid=f"q{i}", weight=weight,
                  guarantee={"cpu": Quantity.parse(str(guarantee))} if guarantee else {},
                  capability={"cpu": Quantity.parse(str(capability))} if capability else {})
        infos.append(QueueInfo(q))
    guarantees = total_guarantee(infos)
    for info, (_, _, _, request) in zip(infos, specs):
        attr = QueueAttr(info)
        init_quota(attr, info, total, guarantees)
        attr.request = Resource(request * 1000.0, 0.0)
        attrs.append(attr)
    model_total, queues = P.from_attrs(total, attrs)
    compute_deserved(total, attrs)
    return [a.deserved.milli_cpu for a in attrs], (model_total, queues)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.integers(0, 16), QUEUES)
def test_model_deserved_equals_reference(total_cpu, specs):
    expected, (total, queues) = _reference(total_cpu, specs)
    got, _, done = P.compute_deserved(P.PyOps, total, queues, 2 * len(queues) + 1)
    assert done
    assert got == expected
    problems = P.check_deserved(total, queues, got)
    # the only bound that may break is the sum (a documented finding)
    assert all(p.startswith("sum of deserved") for p in problems), problems


def test_sum_over_total_reproduces_on_the_reference():
    """prove's counterexample shape on the reference: a guarantee raise on top of the others' parts."""
    expected, (total, queues) = _reference(3, [(1, 0, 1, 1), (1, 2, 2, 2), (1, 0, 2, 1)])
    assert sum(expected) > total
    assert P.check_deserved(total, queues, expected) == [f"sum of deserved {sum(expected)} > total {total}"]

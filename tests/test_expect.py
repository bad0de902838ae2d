"""Judging the expect block: each kind of expectation, met and unmet."""

from schedcheck.expect import judge
from schedcheck.runner import RunResult
from schedcheck.scenario.model import Expectations


def _result(**kw) -> RunResult:
    result = RunResult(scenario="s", seed=0, cycles=1)
    for key, value in kw.items():
        setattr(result, key, value)
    return result


def test_binds_must_match_exactly():
    result = _result(binds={"ns/a": "n1", "ns/b": "n2"})
    assert judge(Expectations(binds={"ns/a": "n1", "ns/b": "n2"}), result) == []
    failures = judge(Expectations(binds={"ns/a": "n2"}), result)
    assert any("bound to n2, but it was bound to n1" in f for f in failures)
    assert any("ns/b was bound to n2, which the expectation does not list" in f for f in failures)
    assert judge(Expectations(binds={"ns/c": "n1"}), _result()) == [
        "binds: expected ns/c bound to n1, but it was not bound"]


def test_evicted_is_a_multiset():
    result = _result(evicted=["ns/a", "ns/a", "ns/b"])
    assert judge(Expectations(evicted=["ns/b", "ns/a", "ns/a"]), result) == []
    (failure,) = judge(Expectations(evicted=["ns/a", "ns/b"]), result)
    assert "unexpected ['ns/a']" in failure


def test_pipelined_groups_by_pod_group():
    result = _result(pipelined={"ns/p1": "n1", "ns/p2": "n2"}, pipelined_groups={"ns/p1": "ns/pg", "ns/p2": "ns/pg"})
    assert judge(Expectations(pipelined={"ns/pg": ["n1", "n2"]}), result) == []
    (failure,) = judge(Expectations(pipelined={"ns/pg": ["n1"]}), result)
    assert "ns/p2 of ns/pg is pipelined to n2" in failure
    (failure,) = judge(Expectations(pipelined={"ns/other": ["n1"]}), result)
    assert "none is" in failure


def test_phases_and_status_counts_and_counts():
    result = _result(pod_group_phases={"ns/pg": "Running"}, task_status_counts={"ns/pg": {"Running": 2}},
                     binds={"ns/a": "n1"}, evicted=[])
    assert judge(Expectations(pod_group_phases={"ns/pg": "Running"},
                              task_status_counts={"ns/pg": {"Running": 2}}, bind_count=1, evict_count=0), result) == []
    failures = judge(Expectations(pod_group_phases={"ns/pg": "Inqueue"},
                                  task_status_counts={"ns/pg": {"Running": 1, "Pending": 1}},
                                  bind_count=2, evict_count=1), result)
    assert len(failures) == 5  # phase, Running, Pending, bindCount, evictCount

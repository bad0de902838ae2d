"""The three dispatch modes and the enable flags (semantics §6.2), with stand-in callbacks."""

from schedcheck.reference.framework.session import ABSTAIN, PERMIT, REJECT
from schedcheck.reference.k8s import ClusterObjects
from tests.builders import node, pod, pod_group
from tests.framework.helpers import conf, session


def _ssn(*tiers, **flags):
    objects = ClusterObjects(nodes=[node("n1")], pods=[pod("p-0"), pod("p-1")], pod_groups=[pod_group("pg", 1)])
    ssn = session(objects, conf(*tiers, **flags))
    ssn._fns = {point: {} for point in ssn._fns}  # drop what the real plugins registered
    ssn._tiered_cache.clear()
    ssn._flat_cache.clear()
    return ssn


def test_first_non_zero_compare_walks_tiers_in_order():
    ssn = _ssn(["a", "b"], ["c"])
    calls = []
    ssn.add_fn("job_order", "a", lambda l, r: calls.append("a") or 0)
    ssn.add_fn("job_order", "b", lambda l, r: calls.append("b") or 1)
    ssn.add_fn("job_order", "c", lambda l, r: calls.append("c") or -1)
    job = next(iter(ssn.jobs.values()))
    assert ssn.job_order_compare_fn(job, job) == 1 and calls == ["a", "b"]


def test_disabled_flag_skips_the_plugin():
    ssn = _ssn(["a", "b"], a={"enableJobOrder": False})
    ssn.add_fn("job_order", "a", lambda l, r: -1)
    ssn.add_fn("job_order", "b", lambda l, r: 1)
    job = next(iter(ssn.jobs.values()))
    assert ssn.job_order_compare_fn(job, job) == 1


def test_job_order_falls_back_to_creation_time_then_uid():
    ssn = _ssn(["a"])
    jobs = list(ssn.jobs.values())
    job = jobs[0]
    other = job.clone()
    other.uid = "default/zz"
    assert ssn.job_order_fn(job, other) and not ssn.job_order_fn(other, job)


def test_vote_reject_wins_within_a_tier_and_permit_ends_the_walk():
    ssn = _ssn(["a", "b"], ["c"])
    job = next(iter(ssn.jobs.values()))
    ssn.add_fn("job_pipelined", "a", lambda j: PERMIT)
    ssn.add_fn("job_pipelined", "b", lambda j: REJECT)
    assert not ssn.job_pipelined(job)
    ssn.add_fn("job_pipelined", "b", lambda j: ABSTAIN)
    ssn.add_fn("job_pipelined", "c", lambda j: REJECT)
    assert ssn.job_pipelined(job)  # tier 1 permitted; tier 2 is never asked


def test_vote_abstain_only_tiers_fall_through_and_default_is_true():
    ssn = _ssn(["a"], ["c"])
    job = next(iter(ssn.jobs.values()))
    assert ssn.job_enqueueable(job)
    ssn.add_fn("job_enqueueable", "a", lambda j: ABSTAIN)
    ssn.add_fn("job_enqueueable", "c", lambda j: REJECT)
    assert not ssn.job_enqueueable(job)


def _victims(ssn, point="preemptable"):
    tasks = list(next(iter(ssn.jobs.values())).tasks.values())
    result = ssn.preemptable(tasks[0], tasks) if point == "preemptable" else ssn.reclaimable(tasks[0], tasks)
    return tasks, result


def test_tiered_intersection_intersects_within_a_tier():
    ssn = _ssn(["a", "b"])
    tasks = list(next(iter(ssn.jobs.values())).tasks.values())
    ssn.add_fn("preemptable", "a", lambda p, ts: (list(ts), PERMIT))
    ssn.add_fn("preemptable", "b", lambda p, ts: (ts[1:], PERMIT))
    assert [t.uid for t in ssn.preemptable(tasks[0], tasks)] == [tasks[1].uid]


def test_tiered_intersection_empty_tier_does_not_veto_the_next_tier():
    ssn = _ssn(["a"], ["b"])
    tasks = list(next(iter(ssn.jobs.values())).tasks.values())
    ssn.add_fn("preemptable", "a", lambda p, ts: ([], PERMIT))
    ssn.add_fn("preemptable", "b", lambda p, ts: (ts[:1], PERMIT))
    assert [t.uid for t in ssn.preemptable(tasks[0], tasks)] == [tasks[0].uid]


def test_tiered_intersection_empty_intersection_restarts_from_next_plugin():
    ssn = _ssn(["a", "b", "c"])
    tasks = list(next(iter(ssn.jobs.values())).tasks.values())
    ssn.add_fn("preemptable", "a", lambda p, ts: (ts[:1], PERMIT))
    ssn.add_fn("preemptable", "b", lambda p, ts: (ts[1:], PERMIT))  # intersection empty -> reset
    ssn.add_fn("preemptable", "c", lambda p, ts: (ts[1:], PERMIT))
    assert [t.uid for t in ssn.preemptable(tasks[0], tasks)] == [tasks[1].uid]


def test_tiered_intersection_abstain_is_skipped_and_nothing_means_none():
    ssn = _ssn(["a"])
    tasks = list(next(iter(ssn.jobs.values())).tasks.values())
    assert ssn.preemptable(tasks[0], tasks) is None
    ssn.add_fn("preemptable", "a", lambda p, ts: (list(ts), ABSTAIN))
    assert ssn.preemptable(tasks[0], tasks) is None


def test_job_starving_first_tier_with_a_plugin_decides():
    ssn = _ssn(["a"], ["b", "c"])
    job = next(iter(ssn.jobs.values()))
    assert not ssn.job_starving(job)  # nobody registered: false
    ssn.add_fn("job_starving", "b", lambda j: True)
    ssn.add_fn("job_starving", "c", lambda j: False)
    assert not ssn.job_starving(job)
    ssn.add_fn("job_starving", "c", lambda j: True)
    assert ssn.job_starving(job)


def test_all_must_pass_points():
    ssn = _ssn(["a", "b"])
    job = next(iter(ssn.jobs.values()))
    queue = ssn.queues["default"]
    task = next(iter(job.tasks.values()))
    assert ssn.job_ready(job) and ssn.allocatable(queue, task) and not ssn.overused(queue)
    ssn.add_fn("allocatable", "a", lambda q, t: True)
    ssn.add_fn("allocatable", "b", lambda q, t: False)
    ssn.add_fn("overused", "b", lambda q: True)
    assert not ssn.allocatable(queue, task) and ssn.overused(queue)
    ssn.add_fn("predicate", "a", lambda t, n: None)
    ssn.add_fn("predicate", "b", lambda t, n: ValueError("no"))
    assert isinstance(ssn.predicate_fn(task, ssn.node_list[0]), ValueError)

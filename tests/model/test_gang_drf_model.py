"""Gang counts and gang/drf victim rules of the model agree with the reference; DRF properties decided."""

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from schedcheck.model import drf as D
from schedcheck.model import gang as G
from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import ALL_STATUSES
from schedcheck.reference.plugins.gang import GangPlugin
from tests.builders import pod, pod_group

TASKS = st.lists(st.tuples(st.sampled_from(ALL_STATUSES), st.booleans()), max_size=8)


def _job(tasks, min_member: int) -> JobInfo:
    job = JobInfo("uid-pg-pg")
    job.set_pod_group(pod_group("pg", min_member))
    for i, (status, best_effort) in enumerate(tasks):
        t = TaskInfo(pod(f"t{i}", cpu="" if best_effort else "1", memory="" if best_effort else "1Gi"))
        t.status = status
        job.add_task_info(t)
    return job


@settings(max_examples=200, deadline=None, derandomize=True)
@given(TASKS, st.integers(0, 6))
def test_gang_counts_agree(tasks, min_member):
    job = _job(tasks, min_member)
    n, be = G.counts_of(job)
    assert G.ready(n) == job.ready_task_num()
    assert G.waiting(n) == job.waiting_task_num()
    assert G.valid(n) == job.valid_task_num()
    assert G.is_ready(n, be, min_member) == job.is_ready()
    assert G.is_pipelined(n, be, min_member) == job.is_pipelined()
    assert G.is_starving(n, min_member) == job.is_starving()


@settings(max_examples=100, deadline=None, derandomize=True)
@given(TASKS, st.integers(0, 6), st.integers(0, 6))
def test_gang_preemptable_agrees(tasks, min_member, candidates):
    job = _job(tasks, min_member)
    fns = {}
    ssn = SimpleNamespace(jobs={job.uid: job}, add_fn=lambda name, plugin, fn: fns.setdefault(name, fn))
    GangPlugin({}).on_session_open(ssn)
    preemptees = [SimpleNamespace(job=job.uid) for _ in range(candidates)]
    victims, _ = fns["preemptable"](None, preemptees)
    assert len(victims) == G.gang_victims(job.ready_task_num(), min_member, candidates, lambda c, a, b: a if c else b)


@settings(max_examples=8, deadline=None, derandomize=True)
@given(st.integers(0, 10_000))
def test_progressive_filling_is_what_the_reference_allocates(seed):
    import random

    total, demands, counts = D.random_instance(random.Random(seed))
    assert D.reference_allocation(total, demands, counts) == D.progressive_filling(total, demands, counts)


def test_properties_decided_on_hand_instances():
    total = {"cpu": 9000.0, "memory": 18.0 * D.GI, "pods": 110.0}
    demands = [{"cpu": 1000.0, "memory": 4.0 * D.GI, "pods": 1.0}, {"cpu": 3000.0, "memory": 1.0 * D.GI, "pods": 1.0}]
    # the NSDI'11 example: DRF gives 3 and 2 tasks
    assert D.progressive_filling(total, demands, [10, 10]) == [3, 2]
    good = D.decide_properties(total, demands, [10, 10], [3, 2])
    assert good["sharingIncentive"] and good["envyFree"] and good["paretoEfficient"]
    wasteful = D.decide_properties(total, demands, [10, 10], [2, 1])
    assert not wasteful["paretoEfficient"] and wasteful["paretoImprovement"] is not None
    unfair = D.decide_properties(total, demands, [10, 10], [0, 3])
    assert not unfair["sharingIncentive"]


CPU_MEM = st.integers(0, 8).map(float)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(CPU_MEM, CPU_MEM, CPU_MEM, CPU_MEM, st.lists(st.tuples(CPU_MEM, CPU_MEM), max_size=4))
def test_drf_victims_agree_with_the_plugin(p_cpu, p_mem, v_cpu, v_mem, victims):
    from schedcheck.reference.api.resource_info import Resource
    from schedcheck.reference.plugins.drf import DrfAttr, DrfPlugin

    total = {"cpu": 10.0, "memory": 10.0}
    plugin = DrfPlugin({})
    plugin.total_resource = Resource(10.0, 10.0)
    plugin._total_names = ["cpu", "memory"]
    v_cpu, v_mem = v_cpu + sum(c for c, _ in victims), v_mem + sum(m for _, m in victims)
    plugin.job_attrs = {"p": DrfAttr(Resource(p_cpu, p_mem)), "v": DrfAttr(Resource(v_cpu, v_mem))}
    preemptor = SimpleNamespace(job="p", resreq=Resource(1.0, 1.0))
    preemptees = [SimpleNamespace(job="v", resreq=Resource(c, m)) for c, m in victims]
    got, _ = plugin.preemptable(preemptor, preemptees)
    left = D.dominant_share({"cpu": p_cpu + 1.0, "memory": p_mem + 1.0}, total)
    expected = D.drf_victims(left, {"cpu": v_cpu, "memory": v_mem},
                             [{"cpu": c, "memory": m} for c, m in victims], total)
    assert [next(i for i, p in enumerate(preemptees) if p is v) for v in got] == expected

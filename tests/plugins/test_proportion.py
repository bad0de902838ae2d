"""proportion: deserved water-filling and every extension point (semantics §9.4, seeds 001 and 003)."""

from __future__ import annotations

from collections import Counter

import pytest

from schedcheck.reference.api.queue_info import QueueInfo
from schedcheck.reference.api.resource_info import Resource
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.framework.session import PERMIT, REJECT
from schedcheck.reference.framework.statement import Statement
from schedcheck.reference.k8s import ClusterObjects, Queue
from schedcheck.reference.api.resource_info import semantic_deep_equal
from schedcheck.reference.plugins.util import inqueue_resource


def deduct_sch_gated_resources(job, res):
    return job.deduct_sch_gated_resources(res)
from schedcheck.reference.plugins.proportion import (
    STATE_KEY,
    QueueAttr,
    compute_deserved,
)
from schedcheck.reference.scheduler import Scheduler
from schedcheck.reference.util.assertion import AssertionViolation
from tests.builders import GI, node, pod, pod_group, rl
from tests.framework.helpers import conf, session

CPU = 1000.0  # one core in milli-cpu


def _cluster(nodes, queues, jobs, **extra):
    """jobs: (group, queue, pending, running, cpu per pod[, podgroup extras])."""
    objects = ClusterObjects(nodes=nodes, queues=queues, **extra)
    for group, queue, pending, running, cpu, *pg_extra in jobs:
        pg_fields = {"phase": "Running" if running else "Inqueue", **(pg_extra[0] if pg_extra else {})}
        objects.pod_groups.append(pod_group(group, 1, queue=queue, **pg_fields))
        for i in range(running):
            objects.pods.append(pod(f"{group}-r{i}", group=group, cpu=cpu, node_name=nodes[0].name, phase="Running"))
        for i in range(pending):
            objects.pods.append(pod(f"{group}-p{i}", group=group, cpu=cpu))
    return objects


def _open(objects, *tiers, **flags):
    ssn = session(objects, conf(*(tiers or (["proportion"],)), **flags))
    return ssn, ssn.plugins["proportion"]


def _cpu(plugin, queue):
    return plugin.queue_attrs[queue].deserved.milli_cpu


def _tasks(ssn, job):
    return sorted(ssn.jobs[job].tasks.values(), key=lambda t: t.name)


def _fn(ssn, point):
    return ssn._fns[point]["proportion"]


# -- deserved -------------------------------------------------------------------------------------


def test_seed_001_worked_example_through_the_water_filling():
    # 100 CPU; A/B/C weights 3/2/5, guarantees 20/10/30, capabilities 50/80/unlimited; every queue
    # asks for 100 CPU. Round 1 hands out 30/20/50 (capped by realCapability 50/50/70, raised to the
    # guarantees, which are all lower): the cpu remaining is 0, memory is left over, so round 2 runs,
    # changes nothing (memory is capped by request), every queue is met and the loop stops.
    queues = [
        Queue("a", "a", weight=3, guarantee=rl(cpu="20"), capability=rl(cpu="50")),
        Queue("b", "b", weight=2, guarantee=rl(cpu="10"), capability=rl(cpu="80")),
        Queue("c", "c", weight=5, guarantee=rl(cpu="30")),
    ]
    nodes = [node(f"n{i}", cpu="10", memory="64Gi") for i in range(10)]
    _, plugin = _open(_cluster(nodes, queues, [(f"pg-{q}", q, 10, 0, "10") for q in "abc"]))
    assert [_cpu(plugin, q) for q in "abc"] == [30 * CPU, 20 * CPU, 50 * CPU]
    assert [plugin.queue_attrs[q].real_capability.milli_cpu for q in "abc"] == [50 * CPU, 50 * CPU, 70 * CPU]
    assert plugin.queue_attrs["a"].deserved.memory == 10 * GI  # capped by the request
    assert plugin.rounds == 2


def test_request_below_the_weight_share_is_redistributed():
    # 12 cpu, weights 1/1/2. q1 asks 1 cpu: round 1 gives 3/3/6, q1 keeps 1 and is met; the 2 left
    # go to q2/q3 by weight 1:2 in round 2.
    queues = [Queue("q1", "q1"), Queue("q2", "q2"), Queue("q3", "q3", weight=2)]
    jobs = [("j1", "q1", 1, 0, "1"), ("j2", "q2", 10, 0, "1"), ("j3", "q3", 10, 0, "1")]
    _, plugin = _open(_cluster([node("n1", cpu="12", memory="64Gi")], queues, jobs))
    assert _cpu(plugin, "q1") == 1 * CPU
    assert _cpu(plugin, "q2") == pytest.approx(3 * CPU + 2 * CPU / 3)
    assert _cpu(plugin, "q3") == pytest.approx(6 * CPU + 4 * CPU / 3)


def test_capability_caps_deserved_and_the_rest_goes_to_others():
    # 8 cpu, equal weights, q1 capped at 2: round 1 4 -> 2 and 4; round 2 q1 is unchanged (met),
    # q2 gets 4 + 2/2 = 5; round 3 q2 alone takes the last 1.
    queues = [Queue("q1", "q1", capability=rl(cpu="2")), Queue("q2", "q2")]
    jobs = [("j1", "q1", 10, 0, "1"), ("j2", "q2", 10, 0, "1")]
    _, plugin = _open(_cluster([node("n1", cpu="8", memory="64Gi")], queues, jobs))
    assert (_cpu(plugin, "q1"), _cpu(plugin, "q2")) == (2 * CPU, 6 * CPU)
    assert plugin.queue_attrs["q1"].capability.memory > 1e300  # unset memory in a capability is unlimited


def test_guarantee_is_a_floor_and_shrinks_the_others_real_capability():
    # 8 cpu; q1 weight 1 guarantee 6, q2 weight 3. realCapability q2 = (8 - 6) + 0 = 2. Round 1:
    # q1 2 -> raised to 6; q2 6 -> capped at 2; nothing remains.
    queues = [Queue("q1", "q1", guarantee=rl(cpu="6")), Queue("q2", "q2", weight=3)]
    jobs = [("j1", "q1", 8, 0, "1"), ("j2", "q2", 8, 0, "1")]
    _, plugin = _open(_cluster([node("n1", cpu="8", memory="64Gi")], queues, jobs))
    assert (_cpu(plugin, "q1"), _cpu(plugin, "q2")) == (6 * CPU, 2 * CPU)
    assert plugin.queue_attrs["q2"].real_capability.milli_cpu == 2 * CPU


def test_queue_without_jobs_gets_no_attributes_but_its_guarantee_counts():
    queues = [Queue("busy", "busy"), Queue("idle", "idle", guarantee=rl(cpu="3"))]
    _, plugin = _open(_cluster([node("n1", cpu="8", memory="64Gi")], queues, [("j", "busy", 10, 0, "1")]))
    assert set(plugin.queue_attrs) == {"busy"}
    assert plugin.queue_attrs["busy"].real_capability.milli_cpu == 5 * CPU
    assert _cpu(plugin, "busy") == 5 * CPU


def _attr(name, request, weight=1, real=None, guarantee=None):
    attr = QueueAttr(QueueInfo(Queue(name, name, weight=weight)))
    attr.request = request
    attr.real_capability = real if real is not None else Resource(1e9, 1e12, {"pods": 1e6})
    attr.guarantee = guarantee if guarantee is not None else Resource()
    return attr


def test_remaining_is_empty_ignores_pods():
    # Round 1: cpu all handed out, 8 pods left over: IsEmpty ignores pods, so the loop ends at once
    # even though the queue is not met.
    attr = _attr("q", Resource(8 * CPU, 0, {"pods": 2}))
    rounds = compute_deserved(Resource(4 * CPU, 0, {"pods": 10}), [attr])
    assert rounds == 1 and attr.deserved.milli_cpu == 4 * CPU and attr.deserved.get("pods") == 2


def test_unchanged_remaining_stops_the_loop():
    # Capped at 2 cpu of 8: round 2 changes nothing (queue met by deep equality, remaining equal).
    attr = _attr("q", Resource(10 * CPU, 0, {"pods": 10}), real=Resource(2 * CPU, 1e12, {"pods": 100}))
    rounds = compute_deserved(Resource(8 * CPU, 0, {"pods": 100}), [attr])
    assert rounds == 2 and attr.deserved.milli_cpu == 2 * CPU


def test_semantic_deep_equal_treats_nil_and_empty_maps_alike():
    assert semantic_deep_equal(Resource(), Resource(scalars={}))
    assert not Resource().deep_equal(Resource(scalars={}))  # reflect.DeepEqual semantics differ
    assert not semantic_deep_equal(Resource(1), Resource(1.0000001))


# -- ordering and queue checks --------------------------------------------------------------------


def _two_queue_session(**queue_extra):
    queues = [Queue("hi", "hi", priority=1), Queue("lo", "lo", **queue_extra)]
    jobs = [("jh", "hi", 2, 2, "1"), ("jl", "lo", 4, 0, "1")]
    return _open(_cluster([node("n1", cpu="8", memory="64Gi")], queues, jobs))


def test_queue_order_priority_then_share():
    ssn, plugin = _two_queue_session()
    hi, lo = ssn.queues["hi"], ssn.queues["lo"]
    order = _fn(ssn, "queue_order")
    assert order(hi, lo) < 0 and order(lo, hi) > 0  # priority wins over hi's larger share
    lo.queue.priority = 1
    assert plugin.queue_attrs["hi"].share > plugin.queue_attrs["lo"].share == 0
    assert order(hi, lo) == 1 and order(lo, hi) == -1 and order(lo, lo) == 0


def test_overused_needs_every_dimension_pods_included():
    # hi holds 2 running and asks 2 more: deserved covers all 4 (pods included), so it is not
    # overused although cpu-wise it could look so once the pending ones are placed.
    ssn, plugin = _two_queue_session()
    overused = _fn(ssn, "overused")
    assert not overused(ssn.queues["hi"])
    attr = plugin.queue_attrs["hi"]
    attr.allocated = attr.deserved.clone()
    assert overused(ssn.queues["hi"])
    attr.allocated.scalars["pods"] -= 1  # one pod short of deserved: not overused
    assert not overused(ssn.queues["hi"])


def test_allocatable_is_strict_on_requested_dimensions_only():
    ssn, plugin = _two_queue_session()
    attr = plugin.queue_attrs["lo"]
    allocatable = _fn(ssn, "allocatable")
    task = _tasks(ssn, "default/jl")[0]
    attr.allocated = attr.deserved.clone().sub(task.resreq)  # exactly at deserved after the task
    assert allocatable(ssn.queues["lo"], task)
    attr.allocated.milli_cpu += 0.01  # no tolerance: 0.01 milli-cpu over is refused
    assert not allocatable(ssn.queues["lo"], task)
    memory_only = pod("mem-only", group="jl", cpu="", memory="1Gi")
    assert allocatable(ssn.queues["lo"], TaskInfo(memory_only))  # cpu over deserved is not looked at


def test_allocatable_and_enqueue_refuse_a_closed_queue():
    ssn, _ = _two_queue_session(state="Closed")
    assert not _fn(ssn, "allocatable")(ssn.queues["lo"], _tasks(ssn, "default/jl")[0])
    assert _fn(ssn, "job_enqueueable")(ssn.jobs["default/jl"]) == REJECT


def test_preemptive_sums_the_candidates():
    ssn, plugin = _two_queue_session()
    preemptive = _fn(ssn, "preemptive")
    tasks = _tasks(ssn, "default/jl")
    deserved = plugin.queue_attrs["lo"].deserved.milli_cpu
    assert deserved == 4 * CPU
    assert preemptive(ssn.queues["lo"], tasks) and preemptive(ssn.queues["lo"], tasks[0])
    plugin.queue_attrs["lo"].allocated.milli_cpu = 1 * CPU
    assert not preemptive(ssn.queues["lo"], tasks)  # 1 + 4 > 4
    assert preemptive(ssn.queues["lo"], tasks[:3])


def test_reclaimable_takes_victims_while_above_deserved():
    # q-over runs 6 one-cpu pods but deserves 2 (capability): victims are taken while the running
    # allocated copy is not <= deserved: 6, 5, 4, 3 -> four victims, then 2 <= 2 stops.
    queues = [Queue("over", "over", capability=rl(cpu="2")), Queue("need", "need")]
    jobs = [("jo", "over", 0, 6, "1"), ("jn", "need", 1, 0, "1")]
    ssn, plugin = _open(_cluster([node("n1", cpu="8", memory="64Gi")], queues, jobs))
    assert _cpu(plugin, "over") == 2 * CPU
    victims, vote = _fn(ssn, "reclaimable")(_tasks(ssn, "default/jn")[0], _tasks(ssn, "default/jo"))
    assert vote == PERMIT and [v.name for v in victims] == [f"jo-r{i}" for i in range(4)]


# -- admission ------------------------------------------------------------------------------------


def test_enqueue_rejects_min_resources_beyond_real_capability_with_an_event():
    queues = [Queue("small", "small", capability=rl(cpu="2"))]
    jobs = [("big", "small", 2, 0, "1", {"min_resources": rl(cpu="3"), "phase": "Pending"}),
            ("fits", "small", 2, 0, "1", {"min_resources": rl(cpu="2"), "phase": "Pending"}),
            ("free", "small", 2, 0, "1", {"phase": "Pending"})]
    ssn, plugin = _open(_cluster([node("n1", cpu="8", memory="64Gi")], queues, jobs))
    enqueueable = _fn(ssn, "job_enqueueable")
    assert enqueueable(ssn.jobs["default/big"]) == REJECT
    event = plugin.events[-1]
    assert (event.pod_group, event.reason, event.message) == (
        "default/big", "Unschedulable", "queue resource quota insufficient: insufficient cpu")
    assert enqueueable(ssn.jobs["default/fits"]) == PERMIT
    assert enqueueable(ssn.jobs["default/free"]) == PERMIT
    _fn(ssn, "job_enqueued")(ssn.jobs["default/fits"])  # its minResources now count as inqueue
    assert plugin.queue_attrs["small"].inqueue.milli_cpu == 2 * CPU
    assert enqueueable(ssn.jobs["default/fits"]) == REJECT


def test_inqueue_counts_only_the_unallocated_part_of_min_resources():
    queues = [Queue("q", "q")]
    jobs = [("inq", "q", 2, 1, "1", {"min_resources": rl(cpu="3", memory="1Gi", pods="3"), "phase": "Inqueue"})]
    ssn, plugin = _open(_cluster([node("n1", cpu="8", memory="64Gi")], queues, jobs))
    inqueue = plugin.queue_attrs["q"].inqueue
    # 3 cpu - 1 allocated, 1Gi - 1Gi (floored at 0), 3 pods - 1
    assert (inqueue.milli_cpu, inqueue.memory, inqueue.get("pods")) == (2 * CPU, 0, 2)
    job = ssn.jobs["default/inq"]
    assert inqueue_resource(job, Resource()).milli_cpu == 3 * CPU


def test_gated_tasks_are_deducted_unless_only_volcano_gated():
    objects = _cluster([node("n1")], [Queue("q", "q")], [("g", "q", 0, 0, "1")])
    objects.pods += [pod("g-gated", group="g", scheduling_gates=["example.com/wait"]),
                     pod("g-vc", group="g", scheduling_gates=["scheduling.volcano.sh/queue-allocation-gate"])]
    ssn, _ = _open(objects)
    result = deduct_sch_gated_resources(ssn.jobs["default/g"], Resource(3 * CPU, 4 * GI))
    assert (result.milli_cpu, result.memory) == (2 * CPU, 3 * GI)


# -- simulation and events ------------------------------------------------------------------------


def test_pre_predicate_snapshot_is_isolated_from_live_state_and_other_tasks():
    ssn, plugin = _two_queue_session()
    first, second = _tasks(ssn, "default/jl")[:2]
    assert _fn(ssn, "pre_predicate")(first) is None
    _fn(ssn, "pre_predicate")(second)
    state_1, state_2 = ssn.get_cycle_state(first.uid), ssn.get_cycle_state(second.uid)
    lo = ssn.queues["lo"]
    assert _fn(ssn, "simulate_add_task")(state_1, first, _tasks(ssn, "default/jh")[0], None) is None
    for task in _tasks(ssn, "default/jl"):
        _fn(ssn, "simulate_add_task")(state_1, first, task, None)
    assert state_1[STATE_KEY].get("lo").allocated.milli_cpu == 4 * CPU
    assert not _fn(ssn, "simulate_allocatable")(state_1, lo, first)
    assert _fn(ssn, "simulate_allocatable")(state_2, lo, first)  # the other task's snapshot is untouched
    assert plugin.queue_attrs["lo"].allocated.milli_cpu == 0  # and so is the live state
    cloned = state_1[STATE_KEY].clone()
    _fn(ssn, "simulate_remove_task")(state_1, first, _tasks(ssn, "default/jl")[0], None)
    assert cloned.get("lo").allocated.milli_cpu == 4 * CPU
    assert isinstance(_fn(ssn, "simulate_add_task")({}, first, first, None), LookupError)


def test_event_handlers_count_pipelined_tasks_and_use_the_asserting_sub():
    ssn, plugin = _two_queue_session()
    attr = plugin.queue_attrs["lo"]
    task = _tasks(ssn, "default/jl")[0]
    Statement(ssn).pipeline(task, "n1", False)
    assert attr.allocated.milli_cpu == 1 * CPU and attr.share == 0.25
    ssn.fire_deallocate(task)
    assert attr.allocated.milli_cpu == 0 and attr.share == 0
    with pytest.raises(AssertionViolation):
        ssn.fire_deallocate(task)  # allocated would go negative


def test_allocate_stops_at_deserved_leaving_capacity_free():
    # 10 cpu, hi holds 2 running and asks 2 more (request 4); lo asks 8 but is capped at 3. Round 1:
    # hi min(5, 4) = 4 (met), lo min(5, 3) = 3; round 2 gives lo nothing more (met by equality).
    # allocate binds hi's 2 and lo's 3: 3 cpu stay free because Allocatable holds lo at 3.
    queues = [Queue("hi", "hi"), Queue("lo", "lo", capability=rl(cpu="3"))]
    jobs = [("jh", "hi", 2, 2, "1"), ("jl", "lo", 8, 0, "1")]
    objects = _cluster([node("n1", cpu="10", memory="64Gi")], queues, jobs)
    scheduler = Scheduler(objects, conf(["priority", "gang"], ["drf", "predicates", "proportion"]), seed=0)
    plugin = scheduler.run_once().session.plugins["proportion"]
    assert (_cpu(plugin, "hi"), _cpu(plugin, "lo")) == (4 * CPU, 3 * CPU)
    bound = Counter(record.task.split("/")[1].split("-")[0] for record in scheduler.cache.log.binds)
    assert bound == {"jh": 2, "jl": 3}

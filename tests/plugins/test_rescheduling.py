"""rescheduling plugin: interval on the session clock, argument parsing, lowNodeUtilization victims
(pkg/scheduler/plugins/rescheduling; semantics §8.6)."""

from __future__ import annotations

import math

from schedcheck.reference.framework.conf import PluginOption, SchedulerConf, Tier, apply_plugin_conf_defaults
from schedcheck.reference.k8s import ClusterObjects
from schedcheck.reference.plugins.rescheduling import (
    DEFAULT_INTERVAL,
    LowNodeUtilizationConf,
    ReschedulingConfig,
    ProcessState,
    amount_to_percent,
    parse_low_node_utilization,
    parse_rescheduling_arguments,
    percent_to_amount,
    pod_eviction_key,
    time_to_run,
)
from schedcheck.reference.scheduler import Scheduler
from tests.builders import node, pod, pod_group, rl

NOW = "2026-05-01T10:00:00Z"
LNU = {"name": "lowNodeUtilization",
       "params": {"thresholds": {"cpu": 20, "memory": 20}, "targetThresholds": {"cpu": 70, "memory": 70}}}


def usage_node(name, cpu_pct, mem_pct, **extra):
    built = node(name, cpu="4", memory="16Gi",
                 annotations={"schedcheck.io/cpu-usage-avg": str(cpu_pct), "schedcheck.io/mem-usage-avg": str(mem_pct)},
                 **extra)
    built.capacity = dict(built.allocatable)
    return built


def running(name, node_name, namespace="default", group="run", **extra):
    return pod(name, group=group, namespace=namespace, node_name=node_name, phase="Running", **extra)


def scheduler(objects, arguments, actions="shuffle"):
    option = PluginOption("rescheduling", arguments=arguments)
    apply_plugin_conf_defaults(option)
    return Scheduler(objects, SchedulerConf(actions=[a.strip() for a in actions.split(",")], tiers=[Tier([option])]),
                     now=NOW)


def victims_of(objects, arguments):
    ssn = scheduler(objects, arguments, actions="enqueue").run_once().session
    tasks = [t for job in ssn.jobs.values() for t in job.tasks.values() if t.status.name == "Running"]
    return sorted(t.key for t in ssn.victim_tasks(tasks))


def cluster(*pods, hot=(90, 50), cold=(10, 10), extra_nodes=()):
    groups = sorted({(p.namespace, p.annotations["scheduling.k8s.io/group-name"]) for p in pods})
    return ClusterObjects(nodes=[usage_node("hot", *hot), usage_node("cold", *cold), *extra_nodes], pods=list(pods),
                          pod_groups=[pod_group(g, 1, namespace=ns, phase="Running") for ns, g in groups])


def test_time_to_run_is_strictly_after_the_interval():
    state = ProcessState(last_reschedule_ns=100)
    assert not time_to_run(state, 10, 110)
    assert time_to_run(state, 10, 111) and state.last_reschedule_ns == 111
    assert not time_to_run(state, 0, 111)


def test_arguments_interval_metrics_period_and_strategies():
    state = ProcessState(0)
    config = ReschedulingConfig()
    arguments = {"interval": "90s", "metricsPeriod": "10m", "strategies": [LNU, "junk"]}
    parse_rescheduling_arguments(config, arguments, state)
    assert config.interval_ns == 90 * 10**9 and state.metrics_period == "10m"
    assert [s.name for s in config.strategies] == ["lowNodeUtilization"]
    parse_rescheduling_arguments(config, {"interval": 5}, state)
    assert config.interval_ns == DEFAULT_INTERVAL  # re-read every time; a non-string is invalid
    assert state.metrics_period == "10m"  # a process global: it stays
    parse_rescheduling_arguments(config, {"strategies": []}, state)
    assert [s.name for s in config.strategies] == ["lowNodeUtilization"]


def test_low_node_utilization_params():
    conf = parse_low_node_utilization({"thresholds": {"cpu": 30, "pods": 5, "pod": 7},
                                       "targetThresholds": {"memory": 60}})
    assert conf.thresholds == {"cpu": 30.0, "memory": 100.0, "pods": 100.0, "pod": 7.0}
    assert conf.target_thresholds["memory"] == 60.0 and conf.target_thresholds["cpu"] == 100.0
    # A non-map (or non-int) thresholds entry stops the parse before targetThresholds.
    conf = parse_low_node_utilization({"thresholds": {"cpu": 30.5}, "targetThresholds": {"cpu": 60}})
    assert conf.thresholds["cpu"] == 100.0 and conf.target_thresholds["cpu"] == 100.0
    assert parse_low_node_utilization(None) == LowNodeUtilizationConf()


def test_quantity_conversions_truncate_and_divide_as_go():
    capacity = rl(cpu="4", memory="16Gi")
    assert percent_to_amount("cpu", 70, capacity) == 2800
    assert percent_to_amount("memory", 10, capacity) == int(10 * float(16 * 1024**3) * 0.01)
    assert amount_to_percent("cpu", 1000, capacity) == 25.0
    assert amount_to_percent("cpu", 1000, {}) == math.inf
    assert math.isnan(amount_to_percent("cpu", 0, {}))


def test_pod_order_no_priority_first_then_ascending_then_best_effort_first():
    builder = cluster(running("a", "hot", priority=5), running("b", "hot", priority=None),
                      running("c", "hot", priority=5, cpu="", memory=""), running("d", "hot", priority=1))
    ssn = scheduler(builder, {}).run_once().session
    tasks = sorted((t for job in ssn.jobs.values() for t in job.tasks.values()), key=pod_eviction_key)
    assert [t.name for t in tasks] == ["b", "d", "c", "a"]


def test_default_metrics_period_reads_nothing_so_nothing_is_evicted():
    objects = cluster(running("a", "hot"))
    assert victims_of(objects, {"interval": "0s", "strategies": [LNU]}) == []
    assert victims_of(objects, {"interval": "0s", "metricsPeriod": "10m", "strategies": [LNU]}) == ["default/a"]


def test_victims_leave_high_nodes_until_below_target():
    # hot cpu 90%: each 1-cpu pod takes 25 points off; after the first (priority 1) it is at 65% < 70.
    objects = cluster(running("keep", "hot", priority=10), running("go", "hot", priority=1),
                      running("cold-0", "cold", priority=0))
    assert victims_of(objects, {"interval": "0s", "metricsPeriod": "10m", "strategies": [LNU]}) == ["default/go"]


def test_no_victims_without_low_nodes_without_high_nodes_or_when_all_are_low():
    args = {"interval": "0s", "metricsPeriod": "10m", "strategies": [LNU]}
    assert victims_of(cluster(running("a", "hot"), cold=(30, 10)), args) == []  # no low node
    assert victims_of(cluster(running("a", "hot"), hot=(60, 60)), args) == []  # no high node
    assert victims_of(cluster(running("a", "hot"), hot=(10, 10)), args) == []  # every node low
    # A cordoned cold node is never low.
    cordoned = ClusterObjects(nodes=[usage_node("hot", 90, 50), usage_node("cold", 10, 10, unschedulable=True)],
                              pods=[running("a", "hot")], pod_groups=[pod_group("run", 1, phase="Running")])
    assert victims_of(cordoned, args) == []


def test_victims_are_matched_by_pod_name_only():
    # "web" on the hot node is matched to the first Running task named "web": the one in ns-a on the cold node.
    objects = cluster(running("web", "cold", namespace="ns-a", group="a"),
                      running("web", "hot", namespace="ns-b", group="b"))
    assert victims_of(objects, {"interval": "0s", "metricsPeriod": "10m", "strategies": [LNU]}) == ["ns-a/web"]


def test_interval_is_measured_on_the_session_clock():
    objects = cluster(running("a", "hot", priority=1), running("b", "hot", priority=2), running("c", "hot", priority=3))
    sched = scheduler(objects, {"interval": "1s", "metricsPeriod": "10m", "strategies": [LNU]})
    evicted = []
    for cycle in range(4):
        if cycle:
            sched.advance()
        before = len(sched.cache.log.evictions)
        sched.run_once()
        evicted.append([e.task for e in sched.cache.log.evictions[before:]])
    # Process start is 1 ns before the first session: runs at t0+1s, then not at t0+2s (not strictly
    # after), again at t0+3s. An evicted pod is terminating in the next cycle and gone after that.
    assert evicted == [[], ["default/a"], [], ["default/b"]]


def test_default_interval_does_not_fire_in_the_first_session():
    objects = cluster(running("a", "hot"))
    ssn = scheduler(objects, {"metricsPeriod": "10m", "strategies": [LNU]}).run_once().session
    assert not ssn.has_fn("victim_tasks")


def test_pod_order_ranks_a_guaranteed_pod_after_a_burstable_one_of_the_same_priority():
    # upstream's sortPods asks v1qos.GetPodQOS, which reads limits: equal cpu and memory limits make "g"
    # Guaranteed, so "b" (requests only: Burstable) goes first; from requests alone both were Burstable
    from schedcheck.reference.quantity import Quantity

    guaranteed = running("g", "hot", priority=5)
    guaranteed.containers[0].limits = {"cpu": Quantity.parse("1"), "memory": Quantity.parse("1Gi")}
    guaranteed.containers[0].requests = dict(guaranteed.containers[0].limits)
    burstable = running("b", "hot", priority=5)
    ssn = scheduler(cluster(guaranteed, burstable), {}).run_once().session
    tasks = sorted((t for job in ssn.jobs.values() for t in job.tasks.values()), key=pod_eviction_key)
    assert [t.name for t in tasks] == ["b", "g"]

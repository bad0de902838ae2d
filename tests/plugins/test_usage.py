"""usage plugin: node metrics from annotations, the threshold predicate, the composite score and the
shadow cache (semantics §9.14)."""

from __future__ import annotations

import pytest

from schedcheck.reference.api.unschedule_info import StatusCode
from schedcheck.reference.cache.cache import SchedulerCache
from schedcheck.reference.framework.conf import PluginOption, SchedulerConf, Tier, apply_plugin_conf_defaults
from schedcheck.reference.framework.framework import open_session
from schedcheck.reference.framework.statement import Statement
from schedcheck.reference.k8s import ClusterObjects
from schedcheck.reference.plugins.usage import (
    NODE_USAGE_CPU_EXTEND,
    NODE_USAGE_MEMORY_EXTEND,
    applied_risk_factor,
    composite_utilization,
    estimate_pod_resource,
    node_score,
    parse_usage_config,
)
from tests.builders import GI, node, pod, pod_group

NOW = "2026-05-01T10:00:00Z"


def metrics(cpu=None, mem=None, at=None):
    out = {}
    if cpu is not None:
        out["schedcheck.io/cpu-usage-avg"] = str(cpu)
    if mem is not None:
        out["schedcheck.io/mem-usage-avg"] = str(mem)
    if at is not None:
        out["schedcheck.io/metrics-time"] = at
    return out


def metered(name, annotations, cpu="4", memory="8Gi", **extra):
    built = node(name, cpu=cpu, memory=memory, annotations=annotations, **extra)
    built.capacity = dict(built.allocatable)
    return built


def open_ssn(nodes, pods=(), arguments=None):
    pods = list(pods) or [pod("p-0", group="pg")]
    groups = sorted({p.annotations["scheduling.k8s.io/group-name"] for p in pods})
    objects = ClusterObjects(nodes=nodes, pods=pods, pod_groups=[pod_group(g, 1, phase="Inqueue") for g in groups])
    option = PluginOption("usage", arguments=dict(arguments or {}))
    apply_plugin_conf_defaults(option)
    ssn = open_session(SchedulerCache(objects, now=NOW), SchedulerConf(actions=["allocate"], tiers=[Tier([option])]),
                       0, 0)
    return ssn, ssn.plugins["usage"]


def task_of(ssn, name):
    return next(t for job in ssn.jobs.values() for t in job.tasks.values() if t.name == name)


def test_config_defaults_and_argument_rules():
    config = parse_usage_config({})
    assert (config.usage_weight, config.cpu_weight, config.memory_weight) == (5, 1, 1)
    assert (config.cpu_threshold, config.mem_threshold) == (80.0, 80.0)
    assert (config.request_ratio, config.burst_ratio, config.risk_threshold, config.risk_factor) == (0.7, 0.0, 0.6, 1.2)
    assert (config.be_cpu, config.be_memory) == (250.0, 200 * 1024 * 1024)
    config = parse_usage_config({
        "usage.weight": -1, "cpu.weight": 2, "memory.weight": "3",
        "thresholds": {"cpu": 90, "mem": 101},
        "estimator": {"request_ratio": 1.5, "burst_ratio": 1, "risk_threshold": 0.5, "risk_factor": 0.9,
                      "be_cpu": "1", "be_mem": 100},
    })
    assert (config.usage_weight, config.cpu_weight, config.memory_weight) == (5, 2, 1)
    assert (config.cpu_threshold, config.mem_threshold) == (90.0, 80.0)  # 101 is out of range
    assert (config.request_ratio, config.burst_ratio, config.risk_threshold, config.risk_factor) == (0.7, 1.0, 0.5, 1.2)
    assert (config.be_cpu, config.be_memory) == (1000.0, 100 * 1024 * 1024)  # int be_mem is MiB
    assert parse_usage_config({"thresholds": {"cpu": 50.5}}).cpu_threshold == 80.0  # only YAML ints


def test_estimator_formulas():
    assert estimate_pod_resource(1000, 0, 0.7, 0.0, 1.0) == 700
    assert estimate_pod_resource(1000, 0, 1.0, 0.0, 1.2) == 1000  # clamped at the request (no limit)
    assert estimate_pod_resource(1000, 2000, 0.5, 0.5, 1.0) == 1000
    assert applied_risk_factor(0.6, 0.6, 1.5) == 1.5 and applied_risk_factor(0.59, 0.6, 1.5) == 1.0
    assert applied_risk_factor(0.9, 0.6, 0.5) == 1.0
    assert composite_utilization(50, 1000, 4000) == 0.75
    assert composite_utilization(90, 4000, 4000) == 1.0 and composite_utilization(10, 0, 0) == 0.0
    assert node_score(0.5, 0.25, 1, 1, 5) == pytest.approx((0.5 + 0.75) / 2 * 100 * 5)
    assert node_score(0.5, 0.5, 0, 0, 5) == 0.0


def test_predicate_rejects_nodes_over_a_threshold_with_fresh_metrics_only():
    nodes = [metered("cpu-hot", metrics(cpu=81, mem=10)), metered("mem-hot", metrics(cpu=80, mem=95)),
             metered("ok", metrics(cpu=80, mem=80)),
             metered("stale", metrics(cpu=99, mem=99, at="2026-05-01T09:54:59Z")),
             metered("edge", metrics(cpu=99, at="2026-05-01T09:55:00Z")), metered("none", {})]
    ssn, plugin = open_ssn(nodes)
    task = task_of(ssn, "p-0")
    err = plugin.predicate(task, ssn.nodes["cpu-hot"])
    assert err.codes() == {StatusCode.UnschedulableAndUnresolvable} and err.reasons() == [NODE_USAGE_CPU_EXTEND]
    assert plugin.predicate(task, ssn.nodes["mem-hot"]).reasons() == [NODE_USAGE_MEMORY_EXTEND]
    assert plugin.predicate(task, ssn.nodes["ok"]) is None  # 80 is not above 80
    assert plugin.predicate(task, ssn.nodes["stale"]) is None  # 5m01s old
    assert plugin.predicate(task, ssn.nodes["edge"]) is not None  # exactly 5m old is still fresh
    assert plugin.predicate(task, ssn.nodes["none"]) is None


def test_unparsable_annotations_count_as_absent():
    ssn, plugin = open_ssn([metered("n1", metrics(cpu="busy", mem=95)), metered("n2", metrics(cpu=95, at="yesterday"))])
    task = task_of(ssn, "p-0")
    assert plugin.predicate(task, ssn.nodes["n1"]).reasons() == [NODE_USAGE_MEMORY_EXTEND]
    assert plugin.predicate(task, ssn.nodes["n2"]) is None  # unreadable time: never fresh


def test_score_uses_real_usage_and_zero_for_stale_metrics():
    ssn, plugin = open_ssn([metered("n1", metrics(cpu=40, mem=20)),
                            metered("n2", metrics(cpu=40, at="2026-05-01T09:00:00Z"))])
    task = task_of(ssn, "p-0")
    assert plugin.node_order(task, ssn.nodes["n1"]) == pytest.approx((0.6 + 0.8) / 2 * 100 * 5)
    assert plugin.node_order(task, ssn.nodes["n2"]) == 0.0


def test_shadow_cache_warm_up_counts_placed_tasks_the_metrics_cannot_see():
    # A Bound pod and a Running pod without a start time are both in the blind spot; a Releasing one is not.
    pods = [pod("b-0", group="run", cpu="2", memory="2Gi", node_name="n1", phase="Pending"),
            pod("r-0", group="run", cpu="1", memory="1Gi", node_name="n1", phase="Running"),
            pod("x-0", group="run", cpu="1", memory="1Gi", node_name="n1", phase="Running",
                deletion_timestamp="2026-05-01T09:59:00Z"),
            pod("p-0", group="pg")]
    ssn, plugin = open_ssn([metered("n1", metrics(cpu=0, mem=0))], pods)
    cpu, mem = plugin.shadow.node_estimate("n1")
    assert cpu == pytest.approx(0.7 * 3000)
    assert mem == pytest.approx(0.7 * 3 * GI)
    score = plugin.node_order(task_of(ssn, "p-0"), ssn.nodes["n1"])
    assert score == pytest.approx(((1 - 2100 / 4000) + (1 - 0.7 * 3 / 8)) / 2 * 500)


def test_allocate_and_discard_move_the_shadow_estimate():
    ssn, plugin = open_ssn([metered("n1", metrics(cpu=50, mem=0))], [pod("p-0", group="pg", cpu="2", memory="0")])
    task = task_of(ssn, "p-0")
    stmt = Statement(ssn)
    stmt.allocate(task, ssn.nodes["n1"])
    # Composite load before: cpu .5, mem 0 -> .25 < .6: risk 1.
    assert plugin.shadow.node_estimate("n1") == (1400.0, 0.0)
    stmt.discard()
    assert plugin.shadow.node_estimate("n1") == (0.0, 0.0)


def test_risk_factor_applies_on_loaded_nodes_and_best_effort_uses_fixed_estimates():
    ssn, plugin = open_ssn([metered("n1", metrics(cpu=100, mem=40))], [pod("p-0", group="pg", cpu="", memory="")])
    task = task_of(ssn, "p-0")
    assert task.best_effort
    Statement(ssn).allocate(task, ssn.nodes["n1"])
    # load (1.0 + 0.4) / 2 = .7 >= .6: risk 1.2
    assert plugin.shadow.node_estimate("n1") == pytest.approx((250 * 1.2, 200 * 1024 * 1024 * 1.2))

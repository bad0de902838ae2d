"""overcommit plugin: factor, idle and inqueue at session open, the enqueue vote (semantics §9.9)."""

from __future__ import annotations

import pytest

from schedcheck.reference.cache.cache import SchedulerCache
from schedcheck.reference.framework.conf import PluginOption, SchedulerConf, Tier, apply_plugin_conf_defaults
from schedcheck.reference.framework.framework import open_session
from schedcheck.reference.framework.session import PERMIT, REJECT, Session
from schedcheck.reference.k8s import ClusterObjects, Container
from schedcheck.reference.plugins.overcommit import DEFAULT_OVERCOMMIT_FACTOR, overcommit_factor
from schedcheck.reference.plugins.util import inqueue_resource as get_inqueue_resource


def deduct_sch_gated_resources(job, res):
    return job.deduct_sch_gated_resources(res)
from schedcheck.reference.scheduler import Scheduler
from tests.builders import GI, node, pod, pod_group, res, rl


def open_ssn(objects: ClusterObjects, arguments=None) -> tuple[Session, object]:
    option = PluginOption("overcommit", arguments=dict(arguments or {}))
    apply_plugin_conf_defaults(option)
    ssn = open_session(SchedulerCache(objects), SchedulerConf(actions=["enqueue"], tiers=[Tier([option])]),
                       cycle=0, seed=0)
    return ssn, ssn.plugins["overcommit"]


def running(name: str, group: str, cpu: str = "1", memory: str = "1Gi", node_name: str = "n1"):
    return pod(name, group=group, cpu=cpu, memory=memory, node_name=node_name, phase="Running")


@pytest.mark.parametrize("arguments, expected", [
    ({}, 1.2), ({"overcommit-factor": 2.0}, 2.0), ({"overcommit-factor": 3}, 3.0),
    ({"overcommit-factor": 1.0}, 1.0), ({"overcommit-factor": 0.5}, 1.2), ({"overcommit-factor": "2"}, 1.2),
])
def test_factor_argument(arguments, expected):
    assert overcommit_factor(arguments) == expected
    assert DEFAULT_OVERCOMMIT_FACTOR == 1.2


def test_idle_is_total_times_factor_minus_used_including_pods():
    nodes = [node("n1", cpu="4", memory="8Gi", pods="10"), node("n2", cpu="2", memory="4Gi", pods="10")]
    objects = ClusterObjects(nodes=nodes,
                             pods=[running("r-0", "run", cpu="3", memory="2Gi")],
                             pod_groups=[pod_group("run", 1, phase="Running")])
    _, plugin = open_ssn(objects, {"overcommit-factor": 1.5})
    assert plugin.idle.milli_cpu == 6000 * 1.5 - 3000
    assert plugin.idle.memory == 12 * GI * 1.5 - 2 * GI
    assert plugin.idle.get("pods") == 20 * 1.5 - 1


def test_inqueue_counts_inqueue_jobs_fully_and_running_jobs_by_their_unallocated_part():
    objects = ClusterObjects(
        nodes=[node("n1", cpu="8")],
        pods=[pod("q-0", group="q"), running("r-0", "r", cpu="1"), running("s-0", "s", cpu="1"),
              pod("s-1", group="s")],
        pod_groups=[
            pod_group("q", 1, phase="Inqueue", min_resources=rl(cpu="2", memory="1Gi")),
            # Running, 1 allocated >= minMember 1: reserves min - allocated = 3 - 1 cpu.
            pod_group("r", 1, phase="Running", min_resources=rl(cpu="3")),
            # Running but only 1 allocated < minMember 2: nothing.
            pod_group("s", 2, phase="Running", min_resources=rl(cpu="5")),
            pod_group("p", 1, phase="Pending", min_resources=rl(cpu="7")),
        ])
    _, plugin = open_ssn(objects)
    assert plugin.inqueue.milli_cpu == 2000 + 2000
    assert plugin.inqueue.memory == GI


def test_enqueueable_checks_only_the_requested_dimensions_strictly():
    # idle: cpu 1.2, memory 9.6Gi minus 10Gi used -> negative; the job asks for cpu only.
    objects = ClusterObjects(nodes=[node("n1", cpu="1", memory="8Gi")],
                             pods=[running("r-0", "run", cpu="0", memory="10Gi"), pod("a-0", group="a")],
                             pod_groups=[pod_group("run", 1, phase="Running"),
                                         pod_group("a", 1, min_resources=rl(cpu="1200m"))])
    ssn, plugin = open_ssn(objects)
    job = ssn.jobs["default/a"]
    assert plugin.job_enqueueable(job) == PERMIT  # 1200 <= 1200, memory not requested
    job.pod_group.min_resources = rl(cpu="1201m")
    assert plugin.job_enqueueable(job) == REJECT  # strict: no 0.1 tolerance
    job.pod_group.min_resources = rl(cpu="1", memory="1")
    assert plugin.job_enqueueable(job) == REJECT  # memory requested and overused


def test_pods_dimension_is_ignored_and_no_min_resources_permits():
    objects = ClusterObjects(nodes=[node("n1", cpu="4", pods="1")], pods=[pod("a-0", group="a")],
                             pod_groups=[pod_group("a", 1, min_resources=rl(cpu="1", pods="50"))])
    ssn, plugin = open_ssn(objects)
    job = ssn.jobs["default/a"]
    assert plugin.job_enqueueable(job) == PERMIT
    job.pod_group.min_resources = None
    assert plugin.job_enqueueable(job) == PERMIT


def test_enqueued_accumulates_so_the_next_job_is_rejected():
    objects = ClusterObjects(nodes=[node("n1", cpu="4")], pods=[pod("a-0", group="a"), pod("b-0", group="b")],
                             pod_groups=[pod_group("a", 1, min_resources=rl(cpu="3")),
                                         pod_group("b", 1, min_resources=rl(cpu="3"))])
    ssn, plugin = open_ssn(objects)
    a, b = ssn.jobs["default/a"], ssn.jobs["default/b"]
    assert plugin.job_enqueueable(a) == PERMIT
    plugin.job_enqueued(a)
    assert plugin.job_enqueueable(b) == REJECT  # 3 + 3 > 4.8


def test_gated_pods_are_deducted_when_enqueued_but_not_when_checked():
    gated = pod("a-1", group="a", cpu="2", scheduling_gates=["example.com/hold"])
    queue_gated = pod("a-2", group="a", cpu="2", scheduling_gates=["scheduling.volcano.sh/queue-allocation-gate"])
    objects = ClusterObjects(nodes=[node("n1", cpu="4")], pods=[pod("a-0", group="a"), gated, queue_gated],
                             pod_groups=[pod_group("a", 1, min_resources=rl(cpu="3", memory="1Gi"))])
    ssn, plugin = open_ssn(objects)
    job = ssn.jobs["default/a"]
    assert plugin.job_enqueueable(job) == PERMIT
    plugin.job_enqueued(job)
    # 3 cpu minus the 2 cpu of the externally gated pod; memory 1Gi minus 1Gi; the queue gate is not deducted.
    assert plugin.inqueue.milli_cpu == 1000
    assert plugin.inqueue.memory == 0


def test_deduct_floors_each_dimension_at_zero_and_skips_scalars_absent_from_the_minimum():
    gated = pod("a-1", group="a", cpu="5", scheduling_gates=["hold"])
    gated.containers = [Container("main", rl(cpu="5", nvidia_com__gpu="2", example_com__fpga="1"))]
    objects = ClusterObjects(nodes=[node("n1")], pods=[gated], pod_groups=[pod_group("a", 1)])
    ssn, _ = open_ssn(objects)
    minimum = res(2000, 0, nvidia_com__gpu=3000)
    out = deduct_sch_gated_resources(ssn.jobs["default/a"], minimum)
    assert out.milli_cpu == 0 and out.get("nvidia.com/gpu") == 1000
    assert "example.com/fpga" not in out.scalars
    assert minimum.milli_cpu == 2000  # the argument is not changed


def test_get_inqueue_resource_dimension_rules():
    objects = ClusterObjects(nodes=[node("n1")], pods=[pod("a-0", group="a")],
                             pod_groups=[pod_group("a", 1, min_resources=rl(
                                 cpu="2", memory="1Gi", pods="3", nvidia_com__gpu="2", example_com__fpga="1",
                                 count__pods="4", ephemeral_storage="1Gi"))])
    ssn, _ = open_ssn(objects)
    job = ssn.jobs["default/a"]
    allocated = res(3000, 0, nvidia_com__gpu=500, pods=1)
    out = get_inqueue_resource(job, allocated)
    assert out.milli_cpu == 0  # 2 - 3 < 0: nothing reserved
    assert out.memory == GI
    assert out.get("pods") == 2  # pods in whole units
    assert out.get("nvidia.com/gpu") == 1500
    assert out.scalars["example.com/fpga"] == 1000  # not allocated at all: the whole minimum
    assert "count/pods" not in out.scalars and "ephemeral-storage" not in out.scalars


def test_enqueue_action_end_to_end():
    groups = [pod_group(name, 1, min_resources=rl(cpu="3"), creation_timestamp=f"2026-01-01T00:00:0{i}Z")
              for i, name in enumerate("ab")]
    objects = ClusterObjects(nodes=[node("n1", cpu="4")], pods=[pod("a-0", group="a"), pod("b-0", group="b")],
                             pod_groups=groups)
    option = PluginOption("overcommit")
    apply_plugin_conf_defaults(option)
    ssn = Scheduler(objects, SchedulerConf(actions=["enqueue"], tiers=[Tier([option])])).run_once().session
    assert {j.uid: j.pod_group.phase for j in ssn.jobs.values()} == {"default/a": "Inqueue", "default/b": "Pending"}

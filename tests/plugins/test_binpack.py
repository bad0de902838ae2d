"""binpack plugin: argument parsing and the best-fit score (semantics §9.8)."""

from __future__ import annotations

from schedcheck.reference.cache.cache import SchedulerCache
from schedcheck.reference.framework.conf import PluginOption, SchedulerConf, Tier, apply_plugin_conf_defaults
from schedcheck.reference.framework.framework import open_session
from schedcheck.reference.framework.session import Session
from schedcheck.reference.framework.statement import Statement
from schedcheck.reference.k8s import GROUP_NAME_ANNOTATION, ClusterObjects, Container, Pod
from schedcheck.reference.plugins.binpack import resource_weights
from tests.builders import node, pod, pod_group, rl


def open_ssn(nodes, pods, arguments=None) -> Session:
    groups = sorted({p.annotations[GROUP_NAME_ANNOTATION] for p in pods})
    objects = ClusterObjects(nodes=nodes, pods=pods, pod_groups=[pod_group(g, 1, phase="Inqueue") for g in groups])
    option = PluginOption("binpack", arguments=dict(arguments or {}))
    apply_plugin_conf_defaults(option)
    return open_session(SchedulerCache(objects), SchedulerConf(actions=["allocate"], tiers=[Tier([option])]),
                        cycle=0, seed=0)


def task_of(ssn: Session, name: str):
    return next(t for job in ssn.jobs.values() for t in job.tasks.values() if t.name == name)


def score(ssn: Session, task_name: str, node_name: str = "n1") -> float:
    _, order = ssn.node_order_map_fn(task_of(ssn, task_name), ssn.nodes[node_name])
    return order


def running(name: str, **extra) -> Pod:
    return pod(name, group="run", node_name="n1", phase="Running", **extra)


def test_default_weights_worked_example():
    # cpu (1000 + 1000) * 1 / 4000 = .5; memory (2Gi + 2Gi) * 1 / 8Gi = .5; pods has no weight
    # (.5 + .5) / 2 * 100 * 1 = 50
    ssn = open_ssn([node("n1")], [running("r-0", cpu="1", memory="2Gi"), pod("p", cpu="1", memory="2Gi")])
    assert score(ssn, "p") == 50.0


def test_weights_and_binpack_weight():
    # (.5 * 3 + .5 * 1) / 4 * 100 * 2 = 100
    ssn = open_ssn([node("n1")], [running("r-0", cpu="1", memory="2Gi"), pod("p", cpu="1", memory="2Gi")],
                   {"binpack.cpu": 3, "binpack.memory": 1, "binpack.weight": 2})
    assert score(ssn, "p") == 100.0


def test_one_overflowing_resource_zeroes_the_whole_node():
    ssn = open_ssn([node("n1")], [running("r-0", cpu="3500m", memory="1Gi"), pod("p", cpu="1", memory="1Gi")])
    assert score(ssn, "p") == 0.0


def test_extra_resources_absent_from_the_node_still_count_their_weight():
    gpu_pod = pod("p")
    gpu_pod.containers = [Container("main", rl(cpu="1", memory="2Gi", nvidia_com__gpu="1"))]
    args = {"binpack.resources": " nvidia.com/gpu, pods ,", "binpack.resources.nvidia.com/gpu": 2}
    ssn = open_ssn([node("n1")], [running("r-0", cpu="1", memory="2Gi"), gpu_pod], args)
    # cpu .5 (w1), memory .5 (w1), gpu: node has none -> 0 (w2), pods (1 + 1) * 1 / 110 (w1)
    expected = (0.5 + 0.5 + 0.0 + 2 * 1 / 110) / 5 * 100
    assert score(ssn, "p") == expected


def test_argument_parsing():
    assert resource_weights({}) == (1, {"cpu": 1, "memory": 1})
    weight, weights = resource_weights({"binpack.weight": -1, "binpack.cpu": -3, "binpack.memory": 0,
                                        "binpack.resources": "a/b, c/d", "binpack.resources.a/b": -2,
                                        "binpack.resources.c/d": 4})
    assert weight == -1  # binpack.weight is not reset
    assert weights == {"a/b": 1, "c/d": 4, "cpu": 1, "memory": 0}
    _, weights = resource_weights({"binpack.resources": "cpu", "binpack.resources.cpu": 5})
    assert weights["cpu"] == 1  # binpack.cpu (default 1) is written last
    assert resource_weights({"binpack.resources": ["a/b"]})[1] == {"cpu": 1, "memory": 1}
    assert resource_weights({"binpack.cpu": "5"})[1]["cpu"] == 1  # only YAML ints count


def test_zero_weight_registers_nothing_and_negative_weight_scores_negative():
    pods = [running("r-0", cpu="1", memory="2Gi"), pod("p", cpu="1", memory="2Gi")]
    assert not open_ssn([node("n1")], pods, {"binpack.weight": 0}).has_fn("node_order")
    assert score(open_ssn([node("n1")], pods, {"binpack.weight": -1}), "p") == -50.0


def test_zero_resource_weight_contributes_nothing_but_is_still_checked_for_overflow():
    # memory weight 0: (.5 * 1 + 0) / 1 * 100 = 50
    ssn = open_ssn([node("n1")], [running("r-0", cpu="1", memory="2Gi"), pod("p", cpu="1", memory="2Gi")],
                   {"binpack.memory": 0})
    assert score(ssn, "p") == 50.0


def test_used_includes_releasing_but_not_pipelined():
    dying = running("r-0", cpu="1", memory="2Gi", deletion_timestamp="2024-01-01T00:00:00Z")
    ssn = open_ssn([node("n1")], [dying, pod("q", cpu="2", memory="2Gi"), pod("p", cpu="1", memory="2Gi")])
    assert score(ssn, "p") == 50.0  # the Releasing pod is in node.Used
    Statement(ssn).pipeline(task_of(ssn, "q"), "n1", False)
    assert score(ssn, "p") == 50.0

import copy
import io
import json
import random
import re
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedcheck.reference import k8s
from schedcheck.reference.quantity import Quantity
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.loader import (
    INTERNAL_ERROR,
    load_scenario,
    load_scenario_text,
    scenario_from_document,
)
from schedcheck.scenario.model import Scenario

DATA = Path(__file__).parent / "data" / "loader"
Q = Quantity.parse


def full_doc() -> dict[str, Any]:
    return yaml.safe_load((DATA / "full.yaml").read_text())


def wrap(*objects: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"apiVersion": "schedcheck/v1", "kind": "Scenario", "objects": list(objects), **top}


def node(name: str = "n1", **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": status or {"allocatable": {"cpu": "2", "memory": "2Gi", "pods": "10"}},
    }


def pod(name: str = "p1", namespace: str | None = "default", group: str | None = "pg1", **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if group:
        meta["annotations"] = {k8s.GROUP_NAME_ANNOTATION: group}
    spec.setdefault("containers", [{"name": "c", "resources": {"requests": {"cpu": "1"}}}])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def pod_group(name: str = "pg1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def queue(name: str = "default", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}, "spec": spec}


def load(doc: Any, source: str = "s.yaml") -> Scenario:
    return scenario_from_document(doc, source)


def fails(doc: Any, source: str = "s.yaml") -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        load(doc, source)
    return info.value


# ---------------------------------------------------------------- a full scenario


def test_full_scenario_reads_every_kind() -> None:
    s = load_scenario(DATA / "full.yaml")
    assert s.name == "every-kind" and s.source.endswith("full.yaml") and s.cycles == 3
    assert s.conf.actions == ["enqueue", "allocate", "preempt"]
    assert s.conf.plugin("gang").flags["enablePreemptable"] is False
    assert s.conf.plugin("nodeorder").arguments == {"leastrequested.weight": 1}
    assert s.conf.action_arguments("preempt") == {"enableTopologyAwarePreemption": False}
    objs = s.objects

    n1, n2 = objs.nodes
    assert (n1.name, n1.uid, n1.labels, n1.annotations) == ("n1", "node-uid-1", {"zone": "a"}, {"note": "x"})
    assert n1.creation_timestamp == "2024-01-01T00:00:00Z"
    assert n1.unschedulable and n1.taints == [k8s.Taint(key="dedicated", value="gpu", effect="NoSchedule")]
    assert n1.allocatable == {"cpu": Q("3500m"), "memory": Q("7Gi"), "pods": Q("110"), "nvidia.com/gpu": Q("2")}
    assert n1.capacity["cpu"] == Q("4") and n1.ready
    assert n2.allocatable == n2.capacity == {"cpu": Q("2"), "memory": Q("4Gi"), "pods": Q("10")}
    assert not n2.ready and n2.uid == "node-n2"

    p1, p2 = objs.pods
    assert (p1.namespace, p1.name, p1.uid, p1.key) == ("ns1", "p1", "pod-uid-1", "ns1/p1")
    assert p1.labels == {"app": "web"} and p1.annotations[k8s.TASK_SPEC_KEY] == "worker"
    assert p1.node_name == "n1" and p1.scheduler_name == "volcano"
    assert (p1.priority, p1.priority_class_name, p1.preemption_policy) == (100, "high", "Never")
    main, side = p1.containers
    assert main.requests == {"cpu": Q("500m"), "memory": Q("1Gi"), "nvidia.com/gpu": Q("1")}  # limit as request
    assert side.requests == {} and side.restart_policy is None
    init, sidecar = p1.init_containers
    assert init.requests == {"cpu": Q("2")} and init.restart_policy is None
    assert sidecar.restart_policy == "Always" and sidecar.requests == {"cpu": Q("100m")}
    assert p1.overhead == {"cpu": Q("10m")} and p1.node_selector == {"zone": "a"}
    affinity = p1.node_affinity
    assert affinity is not None and affinity.required is not None
    term = affinity.required[0]
    assert term.match_expressions == [k8s.NodeSelectorRequirement("zone", "In", ["a", "b"])]
    assert term.match_fields == [k8s.NodeSelectorRequirement("metadata.name", "NotIn", ["n3"])]
    assert affinity.preferred[0].weight == 10
    assert affinity.preferred[0].preference.match_expressions == [k8s.NodeSelectorRequirement("disk", "Exists")]
    assert p1.tolerations == [
        k8s.Toleration("dedicated", "Equal", "gpu", "NoSchedule"),
        k8s.Toleration(operator="Exists"),
    ]
    assert p1.scheduling_gates == ["wait"]
    assert (p1.phase, p1.nominated_node_name) == ("Running", "n2")
    assert p1.conditions == [k8s.PodCondition("PodScheduled", "True", "Done", "ok")]
    assert p1.creation_timestamp == "2024-01-01T00:00:01Z" and p1.deletion_timestamp is None

    assert (p2.namespace, p2.uid, p2.phase, p2.priority) == ("default", "default-p2", "Pending", None)
    assert p2.deletion_timestamp == "2024-01-02T00:00:00Z" and p2.node_affinity is None and p2.creation_timestamp == ""

    g1, g2 = objs.pod_groups
    assert (g1.key, g1.min_member, g1.min_task_member, g1.queue) == ("ns1/pg1", 2, {"worker": 1}, "q1")
    assert g1.min_resources == {"cpu": Q("2"), "memory": Q("2Gi")} and g1.priority_class_name == "high"
    assert g1.annotations == {"volcano.sh/preemptable": "true"} and g1.phase == "Inqueue"
    assert g1.conditions == [k8s.PodGroupCondition("Unschedulable", "True", "abc", "NotEnoughResources", "m")]
    assert (g2.key, g2.min_resources, g2.phase, g2.uid) == ("default/pg1", None, "", "podgroup-default-pg1")

    q1, qd, root = objs.queues
    assert (q1.name, q1.weight, q1.priority, q1.parent, q1.state, q1.reclaimable) == (
        "q1",
        3,
        5,
        "root",
        "Closed",
        False,
    )
    assert q1.capability == {"cpu": Q("8")} and q1.guarantee == {"cpu": Q("1")} and q1.deserved == {"cpu": Q("4")}
    assert q1.annotations == {"volcano.sh/hierarchy": "root/q1"}
    assert (qd.weight, qd.state, qd.reclaimable, qd.uid) == (1, "Open", None, "queue-default")
    assert root.weight == 1

    (pc,) = objs.priority_classes
    assert (pc.name, pc.value, pc.preemption_policy, pc.global_default) == ("high", 1000, "Never", True)
    (rq,) = objs.resource_quotas
    assert (rq.name, rq.namespace, rq.hard, rq.used) == (
        "rq",
        "ns1",
        {"cpu": Q("10"), "pods": Q("20")},
        {"cpu": Q("1")},
    )

    e = s.expect
    assert e.binds == {"ns1/p1": "n1"} and e.evicted == ["default/p2"]
    assert e.pipelined == {"ns1/pg1": ["n1", "n2"]} and e.pod_group_phases == {"ns1/pg1": "Running"}
    assert e.task_status_counts == {"ns1/pg1": {"Running": 1, "Pending": 0}}
    assert (e.bind_count, e.evict_count) == (1, 1)
    assert s.document["metadata"]["name"] == "every-kind"


def test_full_scenario_warnings() -> None:
    warnings = load_scenario(DATA / "full.yaml").warnings
    text = "\n".join(warnings)
    # p2 in default names pg1 in default, which exists; default/pg1 names queue "default", which exists
    assert "is not among the objects" not in text
    assert not any(w.startswith("ignored fields") for w in warnings)
    assert warnings == []


def test_defaults_of_a_minimal_scenario() -> None:
    s = load(wrap())
    assert s.name == "s" and s.cycles == 1 and s.expect.is_empty() and s.conf.is_default
    assert s.objects == k8s.ClusterObjects()
    unnamed = load(wrap(), "<generated>")
    assert unnamed.name == "<generated>"


def test_queue_weight_zero_and_absent_become_one() -> None:
    s = load(wrap(queue("a", weight=0), queue("b"), queue("c", weight=7)))
    assert [q.weight for q in s.objects.queues] == [1, 1, 7]


def test_pod_defaults_and_request_fallback() -> None:
    containers = [{"name": "c", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1"}}}]
    s = load(wrap(pod(namespace=None, containers=containers, schedulerName=""), pod_group(), queue()))
    (p,) = s.objects.pods
    assert p.namespace == "default" and p.uid == "default-p1" and p.scheduler_name == "volcano"
    assert p.containers[0].requests == {"cpu": Q("1"), "memory": Q("1Gi")}
    other = load(wrap(pod(schedulerName="default-scheduler"))).objects.pods[0]
    assert other.scheduler_name == "default-scheduler"


def test_node_readiness() -> None:
    nodes = load(
        wrap(
            node("a"),
            {**node("b"), "status": {"conditions": [{"type": "DiskPressure", "status": "False"}]}},
            {**node("c"), "status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}},
        )
    ).objects.nodes
    assert [n.ready for n in nodes] == [True, True, False]
    empty = load(wrap({**node("d"), "status": {"allocatable": {}, "capacity": {"cpu": "1"}}})).objects.nodes[0]
    assert empty.allocatable == {}  # an explicit (empty) allocatable is kept


def test_timestamps() -> None:
    text = (
        "apiVersion: schedcheck/v1\nkind: Scenario\nobjects:\n"
        "- {apiVersion: v1, kind: Node, metadata: {name: a, creationTimestamp: 2024-01-01T10:00:00+02:00}}\n"
        "- {apiVersion: v1, kind: Node, metadata: {name: b, creationTimestamp: null}}\n"
    )
    a, b = load_scenario_text(text, "t.yaml").objects.nodes
    assert a.creation_timestamp == "2024-01-01T08:00:00Z" and b.creation_timestamp == ""


# ---------------------------------------------------------------- other shapes


def test_kind_list_without_wrapper() -> None:
    s = load_scenario(DATA / "list.yaml")
    assert s.name == "list" and s.conf.is_default
    assert [n.name for n in s.objects.nodes] == ["n1"] and [q.name for q in s.objects.queues] == ["default"]
    assert s.document["kind"] == "Scenario" and len(s.document["objects"]) == 1


def test_objects_as_a_kind_list_inside_the_wrapper() -> None:
    s = load(wrap() | {"objects": {"apiVersion": "v1", "kind": "List", "items": [node(), queue()]}})
    assert len(s.objects.nodes) == 1 and len(s.objects.queues) == 1


def test_plain_multi_document_yaml_with_a_separate_conf() -> None:
    s = load_scenario(DATA / "plain.yaml", DATA / "conf.yaml")
    assert s.name == "plain" and s.conf.actions == ["allocate", "backfill"] and not s.conf.is_default
    assert [p.name for p in s.conf.tiers[0].plugins] == ["gang", "predicates"]
    assert [n.name for n in s.objects.nodes] == ["n1"]
    assert [g.key for g in s.objects.pod_groups] == ["ns/pg"] and s.objects.pod_groups[0].queue == "default"
    assert [p.key for p in s.objects.pods] == ["ns/p"]
    assert s.warnings == []
    assert s.document["schedulerConf"] == (DATA / "conf.yaml").read_text()
    assert load_scenario(DATA / "plain.yaml").conf.is_default


def test_conf_from_a_configmap_file() -> None:
    s = load_scenario(DATA / "plain.yaml", DATA / "configmap.yaml")
    assert s.conf.actions == ["enqueue", "allocate"]


def test_conf_file_overrides_the_scenario_conf() -> None:
    s = load_scenario(DATA / "full.yaml", DATA / "conf.yaml")
    assert s.conf.actions == ["allocate", "backfill"]
    assert any("overridden by" in w and "conf.yaml" in w for w in s.warnings)
    assert s.document["schedulerConf"] == (DATA / "conf.yaml").read_text()


def test_conf_errors_name_the_conf_file() -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n", "s.yaml", "actions: fly\n", "c.yaml")
    assert (info.value.file, info.value.obj, info.value.field) == ("c.yaml", "schedulerConf", "actions")


def test_a_plain_y_or_n_is_a_boolean_as_kubernetes_reads_it() -> None:
    # YAML 1.1, as sigs.k8s.io/yaml (go-yaml v2) resolves it: kubectl and upstream's adapter refuse `pool: y`
    node = "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {pool: %s}}\n"
    with pytest.raises(ScenarioError) as info:
        load_scenario_text(node % "y", "s.yaml")
    assert (info.value.file, info.value.field) == ("s.yaml", "metadata.labels.pool") and "\n" not in str(info.value)
    assert load_scenario_text(node % '"y"', "s.yaml").objects.nodes[0].labels == {"pool": "y"}
    assert load_scenario_text(node % "yy", "s.yaml").objects.nodes[0].labels == {"pool": "yy"}
    import yaml  # what the scenario writers dump reads back the same: the strings "y" and "n" come out quoted

    assert load_scenario_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": "n", "labels": {"pool": "y"}}}), "s.yaml").objects.nodes[0].labels == {"pool": "y"}


def test_json_input() -> None:
    s = load_scenario(DATA / "scenario.json")
    assert s.name == "from-json" and s.conf.actions == ["allocate"]
    assert s.objects.nodes[0].allocatable == {"cpu": Q("2"), "memory": Q("2Gi"), "pods": Q("10")}
    assert s.objects.pods[0].containers[0].requests == {"cpu": Q("500m")}
    assert s.expect.bind_count == 0


def test_a_json_file_is_strict_json() -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario_text('{"apiVersion": "schedcheck/v1",\n "kind": }', "bad.json")
    assert info.value.field == "line 2, column 10" and "invalid JSON" in info.value.reason


def test_yaml_flow_mapping_that_is_not_json() -> None:
    s = load_scenario_text("{apiVersion: schedcheck/v1, kind: Scenario, cycles: 2}", "f.yaml")
    assert s.cycles == 2


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    data = (DATA / "list.yaml").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    s = load_scenario("-")
    assert s.source == "<stdin>" and len(s.objects.nodes) == 1


def test_unreadable_file() -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(DATA / "nope.yaml")
    assert "cannot read" in str(info.value) and "nope.yaml" in str(info.value)


def test_document_round_trip() -> None:
    first = load_scenario(DATA / "full.yaml")
    again = load(json.loads(json.dumps(first.document)), "again.yaml")
    assert again.objects == first.objects and again.conf == first.conf and again.expect == first.expect


# ---------------------------------------------------------------- errors


def set_path(doc: Any, path: list[Any], value: Any) -> Any:
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return doc


FULL_ERRORS = [
    # (path in full.yaml, new value, object named, field named, reason fragment)
    (
        ["objects", 2, "spec", "containers", 0, "resources", "requests", "cpu"],
        "4GB",
        "Pod ns1/p1",
        "spec.containers[0].resources.requests.cpu",
        '"4GB" is not a Kubernetes quantity',
    ),
    (
        ["objects", 2, "spec", "containers", 0, "resources", "requests", "cpu"],
        "-1",
        "Pod ns1/p1",
        "spec.containers[0].resources.requests.cpu",
        "must not be negative",
    ),
    (
        ["objects", 2, "spec", "initContainers", 0, "resources", "limits"],
        {"cpu": "-2"},
        "Pod ns1/p1",
        "spec.initContainers[0].resources.limits.cpu",
        "must not be negative",
    ),
    (["objects", 2, "spec", "overhead", "cpu"], "x", "Pod ns1/p1", "spec.overhead.cpu", "quantity"),
    (["objects", 0, "status", "allocatable", "cpu"], "1e400", "Node n1", "status.allocatable.cpu", "out of range"),
    (["objects", 0, "status", "allocatable", "memory"], 10**30, "Node n1", "status.allocatable.memory",
     "out of range"),
    (["objects", 0, "status", "allocatable", "memory"], "-1Gi", "Node n1", "status.allocatable.memory", "negative"),
    (["objects", 1, "status", "capacity", "cpu"], [], "Node n2", "status.capacity.cpu", "quantity"),
    (["objects", 6, "spec", "capability", "cpu"], "-8", "Queue q1", "spec.capability.cpu", "negative"),
    (
        ["objects", 6, "spec", "guarantee", "resource", "cpu"],
        "-1",
        "Queue q1",
        "spec.guarantee.resource.cpu",
        "negative",
    ),
    (["objects", 6, "spec", "deserved", "cpu"], "-1", "Queue q1", "spec.deserved.cpu", "negative"),
    (["objects", 4, "spec", "minResources", "cpu"], "-2", "PodGroup ns1/pg1", "spec.minResources.cpu", "negative"),
    (["objects", 4, "spec", "minMember"], -1, "PodGroup ns1/pg1", "spec.minMember", "at least 0"),
    (["objects", 4, "spec", "minMember"], "2", "PodGroup ns1/pg1", "spec.minMember", 'expected an integer, got "2"'),
    (["objects", 4, "spec", "minTaskMember", "worker"], -1, "PodGroup ns1/pg1", "spec.minTaskMember.worker", "least"),
    (["objects", 6, "spec", "weight"], -1, "Queue q1", "spec.weight", "at least 0"),
    (["objects", 6, "spec", "weight"], 1.5, "Queue q1", "spec.weight", "expected an integer"),
    (["objects", 6, "spec", "reclaimable"], "no", "Queue q1", "spec.reclaimable", "expected true or false"),
    (["objects", 6, "status", "state"], "Shut", "Queue q1", "status.state", "expected one of"),
    (["objects", 2, "spec", "containers"], "main", "Pod ns1/p1", "spec.containers", "expected a list"),
    (["objects", 2, "spec", "containers", 0], "main", "Pod ns1/p1", "spec.containers[0]", "expected a mapping"),
    (["objects", 2, "spec", "priority"], "high", "Pod ns1/p1", "spec.priority", "expected an integer"),
    (["objects", 2, "spec", "priority"], 2**40, "Pod ns1/p1", "spec.priority", "int32"),
    (["objects", 2, "spec", "preemptionPolicy"], "Always", "Pod ns1/p1", "spec.preemptionPolicy", "one of"),
    (["objects", 2, "spec", "nodeSelector"], ["zone"], "Pod ns1/p1", "spec.nodeSelector", "expected a mapping"),
    (["objects", 2, "spec", "nodeSelector", "zone"], 1, "Pod ns1/p1", "spec.nodeSelector.zone", "expected a string"),
    (["objects", 2, "spec", "tolerations", 0, "operator"], "Like", "Pod ns1/p1", "spec.tolerations[0].operator", "one"),
    (
        [
            "objects",
            2,
            "spec",
            "affinity",
            "nodeAffinity",
            "preferredDuringSchedulingIgnoredDuringExecution",
            0,
            "weight",
        ],
        0,
        "Pod ns1/p1",
        "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
        "at least 1",
    ),
    (
        [
            "objects",
            2,
            "spec",
            "affinity",
            "nodeAffinity",
            "requiredDuringSchedulingIgnoredDuringExecution",
            "nodeSelectorTerms",
            0,
            "matchExpressions",
            0,
            "operator",
        ],
        "Near",
        "Pod ns1/p1",
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        ".matchExpressions[0].operator",
        "one of",
    ),
    (
        ["objects", 2, "spec", "initContainers", 1, "restartPolicy"],
        "Never",
        "Pod ns1/p1",
        "spec.initContainers[1].restartPolicy",
        "one of",
    ),
    (["objects", 2, "spec", "schedulingGates", 0], "wait", "Pod ns1/p1", "spec.schedulingGates[0]", "mapping"),
    (["objects", 2, "metadata", "labels"], "app=web", "Pod ns1/p1", "metadata.labels", "expected a mapping"),
    (
        ["objects", 2, "metadata", "creationTimestamp"],
        "yesterday",
        "Pod ns1/p1",
        "metadata.creationTimestamp",
        "RFC 3339",
    ),
    (
        ["objects", 2, "metadata", "creationTimestamp"],
        "2024-01-01T00:00:00",
        "Pod ns1/p1",
        "metadata.creationTimestamp",
        "RFC 3339",
    ),
    (["objects", 2, "metadata", "name"], None, "Pod at objects[2]", "metadata.name", "missing"),
    (["objects", 2, "metadata", "name"], 7, "Pod at objects[2]", "metadata.name", "expected a string"),
    (["objects", 2, "metadata"], "p1", "Pod at objects[2]", "metadata", "expected a mapping"),
    (["objects", 2, "kind"], None, "objects[2]", "kind", "missing"),
    (["objects", 2], "Pod p1", "objects[2]", "", "expected a Kubernetes object"),
    (["objects", 0, "spec", "taints", 0, "effect"], "Never", "Node n1", "spec.taints[0].effect", "one of"),
    (["objects", 0, "spec", "unschedulable"], "yes", "Node n1", "spec.unschedulable", "true or false"),
    (["objects", 0, "status", "conditions", 0], {"status": "True"}, "Node n1", "status.conditions[0].type", "missing"),
    (["objects", 9, "value"], None, "PriorityClass high", "value", "missing"),
    (["objects", 9, "globalDefault"], "true", "PriorityClass high", "globalDefault", "true or false"),
    (["objects", 10, "spec", "hard"], ["cpu"], "ResourceQuota ns1/rq", "spec.hard", "expected a mapping"),
    (["objects"], "all", "Scenario", "objects", "expected a list"),
    (["objects"], {"kind": "Pod"}, "Scenario", "objects", "kind: List"),
    (["cycles"], 0, "Scenario", "cycles", "at least 1"),
    (["cycles"], "2", "Scenario", "cycles", "expected an integer"),
    (["cycles"], True, "Scenario", "cycles", "expected an integer"),
    (["apiVersion"], "schedcheck/v2", "Scenario", "apiVersion", "expected schedcheck/v1"),
    (["kind"], "Scenarios", "Scenario", "kind", "expected Scenario"),
    (["metadata"], "every-kind", "Scenario", "metadata", "expected a mapping"),
    (["schedulerConf"], ["allocate"], "schedulerConf", "", "expected a mapping or a YAML string"),
    (
        ["schedulerConf", "tiers", 0, "plugins", 1, "enablePreemptable"],
        "off",
        "schedulerConf",
        "tiers[0].plugins[1].enablePreemptable",
        "expected true or false",
    ),
    (["expect", "bindz"], {}, "Scenario", "expect.bindz", "unknown expectation"),
    (["expect"], ["binds"], "Scenario", "expect", "expected a mapping"),
    (["expect", "binds"], {"p1": "n1"}, "Scenario", "expect.binds", '"namespace/name" key'),
    (["expect", "binds"], {"a/b/c": "n1"}, "Scenario", "expect.binds", '"namespace/name" key'),
    (["expect", "binds"], {"ns1/p1": 3}, "Scenario", "expect.binds[ns1/p1]", "expected a string"),
    (["expect", "binds"], ["ns1/p1"], "Scenario", "expect.binds", "expected a mapping"),
    (["expect", "evicted"], "default/p2", "Scenario", "expect.evicted", "expected a list"),
    (["expect", "evicted"], ["p2"], "Scenario", "expect.evicted[0]", '"namespace/name" key'),
    (["expect", "pipelined"], {"ns1/pg1": []}, "Scenario", "expect.pipelined[ns1/pg1]", "at least one node"),
    (["expect", "pipelined"], {"ns1/pg1": "n1"}, "Scenario", "expect.pipelined[ns1/pg1]", "expected a list"),
    (["expect", "podGroupPhases"], {"ns1/pg1": "Done"}, "Scenario", "expect.podGroupPhases[ns1/pg1]", "one of"),
    (
        ["expect", "taskStatusCounts"],
        {"ns1/pg1": {"Sleeping": 1}},
        "Scenario",
        "expect.taskStatusCounts[ns1/pg1]",
        "one of",
    ),
    (
        ["expect", "taskStatusCounts"],
        {"ns1/pg1": {"Running": -1}},
        "Scenario",
        "expect.taskStatusCounts[ns1/pg1].Running",
        "at least 0",
    ),
    (["expect", "bindCount"], -1, "Scenario", "expect.bindCount", "at least 0"),
    (["expect", "evictCount"], "1", "Scenario", "expect.evictCount", "expected an integer"),
]


@pytest.mark.parametrize("path, value, obj, field, reason", FULL_ERRORS)
def test_errors_name_file_object_and_field(path: list[Any], value: Any, obj: str, field: str, reason: str) -> None:
    err = fails(set_path(full_doc(), path, value), "full.yaml")
    assert (err.file, err.obj, err.field) == ("full.yaml", obj, field), str(err)
    assert reason in err.reason
    line = str(err)
    assert "\n" not in line and line.startswith(f"full.yaml: {obj}: " + (f"{field}: " if field else ""))
    assert INTERNAL_ERROR not in line


def test_duplicate_names_within_a_kind_and_namespace() -> None:
    err = fails(wrap(pod("p"), pod("p", group="other")))
    assert (err.obj, err.field) == ("Pod default/p", "metadata.name") and "objects[0]" in err.reason
    load(wrap(pod("p"), pod("p", namespace="ns2"), pod_group("p"), queue("p"), node("p")))  # other scope: fine
    assert fails(wrap(node("a"), node("a"))).obj == "Node a"
    assert fails(wrap(queue("a"), queue("a"))).obj == "Queue a"


def test_duplicate_uids() -> None:
    a = pod("p", namespace="a-b", group=None)
    b = pod("b-p", namespace="a", group=None)  # derived uid a-b-p twice
    err = fails(wrap(a, b))
    assert err.field == "metadata.uid" and "set metadata.uid" in err.reason
    b["metadata"]["uid"] = "u2"
    load(wrap(a, b))


@pytest.mark.parametrize(
    "text, field, reason",
    [
        ("a: [1, 2\n", "line 2, column 1", "invalid YAML"),
        ("a: b\n  c: d\n", "line 2, column 4", "invalid YAML"),
        ('{"apiVersion": "schedcheck/v1",\n "objects": [1, 2}', "line 2, column 18", "invalid JSON"),
        ('{"a": 1, "a": 2}', "", "duplicate key"),
        ("kind: Node\nkind: Pod\n", "line 2, column 1", "duplicate key"),
        ("", "", "holds no document"),
        ("---\n---\n", "", "holds no document"),
    ],
)
def test_syntax_errors(text: str, field: str, reason: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario_text(text, "bad.yaml")
    assert info.value.file == "bad.yaml" and info.value.field == field and reason in info.value.reason
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "text, obj",
    [
        ("- a\n- b\n", "document"),
        ("just text\n", "document"),
        ("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n---\n3\n", "document 2"),
    ],
)
def test_top_level_must_be_a_mapping(text: str, obj: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario_text(text, "bad.yaml")
    assert info.value.obj == obj and "expected a mapping" in info.value.reason


def test_a_scenario_must_be_alone() -> None:
    text = "apiVersion: schedcheck/v1\nkind: Scenario\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n}\n"
    with pytest.raises(ScenarioError, match="only document"):
        load_scenario_text(text, "bad.yaml")


def test_a_wrapper_without_kind_is_an_error() -> None:
    err = fails({"objects": [node()]})
    assert (err.obj, err.field) == ("Scenario", "apiVersion")


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"kind: \xff\xfe\n")
    with pytest.raises(ScenarioError, match="not UTF-8"):
        load_scenario(path)


# ---------------------------------------------------------------- warnings


def test_unknown_kinds_and_fields_warn() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x", "namespace": "default"}}
    cms = [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": f"c{i}"}} for i in range(3)]
    p = pod(priority=1)
    p["spec"]["containers"][0]["imagePullPolicy"] = "Always"
    p["spec"]["volumes"] = [{"name": "disk", "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.x", "lun": 0}}]
    p["metadata"]["resourceVersion"] = "12"
    p["metadata"]["colour"] = "red"
    p["status"] = {"hostIP": "1.2.3.4"}
    s = load(wrap(deployment, *cms, p, pod_group(), queue()) | {"extra": 1})
    w = s.warnings
    assert "ignored object kind Deployment apps/v1 default/x" in w
    assert "ignored 3 objects of kind Secret v1: c0, c1, c2" in w
    fields = [x for x in w if x.startswith("ignored fields of Pod")]
    assert fields == [
        "ignored fields of Pod (not read by the scheduler): "
        "spec.containers[].imagePullPolicy, spec.volumes[].iscsi, status.hostIP, metadata.colour"
    ]
    assert "Scenario: ignored unknown keys extra" in w
    assert len(s.objects.pods) == 1


def test_wrong_api_version_warns() -> None:
    q = queue() | {"apiVersion": "scheduling.volcano.sh/v1alpha1"}
    s = load(wrap(q, {**node(), "apiVersion": None}))
    assert any("Queue default: apiVersion" in w and "v1alpha1" in w for w in s.warnings)
    assert any("Node n1: apiVersion null" in w for w in s.warnings)


def test_dangling_references_warn() -> None:
    s = load(
        wrap(
            pod("a", group="missing-pg", nodeName="ghost"),
            pod("b", group="pg1"),
            pod("c", group=None),
            pod("done", group="pg1", nodeName="ghost2") | {"status": {"phase": "Succeeded"}},
            pod_group("pg1", queue="nowhere"),
        )
    )
    w = "\n".join(s.warnings)
    assert "queue nowhere, named by PodGroup default/pg1, is not among the objects: upstream leaves a job" in w
    assert "podgroup default/missing-pg, named by Pod default/a, is not among the objects: its pods belong to no" in w
    assert (
        "node ghost, named by Pod default/a, is not among the objects: upstream holds its pods on an "
        "uninitialised node, which is NotReady and left out of the snapshot" in w
    )
    assert "ghost2" not in w
    assert "Pod default/c: no scheduling.k8s.io/group-name annotation" in w
    assert load(wrap(pod(), pod_group(), queue(), node())).warnings == []
    # the scheduler creates the default queue itself, so naming it is no dangling reference
    assert not any("queue default" in x for x in load(wrap(pod_group())).warnings)


def test_many_dangling_names_are_aggregated() -> None:
    pods = [pod(f"p{i}", nodeName="ghost") for i in range(12)]
    s = load(wrap(*pods, pod_group(), queue()))
    (line,) = [x for x in s.warnings if "ghost" in x]
    assert "Pod default/p0" in line and "and 4 more" in line


def test_missing_priority_class_warns() -> None:
    s = load(
        wrap(
            pod(priorityClassName="gold"),
            pod("q", priorityClassName="gold", priority=5),
            pod_group(priorityClassName="gold"),
            queue(),
        )
    )
    (line,) = [x for x in s.warnings if "gold" in x]
    assert line == (
        "priorityClassName gold, named by PodGroup default/pg1, Pod default/p1, has no PriorityClass "
        "among the objects: it gets 0"
    )
    assert s.objects.pods[0].priority is None  # not resolved here
    default = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "base"},
        "value": 7,
        "globalDefault": True,
    }
    with_default = load(wrap(pod_group(priorityClassName="gold"), queue(), default))
    assert any("it gets the global default's value (7, base)" in x for x in with_default.warnings)
    present = load(wrap(pod_group(priorityClassName="base"), queue(), default))
    assert present.warnings == []


def test_odd_phases_warn() -> None:
    s = load(wrap(pod() | {"status": {"phase": "Sleeping"}}, pod_group(), queue()))
    assert any("status.phase Sleeping is no pod phase" in x for x in s.warnings)


# ---------------------------------------------------------------- robustness

JUNK = [None, 0, -1, 1.5, True, "", "x", "-1", "4GB", "1.5.5", [], [1], {}, {"a": 1}, {"kind": "List"},
        "1e400", 10**30, "8Ei", 1e300, "NaN"]


def nodes_of(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path] if path else []
    if isinstance(doc, dict):
        for key, value in doc.items():
            found += nodes_of(value, path + (key,))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            found += nodes_of(value, path + (i,))
    return found


def test_random_corruption_raises_only_precise_scenario_errors() -> None:
    rng = random.Random(20240601)
    base = full_doc()
    paths = nodes_of(base)
    for _ in range(1000):
        doc = copy.deepcopy(base)
        for _ in range(rng.randint(1, 3)):
            path = rng.choice(paths)
            try:
                set_path(doc, list(path), copy.deepcopy(rng.choice(JUNK)))
            except (KeyError, IndexError, TypeError):
                continue
        try:
            load(doc, "fuzz.yaml")
        except ScenarioError as err:
            assert INTERNAL_ERROR not in str(err), str(err)
            assert "\n" not in str(err)


def test_random_text_raises_only_scenario_errors() -> None:
    rng = random.Random(7)
    text = (DATA / "full.yaml").read_text()
    for _ in range(80):
        chars = list(text)
        for _ in range(rng.randint(1, 5)):
            chars[rng.randrange(len(chars))] = rng.choice(":-[]{}\"' \n\t#&*!|>%@`,?0a")
        try:
            load_scenario_text("".join(chars), "fuzz.yaml")
        except ScenarioError as err:
            assert INTERNAL_ERROR not in str(err), str(err)


def test_quantities_are_exact_fractions() -> None:
    s = load(wrap({**node(), "status": {"allocatable": {"cpu": "0.1", "memory": 1.5}}}))
    assert s.objects.nodes[0].allocatable["cpu"].as_fraction() == Fraction(1, 10)


def test_corrupted_scenarios_that_load_also_run() -> None:
    """What the loader accepts the scheduler runs: extreme but valid values never end in a traceback."""
    from schedcheck.runner import run_scenario

    rng = random.Random(20261125)
    base = full_doc()
    paths = nodes_of(base)
    ran = 0
    for _ in range(300):
        doc = copy.deepcopy(base)
        for _ in range(rng.randint(1, 3)):
            try:
                set_path(doc, list(rng.choice(paths)), copy.deepcopy(rng.choice(JUNK)))
            except (KeyError, IndexError, TypeError):
                continue
        try:
            scenario = load(doc, "fuzz.yaml")
        except ScenarioError:
            continue
        run_scenario(scenario)
        ran += 1
    assert ran > 10, ran


_SPREAD_POD = """apiVersion: v1
kind: Pod
metadata: {{name: p, namespace: ns, labels: {{app: web, rev: "7"}}}}
spec:
  containers: [{{name: c}}]
  topologySpreadConstraints:
  - {constraint}
"""


def test_spread_constraints_are_read_with_matchlabelkeys_merged() -> None:
    text = _SPREAD_POD.format(constraint="{maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, "
                                         "minDomains: 2, labelSelector: {matchLabels: {app: web}}, "
                                         "matchLabelKeys: [rev], nodeTaintsPolicy: Honor}")
    (c,) = load_scenario_text(text, "s.yaml").objects.pods[0].topology_spread_constraints
    assert (c.max_skew, c.topology_key, c.min_domains, c.node_affinity_policy, c.node_taints_policy) == \
        (2, "zone", 2, "Honor", "Honor")
    assert [(r.key, r.operator, r.values) for r in c.label_selector.match_expressions] == [("rev", "In", ["7"])]


@pytest.mark.parametrize("constraint, field", [
    ("{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}", "maxSkew"),
    ("{topologyKey: zone, whenUnsatisfiable: DoNotSchedule}", "maxSkew"),
    ("{maxSkew: 1, whenUnsatisfiable: DoNotSchedule}", "topologyKey"),
    ("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Sometimes}", "whenUnsatisfiable"),
    ("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, minDomains: 2}", "minDomains"),
    ("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, nodeTaintsPolicy: Always}",
     "nodeTaintsPolicy"),
    ("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, matchLabelKeys: [app], "
     "labelSelector: {matchLabels: {app: web}}}", "matchLabelKeys"),
])
def test_a_bad_spread_constraint_is_one_line_naming_the_field(constraint: str, field: str) -> None:
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(_SPREAD_POD.format(constraint=constraint), "s.yaml")
    message = str(err.value)
    assert "\n" not in message and "s.yaml" in message
    assert f"spec.topologySpreadConstraints[0].{field}" in message


def test_node_images_and_container_images_are_read() -> None:
    n = node(allocatable={"cpu": "2"}, images=[{"names": ["a/train:v1", "train:v1"], "sizeBytes": 5 * 2**30}])
    p = pod(containers=[{"name": "c", "image": "a/train:v1"}])
    s = load(wrap(n, p, pod_group(), queue()))
    assert s.objects.nodes[0].images == [k8s.ContainerImage(("a/train:v1", "train:v1"), 5 * 2**30)]
    assert s.objects.pods[0].containers[0].image == "a/train:v1"
    assert not [w for w in s.warnings if "images" in w or "image" in w]


@pytest.mark.parametrize("image, message", [
    ({"names": "train:v1"}, "status.images[0].names: expected a list"),
    ({"names": ["x"], "sizeBytes": -1}, "status.images[0].sizeBytes"),
    ({"names": [3]}, "status.images[0].names[0]"),
])
def test_bad_node_images_name_the_field(image: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError, match=re.escape(message)):
        load(wrap(node(allocatable={"cpu": "2"}, images=[image]), queue()))


def _pdb(**over: Any) -> dict[str, Any]:
    doc = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "ns"},
           "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}},
           "status": {"disruptionsAllowed": 1, "currentHealthy": 2, "disruptedPods": {"web-0": "2026-01-01T00:00:00Z"}}}
    for path, value in over.items():
        section, key = path.split("__")
        doc[section][key] = value
    return doc


def test_pod_disruption_budgets_are_read_without_warnings() -> None:
    s = load(wrap(_pdb(), queue()))
    assert s.objects.pod_disruption_budgets == [k8s.PodDisruptionBudget(
        "web", "ns", k8s.LabelSelector({"app": "web"}), disruptions_allowed=1, disrupted_pods=["web-0"])]
    assert not [w for w in s.warnings if "PodDisruptionBudget" in w]


@pytest.mark.parametrize("over, message", [
    ({"status__disruptionsAllowed": -1}, "PodDisruptionBudget ns/web: status.disruptionsAllowed"),
    ({"status__disruptionsAllowed": "one"}, "status.disruptionsAllowed: expected an integer"),
    ({"spec__minAvailable": "half"}, "spec.minAvailable: expected a non-negative integer or a percentage"),
    ({"spec__selector": {"matchExpressions": [{"key": "app", "operator": "Near"}]}}, "spec.selector"),
])
def test_bad_pod_disruption_budgets_name_the_field(over: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError, match=re.escape(message)):
        load(wrap(_pdb(**over), queue()))

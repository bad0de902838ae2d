"""Reading the Numatopology kind (nodeinfo.volcano.sh/v1alpha1), pods' limits and status.qosClass, and writing
them back."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from schedcheck.reference.k8s_numa import CPUInfo
from schedcheck.scenario.dump import objects_document
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.loader import scenario_from_document

API = "nodeinfo.volcano.sh/v1alpha1"
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
TOPO = {"apiVersion": API, "kind": "Numatopology", "metadata": {"name": "n1"}, "spec": {
    "policies": {"CPUManagerPolicy": "static", "TopologyManagerPolicy": "single-numa-node"},
    "numares": {"cpu": {"allocatable": "0-1,3", "capacity": 4}},
    "cpuDetail": {"0": {"numa": 0, "socket": 0, "core": 0}, "1": {"numa": 0, "socket": 0, "core": 1},
                  "2": {"numa": 1, "socket": 1, "core": 2}, "3": {"numa": 1, "socket": 1, "core": 3}},
    "resReserved": {"cpu": "1", "memory": "1Gi"},
    "podAllocations": [{"uid": "u1", "name": "p1", "namespace": "default",
                        "containerAllocations": [{"name": "c", "allocations": {"cpu": "2"}}]}]}}
GROUP = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "g", "namespace": "default"},
         "spec": {"minMember": 1}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "default",
                                                      "annotations": {"scheduling.k8s.io/group-name": "g"}},
       "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}]},
       "status": {"phase": "Pending", "qosClass": "Guaranteed"}}


def wrap(*objects: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "schedcheck/v1", "kind": "Scenario", "objects": [copy.deepcopy(o) for o in objects]}


def test_every_field_is_read_without_warnings():
    scenario = scenario_from_document(wrap(NODE, TOPO, GROUP, POD), "s.yaml")
    assert scenario.warnings == []
    (topo,) = scenario.objects.numatopologies
    assert topo.policies == {"CPUManagerPolicy": "static", "TopologyManagerPolicy": "single-numa-node"}
    assert topo.numa_res["cpu"].allocatable == frozenset({0, 1, 3}) and topo.numa_res["cpu"].capacity == 4
    assert topo.cpu_detail[2] == CPUInfo(1, 1, 2)
    assert str(topo.res_reserved["cpu"]) == "1" and [p.uid for p in topo.pod_allocations] == ["u1"]
    (pod,) = scenario.objects.pods
    assert pod.qos_class == "Guaranteed" and str(pod.containers[0].limits["cpu"]) == "2"
    assert str(pod.containers[0].requests["cpu"]) == "2"  # the API server's default from the limit


def test_written_back_and_read_again_is_the_same():
    first = scenario_from_document(wrap(NODE, TOPO, POD), "s.yaml").objects
    again = scenario_from_document(wrap(*objects_document(first)), "again.yaml").objects
    assert again.numatopologies == first.numatopologies
    assert again.pods[0].containers[0].limits == first.pods[0].containers[0].limits
    assert again.pods[0].qos_class == "Guaranteed"


@pytest.mark.parametrize("path, value, message", [
    (("numares", "cpu", "allocatable"), "0-x", "spec.numares.cpu.allocatable: \"0-x\" is not a cpuset"),
    (("numares", "cpu", "allocatable"), "3-1", "invalid range"),
    (("numares", "cpu", "allocatable"), 7, "expected a string"),
    (("numares", "cpu", "speed"), 1, "spec.numares.cpu.speed: unknown field"),
    (("cpuDetail", "one"), {"numa": 0}, "spec.cpuDetail.one: the key must be a CPU id"),
    (("cpuDetail", "0", "numa"), 64, "NUMA ids go from 0 to 63"),
    (("cpuDetail", "0", "numa"), -1, "must be at least 0"),
    (("resReserved", "cpu"), "two", "spec.resReserved.cpu"),
    (("policies", "TopologyManagerPolicy"), 1, "spec.policies.TopologyManagerPolicy: expected a string"),
    (("podAllocations",), {"uid": "u"}, "spec.podAllocations: expected a list"),
])
def test_malformed_fields_are_one_line_errors(path, value, message):
    doc = copy.deepcopy(TOPO)
    target = doc["spec"]
    for key in path[:-1]:
        target = target.setdefault(key, {})
    target[path[-1]] = value
    with pytest.raises(ScenarioError) as caught:
        scenario_from_document(wrap(NODE, doc), "bad.yaml")
    text = str(caught.value)
    assert "\n" not in text and "bad.yaml" in text and "Numatopology n1" in text and message in text, text


def test_unread_fields_and_orphans_are_warned_about():
    doc = copy.deepcopy(TOPO)
    doc["spec"]["policies"]["MemoryManagerPolicy"] = "Static"
    doc["status"] = {"x": 1}
    orphan = copy.deepcopy(TOPO)
    orphan["metadata"]["name"] = "gone"
    warnings = scenario_from_document(wrap(NODE, doc, orphan), "s.yaml").warnings
    assert any("spec.policies.MemoryManagerPolicy" in w and "status" in w for w in warnings), warnings
    assert any("Numatopology gone: no Node of that name" in w for w in warnings), warnings


def test_a_bad_qos_class_is_an_error():
    pod = copy.deepcopy(POD)
    pod["status"]["qosClass"] = "Gold"
    with pytest.raises(ScenarioError, match="status.qosClass"):
        scenario_from_document(wrap(NODE, pod), "bad.yaml")


def test_more_than_eight_numa_nodes_is_an_error():
    doc = copy.deepcopy(TOPO)
    doc["spec"]["cpuDetail"] = {str(i): {"numa": i, "socket": 0, "core": i} for i in range(9)}
    with pytest.raises(ScenarioError, match="9 NUMA nodes; at most 8"):
        scenario_from_document(wrap(NODE, doc), "bad.yaml")

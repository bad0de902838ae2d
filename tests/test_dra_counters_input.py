"""Reading partitionable devices' counters: ResourceSlice spec.sharedCounters and devices' consumesCounters."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from schedcheck.reference.quantity import Quantity
from schedcheck.scenario.dump import objects_document
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.loader import scenario_from_document

API = "resource.k8s.io/v1"
COUNTERS = {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": "n1-counters"},
            "spec": {"driver": "gpu.example.com", "nodeName": "n1",
                     "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 2},
                     "sharedCounters": [{"name": "gpu-0", "counters": {"memory": {"value": "40Gi"},
                                                                       "sm": {"value": "7"}}}]}}
DEVICES = {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": "n1-gpus"},
           "spec": {"driver": "gpu.example.com", "nodeName": "n1",
                    "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 2},
                    "devices": [{"name": "mig-0", "consumesCounters": [
                        {"counterSet": "gpu-0", "counters": {"memory": {"value": "20Gi"}, "sm": {"value": "3"}}}]}]}}


def read(*objects: dict[str, Any]):
    return scenario_from_document({"apiVersion": "schedcheck/v1", "kind": "Scenario", "objects": list(objects)},
                                  "s.yaml")


def test_counter_sets_and_consumption_are_read_and_written_back() -> None:
    scenario = read(COUNTERS, DEVICES)
    counters, devices = scenario.objects.resource_slices
    assert [(c.name, c.counters) for c in counters.shared_counters] == [
        ("gpu-0", {"memory": Quantity.parse("40Gi"), "sm": Quantity.parse("7")})]
    assert counters.devices == []
    (consumption,) = devices.devices[0].consumes_counters
    assert (consumption.counter_set, consumption.counters["memory"]) == ("gpu-0", Quantity.parse("20Gi"))
    assert not [w for w in scenario.warnings if "ounter" in w], scenario.warnings
    again = read(*[d for d in objects_document(scenario.objects) if d["kind"] == "ResourceSlice"])
    assert [s.shared_counters for s in again.objects.resource_slices] == [counters.shared_counters, []]
    assert again.objects.resource_slices[1].devices[0].consumes_counters == devices.devices[0].consumes_counters


def broken(doc: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return doc


@pytest.mark.parametrize("doc,message", [
    (broken(COUNTERS, ["spec", "devices"], []), r"ResourceSlice n1-counters: spec: expected at most one of "
                                                r"sharedCounters and devices"),
    (broken(COUNTERS, ["spec", "sharedCounters", 0, "name"], "GPU_0"),
     r"ResourceSlice n1-counters: spec.sharedCounters\[0\].name: expected a DNS label"),
    (broken(COUNTERS, ["spec", "sharedCounters", 0, "counters"], {}),
     r"spec.sharedCounters\[0\].counters: expected 1 to 32 counters, got 0"),
    (broken(COUNTERS, ["spec", "sharedCounters", 0, "counters", "memory", "value"], "lots"),
     r"spec.sharedCounters\[0\].counters.memory.value: "),
    (broken(COUNTERS, ["spec", "sharedCounters", 0, "counters", "memory"], {}),
     r"spec.sharedCounters\[0\].counters.memory.value: missing"),
    (broken(COUNTERS, ["spec", "sharedCounters"], [{"name": "a", "counters": {"m": {"value": 1}}}] * 2),
     r"spec.sharedCounters\[1\].name: duplicate counter set name"),
    (broken(COUNTERS, ["spec", "sharedCounters"], [{"name": f"s{i}", "counters": {"m": {"value": 1}}} for i in range(9)]),
     r"spec.sharedCounters: expected at most 8 counter sets, got 9"),
    (broken(COUNTERS, ["spec", "sharedCounters", 0, "counters"], {f"c{i}": {"value": 1} for i in range(33)}),
     r"expected 1 to 32 counters, got 33"),
    (broken(DEVICES, ["spec", "devices", 0, "consumesCounters", 0, "counterSet"], None),
     r"ResourceSlice n1-gpus: spec.devices\[0\].consumesCounters\[0\].counterSet: "),
    (broken(DEVICES, ["spec", "devices", 0, "consumesCounters"],
            [{"counterSet": f"s{i}", "counters": {"m": {"value": 1}}} for i in range(3)]),
     r"spec.devices\[0\].consumesCounters: expected at most 2 entries, got 3"),
    (broken(DEVICES, ["spec", "devices", 0, "consumesCounters"],
            [{"counterSet": "s", "counters": {"m": {"value": 1}}}] * 2),
     r"spec.devices\[0\].consumesCounters\[1\].counterSet: duplicate counter set"),
    (broken(DEVICES, ["spec", "devices", 0, "consumesCounters", 0, "counters"], {"Memory": {"value": 1}}),
     r"spec.devices\[0\].consumesCounters\[0\].counters.Memory: expected a DNS label"),
])
def test_bad_counters_are_one_line_errors_naming_the_field(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError, match=message) as info:
        read(doc)
    assert "\n" not in str(info.value) and "s.yaml" in str(info.value)


def test_a_counter_slice_still_needs_its_node_selection() -> None:
    with pytest.raises(ScenarioError, match=r"ResourceSlice n1-counters: spec: expected exactly one of nodeName"):
        read(broken(COUNTERS, ["spec", "nodeName"], None))

"""DRA admin access, DeviceTaintRule objects and DeviceClass extended resource names: read (one-line errors
for bad fields), dumped back, and what the reference does with them (README, "Dynamic resource allocation")."""

from __future__ import annotations

from typing import Any

import pytest

from schedcheck.reference.cache.dra_claims import ClaimTracker
from schedcheck.reference.k8s import Node
from schedcheck.reference.k8s_dra import DeviceRequest, ResourceClaim
from schedcheck.reference.plugins.dra_allocator import Allocator
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.loader import scenario_from_document

API = "resource.k8s.io/v1"
CLASS = {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
         "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}}
SLICE = {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": "n1-gpus"},
         "spec": {"driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "n1"},
                  "devices": [{"name": "gpu-0"}]}}


def wrap(*objects: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "schedcheck/v1", "kind": "Scenario", "objects": list(objects)}


def claim(name: str = "c1", admin: Any = None, result_admin: Any = None) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": "gpu.example.com"}
    if admin is not None:
        exactly["adminAccess"] = admin
    doc: dict[str, Any] = {"apiVersion": API, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "ns"},
                           "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}
    if result_admin is not None:
        doc["status"] = {"allocation": {"devices": {"results": [
            {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0",
             "adminAccess": result_admin}]}}}
    return doc


def rule(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceTaintRule", "metadata": {"name": "r1"},
            "spec": {"taint": {"key": "example.com/broken", "effect": "NoSchedule"}, **spec}}


def load(*objects: dict[str, Any]):
    return scenario_from_document(wrap(*objects), "s.yaml")


def failure(*objects: dict[str, Any]) -> str:
    with pytest.raises(ScenarioError) as caught:
        load(*objects)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_admin_access_is_read_on_requests_and_results() -> None:
    objects = load(CLASS, SLICE, claim(admin=True, result_admin=True)).objects
    request = objects.resource_claims[0].requests[0]
    assert request.admin_access is True
    assert objects.resource_claims[0].allocation.devices[0].admin_access is True
    assert load(CLASS, claim()).objects.resource_claims[0].requests[0].admin_access is False


def test_a_bad_admin_access_is_a_one_line_error_naming_the_field() -> None:
    message = failure(CLASS, claim(admin="yes"))
    assert message.startswith("s.yaml: ResourceClaim ns/c1: spec.devices.requests[0].exactly.adminAccess: expected")
    assert "status.allocation.devices.results[0].adminAccess" in failure(CLASS, claim(result_admin=1))


def test_admin_access_results_are_not_in_use_and_admin_requests_take_devices_in_use() -> None:
    objects = load(CLASS, SLICE, claim("held", result_admin=True)).objects
    tracker = ClaimTracker(objects)
    assert tracker.devices_in_use() == set()
    objects.resource_claims[0].allocation.devices[0].admin_access = False
    assert tracker.devices_in_use() == {("gpu.example.com", "n1", "gpu-0")}
    allocator = Allocator(tracker.classes, tracker.slices, *tracker.allocated_state())
    node = Node("n1", "n1")

    def new(admin: bool) -> ResourceClaim:
        return ResourceClaim("c", "ns", "u", [DeviceRequest("gpu", "gpu.example.com", admin_access=admin)])

    assert allocator.allocate(node, [new(False)]) is None
    result = allocator.allocate(node, [new(True)])
    assert result is not None and result[0].devices[0].device == "gpu-0" and result[0].devices[0].admin_access
    # two claims of one pod: the admin one second shares the device, first it keeps the plain one away
    assert allocator.allocate(node, [new(True), new(True)]) is not None
    fresh = Allocator(tracker.classes, tracker.slices, set())
    assert fresh.allocate(node, [new(False), new(True)]) is not None
    assert fresh.allocate(node, [new(True), new(False)]) is None


def test_device_taint_rules_are_read_and_warned_about_as_without_effect() -> None:
    scenario = load(CLASS, SLICE, rule(deviceSelector={"driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}))
    (read,) = scenario.objects.device_taint_rules
    assert (read.driver, read.pool, read.device, read.taint.key, read.taint.effect) == (
        "gpu.example.com", "n1", "gpu-0", "example.com/broken", "NoSchedule")
    assert any(w.startswith("DeviceTaintRule r1: without effect") and "DRADeviceTaintRules" in w
               for w in scenario.warnings), scenario.warnings
    assert not any("ignored" in w for w in scenario.warnings), scenario.warnings
    everything = load(rule()).objects.device_taint_rules[0]
    assert (everything.driver, everything.pool, everything.device) == (None, None, None)
    # the slices the allocator reads keep their own taints only
    assert load(SLICE, rule()).objects.resource_slices[0].devices[0].taints == []


@pytest.mark.parametrize(("spec", "field"), [
    ({"taint": {"effect": "NoSchedule"}}, "spec.taint.key: "),
    ({"taint": {"key": "k", "effect": "Sometimes"}}, "spec.taint.effect: "),
    ({"taint": {"key": "k", "effect": "None", "timeAdded": "yesterday"}}, "spec.taint.timeAdded: "),
    ({"deviceSelector": {"pool": ""}}, "spec.deviceSelector.pool: must not be empty"),
    ({"deviceSelector": {"device": 3}}, "spec.deviceSelector.device: "),
    ({"deviceSelector": "gpu"}, "spec.deviceSelector: "),
])
def test_a_bad_device_taint_rule_is_a_one_line_error_naming_the_field(spec: dict[str, Any], field: str) -> None:
    assert failure(rule(**spec)).startswith(f"s.yaml: DeviceTaintRule r1: {field}")


def test_a_device_taint_rule_at_another_version_is_read_with_a_warning() -> None:
    doc = {**rule(), "apiVersion": "resource.k8s.io/v1alpha3"}
    scenario = load(doc)
    assert any("is not resource.k8s.io/v1beta2" in w for w in scenario.warnings), scenario.warnings


def test_extended_resource_names_are_read_and_checked() -> None:
    named = {**CLASS, "spec": {**CLASS["spec"], "extendedResourceName": "example.com/gpu"}}
    assert load(named).objects.device_classes[0].extended_resource_name == "example.com/gpu"
    assert load(CLASS).objects.device_classes[0].extended_resource_name == ""
    for bad in ("gpu", "kubernetes.io/gpu", "deviceclass.resource.kubernetes.io/x", "a/b/c", 7):
        doc = {**CLASS, "spec": {"extendedResourceName": bad}}
        assert failure(doc).startswith("s.yaml: DeviceClass gpu.example.com: spec.extendedResourceName: ")


def test_a_pod_asking_for_a_class_extended_resource_is_warned_about() -> None:
    named = {**CLASS, "spec": {**CLASS["spec"], "extendedResourceName": "example.com/gpu"}}

    def pod(name: str, resource: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns"},
                "spec": {"containers": [{"name": "c", "resources": {"limits": {resource: "1"}}}]}}

    warnings = load(named, pod("p1", "example.com/gpu"),
                    pod("p2", "deviceclass.resource.kubernetes.io/gpu.example.com"), pod("p3", "other.com/x")).warnings
    text = "\n".join(warnings)
    assert "Pod ns/p1 asks for example.com/gpu, DeviceClass gpu.example.com's extended resource" in text
    assert "Pod ns/p2 asks for deviceclass.resource.kubernetes.io/gpu.example.com" in text
    assert "other.com/x" not in text


def test_admin_access_rules_and_extended_names_round_trip_through_the_dump() -> None:
    from schedcheck.scenario.dump import objects_document

    named = {**CLASS, "spec": {**CLASS["spec"], "extendedResourceName": "example.com/gpu"}}
    first = load(named, SLICE, claim(admin=True, result_admin=True), rule(deviceSelector={"pool": "n1"}),
                 {**rule(), "metadata": {"name": "r2"}}).objects
    again = load(*objects_document(first)).objects
    assert again.device_classes == first.device_classes and again.resource_claims == first.resource_claims
    assert again.device_taint_rules == first.device_taint_rules

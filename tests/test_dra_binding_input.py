"""Reading device binding conditions (bindingConditions, bindingFailureConditions, bindsToNode, a claim's
allocationTimestamp and status.devices) and the API's device limits of a ResourceSlice, as the API server
validates them (k8s v1.36.1 pkg/apis/resource/validation)."""

from __future__ import annotations

import copy
import subprocess
import sys
from typing import Any

import pytest

from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.loader import scenario_from_document
from tests.test_dra_objects import DEVICE_CLASS, SLICE, claim, pod_with_claim, wrap

ATTACH = {"bindingConditions": ["example.com/attached"], "bindingFailureConditions": ["example.com/attach-failed"]}
RESULT = {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0", **ATTACH}
CONDITION = {"type": "example.com/attached", "status": "True", "reason": "Attached",
             "lastTransitionTime": "2025-03-01T00:00:00Z"}


def attach_slice(**device: Any) -> dict[str, Any]:
    return {**SLICE, "spec": {**SLICE["spec"], "devices": [{"name": "gpu-0", **ATTACH, **device}]}}


def allocated_claim(*statuses: dict[str, Any], result: dict[str, Any] | None = None) -> dict[str, Any]:
    doc = claim()
    doc["status"] = {"allocation": {"allocationTimestamp": "2025-03-01T00:00:00Z",
                                    "devices": {"results": [result or RESULT]}},
                     "devices": list(statuses)}
    return doc


def test_binding_fields_are_read() -> None:
    status = {"driver": "gpu.example.com", "pool": "n1", "device": "gpu-0",
              "conditions": [CONDITION, {**CONDITION, "type": "example.com/attach-failed", "status": "False",
                                         "message": "not yet"}]}
    objects = scenario_from_document(wrap(DEVICE_CLASS, attach_slice(bindsToNode=True), allocated_claim(status),
                                          pod_with_claim()), "s.yaml").objects
    device = objects.resource_slices[0].devices[0]
    assert (device.binding_conditions, device.binding_failure_conditions, device.binds_to_node) == (
        ["example.com/attached"], ["example.com/attach-failed"], True)
    (read,) = objects.resource_claims
    assert read.allocation.timestamp == 1740787200.0
    result = read.allocation.devices[0]
    assert (result.binding_conditions, result.binding_failure_conditions) == (
        device.binding_conditions, device.binding_failure_conditions)
    found = read.device_status(result)
    assert found is not None and found.is_true("example.com/attached") and not found.is_true("example.com/attach-failed")
    assert found.conditions["example.com/attach-failed"].message == "not yet"
    assert not any("ignored fields" in w for w in scenario_from_document(
        wrap(DEVICE_CLASS, attach_slice(bindsToNode=True), allocated_claim(status)), "s.yaml").warnings)


@pytest.mark.parametrize(("device", "field", "reason"), [
    ({"bindingFailureConditions": []}, "spec.devices[0].bindingFailureConditions", "required together"),
    ({"bindingConditions": []}, "spec.devices[0].bindingConditions", "required together"),
    ({"bindingConditions": [f"c{i}" for i in range(5)]}, "spec.devices[0].bindingConditions",
     "Too many: 5: must have at most 4 items"),
    ({"bindingConditions": ["ready", "ready"]}, "spec.devices[0].bindingConditions[1]", 'Duplicate value: "ready"'),
    ({"bindingFailureConditions": ["example.com/attached"]}, "spec.devices[0].bindingFailureConditions[0]",
     "must not overlap with bindingConditions"),
    ({"bindingConditions": ["Not Ready"]}, "spec.devices[0].bindingConditions[0]", "expected a qualified name"),
    ({"bindsToNode": "yes"}, "spec.devices[0].bindsToNode", "expected true or false"),
])
def test_bad_binding_parameters_name_their_field(device: dict, field: str, reason: str) -> None:
    with pytest.raises(ScenarioError, match="ResourceSlice n1-gpus") as err:
        scenario_from_document(wrap(DEVICE_CLASS, attach_slice(**device)), "s.yaml")
    assert err.value.field == field and reason in err.value.reason


def _status(**changes: Any) -> dict[str, Any]:
    return {"driver": "gpu.example.com", "pool": "n1", "device": "gpu-0", "conditions": [{**CONDITION, **changes}]}


@pytest.mark.parametrize(("status", "field", "reason"), [
    ({**_status(), "device": "gpu-9"}, "status.devices[0]", "must be an allocated device in the claim"),
    ({**_status(), "shareID": "abc"}, "status.devices[0]", "must be an allocated device in the claim"),
    (_status(status="Yes"), "status.devices[0].conditions[0].status", "expected one of False, True, Unknown"),
    (_status(reason=None), "status.devices[0].conditions[0].reason", "missing"),
    (_status(reason="not ok"), "status.devices[0].conditions[0].reason", "expected a condition reason"),
    (_status(lastTransitionTime=None), "status.devices[0].conditions[0].lastTransitionTime", "missing"),
    (_status(type="a b"), "status.devices[0].conditions[0].type", "expected a qualified name"),
    ({**_status(), "conditions": [CONDITION, CONDITION]}, "status.devices[0].conditions[1].type", "Duplicate value"),
])
def test_bad_device_statuses_name_their_field(status: dict, field: str, reason: str) -> None:
    with pytest.raises(ScenarioError, match="ResourceClaim ns/c1") as err:
        scenario_from_document(wrap(DEVICE_CLASS, attach_slice(), allocated_claim(status)), "s.yaml")
    assert err.value.field == field and reason in err.value.reason


def test_a_device_status_without_an_allocation_is_refused() -> None:
    doc = claim()
    doc["status"] = {"devices": [_status()]}
    with pytest.raises(ScenarioError, match="must be an allocated device"):
        scenario_from_document(wrap(DEVICE_CLASS, doc), "s.yaml")


def test_a_result_with_bad_binding_parameters_names_its_field() -> None:
    with pytest.raises(ScenarioError) as err:
        scenario_from_document(wrap(DEVICE_CLASS, allocated_claim(result={**RESULT, "bindingFailureConditions": []})),
                               "s.yaml")
    assert err.value.field == "status.allocation.devices.results[0].bindingFailureConditions"


def _slice_of(count: int, **device: Any) -> dict[str, Any]:
    doc = copy.deepcopy(SLICE)
    doc["spec"]["devices"] = [{"name": f"d{i}", **device} for i in range(count)]
    return doc


COUNTERS = {"consumesCounters": [{"counterSet": "gpu", "counters": {"memory": {"value": "1Gi"}}}]}
TAINTS = {"taints": [{"key": "example.com/maintenance", "effect": "NoSchedule"}]}


@pytest.mark.parametrize(("count", "device", "limit"), [(65, COUNTERS, 64), (65, TAINTS, 64), (129, {}, 128)])
def test_a_slice_above_the_apis_device_limit_is_refused(count: int, device: dict, limit: int) -> None:
    """validateResourceSliceSpec: at most 128 devices, 64 when a device has taints or consumes counters."""
    with pytest.raises(ScenarioError) as err:
        scenario_from_document(wrap(_slice_of(count, **device)), "s.yaml")
    assert (err.value.obj, err.value.field) == ("ResourceSlice n1-gpus", "spec.devices")
    assert err.value.reason.startswith(f"Too many: {count}: must have at most {limit} items")


@pytest.mark.parametrize(("count", "device"), [(64, COUNTERS), (64, TAINTS), (65, {}), (128, {})])
def test_a_slice_at_the_apis_device_limit_is_read(count: int, device: dict) -> None:
    slices = scenario_from_document(wrap(_slice_of(count, **device)), "s.yaml").objects.resource_slices
    assert len(slices[0].devices) == count


def test_the_cli_refuses_a_slice_of_65_counter_consuming_devices_in_one_line(tmp_path) -> None:
    import yaml

    path = tmp_path / "big-slice.yaml"
    path.write_text(yaml.safe_dump(wrap(_slice_of(65, **COUNTERS))))
    proc = subprocess.run([sys.executable, "-m", "schedcheck.cli", "run", str(path)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1
    assert (f"{path}: ResourceSlice n1-gpus: spec.devices: Too many: 65: must have at most 64 items (some device "
            "of the slice has taints or consumes counters)") in proc.stderr


def test_binding_fields_round_trip_through_the_dump() -> None:
    from schedcheck.scenario.dump import objects_document

    status = {"driver": "gpu.example.com", "pool": "n1", "device": "gpu-0",
              "conditions": [{**CONDITION, "message": "on the fabric"}]}
    first = scenario_from_document(wrap(DEVICE_CLASS, attach_slice(bindsToNode=True), allocated_claim(status),
                                        pod_with_claim()), "s.yaml").objects
    again = scenario_from_document(wrap(*objects_document(first)), "s.yaml").objects
    assert again.resource_slices == first.resource_slices and again.resource_claims == first.resource_claims


def test_devices_with_binding_conditions_are_warned_about_by_name() -> None:
    warnings = scenario_from_document(wrap(DEVICE_CLASS, attach_slice(), allocated_claim()), "s.yaml").warnings
    assert any(w.startswith("ResourceSlice n1-gpus (gpu-0), ResourceClaim ns/c1: devices with binding conditions")
               and "#61" in w for w in warnings), warnings
    assert not any("binding conditions" in w for w in scenario_from_document(wrap(DEVICE_CLASS, SLICE),
                                                                              "s.yaml").warnings)

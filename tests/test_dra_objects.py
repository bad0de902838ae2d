"""Reading the DRA kinds (DeviceClass, ResourceSlice, ResourceClaim) and pods' resourceClaims."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.loader import scenario_from_document

API = "resource.k8s.io/v1"


def wrap(*objects: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "schedcheck/v1", "kind": "Scenario", "objects": list(objects)}


def claim(**request: Any) -> dict[str, Any]:
    exactly = {"deviceClassName": "gpu.example.com", **request}
    return {"apiVersion": API, "kind": "ResourceClaim", "metadata": {"name": "c1", "namespace": "ns"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}


def pod_with_claim(name: str = "c1") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "ns"},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "g"}]}}],
                     "resourceClaims": [{"name": "g", "resourceClaimName": name}]}}


DEVICE_CLASS = {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
                "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}}
SLICE = {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": "n1-gpus"},
         "spec": {"driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "n1", "generation": 2},
                  "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "t4"}, "healthy": {"bool": True},
                                                               "example.com/cores": {"int": 8}},
                               "capacity": {"memory": {"value": "16Gi"}}}]}}


def test_every_dra_kind_is_read() -> None:
    allocated = claim(count=2)
    allocated["status"] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}},
        "reservedFor": [{"resource": "pods", "name": "p0", "uid": "u0"}]}
    scenario = scenario_from_document(wrap(DEVICE_CLASS, SLICE, allocated, pod_with_claim()), "s.yaml")
    objects = scenario.objects
    assert objects.device_classes[0].selectors == ["device.driver == 'gpu.example.com'"]
    (slice_,) = objects.resource_slices
    assert (slice_.driver, slice_.pool, slice_.pool_generation, slice_.pool_slice_count) == ("gpu.example.com", "n1",
                                                                                             2, 1)
    assert slice_.devices[0].attributes == {"model": "t4", "healthy": True, "example.com/cores": 8}
    (read,) = objects.resource_claims
    assert read.key == "ns/c1" and read.requests[0].count == 2 and read.requests[0].allocation_mode == "ExactCount"
    assert read.allocation is not None and read.allocation.devices[0].device_id == ("gpu.example.com", "n1", "gpu-0")
    assert read.allocation.node_selector[0].match_fields[0].values == ["n1"] and read.reserved_for == ["u0"]
    (pod,) = objects.pods
    assert pod.resource_claims[0].resource_claim_name == "c1" and pod.containers[0].claims == ["g"]
    assert not [w for w in scenario.warnings if "DRA" in w or "resource" in w.lower()]


def test_a_claim_without_count_asks_for_one_device() -> None:
    scenario = scenario_from_document(wrap(DEVICE_CLASS, claim()), "s.yaml")
    assert scenario.objects.resource_claims[0].requests[0].count == 1


@pytest.mark.parametrize("request_fields,field,reason", [
    ({"count": "two"}, "spec.devices.requests[0].exactly.count", "expected an integer"),
    ({"allocationMode": "Some"}, "spec.devices.requests[0].exactly.allocationMode", "expected one of All, ExactCount"),
    ({"deviceClassName": None}, "spec.devices.requests[0].exactly.deviceClassName", "missing"),
    ({"tolerations": [{"key": "k", "operator": "Exists", "value": "v"}]},
     "spec.devices.requests[0].exactly.tolerations[0].value", "must be empty"),
    ({"tolerations": [{"operator": "Equal", "value": "v"}]},
     "spec.devices.requests[0].exactly.tolerations[0].operator", "must be Exists"),
    ({"tolerations": [{"key": "k", "effect": "Sometimes"}]},
     "spec.devices.requests[0].exactly.tolerations[0].effect", "expected one of"),
])
def test_a_malformed_claim_names_file_object_and_field(request_fields: dict, field: str, reason: str) -> None:
    with pytest.raises(ScenarioError) as info:
        scenario_from_document(wrap(claim(**request_fields)), "claims.yaml")
    err = info.value
    assert (err.file, err.obj, err.field) == ("claims.yaml", "ResourceClaim ns/c1", field)
    assert reason in err.reason and "\n" not in str(err)


def first_available(*subrequests: dict[str, Any], constraints: list | None = None) -> dict[str, Any]:
    doc = claim()
    doc["spec"]["devices"]["requests"].append({"name": "nic", "firstAvailable": list(subrequests)})
    if constraints is not None:
        doc["spec"]["devices"]["constraints"] = constraints
    return doc


def test_first_available_and_constraints_are_read() -> None:
    doc = first_available({"name": "big", "deviceClassName": "gpu.example.com", "count": 2,
                           "selectors": [{"cel": {"expression": "true"}}]},
                          {"name": "small", "deviceClassName": "gpu.example.com", "allocationMode": "All"},
                          constraints=[{"requests": ["gpu", "nic/big"], "matchAttribute": "gpu.example.com/numa"},
                                       {"distinctAttribute": "gpu.example.com/pci"}])
    (read,) = scenario_from_document(wrap(DEVICE_CLASS, doc), "s.yaml").objects.resource_claims
    nic = read.requests[1]
    assert nic.device_class_name == "" and [(s.name, s.count, s.allocation_mode) for s in nic.first_available] == [
        ("big", 2, "ExactCount"), ("small", 1, "All")] and nic.first_available[0].selectors == ["true"]
    assert [(c.requests, c.match_attribute, c.distinct_attribute) for c in read.constraints] == [
        (["gpu", "nic/big"], "gpu.example.com/numa", ""), ([], "", "gpu.example.com/pci")]


SUB = {"name": "a", "deviceClassName": "gpu.example.com"}


@pytest.mark.parametrize("doc,field,reason", [
    (first_available(), "spec.devices.requests[1].firstAvailable", "expected 1 to 8 subrequests, got 0"),
    (first_available(*[{**SUB, "name": f"s{i}"} for i in range(9)]), "spec.devices.requests[1].firstAvailable",
     "got 9"),
    (first_available(SUB, SUB), "spec.devices.requests[1].firstAvailable[1].name", "duplicate subrequest name"),
    (first_available({**SUB, "count": -2}), "spec.devices.requests[1].firstAvailable[0].count", "at least 0"),
    (first_available({"name": "a"}), "spec.devices.requests[1].firstAvailable[0].deviceClassName", "missing"),
    (first_available(SUB, constraints=[{"matchAttribute": "numa"}]), "spec.devices.constraints[0].matchAttribute",
     "expected a fully qualified name"),
    (first_available(SUB, constraints=[{"requests": ["nic/b"], "matchAttribute": "x.io/numa"}]),
     "spec.devices.constraints[0].requests[0]", "names no request of the claim"),
    (first_available(SUB, constraints=[{"matchAttribute": "x.io/a", "distinctAttribute": "x.io/b"}]),
     "spec.devices.constraints[0]", "expected exactly one of matchAttribute and distinctAttribute"),
    (first_available(SUB, constraints=[{"requests": ["gpu"]}]), "spec.devices.constraints[0]",
     "expected exactly one of matchAttribute and distinctAttribute"),
])
def test_a_malformed_first_available_or_constraint_names_its_field(doc: dict, field: str, reason: str) -> None:
    with pytest.raises(ScenarioError) as info:
        scenario_from_document(wrap(doc), "claims.yaml")
    assert (info.value.obj, info.value.field) == ("ResourceClaim ns/c1", field) and reason in info.value.reason


def test_a_request_needs_exactly_one_of_exactly_and_first_available() -> None:
    doc = claim()
    doc["spec"]["devices"]["requests"][0]["firstAvailable"] = [SUB]
    with pytest.raises(ScenarioError, match=r"ResourceClaim ns/c1: spec.devices.requests\[0\]: expected exactly one "
                                            "of exactly and firstAvailable"):
        scenario_from_document(wrap(doc), "s.yaml")
    del doc["spec"]["devices"]["requests"][0]["exactly"], doc["spec"]["devices"]["requests"][0]["firstAvailable"]
    with pytest.raises(ScenarioError, match=r"spec.devices.requests\[0\]: expected exactly one"):
        scenario_from_document(wrap(doc), "s.yaml")


ZONE_A = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}


def test_slice_node_selection_is_read() -> None:
    by_selector = {**SLICE, "spec": {**SLICE["spec"], "nodeName": None, "nodeSelector": ZONE_A}}
    per_device = {**SLICE, "metadata": {"name": "pd"}, "spec": {
        **SLICE["spec"], "nodeName": None, "perDeviceNodeSelection": True,
        "devices": [{"name": "d0", "nodeName": "n1", "attributes": {"v": {"version": "1.2.3"}}},
                    {"name": "d1", "allNodes": True}, {"name": "d2", "nodeSelector": ZONE_A}]}}
    first, second = scenario_from_document(wrap(by_selector, per_device), "s.yaml").objects.resource_slices
    assert first.node_selector[0].match_expressions[0].values == ["a"] and not first.node_name
    assert second.per_device_node_selection and [(d.node_name, d.all_nodes, d.node_selector is not None)
                                                 for d in second.devices] == [("n1", False, False), ("", True, False),
                                                                              ("", False, True)]
    assert type(second.devices[0].attributes["v"]).__name__ == "SemVer"


@pytest.mark.parametrize("spec,field,reason", [
    ({"nodeSelector": ZONE_A, "allNodes": True}, "spec", "expected exactly one of nodeName, nodeSelector"),
    ({"nodeSelector": {"nodeSelectorTerms": [ZONE_A["nodeSelectorTerms"][0]] * 2}},
     "spec.nodeSelector.nodeSelectorTerms", "expected exactly one term, got 2"),
    ({"perDeviceNodeSelection": True}, "spec.devices[0]",
     "expected exactly one of nodeName, nodeSelector and allNodes"),
    ({"perDeviceNodeSelection": "yes"}, "spec.perDeviceNodeSelection", "expected"),
    ({"nodeName": "n1", "devices": [{"name": "d", "allNodes": True}]}, "spec.devices[0]",
     "need the slice's perDeviceNodeSelection: true"),
])
def test_a_malformed_slice_node_selection_names_its_field(spec: dict, field: str, reason: str) -> None:
    doc = {**SLICE, "spec": {**SLICE["spec"], "nodeName": None, **spec}}
    with pytest.raises(ScenarioError) as info:
        scenario_from_document(wrap(doc), "s.yaml")
    assert (info.value.obj, info.value.field) == ("ResourceSlice n1-gpus", field) and reason in info.value.reason


def test_a_slice_needs_a_node_or_all_nodes() -> None:
    doc = {**SLICE, "spec": {**SLICE["spec"], "nodeName": None}}
    with pytest.raises(ScenarioError, match="ResourceSlice n1-gpus: spec: expected exactly one of nodeName"):
        scenario_from_document(wrap(doc), "s.yaml")


def test_a_bad_attribute_is_refused() -> None:
    device = {"name": "d", "attributes": {"model": {"string": "a", "int": 1}}}
    doc = {**SLICE, "spec": {**SLICE["spec"], "devices": [device]}}
    with pytest.raises(ScenarioError, match=r"spec.devices\[0\].attributes.model: expected exactly one of"):
        scenario_from_document(wrap(doc), "s.yaml")


SHARED_NIC = {"name": "nic", "allowMultipleAllocations": True, "capacity": {
    "bw": {"value": "10Gi", "requestPolicy": {"default": "1Gi", "validRange": {"min": "1Gi", "max": "8Gi",
                                                                                "step": "1Gi"}}},
    "queues": {"value": "8", "requestPolicy": {"validValues": ["1", "2", "4"]}}}}


def test_consumable_capacity_fields_are_read() -> None:
    doc = {**SLICE, "spec": {**SLICE["spec"], "devices": [SHARED_NIC]}}
    asking = claim(capacity={"requests": {"bw": "3Gi"}})
    asking["status"] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "nic", "shareID": "abc",
         "consumedCapacity": {"bw": "3Gi", "queues": "8"}}]}}}
    objects = scenario_from_document(wrap(DEVICE_CLASS, doc, asking), "s.yaml").objects
    (nic,) = objects.resource_slices[0].devices
    assert nic.allow_multiple_allocations and str(nic.capacity["bw"]) == "10Gi"
    bw, queues = nic.capacity_policies["bw"], nic.capacity_policies["queues"]
    assert (str(bw.default), str(bw.valid_min), str(bw.valid_max), str(bw.valid_step)) == ("1Gi", "1Gi", "8Gi", "1Gi")
    assert [str(v) for v in queues.valid_values] == ["1", "2", "4"] and queues.valid_min is None
    (read,) = objects.resource_claims
    assert str(read.requests[0].capacity_requests["bw"]) == "3Gi"
    (result,) = read.allocation.devices
    assert result.share_id == "abc" and {k: str(v) for k, v in result.consumed_capacity.items()} == {
        "bw": "3Gi", "queues": "8"}


@pytest.mark.parametrize("policy,field,reason", [
    ({"validRange": {"max": "2Gi"}}, "requestPolicy.validRange.min", "missing"),
    ({"validRange": {"min": "1Gi", "step": "0"}}, "requestPolicy.validRange.step", "greater than zero"),
    ({"validValues": ["2", "1"]}, "requestPolicy.validValues", "ascending"),
    ({"validValues": ["1"], "validRange": {"min": "1"}}, "requestPolicy", "at most one of validValues and validRange"),
    ({"default": "lots"}, "requestPolicy.default", ""),
])
def test_a_malformed_request_policy_names_its_field(policy: dict, field: str, reason: str) -> None:
    device = {"name": "nic", "capacity": {"bw": {"value": "10Gi", "requestPolicy": policy}}}
    doc = {**SLICE, "spec": {**SLICE["spec"], "devices": [device]}}
    with pytest.raises(ScenarioError) as info:
        scenario_from_document(wrap(doc), "s.yaml")
    assert info.value.field == f"spec.devices[0].capacity.bw.{field}" and reason in info.value.reason


def test_warnings_name_missing_claims_and_classes_and_unmodelled_selectors() -> None:
    template_pod = pod_with_claim()
    template_pod["metadata"]["name"] = "p2"
    template_pod["spec"]["resourceClaims"] = [{"name": "g", "resourceClaimTemplateName": "tpl"}]
    odd_class = {**DEVICE_CLASS, "metadata": {"name": "odd"},
                 "spec": {"selectors": [{"cel": {"expression": "google.protobuf.Int64Value{value: 1} == 1"}}]}}
    unknown_class = claim(deviceClassName="nic.example.com")
    scenario = scenario_from_document(wrap(odd_class, SLICE, unknown_class, pod_with_claim("gone"), template_pod),
                                      "s.yaml")
    text = "\n".join(scenario.warnings)
    assert "ResourceClaim ns/gone, named by Pod ns/p1, is not among the objects" in text
    assert "uses ResourceClaimTemplate" not in text  # its claim is read from pod status (none yet: it waits)
    assert "DeviceClass nic.example.com, named by ResourceClaim ns/c1, is not among the objects" in text
    assert "DeviceClass odd: spec.selectors[0].cel.expression" in text and "is not modelled (a protobuf message literal" in text


def test_unknown_dra_fields_are_warned_by_name() -> None:
    doc = claim()
    # a subrequest has no adminAccess in resource.k8s.io/v1 (an `exactly` request has, and it is read)
    doc["spec"]["devices"]["requests"][0] = {"name": "gpu", "firstAvailable": [
        {"name": "a", "deviceClassName": "gpu.example.com", "adminAccess": True}]}
    slice_ = {**SLICE, "spec": {**SLICE["spec"], "devices": [
        {"name": "gpu-0", "nodeAllocatableResourceMappings": {"cpu": {"allocationMultiplier": "1"}}}]}}
    scenario = scenario_from_document(wrap(DEVICE_CLASS, slice_, doc), "s.yaml")
    assert any("ignored fields of ResourceClaim" in w and "spec.devices.requests[].firstAvailable[].adminAccess" in w
               for w in scenario.warnings), scenario.warnings
    assert any("ignored fields of ResourceSlice" in w and "spec.devices[].nodeAllocatableResourceMappings" in w
               for w in scenario.warnings), scenario.warnings


def test_the_cli_reports_a_malformed_claim_in_one_line(tmp_path) -> None:
    path = tmp_path / "bad-claim.yaml"
    path.write_text("apiVersion: schedcheck/v1\nkind: Scenario\nobjects:\n- apiVersion: resource.k8s.io/v1\n"
                    "  kind: ResourceClaim\n  metadata: {name: c1, namespace: ns}\n"
                    "  spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: g, count: -1}}]}}\n")
    proc = subprocess.run([sys.executable, "-m", "schedcheck.cli", "run", str(path)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1
    assert (f"{path}: ResourceClaim ns/c1: spec.devices.requests[0].exactly.count: must be at least 0"
            in proc.stderr)


def test_dra_objects_round_trip_through_the_dump() -> None:
    from schedcheck.scenario.dump import objects_document

    allocated = claim(allocationMode="All")
    allocated["status"] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]}},
        "reservedFor": [{"resource": "pods", "name": "p1", "uid": "ns-p1"}]}
    by_selector = {**SLICE, "metadata": {"name": "zoned"}, "spec": {**SLICE["spec"], "nodeName": None,
                                                                    "nodeSelector": ZONE_A}}
    per_device = {**SLICE, "metadata": {"name": "pd"}, "spec": {
        **SLICE["spec"], "nodeName": None, "perDeviceNodeSelection": True,
        "devices": [{"name": "d0", "nodeName": "n1", "attributes": {"v": {"version": "1.2.3"}}},
                    {"name": "d1", "nodeSelector": ZONE_A}]}}
    listed = first_available({**SUB, "count": 2}, {"name": "b", "deviceClassName": "gpu.example.com",
                                                    "allocationMode": "All"},
                             constraints=[{"requests": ["nic/a"], "matchAttribute": "x.io/numa"},
                                          {"distinctAttribute": "x.io/pci"}])
    listed["metadata"]["name"] = "c2"
    shared = {**SLICE, "metadata": {"name": "shared"}, "spec": {**SLICE["spec"], "devices": [SHARED_NIC]}}
    sharing = claim(capacity={"requests": {"bw": "3Gi"}})
    sharing["metadata"]["name"] = "c3"
    sharing["status"] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "nic", "shareID": "abc",
         "consumedCapacity": {"bw": "3Gi"}}]}}}
    first = scenario_from_document(wrap(DEVICE_CLASS, SLICE, by_selector, per_device, shared, allocated, listed,
                                        sharing, pod_with_claim()), "s.yaml").objects
    again = scenario_from_document(wrap(*objects_document(first)), "s.yaml").objects
    assert again.device_classes == first.device_classes and again.resource_slices == first.resource_slices
    assert again.resource_claims == first.resource_claims
    assert again.pods[0].resource_claims == first.pods[0].resource_claims
    assert again.pods[0].containers[0].claims == ["g"]


def test_template_claim_statuses_and_claim_owners_are_read_and_checked_by_field() -> None:
    pod = pod_with_claim()
    pod["spec"]["resourceClaims"] = [{"name": "g", "resourceClaimTemplateName": "tpl"}]
    pod["status"] = {"resourceClaimStatuses": [{"name": "g", "resourceClaimName": "p1-g-x"}, {"name": "h"}]}
    owned = claim()
    owned["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "p1", "uid": "u1"},
                                            {"apiVersion": "v1", "kind": "Pod", "name": "p1", "uid": "u2",
                                             "controller": True}]
    scenario = scenario_from_document(wrap(owned, pod), "s.yaml")
    assert scenario.objects.pods[0].resource_claim_statuses == {"g": "p1-g-x", "h": None}
    assert scenario.objects.resource_claims[0].controller_uid == "u2"  # the controller entry's, not the first
    bad_status = {**pod, "status": {"resourceClaimStatuses": [{"resourceClaimName": "x"}]}}
    with pytest.raises(ScenarioError, match=r"status.resourceClaimStatuses\[0\].name"):
        scenario_from_document(wrap(bad_status), "s.yaml")
    bad_owner = claim()
    bad_owner["metadata"]["ownerReferences"] = [{"uid": "u", "controller": "yes"}]
    with pytest.raises(ScenarioError, match=r"metadata.ownerReferences\[0\].controller"):
        scenario_from_document(wrap(bad_owner), "s.yaml")


def test_capacity_quota_names_upstream_passes_over_are_warned_about_by_name() -> None:
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q1"},
             "spec": {"capability": {"bw.deviceclass/gpu.example.com": "4Gi", "bw.deviceclass/": "1",
                                     ".deviceclass/gpu.example.com": "1"}}}
    asking = scenario_from_document(wrap(DEVICE_CLASS, queue, claim(capacity={"requests": {"bw": "1Gi"}})), "s.yaml")
    assert not [w for w in asking.warnings if "not modelled" in w or "Queue q1: bw.deviceclass/gpu" in w]
    assert [w for w in asking.warnings if "Queue q1: .deviceclass/gpu.example.com, Queue q1: bw.deviceclass/:" in w
            and "pass it over" in w], asking.warnings


def test_a_pod_whose_claims_upstreams_cache_panics_on_is_warned_about() -> None:
    plain, asking = claim(), claim(capacity={"requests": {"bw": "1Gi"}})
    asking["metadata"]["name"] = "c2"
    pod = pod_with_claim()
    pod["spec"]["resourceClaims"] = [{"name": "g", "resourceClaimName": "c1"}, {"name": "h", "resourceClaimName": "c2"}]
    scenario = scenario_from_document(wrap(DEVICE_CLASS, plain, asking, pod), "s.yaml")
    assert [w for w in scenario.warnings if "ResourceClaim ns/c2 request" in w and "nil map" in w], scenario.warnings
    pod["spec"]["resourceClaims"].reverse()  # capacity first: the class's entry has its map
    scenario = scenario_from_document(wrap(DEVICE_CLASS, plain, asking, pod), "s.yaml")
    assert not [w for w in scenario.warnings if "nil map" in w]


def test_device_taints_and_request_tolerations_are_read_and_a_bad_taint_names_its_field() -> None:
    import copy

    tainted = copy.deepcopy(SLICE)
    tainted["spec"]["devices"][0]["taints"] = [{"key": "example.com/maintenance", "value": "true",
                                                "effect": "NoExecute", "timeAdded": "2026-01-01T00:00:00Z"}]
    tolerant = claim(tolerations=[{"key": "example.com/maintenance", "operator": "Exists", "effect": "NoExecute",
                                   "tolerationSeconds": 60}])
    scenario = scenario_from_document(wrap(DEVICE_CLASS, tainted, tolerant), "s.yaml")
    (taint,) = scenario.objects.resource_slices[0].devices[0].taints
    (toleration,) = scenario.objects.resource_claims[0].requests[0].tolerations
    assert (taint.key, taint.value, taint.effect) == ("example.com/maintenance", "true", "NoExecute")
    assert toleration.tolerates(taint) and not any("taints" in w or "tolerations" in w for w in scenario.warnings)
    tainted["spec"]["devices"][0]["taints"] = [{"key": "k", "effect": "NoWay"}]
    with pytest.raises(ScenarioError) as info:
        scenario_from_document(wrap(tainted), "s.yaml")
    assert info.value.field == "spec.devices[0].taints[0].effect" and "\n" not in str(info.value)


@pytest.mark.parametrize("toleration,taint,tolerated", [
    (dict(key="k", operator="Exists"), dict(key="k", value="v", effect="NoSchedule"), True),
    (dict(key="k", value="v"), dict(key="k", value="v", effect="NoExecute"), True),
    (dict(key="k", value="w"), dict(key="k", value="v", effect="NoSchedule"), False),
    (dict(key="k", operator="Exists", effect="NoSchedule"), dict(key="k", effect="NoExecute"), False),
    (dict(operator="Exists"), dict(key="any", effect="NoExecute"), True),
    (dict(key="other", operator="Exists"), dict(key="k", effect="NoSchedule"), False),
])
def test_a_toleration_tolerates_as_kubernetes_does(toleration: dict, taint: dict, tolerated: bool) -> None:
    from schedcheck.reference.k8s_dra import DeviceTaint, DeviceToleration
    from schedcheck.reference.plugins.dra_allocator import taint_prevents_allocation
    from schedcheck.reference.k8s_dra import Device

    assert DeviceToleration(**toleration).tolerates(DeviceTaint(**taint)) is tolerated
    device = Device("d", taints=[DeviceTaint(**taint)])
    assert taint_prevents_allocation(device, [DeviceToleration(**toleration)]) is (not tolerated)
    assert not taint_prevents_allocation(Device("d", taints=[DeviceTaint("k", effect="None")]), [])

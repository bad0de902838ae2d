"""The DRA objects written back as resource.k8s.io/v1 documents (dump.py's counterpart to dra_objects.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schedcheck.reference import k8s, k8s_dra
from schedcheck.reference.util.timestamps import format_timestamp

API_VERSION = "resource.k8s.io/v1"
TAINT_RULE_API_VERSION = "resource.k8s.io/v1beta2"


def _selectors(expressions: list[str]) -> list[dict[str, Any]]:
    return [{"cel": {"expression": e}} for e in expressions]


def _attribute(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, k8s_dra.SemVer):
        return {"version": str(value)}
    return {"int": value} if isinstance(value, int) else {"string": value}


def _node_selection(node_name: str, all_nodes: bool, selector: list[Any] | None,
                    term: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
    if node_name:
        return {"nodeName": node_name}
    if all_nodes:
        return {"allNodes": True}
    return {"nodeSelector": {"nodeSelectorTerms": [term(t) for t in selector]}} if selector is not None else {}


def _exactly(r: k8s_dra.DeviceRequest | k8s_dra.DeviceSubRequest) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": r.device_class_name, "allocationMode": r.allocation_mode}
    if r.allocation_mode == "ExactCount":
        exactly["count"] = r.count
    if r.selectors:
        exactly["selectors"] = _selectors(r.selectors)
    if r.capacity_requests:
        exactly["capacity"] = {"requests": {k: str(v) for k, v in r.capacity_requests.items()}}
    if getattr(r, "admin_access", False):  # DeviceRequest only
        exactly["adminAccess"] = True
    if r.tolerations:
        exactly["tolerations"] = [{k: v for k, v in (("key", t.key), ("operator", t.operator), ("value", t.value),
                                                     ("effect", t.effect)) if v} for t in r.tolerations]
    return exactly


def _capacity(device: k8s_dra.Device) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in device.capacity.items():
        entry: dict[str, Any] = {"value": str(value)}
        policy = device.capacity_policies.get(name)
        if policy is not None:
            doc: dict[str, Any] = {}
            if policy.default is not None:
                doc["default"] = str(policy.default)
            if policy.valid_values:
                doc["validValues"] = [str(v) for v in policy.valid_values]
            if policy.valid_min is not None:
                bounds = {"min": str(policy.valid_min)}
                bounds.update({"max": str(policy.valid_max)} if policy.valid_max is not None else {})
                bounds.update({"step": str(policy.valid_step)} if policy.valid_step is not None else {})
                doc["validRange"] = bounds
            entry["requestPolicy"] = doc
        out[name] = entry
    return out


def pod_claims(pod: k8s.Pod) -> list[dict[str, Any]]:
    out = []
    for claim in pod.resource_claims:
        entry: dict[str, Any] = {"name": claim.name}
        if claim.resource_claim_name:
            entry["resourceClaimName"] = claim.resource_claim_name
        else:
            entry["resourceClaimTemplateName"] = claim.resource_claim_template_name
        out.append(entry)
    return out


def device_class_document(dc: k8s_dra.DeviceClass) -> dict[str, Any]:
    spec: dict[str, Any] = {"selectors": _selectors(dc.selectors)} if dc.selectors else {}
    if dc.extended_resource_name:
        spec["extendedResourceName"] = dc.extended_resource_name
    return {"apiVersion": API_VERSION, "kind": "DeviceClass", "metadata": {"name": dc.name}, "spec": spec}


def device_taint_rule_document(rule: k8s_dra.DeviceTaintRule) -> dict[str, Any]:
    selector = {k: v for k, v in (("driver", rule.driver), ("pool", rule.pool), ("device", rule.device))
                if v is not None}
    taint = {"key": rule.taint.key, **({"value": rule.taint.value} if rule.taint.value else {}),
             "effect": rule.taint.effect}
    spec: dict[str, Any] = {**({"deviceSelector": selector} if selector else {}), "taint": taint}
    return {"apiVersion": TAINT_RULE_API_VERSION, "kind": "DeviceTaintRule", "metadata": {"name": rule.name},
            "spec": spec}


def _counters(counters: dict[str, Any]) -> dict[str, Any]:
    return {name: {"value": str(value)} for name, value in counters.items()}


def resource_slice_document(rs: k8s_dra.ResourceSlice, term: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
    devices = []
    for device in rs.devices:
        entry: dict[str, Any] = {"name": device.name}
        if device.attributes:
            entry["attributes"] = {k: _attribute(v) for k, v in device.attributes.items()}
        if device.capacity:
            entry["capacity"] = _capacity(device)
        if device.allow_multiple_allocations:
            entry["allowMultipleAllocations"] = True
        if device.taints:
            entry["taints"] = [{"key": t.key, **({"value": t.value} if t.value else {}), "effect": t.effect}
                               for t in device.taints]
        if device.consumes_counters:
            entry["consumesCounters"] = [{"counterSet": c.counter_set, "counters": _counters(c.counters)}
                                         for c in device.consumes_counters]
        entry.update(_binding(device.binding_conditions, device.binding_failure_conditions))
        if device.binds_to_node:
            entry["bindsToNode"] = True
        entry.update(_node_selection(device.node_name, device.all_nodes, device.node_selector, term))
        devices.append(entry)
    spec: dict[str, Any] = {"driver": rs.driver, "pool": {"name": rs.pool, "generation": rs.pool_generation,
                                                          "resourceSliceCount": rs.pool_slice_count}}
    spec.update(_node_selection(rs.node_name, rs.all_nodes, rs.node_selector, term))
    if rs.per_device_node_selection:
        spec["perDeviceNodeSelection"] = True
    if rs.shared_counters:  # a slice holds counter sets or devices, never both
        spec["sharedCounters"] = [{"name": c.name, "counters": _counters(c.counters)} for c in rs.shared_counters]
    else:
        spec["devices"] = devices
    return {"apiVersion": API_VERSION, "kind": "ResourceSlice", "metadata": {"name": rs.name}, "spec": spec}


def _binding(conditions: list[str], failures: list[str]) -> dict[str, Any]:
    return {"bindingConditions": list(conditions), "bindingFailureConditions": list(failures)} if conditions else {}


def _device_status(status: k8s_dra.DeviceStatus) -> dict[str, Any]:
    conditions = [{"type": kind, "status": c.status, "reason": c.reason, **({"message": c.message} if c.message else {}),
                   "lastTransitionTime": c.last_transition_time} for kind, c in status.conditions.items()]
    return {"driver": status.driver, "pool": status.pool, "device": status.device,
            **({"shareID": status.share_id} if status.share_id else {}), "conditions": conditions}


def resource_claim_document(claim: k8s_dra.ResourceClaim, term: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
    requests: list[dict[str, Any]] = []
    for r in claim.requests:
        if r.first_available:
            requests.append({"name": r.name, "firstAvailable": [{"name": sub.name, **_exactly(sub)}
                                                                 for sub in r.first_available]})
        else:
            requests.append({"name": r.name, "exactly": _exactly(r)})
    devices: dict[str, Any] = {"requests": requests}
    if claim.constraints:
        devices["constraints"] = [
            {**({"requests": c.requests} if c.requests else {}),
             **({"matchAttribute": c.match_attribute} if c.match_attribute else
                {"distinctAttribute": c.distinct_attribute})} for c in claim.constraints]
    meta: dict[str, Any] = {"name": claim.name, "namespace": claim.namespace, "uid": claim.uid}
    if claim.deletion_timestamp:
        meta["deletionTimestamp"] = claim.deletion_timestamp
    if claim.controller_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "", "uid": claim.controller_uid,
                                    "controller": True}]
    status: dict[str, Any] = {}
    if claim.allocation is not None:
        allocation: dict[str, Any] = {"devices": {"results": [
            {"request": d.request, "driver": d.driver, "pool": d.pool, "device": d.device,
             **({"shareID": d.share_id} if d.share_id else {}),
             **({"consumedCapacity": {k: str(v) for k, v in d.consumed_capacity.items()}}
                if d.consumed_capacity else {}),
             **({"adminAccess": True} if d.admin_access else {}),
             **_binding(d.binding_conditions, d.binding_failure_conditions)}
            for d in claim.allocation.devices]}}
        if claim.allocation.node_selector is not None:
            allocation["nodeSelector"] = {"nodeSelectorTerms": [term(t) for t in claim.allocation.node_selector]}
        if claim.allocation.timestamp is not None:
            allocation["allocationTimestamp"] = format_timestamp(claim.allocation.timestamp)
        status["allocation"] = allocation
    if claim.device_statuses:
        status["devices"] = [_device_status(d) for d in claim.device_statuses]
    if claim.reserved_for:
        status["reservedFor"] = [{"resource": "pods", "name": "", "uid": uid} for uid in claim.reserved_for]
    doc = {"apiVersion": API_VERSION, "kind": "ResourceClaim", "metadata": meta,
           "spec": {"devices": devices}}
    if status:
        doc["status"] = status
    return doc


def dra_documents(objects: k8s.ClusterObjects, term: Callable[[Any], dict[str, Any]]) -> list[dict[str, Any]]:
    return ([device_class_document(c) for c in objects.device_classes]
            + [resource_slice_document(s, term) for s in objects.resource_slices]
            + [resource_claim_document(c, term) for c in objects.resource_claims]
            + [device_taint_rule_document(r) for r in objects.device_taint_rules])

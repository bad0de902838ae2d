"""The DRA objects written back as resource.k8s.io/v1 documents (dump.py's counterpart to dra_objects.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schedcheck.reference import k8s, k8s_dra

API_VERSION = "resource.k8s.io/v1"


def _selectors(expressions: list[str]) -> list[dict[str, Any]]:
    return [{"cel": {"expression": e}} for e in expressions]


def _attribute(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"bool": value}
    return {"int": value} if isinstance(value, int) else {"string": value}


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
    return {"apiVersion": API_VERSION, "kind": "DeviceClass", "metadata": {"name": dc.name},
            "spec": {"selectors": _selectors(dc.selectors)} if dc.selectors else {}}


def resource_slice_document(rs: k8s_dra.ResourceSlice) -> dict[str, Any]:
    devices = []
    for device in rs.devices:
        entry: dict[str, Any] = {"name": device.name}
        if device.attributes:
            entry["attributes"] = {k: _attribute(v) for k, v in device.attributes.items()}
        if device.capacity:
            entry["capacity"] = {k: {"value": str(v)} for k, v in device.capacity.items()}
        devices.append(entry)
    spec: dict[str, Any] = {"driver": rs.driver, "pool": {"name": rs.pool, "generation": rs.pool_generation,
                                                          "resourceSliceCount": rs.pool_slice_count}}
    spec.update({"allNodes": True} if rs.all_nodes else {"nodeName": rs.node_name})
    spec["devices"] = devices
    return {"apiVersion": API_VERSION, "kind": "ResourceSlice", "metadata": {"name": rs.name}, "spec": spec}


def resource_claim_document(claim: k8s_dra.ResourceClaim, term: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
    requests = []
    for r in claim.requests:
        exactly: dict[str, Any] = {"deviceClassName": r.device_class_name, "allocationMode": r.allocation_mode}
        if r.allocation_mode == "ExactCount":
            exactly["count"] = r.count
        if r.selectors:
            exactly["selectors"] = _selectors(r.selectors)
        requests.append({"name": r.name, "exactly": exactly})
    meta: dict[str, Any] = {"name": claim.name, "namespace": claim.namespace, "uid": claim.uid}
    if claim.deletion_timestamp:
        meta["deletionTimestamp"] = claim.deletion_timestamp
    if claim.controller_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "", "uid": claim.controller_uid,
                                    "controller": True}]
    status: dict[str, Any] = {}
    if claim.allocation is not None:
        allocation: dict[str, Any] = {"devices": {"results": [
            {"request": d.request, "driver": d.driver, "pool": d.pool, "device": d.device}
            for d in claim.allocation.devices]}}
        if claim.allocation.node_selector is not None:
            allocation["nodeSelector"] = {"nodeSelectorTerms": [term(t) for t in claim.allocation.node_selector]}
        status["allocation"] = allocation
    if claim.reserved_for:
        status["reservedFor"] = [{"resource": "pods", "name": "", "uid": uid} for uid in claim.reserved_for]
    doc = {"apiVersion": API_VERSION, "kind": "ResourceClaim", "metadata": meta,
           "spec": {"devices": {"requests": requests}}}
    if status:
        doc["status"] = status
    return doc


def dra_documents(objects: k8s.ClusterObjects, term: Callable[[Any], dict[str, Any]]) -> list[dict[str, Any]]:
    return ([device_class_document(c) for c in objects.device_classes]
            + [resource_slice_document(s) for s in objects.resource_slices]
            + [resource_claim_document(c, term) for c in objects.resource_claims])

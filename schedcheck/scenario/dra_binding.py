"""Read device binding conditions (DRADeviceBindingConditions) as the API server validates them (k8s v1.36.1
pkg/apis/resource/validation): a device's or an allocation result's bindingConditions and
bindingFailureConditions, a device's bindsToNode, an allocation's allocationTimestamp and a claim's
status.devices (conditions as metav1 ValidateConditions checks them). dra_objects.py calls these."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from schedcheck.reference import k8s_dra
from schedcheck.reference.util.timestamps import parse_timestamp
from schedcheck.scenario.errors import describe
from schedcheck.scenario.fields import Fields

BINDING_CONDITIONS_MAX = 4  # resourceapi.BindingConditionsMaxSize (and BindingFailureConditionsMaxSize)
DEVICE_CONDITIONS_MAX = 8  # resourceapi.AllocatedDeviceStatusMaxConditions
CONDITION_STATUSES = {"True", "False", "Unknown"}
_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_REASON = re.compile(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?")
REASON_MAX, MESSAGE_MAX = 1024, 32 * 1024


def qualified_name(f: Fields, value: Any, field: str) -> str:
    """A label key (IsQualifiedName): `[prefix/]name`, the prefix a DNS subdomain, the name at most 63."""
    text = f.string(value, field, required=True)
    prefix, slash, name = text.rpartition("/")
    bad = not _NAME.fullmatch(name) or len(name) > 63 or (
        slash and (not prefix or len(prefix) > 253 or not _SUBDOMAIN.fullmatch(prefix)))
    if bad or text.count("/") > 1:
        f.fail(field, f"expected a qualified name ([DNS subdomain/]name of at most 63 alphanumerics, '-', '_', "
                      f"'.'), got {describe(text)}")
    return text


def binding_parameters(f: Fields, doc: Mapping[str, Any], field: str) -> tuple[list[str], list[str]]:
    """bindingConditions and bindingFailureConditions (validateDeviceBindingParameters): at most 4 each,
    qualified names, no repeats, no overlap, and either both or neither."""
    lists = []
    for key in ("bindingConditions", "bindingFailureConditions"):
        items = f.sequence(doc.get(key), f"{field}.{key}")
        if len(items) > BINDING_CONDITIONS_MAX:
            f.fail(f"{field}.{key}", f"Too many: {len(items)}: must have at most {BINDING_CONDITIONS_MAX} items")
        names = []
        for i, item in enumerate(items):
            name = qualified_name(f, item, f"{field}.{key}[{i}]")
            if name in names:
                f.fail(f"{field}.{key}[{i}]", f"Duplicate value: {describe(name)}")
            names.append(name)
        lists.append(names)
    conditions, failures = lists
    for i, name in enumerate(failures):
        if name in conditions:
            f.fail(f"{field}.bindingFailureConditions[{i}]", "bindingFailureConditions must not overlap with "
                                                              "bindingConditions")
    if bool(conditions) != bool(failures):
        missing = "bindingFailureConditions" if conditions else "bindingConditions"
        f.fail(f"{field}.{missing}", "bindingConditions and bindingFailureConditions are required together")
    return conditions, failures


def binds_to_node(f: Fields, doc: Mapping[str, Any], field: str) -> bool:
    return bool(f.boolean(doc.get("bindsToNode"), f"{field}.bindsToNode", False))


def allocation_timestamp(f: Fields, doc: Mapping[str, Any]) -> float | None:
    text = f.timestamp(doc.get("allocationTimestamp"), "status.allocation.allocationTimestamp")
    return parse_timestamp(text) if text else None


def device_statuses(f: Fields, status: Mapping[str, Any], allocation: k8s_dra.ClaimAllocation | None
                    ) -> list[k8s_dra.DeviceStatus]:
    """status.devices: each names an allocated device of the claim (with its shareID, if it has one), once;
    its conditions as metav1 conditions (type, status, reason, lastTransitionTime required)."""
    allocated = {(d.driver, d.pool, d.device, d.share_id) for d in allocation.devices} if allocation else set()
    out: list[k8s_dra.DeviceStatus] = []
    for i, item in enumerate(f.sequence(status.get("devices"), "status.devices")):
        field = f"status.devices[{i}]"
        doc = f.mapping(item, field)
        entry = k8s_dra.DeviceStatus(*(f.string(doc.get(k), f"{field}.{k}", required=True)
                                       for k in ("driver", "pool", "device")),
                                     f.string(doc.get("shareID"), f"{field}.shareID"))
        key = (entry.driver, entry.pool, entry.device, entry.share_id)
        if key not in allocated:
            f.fail(field, f"must be an allocated device in the claim, got {'/'.join(p for p in key if p)}")
        if any((s.driver, s.pool, s.device, s.share_id) == key for s in out):
            f.fail(field, "Duplicate value: the device is listed twice")
        _conditions(f, doc.get("conditions"), f"{field}.conditions", entry)
        out.append(entry)
    return out


def _conditions(f: Fields, value: Any, field: str, entry: k8s_dra.DeviceStatus) -> None:
    items = f.sequence(value, field)
    if len(items) > DEVICE_CONDITIONS_MAX:
        f.fail(field, f"Too many: {len(items)}: must have at most {DEVICE_CONDITIONS_MAX} items")
    for i, item in enumerate(items):
        path = f"{field}[{i}]"
        doc = f.mapping(item, path)
        kind = qualified_name(f, doc.get("type"), f"{path}.type")
        if kind in entry.conditions:
            f.fail(f"{path}.type", f"Duplicate value: {describe(kind)}")
        state = f.choice(doc.get("status"), f"{path}.status", CONDITION_STATUSES)
        when = f.timestamp(doc.get("lastTransitionTime"), f"{path}.lastTransitionTime")
        if when is None:
            f.fail(f"{path}.lastTransitionTime", "missing")
        reason = f.string(doc.get("reason"), f"{path}.reason", required=True)
        if len(reason) > REASON_MAX or not _REASON.fullmatch(reason):
            f.fail(f"{path}.reason", f"expected a condition reason (a letter, then letters, digits, '_', ',' or "
                                     f"':', ending in a letter, digit or '_'; at most {REASON_MAX}), got "
                                     f"{describe(reason)}")
        message = f.string(doc.get("message"), f"{path}.message")
        if len(message) > MESSAGE_MAX:
            f.fail(f"{path}.message", f"longer than {MESSAGE_MAX} characters")
        f.integer(doc.get("observedGeneration"), f"{path}.observedGeneration", minimum=0, bits=64)
        entry.conditions[kind] = k8s_dra.DeviceCondition(state, reason, message, when)

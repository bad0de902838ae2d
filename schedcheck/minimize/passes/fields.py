"""Passes over objects' fields: lower PodGroups' minMember, and drop optional fields (annotations,
labels, taints, affinity, tolerations, priorities, limits, conditions, ...) while keeping the ones
that carry the failure's structure (`PROTECTED`)."""

from __future__ import annotations

import copy
from typing import Any

from schedcheck import document as d
from schedcheck.minimize.edits import Doc, Edit, dropper, keep_only, lower_int
from schedcheck.reference.k8s import GROUP_NAME_ANNOTATION

def min_member_edits(doc: Doc) -> list[Edit]:
    edits: list[Edit] = []
    for index, group in d.typed(doc, "PodGroup"):
        value = d.sub(group, "spec").get("minMember")
        if not isinstance(value, int) or isinstance(value, bool) or value <= 1:
            continue

        def make(current: Doc, index: int = index, value: int = value) -> list[Doc]:
            out = []
            for n in lower_int(value, 1):
                candidate = copy.deepcopy(current)
                candidate["objects"][index]["spec"]["minMember"] = n
                out.append(candidate)
            return out
        edits.append((f"lower minMember of {d.key(group)[2]}", make))
    return edits


_META_KEEP = {"name"}
# per kind: (section, key) pairs never dropped by the field pass (they carry the failure's structure)
_PROTECTED = {
    "Pod": {("spec", "containers"), ("spec", "nodeName"), ("status", "phase")},
    "PodGroup": {("spec", "minMember"), ("status", "phase")},
    "Node": set(),
    "Queue": set(),
    "PriorityClass": set(),
    "ResourceQuota": {("spec", "hard")},
}
_LIST_FIELDS = {("spec", "taints"), ("spec", "tolerations"), ("spec", "containers"), ("spec", "initContainers"),
                ("status", "conditions")}


def field_edits(doc: Doc) -> list[Edit]:
    edits: list[Edit] = []
    for index, obj in enumerate(d.objects(doc) or []):
        if not isinstance(obj, dict):
            continue
        kind = obj.get("kind")
        label = "/".join(p for p in d.key(obj) if p)
        base: tuple[Any, ...] = ("objects", index)
        for key in obj:
            if key not in ("apiVersion", "kind", "metadata", "spec", "status", "value"):
                edits.append((f"{label}: drop {key}", dropper(base + (key,))))
        meta = d.meta(obj)
        for key in meta:
            if key in _META_KEEP or (key == "namespace" and meta[key] != "default"):
                continue  # a namespace other than the default is kept: it ties pods to their PodGroup
            if key == "annotations" and kind == "Pod" and GROUP_NAME_ANNOTATION in d.sub(meta, key):
                others = [k for k in meta[key] if k != GROUP_NAME_ANNOTATION]
                if others:
                    edits.append((f"{label}: drop annotations", keep_only(base + ("metadata", key),
                                                                            {GROUP_NAME_ANNOTATION})))
                    edits += [(f"{label}: drop annotation {k}", dropper(base + ("metadata", key, k)))
                              for k in others]
                continue
            edits.append((f"{label}: drop metadata.{key}", dropper(base + ("metadata", key))))
            if key in ("annotations", "labels") and len(d.sub(meta, key)) > 1:
                edits += [(f"{label}: drop {key[:-1]} {k}", dropper(base + ("metadata", key, k))) for k in meta[key]]
        protected = _PROTECTED.get(str(kind), set())
        for section in ("spec", "status"):
            values = d.sub(obj, section)
            for key, value in values.items():
                path = base + (section, key)
                if kind == "Node" and section == "status" and key in ("allocatable", "capacity"):
                    other = "capacity" if key == "allocatable" else "allocatable"
                    if key == "capacity" and other in values:  # keep allocatable, the one the scheduler uses
                        edits.append((f"{label}: drop status.capacity", dropper(path)))
                    continue
                if (section, key) not in protected or ((section, key) == ("status", "phase") and value == "Pending"):
                    edits.append((f"{label}: drop {section}.{key}", dropper(path)))
                if (section, key) in _LIST_FIELDS and isinstance(value, list):
                    first = 1 if key == "containers" else 0
                    if len(value) > first + 1 or ((section, key) in protected and len(value) > first):
                        edits += [(f"{label}: drop {section}.{key}[{i}]", dropper(path + (i,)))
                                  for i in range(first, len(value))]
                    if key in ("containers", "initContainers"):
                        edits += _container_edits(label, path, value)
    return edits


def _container_edits(label: str, path: tuple[Any, ...], containers: list[Any]) -> list[Edit]:
    edits: list[Edit] = []
    for i, container in enumerate(containers):
        if not isinstance(container, dict):
            continue
        for key in container:
            if key not in ("resources",):
                edits.append((f"{label}: drop {path[-1]}[{i}].{key}", dropper(path + (i, key))))
        resources = d.sub(container, "resources")
        for key in resources:
            if key != "requests" or "limits" not in resources:
                edits.append((f"{label}: drop {path[-1]}[{i}].resources.{key}",
                              dropper(path + (i, "resources", key))))
    return edits



"""Read Kubernetes objects (Node, Pod, PodGroup, Queue, PriorityClass, ResourceQuota, NodeShard, the
storage kinds: PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode, VolumeAttachment, and the
DRA kinds of dra_objects.py: DeviceClass, ResourceSlice, ResourceClaim, numa_objects.py's Numatopology, and
workload_objects.py's Service, ReplicationController, ReplicaSet, StatefulSet) into k8s.ClusterObjects.

Each kind has a reader and a schema of the fields the scheduler reads; any
other field, and any other kind, becomes a warning.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from schedcheck.reference import k8s
from schedcheck.scenario import (
    device_config,
    dra_objects,
    in_tree_volumes,
    numa_objects,
    pod_resources,
    resize_status,
    workload_objects,
)
from schedcheck.scenario.errors import ScenarioError, describe
from schedcheck.scenario.fields import Fields
from schedcheck.scenario.references import listing, reference_warnings
from schedcheck.scenario.tree_copy import copy_document

_API_VERSIONS = {
    "Node": "v1",
    "Pod": "v1",
    "ResourceQuota": "v1",
    "PodDisruptionBudget": "policy/v1",
    "PodGroup": "scheduling.volcano.sh/v1beta1",
    "Queue": "scheduling.volcano.sh/v1beta1",
    "PriorityClass": "scheduling.k8s.io/v1",
    "NodeShard": "shard.volcano.sh/v1alpha1",
    "HyperNode": "topology.volcano.sh/v1alpha1",
    "PersistentVolume": "v1",
    "PersistentVolumeClaim": "v1",
    "StorageClass": "storage.k8s.io/v1",
    "CSINode": "storage.k8s.io/v1",
    "VolumeAttachment": "storage.k8s.io/v1",
    **dra_objects.API_VERSIONS,
    **dict.fromkeys(numa_objects.SCHEMAS, numa_objects.API_VERSION),
    **dict.fromkeys(device_config.SCHEMAS, device_config.API_VERSION),
    **workload_objects.API_VERSIONS,
}
_NAMESPACED = {"Pod", "PodGroup", "ResourceQuota", "PodDisruptionBudget", "PersistentVolumeClaim", "ResourceClaim",
               "ConfigMap", *workload_objects.API_VERSIONS}


# ---------------------------------------------------------------- schemas


LEAF = None
Schema = dict[str, Any]  # key -> LEAF | Schema (a mapping) | [Schema] (a list of mappings)

_META: Schema = dict.fromkeys(
    [
        "name",
        "namespace",
        "uid",
        "labels",
        "annotations",
        "creationTimestamp",
        "deletionTimestamp",
        # bookkeeping the scheduler never reads, dropped without a warning
        "resourceVersion",
        "generation",
        "managedFields",
        "selfLink",
        "ownerReferences",
        "finalizers",
        "generateName",
        "deletionGracePeriodSeconds",
    ]
)
_CONDITION: Schema = dict.fromkeys(
    ["type", "status", "reason", "message", "lastTransitionTime", "lastProbeTime", "lastHeartbeatTime", "transitionID"]
)
_REQUIREMENT: Schema = dict.fromkeys(["key", "operator", "values"])
_TERM: Schema = {"matchExpressions": [_REQUIREMENT], "matchFields": [_REQUIREMENT]}
# volumeMounts only say where a volume appears in the container: no scheduler filter reads them
_CONTAINER: Schema = {"name": LEAF, "image": LEAF, "resources": {"requests": LEAF, "limits": LEAF,
                                                                 "claims": [{"name": LEAF, "request": LEAF}]},
                      "volumeMounts": LEAF,
                      "ports": [dict.fromkeys(["containerPort", "hostPort", "protocol", "hostIP", "name"])]}
_POD_TERM: Schema = dict.fromkeys(["labelSelector", "namespaces", "namespaceSelector", "topologyKey"])
# Volume sources no enabled filter reads (VolumeRestrictions, which would, is not enabled upstream); others
# (in-tree disks) are warned about. A generic ephemeral volume's template is what the ephemeral volume
# controller copies into the claim; the scheduler reads that claim, never the template.
_PLAIN_VOLUME_SOURCES = ["configMap", "secret", "emptyDir", "projected", "downwardAPI", "hostPath", "nfs", "csi",
                         "image"]
_VOLUME: Schema = {"name": LEAF, "persistentVolumeClaim": dict.fromkeys(["claimName", "readOnly"]),
                   "ephemeral": {"volumeClaimTemplate": dict.fromkeys(["metadata", "spec"])},
                   **dict.fromkeys(_PLAIN_VOLUME_SOURCES), **in_tree_volumes.SCHEMAS}
_NODE_SELECTOR: Schema = {"nodeSelectorTerms": [_TERM]}
_POD_AFFINITY: Schema = {"requiredDuringSchedulingIgnoredDuringExecution": [_POD_TERM],
                         "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": LEAF,
                                                                               "podAffinityTerm": _POD_TERM}]}
_SCHEMAS: dict[str, Schema] = {
    "Node": {
        "metadata": _META,
        "spec": {"unschedulable": LEAF, "taints": [dict.fromkeys(["key", "value", "effect", "timeAdded"])]},
        "status": {"allocatable": LEAF, "capacity": LEAF, "conditions": [_CONDITION],
                   "images": [dict.fromkeys(["names", "sizeBytes"])]},
    },
    "Pod": {
        "metadata": _META,
        "spec": {
            "nodeName": LEAF,
            "containers": [_CONTAINER],
            "initContainers": [{**_CONTAINER, "restartPolicy": LEAF}],
            "overhead": LEAF,
            # spec.os: no filter or scorer Volcano runs reads it (k8s v1.36.1's scheduler plugins neither);
            # only the kubelet and API validation do: its name is checked and it is accepted, not read
            "os": {"name": LEAF},
            "resources": pod_resources.SCHEMA,
            "priority": LEAF,
            "priorityClassName": LEAF,
            "preemptionPolicy": LEAF,
            "nodeSelector": LEAF,
            "schedulerName": LEAF,
            "schedulingGates": [{"name": LEAF}],
            "volumes": [_VOLUME],
            "resourceClaims": [dra_objects.POD_CLAIM],
            "tolerations": [dict.fromkeys(["key", "operator", "value", "effect", "tolerationSeconds"])],
            "topologySpreadConstraints": [dict.fromkeys(["maxSkew", "topologyKey", "whenUnsatisfiable",
                                                         "labelSelector", "minDomains", "nodeAffinityPolicy",
                                                         "nodeTaintsPolicy", "matchLabelKeys"])],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [_TERM]},
                    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": LEAF, "preference": _TERM}],
                },
                "podAffinity": _POD_AFFINITY,
                "podAntiAffinity": _POD_AFFINITY,
            },
        },
        "status": {"phase": LEAF, "nominatedNodeName": LEAF, "startTime": LEAF, "conditions": [_CONDITION],
                   "qosClass": LEAF, "resourceClaimStatuses": [dra_objects.POD_CLAIM_STATUS],
                   **resize_status.STATUS_SCHEMA},
    },
    "PodGroup": {
        "metadata": _META,
        "spec": {**dict.fromkeys(["minMember", "minTaskMember", "minResources", "queue", "priorityClassName"]),
                 "networkTopology": dict.fromkeys(["mode", "highestTierAllowed", "highestTierName"]),
                 "subGroupPolicy": [{**dict.fromkeys(["name", "subGroupSize", "minSubGroups", "labelSelector",
                                                       "matchLabelKeys"]),
                                     "networkTopology": dict.fromkeys(["mode", "highestTierAllowed",
                                                                       "highestTierName"])}]},
        "status": {"phase": LEAF, "conditions": [_CONDITION], "running": LEAF, "succeeded": LEAF, "failed": LEAF},
    },
    "Queue": {
        "metadata": _META,
        "spec": {
            **dict.fromkeys(["weight", "capability", "deserved", "reclaimable", "priority", "parent"]),
            "guarantee": {"resource": LEAF},
            "affinity": dict.fromkeys(["nodeGroupAffinity", "nodeGroupAntiAffinity"],
                                      dict.fromkeys(["requiredDuringSchedulingIgnoredDuringExecution",
                                                     "preferredDuringSchedulingIgnoredDuringExecution"])),
        },
        "status": {"state": LEAF},
    },
    "PriorityClass": {
        "metadata": _META,
        **dict.fromkeys(["value", "preemptionPolicy", "globalDefault", "description"]),
    },
    "ResourceQuota": {"metadata": _META, "spec": {"hard": LEAF}, "status": {"used": LEAF, "hard": LEAF}},
    # minAvailable, maxUnavailable and the status counts are the disruption controller's business: read
    # without a warning, as a dump always carries them; the pdb plugin reads disruptionsAllowed.
    "PodDisruptionBudget": {"metadata": _META,
                            "spec": dict.fromkeys(["selector", "minAvailable", "maxUnavailable",
                                                   "unhealthyPodEvictionPolicy"]),
                            "status": dict.fromkeys(["disruptionsAllowed", "disruptedPods", "currentHealthy",
                                                     "desiredHealthy", "expectedPods", "observedGeneration",
                                                     "conditions"])},
    "HyperNode": {"metadata": _META, "spec": {**dict.fromkeys(["tier", "tierName"]), "members": [{
        "type": LEAF, "selector": {"exactMatch": {"name": LEAF}, "regexMatch": {"pattern": LEAF},
                                   "labelMatch": {"matchLabels": LEAF, "matchExpressions": LEAF}}}]},
                  "status": LEAF},
    # Fields the binder does not read but every dump carries are listed to be read without a warning.
    "PersistentVolume": {"metadata": _META,
                         "spec": {**dict.fromkeys(["capacity", "accessModes", "volumeMode", "storageClassName",
                                                   "volumeAttributesClassName", "persistentVolumeReclaimPolicy",
                                                   "mountOptions", "local", "hostPath", "nfs"]),
                                  "claimRef": dict.fromkeys(["namespace", "name", "uid", "kind", "apiVersion",
                                                             "resourceVersion"]),
                                  "nodeAffinity": {"required": _NODE_SELECTOR},
                                  "csi": dict.fromkeys(["driver", "volumeHandle", "fsType", "volumeAttributes",
                                                        "readOnly"]),
                                  **in_tree_volumes.SCHEMAS},
                         "status": dict.fromkeys(["phase", "lastPhaseTransitionTime", "reason", "message"])},
    "PersistentVolumeClaim": {"metadata": _META,
                              "spec": {**dict.fromkeys(["accessModes", "storageClassName", "volumeName", "volumeMode",
                                                        "selector", "volumeAttributesClassName", "dataSource",
                                                        "dataSourceRef"]),
                                       "resources": {"requests": LEAF, "limits": LEAF}},
                              "status": dict.fromkeys(["phase", "capacity", "accessModes", "conditions",
                                                       "currentVolumeAttributesClassName", "allocatedResources",
                                                       "allocatedResourceStatuses", "modifyVolumeStatus"])},
    "StorageClass": {"metadata": _META, **dict.fromkeys(["provisioner", "volumeBindingMode", "parameters",
                                                          "reclaimPolicy", "allowVolumeExpansion", "mountOptions"]),
                     "allowedTopologies": [{"matchLabelExpressions": [dict.fromkeys(["key", "values"])]}]},
    "CSINode": {"metadata": _META, "spec": {"drivers": [{**dict.fromkeys(["name", "nodeID", "topologyKeys"]),
                                                         "allocatable": {"count": LEAF}}]}},
    "VolumeAttachment": {"metadata": _META,
                         "spec": {**dict.fromkeys(["attacher", "nodeName"]),
                                  "source": {"persistentVolumeName": LEAF}},
                         "status": LEAF},
    "NodeShard": {"metadata": _META, "spec": {"nodesDesired": LEAF},
                  "status": dict.fromkeys(["nodesInUse", "nodesToRemove", "nodesToAdd", "lastUpdateTime"])},
    **dra_objects.SCHEMAS,
    **numa_objects.SCHEMAS,
    **device_config.SCHEMAS,
    **workload_objects.SCHEMAS,
}


def _unknown_fields(doc: Any, schema: Schema, prefix: str, out: set[str]) -> None:
    """Add to `out` the path of every key of `doc` that `schema` does not name."""
    if not isinstance(doc, Mapping):
        return
    for key, value in doc.items():
        path = f"{prefix}{key}"
        if key in ("apiVersion", "kind") and not prefix:
            continue
        if key not in schema:
            out.add(path)
            continue
        sub = schema[key]
        if isinstance(sub, dict):
            _unknown_fields(value, sub, path + ".", out)
        elif isinstance(sub, list) and isinstance(value, list):
            for item in value:
                _unknown_fields(item, sub[0], path + "[].", out)



# ---------------------------------------------------------------- the reader


class ObjectsReader:
    """Turns located documents into ClusterObjects, collecting warnings."""

    def __init__(self, file: str, warnings: list[str]) -> None:
        self.file = file
        self.warnings = warnings
        self.objects = k8s.ClusterObjects()
        self.seen: dict[tuple[str, str, str], str] = {}  # (kind, ns, name) -> where
        self.uids: dict[tuple[str, str], str] = {}  # (kind, uid) -> label
        self.unknown_fields: dict[str, set[str]] = defaultdict(set)
        self.ignored: dict[str, list[str]] = defaultdict(list)  # "Kind apiVersion" -> names

    def read(self, located: list[tuple[str, Any]]) -> k8s.ClusterObjects:
        for where, doc in located:
            self._one(where, doc)
        for kind_version, names in self.ignored.items():
            if len(names) == 1:
                self.warnings.append(f"ignored object kind {kind_version} {names[0]}")
            else:
                self.warnings.append(f"ignored {len(names)} objects of kind {kind_version}: {listing(names)}")
        for kind, paths in self.unknown_fields.items():
            if not paths:
                continue
            order = sorted(paths, key=lambda p: (not p.startswith("spec"), not p.startswith("status"), p))
            self.warnings.append(f"ignored fields of {kind} (not read by the scheduler): {listing(order)}")
        reference_warnings(self.objects, self.warnings)
        numa_objects.numa_warnings(self.objects, self.warnings)
        return self.objects

    def _one(self, where: str, doc: Any) -> None:
        if not isinstance(doc, Mapping):
            raise ScenarioError(self.file, where, "", f"expected a Kubernetes object (a mapping), got {describe(doc)}")
        f = Fields(self.file, where)
        kind = f.string(doc.get("kind"), "kind", required=True)
        if kind == "List":
            for i, item in enumerate(f.sequence(doc.get("items"), "items")):
                self._one(f"{where}.items[{i}]", item)
            return
        api_version = doc.get("apiVersion")
        if kind not in _READERS:
            meta = doc.get("metadata") if isinstance(doc.get("metadata"), Mapping) else {}
            name = str(meta.get("name") or "?")
            name = f"{meta['namespace']}/{name}" if meta.get("namespace") else name
            self.ignored[f"{kind} {api_version}"].append(name)
            return
        f.obj = f"{kind} at {where}"
        name, namespace, uid = self._identity(f, kind, doc, where)
        if api_version != _API_VERSIONS[kind]:
            self.warnings.append(
                f"{f.obj}: apiVersion {describe(api_version)} is not {_API_VERSIONS[kind]}; read it as that"
            )
        _READERS[kind](f, doc, name, namespace, uid, self.objects)
        _unknown_fields(doc, _SCHEMAS[kind], "", self.unknown_fields[kind])

    def _identity(self, f: Fields, kind: str, doc: Mapping[str, Any], where: str) -> tuple[str, str, str]:
        meta = f.mapping(doc.get("metadata"), "metadata")
        name = f.string(meta.get("name"), "metadata.name", required=True)
        namespace = ""
        if kind in _NAMESPACED:
            namespace = f.string(meta.get("namespace"), "metadata.namespace", default="default")
        f.obj = f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"
        key = (kind, namespace, name)
        if key in self.seen:
            f.fail("metadata.name", f"duplicate {kind} (also at {self.seen[key]})")
        self.seen[key] = where
        if kind == "Pod":
            derived = f"{namespace}-{name}"  # upstream's unit tests build pod UIDs this way
        else:
            derived = "-".join(p for p in (kind.lower(), namespace, name) if p)
        uid = f.string(meta.get("uid"), "metadata.uid", default=derived)
        if (kind, uid) in self.uids:
            f.fail("metadata.uid", f"uid {uid} is also the uid of {self.uids[(kind, uid)]}; set metadata.uid")
        self.uids[(kind, uid)] = f.obj
        return name, namespace, uid


# ---------------------------------------------------------------- one reader per kind


def _meta(f: Fields, doc: Mapping[str, Any]) -> dict[str, Any]:
    meta = f.mapping(doc.get("metadata"), "metadata")
    return {
        "labels": f.str_map(meta.get("labels"), "metadata.labels"),
        "annotations": f.str_map(meta.get("annotations"), "metadata.annotations"),
        "creation_timestamp": f.timestamp(meta.get("creationTimestamp"), "metadata.creationTimestamp") or "",
    }


def _read_node(f: Fields, doc: Mapping[str, Any], name: str, _ns: str, uid: str, out: k8s.ClusterObjects) -> None:
    spec = f.mapping(doc.get("spec"), "spec")
    status = f.mapping(doc.get("status"), "status")
    taints = []
    for i, item in enumerate(f.sequence(spec.get("taints"), "spec.taints")):
        field = f"spec.taints[{i}]"
        taint = f.mapping(item, field)
        taints.append(
            k8s.Taint(
                key=f.string(taint.get("key"), f"{field}.key", required=True),
                effect=f.choice(
                    taint.get("effect"), f"{field}.effect", {"NoSchedule", "PreferNoSchedule", "NoExecute"}
                ),
                value=f.string(taint.get("value"), f"{field}.value"),
            )
        )
    # A kubelet always reports both; hand-written scenarios often give one, so each stands in for the other.
    capacity = f.resources(status.get("capacity"), "status.capacity")
    allocatable = capacity
    if status.get("allocatable") is not None:
        allocatable = f.resources(status.get("allocatable"), "status.allocatable")
    if status.get("capacity") is None:
        capacity = allocatable
    ready = True  # only a Ready condition that is not "True" makes the node not ready
    for i, cond in enumerate(f.sequence(status.get("conditions"), "status.conditions")):
        condition = _condition(f, cond, f"status.conditions[{i}]")
        if condition.type == "Ready":
            ready = condition.status == "True"
    images = []
    for i, item in enumerate(f.sequence(status.get("images"), "status.images")):
        path = f"status.images[{i}]"
        image = f.mapping(item, path)
        names = tuple(f.string(n, f"{path}.names[{j}]", required=True)
                      for j, n in enumerate(f.sequence(image.get("names"), f"{path}.names")))
        images.append(k8s.ContainerImage(names, f.integer(image.get("sizeBytes"), f"{path}.sizeBytes", minimum=0,
                                                                         bits=64) or 0))
    meta = _meta(f, doc)
    out.nodes.append(
        k8s.Node(
            name=name,
            raw=k8s.RawDocument(copy_document(doc)),
            uid=uid,
            **meta,
            unschedulable=f.boolean(spec.get("unschedulable"), "spec.unschedulable", False),
            taints=taints,
            allocatable=dict(allocatable),
            capacity=dict(capacity),
            ready=ready,
            images=images,
        )
    )


def _condition(f: Fields, value: Any, field: str) -> k8s.PodCondition:
    cond = f.mapping(value, field)
    return k8s.PodCondition(
        type=f.string(cond.get("type"), f"{field}.type", required=True),
        status=f.string(cond.get("status"), f"{field}.status", required=True),
        reason=f.string(cond.get("reason"), f"{field}.reason"),
        message=f.string(cond.get("message"), f"{field}.message"),
        last_transition_time=f.timestamp(cond.get("lastTransitionTime"), f"{field}.lastTransitionTime") or "",
    )


def _container(f: Fields, value: Any, field: str, init: bool) -> k8s.Container:
    doc = f.mapping(value, field)
    resources = f.mapping(doc.get("resources"), f"{field}.resources")
    # API defaulting: a resource with a limit but no request requests its limit.
    limits = f.resources(resources.get("limits"), f"{field}.resources.limits")
    requests = dict(limits)
    requests.update(f.resources(resources.get("requests"), f"{field}.resources.requests"))
    restart_policy = None
    if init and doc.get("restartPolicy") is not None:
        restart_policy = f.choice(doc.get("restartPolicy"), f"{field}.restartPolicy", {"Always"})
    ports = []
    for i, item in enumerate(f.sequence(doc.get("ports"), f"{field}.ports")):
        path = f"{field}.ports[{i}]"
        port = f.mapping(item, path)
        container_port = f.integer(port.get("containerPort"), f"{path}.containerPort", minimum=1)
        if container_port is None or container_port > 65535:
            f.fail(f"{path}.containerPort", f"expected a port from 1 to 65535, got {describe(container_port)}")
        host_port = f.integer(port.get("hostPort"), f"{path}.hostPort", minimum=0) or 0
        if host_port > 65535:
            f.fail(f"{path}.hostPort", f"expected a port from 0 to 65535, got {host_port}")
        ports.append(k8s.ContainerPort(
            container_port, host_port, f.choice(port.get("protocol"), f"{path}.protocol", {"TCP", "UDP", "SCTP"},
                                                default="TCP"),
            f.string(port.get("hostIP"), f"{path}.hostIP")))
    return k8s.Container(
        name=f.string(doc.get("name"), f"{field}.name"), requests=requests, restart_policy=restart_policy,
        ports=ports, image=f.string(doc.get("image"), f"{field}.image"),
        claims=dra_objects.container_claims(f, resources, f"{field}.resources"), limits=limits,
    )


def _selector_term(f: Fields, value: Any, field: str) -> k8s.NodeSelectorTerm:
    doc = f.mapping(value, field)
    lists = {}
    for key in ("matchExpressions", "matchFields"):
        requirements = []
        for i, item in enumerate(f.sequence(doc.get(key), f"{field}.{key}")):
            path = f"{field}.{key}[{i}]"
            req = f.mapping(item, path)
            values = [
                f.string(v, f"{path}.values[{j}]", required=True)
                for j, v in enumerate(f.sequence(req.get("values"), f"{path}.values"))
            ]
            requirements.append(
                k8s.NodeSelectorRequirement(
                    key=f.string(req.get("key"), f"{path}.key", required=True),
                    operator=f.choice(
                        req.get("operator"), f"{path}.operator", {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}
                    ),
                    values=values,
                )
            )
        lists[key] = requirements
    return k8s.NodeSelectorTerm(match_expressions=lists["matchExpressions"], match_fields=lists["matchFields"])


def _node_affinity(f: Fields, spec: Mapping[str, Any]) -> k8s.NodeAffinity | None:
    affinity = f.mapping(spec.get("affinity"), "spec.affinity")
    if affinity.get("nodeAffinity") is None:
        return None
    base = "spec.affinity.nodeAffinity"
    node_affinity = f.mapping(affinity["nodeAffinity"], base)
    required = None
    if node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") is not None:
        field = f"{base}.requiredDuringSchedulingIgnoredDuringExecution"
        selector = f.mapping(node_affinity[field.rsplit(".", 1)[1]], field)
        terms = f.sequence(selector.get("nodeSelectorTerms"), f"{field}.nodeSelectorTerms")
        required = [_selector_term(f, t, f"{field}.nodeSelectorTerms[{i}]") for i, t in enumerate(terms)]
    preferred = []
    field = f"{base}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, item in enumerate(f.sequence(node_affinity.get(field.rsplit(".", 1)[1]), field)):
        entry = f.mapping(item, f"{field}[{i}]")
        weight = f.integer(entry.get("weight"), f"{field}[{i}].weight", minimum=1)
        if weight is None or weight > 100:
            f.fail(f"{field}[{i}].weight", f"expected an integer from 1 to 100, got {describe(weight)}")
        preferred.append(
            k8s.PreferredSchedulingTerm(
                weight=weight, preference=_selector_term(f, entry.get("preference"), f"{field}[{i}].preference")
            )
        )
    return k8s.NodeAffinity(required=required, preferred=preferred)


def _label_selector(f: Fields, value: Any, field: str) -> k8s.LabelSelector | None:
    if value is None:
        return None
    doc = f.mapping(value, field)
    expressions = []
    for i, item in enumerate(f.sequence(doc.get("matchExpressions"), f"{field}.matchExpressions")):
        path = f"{field}.matchExpressions[{i}]"
        req = f.mapping(item, path)
        operator = f.choice(req.get("operator"), f"{path}.operator", {"In", "NotIn", "Exists", "DoesNotExist"})
        values = [f.string(v, f"{path}.values[{j}]") for j, v in enumerate(f.sequence(req.get("values"),
                                                                                      f"{path}.values"))]
        if operator in ("In", "NotIn") and not values:
            f.fail(f"{path}.values", f"must not be empty for operator {operator}")
        if operator in ("Exists", "DoesNotExist") and values:
            f.fail(f"{path}.values", f"must be empty for operator {operator}")
        expressions.append(k8s.LabelSelectorRequirement(f.string(req.get("key"), f"{path}.key", required=True),
                                                        operator, values))
    return k8s.LabelSelector(f.str_map(doc.get("matchLabels"), f"{field}.matchLabels"), expressions)


def _pod_affinity_term(f: Fields, value: Any, field: str) -> k8s.PodAffinityTerm:
    doc = f.mapping(value, field)
    namespaces = [f.string(v, f"{field}.namespaces[{j}]")
                  for j, v in enumerate(f.sequence(doc.get("namespaces"), f"{field}.namespaces"))]
    return k8s.PodAffinityTerm(
        label_selector=_label_selector(f, doc.get("labelSelector"), f"{field}.labelSelector"),
        topology_key=f.string(doc.get("topologyKey"), f"{field}.topologyKey", required=True),
        namespaces=namespaces,
        namespace_selector=_label_selector(f, doc.get("namespaceSelector"), f"{field}.namespaceSelector"),
    )


def _pod_affinity(f: Fields, spec: Mapping[str, Any], kind: str) -> k8s.PodAffinity | None:
    affinity = f.mapping(spec.get("affinity"), "spec.affinity")
    if affinity.get(kind) is None:
        return None
    base = f"spec.affinity.{kind}"
    doc = f.mapping(affinity[kind], base)
    field = f"{base}.requiredDuringSchedulingIgnoredDuringExecution"
    required = [_pod_affinity_term(f, t, f"{field}[{i}]")
                for i, t in enumerate(f.sequence(doc.get(field.rsplit(".", 1)[1]), field))]
    preferred = []
    field = f"{base}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, item in enumerate(f.sequence(doc.get(field.rsplit(".", 1)[1]), field)):
        entry = f.mapping(item, f"{field}[{i}]")
        weight = f.integer(entry.get("weight"), f"{field}[{i}].weight", minimum=1)
        if weight is None or weight > 100:
            f.fail(f"{field}[{i}].weight", f"expected an integer from 1 to 100, got {describe(weight)}")
        preferred.append(k8s.WeightedPodAffinityTerm(
            weight, _pod_affinity_term(f, entry.get("podAffinityTerm"), f"{field}[{i}].podAffinityTerm")))
    return k8s.PodAffinity(required=required, preferred=preferred)


def _spread_constraints(f: Fields, spec: Mapping[str, Any], labels: dict[str, str]
                        ) -> list[k8s.TopologySpreadConstraint]:
    """spec.topologySpreadConstraints, validated as the API server does; matchLabelKeys are merged into the
    label selector (key In [the pod's value]) as the API server does at creation (k8s 1.34+), so the
    scheduler reads the selector alone."""
    result = []
    base = "spec.topologySpreadConstraints"
    for i, item in enumerate(f.sequence(spec.get("topologySpreadConstraints"), base)):
        field = f"{base}[{i}]"
        doc = f.mapping(item, field)
        max_skew = f.integer(doc.get("maxSkew"), f"{field}.maxSkew", minimum=1)
        if max_skew is None:
            f.fail(f"{field}.maxSkew", "required (an integer of at least 1)")
        when = f.choice(doc.get("whenUnsatisfiable"), f"{field}.whenUnsatisfiable", {"DoNotSchedule", "ScheduleAnyway"})
        min_domains = f.integer(doc.get("minDomains"), f"{field}.minDomains", minimum=1)
        if min_domains is not None and when != "DoNotSchedule":
            f.fail(f"{field}.minDomains", "may only be set with whenUnsatisfiable DoNotSchedule")
        selector = _label_selector(f, doc.get("labelSelector"), f"{field}.labelSelector")
        keys = [f.string(k, f"{field}.matchLabelKeys[{j}]", required=True)
                for j, k in enumerate(f.sequence(doc.get("matchLabelKeys"), f"{field}.matchLabelKeys"))]
        if keys and selector is None:
            f.fail(f"{field}.matchLabelKeys", "needs a labelSelector")
        if selector is not None:
            for key in keys:
                if key in selector.match_labels or any(r.key == key for r in selector.match_expressions):
                    f.fail(f"{field}.matchLabelKeys", f"key {key!r} is also in the labelSelector")
                if key in labels:
                    selector.match_expressions.append(k8s.LabelSelectorRequirement(key, "In", [labels[key]]))
        result.append(k8s.TopologySpreadConstraint(
            max_skew=max_skew, topology_key=f.string(doc.get("topologyKey"), f"{field}.topologyKey", required=True),
            when_unsatisfiable=when, label_selector=selector, min_domains=min_domains or 1,
            node_affinity_policy=f.choice(doc.get("nodeAffinityPolicy"), f"{field}.nodeAffinityPolicy",
                                          {"Honor", "Ignore"}, default="Honor"),
            node_taints_policy=f.choice(doc.get("nodeTaintsPolicy"), f"{field}.nodeTaintsPolicy",
                                        {"Honor", "Ignore"}, default="Ignore"),
            match_label_keys=keys))
    return result


def _tolerations(f: Fields, spec: Mapping[str, Any]) -> list[k8s.Toleration]:
    result = []
    for i, item in enumerate(f.sequence(spec.get("tolerations"), "spec.tolerations")):
        field = f"spec.tolerations[{i}]"
        doc = f.mapping(item, field)
        f.integer(doc.get("tolerationSeconds"), f"{field}.tolerationSeconds", bits=None)
        result.append(
            k8s.Toleration(
                key=f.string(doc.get("key"), f"{field}.key"),
                operator=f.choice(doc.get("operator"), f"{field}.operator", {"Equal", "Exists"}, default="Equal"),
                value=f.string(doc.get("value"), f"{field}.value"),
                effect=f.choice(
                    doc.get("effect"), f"{field}.effect", {"", "NoSchedule", "PreferNoSchedule", "NoExecute"}
                ),
            )
        )
    return result


def _read_pod(f: Fields, doc: Mapping[str, Any], name: str, ns: str, uid: str, out: k8s.ClusterObjects) -> None:
    meta = f.mapping(doc.get("metadata"), "metadata")
    spec = f.mapping(doc.get("spec"), "spec")
    status = f.mapping(doc.get("status"), "status")
    gates = []
    for i, item in enumerate(f.sequence(spec.get("schedulingGates"), "spec.schedulingGates")):
        gates.append(
            f.string(
                f.mapping(item, f"spec.schedulingGates[{i}]").get("name"),
                f"spec.schedulingGates[{i}].name",
                required=True,
            )
        )
    volumes, inline_volumes = _pod_volumes(f, spec)
    if spec.get("os") is not None:  # validated as the API server does, then not read (see the schema)
        f.choice(f.mapping(spec["os"], "spec.os").get("name"), "spec.os.name", {"linux", "windows"})
    containers = [_container(f, c, f"spec.containers[{i}]", init=False)
                  for i, c in enumerate(f.sequence(spec.get("containers"), "spec.containers"))]
    init_containers = [_container(f, c, f"spec.initContainers[{i}]", init=True)
                       for i, c in enumerate(f.sequence(spec.get("initContainers"), "spec.initContainers"))]
    status_resources, allocated_resources = resize_status.read_resize_status(f, status, containers, init_containers)
    pod = k8s.Pod(
        name=name,
        raw=k8s.RawDocument(copy_document(doc)),
        namespace=ns,
        uid=uid,
        **_meta(f, doc),
        deletion_timestamp=f.timestamp(meta.get("deletionTimestamp"), "metadata.deletionTimestamp"),
        node_name=f.string(spec.get("nodeName"), "spec.nodeName"),
        containers=containers,
        init_containers=init_containers,
        overhead=f.resources(spec.get("overhead"), "spec.overhead"),
        resources=pod_resources.read_pod_resources(f, spec, containers, init_containers),
        status_resources=status_resources,
        allocated_resources=allocated_resources,
        priority=f.integer(spec.get("priority"), "spec.priority"),
        priority_class_name=f.string(spec.get("priorityClassName"), "spec.priorityClassName"),
        preemption_policy=f.choice(
            spec.get("preemptionPolicy"), "spec.preemptionPolicy", {"", "PreemptLowerPriority", "Never"}
        ),
        node_selector=f.str_map(spec.get("nodeSelector"), "spec.nodeSelector"),
        node_affinity=_node_affinity(f, spec),
        pod_affinity=_pod_affinity(f, spec, "podAffinity"),
        pod_anti_affinity=_pod_affinity(f, spec, "podAntiAffinity"),
        tolerations=_tolerations(f, spec),
        topology_spread_constraints=_spread_constraints(f, spec, _meta(f, doc).get("labels") or {}),
        scheduler_name=f.string(spec.get("schedulerName"), "spec.schedulerName", default=k8s.DEFAULT_SCHEDULER_NAME),
        scheduling_gates=gates,
        phase=f.string(status.get("phase"), "status.phase", default="Pending"),
        start_time=f.timestamp(status.get("startTime"), "status.startTime") or "",
        nominated_node_name=f.string(status.get("nominatedNodeName"), "status.nominatedNodeName"),
        qos_class=f.choice(status.get("qosClass"), "status.qosClass", {"", "Guaranteed", "Burstable", "BestEffort"}),
        conditions=[
            _condition(f, c, f"status.conditions[{i}]")
            for i, c in enumerate(f.sequence(status.get("conditions"), "status.conditions"))
        ],
        volumes=volumes,
        inline_volumes=inline_volumes,
        resource_claims=dra_objects.pod_resource_claims(f, spec),
        resource_claim_statuses=dra_objects.pod_claim_statuses(f, status),
        controller_ref=workload_objects.controller_ref(f, meta),
    )
    out.pods.append(pod)


def _pod_volumes(f: Fields, spec: Mapping[str, Any]) -> tuple[list[k8s.PodVolume], list[k8s.InlineVolume]]:
    """spec.volumes[] backed by a claim (persistentVolumeClaim, or a generic ephemeral volume: its template's
    presence), and those with an in-tree source CSI migration knows; the other sources are checked for a name
    and dropped."""
    volumes: list[k8s.PodVolume] = []
    inline: list[k8s.InlineVolume] = []
    for i, item in enumerate(f.sequence(spec.get("volumes"), "spec.volumes")):
        field = f"spec.volumes[{i}]"
        doc = f.mapping(item, field)
        name = f.string(doc.get("name"), f"{field}.name", required=True)
        in_tree = in_tree_volumes.read_in_tree(f, doc, field, ["persistentVolumeClaim", "ephemeral",
                                                               *_PLAIN_VOLUME_SOURCES])
        if in_tree is not None:
            inline.append(k8s.InlineVolume(name, in_tree, position=len(volumes)))
            continue
        if doc.get("ephemeral") is not None:
            if doc.get("persistentVolumeClaim") is not None:
                f.fail(f"{field}.ephemeral", "a volume has one source: persistentVolumeClaim is set as well")
            ephemeral = f.mapping(doc["ephemeral"], f"{field}.ephemeral")
            template_field = f"{field}.ephemeral.volumeClaimTemplate"
            if ephemeral.get("volumeClaimTemplate") is None:
                f.fail(template_field, "missing (the API requires the claim template)")
            template = f.mapping(ephemeral["volumeClaimTemplate"], template_field)
            if template.get("spec") is None:
                f.fail(f"{template_field}.spec", "missing (the API requires the claim's spec)")
            volumes.append(k8s.PodVolume(name, ephemeral=True,
                                         claim_template=_claim_template(f, template, template_field)))
            continue
        if doc.get("persistentVolumeClaim") is None:
            continue
        claim = f.mapping(doc["persistentVolumeClaim"], f"{field}.persistentVolumeClaim")
        f.boolean(claim.get("readOnly"), f"{field}.persistentVolumeClaim.readOnly")
        volumes.append(k8s.PodVolume(name, f.string(claim.get("claimName"),
                                                    f"{field}.persistentVolumeClaim.claimName", required=True)))
    return volumes, inline


def _read_pod_group(f: Fields, doc: Mapping[str, Any], name: str, ns: str, uid: str, out: k8s.ClusterObjects) -> None:
    spec = f.mapping(doc.get("spec"), "spec")
    status = f.mapping(doc.get("status"), "status")
    min_task_member = {
        role: f.integer(n, f"spec.minTaskMember.{role}", minimum=0)
        for role, n in f.mapping(spec.get("minTaskMember"), "spec.minTaskMember").items()
    }
    conditions = []
    for i, item in enumerate(f.sequence(status.get("conditions"), "status.conditions")):
        field = f"status.conditions[{i}]"
        cond = _condition(f, item, field)
        transition = f.string(f.mapping(item, field).get("transitionID"), f"{field}.transitionID")
        conditions.append(
            k8s.PodGroupCondition(
                type=cond.type, status=cond.status, transition_id=transition, reason=cond.reason, message=cond.message
            )
        )
    out.pod_groups.append(
        k8s.PodGroup(
            name=name,
            raw=k8s.RawDocument(copy_document(doc)),
            namespace=ns,
            uid=uid,
            **_meta(f, doc),
            min_member=f.integer(spec.get("minMember"), "spec.minMember", default=0, minimum=0),
            min_task_member=min_task_member,
            min_resources=(
                None if spec.get("minResources") is None else f.resources(spec["minResources"], "spec.minResources")
            ),
            queue=f.string(spec.get("queue"), "spec.queue", default="default"),
            priority_class_name=f.string(spec.get("priorityClassName"), "spec.priorityClassName"),
            phase=f.string(status.get("phase"), "status.phase"),
            conditions=conditions,
            network_topology=_network_topology(f, spec.get("networkTopology"), "spec.networkTopology"),
            sub_group_policy=[_sub_group_policy(f, item, f"spec.subGroupPolicy[{i}]")
                              for i, item in enumerate(f.sequence(spec.get("subGroupPolicy"), "spec.subGroupPolicy"))],
        )
    )


def _sub_group_policy(f: Fields, value: Any, field: str) -> k8s.SubGroupPolicy:
    doc = f.mapping(value, field)
    return k8s.SubGroupPolicy(
        name=f.string(doc.get("name"), f"{field}.name", required=True),
        sub_group_size=f.integer(doc.get("subGroupSize"), f"{field}.subGroupSize", minimum=0),
        min_sub_groups=f.integer(doc.get("minSubGroups"), f"{field}.minSubGroups", minimum=0),
        label_selector=_label_selector(f, doc.get("labelSelector"), f"{field}.labelSelector"),
        match_label_keys=[f.string(k, f"{field}.matchLabelKeys[{j}]", required=True)
                          for j, k in enumerate(f.sequence(doc.get("matchLabelKeys"), f"{field}.matchLabelKeys"))],
        network_topology=_network_topology(f, doc.get("networkTopology"), f"{field}.networkTopology"),
    )


def _network_topology(f: Fields, value: Any, field: str) -> k8s.NetworkTopology | None:
    if value is None:
        return None
    doc = f.mapping(value, field)
    return k8s.NetworkTopology(
        mode=f.choice(doc.get("mode"), f"{field}.mode", {"hard", "soft"}, default="hard"),
        highest_tier_allowed=f.integer(doc.get("highestTierAllowed"), f"{field}.highestTierAllowed", minimum=0),
        highest_tier_name=f.string(doc.get("highestTierName"), f"{field}.highestTierName"),
    )


def _read_hyper_node(f: Fields, doc: Mapping[str, Any], name: str, _ns: str, _uid: str,
                     out: k8s.ClusterObjects) -> None:
    spec = f.mapping(doc.get("spec"), "spec")
    members = []
    for i, item in enumerate(f.sequence(spec.get("members"), "spec.members")):
        field = f"spec.members[{i}]"
        member = f.mapping(item, field)
        kind = f.choice(member.get("type"), f"{field}.type", {"Node", "HyperNode"})
        selector = f.mapping(member.get("selector"), f"{field}.selector")
        given = [key for key in ("exactMatch", "regexMatch", "labelMatch") if selector.get(key) is not None]
        if len(given) != 1:
            f.fail(f"{field}.selector", f"expected exactly one of exactMatch, regexMatch, labelMatch, got "
                                        f"{', '.join(given) or 'none'}")
        if kind == "HyperNode" and given[0] != "exactMatch":
            f.fail(f"{field}.selector", f"a HyperNode member is named by exactMatch only, got {given[0]}")
        exact = f.mapping(selector.get("exactMatch"), f"{field}.selector.exactMatch")
        regex = f.mapping(selector.get("regexMatch"), f"{field}.selector.regexMatch")
        pattern = f.string(regex.get("pattern"), f"{field}.selector.regexMatch.pattern")
        if pattern:
            try:
                re.compile(pattern)
            except re.error as err:
                f.fail(f"{field}.selector.regexMatch.pattern", f"not a regular expression ({err})")
        members.append(k8s.HyperNodeMember(
            type=kind, exact=f.string(exact.get("name"), f"{field}.selector.exactMatch.name"), regex=pattern,
            labels=_label_selector(f, selector.get("labelMatch"), f"{field}.selector.labelMatch")))
    tier = f.integer(spec.get("tier"), "spec.tier", minimum=0)
    if tier is None:
        f.fail("spec.tier", "missing")
    out.hyper_nodes.append(k8s.HyperNode(name=name, tier=tier, tier_name=f.string(spec.get("tierName"), "spec.tierName"),
                                         members=members))


def _read_queue(f: Fields, doc: Mapping[str, Any], name: str, _ns: str, uid: str, out: k8s.ClusterObjects) -> None:
    spec = f.mapping(doc.get("spec"), "spec")
    status = f.mapping(doc.get("status"), "status")
    weight = f.integer(spec.get("weight"), "spec.weight", default=1, minimum=0)
    guarantee = f.mapping(spec.get("guarantee"), "spec.guarantee")
    meta = _meta(f, doc)
    meta.pop("labels")
    out.queues.append(
        k8s.Queue(
            name=name,
            raw=k8s.RawDocument(copy_document(doc)),
            uid=uid,
            **meta,
            weight=weight or 1,  # upstream's admission webhook turns 0 into 1
            capability=f.resources(spec.get("capability"), "spec.capability"),
            guarantee=f.resources(guarantee.get("resource"), "spec.guarantee.resource"),
            deserved=f.resources(spec.get("deserved"), "spec.deserved"),
            reclaimable=f.boolean(spec.get("reclaimable"), "spec.reclaimable"),
            priority=f.integer(spec.get("priority"), "spec.priority", default=0),
            parent=f.string(spec.get("parent"), "spec.parent"),
            state=f.choice(
                status.get("state"), "status.state", {"Open", "Closed", "Closing", "Unknown"}, default="Open"
            ),
            affinity=_queue_affinity(f, spec.get("affinity")),
        )
    )


def _queue_affinity(f: Fields, value: Any) -> k8s.QueueAffinity | None:
    """spec.affinity: absent (or null) stays None, as a nil pointer upstream; {} is an affinity of its own."""
    if value is None:
        return None
    doc = f.mapping(value, "spec.affinity")
    return k8s.QueueAffinity(_node_group_terms(f, doc.get("nodeGroupAffinity"), "spec.affinity.nodeGroupAffinity"),
                             _node_group_terms(f, doc.get("nodeGroupAntiAffinity"),
                                               "spec.affinity.nodeGroupAntiAffinity"))


def _node_group_terms(f: Fields, value: Any, field: str) -> k8s.NodeGroupTerms | None:
    if value is None:
        return None
    doc = f.mapping(value, field)
    lists = []
    for key in ("requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"):
        path = f"{field}.{key}"
        lists.append([f.string(v, f"{path}[{i}]") for i, v in enumerate(f.sequence(doc.get(key), path))])
    return k8s.NodeGroupTerms(required=lists[0], preferred=lists[1])


def _read_priority_class(
    f: Fields, doc: Mapping[str, Any], name: str, _ns: str, _uid: str, out: k8s.ClusterObjects
) -> None:
    value = f.integer(doc.get("value"), "value")
    if value is None:
        f.fail("value", "missing")
    f.string(doc.get("description"), "description")
    out.priority_classes.append(
        k8s.PriorityClass(
            name=name,
            value=value,
            preemption_policy=f.choice(
                doc.get("preemptionPolicy"),
                "preemptionPolicy",
                {"PreemptLowerPriority", "Never"},
                default="PreemptLowerPriority",
            ),
            global_default=f.boolean(doc.get("globalDefault"), "globalDefault", False),
        )
    )


def _read_resource_quota(
    f: Fields, doc: Mapping[str, Any], name: str, ns: str, _uid: str, out: k8s.ClusterObjects
) -> None:
    spec = f.mapping(doc.get("spec"), "spec")
    status = f.mapping(doc.get("status"), "status")
    # The scheduler reads status.hard (the quota controller copies spec.hard there); fall back to spec.
    hard = f.resources(status.get("hard"), "status.hard") if status.get("hard") is not None else None
    out.resource_quotas.append(
        k8s.ResourceQuota(
            name=name,
            namespace=ns,
            hard=hard if hard is not None else f.resources(spec.get("hard"), "spec.hard"),
            used=f.resources(status.get("used"), "status.used"),
        )
    )


def _read_pod_disruption_budget(f: Fields, doc: Mapping[str, Any], name: str, ns: str, _uid: str,
                                 out: k8s.ClusterObjects) -> None:
    spec = f.mapping(doc.get("spec"), "spec")
    status = f.mapping(doc.get("status"), "status")
    for key in ("minAvailable", "maxUnavailable"):  # an int or a percentage, validated, not used
        value = spec.get(key)
        if value is not None and not (isinstance(value, int) and not isinstance(value, bool) and value >= 0) \
                and not (isinstance(value, str) and (value.rstrip("%").isdigit())):
            f.fail(f"spec.{key}", f"expected a non-negative integer or a percentage, got {describe(value)}")
    disrupted = f.mapping(status.get("disruptedPods"), "status.disruptedPods")
    out.pod_disruption_budgets.append(k8s.PodDisruptionBudget(
        name=name, namespace=ns, selector=_label_selector(f, spec.get("selector"), "spec.selector"),
        disruptions_allowed=f.integer(status.get("disruptionsAllowed"), "status.disruptionsAllowed", default=0,
                                      minimum=0) or 0,
        disrupted_pods=sorted(str(k) for k in disrupted)))


def _names(f: Fields, value: Any, field: str) -> list[str]:
    return [f.string(item, f"{field}[{i}]", required=True) for i, item in enumerate(f.sequence(value, field))]


def _read_node_shard(f: Fields, doc: Mapping[str, Any], name: str, _ns: str, _uid: str,
                     out: k8s.ClusterObjects) -> None:
    spec = f.mapping(doc.get("spec"), "spec")
    status = f.mapping(doc.get("status"), "status")
    for key in ("nodesToRemove", "nodesToAdd"):  # upstream recomputes both from desired and in-use
        _names(f, status.get(key), f"status.{key}")
    out.node_shards.append(k8s.NodeShard(name=name, nodes_desired=_names(f, spec.get("nodesDesired"), "spec.nodesDesired"),
                                         nodes_in_use=_names(f, status.get("nodesInUse"), "status.nodesInUse")))


# ---------------------------------------------------------------- storage


_ACCESS_MODES = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"}
_VOLUME_MODES = {"Filesystem", "Block"}


def _access_modes(f: Fields, value: Any, field: str) -> list[str]:
    return [f.choice(v, f"{field}[{i}]", _ACCESS_MODES) for i, v in enumerate(f.sequence(value, field))]


def _storage(f: Fields, value: Any, field: str) -> Any:
    """The `storage` entry of a resource list (None when absent)."""
    return f.resources(value, field).get("storage")


def _read_persistent_volume(f: Fields, doc: Mapping[str, Any], name: str, _ns: str, uid: str,
                            out: k8s.ClusterObjects) -> None:
    meta = f.mapping(doc.get("metadata"), "metadata")
    spec = f.mapping(doc.get("spec"), "spec")
    status = f.mapping(doc.get("status"), "status")
    csi = f.mapping(spec.get("csi"), "spec.csi")
    out.persistent_volumes.append(k8s.PersistentVolume(
        name=name, uid=uid,
        labels=f.str_map(meta.get("labels"), "metadata.labels"),
        annotations=f.str_map(meta.get("annotations"), "metadata.annotations"),
        deletion_timestamp=f.timestamp(meta.get("deletionTimestamp"), "metadata.deletionTimestamp"),
        capacity=_storage(f, spec.get("capacity"), "spec.capacity"),
        access_modes=_access_modes(f, spec.get("accessModes"), "spec.accessModes"),
        volume_mode=f.choice(spec.get("volumeMode"), "spec.volumeMode", _VOLUME_MODES, default="Filesystem"),
        storage_class_name=f.string(spec.get("storageClassName"), "spec.storageClassName"),
        volume_attributes_class_name=f.string(spec.get("volumeAttributesClassName"), "spec.volumeAttributesClassName"),
        claim_ref=_claim_ref(f, spec.get("claimRef")),
        node_affinity=_pv_node_affinity(f, spec.get("nodeAffinity")),
        csi_driver=f.string(csi.get("driver"), "spec.csi.driver", required=bool(csi)),
        csi_volume_handle=f.string(csi.get("volumeHandle"), "spec.csi.volumeHandle"),
        in_tree=in_tree_volumes.read_in_tree(f, spec, "spec", ["csi", "local", "hostPath", "nfs"]),
        # a PV the controller has not yet seen is Pending; one given without a status is taken as Available
        phase=f.choice(status.get("phase"), "status.phase", {"Pending", "Available", "Bound", "Released", "Failed"},
                       default="Available"),
    ))


def _claim_ref(f: Fields, value: Any) -> k8s.ClaimReference | None:
    if value is None:
        return None
    ref = f.mapping(value, "spec.claimRef")
    return k8s.ClaimReference(namespace=f.string(ref.get("namespace"), "spec.claimRef.namespace", default="default"),
                              name=f.string(ref.get("name"), "spec.claimRef.name", required=True),
                              uid=f.string(ref.get("uid"), "spec.claimRef.uid"))


def _pv_node_affinity(f: Fields, value: Any) -> list[k8s.NodeSelectorTerm] | None:
    """spec.nodeAffinity.required's terms; None when there is no required selector."""
    affinity = f.mapping(value, "spec.nodeAffinity")
    if affinity.get("required") is None:
        return None
    field = "spec.nodeAffinity.required"
    required = f.mapping(affinity["required"], field)
    return [_selector_term(f, t, f"{field}.nodeSelectorTerms[{i}]")
            for i, t in enumerate(f.sequence(required.get("nodeSelectorTerms"), f"{field}.nodeSelectorTerms"))]


class _Within(Fields):
    """Fields of an object nested in another (a claim template in a pod): failures name the whole path."""

    def __init__(self, outer: Fields, prefix: str) -> None:
        super().__init__(outer.file, outer.obj)
        self.prefix = prefix

    def fail(self, field: str, reason: str) -> NoReturn:
        super().fail(f"{self.prefix}.{field}", reason)


def _claim_template(f: Fields, template: Mapping[str, Any], field: str) -> k8s.PersistentVolumeClaim:
    """An ephemeral volume's volumeClaimTemplate read as the claim the controller makes of it (metadata
    labels and annotations, the spec; no status)."""
    meta = f.mapping(template.get("metadata"), f"{field}.metadata")
    doc = {"metadata": {k: meta[k] for k in ("labels", "annotations") if k in meta}, "spec": template["spec"]}
    out = k8s.ClusterObjects()
    _read_persistent_volume_claim(_Within(f, field), doc, "", "", "", out)
    return out.persistent_volume_claims[0]


def _read_persistent_volume_claim(f: Fields, doc: Mapping[str, Any], name: str, ns: str, uid: str,
                                  out: k8s.ClusterObjects) -> None:
    meta = f.mapping(doc.get("metadata"), "metadata")
    spec = f.mapping(doc.get("spec"), "spec")
    status = f.mapping(doc.get("status"), "status")
    resources = f.mapping(spec.get("resources"), "spec.resources")
    class_name = None  # unset differs from "" (no class at all) only for the DefaultStorageClass admission
    if spec.get("storageClassName") is not None:
        class_name = f.string(spec["storageClassName"], "spec.storageClassName")
    out.persistent_volume_claims.append(k8s.PersistentVolumeClaim(
        name=name, namespace=ns, uid=uid,
        labels=f.str_map(meta.get("labels"), "metadata.labels"),
        annotations=f.str_map(meta.get("annotations"), "metadata.annotations"),
        deletion_timestamp=f.timestamp(meta.get("deletionTimestamp"), "metadata.deletionTimestamp"),
        access_modes=_access_modes(f, spec.get("accessModes"), "spec.accessModes"),
        request=_storage(f, resources.get("requests"), "spec.resources.requests"),
        storage_class_name=class_name,
        volume_attributes_class_name=f.string(spec.get("volumeAttributesClassName"), "spec.volumeAttributesClassName"),
        volume_name=f.string(spec.get("volumeName"), "spec.volumeName"),
        volume_mode=f.choice(spec.get("volumeMode"), "spec.volumeMode", _VOLUME_MODES, default="Filesystem"),
        selector=_label_selector(f, spec.get("selector"), "spec.selector"),
        phase=f.choice(status.get("phase"), "status.phase", {"Pending", "Bound", "Lost"}, default="Pending"),
        controller_uid=dra_objects.controller_uid(f, meta),
    ))


def _read_storage_class(f: Fields, doc: Mapping[str, Any], name: str, _ns: str, _uid: str,
                        out: k8s.ClusterObjects) -> None:
    out.storage_classes.append(k8s.StorageClass(
        name=name,
        provisioner=f.string(doc.get("provisioner"), "provisioner", required=True),
        # the API server defaults an unset mode to Immediate
        volume_binding_mode=f.choice(doc.get("volumeBindingMode"), "volumeBindingMode",
                                     {"Immediate", "WaitForFirstConsumer"}, default="Immediate"),
        allowed_topologies=[_topology_term(f, item, f"allowedTopologies[{i}]")
                            for i, item in enumerate(f.sequence(doc.get("allowedTopologies"), "allowedTopologies"))],
        parameters=f.str_map(doc.get("parameters"), "parameters"),
    ))


def _topology_term(f: Fields, value: Any, field: str) -> list[k8s.TopologySelectorRequirement]:
    term = f.mapping(value, field)
    field += ".matchLabelExpressions"
    requirements = []
    for i, item in enumerate(f.sequence(term.get("matchLabelExpressions"), field)):
        req = f.mapping(item, f"{field}[{i}]")
        values = [f.string(v, f"{field}[{i}].values[{j}]", required=True)
                  for j, v in enumerate(f.sequence(req.get("values"), f"{field}[{i}].values"))]
        requirements.append(k8s.TopologySelectorRequirement(
            f.string(req.get("key"), f"{field}[{i}].key", required=True), values))
    return requirements


def _read_csi_node(f: Fields, doc: Mapping[str, Any], name: str, _ns: str, _uid: str, out: k8s.ClusterObjects) -> None:
    meta = f.mapping(doc.get("metadata"), "metadata")
    spec = f.mapping(doc.get("spec"), "spec")
    drivers = []
    for i, item in enumerate(f.sequence(spec.get("drivers"), "spec.drivers")):
        field = f"spec.drivers[{i}]"
        driver = f.mapping(item, field)
        allocatable = f.mapping(driver.get("allocatable"), f"{field}.allocatable")
        drivers.append(k8s.CSINodeDriver(
            f.string(driver.get("name"), f"{field}.name", required=True),
            f.integer(allocatable.get("count"), f"{field}.allocatable.count", minimum=0)))
    out.csi_nodes.append(k8s.CSINode(name=name, annotations=f.str_map(meta.get("annotations"), "metadata.annotations"),
                                     drivers=drivers))


def _read_volume_attachment(f: Fields, doc: Mapping[str, Any], name: str, _ns: str, _uid: str,
                            out: k8s.ClusterObjects) -> None:
    spec = f.mapping(doc.get("spec"), "spec")
    source = f.mapping(spec.get("source"), "spec.source")
    out.volume_attachments.append(k8s.VolumeAttachment(
        name=name, attacher=f.string(spec.get("attacher"), "spec.attacher", required=True),
        node_name=f.string(spec.get("nodeName"), "spec.nodeName", required=True),
        persistent_volume_name=f.string(source.get("persistentVolumeName"), "spec.source.persistentVolumeName")))


_READERS: dict[str, Callable[[Fields, Mapping[str, Any], str, str, str, k8s.ClusterObjects], None]] = {
    "Node": _read_node,
    "Pod": _read_pod,
    "PodGroup": _read_pod_group,
    "Queue": _read_queue,
    "PriorityClass": _read_priority_class,
    "ResourceQuota": _read_resource_quota,
    "PodDisruptionBudget": _read_pod_disruption_budget,
    "NodeShard": _read_node_shard,
    "HyperNode": _read_hyper_node,
    "PersistentVolume": _read_persistent_volume,
    "PersistentVolumeClaim": _read_persistent_volume_claim,
    "StorageClass": _read_storage_class,
    "CSINode": _read_csi_node,
    "VolumeAttachment": _read_volume_attachment,
    "DeviceClass": dra_objects.read_device_class,
    "ResourceSlice": dra_objects.slice_reader(_selector_term),
    "ResourceClaim": dra_objects.claim_reader(_selector_term),
    "DeviceTaintRule": dra_objects.read_device_taint_rule,
    "Numatopology": numa_objects.read_numatopology,
    "ConfigMap": device_config.read_config_map,
    "Service": workload_objects.read_service,
    "ReplicationController": workload_objects.read_replication_controller,
    "ReplicaSet": workload_objects.workload_reader("ReplicaSet", _label_selector),
    "StatefulSet": workload_objects.workload_reader("StatefulSet", _label_selector),
}

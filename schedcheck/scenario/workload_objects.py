"""Read the kinds whose selectors make PodTopologySpread's system default constraints (k8s
helper.DefaultSelector): v1 Service and ReplicationController, apps/v1 ReplicaSet and StatefulSet, and a
pod's controller reference; objects.py registers the readers and schemas here.

Read: spec.selector only (a Service's and a ReplicationController's a label map, a ReplicaSet's and a
StatefulSet's a LabelSelector), and a ReplicationController's pod template labels, to default its selector.
The other spec fields of these kinds (ports, replicas, the pod template, ...) and their status are the
controllers' business: named in the schemas, so a dump reads without a warning, and not read. As the API
server validates them: a ReplicaSet's and a StatefulSet's selector is required and not empty, a
ReplicationController's is not empty once the API server's default has filled an empty one from
`spec.template.metadata.labels` (and, when the template has labels, selects them), a Service's is optional.
A pod's `metadata.ownerReferences` entry with `controller: true` gives its controller (apiVersion, kind and
name required; at most one such entry, as the API server allows).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from schedcheck.reference import k8s
from schedcheck.scenario.fields import Fields

LEAF = None
_META_KEYS = ["name", "namespace", "uid", "labels", "annotations", "creationTimestamp", "deletionTimestamp",
              "resourceVersion", "generation", "managedFields", "selfLink", "ownerReferences", "finalizers",
              "generateName", "deletionGracePeriodSeconds"]
_META = dict.fromkeys(_META_KEYS)
_LABEL_SELECTOR = {"matchLabels": LEAF, "matchExpressions": [dict.fromkeys(["key", "operator", "values"])]}
_SERVICE_SPEC = ["ports", "clusterIP", "clusterIPs", "type", "externalIPs", "sessionAffinity", "loadBalancerIP",
                 "loadBalancerSourceRanges", "externalName", "externalTrafficPolicy", "healthCheckNodePort",
                 "publishNotReadyAddresses", "sessionAffinityConfig", "ipFamilies", "ipFamilyPolicy",
                 "allocateLoadBalancerNodePorts", "loadBalancerClass", "internalTrafficPolicy",
                 "trafficDistribution"]
_REPLICA_SPEC = ["replicas", "minReadySeconds", "template"]
_STATEFUL_SPEC = ["replicas", "template", "volumeClaimTemplates", "serviceName", "podManagementPolicy",
                  "updateStrategy", "revisionHistoryLimit", "minReadySeconds",
                  "persistentVolumeClaimRetentionPolicy", "ordinals"]
API_VERSIONS = {"Service": "v1", "ReplicationController": "v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1"}
SCHEMAS: dict[str, Any] = {
    "Service": {"metadata": _META, "spec": {"selector": LEAF, **dict.fromkeys(_SERVICE_SPEC)}, "status": LEAF},
    "ReplicationController": {"metadata": _META, "spec": {"selector": LEAF, **dict.fromkeys(_REPLICA_SPEC)},
                              "status": LEAF},
    "ReplicaSet": {"metadata": _META, "spec": {"selector": _LABEL_SELECTOR, **dict.fromkeys(_REPLICA_SPEC)},
                   "status": LEAF},
    "StatefulSet": {"metadata": _META, "spec": {"selector": _LABEL_SELECTOR, **dict.fromkeys(_STATEFUL_SPEC)},
                    "status": LEAF},
}

LabelSelectorReader = Callable[[Fields, Any, str], "k8s.LabelSelector | None"]


def read_service(f: Fields, doc: Mapping[str, Any], name: str, ns: str, _uid: str,
                 out: k8s.ClusterObjects) -> None:
    spec = f.mapping(doc.get("spec"), "spec")
    selector = None if spec.get("selector") is None else f.str_map(spec["selector"], "spec.selector")
    out.services.append(k8s.Service(name, ns, selector))


def read_replication_controller(f: Fields, doc: Mapping[str, Any], name: str, ns: str, _uid: str,
                                out: k8s.ClusterObjects) -> None:
    spec = f.mapping(doc.get("spec"), "spec")
    selector = f.str_map(spec.get("selector"), "spec.selector")
    template = f.mapping(spec.get("template"), "spec.template")
    labels = f.str_map(f.mapping(template.get("metadata"), "spec.template.metadata").get("labels"),
                       "spec.template.metadata.labels")
    if not selector:  # SetDefaults_ReplicationController: an empty selector takes the template's labels
        selector = labels
    elif labels and any(labels.get(k) != v for k, v in selector.items()):
        f.fail("spec.selector", "does not select the pod template's labels (the API server refuses it)")
    if not selector:
        f.fail("spec.selector", "missing or empty, and no pod template labels to default it from (the API "
                                "server requires one)")
    out.replication_controllers.append(k8s.ReplicationController(name, ns, selector))


def workload_reader(kind: str, label_selector: LabelSelectorReader) -> Callable[..., None]:
    """The reader of a ReplicaSet or StatefulSet (`kind`), with objects.py's LabelSelector reader."""

    def read(f: Fields, doc: Mapping[str, Any], name: str, ns: str, _uid: str, out: k8s.ClusterObjects) -> None:
        spec = f.mapping(doc.get("spec"), "spec")
        selector = label_selector(f, spec.get("selector"), "spec.selector")
        if selector is None or (not selector.match_labels and not selector.match_expressions):
            f.fail("spec.selector", "missing or empty (the API server requires a selector that is not empty)")
        out.workload_controllers.append(k8s.WorkloadController(kind, name, ns, selector))

    return read


def controller_ref(f: Fields, meta: Mapping[str, Any]) -> k8s.ControllerReference | None:
    """metadata.ownerReferences' entry with `controller: true` (a pod's ReplicaSet, StatefulSet, ...)."""
    found = None
    for i, item in enumerate(f.sequence(meta.get("ownerReferences"), "metadata.ownerReferences")):
        field = f"metadata.ownerReferences[{i}]"
        ref = f.mapping(item, field)
        if not f.boolean(ref.get("controller"), f"{field}.controller"):
            continue
        if found is not None:
            f.fail(f"{field}.controller", "only one reference can have controller set to true")
        found = k8s.ControllerReference(f.string(ref.get("apiVersion"), f"{field}.apiVersion", required=True),
                                        f.string(ref.get("kind"), f"{field}.kind", required=True),
                                        f.string(ref.get("name"), f"{field}.name", required=True))
    return found


def documents(objects: k8s.ClusterObjects, label_selector: Callable[[k8s.LabelSelector], dict[str, Any]]
              ) -> list[dict[str, Any]]:
    """The Services, ReplicationControllers, ReplicaSets and StatefulSets as scenario documents (dump.py)."""
    out: list[dict[str, Any]] = []
    for service in objects.services:
        spec = {} if service.selector is None else {"selector": dict(service.selector)}
        out.append({"apiVersion": "v1", "kind": "Service",
                    "metadata": {"name": service.name, "namespace": service.namespace}, "spec": spec})
    for rc in objects.replication_controllers:
        out.append({"apiVersion": "v1", "kind": "ReplicationController",
                    "metadata": {"name": rc.name, "namespace": rc.namespace}, "spec": {"selector": dict(rc.selector)}})
    for workload in objects.workload_controllers:
        spec = {} if workload.selector is None else {"selector": label_selector(workload.selector)}
        out.append({"apiVersion": "apps/v1", "kind": workload.kind,
                    "metadata": {"name": workload.name, "namespace": workload.namespace}, "spec": spec})
    return out


def controller_ref_document(ref: k8s.ControllerReference) -> dict[str, Any]:
    return {"apiVersion": ref.api_version, "kind": ref.kind, "name": ref.name, "controller": True}

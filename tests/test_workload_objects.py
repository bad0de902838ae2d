"""Reading Services, ReplicationControllers, ReplicaSets, StatefulSets and a pod's controller reference (what
PodTopologySpread's system default constraints read), their errors, warnings and the dump round trip."""

from __future__ import annotations

from typing import Any

import pytest

from schedcheck.reference import k8s
from schedcheck.scenario.dump import objects_document
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.loader import scenario_from_document


def wrap(*objects: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "schedcheck/v1", "kind": "Scenario", "objects": list(objects)}


def obj(kind: str, spec: Any, api: str = "apps/v1", name: str = "w") -> dict[str, Any]:
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": "ns"}, "spec": spec}


def pod(*refs: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "web"}, "ownerReferences": list(refs)},
            "spec": {"containers": [{"name": "c"}]}}


RS_REF = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "w", "uid": "u1", "controller": True}
DOCS = [obj("Service", {"selector": {"app": "web"}, "ports": [{"port": 80}], "clusterIP": "10.0.0.1"}, "v1", "svc"),
        obj("Service", {"ports": [{"port": 443}]}, "v1", "bare"),
        obj("ReplicationController", {"selector": {"app": "web"}, "replicas": 2, "template": {}}, "v1", "rc"),
        obj("ReplicaSet", {"selector": {"matchLabels": {"app": "web"},
                                        "matchExpressions": [{"key": "tier", "operator": "Exists"}]},
                           "replicas": 3, "template": {"metadata": {"labels": {"app": "web"}}}}),
        obj("StatefulSet", {"selector": {"matchLabels": {"app": "db"}}, "serviceName": "db",
                            "volumeClaimTemplates": []}, name="db"),
        pod({"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u0"}, RS_REF)]


def test_every_kind_is_read_with_its_selector_and_the_pod_its_controller() -> None:
    scenario = scenario_from_document(wrap(*DOCS), "s.yaml")
    objects = scenario.objects
    assert objects.services == [k8s.Service("svc", "ns", {"app": "web"}), k8s.Service("bare", "ns", None)]
    assert objects.replication_controllers == [k8s.ReplicationController("rc", "ns", {"app": "web"})]
    rs, ss = objects.workload_controllers
    assert (rs.kind, rs.name, rs.selector.match_labels, rs.selector.match_expressions[0].operator) == \
        ("ReplicaSet", "w", {"app": "web"}, "Exists")
    assert (ss.kind, ss.namespace, ss.selector.match_labels) == ("StatefulSet", "ns", {"app": "db"})
    assert objects.pods[0].controller_ref == k8s.ControllerReference("apps/v1", "ReplicaSet", "w")
    # the controllers' other spec fields and status are read without a warning
    assert not [w for w in scenario.warnings if "ignored fields" in w or "ignored object" in w]


def test_an_unknown_field_of_these_kinds_is_warned_about() -> None:
    doc = obj("Service", {"selectr": {"app": "web"}}, "v1")
    warnings = scenario_from_document(wrap(doc), "s.yaml").warnings
    assert any("ignored fields of Service" in w and "spec.selectr" in w for w in warnings)


def test_the_dump_reads_back_the_same_objects() -> None:
    objects = scenario_from_document(wrap(*DOCS), "s.yaml").objects
    again = scenario_from_document(wrap(*objects_document(objects)), "s.yaml").objects
    assert again.services == objects.services
    assert again.replication_controllers == objects.replication_controllers
    assert again.workload_controllers == objects.workload_controllers
    assert again.pods[0].controller_ref == objects.pods[0].controller_ref


@pytest.mark.parametrize("doc, message", [
    (obj("ReplicaSet", {"replicas": 1}), r"ReplicaSet ns/w: spec.selector: missing or empty"),
    (obj("StatefulSet", {"selector": {}}), r"StatefulSet ns/w: spec.selector: missing or empty"),
    (obj("ReplicaSet", {"selector": {"matchExpressions": [{"key": "a", "operator": "In"}]}}),
     r"ReplicaSet ns/w: spec.selector.matchExpressions\[0\].values: must not be empty"),
    (obj("ReplicationController", {"replicas": 1}, "v1"), r"ReplicationController ns/w: spec.selector: missing"),
    (obj("ReplicationController", {"template": {"metadata": {"labels": {}}}}, "v1"),
     r"ReplicationController ns/w: spec.selector: missing or empty, and no pod template labels"),
    (obj("ReplicationController", {"selector": {"app": "db"}, "template": {"metadata": {"labels": {"app": "web"}}}},
         "v1"), r"ReplicationController ns/w: spec.selector: does not select the pod template's labels"),
    (obj("ReplicationController", {"template": {"metadata": {"labels": {"app": 1}}}}, "v1"),
     r"ReplicationController ns/w: spec.template.metadata.labels.app: expected a string"),
    (obj("Service", {"selector": {"port": 80}}, "v1"), r"Service ns/w: spec.selector.port: expected a string"),
    (obj("Service", {"selector": ["app"]}, "v1"), r"Service ns/w: spec.selector: expected a mapping"),
    (pod(RS_REF, {**RS_REF, "name": "x"}), r"Pod ns/p: metadata.ownerReferences\[1\].controller: only one"),
    (pod({"apiVersion": "apps/v1", "name": "w", "controller": True}),
     r"Pod ns/p: metadata.ownerReferences\[0\].kind: missing"),
    (pod({**RS_REF, "controller": "yes"}), r"Pod ns/p: metadata.ownerReferences\[0\].controller: expected true"),
])
def test_a_bad_value_names_file_object_and_field(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError, match=message) as info:
        scenario_from_document(wrap(doc), "s.yaml")
    assert str(info.value).startswith("s.yaml") and "\n" not in str(info.value)


def test_a_replication_controller_without_a_selector_takes_its_template_labels() -> None:
    """SetDefaults_ReplicationController: an empty selector is the pod template's labels; a given selector is
    kept, and must select the template's labels."""
    template = {"metadata": {"labels": {"app": "web", "tier": "front"}}}
    objects = scenario_from_document(wrap(
        obj("ReplicationController", {"template": template}, "v1", "a"),
        obj("ReplicationController", {"selector": {}, "template": template}, "v1", "b"),
        obj("ReplicationController", {"selector": {"app": "web"}, "template": template}, "v1", "c")), "s.yaml").objects
    assert [rc.selector for rc in objects.replication_controllers] == [
        {"app": "web", "tier": "front"}, {"app": "web", "tier": "front"}, {"app": "web"}]
    again = scenario_from_document(wrap(*objects_document(objects)), "again.yaml").objects
    assert again.replication_controllers == objects.replication_controllers

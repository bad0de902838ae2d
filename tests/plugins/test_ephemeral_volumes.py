"""Generic ephemeral volumes (spec.volumes[].ephemeral): the claim named "<pod>-<volume>", the reasons of
VolumeBinding and NodeVolumeLimits when it is missing or not the pod's, VolumeZone passing it over, the
cache's CSI counting, and the reader and dump."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedcheck.reference.api.unschedule_info import StatusCode
from schedcheck.reference.cache.cache import SchedulerCache
from schedcheck.reference.cache.volumes import VolumeCaches, VolumeObjects
from schedcheck.reference.k8s import (
    CSINode,
    CSINodeDriver,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PersistentVolumeClaim,
    PodVolume,
    VolumeAttachment,
)
from schedcheck.reference.plugins.volume_binding import BindingState, VolumeBinding
from schedcheck.reference.plugins.volume_filters import limits_filter, zone_pre_filter
from schedcheck.reference.plugins.volume_helpers import volume_claim_name, volume_is_for_pod
from schedcheck.scenario.dump import scenario_document
from schedcheck.scenario.errors import ScenarioError
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario, load_scenario_text, scenario_from_document
from tests.builders import pod
from tests.plugins.test_volumes import (
    UAU,
    ZONE,
    bound_volume,
    claim,
    csi_volume,
    host,
    local_class,
    open_ssn,
    task_of,
    verdicts,
    world,
)

WAITING = 'waiting for ephemeral volume controller to create the persistentvolumeclaim "p-data"'
NOT_OWNER = "PVC default/p-data was not created for pod default/p (pod is not owner)"


def ephemeral_user(name: str = "p", *volumes: str):
    return pod(name, group=name, volumes=[PodVolume(v, ephemeral=True) for v in volumes or ("data",)])


def owned(pvc: PersistentVolumeClaim, owner: str = "uid-default-p") -> PersistentVolumeClaim:
    pvc.controller_uid = owner
    return pvc


def test_the_claim_is_named_after_the_pod_and_the_volume():
    p = ephemeral_user("web-0", "scratch")
    assert volume_claim_name(p, p.volumes[0]) == "web-0-scratch"
    assert volume_claim_name(p, PodVolume("scratch", "named")) == "named"


@pytest.mark.parametrize(("namespace", "owner", "fits"), [
    ("default", "uid-default-p", True),
    ("default", "uid-other", False),
    ("default", "", False),  # no controller at all
    ("other", "uid-default-p", False),
])
def test_a_claim_is_for_the_pod_when_the_pod_controls_it_in_its_namespace(namespace, owner, fits):
    pvc = PersistentVolumeClaim("p-data", namespace, controller_uid=owner)
    assert (volume_is_for_pod(ephemeral_user(), pvc) == "") is fits


def test_a_missing_ephemeral_claim_makes_volume_binding_wait_for_the_controller():
    ssn = open_ssn(world([host("n1")], [ephemeral_user()]))  # VolumeZone, first, passes ephemeral volumes over
    assert str(ssn.pre_predicate_fn(task_of(ssn, "p"))) == f"plugin VolumeBinding pre-predicates failed {WAITING}"


def test_with_volume_binding_off_node_volume_limits_reports_the_missing_ephemeral_claim():
    ssn = open_ssn(world([host("n1")], [ephemeral_user()]), {"predicate.VolumeBindingEnable": False})
    assert verdicts(ssn, "p") == {
        "n1": [(UAU, 'looking up PVC default/p-data: persistentvolumeclaim "p-data" not found')]}


def test_volume_binding_refuses_a_claim_of_another_owner():
    objects = world([host("n1")], [ephemeral_user()], [owned(claim("p-data", bound_to="pv"), "uid-other")],
                    [bound_volume("pv", "p-data")], [local_class()])
    state = VolumeBinding(VolumeCaches(objects)).pre_filter(objects.pods[0])
    assert not isinstance(state, BindingState)
    assert (state.code, state.reason) == (UAU, NOT_OWNER)


def test_node_volume_limits_reports_a_claim_of_another_owner_as_an_error():
    objects = world([host("n1")], [ephemeral_user()], [owned(claim("p-data"), "uid-other")], [], [local_class()])
    status = limits_filter(VolumeObjects(objects), objects.pods[0], "n1", [])
    assert (status.code, status.reason) == (StatusCode.Error, NOT_OWNER)


def test_node_volume_limits_reports_an_existing_pods_foreign_claim_as_an_error():
    there = ephemeral_user("q")
    objects = world([host("n1")], [ephemeral_user(), there],
                    [owned(claim("p-data")), owned(claim("q-data"), "uid-other")], [], [local_class()],
                    [CSINode("n1", drivers=[CSINodeDriver("kubernetes.io/no-provisioner", 5)])])
    status = limits_filter(VolumeObjects(objects), objects.pods[0], "n1", [there])
    assert (status.code, status.reason) == (StatusCode.Error,
                                             "PVC default/q-data was not created for pod default/q (pod is not owner)")


def test_the_owned_claims_bound_pv_pins_the_pod():
    objects = world([host("n1"), host("n2")], [ephemeral_user()], [owned(claim("p-data", bound_to="pv"))],
                    [bound_volume("pv", "p-data", on="n2")], [local_class()])
    assert verdicts(open_ssn(objects), "p") == {
        "n1": [(UAU, "node(s) didn't match PersistentVolume's node affinity")], "n2": None}


def test_volume_zone_passes_ephemeral_volumes_over():
    pv = bound_volume("pv", "p-data", labels={ZONE: "a"})
    objects = world([host("n1", **{ZONE: "b"})], [ephemeral_user()], [owned(claim("p-data", bound_to="pv"))],
                    [pv], [local_class()])
    topologies, status = zone_pre_filter(VolumeObjects(objects), objects.pods[0])
    assert topologies == [] and status.code == StatusCode.Skip
    named = pod("p", group="p", volumes=[PodVolume("data", "p-data")])  # the same claim, named: zone a counts
    topologies, status = zone_pre_filter(VolumeObjects(objects), named)
    assert status is None and topologies


def test_node_volume_limits_counts_the_ephemeral_claim():
    objects = world([host("n1")], [ephemeral_user()], [owned(claim("p-data", bound_to="pv"))],
                    [csi_volume("pv", "p-data"), csi_volume("other", "x")], [local_class()],
                    [CSINode("n1", drivers=[CSINodeDriver("disk.csi", 1)])],
                    [VolumeAttachment("va", attacher="disk.csi", node_name="n1", persistent_volume_name="other")])
    status = limits_filter(VolumeObjects(objects), objects.pods[0], "n1", [])
    assert (status.code, status.reason) == (StatusCode.Unschedulable, "node(s) exceed max volume count")


def test_the_cache_counts_an_owned_ephemeral_claim_and_drops_a_pod_whose_claim_is_not_its_own():
    objects = world([host("n1")], [ephemeral_user(), ephemeral_user("q"), ephemeral_user("r")],
                    [owned(claim("p-data", bound_to="pv")), owned(claim("q-data"), "uid-default-p")],
                    [csi_volume("pv", "p-data")], [local_class()])
    cache = SchedulerCache(objects)
    tasks = {t.name: t for j in cache.jobs.values() for t in j.tasks.values()}
    assert tasks["p"].resreq.scalars["attachable-volumes-csi-disk.csi"] == 1.0
    assert "q" not in tasks  # addPod fails: the claim is p's
    assert "r" in tasks  # r-data not created yet: the task is there (pending, resynced)


POD = """
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default, uid: uid-p}
spec:
  containers: [{name: c}]
  volumes:
%s
"""
CLAIM = """
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: p-data
  namespace: default
  ownerReferences: [{apiVersion: v1, kind: Pod, name: p, uid: uid-p, controller: true}]
spec: {storageClassName: sc}
"""


def test_the_reader_takes_the_template_and_the_claims_controller_and_the_dump_writes_them_back():
    volume = ("  - {name: data, ephemeral: {volumeClaimTemplate: {metadata: {labels: {a: b}},"
              " spec: {storageClassName: sc}}}}")
    scenario = load_scenario_text(f"{POD % volume}---{CLAIM}", "s.yaml")
    [read] = scenario.objects.pods[0].volumes
    assert (read.name, read.ephemeral, read.claim_template.labels, read.claim_template.storage_class_name) == (
        "data", True, {"a": "b"}, "sc")
    assert scenario.objects.persistent_volume_claims[0].controller_uid == "uid-p"
    doc = scenario_document(scenario.name, scenario.objects, scenario.conf)
    again = scenario_from_document(doc, "again.yaml")
    assert again.objects.pods[0].volumes == scenario.objects.pods[0].volumes
    assert again.objects.persistent_volume_claims[0].controller_uid == "uid-p"


@pytest.mark.parametrize(("volume", "field", "reason"), [
    ("  - {name: data, ephemeral: {}}", "spec.volumes[0].ephemeral.volumeClaimTemplate", "missing"),
    ("  - {name: data, ephemeral: {volumeClaimTemplate: {spec: {volumeMode: Disk}}}}",
     "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.volumeMode", "Disk"),
    ("  - {name: data, ephemeral: {volumeClaimTemplate: {metadata: {labels: [a]}, spec: {}}}}",
     "spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.labels", "expected a mapping"),
    ("  - {name: data, ephemeral: {volumeClaimTemplate: {metadata: {}}}}",
     "spec.volumes[0].ephemeral.volumeClaimTemplate.spec", "missing"),
    ("  - {name: data, ephemeral: [x]}", "spec.volumes[0].ephemeral", "expected a mapping"),
    ("  - {name: data, ephemeral: {volumeClaimTemplate: {spec: {}}}, persistentVolumeClaim: {claimName: c}}",
     "spec.volumes[0].ephemeral", "one source"),
])
def test_a_malformed_ephemeral_volume_is_a_one_line_error(volume, field, reason):
    with pytest.raises(ScenarioError) as info:
        load_scenario_text(POD % volume, "s.yaml")
    message = str(info.value)
    assert "\n" not in message and field in message and reason in message and "s.yaml" in message


SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def test_the_not_created_scenarios_pod_fails_with_upstreams_reason_and_no_finding():
    scenario = load_scenario(SCENARIOS / "volumes-ephemeral-claim-not-created-waits.yaml")
    ssn = open_ssn(scenario.objects)
    assert str(ssn.pre_predicate_fn(task_of(ssn, "app-0"))) == (
        "plugin VolumeBinding pre-predicates failed waiting for ephemeral volume controller to create the "
        'persistentvolumeclaim "app-0-scratch"')
    result = run_scenario(scenario, seed=0)
    assert result.ok and not result.findings  # allocate.work-conserving does not restate claims


def test_the_other_pods_claim_scenario_keeps_the_pod_out_of_the_cache():
    scenario = load_scenario(SCENARIOS / "volumes-ephemeral-claim-of-another-pod-refused.yaml")
    cache = SchedulerCache(scenario.objects)
    assert {t.name for j in cache.jobs.values() for t in j.tasks.values()} == {"web-0"}
    pod_ = next(p for p in scenario.objects.pods if p.name == "app-0")
    state = VolumeBinding(VolumeCaches(scenario.objects)).pre_filter(pod_)
    assert state.reason == "PVC default/app-0-scratch was not created for pod default/app-0 (pod is not owner)"


def test_between_sessions_the_controller_creates_each_missing_claim_from_its_template_once():
    from schedcheck.reference.cache.ephemeral_controller import claim_uid, create_ephemeral_claims

    volume = ("  - {name: data, ephemeral: {volumeClaimTemplate: {metadata: {labels: {a: b}, annotations: {note: m}},"
              " spec: {storageClassName: sc, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}}}")
    objects = load_scenario_text(POD % volume, "s.yaml").objects
    assert create_ephemeral_claims(objects) == ["default/p-data"]
    [made] = objects.persistent_volume_claims
    assert (made.name, made.namespace, made.uid, made.controller_uid) == ("p-data", "default",
                                                                          claim_uid("default", "p-data"), "uid-p")
    assert (made.labels, made.annotations, made.storage_class_name, made.access_modes, str(made.request),
            made.volume_name, made.phase) == ({"a": "b"}, {"note": "m"}, "sc", ["ReadWriteOnce"], "1Gi", "", "Pending")
    assert not volume_is_for_pod(objects.pods[0], made)  # "" : no problem
    made.labels["x"] = "y"  # the claim is a copy: the template stays as written
    assert objects.pods[0].volumes[0].claim_template.labels == {"a": "b"}
    assert create_ephemeral_claims(objects) == [] and len(objects.persistent_volume_claims) == 1


def test_the_controller_leaves_an_existing_claim_and_a_deleted_pod_alone():
    from schedcheck.reference.cache.ephemeral_controller import create_ephemeral_claims

    volume = "  - {name: data, ephemeral: {volumeClaimTemplate: {spec: {storageClassName: other}}}}"
    objects = load_scenario_text(f"{POD % volume}---{CLAIM}", "s.yaml").objects
    assert create_ephemeral_claims(objects) == []
    assert objects.persistent_volume_claims[0].storage_class_name == "sc"  # the existing one, untouched
    objects.persistent_volume_claims.clear()
    objects.pods[0].deletion_timestamp = "2026-05-01T00:00:00Z"
    assert create_ephemeral_claims(objects) == []


def test_the_created_between_sessions_scenario_needs_the_controller(monkeypatch):
    import schedcheck.reference.cache.world as world

    path = SCENARIOS / "volumes-ephemeral-claim-created-between-sessions.yaml"
    assert run_scenario(load_scenario(path), seed=0).ok
    monkeypatch.setattr(world, "create_ephemeral_claims", lambda objects: [])
    assert not run_scenario(load_scenario(path), seed=0).ok

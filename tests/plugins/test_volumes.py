"""Volumes: the predicates plugin's VolumeBinding, VolumeZone and NodeVolumeLimits, the volume binder's
Reserve / PreBind through the cache and the world's PV controller, and the cache's CSI volume counting."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedcheck.reference.api.unschedule_info import FitError, StatusCode
from schedcheck.reference.cache.cache import SchedulerCache
from schedcheck.reference.framework.conf import PluginOption, SchedulerConf, Tier, apply_plugin_conf_defaults
from schedcheck.reference.framework.framework import open_session
from schedcheck.reference.framework.session import Session
from schedcheck.reference.framework.statement import Statement
from schedcheck.reference.k8s import (
    GROUP_NAME_ANNOTATION,
    ClaimReference,
    ClusterObjects,
    CSINode,
    CSINodeDriver,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PersistentVolume,
    PersistentVolumeClaim,
    PodVolume,
    StorageClass,
    TopologySelectorRequirement,
    VolumeAttachment,
)
from schedcheck.reference.quantity import Quantity
from schedcheck.reference.util.scheduler_helper import ServerOptions
from schedcheck.runner import run_scenario
from schedcheck.scenario.dump import scenario_document
from schedcheck.scenario.loader import load_scenario, load_scenario_text, scenario_from_document
from tests.builders import node, pod, pod_group

UAU = StatusCode.UnschedulableAndUnresolvable
WFFC = "WaitForFirstConsumer"
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
CORPUS = Path(__file__).resolve().parents[2] / "schedcheck" / "corpus"


def claim(name: str, sc: str | None = "local", size: str = "1Gi", bound_to: str = "", **extra) -> PersistentVolumeClaim:
    annotations = {"pv.kubernetes.io/bind-completed": "yes"} if bound_to else {}
    annotations.update(extra.pop("annotations", {}))
    return PersistentVolumeClaim(name, "default", uid=f"uid-pvc-{name}", storage_class_name=sc,
                                 request=Quantity.parse(size), volume_name=bound_to,
                                 annotations=annotations, phase="Bound" if bound_to else "Pending", **extra)


def volume(name: str, sc: str = "local", size: str = "2Gi", on: str | None = None, **extra) -> PersistentVolume:
    affinity = None
    if on is not None:
        affinity = [NodeSelectorTerm([NodeSelectorRequirement(HOST, "In", [on])])]
    return PersistentVolume(name, uid=f"uid-pv-{name}", capacity=Quantity.parse(size), storage_class_name=sc,
                            node_affinity=affinity, **extra)


def bound_volume(name: str, pvc: str, **extra) -> PersistentVolume:
    return volume(name, claim_ref=ClaimReference("default", pvc, f"uid-pvc-{pvc}"), phase="Bound", **extra)


def host(name: str, **labels: str):
    return node(name, labels={HOST: name, **labels})


def user(name: str, *claims: str, **extra):
    return pod(name, group=name, volumes=[PodVolume(c, c) for c in claims], **extra)


def world(nodes, pods, pvcs=(), pvs=(), classes=(), csi_nodes=(), attachments=()) -> ClusterObjects:
    groups = sorted({p.annotations[GROUP_NAME_ANNOTATION] for p in pods})
    return ClusterObjects(nodes=list(nodes), pods=list(pods), pod_groups=[pod_group(g, 1, phase="Inqueue")
                                                                          for g in groups],
                          persistent_volume_claims=list(pvcs), persistent_volumes=list(pvs),
                          storage_classes=list(classes), csi_nodes=list(csi_nodes),
                          volume_attachments=list(attachments))


def local_class(mode: str = WFFC, provisioner: str = "kubernetes.io/no-provisioner", **extra) -> StorageClass:
    return StorageClass("local", provisioner=provisioner, volume_binding_mode=mode, **extra)


def open_ssn(objects: ClusterObjects, arguments=None, options: ServerOptions | None = None) -> Session:
    option = PluginOption("predicates", arguments=dict(arguments or {}))
    apply_plugin_conf_defaults(option)
    cache = SchedulerCache(objects, server_options=options)
    return open_session(cache, SchedulerConf(actions=["allocate"], tiers=[Tier([option])]), cycle=0, seed=0)


def task_of(ssn: Session, name: str):
    return next(t for job in ssn.jobs.values() for t in job.tasks.values() if t.name == name)


def verdicts(ssn: Session, name: str) -> dict[str, list[tuple[StatusCode, str]] | None]:
    """PrePredicate, then Predicate on every node: node -> the failing statuses (None: fits)."""
    task = task_of(ssn, name)
    assert ssn.pre_predicate_fn(task) is None
    out = {}
    for node_name, info in sorted(ssn.nodes.items()):
        err = ssn.predicate_fn(task, info)
        assert err is None or isinstance(err, FitError)
        out[node_name] = None if err is None else [(s.code, s.reason) for s in err.statuses]
    return out


# -- VolumeBinding: bound claims --------------------------------------------------------------


def test_a_bound_claims_pv_node_affinity_admits_only_its_node():
    objects = world([host("n1"), host("n2")], [user("p", "data")], [claim("data", bound_to="pv")],
                    [bound_volume("pv", "data", on="n2")], [local_class()])
    assert verdicts(open_ssn(objects), "p") == {"n1": [(UAU, NODE_CONFLICT)], "n2": None}


def test_a_claim_bound_to_a_missing_pv_fails_every_node():
    objects = world([host("n1")], [user("p", "data")], [claim("data", bound_to="gone")], [], [local_class()],)
    ssn = open_ssn(objects, {"predicate.VolumeZoneEnable": False})  # VolumeZone would fail the PreFilter first
    assert verdicts(ssn, "p") == {
        "n1": [(UAU, "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)")]}


# -- VolumeBinding: WaitForFirstConsumer -------------------------------------------------------


def test_a_delayed_claim_needs_an_available_pv_whose_affinity_admits_the_node():
    objects = world([host("n1"), host("n2")], [user("p", "data")], [claim("data")], [volume("pv", on="n2")],
                    [local_class()])
    assert verdicts(open_ssn(objects), "p") == {"n1": [(UAU, BIND_CONFLICT)], "n2": None}


@pytest.mark.parametrize(("pv", "fits"), [
    (volume("pv", size="512Mi"), False),  # too small
    (volume("pv", sc="other"), False),  # another class
    (volume("pv", phase="Released"), False),  # not Available
    (volume("pv", access_modes=["ReadOnlyMany"]), False),  # lacks the claim's ReadWriteOnce
    (volume("pv", volume_mode="Block"), False),
    (volume("pv", claim_ref=ClaimReference("default", "someone-else")), False),
    (volume("pv", access_modes=["ReadWriteOnce", "ReadOnlyMany"]), True),
])
def test_which_pv_matches_a_delayed_claim(pv, fits):
    objects = world([host("n1")], [user("p", "data")], [claim("data", access_modes=["ReadWriteOnce"])], [pv],
                    [local_class()])
    assert verdicts(open_ssn(objects), "p") == {"n1": None if fits else [(UAU, BIND_CONFLICT)]}


def test_without_a_pv_a_delayed_claim_is_provisioned_where_allowed_topologies_admit():
    sc = local_class(provisioner="example.com/disk", allowed_topologies=[[TopologySelectorRequirement(ZONE, ["a"])]])
    objects = world([host("n1", **{ZONE: "b"}), host("n2", **{ZONE: "a"})], [user("p", "data")], [claim("data")],
                    [], [sc], [CSINode(n, drivers=[CSINodeDriver("example.com/disk")]) for n in ("n1", "n2")])
    assert verdicts(open_ssn(objects), "p") == {"n1": [(UAU, BIND_CONFLICT)], "n2": None}


def test_a_class_that_cannot_provision_leaves_an_unmatched_claim_nowhere():
    objects = world([host("n1")], [user("p", "data")], [claim("data")], [], [local_class()])
    assert verdicts(open_ssn(objects), "p") == {"n1": [(UAU, BIND_CONFLICT)]}


def test_a_claim_selected_for_another_node_fails_this_one():
    pvc = claim("data", annotations={"volume.kubernetes.io/selected-node": "n2"})
    sc = local_class(provisioner="example.com/disk")
    objects = world([host("n1"), host("n2")], [user("p", "data")], [pvc], [], [sc])
    ssn = open_ssn(objects, options=ServerOptions(ignored_provisioners=("example.com/disk",)))
    assert verdicts(ssn, "p") == {"n1": [(UAU, BIND_CONFLICT)], "n2": None}


# -- VolumeBinding and VolumeZone PreFilters --------------------------------------------------


def test_an_unbound_immediate_claim_fails_in_volume_zone_first():
    objects = world([host("n1")], [user("p", "data")], [claim("data")], [volume("pv")], [local_class("Immediate")])
    ssn = open_ssn(objects)
    err = ssn.pre_predicate_fn(task_of(ssn, "p"))
    assert str(err) == "plugin VolumeZone pre-predicates failed PersistentVolume had no name"


def test_with_volume_zone_off_volume_binding_reports_the_unbound_immediate_claim():
    objects = world([host("n1")], [user("p", "data")], [claim("data")], [volume("pv")], [local_class("Immediate")])
    ssn = open_ssn(objects, {"predicate.VolumeZoneEnable": False})
    err = ssn.pre_predicate_fn(task_of(ssn, "p"))
    assert str(err) == "plugin VolumeBinding pre-predicates failed pod has unbound immediate PersistentVolumeClaims"


def test_a_missing_claim_fails_the_pre_predicate():
    ssn = open_ssn(world([host("n1")], [user("p", "nope")]))
    assert str(ssn.pre_predicate_fn(task_of(ssn, "p"))) == \
        'plugin VolumeZone pre-predicates failed persistentvolumeclaim "nope" not found'


def test_a_claim_without_class_or_volume_fails_volume_zone():
    ssn = open_ssn(world([host("n1")], [user("p", "data")], [claim("data", sc=None)]))
    assert str(ssn.pre_predicate_fn(task_of(ssn, "p"))) == \
        "plugin VolumeZone pre-predicates failed PersistentVolumeClaim had no pv name and storageClass name"


def test_a_claim_naming_a_volume_without_bind_completed_is_unbound_immediate_even_with_volume_zone_on():
    pvc = claim("data")
    pvc.volume_name = "pv"  # the PV controller has not finished: no bind-completed annotation
    objects = world([host("n1")], [user("p", "data")], [pvc], [bound_volume("pv", "data")], [local_class()])
    ssn = open_ssn(objects)
    err = ssn.pre_predicate_fn(task_of(ssn, "p"))
    assert str(err) == "plugin VolumeBinding pre-predicates failed pod has unbound immediate PersistentVolumeClaims"


def test_volume_zone_fails_a_claim_bound_to_a_missing_pv():
    ssn = open_ssn(world([host("n1")], [user("p", "data")], [claim("data", bound_to="gone")], [], [local_class()]))
    assert str(ssn.pre_predicate_fn(task_of(ssn, "p"))) == \
        'plugin VolumeZone pre-predicates failed persistentvolume "gone" not found'


def test_with_the_other_volume_filters_off_node_volume_limits_reports_the_missing_claim():
    ssn = open_ssn(world([host("n1")], [user("p", "nope")]),
                   {"predicate.VolumeZoneEnable": False, "predicate.VolumeBindingEnable": False})
    assert verdicts(ssn, "p") == {
        "n1": [(UAU, 'looking up PVC default/nope: persistentvolumeclaim "nope" not found')]}


def test_a_pod_without_claims_skips_the_volume_filters():
    ssn = open_ssn(world([host("n1")], [pod("p", group="p")]))
    assert verdicts(ssn, "p") == {"n1": None}


# -- VolumeZone ------------------------------------------------------------------------------


@pytest.mark.parametrize(("pv_labels", "node_labels", "fits"), [
    ({ZONE: "a"}, {ZONE: "a"}, True),
    ({ZONE: "a"}, {ZONE: "b"}, False),
    ({ZONE: "a"}, {}, True),  # a node without zone or region labels is not constrained
    ({ZONE: "a__b"}, {ZONE: "b"}, True),  # several zones, "__"-separated
    ({"failure-domain.beta.kubernetes.io/zone": "a"}, {ZONE: "a"}, True),  # the beta key read as the GA one
    ({ZONE: "a"}, {"topology.kubernetes.io/region": "r"}, False),  # constrained, and no zone label
    ({ZONE: "a__"}, {ZONE: "b"}, True),  # an unparsable value is ignored
])
def test_volume_zone_compares_a_bound_pvs_zone_with_the_node(pv_labels, node_labels, fits):
    objects = world([host("n1", **node_labels)], [user("p", "data")], [claim("data", bound_to="pv")],
                    [bound_volume("pv", "data", labels=pv_labels)], [local_class()])
    expected = None if fits else [(UAU, "node(s) had no available volume zone")]
    assert verdicts(open_ssn(objects), "p") == {"n1": expected}


# -- NodeVolumeLimits (CSI) --------------------------------------------------------------------


def csi_volume(name: str, pvc: str) -> PersistentVolume:
    return bound_volume(name, pvc, csi_driver="disk.csi", csi_volume_handle=f"h-{name}")


def test_a_volume_attachment_uses_up_the_csi_limit():
    objects = world([host("n1"), host("n2")], [user("p", "data")], [claim("data", bound_to="pv")],
                    [csi_volume("pv", "data"), csi_volume("old", "gone")], [local_class()],
                    [CSINode(n, drivers=[CSINodeDriver("disk.csi", 1)]) for n in ("n1", "n2")],
                    [VolumeAttachment("va", "disk.csi", "n1", "old")])
    assert verdicts(open_ssn(objects), "p") == {
        "n1": [(StatusCode.Unschedulable, "node(s) exceed max volume count")], "n2": None}


def test_a_volume_already_on_the_node_is_not_counted_again():
    other = user("q", "data", node_name="n1", phase="Running")
    objects = world([host("n1")], [user("p", "data"), other], [claim("data", bound_to="pv")],
                    [csi_volume("pv", "data")], [local_class()],
                    [CSINode("n1", drivers=[CSINodeDriver("disk.csi", 1)])])
    # the cache counts the claim per pod (Volcano's resource), so only the filter is asked here
    ssn = open_ssn(objects)
    task = task_of(ssn, "p")
    assert ssn.pre_predicate_fn(task) is None
    assert ssn.predicate_fn(task, ssn.nodes["n1"]) is None


# -- the cache's CSI counting ------------------------------------------------------------------


def test_the_cache_counts_each_claims_csi_driver_as_a_resource():
    objects = world([host("n1")], [user("p", "data")], [claim("data", bound_to="pv")], [csi_volume("pv", "data")],
                    [local_class()], [CSINode("n1", drivers=[CSINodeDriver("disk.csi", 3), CSINodeDriver("x/y")])])
    cache = SchedulerCache(objects)
    task = next(t for j in cache.jobs.values() for t in j.tasks.values())
    assert task.resreq.scalars["attachable-volumes-csi-disk.csi"] == 1.0
    assert task.init_resreq is task.resreq and not task.best_effort
    allocatable = cache.nodes["n1"].allocatable.scalars
    assert allocatable["attachable-volumes-csi-disk.csi"] == 3.0
    assert allocatable["attachable-volumes-csi-x-y"] == 2**31 - 1


@pytest.mark.parametrize(("provisioner", "ignored", "counted"), [
    ("example.com/disk", (), True),
    ("example.com/disk", ("example.com/disk",), False),
    ("rancher.io/local-path", (), False),  # ignored by default
])
def test_ignored_provisioners_are_not_counted(provisioner, ignored, counted):
    objects = world([host("n1")], [user("p", "data")], [claim("data")], [], [local_class(provisioner=provisioner)])
    cache = SchedulerCache(objects, server_options=ServerOptions(ignored_provisioners=ignored))
    task = next(t for j in cache.jobs.values() for t in j.tasks.values())
    assert bool(task.resreq.scalars and any(k.startswith("attachable-volumes-csi-") for k in task.resreq.scalars)) \
        is counted


# -- Reserve, Unreserve, PreBind -----------------------------------------------------------------


def two_claims_one_pv() -> ClusterObjects:
    return world([host("n1")], [user("a", "da"), user("b", "db")], [claim("da"), claim("db")], [volume("pv")],
                 [local_class()])


def test_reserve_assumes_the_pv_so_the_next_claim_cannot_take_it_until_unreserve():
    ssn = open_ssn(two_claims_one_pv())
    a = task_of(ssn, "a")
    assert verdicts(ssn, "a") == {"n1": None}
    stmt = Statement(ssn)
    stmt.allocate(a, ssn.nodes["n1"])
    assert ssn.cache.volumes.pvs.get("pv").claim_ref == ClaimReference("default", "da", "uid-pvc-da")
    assert ssn.cache.volumes.objects.pv("pv").claim_ref is None  # assumed only, not written
    assert verdicts(ssn, "b") == {"n1": [(UAU, BIND_CONFLICT)]}
    stmt.discard()
    assert ssn.cache.volumes.pvs.get("pv").claim_ref is None
    assert verdicts(ssn, "b") == {"n1": None}


def test_a_pipeline_assumes_nothing_because_the_pod_has_no_node_name():
    ssn = open_ssn(two_claims_one_pv())
    a = task_of(ssn, "a")
    assert verdicts(ssn, "a") == {"n1": None}
    Statement(ssn).pipeline(a, "n1", False)
    assert ssn.cache.volumes.pvs.get("pv").claim_ref is None


def volume_scenario(cycles: int, pvs: str, sc: str, ignored: str = "[kubernetes.io/no-provisioner]") -> str:
    return f"""
apiVersion: schedcheck/v1
kind: Scenario
cycles: {cycles}
schedulerOptions: {{ignoredProvisioners: {ignored}}}
schedulerConf:
  actions: "enqueue, allocate"
  tiers:
  - plugins: [{{name: gang}}, {{name: predicates}}]
objects:
- {{apiVersion: v1, kind: Node, metadata: {{name: n1}}, status: {{allocatable: {{cpu: "2", memory: 4Gi, pods: "10"}}}}}}
- {{apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {{name: pg, namespace: default}},
   spec: {{minMember: 1}}, status: {{phase: Inqueue}}}}
- apiVersion: v1
  kind: Pod
  metadata: {{name: p, namespace: default, annotations: {{scheduling.k8s.io/group-name: pg}}}}
  spec:
    containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]
    volumes: [{{name: d, persistentVolumeClaim: {{claimName: data}}}}]
- {{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {{name: data, namespace: default}},
   spec: {{storageClassName: sc, resources: {{requests: {{storage: 1Gi}}}}}}}}
- {{apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {{name: sc}}, {sc}}}
{pvs}
"""


STATIC_CLASS = "provisioner: kubernetes.io/no-provisioner, volumeBindingMode: WaitForFirstConsumer"
STATIC_PV = ("- {apiVersion: v1, kind: PersistentVolume, metadata: {name: pv},"
             " spec: {storageClassName: sc, capacity: {storage: 2Gi}}}")
DYNAMIC_CLASS = "provisioner: example.com/disk, volumeBindingMode: WaitForFirstConsumer"
DYNAMIC_CSI = ("- {apiVersion: storage.k8s.io/v1, kind: CSINode, metadata: {name: n1},"
               " spec: {drivers: [{name: example.com/disk}]}}")


def test_the_bind_waits_for_the_pv_controller_within_the_session():
    result = run_scenario(load_scenario_text(volume_scenario(1, STATIC_PV, STATIC_CLASS), "x.yaml"), seed=0)
    assert result.binds == {}
    assert result.task_status_counts == {"default/pg": {"Binding": 1}}


def test_the_pv_controller_binds_the_pre_bound_claim_and_the_pod_binds_next():
    scenario = load_scenario_text(volume_scenario(2, STATIC_PV, STATIC_CLASS), "x.yaml")
    result = run_scenario(scenario, seed=0)
    assert result.binds == {"default/p": "n1"}
    assert not result.violations


def test_dynamic_provisioning_creates_a_bound_pv_for_the_selected_node():
    scenario = load_scenario_text(volume_scenario(2, DYNAMIC_CSI, DYNAMIC_CLASS), "x.yaml")
    result = run_scenario(scenario, seed=0)
    assert result.binds == {"default/p": "n1"}
    assert not scenario.warnings


def test_pre_bind_writes_the_claim_ref_and_the_selected_node():
    objects = world([host("n1")], [user("a", "da"), user("b", "db")], [claim("da"), claim("db")], [volume("pv")],
                    [local_class(provisioner="example.com/disk")],
                    [CSINode("n1", drivers=[CSINodeDriver("example.com/disk")])])
    ssn = open_ssn(objects)
    for name in ("a", "b"):
        task = task_of(ssn, name)
        assert verdicts(ssn, name) == {"n1": None}
        assert ssn.allocate(task, ssn.nodes["n1"]) is None  # backfill's path: dispatched at once
    stored = ssn.cache.volumes.objects
    assert stored.pv("pv").claim_ref == ClaimReference("default", "da", "uid-pvc-da")
    assert stored.pv("pv").annotations["pv.kubernetes.io/bound-by-controller"] == "yes"
    assert stored.pvc("default", "db").annotations["volume.kubernetes.io/selected-node"] == "n1"
    assert [(r.task, r.pre_bind) for r in ssn.cache.log.binds] == [("default/a", "waiting"), ("default/b", "waiting")]


# -- scenarios: loading, warnings and the round trip ----------------------------------------------


def test_storage_objects_and_pod_volumes_are_read():
    scenario = load_scenario_text(volume_scenario(1, STATIC_PV, STATIC_CLASS), "x.yaml")
    objects = scenario.objects
    assert objects.pods[0].volumes == [PodVolume("d", "data")]
    assert objects.persistent_volume_claims[0].storage_class_name == "sc"
    assert objects.persistent_volumes[0].phase == "Available"
    assert objects.storage_classes[0].volume_binding_mode == WFFC
    assert scenario.warnings == []


def test_a_csi_driver_no_csinode_lists_is_warned_about():
    scenario = load_scenario_text(volume_scenario(1, "", DYNAMIC_CLASS), "x.yaml")
    assert [w for w in scenario.warnings if "CSINode" in w] == [
        "Pod default/p: claims of driver example.com/disk, which no CSINode lists: Volcano's cache asks for "
        "attachable-volumes-csi-example.com-disk per claim and no node has it (add the CSINode objects, or name "
        "the provisioner in schedulerOptions.ignoredProvisioners)"]


def test_without_ignored_provisioners_an_unbound_local_claim_is_insufficient():
    """Upstream counts even kubernetes.io/no-provisioner's unbound claims as CSI volumes (checked on master)."""
    scenario = load_scenario_text(volume_scenario(1, STATIC_PV, STATIC_CLASS, ignored="[]"), "x.yaml")
    result = run_scenario(scenario, seed=0)
    assert result.task_status_counts == {"default/pg": {"Pending": 1}}


def test_a_volume_name_without_the_bind_completed_annotation_is_warned_about():
    text = volume_scenario(1, STATIC_PV, STATIC_CLASS).replace("storageClassName: sc, resources",
                                                               "storageClassName: sc, volumeName: pv, resources")
    assert any("bind-completed" in w for w in load_scenario_text(text, "x.yaml").warnings)


VOLUME_SCENARIOS = sorted(CORPUS.glob("volumes-*.yaml")) + sorted((CORPUS / "upstream").glob("*WithPVC*.yaml"))


@pytest.mark.parametrize("path", VOLUME_SCENARIOS, ids=[p.stem for p in VOLUME_SCENARIOS])
def test_volume_scenarios_round_trip(path):
    original = load_scenario(path)
    doc = scenario_document(original.name, original.objects, original.conf, original.cycles, original.now,
                            original.options)
    again = scenario_from_document(doc, "<dump>")
    assert again.objects == original.objects and again.options == original.options


KUBECTL_DUMP = """
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: PersistentVolume
  metadata:
    name: pvc-1234
    uid: 0b6c
    resourceVersion: "981"
    labels: {topology.kubernetes.io/zone: a}
    annotations: {pv.kubernetes.io/provisioned-by: ebs.csi.aws.com}
    finalizers: [kubernetes.io/pv-protection]
  spec:
    accessModes: [ReadWriteOnce]
    capacity: {storage: 20Gi}
    claimRef: {apiVersion: v1, kind: PersistentVolumeClaim, name: data, namespace: db, resourceVersion: "970",
               uid: 7f1e}
    csi: {driver: ebs.csi.aws.com, fsType: ext4, volumeHandle: vol-0a1, volumeAttributes: {a: b}}
    nodeAffinity:
      required:
        nodeSelectorTerms:
        - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [a]}]
    persistentVolumeReclaimPolicy: Delete
    storageClassName: gp3
    volumeMode: Filesystem
  status: {phase: Bound, lastPhaseTransitionTime: "2026-01-01T00:00:00Z"}
- apiVersion: v1
  kind: PersistentVolumeClaim
  metadata:
    name: data
    namespace: db
    uid: 7f1e
    annotations: {pv.kubernetes.io/bind-completed: "yes", volume.kubernetes.io/selected-node: n1}
  spec:
    accessModes: [ReadWriteOnce]
    resources: {requests: {storage: 20Gi}}
    storageClassName: gp3
    volumeMode: Filesystem
    volumeName: pvc-1234
  status: {phase: Bound, accessModes: [ReadWriteOnce], capacity: {storage: 20Gi}}
- apiVersion: storage.k8s.io/v1
  kind: StorageClass
  metadata: {name: gp3}
  provisioner: ebs.csi.aws.com
  parameters: {type: gp3}
  reclaimPolicy: Delete
  allowVolumeExpansion: true
  volumeBindingMode: WaitForFirstConsumer
- apiVersion: storage.k8s.io/v1
  kind: CSINode
  metadata: {name: n1}
  spec: {drivers: [{name: ebs.csi.aws.com, nodeID: i-1, allocatable: {count: 25},
                    topologyKeys: [topology.kubernetes.io/zone]}]}
- apiVersion: storage.k8s.io/v1
  kind: VolumeAttachment
  metadata: {name: csi-abc}
  spec: {attacher: ebs.csi.aws.com, nodeName: n1, source: {persistentVolumeName: pvc-1234}}
  status: {attached: true}
"""


def test_a_kubectl_dump_of_the_storage_kinds_reads_without_warnings():
    scenario = load_scenario_text(KUBECTL_DUMP, "dump.yaml")
    objects = scenario.objects
    assert scenario.warnings == []
    pv = objects.persistent_volumes[0]
    assert (pv.claim_ref, pv.csi_driver, pv.phase) == (ClaimReference("db", "data", "7f1e"), "ebs.csi.aws.com", "Bound")
    assert pv.node_affinity[0].match_expressions[0].values == ["a"]
    assert objects.csi_nodes[0].drivers == [CSINodeDriver("ebs.csi.aws.com", 25)]
    assert objects.volume_attachments == [VolumeAttachment("csi-abc", "ebs.csi.aws.com", "n1", "pvc-1234")]
    assert objects.persistent_volume_claims[0].volume_name == "pvc-1234"


# -- PreBind's second look at a migrated in-tree PV --------------------------------------------------------


PREBIND_SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / \
    "volumes-in-tree-pv-translated-affinity-fails-prebind.yaml"


def _run_cycles(path: Path, cycles: int):
    from schedcheck.reference.scheduler import Scheduler

    scenario = load_scenario(path)
    scheduler = Scheduler(scenario.objects, scenario.conf, seed=0, now=scenario.now, server_options=scenario.options)
    for index in range(cycles):
        if index:
            scheduler.advance()
        scheduler.run_once()
    return scheduler


def test_pre_bind_refuses_a_pv_whose_translated_affinity_excludes_the_node_and_keeps_its_writes():
    path = PREBIND_SCENARIO
    scheduler = _run_cycles(path, 1)
    assert [(r.task, r.node, r.pre_bind) for r in scheduler.cache.log.binds] == [
        ("default/db-0", "n1", 'failed: binding volumes: pv "pv-data" node affinity doesn\'t match node "n1": '
                               "no matching NodeSelectorTerms")]
    # no API rollback: the PV stays pre-bound, and the PV controller binds the claim to it
    assert scheduler.cache.volumes.objects.pv("pv-data").claim_ref.name == "data"
    scheduler.advance()
    assert scheduler.cache.volumes.objects.pvc("default", "data").volume_name == "pv-data"


def test_pre_bind_passes_the_pv_when_the_node_carries_the_csi_topology_label():
    path = PREBIND_SCENARIO
    scenario = load_scenario(path)
    scenario.objects.nodes[0].labels["topology.gke.io/zone"] = "us-central1-a"
    result = run_scenario(scenario, seed=0)
    assert result.binds == {"default/db-0": "n1"}

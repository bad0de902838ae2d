"""In-tree volume sources through CSI migration (csi_translation.py): the translated handles and their errors,
NodeVolumeLimits counting inline volumes and in-tree PVs, VolumeBinding's translated node affinity behind the
CSINode's migrated-plugins annotation, and the reader's checks and dump."""

from __future__ import annotations

import pytest

from schedcheck.reference.api.unschedule_info import StatusCode
from schedcheck.reference.cache.volumes import VolumeObjects
from schedcheck.reference.k8s import (
    CSINode,
    CSINodeDriver,
    InlineVolume,
    InTreeVolumeSource,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodVolume,
)
from schedcheck.reference.plugins import csi_translation as ct
from schedcheck.reference.plugins.volume_filters import limits_filter, limits_pre_filter, pod_volumes_in_order
from schedcheck.scenario.dump import scenario_document
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.loader import load_scenario_text, scenario_from_document
from tests.builders import pod
from tests.plugins.test_volumes import UAU, bound_volume, claim, host, local_class, open_ssn, verdicts, world

EXCEEDED = (StatusCode.Unschedulable, "node(s) exceed max volume count")
EBS = "ebs.csi.aws.com"
MIGRATED = "storage.alpha.kubernetes.io/migrated-plugins"


def ebs(volume_id: str) -> InTreeVolumeSource:
    return InTreeVolumeSource(ct.AWS_EBS, volume_id)


def inline_user(name: str, *sources: InTreeVolumeSource, node_name: str = ""):
    return pod(name, group=name, node_name=node_name,
               inline_volumes=[InlineVolume(f"v{i}", s, 0) for i, s in enumerate(sources)])


def csi_node(name: str, driver: str = EBS, count: int | None = 1, **annotations: str) -> CSINode:
    return CSINode(name, annotations=dict(annotations), drivers=[CSINodeDriver(driver, count)])


# -- translation -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("volume_id", "handle"), [
    ("vol-1", "vol-1"),
    ("anything/at all", "anything/at all"),  # no aws:// prefix: taken as it is
    ("aws://us-east-1a/vol-1", "vol-1"),
    ("aws:///vol-1", "vol-1"),
    ("aws://us-east-1a/vol-%41", "vol-A"),  # the URL's path is unescaped
    ("aws://us-east-1a/vol-1/", "vol-1"),
])
def test_ebs_handles(volume_id, handle):
    assert ct.inline_handle(ebs(volume_id)) == handle


@pytest.mark.parametrize(("volume_id", "message"), [
    ("aws://us-east-1a/disk-1", "Invalid format for AWS volume (aws://us-east-1a/disk-1)"),
    ("aws://vol-1", "Invalid format for AWS volume (aws://vol-1)"),  # the id is the host, the path is empty
    ("aws://us-east-1a/x/vol-1", "Invalid format for AWS volume (aws://us-east-1a/x/vol-1)"),
    ("aws://us-east-1a/vol-%zz", 'invalid URL escape "%zz"'),
    ("aws://us east/vol-1", 'invalid character " " in host name'),
    ("aws://host:port/vol-1", 'invalid port ":port" after host'),
    ("aws://a/vol-1\x01", "net/url: invalid control character in URL"),
])
def test_ebs_ids_the_translator_refuses(volume_id, message):
    with pytest.raises(ct.TranslationError, match="failed to translate Kubernetes ID to EBS Volume ID") as err:
        ct.inline_handle(ebs(volume_id))
    assert message in str(err.value)


def test_gce_inline_handle_leaves_project_and_zone_unspecified():
    source = InTreeVolumeSource(ct.GCE_PD, "pd-1")
    assert ct.inline_handle(source) == "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd-1"


@pytest.mark.parametrize(("labels", "handle"), [
    ({}, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd-1"),
    ({"topology.kubernetes.io/zone": "us-central1-a"}, "projects/UNSPECIFIED/zones/us-central1-a/disks/pd-1"),
    ({"failure-domain.beta.kubernetes.io/zone": "us-central1-b", "topology.kubernetes.io/zone": "us-central1-a"},
     "projects/UNSPECIFIED/zones/us-central1-b/disks/pd-1"),  # the beta label first
    ({"topology.kubernetes.io/zone": "us-central1-a__us-central1-b"},
     "projects/UNSPECIFIED/regions/us-central1/disks/pd-1"),
])
def test_gce_pv_handle_follows_the_zone_label(labels, handle):
    pv = bound_volume("pv", "data", labels=labels, in_tree=InTreeVolumeSource(ct.GCE_PD, "pd-1"))
    assert ct.pv_handle(pv) == handle


@pytest.mark.parametrize(("zones", "message"), [
    ("us-central1-a__us-east1-b", "multiple or no regions gotten from zones, got: map[us-central1:{} us-east1:{}]"),
    ("us-central1-a__b", "zone in unexpected format, expected: {locale}-{region}-{zone}, got: b"),
])
def test_gce_pv_zones_without_one_region_are_refused(zones, message):
    pv = bound_volume("pv", "data", labels={"topology.kubernetes.io/zone": zones},
                      in_tree=InTreeVolumeSource(ct.GCE_PD, "pd-1"))
    with pytest.raises(ct.TranslationError) as err:
        ct.pv_handle(pv)
    assert str(err.value) == f"failed to get region from zones: {message}"


@pytest.mark.parametrize(("kind", "ok"), [("Managed", True), ("managed", True), ("Shared", False),
                                          ("Dedicated", False)])
def test_only_managed_azure_disks_translate(kind, ok):
    source = InTreeVolumeSource(ct.AZURE_DISK, "/subscriptions/s/x", kind)
    if ok:
        assert ct.inline_handle(source) == "/subscriptions/s/x"
    else:
        with pytest.raises(ct.TranslationError, match=rf"kind\({kind}\) is not supported in csi migration"):
            ct.inline_handle(source)


@pytest.mark.parametrize(("annotation", "plugin", "on"), [
    ("kubernetes.io/gce-pd", ct.GCE_PD, True),
    ("kubernetes.io/aws-ebs,kubernetes.io/gce-pd", ct.GCE_PD, True),
    ("kubernetes.io/aws-ebs, kubernetes.io/gce-pd", ct.GCE_PD, False),  # taken as written: no trimming
    ("", ct.GCE_PD, False),
    ("kubernetes.io/azure-file", ct.AZURE_FILE, False),  # listed, but its migration is off
])
def test_migrated_plugins_annotation(annotation, plugin, on):
    assert ct.migrated_on_node(csi_node("n1", **{MIGRATED: annotation}), plugin) is on
    assert ct.migrated_on_node(None, plugin) is False


def test_limits_migration_needs_only_a_csi_node():
    assert ct.limits_migration_on(csi_node("n1"), ct.CINDER)
    assert not ct.limits_migration_on(None, ct.CINDER)
    assert not ct.limits_migration_on(csi_node("n1"), ct.VSPHERE)


# -- NodeVolumeLimits ------------------------------------------------------------------------------


def test_inline_volumes_count_against_the_translated_driver():
    there = inline_user("q", ebs("vol-1"), node_name="n1")
    objects = world([host("n1"), host("n2")], [inline_user("p", ebs("aws://zone/vol-2")), there], [], [], [],
                    [csi_node("n1"), csi_node("n2")])
    assert verdicts(open_ssn(objects), "p") == {"n1": [EXCEEDED], "n2": None}


def test_a_disk_shared_with_a_pod_on_the_node_counts_once():
    there = inline_user("q", ebs("vol-1"), node_name="n1")
    objects = world([host("n1")], [inline_user("p", ebs("aws://us-east-1a/vol-1")), there], [], [], [],
                    [csi_node("n1")])
    assert limits_filter(VolumeObjects(objects), objects.pods[0], "n1", [there]) is None
    other = inline_user("r", ebs("vol-2"))
    assert limits_filter(VolumeObjects(objects), other, "n1", [there]) == _status(*EXCEEDED)


def test_without_a_csi_node_inline_volumes_are_not_counted():
    there = inline_user("q", ebs("vol-1"), node_name="n1")
    objects = world([host("n1")], [inline_user("p", ebs("vol-2")), there])
    assert limits_filter(VolumeObjects(objects), objects.pods[0], "n1", [there]) is None


def test_azure_file_and_vsphere_are_never_counted_but_run_the_filter():
    files = inline_user("p", InTreeVolumeSource(ct.AZURE_FILE, "share"), InTreeVolumeSource(ct.VSPHERE, "[ds] v"))
    assert limits_pre_filter(files)
    objects = world([host("n1")], [files], [], [], [],
                    [CSINode("n1", drivers=[CSINodeDriver("file.csi.azure.com", 0),
                                            CSINodeDriver("csi.vsphere.vmware.com", 0)])])
    assert limits_filter(VolumeObjects(objects), files, "n1", []) is None
    assert not limits_pre_filter(pod("x"))


def test_an_inline_volume_the_translator_refuses_is_an_error_where_migration_is_on():
    shared = InTreeVolumeSource(ct.AZURE_DISK, "https://acct.blob.core.windows.net/vhds/d.vhd", "Shared")
    objects = world([host("n1"), host("n2")], [inline_user("p", shared)], [], [], [],
                    [csi_node("n1", driver="disk.csi.azure.com", count=None)])
    assert verdicts(open_ssn(objects), "p") == {
        "n1": [(StatusCode.Error, "converting volume(v0) from inline to csi: kind(Shared) is not supported in "
                                  "csi migration")],
        "n2": None}


def test_an_existing_pods_refused_inline_volume_is_an_error_too():
    there = inline_user("q", ebs("aws://zone/not-a-volume"), node_name="n1")
    objects = world([host("n1")], [inline_user("p", ebs("vol-2")), there], [], [], [], [csi_node("n1", count=5)])
    status = limits_filter(VolumeObjects(objects), objects.pods[0], "n1", [there])
    assert status.code == StatusCode.Error and "Invalid format for AWS volume" in status.reason


def test_the_first_volume_in_spec_order_decides_the_status():
    refused = ebs("aws://zone/bad")
    first = pod("p", group="p", volumes=[PodVolume("c", "missing")], inline_volumes=[InlineVolume("i", refused, 0)])
    second = pod("p", group="p", volumes=[PodVolume("c", "missing")], inline_volumes=[InlineVolume("i", refused, 1)])
    objects = world([host("n1")], [first], [], [], [], [csi_node("n1")])
    assert limits_filter(VolumeObjects(objects), first, "n1", []).code == StatusCode.Error
    assert limits_filter(VolumeObjects(objects), second, "n1", []).code == UAU
    assert [v.name for v in pod_volumes_in_order(first)] == ["i", "c"]
    assert [v.name for v in pod_volumes_in_order(second)] == ["c", "i"]


def test_an_in_tree_pv_counts_with_its_translated_handle():
    pv = bound_volume("pv", "data", in_tree=ebs("aws://us-east-1a/vol-1"))
    there = inline_user("q", ebs("vol-1"), node_name="n1")  # the same disk inline
    user = pod("p", group="p", volumes=[PodVolume("d", "data")])
    objects = world([host("n1")], [user, there], [claim("data", bound_to="pv")], [pv], [local_class()],
                    [csi_node("n1")])
    assert limits_filter(VolumeObjects(objects), user, "n1", [there]) is None
    other = inline_user("q", ebs("vol-9"), node_name="n1")
    assert limits_filter(VolumeObjects(objects), user, "n1", [other]) == _status(*EXCEEDED)


def test_an_in_tree_pv_the_translator_refuses_is_not_counted():
    pv = bound_volume("pv", "data", in_tree=ebs("aws://us-east-1a/bad"))
    other = inline_user("q", ebs("vol-9"), node_name="n1")
    user = pod("p", group="p", volumes=[PodVolume("d", "data")])
    objects = world([host("n1")], [user, other], [claim("data", bound_to="pv")], [pv], [local_class()],
                    [csi_node("n1")])
    assert limits_filter(VolumeObjects(objects), user, "n1", [other]) is None


def _status(code, reason):
    from schedcheck.reference.api.unschedule_info import Status
    return Status(code, reason)


# -- VolumeBinding ---------------------------------------------------------------------------------

GKE_ZONE = "topology.gke.io/zone"
ZONE = "topology.kubernetes.io/zone"


def gce_pv(**extra):
    return bound_volume("pv", "data", in_tree=InTreeVolumeSource(ct.GCE_PD, "pd-1"), **extra)


def test_a_migrated_node_checks_the_translated_zone():
    objects = world([host("n1", **{ZONE: "us-central1-a"}), host("n2", **{ZONE: "us-central1-a", GKE_ZONE: "us-central1-a"}),
                     host("n3", **{ZONE: "us-central1-a"})],
                    [pod("p", group="p", volumes=[PodVolume("d", "data")])], [claim("data", bound_to="pv")],
                    [gce_pv(labels={ZONE: "us-central1-a"})], [local_class()],
                    [csi_node(n, driver="pd.csi.storage.gke.io", count=None, **{MIGRATED: ct.GCE_PD})
                     for n in ("n1", "n2")])  # n3 has no CSINode: the PV is checked untranslated
    assert verdicts(open_ssn(objects), "p") == {
        "n1": [(UAU, "node(s) didn't match PersistentVolume's node affinity")], "n2": None, "n3": None}


def test_the_translated_affinity_renames_the_zone_key_and_the_beta_region():
    terms = [NodeSelectorTerm([NodeSelectorRequirement("failure-domain.beta.kubernetes.io/zone", "In", ["z1"]),
                               NodeSelectorRequirement("failure-domain.beta.kubernetes.io/region", "In", ["r"])])]
    pv = bound_volume("pv", "data", in_tree=ebs("vol-1"))
    pv.node_affinity = terms
    out = ct.translated_pv(pv, csi_node("n1", **{MIGRATED: ct.AWS_EBS}))
    assert [(r.key, r.values) for r in out.node_affinity[0].match_expressions] == [
        ("topology.ebs.csi.aws.com/zone", ["z1"]), ("topology.kubernetes.io/region", ["r"])]
    assert pv.node_affinity[0].match_expressions[0].key == "failure-domain.beta.kubernetes.io/zone"  # a copy
    assert (out.csi_driver, out.csi_volume_handle) == (EBS, "vol-1")
    assert ct.translated_pv(pv, csi_node("n1")) is pv  # not listed: untouched


def test_the_zone_label_is_added_to_every_term():
    terms = [NodeSelectorTerm([NodeSelectorRequirement("kubernetes.io/hostname", "In", ["n1"])]),
             NodeSelectorTerm([NodeSelectorRequirement("kubernetes.io/hostname", "In", ["n2"])])]
    pv = bound_volume("pv", "data", in_tree=InTreeVolumeSource(ct.CINDER, "c-1"), labels={ZONE: " b__a__ "})
    pv.node_affinity = terms
    out = ct.translated_pv(pv, csi_node("n1", **{MIGRATED: ct.CINDER}))
    added = NodeSelectorRequirement("topology.cinder.csi.openstack.org/zone", "In", ["a", "b"])
    assert all(term.match_expressions[-1] == added for term in out.node_affinity)


def test_azure_disk_and_portworx_keep_their_affinity():
    pv = bound_volume("pv", "data", labels={ZONE: "z"},
                      in_tree=InTreeVolumeSource(ct.PORTWORX, "px-1"))
    out = ct.translated_pv(pv, csi_node("n1", **{MIGRATED: ct.PORTWORX}))
    assert out.node_affinity is None and out.csi_driver == "pxd.portworx.com"


def test_a_pv_the_translator_refuses_fails_volume_binding_with_an_error():
    objects = world([host("n1"), host("n2")], [pod("p", group="p", volumes=[PodVolume("d", "data")])],
                    [claim("data", bound_to="pv")], [gce_pv(labels={ZONE: "us-central1-a__us-east1-b"})],
                    [local_class()], [csi_node("n1", driver="pd.csi.storage.gke.io", count=None,
                                               **{MIGRATED: ct.GCE_PD})])
    assert verdicts(open_ssn(objects), "p") == {
        "n1": [(StatusCode.Error, "could not translate pv: failed to get region from zones: multiple or no "
                                  "regions gotten from zones, got: map[us-central1:{} us-east1:{}]")],
        "n2": None}


# -- reader and dump -------------------------------------------------------------------------------

HEAD = """
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: p}
  spec:
    containers: [{name: c}]
    volumes:
"""


def read_volumes(volumes: str):
    return load_scenario_text(HEAD + volumes, "s.yaml")


def test_the_reader_keeps_inline_sources_in_order():
    s = read_volumes("""\
    - {name: a, persistentVolumeClaim: {claimName: c1}}
    - {name: b, gcePersistentDisk: {pdName: pd-1, partition: 3}}
    - {name: c, emptyDir: {}}
    - {name: d, azureDisk: {diskName: d, diskURI: "https://a/vhds/d.vhd"}}
    - {name: e, persistentVolumeClaim: {claimName: c2}}
    - {name: f, cinder: {volumeID: c-1}}
""")
    p = s.objects.pods[0]
    assert [v.name for v in pod_volumes_in_order(p)] == ["a", "b", "d", "e", "f"]
    assert p.inline_volumes[1].source == InTreeVolumeSource(ct.AZURE_DISK, "https://a/vhds/d.vhd", "Shared")
    assert not any("ignored fields" in w for w in s.warnings)
    again = scenario_from_document(scenario_document(s.name, s.objects, s.conf), "dump.yaml")
    assert again.objects.pods[0].inline_volumes == p.inline_volumes
    assert [v.name for v in pod_volumes_in_order(again.objects.pods[0])] == ["a", "b", "d", "e", "f"]


@pytest.mark.parametrize(("volume", "field", "reason"), [
    ("{name: a, awsElasticBlockStore: {}}", "spec.volumes[0].awsElasticBlockStore.volumeID", "missing"),
    ("{name: a, awsElasticBlockStore: {volumeID: v}, gcePersistentDisk: {pdName: p}}",
     "spec.volumes[0].awsElasticBlockStore", "a volume has one source: gcePersistentDisk is set as well"),
    ("{name: a, cinder: {volumeID: v}, emptyDir: {}}", "spec.volumes[0].cinder",
     "a volume has one source: emptyDir is set as well"),
    ("{name: a, gcePersistentDisk: {pdName: p, partition: 256}}", "spec.volumes[0].gcePersistentDisk.partition",
     "must be at most 255, got 256"),
    ("{name: a, gcePersistentDisk: {pdName: p, readOnly: yes-please}}", "spec.volumes[0].gcePersistentDisk.readOnly",
     ""),
    ("{name: a, azureDisk: {diskName: d, diskURI: u, kind: Blob}}", "spec.volumes[0].azureDisk.kind",
     "expected one of Dedicated, Managed, Shared"),
    ("{name: a, azureDisk: {diskName: d, diskURI: /subscriptions/s}}", "spec.volumes[0].azureDisk.diskURI",
     "a Shared disk's URI starts with https://"),
    ("{name: a, azureDisk: {diskName: d, diskURI: https://x, kind: Managed}}", "spec.volumes[0].azureDisk.diskURI",
     "a Managed disk's URI starts with /subscriptions/"),
    ("{name: a, azureDisk: {diskURI: https://x}}", "spec.volumes[0].azureDisk.diskName", "missing"),
    ("{name: a, azureFile: {shareName: s}}", "spec.volumes[0].azureFile.secretName", "missing"),
    ("{name: a, vsphereVolume: {volumePath: 3}}", "spec.volumes[0].vsphereVolume.volumePath", "expected a string"),
])
def test_bad_inline_sources_are_one_line_errors(volume, field, reason):
    with pytest.raises(ScenarioError) as err:
        read_volumes(f"    - {volume}\n")
    assert err.value.field == field and reason in err.value.reason
    assert "\n" not in str(err.value) and "s.yaml" in str(err.value) and "Pod default/p" in str(err.value)


def test_the_reader_reads_a_pvs_in_tree_source_and_refuses_a_second_one():
    doc = """
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: PersistentVolume
  metadata: {name: pv}
  spec: {portworxVolume: {volumeID: px-1}%s}
"""
    s = load_scenario_text(doc % "", "s.yaml")
    assert s.objects.persistent_volumes[0].in_tree == InTreeVolumeSource(ct.PORTWORX, "px-1")
    again = scenario_from_document(scenario_document(s.name, s.objects, s.conf), "dump.yaml")
    assert again.objects.persistent_volumes[0].in_tree == s.objects.persistent_volumes[0].in_tree
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(doc % ", csi: {driver: d, volumeHandle: h}", "s.yaml")
    assert (err.value.field, err.value.reason) == ("spec.portworxVolume", "a volume has one source: csi is set as well")

"""deviceshare's vGPU modes (MIG, MPS), the device ConfigMap and the node lock (reference_impl/api/devices:
mig.py, config.py, nodelock.py; schedcheck/scenario/device_config.py). The MIG cases re-derive upstream's
table tests of api/devices/nvidia/vgpu mig_test.go (findMatch, addMigUsed / subMigUsed, the memory factor)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.reference.api.devices import mig, node_devices, vgpu
from schedcheck.reference.api.devices.base import DeviceFlags
from schedcheck.reference.api.devices.config import (DEFAULT_CONFIG, DeviceConfigError, Geometry, MigTemplate,
                                                     NvidiaConfig, parse_device_config)
from schedcheck.reference.api.devices.nodelock import lock_node, parse_rfc3339_ns
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario

HERE = Path(__file__).resolve().parent / "scenarios"


def group(name: str, *instances: tuple[str, int, int]) -> Geometry:
    return Geometry(name, tuple(MigTemplate(*i) for i in instances))


def card(template: tuple[Geometry, ...], index: int = -1, usage=()) -> vgpu.GPUDevice:
    dev = vgpu.GPUDevice(0, "gpu-1", 10, 81920, "NVIDIA-A100", True)
    dev.mig_template = template
    dev.mig_usage = mig.MigInUse(index, [mig.MigUsage(n, m, list(u)) for n, m, u in usage])
    return dev


# -- findMatch ---------------------------------------------------------------------------------------------

ONE_G = group("default", ("1g.10gb", 10240, 2))


@pytest.mark.parametrize("request_mem,template,usage,index,want", [
    # the group in use has the instance kind in use with an index free, big enough: its lowest free index
    (10, (ONE_G,), [("1g.10gb", 10240, [])], 0, (True, "gpu-1[default-0]", 10240)),
    # nothing in the group is big enough
    (20000, (group("default", ("1g.10gb", 10, 1)),), [("1g.10gb", 10, [])], 0, (False, "", 0)),
    # the group in use has no instance at all
    (10, (Geometry("", ()),), [], 0, (False, "", 0)),
    # the instance kind in use is not one of the group's (the group's own kind is never opened)
    (20, (group("default", ("2g.20gb", 20, 1)),), [("1g.10gb", 10, [])], 0, (False, "", 0)),
    # every index of the kind in use is taken
    (10, (group("default", ("1g.10gb", 10, 1)),), [("1g.10gb", 10, [0])], 0, (False, "", 0)),
    # no group in use: the first group with an instance big enough, whatever its name
    (20, (group("group1", ("1g.10gb", 10, 1)), group("group2", ("2g.20gb", 24, 1))), [], -1,
     (True, "gpu-1[group2-0]", 24)),
    # a request below the instance's memory still takes it
    (5, (group("default", ("1g.10gb", 10, 1)),), [("1g.10gb", 10, [])], 0, (True, "gpu-1[default-0]", 10)),
])
def test_find_match_follows_the_group_in_use_and_the_kinds_in_use(request_mem, template, usage, index, want):
    usage_obj = mig.MigInUse(index, [mig.MigUsage(n, m, list(u)) for n, m, u in usage])
    assert mig.find_match("gpu-1", request_mem, usage_obj, template) == want


def test_position_counts_the_instances_before_the_kind_and_takes_the_lowest_free_index():
    g = group("group2", ("2g.20gb", 20480, 3), ("1g.10gb", 10240, 1))
    # smallest first: 1g.10gb (index 1) comes after the three 2g.20gb: position 3
    assert mig.pick_from_group(g, [], 5000) == (True, 3, 10240)
    assert mig.pick_from_group(g, [mig.MigUsage("2g.20gb", 20480, [0, 1])], 15000) == (True, 2, 20480)
    assert mig.find_position(g, 3) == (1, 0) and mig.find_position(g, 4) == (-1, -1)


def test_mig_ids_decode_only_with_one_dash_and_an_integer_position():
    assert mig.decode_mig_id("GPU-0fc3[group2-3]") == ("group2", 3)
    assert mig.decode_mig_id("GPU-0fc3[group-a-1]") is None  # a dash in the group name: upstream refuses it
    assert mig.decode_mig_id("GPU-0fc3[group2-x]") is None
    assert mig.decode_mig_id("GPU-0fc3]group2-1[") is None
    assert mig.encode_mig_id("GPU-1", "g", 0) == "GPU-1[g-0]"


# -- addMigUsed / subMigUsed -------------------------------------------------------------------------------

def test_add_then_sub_gives_the_instance_memory_and_empties_the_usage():
    dev = card((group("group-a", ("1g.10gb", 10240, 2)),))
    assert mig.add_mig_used(dev, "group-a", 1) == 10240
    assert dev.mig_usage.index == 0 and [(u.name, u.used_index) for u in dev.mig_usage.usage_list] == [("1g.10gb", [1])]
    assert mig.sub_mig_used(dev, "group-a", 1) == 10240
    assert dev.mig_usage.usage_list == []


def test_adding_an_index_twice_charges_twice_but_records_it_once():
    dev = card((group("group-b", ("2g.20gb", 20480, 3)),))
    assert mig.add_mig_used(dev, "group-b", 2) == 20480
    assert mig.add_mig_used(dev, "group-b", 2) == 20480  # upstream's insert leaves the list alone
    assert dev.mig_usage.usage_list[0].used_index == [2]
    assert mig.sub_mig_used(dev, "group-b", 2) == 20480 and dev.mig_usage.usage_list == []


def test_sub_from_an_unused_kind_or_unknown_group_gives_zero():
    dev = card((group("group-c", ("3g.30gb", 30720, 1)),))
    assert mig.sub_mig_used(dev, "group-c", 0) == 0
    assert dev.mig_usage.index == 0  # the sub made the group the card's, as upstream's does
    assert mig.add_mig_used(dev, "nonexistent", 0) == 0 and dev.mig_usage.index == 0
    assert mig.add_mig_used(dev, "group-c", 5) is None  # upstream panics (index -1)


# -- the pool in MIG mode ----------------------------------------------------------------------------------

TEMPLATE = (group("group1", ("1g.10gb", 10240, 2), ("2g.20gb", 20480, 1)),)


def mig_pool(factor: int = 0) -> vgpu.GPUDevices:
    cfg = NvidiaConfig(gpu_memory_factor=factor)
    flags = DeviceFlags(vgpu=True, config=dataclasses.replace(DEFAULT_CONFIG, nvidia=cfg))
    return vgpu.GPUDevices("n1", {0: card(TEMPLATE)}, flags, mig.MIG)


@pytest.mark.parametrize("factor,request_mem,want_id,want_used", [
    (1, 10, "gpu-1[group1-0]", 10240),  # 1g.10gb, charged its own memory
    (2, 6144, "gpu-1[group1-2]", 10240),  # 6144 * 2 > 10240: 2g.20gb (position 2), charged 20480 / 2
])
def test_try_add_pod_scales_the_request_by_the_memory_factor(factor, request_mem, want_id, want_used):
    pool = mig_pool(factor)
    dev = pool.devices[0]
    assert pool._try_add_pod(dev, request_mem, 50) == (True, want_id)
    assert (dev.used_num, dev.used_mem, dev.used_core) == (1, want_used, 50)
    assert dev.mig_usage.usage_list == []  # TryAddPod leaves the instance usage alone (docs/findings.md #35)


def test_add_resource_reads_the_instance_from_the_annotation_and_sub_resource_gives_it_back():
    pool = mig_pool(2)
    pod = type("P", (), {})()
    pod.uid, pod.namespace, pod.name = "u1", "ns", "p"
    pod.annotations = {vgpu.ASSIGNED_IDS: "gpu-1[group1-2],NVIDIA,6144,0:"}
    pool.add_resource(pod)
    dev = pool.devices[0]
    assert (dev.used_num, dev.used_mem) == (1, 10240) and dev.mig_usage.index == 0
    assert pool.device_ids() >= {"gpu-1", "gpu-1[group1-0]", "gpu-1[group1-2]"}
    assert {e["id"]: (e["used_num"], e["number"]) for e in pool.ledger()}["gpu-1[group1:2g.20gb]"] == (1, 1)
    pool.sub_resource(pod)
    assert (dev.used_num, dev.used_mem, dev.mig_usage.usage_list, dev.pods) == (0, 0, [], {})


def test_the_pool_mode_is_the_last_cards_and_mps_is_hami_core():
    cfg = NvidiaConfig(mig_geometries_list=(mig_config := __import__(
        "schedcheck.reference.api.devices.config", fromlist=["x"]).AllowedMigGeometries(("A100",), TEMPLATE),))
    assert mig_config.models == ("A100",)
    devices, mode = vgpu.decode_node_devices_and_mode("a,10,100,NVIDIA-A100,true,mig:b,10,100,NVIDIA-A100,true,mps:", cfg)
    assert mode == mig.HAMI_CORE and devices[0].mig_template == TEMPLATE and devices[1].mig_template == ()
    devices, mode = vgpu.decode_node_devices_and_mode("a,10,100,NVIDIA-A100,true,hami-core:b,10,100,NVIDIA-A100,true,mig:", cfg)
    assert mode == mig.MIG and devices[0].mig_template == ()
    _, mode = vgpu.decode_node_devices_and_mode("a,10,100,NVIDIA-H100,true,mig:", cfg)
    assert mode == mig.HAMI_CORE  # no model names the type: fallback
    _, mode = vgpu.decode_node_devices_and_mode("a,10,100,NVIDIA-A100,true,mig:")  # the default config
    assert mode == mig.HAMI_CORE


# -- the device ConfigMap ----------------------------------------------------------------------------------

CM_HEAD = """apiVersion: schedcheck/v1
kind: Scenario
schedulerConf:
  actions: allocate
  tiers:
  - plugins:
    - name: deviceshare
      arguments: {deviceshare.VGPUEnable: true}
objects:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: volcano-vgpu-device-config, namespace: kube-system}
  data:
    device-config.yaml: |
"""


def load_text(tmp_path, body: str):
    path = tmp_path / "s.yaml"
    path.write_text(CM_HEAD + "".join("      " + line + "\n" for line in body.splitlines()))
    return load_scenario(path)


def test_the_configmap_is_decoded_and_replaces_the_default_whole(tmp_path):
    scenario = load_text(tmp_path, "nvidia:\n  resourceMemoryName: example.com/mem\n  gpuMemoryFactor: 2\n  bogus: 1")
    (cm,) = scenario.objects.config_maps
    assert (cm.namespace, cm.name) == ("kube-system", "volcano-vgpu-device-config")
    config = parse_device_config(cm.data["device-config.yaml"], "x")
    assert config.nvidia.resource_memory_name == "example.com/mem" and config.nvidia.resource_count_name == ""
    assert config.nvidia.gpu_memory_factor == 2
    assert any("keys not read by the scheduler: nvidia.bogus" in w for w in scenario.warnings)


@pytest.mark.parametrize("body,field", [
    ("nvidia:\n  gpuMemoryFactor: -1", "data.device-config.yaml.nvidia.gpuMemoryFactor"),
    ("nvidia:\n  knownMigGeometries:\n  - models: [A100]\n    allowedGeometries:\n    - group: g\n      geometries:\n"
     "      - {name: a, memory: big, count: 1}", "data.device-config.yaml.nvidia.knownMigGeometries[0]"
     ".allowedGeometries[0].geometries[0].memory"),
    ("nvidia: [1, 2]", "data.device-config.yaml.nvidia"),
    ("nvidia:\n  resourceCountName: {a: 1}", "data.device-config.yaml.nvidia.resourceCountName"),
    ("nvidia: {a: [}", "data.device-config.yaml"),
])
def test_a_device_config_upstream_refuses_is_a_warning_naming_file_object_and_field_and_the_default_applies(
        tmp_path, body, field):
    scenario = load_text(tmp_path, body)
    (text,) = [w for w in scenario.warnings if "ConfigMap kube-system/volcano-vgpu-device-config" in w]
    assert "\n" not in text and "s.yaml" in text and f"{field}:" in text and "default device config" in text
    from schedcheck.reference.api.devices.config import load_device_config

    assert load_device_config(scenario.objects.config_maps, "volcano-vgpu-device-config",
                              "kube-system") is DEFAULT_CONFIG


def test_the_cache_reads_the_configmap_the_conf_names_else_the_default():
    scenario = load_scenario(HERE / "deviceshare-vgpu-configmap-resource-names.yaml")
    assert any("ConfigMap kube-system/volcano-vgpu-device-config: not read" in w for w in scenario.warnings)
    result = run_scenario(scenario)
    assert result.binds == {"ml/fits-0": "v1"}
    without = load_scenario(HERE / "deviceshare-vgpu-configmap-without-key.yaml")
    assert not any("ConfigMap" in w for w in without.warnings)  # named, without the key: upstream's default


# -- the node lock -----------------------------------------------------------------------------------------

NOW = parse_rfc3339_ns("2025-03-01T00:10:00Z")


@pytest.mark.parametrize("held,err,after", [
    (None, None, "2025-03-01T00:10:00Z"),
    ("2025-03-01T00:04:59Z", None, "2025-03-01T00:10:00Z"),  # older than five minutes: taken over
    ("2025-03-01T00:05:00Z", "node n1 has been locked within 5 minutes", "2025-03-01T00:05:00Z"),
    ("2025-03-01T00:11:00Z", "node n1 has been locked within 5 minutes", "2025-03-01T00:11:00Z"),
    ("yesterday", 'parsing time "yesterday"', "yesterday"),
])
def test_lock_node_takes_a_free_or_expired_lock_and_refuses_a_young_or_unreadable_one(held, err, after):
    annotations = {} if held is None else {"hamivgpu": held}
    got = lock_node(annotations, "n1", "hamivgpu", NOW)
    assert (got is None) == (err is None) and (err is None or got.startswith(err))
    assert annotations["hamivgpu"] == after


def test_rfc3339_offsets_and_fractions_read_as_go_does():
    assert parse_rfc3339_ns("2025-03-01T01:10:00+01:00") == NOW
    assert parse_rfc3339_ns("2025-03-01T00:10:00.5Z") == NOW + 500_000_000
    assert parse_rfc3339_ns("2025-03-01 00:10:00Z") is None


# -- the device invariants on MIG --------------------------------------------------------------------------

def _engine(name: str, rules: list[str]) -> InvariantEngine:
    engine = InvariantEngine(only=rules)
    run_scenario(load_scenario(HERE / name), engine=engine)
    return engine


def test_within_capacity_reports_one_mig_instance_given_twice_as_the_known_finding_f33():
    engine = _engine("deviceshare-vgpu-mig-same-instance-twice.yaml", ["device.within-capacity"])
    assert engine.violations == []
    assert [(f.invariant, f.known) for f in engine.findings] == [("device.within-capacity", "F35")]


def test_within_capacity_passes_distinct_mig_instances():
    engine = _engine("deviceshare-vgpu-mig-group-in-use.yaml", ["device.within-capacity", "device.assigned-exists"])
    assert engine.violations == [] and engine.findings == []


def test_within_capacity_fires_when_a_free_index_is_not_looked_for(monkeypatch):
    # a pick that ignores the indexes in use: small-0 is given held-0's instance GPU-m0[group1-0]
    original = mig.pick_from_group
    monkeypatch.setattr(mig, "pick_from_group", lambda g, usage, request: original(
        g, [mig.MigUsage(u.name, u.memory, []) for u in usage], request))
    engine = _engine("deviceshare-vgpu-mig-group-in-use.yaml", ["device.within-capacity"])
    assert [v.message for v in engine.violations] == [
        "node m1 MIG instance GPU-m0[group1-0] is held by 2 pods: ml/held-0, ml/small-0"]


def test_the_ledger_counts_a_mig_kind_beyond_its_instances():
    from schedcheck.invariants.catalog.devices import device_excess

    pool = mig_pool()
    dev = pool.devices[0]
    dev.mig_usage = mig.MigInUse(0, [mig.MigUsage("1g.10gb", 10240, [0, 1, 2])])  # the kind has 2
    assert device_excess(pool) == {("gpu-1[group1:1g.10gb]", "tasks"): 1}
    dev.mig_usage.usage_list[0].used_index = [0, 1]
    assert device_excess(pool) == {}


def test_assigned_exists_fires_on_a_mig_instance_the_card_does_not_have(monkeypatch):
    original = mig.find_match

    def beyond(uuid, request, usage, template):
        found, dev_id, memory = original(uuid, request, usage, template)
        return found, dev_id.replace("-1]", "-41]"), memory

    monkeypatch.setattr(mig, "find_match", beyond)
    engine = _engine("deviceshare-vgpu-mig-group-in-use.yaml", ["device.assigned-exists"])
    assert [v.message.split(",")[0] for v in engine.violations] == [
        "pod ml/small-0 bound to m1 was given device GPU-m0[group1-41]"]


def test_node_devices_give_mig_pools_only_with_a_geometry():
    scenario = load_scenario(HERE / "deviceshare-vgpu-mig-beyond-every-instance.yaml")
    from schedcheck.reference.api.devices.config import load_device_config
    config = load_device_config(scenario.objects.config_maps, "volcano-vgpu-device-config", "kube-system")
    flags = DeviceFlags(vgpu=True, config=config)
    modes = {n.name: node_devices(n, flags)[vgpu.DEVICE_NAME].mode for n in scenario.objects.nodes}
    assert modes == {"m1": mig.MIG, "h1": mig.HAMI_CORE}


def test_device_config_errors_carry_the_field():
    with pytest.raises(DeviceConfigError) as err:
        parse_device_config("nvidia:\n  deviceSplitCount: ten\n", "x")
    assert err.value.field == "data.device-config.yaml.nvidia.deviceSplitCount"


def test_a_mig_position_beyond_its_group_is_refused_in_one_line_as_upstream_panics(tmp_path):
    """group1 holds 7 instances (positions 0-6): position 7 makes upstream's addMigUsed index -1 and panic."""
    from schedcheck.scenario.errors import ScenarioError

    text = (HERE / "deviceshare-vgpu-mig-group-in-use.yaml").read_text(encoding="utf-8")
    assert "GPU-m0[group1-0]" in text
    load_scenario(HERE / "deviceshare-vgpu-mig-group-in-use.yaml")  # position 0: read
    broken = tmp_path / "beyond.yaml"
    broken.write_text(text.replace("GPU-m0[group1-0]", "GPU-m0[group1-7]"), encoding="utf-8")
    with pytest.raises(ScenarioError) as err:
        load_scenario(broken)
    message = str(err.value)
    assert "\n" not in message and str(broken) in message and "Pod " in message
    assert "volcano.sh/vgpu-ids-new" in message and "panics" in message

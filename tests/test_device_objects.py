"""deviceshare's inputs and device pools: what is read, what is warned about, what is refused in one line,
and the pools' own arithmetic (reference_impl/api/devices)."""

from __future__ import annotations

from typing import Any

import pytest

from schedcheck.reference.api.devices import DeviceFlags, gpushare, node_devices, vgpu
from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.plugins.deviceshare import device_flags, flags_from_arguments
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.loader import scenario_from_document

SHARE = DeviceFlags(gpu_sharing=True)
NUMBER = DeviceFlags(gpu_number=True)
VGPU = DeviceFlags(vgpu=True)


def wrap(*objects: dict[str, Any], conf: dict | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {"apiVersion": "schedcheck/v1", "kind": "Scenario", "objects": list(objects)}
    if conf is not None:
        doc["schedulerConf"] = conf
    return doc


def node(name: str = "n1", annotations: dict | None = None, resources: dict | None = None) -> dict[str, Any]:
    values = {"cpu": "8", "memory": "32Gi", "pods": "110", **(resources or {})}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "annotations": annotations or {}},
            "status": {"capacity": values, "allocatable": values}}


def pod(name: str, limits: dict[str, str], annotations: dict | None = None, node_name: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}, "limits": limits}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}",
                         "annotations": {"scheduling.k8s.io/group-name": "g", **(annotations or {})}},
            "spec": spec, "status": {"phase": "Running" if node_name else "Pending"}}


def load(*objects: dict[str, Any], conf: dict | None = None):
    return scenario_from_document(wrap(*objects, conf=conf), "s.yaml")


def test_limits_are_read_apart_from_requests() -> None:
    scenario = load(node(), pod("p", {"volcano.sh/gpu-memory": "4000"}))
    container = scenario.objects.pods[0].containers[0]
    assert str(container.limits["volcano.sh/gpu-memory"]) == "4k"
    assert set(container.requests) == {"cpu", "volcano.sh/gpu-memory"}  # API defaulting: the limit is requested


def test_a_malformed_device_quantity_is_one_line_naming_the_field() -> None:
    with pytest.raises(ScenarioError) as err:
        load(node(), pod("p", {"volcano.sh/vgpu-memory": "2 GB"}))
    assert "Pod ns/p: spec.containers[0].resources.limits.volcano.sh/vgpu-memory" in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("arguments, reason", [
    ({"deviceshare.GPUSharingEnable": True, "deviceshare.GPUNumberEnable": True}, "both gpu sharing and gpu number"),
    ({"deviceshare.GPUNumberEnable": True, "deviceshare.VGPUEnable": True}, "gpu-share and vgpu"),
])
def test_switches_upstream_exits_on_are_refused(arguments, reason) -> None:
    conf = {"actions": "allocate", "tiers": [{"plugins": [{"name": "deviceshare", "arguments": arguments}]}]}
    with pytest.raises(ScenarioError) as err:
        load(node(), conf=conf)
    assert reason in str(err.value) and "tiers[0].plugins[0].arguments" in str(err.value)


def test_switches_accumulate_over_entries_as_upstream_package_variables() -> None:
    conf = {"actions": "allocate", "tiers": [{"plugins": [
        {"name": "deviceshare", "arguments": {"deviceshare.VGPUEnable": True}},
        {"name": "deviceshare", "arguments": {"deviceshare.GPUSharingEnable": True}}]}]}
    with pytest.raises(ScenarioError, match="gpu-share and vgpu"):
        load(node(), conf=conf)
    single = load(node(), conf={"actions": "allocate", "tiers": [{"plugins": [
        {"name": "deviceshare", "arguments": {"deviceshare.VGPUEnable": True, "deviceshare.SchedulePolicy": "spread"}}]}]})
    assert device_flags(single.conf) == DeviceFlags(vgpu=True, schedule_policy="spread")
    assert flags_from_arguments({}, VGPU).vgpu  # an absent key leaves the switch alone


def test_malformed_device_annotations_and_unmodelled_switches_are_warned_by_name() -> None:
    conf = {"actions": "allocate", "tiers": [{"plugins": [{"name": "deviceshare", "arguments": {
        "deviceshare.VGPUEnable": True, "deviceshare.NodeLockEnable": True, "deviceshare.GPUExclusiveRules": "app"}}]}]}
    scenario = load(node(annotations={"volcano.sh/node-vgpu-register": "GPU-0,10,16000:",
                                      "volcano.sh/gpu-unhealthy-ids": "1,x"}),
                    node("n2", annotations={"volcano.sh/node-vgpu-register": "GPU-1,10,16000,NVIDIA,true,mig:"}),
                    pod("p", {}, {"volcano.sh/gpu-index": "a", "volcano.sh/vgpu-ids-new": "GPU-0,NVIDIA,x,0:"}),
                    conf=conf)
    text = "\n".join(scenario.warnings)
    assert "Node n1: metadata.annotations.volcano.sh/node-vgpu-register: not a list" in text
    assert "Node n2" not in text  # a mig card of no known type is hami-core, as upstream, silently
    assert "volcano.sh/gpu-unhealthy-ids: '1,x'" in text
    assert "Pod ns/p: metadata.annotations.volcano.sh/gpu-index: 'a'" in text
    assert "Pod ns/p: metadata.annotations.volcano.sh/vgpu-ids-new: 1 of 1" in text
    assert "NodeLockEnable" not in text and "GPUExclusiveRules: not a list" in text


def _k8s(*objects):
    scenario = load(*objects)
    return scenario.objects


def test_gpushare_cards_split_capacity_and_skip_unhealthy_ids() -> None:
    objects = _k8s(node(annotations={"volcano.sh/gpu-unhealthy-ids": "1"},
                        resources={"volcano.sh/gpu-memory": "30000", "volcano.sh/gpu-number": "3"}))
    pool = node_devices(objects.nodes[0], SHARE)[gpushare.DEVICE_NAME]
    assert {i: d.memory for i, d in pool.devices.items()} == {0: 10000, 2: 10000}
    assert node_devices(objects.nodes[0], DeviceFlags()) == {}


def test_node_ledger_keeps_pools_in_step_on_add_remove_and_clone() -> None:
    objects = _k8s(node(resources={"volcano.sh/gpu-memory": "16000", "volcano.sh/gpu-number": "2"}),
                   pod("a", {"volcano.sh/gpu-memory": "6000"}, {"volcano.sh/gpu-index": "1"}, node_name="n1"))
    info = NodeInfo(objects.nodes[0])
    info.set_others(node_devices(objects.nodes[0], SHARE))
    task = TaskInfo(objects.pods[0])
    info.add_task(task)
    pool = info.others[gpushare.DEVICE_NAME]
    assert pool.devices[1].used_memory() == 6000 and pool.devices[0].used_memory() == 0
    copy = info.clone()
    copy.remove_task(task)
    assert copy.others[gpushare.DEVICE_NAME].devices[1].used_memory() == 0
    assert pool.devices[1].used_memory() == 6000  # the clone's pools are its own
    releasing = TaskInfo(objects.pods[0])
    releasing.status = TaskStatus.Releasing
    other = NodeInfo(objects.nodes[0])
    other.set_others(node_devices(objects.nodes[0], SHARE))
    other.add_task(releasing)  # upstream's AddTask charges no device for a Releasing task
    assert other.others[gpushare.DEVICE_NAME].devices[1].used_memory() == 0


def test_gpushare_filter_reasons_and_allocation() -> None:
    objects = _k8s(node(resources={"volcano.sh/gpu-memory": "8000", "volcano.sh/gpu-number": "2"}),
                   pod("big", {"volcano.sh/gpu-memory": "5000"}), pod("two", {"volcano.sh/gpu-number": "2"}))
    big, two = objects.pods
    share = node_devices(objects.nodes[0], SHARE)[gpushare.DEVICE_NAME]
    assert share.filter_node(big, "") == (2, "GpuShare no enough gpu memory on node n1",
                                          "no enough gpu memory on node n1")
    number = node_devices(objects.nodes[0], NUMBER)[gpushare.DEVICE_NAME]
    annotations, err = number.allocate(two, 5)
    assert err is None and annotations == {gpushare.PREDICATE_TIME: "5", gpushare.GPU_INDEX: "0,1"}
    assert number.filter_node(two, "")[1] == "GpuNumber no enough gpu number on node n1"


REGISTER = "GPU-a,10,16000,NVIDIA-A100,true,hami-core:GPU-b,10,8000,NVIDIA-A100,true,hami-core:"


def _vgpu_node():
    return node(annotations={"volcano.sh/node-vgpu-register": REGISTER},
                resources={"volcano.sh/vgpu-number": "20", "volcano.sh/vgpu-memory": "24000",
                           "volcano.sh/vgpu-cores": "200"})


def test_vgpu_pool_needs_registration_and_non_zero_allocatable() -> None:
    objects = _k8s(_vgpu_node(), node("bare", annotations={"volcano.sh/node-vgpu-register": REGISTER}))
    pool = node_devices(objects.nodes[0], VGPU)[vgpu.DEVICE_NAME]
    assert [(d.uuid, d.number, d.memory) for d in pool.devices.values()] == [("GPU-a", 10, 16000), ("GPU-b", 10, 8000)]
    assert node_devices(objects.nodes[1], VGPU) == {}  # no vgpu-number / -memory / -cores allocatable


def test_vgpu_allocation_charges_cards_and_release_reads_the_pod_annotations() -> None:
    objects = _k8s(_vgpu_node(), pod("p", {"volcano.sh/vgpu-number": "2", "volcano.sh/vgpu-memory": "6000",
                                           "volcano.sh/vgpu-cores": "30"}))
    pool = node_devices(objects.nodes[0], VGPU)[vgpu.DEVICE_NAME]
    p = objects.pods[0]
    assert pool.filter_node(p, "binpack")[0] == 0 and pool.score_node(p, "binpack") == pytest.approx(
        100 * 6000 / 16000 + 100 * 6000 / 8000)
    annotations, err = pool.allocate(p, 2 * 10**9)
    assert err is None and annotations[vgpu.ASSIGNED_IDS] == "GPU-b,NVIDIA,6000,30:GPU-a,NVIDIA,6000,30:"
    assert [(d.used_num, d.used_mem, d.used_core) for d in pool.devices.values()] == [(1, 6000, 30), (1, 6000, 30)]
    pool.release(p)  # the pod's own annotations do not name the cards: nothing given back (docs/findings.md 28)
    assert pool.devices[0].used_mem == 6000
    p.annotations[vgpu.ASSIGNED_IDS] = annotations[vgpu.ASSIGNED_IDS]
    pool.sub_resource(p)
    assert [(d.used_num, d.used_mem, d.used_core) for d in pool.devices.values()] == [(0, 0, 0), (0, 0, 0)]
    too_many = _k8s(_vgpu_node(), pod("q", {"volcano.sh/vgpu-number": "3"})).pods[0]
    assert pool.filter_node(too_many, "")[2] == "no enough gpu cards on node n1"


def test_vgpu_spread_score_is_zero_after_the_tentative_placement() -> None:
    objects = _k8s(_vgpu_node(), pod("p", {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "1000"}))
    pool = node_devices(objects.nodes[0], VGPU)[vgpu.DEVICE_NAME]
    assert pool.filter_node(objects.pods[0], "spread")[0] == 0 and pool.score_node(objects.pods[0], "spread") == 0.0


def test_queue_status_counts_a_vgpu_pod_by_its_cards() -> None:
    """addNodeSharableDeviceUsage: a running vGPU pod's memory and cores in its queue's status.allocated are
    the sums over its cards (2 x 6000), not its per-card request (6000)."""
    from schedcheck.reference.scheduler import Scheduler

    running = pod("r", {"volcano.sh/vgpu-number": "2", "volcano.sh/vgpu-memory": "6000", "volcano.sh/vgpu-cores": "30"},
                  {"volcano.sh/vgpu-ids-new": "GPU-a,NVIDIA,6000,30:GPU-b,NVIDIA,6000,30:"}, node_name="n1")
    group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
             "metadata": {"name": "g", "namespace": "ns"}, "spec": {"minMember": 1, "queue": "default"},
             "status": {"phase": "Running"}}
    conf = {"actions": "allocate", "tiers": [{"plugins": [{"name": "predicates"},
                                                         {"name": "deviceshare", "arguments": {"deviceshare.VGPUEnable": True}}]}]}
    for arguments, memory in (({"deviceshare.VGPUEnable": True}, "12k"), ({}, "6k")):
        conf["tiers"][0]["plugins"][1]["arguments"] = arguments
        scenario = load(_vgpu_node(), running, group, conf=conf)
        scheduler = Scheduler(scenario.objects, scenario.conf)
        scheduler.run(1)
        queue = next(q for q in scheduler.cache.world.queues if q.name == "default")
        assert str(queue.status_allocated["volcano.sh/vgpu-memory"]) == memory

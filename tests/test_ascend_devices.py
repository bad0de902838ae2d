"""HAMi Ascend vNPU (reference_impl/api/devices/ascend_hami.py): what is read from nodes and pods, what is
warned about or refused in one line, and the pool's arithmetic (templates, fit, score, allocation, release)."""

from __future__ import annotations

import json

import pytest

from schedcheck.reference.api.devices import DeviceFlags, ascend_hami, node_devices
from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.resource_info import IGNORED_DEVICES
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.plugins.deviceshare import device_flags, flags_from_arguments
from schedcheck.scenario.errors import ScenarioError
from tests.test_device_objects import load, node, pod

ASCEND = DeviceFlags(ascend_hami=True)
REG = "hami.io/node-register-Ascend310P"
ALLOCATED = "hami.io/Ascend310P-devices-allocated"
NPU, MEM, CORE = "huawei.com/Ascend310P", "huawei.com/Ascend310P-memory", "huawei.com/Ascend310P-core"


def register(*devices: tuple[str, int, int, int]) -> str:
    return json.dumps([{"id": i, "count": c, "devmem": m, "devcore": k} for i, c, m, k in devices])


def npu_node(name: str = "n1", devices=(("d0", 7, 21527, 8), ("d1", 7, 21527, 8)), extra: dict | None = None):
    return node(name, annotations={REG: register(*devices), **(extra or {})}, resources={NPU: "14"})


def pool_of(*objects):
    scenario = load(*objects)
    return node_devices(scenario.objects.nodes[0], ASCEND)["Ascend310P"], scenario.objects.pods


def test_the_switch_is_read_by_its_upstream_name_and_registers_the_configured_kind() -> None:
    flags = flags_from_arguments({"deviceshare.AscendHAMiVNPUEnable": True})
    assert flags.ascend_hami and flags.any and flags.registered() == ["Ascend310P"]
    conf = {"actions": "allocate", "tiers": [{"plugins": [{"name": "deviceshare",
                                                           "arguments": {"deviceshare.AscendHAMiVNPUEnable": True}}]}]}
    scenario = load(npu_node(), conf=conf)
    assert device_flags(scenario.conf).ascend_hami
    assert not any("AscendHAMiVNPUEnable" in w for w in scenario.warnings)  # modelled: no longer warned about


def test_registration_is_read_with_go_json_rules() -> None:
    devices, _ = ascend_hami.decode_node_devices('[{"ID":"a","Count":7,"devmem":100,"unknown":1,"health":null}]')
    assert [(d.id, d.count, d.devmem) for d in devices] == [("a", 7, 100)]
    for text in ('[{"id":"a","devmem":1.0}]', '[{"id":"a","devmem":2147483648}]', '[{"id":3}]', '{"id":"a"}',
                 "[]", "null", "not json", '[{"id":"a","index":-1}]'):
        assert ascend_hami.decode_node_devices(text)[0] is None, text


def test_pool_needs_non_zero_allocatable_and_a_readable_registration() -> None:
    scenario = load(npu_node(), node("bare", annotations={REG: register(("x", 7, 21527, 8))}),
                    node("zero", annotations={REG: register(("x", 7, 21527, 8))}, resources={NPU: "0"}),
                    node("bad", annotations={REG: "[1]"}, resources={NPU: "7"}))
    pools = [node_devices(n, ASCEND) for n in scenario.objects.nodes]
    assert list(pools[0]) == ["Ascend310P"] and list(pools[0]["Ascend310P"].devices) == ["d0", "d1"]
    assert pools[1:] == [{}, {}, {}]
    assert node_devices(scenario.objects.nodes[0], DeviceFlags()) == {}
    text = "\n".join(scenario.warnings)
    assert f"Node bad: metadata.annotations.{REG}: entry 0 is not an object: upstream refuses the list" in text


def test_a_null_registration_entry_is_refused_in_one_line() -> None:
    with pytest.raises(ScenarioError) as err:
        load(node(annotations={REG: "[null]"}, resources={NPU: "7"}))
    assert f"Node n1: metadata.annotations.{REG}: entry 0 is null" in str(err.value) and "\n" not in str(err.value)


def test_pod_annotation_and_zero_count_warnings() -> None:
    scenario = load(npu_node(), pod("p", {NPU: "0"}, {ALLOCATED: "d0,Ascend310P,3072:;"}))
    text = "\n".join(scenario.warnings)
    assert f"Pod ns/p: metadata.annotations.{ALLOCATED}: an entry has fewer than four fields" in text
    assert f"Pod ns/p: spec.containers[0].resources.limits.{NPU}: 0: upstream still places" in text


@pytest.mark.parametrize("asked, trimmed", [(0, 3072), (1, 3072), (3072, 3072), (3073, 6144), (6145, 12288),
                                            (12289, 21527), (24576, 21527), (24577, 0)])
def test_memory_is_rounded_to_the_default_templates(asked, trimmed) -> None:  # upstream's Test_trimMemory
    pool, _ = pool_of(npu_node())
    assert pool.trim_memory(asked)[0] == trimmed


def test_fit_filter_codes_and_reasons() -> None:
    pool, (one, two_partial, two_whole, five) = pool_of(
        npu_node(), pod("one", {NPU: "1", MEM: "4000"}), pod("two-partial", {NPU: "2", MEM: "3072"}),
        pod("two-whole", {NPU: "2"}), pod("five", {NPU: "5"}))
    assert pool.filter_node(one, "") == (0, "", None)
    assert pool.filter_node(two_partial, "") == (1, "no ascend device available", ascend_hami.PARTIAL_MEMORY)
    assert pool.filter_node(two_whole, "")[0] == 0
    assert pool.filter_node(five, "") == (2, "no ascend device available", "no enough ascend device available")


def test_allocation_writes_upstreams_annotations_and_charges_the_rounded_memory() -> None:
    pool, (p,) = pool_of(npu_node(), pod("p", {NPU: "1", MEM: "4000", CORE: "2"}))
    annotations, err = pool.allocate(p, 7 * 10**9 + 5)
    assert err is None
    assert annotations == {
        "hami.io/Ascend310P-devices-to-allocate": "d0,Ascend310P,6144,2:;",
        ALLOCATED: "d0,Ascend310P,6144,2:;", "predicate-time": "7",
        NPU: '[{"UUID":"d0","temp":"vir02"}]', "hami.io/vgpu-node": "n1", "hami.io/vgpu-time": "7",
        "hami.io/bind-phase": "allocating", "hami.io/bind-time": "7"}
    d0 = pool.devices["d0"]
    assert (d0.used, d0.usedmem, d0.usedcores, sorted(d0.pods)) == (1, 6144, 2, [p.uid])
    keys = pool.release(p)  # no annotation on the pod itself: given back by uid
    assert (d0.used, d0.usedmem, d0.usedcores, d0.pods) == (0, 0, 0, {})
    assert ALLOCATED in keys and NPU in keys and "hami.io/bind-phase" in keys


def test_hami_core_mode_is_not_rounded_and_needs_node_support() -> None:
    marked = {"huawei.com/vnpu-mode": "hami-core"}
    pool, (p,) = pool_of(npu_node(extra={"hami-vnpu-core": "true"}), pod("p", {MEM: "1000", CORE: "20"}, marked))
    annotations, _ = pool.allocate(p, 0)
    assert annotations[ALLOCATED] == "d0,Ascend310P,1000,20:;"
    assert annotations[NPU] == '[{"UUID":"d0","memory":1000,"core":20}]'
    plain, (q,) = pool_of(npu_node(), pod("q", {MEM: "1000", CORE: "20"}, marked))
    assert plain.filter_node(q, "")[0] == 2


def test_second_containers_devices_are_not_charged_as_upstream_decodes_them() -> None:
    two = pod("p", {NPU: "1", MEM: "3072"})
    two["spec"]["containers"].append({"name": "d", "resources": {"limits": {NPU: "1", MEM: "3072"}}})
    pool, (p,) = pool_of(npu_node(), two)
    annotations, _ = pool.allocate(p, 0)
    assert annotations[ALLOCATED] == "d0,Ascend310P,3072,0:;d1,Ascend310P,3072,0:;"
    assert pool.devices["d0"].usedmem == 3072 and pool.devices["d1"].usedmem == 0  # ";d1" matches no device


def test_scores_and_the_policy_allocate_inherits_from_the_last_score() -> None:
    held = pod("held", {NPU: "1", MEM: "12288"}, {ALLOCATED: "d1,Ascend310P,12288,0:;"}, node_name="n1")
    pool, (h, p) = pool_of(npu_node(), held, pod("p", {NPU: "1", MEM: "3072"}))
    pool.add_resource(h)
    assert pool.score_node(p, "binpack") == pytest.approx(100 * 12288 / 21527)
    assert pool.policy == "binpack" and pool.allocate(p, 0)[0][ALLOCATED].startswith("d1,")
    pool.release(p)
    assert pool.score_node(p, "spread") == 100.0
    fresh, _ = pool_of(npu_node(), held, pod("p", {NPU: "1", MEM: "3072"}))
    fresh.add_resource(h)
    assert fresh.policy == "" and fresh.allocate(p, 0)[0][ALLOCATED].startswith("d0,")  # ties: annotation order


def test_node_ledger_keeps_the_pool_in_step_and_the_memory_resource_is_ignored() -> None:
    from schedcheck.reference.cache.cache import SchedulerCache

    held = pod("held", {NPU: "1", MEM: "6144"}, {ALLOCATED: "d0,Ascend310P,6144,0:;"}, node_name="n1")
    scenario = load(npu_node(), npu_node("n2"), held)
    cache = SchedulerCache(scenario.objects, device_flags=ASCEND)
    assert IGNORED_DEVICES == {MEM, CORE}
    info = cache.nodes["n1"]
    assert info.others["Ascend310P"].devices["d0"].usedmem == 6144
    task = next(iter(info.tasks.values()))
    assert "huawei.com/Ascend310P-memory" not in (task.resreq.scalars or {})
    copy = info.clone()
    copy.remove_task(task)
    assert copy.others["Ascend310P"].devices["d0"].usedmem == 0 and info.others["Ascend310P"].devices["d0"].usedmem == 6144
    fresh = NodeInfo(scenario.objects.nodes[0])
    fresh.set_others(node_devices(scenario.objects.nodes[0], ASCEND))
    fresh.add_task(TaskInfo(scenario.objects.pods[0]))
    assert fresh.others["Ascend310P"].devices["d0"].pods == {task.pod.uid: (6144, 0)}
    SchedulerCache(load(node()).objects)  # a new run starts with an empty list
    assert IGNORED_DEVICES == set()


def test_a_count_of_zero_where_no_device_fits_is_upstreams_score_panic() -> None:
    """docs/findings.md row 34: master panics in ScoreNode (hami/device_info.go:301, index out of range), run
    through the adapter; FilterNode lets the pod pass with no device, ScoreNode indexes the empty list."""
    from schedcheck.reference.util.assertion import AssertionViolation

    held = pod("held", {NPU: "1", MEM: "21527"}, {ALLOCATED: "d0,Ascend310P,21527,0:;"}, node_name="n1")
    pool, (h, zero) = pool_of(npu_node(devices=(("d0", 7, 21527, 8),)), held, pod("zero", {NPU: "0", MEM: "3072"}))
    pool.add_resource(h)
    assert pool.filter_node(zero, "binpack") == (0, "", None)
    with pytest.raises(AssertionViolation, match="index out of range") as err:
        pool.score_node(zero, "binpack")
    from schedcheck.invariants.known import known_assertion_for

    assert known_assertion_for(err.value).id == "F34"  # a known finding, never a red gate
    free, (_h, zero) = pool_of(npu_node(), held, pod("zero", {NPU: "0", MEM: "3072"}))
    assert free.allocate(zero, 0)[0][ALLOCATED] == "d0,Ascend310P,3072,0:;"  # a count of 0 still takes one device


# ---------------------------------------------------------------- the device ConfigMap's vnpus section


def _config(vnpus: str):
    from schedcheck.reference.api.devices.config import parse_device_config

    return parse_device_config("nvidia:\n  resourceCountName: volcano.sh/vgpu-number\n" + vnpus, "kube-system/cm")


def test_a_configmap_replaces_the_vnpu_kinds_whole() -> None:
    import dataclasses

    custom = _config("vnpus:\n  hamiVnpuCore: true\n  configs:\n  - commonWord: Ascend310P\n"
                     "    resourceName: huawei.com/Ascend310P\n    resourceMemoryName: huawei.com/Ascend310P-memory\n"
                     "    memoryAllocatable: 21527\n    aiCore: 8\n    templates:\n"
                     "    - {name: big, memory: 20000, aiCore: 8}\n")
    assert custom.vnpu_hami_core and [t.name for t in custom.vnpu_configs[0].templates] == ["big"]
    flags = dataclasses.replace(ASCEND, config=custom)
    pool = node_devices(load(npu_node()).objects.nodes[0], flags)["Ascend310P"]
    assert pool.hami_core and [t.memory for t in pool.templates] == [20000]  # the config's, not the default's
    legacy = _config("vnpus:\n- commonWord: Ascend310P\n  resourceName: huawei.com/Ascend310P\n")
    assert not legacy.vnpu_hami_core and [c.common_word for c in legacy.vnpu_configs] == ["Ascend310P"]
    without = dataclasses.replace(ASCEND, config=_config(""))
    assert without.registered() == [] and node_devices(load(npu_node()).objects.nodes[0], without) == {}


def test_vnpus_upstream_cannot_decode_or_an_ascend910_kind_is_refused_by_field() -> None:
    from schedcheck.reference.api.devices.config import DeviceConfigError

    for text, field in (("vnpus:\n  hamiVnpuCore: yes please\n", "vnpus.hamiVnpuCore"),
                        ("vnpus:\n- commonWord: Ascend310P\n  aiCore: 4294967296\n", "vnpus[0].aiCore"),
                        ("vnpus:\n  configs:\n  - commonWord: Ascend910B\n", "vnpus.configs[0].commonWord")):
        with pytest.raises(DeviceConfigError) as err:
            _config(text)
        assert err.value.field.endswith(field), (text, err.value.field)

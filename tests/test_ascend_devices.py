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


def test_vnpus_upstream_cannot_decode_are_refused_by_field() -> None:
    from schedcheck.reference.api.devices.config import DeviceConfigError

    for text, field in (("vnpus:\n  hamiVnpuCore: yes please\n", "vnpus.hamiVnpuCore"),
                        ("vnpus:\n- commonWord: Ascend310P\n  aiCore: 4294967296\n", "vnpus[0].aiCore")):
        with pytest.raises(DeviceConfigError) as err:
            _config(text)
        assert err.value.field.endswith(field), (text, err.value.field)


# ---------------------------------------------------------------- Ascend910 kinds: devices chosen by network

W910 = "Ascend910B"
REG910, ALLOC910 = f"hami.io/node-register-{W910}", f"hami.io/{W910}-devices-allocated"
NPU910, MEM910, CORE910 = f"huawei.com/{W910}", f"huawei.com/{W910}-memory", f"huawei.com/{W910}-core"
CONFIG910 = (f"vnpus:\n  configs:\n  - commonWord: {W910}\n    resourceName: {NPU910}\n"
             f"    resourceMemoryName: {MEM910}\n    memoryAllocatable: 32768\n    memoryCapacity: 32768\n"
             "    aiCore: 20\n    templates:\n    - {name: vir05, memory: 16384, aiCore: 5}\n")


def register910(*devices: tuple) -> str:
    """(id, network) or (id, network, devcore); network None: no custominfo; a string: as written."""
    out = []
    for dev_id, network, *cores in devices:
        entry = {"id": dev_id, "count": 4, "devmem": 32768, "devcore": cores[0] if cores else 20}
        if network is not None:
            entry["customInfo"] = {"NetworkID": network}
        out.append(entry)
    return json.dumps(out)


def pool910(devices, *pods, word: str = W910):
    import dataclasses

    config = _config(CONFIG910.replace(W910, word))
    flags = dataclasses.replace(ASCEND, config=config)
    reg = f"hami.io/node-register-{word}"
    scenario = load(node(annotations={reg: register910(*devices)}, resources={f"huawei.com/{word}": "8"}), *pods)
    return node_devices(scenario.objects.nodes[0], flags)[word], scenario.objects.pods


def chosen(pool, pod_, policy: str = "") -> list[list[str]]:
    devs, code, err = pool.select_devices(pod_, policy)
    assert code == 0, err
    return [[d[0] for d in container] for container in devs]


def test_an_ascend910_kind_is_read_from_the_configmap() -> None:
    config = _config(CONFIG910)
    assert [c.common_word for c in config.vnpu_configs] == [W910]


def test_ascend910_chooses_the_largest_network_not_the_first_fit() -> None:
    pod2 = pod("p", {NPU910: "2", MEM910: "32768"})
    pool, (p,) = pool910((("d0", 0), ("d1", 1), ("d2", 1)), pod2)
    assert chosen(pool, p) == [["d1", "d2"]]  # network 1 holds two fitting devices, network 0 one
    plain, (p,) = pool910((("d0", 0), ("d1", 1), ("d2", None)), pod2)  # d2 lacks the key: first fit
    assert chosen(plain, p) == [["d0", "d1"]]
    other, (p,) = pool910((("d0", 0), ("d1", 1), ("d2", 1)), pod("p", {"huawei.com/Ascend910X": "2"}),
                          word="Ascend910X")
    assert chosen(other, p) == [["d1", "d2"]]  # any commonWord starting with Ascend910
    not910, (p,) = pool910((("d0", 0), ("d1", 1), ("d2", 1)), pod("p", {"huawei.com/Ascend310B": "2"}),
                           word="Ascend310B")
    assert chosen(not910, p) == [["d0", "d1"]]


def test_ascend910_networks_of_a_size_come_in_first_appearance_order_and_only_fitting_devices_count() -> None:
    pool, (one, two) = pool910((("d0", 5, 20), ("d1", 3, 20), ("d2", 3, 4), ("d3", 5, 20)),
                               pod("one", {NPU910: "1", CORE910: "10"}), pod("two", {NPU910: "2"}))
    # d2 has too few cores for `one`: networks 5 (d0, d3) and 3 (d1): d0
    assert chosen(pool, one) == [["d0"]]
    # both networks hold two: upstream's order is random, the reference takes network 5 (d0 comes first)
    assert chosen(pool, two) == [["d0", "d3"]]
    # a count beyond the largest network continues with the next one
    pool3, (three,) = pool910((("d0", 5), ("d1", 3), ("d2", 3), ("d3", 7)), pod("three", {NPU910: "3"}))
    assert chosen(pool3, three) == [["d1", "d2", "d0"]]


def test_ascend910_network_ids_are_go_numbers_truncated_and_others_are_never_chosen() -> None:
    pool, (p,) = pool910((("d0", 1.9), ("d1", 2), ("d2", 1.2), ("d3", -0.5), ("d4", 0)), pod("p", {NPU910: "2"}))
    assert chosen(pool, p) == [["d0", "d2"]]  # 1.9 and 1.2 are both network 1 (d3's -0.5 is network 0)
    text, (p,) = pool910((("d0", "a"), ("d1", 4), ("d2", None)), pod("p", {NPU910: "1"}))
    assert chosen(text, p) == [["d0"]]  # d2 has no key: no topology at all
    strings, (p,) = pool910((("d0", "a"), ("d1", 4), ("d2", True)), pod("p", {NPU910: "2"}))
    assert chosen(strings, p) == [["d1"]]  # two fit, but only d1's id is a number: one device, no error
    zero, (p,) = pool910((("d0", 1), ("d1", 2), ("d2", 2)), pod("p", {NPU910: "0", MEM910: "16384"}))
    assert chosen(zero, p) == [["d1", "d2", "d0"]]  # a count of 0 is never reached: every fitting device


def test_ascend910_score_adds_ten_times_the_share_of_first_devices_in_the_largest_network() -> None:
    from schedcheck.reference.util.assertion import AssertionViolation

    two = pod("p", {NPU910: "1", MEM910: "16384"})
    two["spec"]["containers"].append({"name": "d", "resources": {"limits": {NPU910: "1", MEM910: "16384"}}})
    same, (p,) = pool910((("d0", 0), ("d1", 0)), two)
    assert same.score_node(p, "spread") == 100 + 100 + 10  # both first devices in network 0
    split, (p,) = pool910((("d0", 0), ("d1", 1)), two)
    assert split.score_node(p, "") == 5.0  # one container's device in each network: 1/2 * 10
    without, (p,) = pool910((("d0", 0), ("d1", None)), two)
    assert without.score_node(p, "spread") == 200.0  # no topology, no bonus
    texts, (p,) = pool910((("d0", "x"), ("d1", 1)), pod("p", {NPU910: "1"}))
    assert chosen(texts, p) == [["d1"]] and texts.score_node(p, "") == 10.0  # d0 fits first but is never grouped
    held = pod("held", {NPU910: "1", MEM910: "32768"}, {ALLOC910: f"d1,{W910},32768,0:;"}, node_name="n1")
    full, (h, q) = pool910((("d0", "x"), ("d1", 1)), held, pod("q", {NPU910: "1", MEM910: "16384"}))
    full.add_resource(h)
    assert full.filter_node(q, "") == (0, "", None)  # d0 fits: no error, but the container gets no device
    with pytest.raises(AssertionViolation, match="index out of range") as err:
        full.score_node(q, "")
    from schedcheck.invariants.known import known_assertion_for

    assert known_assertion_for(err.value).id == "F34"  # the same panic (master: device_info.go:301, adapter run)
    assert full.allocate(q, 0)[0][ALLOC910] == ";"  # one candidate node: no score, the pod holds nothing
    no_number, (p,) = pool910((("d0", "x"), ("d1", "y")), two)
    with pytest.raises(AssertionViolation):
        no_number.score_node(p, "")


def test_ascend910_allocation_writes_the_topology_choice() -> None:
    pool, (p,) = pool910((("d0", 0), ("d1", 1), ("d2", 1)), pod("p", {NPU910: "2", MEM910: "32768", CORE910: "4"}))
    annotations, err = pool.allocate(p, 0)
    assert err is None and annotations[ALLOC910] == f"d1,{W910},32768,4:d2,{W910},32768,4:;"
    assert annotations[NPU910] == '[{"UUID":"d1"},{"UUID":"d2"}]'  # 32768 is no template: no temp
    assert [pool.devices[d].usedmem for d in ("d0", "d1", "d2")] == [0, 32768, 32768]


def _scenario910(annotation: str):
    conf = {"actions": "allocate", "tiers": [{"plugins": [{"name": "deviceshare", "arguments": {
        "deviceshare.AscendHAMiVNPUEnable": True}}]}]}
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "volcano-vgpu-device-config", "namespace": "kube-system"},
          "data": {"device-config.yaml": CONFIG910}}
    return load(cm, node(annotations={REG910: annotation}, resources={NPU910: "8"}), conf=conf)


def test_ascend910_network_ids_are_warned_about_or_refused_in_one_line() -> None:
    scenario = _scenario910('[{"id":"d0","customInfo":{"NetworkID":"a"}},{"id":"d1","custominfo":{"networkId":1}}]')
    text = "\n".join(scenario.warnings)
    assert f"Node n1: metadata.annotations.{REG910}: entry 0: custominfo.NetworkID 'a' is not a number" in text
    assert f"Node n1: metadata.annotations.{REG910}: entry 1: custominfo.networkId is not read" in text
    for bad in ('[{"id":"d0","customInfo":{"NetworkID":1e19}}]',
                '[{"id":"d0","customInfo":{"NetworkID":9223372036854775807}}]'):  # 2**63 as a float64
        with pytest.raises(ScenarioError) as err:
            _scenario910(bad)
        assert f"Node n1: metadata.annotations.{REG910}: entry 0: custominfo.NetworkID" in str(err.value)
        assert "implementation-dependent" in str(err.value) and "\n" not in str(err.value)
    # -2**63 - 1 reads as the float64 -2**63 (ParseFloat rounds), which converts exactly
    assert not [w for w in _scenario910('[{"id":"d0","customInfo":{"NetworkID":-9223372036854775809}}]').warnings
                if "NetworkID" in w]
    refused = _scenario910('[{"id":"d0","customInfo":{"NetworkID":1,"x":[1e400]}}]')
    assert any("holds a number beyond float64: upstream refuses the list" in w for w in refused.warnings)
    with pytest.raises(ScenarioError, match="entry 0 is null"):
        _scenario910("[null]")  # the configured kind's registration is checked as the default's


def test_custominfo_is_read_with_go_json_rules() -> None:
    devs, _ = ascend_hami.decode_node_devices('[{"id":"a","customInfo":{"NetworkID":3},"CUSTOMINFO":{"y":1}}]')
    assert devs[0].custom == {"NetworkID": 3, "y": 1}  # two spellings of the field fill one map
    devs, _ = ascend_hami.decode_node_devices('[{"id":"a","customInfo":{"NetworkID":3},"custominfo":null}]')
    assert devs[0].custom is None and not ascend_hami.has_network_id(devs)  # null empties the map
    assert ascend_hami.decode_node_devices('[{"id":"a","customInfo":[1]}]')[0] is None

"""mindcluster Ascend 310P vNPU (reference_impl/api/devices/ascend310p_vnpu.py): the switch, what a node and
a pod are read as, the session-open chips, the predicate's reasons and downgrade, the allocation's
annotations and charge, release, the batch score, and the warnings on values upstream reads leniently."""

from __future__ import annotations

import pytest

from schedcheck.reference.api.devices import DeviceFlags, ascend310p_vnpu as mc, node_devices
from schedcheck.reference.api.devices.base import ERROR, SUCCESS
from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.plugins.deviceshare import device_flags, flags_from_arguments
from tests.test_device_objects import load

FLAGS = DeviceFlags(ascend_mindcluster=True)
SWITCH = "deviceshare.AscendMindClusterVNPUEnable"


def npu_node(name="n1", chips=2, per_chip=8, labels=None, annotations=None, unhealthy=None):
    values = {"cpu": "8", "memory": "32Gi", "pods": "110", mc.NPU_CORE: str(chips * per_chip)}
    lab = {mc.ACCELERATOR: "huawei-Ascend310P", mc.SERVER_TYPE: f"Ascend310P-{per_chip}", mc.CHIP_TYPE_KEY: "310P3"}
    ann = {"huawei.com/Ascend310P": ",".join(f"Ascend310P-{i}" for i in range(chips))}
    if unhealthy:
        ann["huawei.com/Ascend310P-Unhealthy"] = unhealthy
    lab.update(labels or {})
    ann.update(annotations or {})
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {k: v for k, v in lab.items() if v is not None},
                         "annotations": {k: v for k, v in ann.items() if v is not None}},
            "status": {"capacity": values, "allocatable": values}}


def vpod(name, cores=2, labels=None, annotations=None, node_name="", atlas=True):
    lab = {mc.JOB_KIND_KEY: mc.JOB_KIND_310P} if atlas else {}
    lab.update(labels or {})
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}, "limits": {mc.NPU_CORE: str(cores)}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "labels": lab,
                         "annotations": {"scheduling.k8s.io/group-name": "g", **(annotations or {})}},
            "spec": spec, "status": {"phase": "Running" if node_name else "Pending"}}


def session_pool(*objects):
    """The node's pool as a session sees it: the cache's pool copied and initialised from the node."""
    scenario = load(*objects)
    node = scenario.objects.nodes[0]
    info = NodeInfo(node)
    info.set_others(node_devices(node, FLAGS))
    pods = {p.name: p for p in scenario.objects.pods}
    for p in scenario.objects.pods:
        if p.node_name == node.name:
            info.add_task(TaskInfo(p))
    pool = info.others[mc.DEVICE_NAME].deep_copy()
    info.others[mc.DEVICE_NAME] = pool
    pool.init_session(info)
    return pool, pods, info, scenario


def test_the_switch_is_read_by_its_upstream_name_and_puts_the_pool_on_every_node() -> None:
    flags = flags_from_arguments({SWITCH: True})
    assert flags.ascend_mindcluster and flags.any and flags.registered() == [mc.DEVICE_NAME]
    assert flags_from_arguments({}, flags).ascend_mindcluster  # accumulated over builds, as a package variable
    conf = {"actions": "allocate", "tiers": [{"plugins": [{"name": "deviceshare", "arguments": {SWITCH: True}}]}]}
    scenario = load(npu_node(), {**npu_node("plain"), "metadata": {"name": "plain"}}, conf=conf)
    assert device_flags(scenario.conf).ascend_mindcluster
    assert not any(SWITCH in w for w in scenario.warnings)  # modelled: no longer warned about
    assert all(mc.DEVICE_NAME in node_devices(n, flags) for n in scenario.objects.nodes)
    assert mc.DEVICE_NAME not in node_devices(scenario.objects.nodes[0], DeviceFlags(vgpu=True))


def test_session_open_builds_chips_from_capacity_labels_and_annotations() -> None:
    pool, _, _, _ = session_pool(npu_node(chips=2, per_chip=8))
    assert pool.valid and pool.chip_kind == "Ascend310P" and pool.ai_core_per_chip == 8
    assert (pool.total.aicore, pool.total.aicpu, pool.total_chip_num) == (16, 14, 2)
    assert sorted(pool.chips) == [0, 1]
    chip = pool.chips[0]
    assert (chip.free.key(), chip.used.key(), chip.total.key()) == ((8, 7, "yes"), (0, 0, "no"), (8, 7, "no"))
    ten, _, _, _ = session_pool(npu_node(chips=1, per_chip=10, labels={mc.SERVER_TYPE: "Ascend310P-10-dual"}))
    assert ten.valid and ten.chips[0].total.key() == (10, 7, "no")


@pytest.mark.parametrize("change", [
    {"labels": {mc.ACCELERATOR: "Ascend310P"}}, {"labels": {mc.SERVER_TYPE: None}}, {"labels": {mc.CHIP_TYPE_KEY: None}},
    {"annotations": {"huawei.com/Ascend310P": None}}, {"labels": {mc.SERVER_TYPE: "Ascend310P-x"}},
    {"per_chip": 6},  # 310P chips of 6 cores: no node template
])
def test_a_node_upstream_cannot_read_is_not_initialised_and_fails_the_predicate(change) -> None:
    pool, pods, _, scenario = session_pool(npu_node(**change), vpod("p", 1))
    assert not pool.valid and not pool.chips
    assert pool.filter_node(pods["p"], "") == (ERROR, "", "checkNodeNPUByDyTask invalid VNode")
    assert any("Node n1" in w for w in scenario.warnings), scenario.warnings


def test_a_node_without_npu_core_fails_the_precheck() -> None:
    plain = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
             "status": {"capacity": {"cpu": "8"}, "allocatable": {"cpu": "8"}}}
    pool, pods, _, _ = session_pool(plain, vpod("p", 1))
    assert pool.filter_node(pods["p"], "") == (ERROR, mc.PRECHECK_REASON, "not have huawei.com/npu-core")


@pytest.mark.parametrize("cores, labels, template", [
    (1, {}, "vir01"), (2, {}, "vir02_1c"), (2, {mc.VNPU_LEVEL: "high"}, "vir02"), (4, {}, "vir04_3c"),
    (4, {mc.VNPU_LEVEL: "high"}, "vir04"), (4, {mc.VNPU_DVPP: "no"}, "vir04_3c_ndvpp"),
    (4, {mc.VNPU_DVPP: "yes", mc.VNPU_LEVEL: "low"}, "vir04_4c_dvpp"), (2, {mc.VNPU_LEVEL: "odd"}, "vir02_1c"),
])
def test_a_vnpu_request_reads_its_template_from_the_labels(cores, labels, template) -> None:
    pool, pods, _, _ = session_pool(npu_node(), vpod("p", cores, labels))
    req, err = pool.pod_resource(pods["p"])
    assert err is None and mc.template_by_request(req) == template
    annotations, err = pool.allocate(pods["p"], 123)
    assert err is None and annotations == {mc.PREDICATE_TIME: "123", mc.NPU_CORE: f"0-{template}"}


def test_whole_chips_and_odd_counts() -> None:
    pool, pods, _, _ = session_pool(npu_node(chips=3), vpod("w", 16), vpod("odd", 3), vpod("bad", 2, {mc.VNPU_DVPP: "x"}))
    assert pool.pod_resource(pods["w"])[0].key() == (16, 14, "null")
    annotations, err = pool.allocate(pods["w"], 1)
    assert err is None and annotations[mc.NPU_CORE] == "0,1"
    assert [pool.chips[i].used.aicore for i in range(3)] == [8, 8, 0] and not pool.chips[0].segment
    assert pool.pod_resource(pods["odd"])[0].key() == (0, 0, "")  # no template: an empty, "whole" request
    assert pool.allocate(pods["odd"], 1) == (None, "task require card number 0")
    assert pool.filter_node(pods["bad"], "") == (ERROR, "", "err dvpp value:x")


def test_placed_pods_are_charged_at_session_open_and_mark_unstable_and_vgroups() -> None:
    placed = [vpod("a", 2, annotations={mc.NPU_CORE: "0-vir02_1c", mc.REAL_USE: "Ascend310P-2c.1cpu-101-0_1"}, node_name="n1"),
              vpod("b", 1, annotations={mc.NPU_CORE: "0-vir01"}, node_name="n1"),  # no AscendReal: unstable
              vpod("c", 8, annotations={mc.NPU_CORE: "1", mc.REAL_USE: "1"}, node_name="n1"),
              vpod("d", 1, annotations={mc.NPU_CORE: "2-vir01", mc.REAL_USE: "x_3"}, node_name="n1")]
    pool, _, _, _ = session_pool(npu_node(chips=3, unhealthy="Ascend310P-2"), *placed)
    c0, c1, c2 = pool.chips[0], pool.chips[1], pool.chips[2]
    assert c0.used.key() == (3, 2, "null") and c0.segment and c0.unstable and c0.vgroups() == [1]
    assert c1.used.key() == (8, 7, "no") and not c1.segment and not c1.unstable
    assert c2.used.key() == (0, 0, "no")  # an unhealthy chip's pods are not counted
    assert sorted(pool.con_cache) == ["", "vir01", "vir02_1c"]


def test_the_template_rule_refuses_a_different_template_and_any_whole_request() -> None:
    held = vpod("h", 1, annotations={mc.NPU_CORE: "0-vir01", mc.REAL_USE: "r"}, node_name="n1")
    pool, pods, _, _ = session_pool(npu_node(), held, vpod("same", 1), vpod("other", 2), vpod("whole", 8))
    assert pool.filter_node(pods["same"], "") == (SUCCESS, "", None)
    assert pool.filter_node(pods["other"], "") == (ERROR, "", "other is using n1, and not rewrite")
    code, reason, err = pool.filter_node(pods["whole"], "")
    assert (code, reason) == (ERROR, "") and err.endswith("not get template")


def test_downgrade_on_a_short_node_and_the_undowngraded_charge() -> None:
    foreign = [vpod("fa", 4, annotations={mc.NPU_CORE: "0-vir04", mc.REAL_USE: "r"}, node_name="n1", atlas=False),
               vpod("fb", 2, annotations={mc.NPU_CORE: "0-vir02", mc.REAL_USE: "r"}, node_name="n1", atlas=False)]
    pool, pods, _, _ = session_pool(npu_node(chips=1), *foreign, vpod("hi", 2, {mc.VNPU_LEVEL: "high"}))
    assert not pool.con_cache and pool.chips[0].free.key() == (2, 1, "null")
    assert pool.filter_node(pods["hi"], "") == (SUCCESS, "", None) and pool.downgraded == {"hi"}
    annotations, err = pool.allocate(pods["hi"], 5)
    assert err is None and annotations[mc.NPU_CORE] == "0-vir02_1c"
    assert pool.chips[0].used.key()[:2] == (8, 8)  # 8 AI CPUs of 7: upstream charges the pod's own vir02
    assert pool.release(pods["hi"]) == [mc.PREDICATE_TIME, mc.NPU_CORE]
    assert pool.chips[0].used.key()[:2] == (6, 6) and not pool.con_cache and not pool.pod_allocation


def test_no_room_passes_the_predicate_and_fails_the_allocation() -> None:
    busy = vpod("busy", 8, annotations={mc.NPU_CORE: "0", mc.REAL_USE: "0"}, node_name="n1", atlas=False)
    scenario_pods = [busy, vpod("p", 1)]
    pool, pods, info, _ = session_pool(npu_node(chips=1), *scenario_pods)
    assert info.idle.scalars[mc.NPU_CORE] == 0  # busy asks 8 npu-core
    pool.idle = {mc.NPU_CORE: 8000.0}  # as if busy asked none (the scenario's busy-0 asks another resource)
    assert pool.filter_node(pods["p"], "") == (SUCCESS, "", None)
    assert pool.allocate(pods["p"], 1) == (None, "selectChipFromNodeSegment available chip not found for req <1>")


def test_the_idle_read_is_the_session_nodes_live_ledger() -> None:
    pool, pods, info, _ = session_pool(npu_node(chips=1), vpod("p", 4), vpod("q", 8))
    info.add_task(TaskInfo(pods["p"]))  # the session places p (4 npu-core): 4 left
    assert pool.idle is info.idle.scalars and pool.idle[mc.NPU_CORE] == 4000
    assert pool.filter_node(pods["q"], "") == (ERROR, mc.PRECHECK_REASON, "node not meet task request huawei.com/npu-core:8")


def test_node_ledger_keeps_the_cache_pool_in_step() -> None:
    held = vpod("h", 1, annotations={mc.NPU_CORE: "0-vir01"}, node_name="n1")
    scenario = load(npu_node(), held)
    info = NodeInfo(scenario.objects.nodes[0])
    info.set_others(node_devices(scenario.objects.nodes[0], FLAGS))
    task = TaskInfo(scenario.objects.pods[0])
    info.add_task(task)
    pool = info.others[mc.DEVICE_NAME]
    assert pool.con_cache == {"vir01": ["uid-h"]} and pool.pod_allocation == {"uid-h": "0-vir01"} and not pool.chips
    assert pool.device_ids() == {"0", "1"}
    info.remove_task(task)
    assert not pool.con_cache and not pool.pod_allocation


@pytest.mark.parametrize("idles, downgraded, expected", [
    ([16000, 8000, None], set(), [0, 8, 0]),
    ([8000, 8000], set(), [8, 0]),  # a tie: Go's insertion sort keeps the candidates' order
    ([2000, 8000, 4000], {0}, [8, 0, 16]),
    ([2000, 8000, 4000], {0, 2}, [8, 16, 8]),
    ([2000, 4000], {0, 1}, [8, 8]),
])
def test_batch_scores(idles, downgraded, expected) -> None:
    pools = []
    for i, idle in enumerate(idles):
        pool, pods, _, _ = session_pool(npu_node(f"n{i}"), vpod("p", 1))
        pool.name = f"n{i}"
        pool.idle = {} if idle is None else {mc.NPU_CORE: float(idle)}
        if i in downgraded:
            pool.downgraded.add("p")
        pools.append(pool)
    assert mc.batch_scores(pods["p"], pools) == expected


def test_warnings_on_values_upstream_reads_leniently() -> None:
    scenario = load(npu_node(unhealthy="Ascend310P-x"), vpod("p", 3, {mc.VNPU_DVPP: "maybe", mc.VNPU_LEVEL: "mid"}),
                    vpod("q", 1, annotations={mc.NPU_CORE: "zero"}))
    text = "\n".join(scenario.warnings)
    assert "huawei.com/Ascend310P-Unhealthy: entries ['Ascend310P-x']" in text
    assert "metadata.labels.vnpu-dvpp: 'maybe'" in text and "metadata.labels.vnpu-level: 'mid'" in text
    assert "requests.huawei.com/npu-core: 3 is neither" in text
    assert "Pod ns/q: metadata.annotations.huawei.com/npu-core: 'zero'" in text
    assert not [w for w in load(npu_node(), vpod("p", 2)).warnings if "npu" in w.lower() or "Node n1" in w]


def test_a_guided_replay_picks_which_of_the_equal_least_idle_candidates_scores() -> None:
    pools = []
    for i, idle in enumerate((8000, 16000, 8000)):
        pool, pods, _, _ = session_pool(npu_node(f"n{i}"), vpod("p", 1))
        pool.name, pool.idle = f"n{i}", {mc.NPU_CORE: float(idle)}
        pools.append(pool)
    assert mc.batch_scores(pods["p"], pools) == [8, 0, 0]
    asked = []

    def first(group):
        asked.append([p.name for p in group])
        return group[1]

    assert mc.batch_scores(pods["p"], pools, first) == [0, 0, 8]
    assert asked == [["n0", "n2"]]  # only the equal least-idle lead is offered
    assert mc.batch_scores(pods["p"], pools, lambda group: None) == [8, 0, 0]

"""The generators draw nodegroup, cdp and task-topology, and the object fields each reads, in the keys and
formats the reference reads them (judged by the reference's own readers), and shrink to the plain case."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st

import schedcheck.reference.scheduler  # noqa: F401 - registers every action and plugin
from schedcheck.generators import cooldowns, nodegroups, task_topologies, vocabulary
from schedcheck.generators.confs import TIER_SETS, conf_features, default_conf, scheduler_confs
from schedcheck.generators.consistency import cluster_problems
from schedcheck.generators.scenarios import profile_scenarios, sample_documents, scenario_profiles, scenarios
from schedcheck.generators.vocabulary import GROUP_NAME, TASK_SPEC, seconds_of
from schedcheck.reference.framework.plugin import get_plugin_builder
from schedcheck.reference.plugins import cdp, nodegroup, task_topology
from schedcheck.reference.plugins.sla import seconds_to_ns
from schedcheck.reference.util.timestamps import parse_timestamp
from schedcheck.scenario.loader import scenario_from_document

FIND = settings(max_examples=2000, deadline=None, database=None, phases=[Phase.generate, Phase.shrink],
                derandomize=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
PLUGINS = ("nodegroup", "cdp", "task-topology")


@cache
def documents() -> tuple[dict[str, Any], ...]:
    """Ci-profile documents of three seeds (the same every run)."""
    return tuple(doc for seed in (4, 6, 7) for doc in sample_documents(profile_scenarios("ci"), 300, seed))


@cache
def confs() -> tuple[dict[str, Any], ...]:
    return tuple(sample_documents(scheduler_confs(), 400, 2))


def plugins_of(conf: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for tier in conf["tiers"] for p in tier["plugins"]]


def with_plugin(name: str) -> list[dict[str, Any]]:
    return [d for d in documents() if name in conf_features(d["schedulerConf"]).plugins]


def of_kind(doc: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [o for o in doc["objects"] if o["kind"] == kind]


def test_the_vocabulary_spells_the_keys_as_the_reference_reads_them():
    assert vocabulary.NODE_GROUP_LABEL == nodegroup.NODE_GROUP_LABEL
    assert vocabulary.NODE_GROUP_LIMITS == nodegroup.RESOURCE_LIMITS_ANNOTATION
    assert vocabulary.COOLDOWN_TIME == cdp.COOLDOWN_TIME_KEY
    assert vocabulary.TASK_TOPOLOGY_AFFINITY == task_topology.AFFINITY_ANNOTATION
    assert vocabulary.TASK_TOPOLOGY_ANTI_AFFINITY == task_topology.ANTI_AFFINITY_ANNOTATION
    assert vocabulary.TASK_TOPOLOGY_ORDER == task_topology.TASK_ORDER_ANNOTATION


# ---------------------------------------------------------------- confs


def test_confs_draw_each_plugin_with_the_arguments_and_flags_it_reads():
    seen: Counter[str] = Counter()
    for conf in confs():
        for tier_index, tier in enumerate(conf["tiers"]):
            for plugin in tier["plugins"]:
                name, arguments = plugin["name"], plugin.get("arguments", {})
                if name not in PLUGINS:
                    continue
                seen[name] += 1
                built = get_plugin_builder(name)(arguments)
                if name == "nodegroup":
                    seen["nodegroup strict false"] += not built.strict
                    seen["nodegroup preferred order"] += built.preferred_order
                    seen["nodegroup enableHierarchy"] += plugin.get("enableHierarchy") is True
                elif name == "task-topology":
                    seen["task-topology weight"] += built.weight != 1
                else:
                    assert tier_index == 0, "cdp filters victims beside gang, in the first tier"
    wanted = ("nodegroup", "cdp", "task-topology", "nodegroup strict false", "nodegroup preferred order",
              "nodegroup enableHierarchy", "task-topology weight")
    assert all(seen[key] > 0 for key in wanted), seen


@pytest.mark.parametrize("name", PLUGINS)
def test_a_conf_with_the_plugin_shrinks_to_a_plain_conf_plus_the_plugin(name):
    """Upstream's default actions, a tier set as drawn (the shrinker may stop at one simpler than the default
    tiers: the other plugins' draws move with the set), and the plugin alone, with no argument or flag."""
    conf = find(scheduler_confs(), lambda c: name in conf_features(c).plugins, settings=FIND)
    assert conf["actions"] == default_conf()["actions"] and "configurations" not in conf
    tiers = [[p for p in tier["plugins"] if p["name"] != name] for tier in conf["tiers"]]
    assert tiers in TIER_SETS.values()
    assert conf["tiers"][0 if name == "cdp" else -1]["plugins"][-1] == {"name": name}


# ---------------------------------------------------------------- objects


def test_documents_load_without_warnings_and_are_consistent():
    for doc in with_plugin("nodegroup") + with_plugin("cdp") + with_plugin("task-topology"):
        assert scenario_from_document(doc, "<generated>").warnings == []
        assert cluster_problems(doc) == []


@cache
def _with_node_groups() -> list[dict[str, Any]]:
    """Documents under a default conf plus nodegroup, flat and with hierarchy (the drawn documents above hold
    nodegroup in a few confs, and which features they reach moves with every draw added to the generator)."""
    out = []
    for hierarchy in (False, True):
        conf = default_conf()
        conf["tiers"][-1]["plugins"].append({"name": "nodegroup", **({"enableHierarchy": True} if hierarchy else {})})
        out += sample_documents(scenarios(**scenario_profiles["ci"], confs=st.just(conf)), 40, 1)
    return out


def test_nodegroup_documents_carry_groups_affinities_and_limits():
    seen: Counter[str] = Counter()
    for doc in with_plugin("nodegroup") + _with_node_groups():
        scenario = scenario_from_document(doc, "<generated>")
        groups = {n.labels.get(nodegroup.NODE_GROUP_LABEL) for n in scenario.objects.nodes}
        seen["labelled"] += bool(groups - {None})
        seen["unlabelled"] += None in groups
        assert groups <= {None, *vocabulary.NODE_GROUPS}
        for queue in scenario.objects.queues:
            affinity = nodegroup.GroupAffinity.of(queue.affinity)
            if affinity is not None:
                seen["required"] += bool(affinity.required)
                seen["preferred"] += bool(affinity.preferred)
                seen["anti"] += bool(affinity.anti_required or affinity.anti_preferred)
                seen["empty"] += affinity.unset()
            if nodegroup.RESOURCE_LIMITS_ANNOTATION in queue.annotations:
                assert nodegroup.parse_resource_limits(queue.annotations)  # parses, and limits some group
                seen["limits"] += 1
            seen["child"] += bool(queue.parent) and queue.parent != "root"
    assert all(seen[k] > 0 for k in ("labelled", "unlabelled", "required", "preferred", "anti", "empty",
                                      "limits", "child")), seen


def test_cdp_documents_hold_pods_still_cooling_down_and_pods_past_it():
    seen: Counter[str] = Counter()
    for doc in with_plugin("cdp"):
        scenario = scenario_from_document(doc, "<generated>")
        assert "now" in doc
        now = seconds_to_ns(parse_timestamp(doc["now"]))
        for pod in scenario.objects.pods:
            seconds = cdp.cooldown_time(pod)
            seen["label"] += cdp.COOLDOWN_TIME_KEY in pod.labels
            seen["annotation"] += cdp.COOLDOWN_TIME_KEY in pod.annotations
            if seconds is None or pod.phase != "Running":
                continue
            cooling = cdp.cooling_down(pod, now)
            seen["cooling" if cooling else "cooled"] += 1
            # never near the end of the cooldown, whatever the clock does in a few sessions
            assert cdp.cooling_down(pod, now + seconds_to_ns(cooldowns.MARGIN - 1)) == cooling
            assert cdp.cooling_down(pod, now - seconds_to_ns(cooldowns.MARGIN - 1)) == cooling
    assert all(seen[k] > 0 for k in ("label", "annotation", "cooling", "cooled")), seen


def test_scheduling_times_keep_clear_of_the_end_of_the_cooldown():
    for created in (0, 1800, 3600):
        for delay in (0, 600, 9000):
            for cooldown in (None, 0, 90, 600, 3600, 7200, 10800):
                for now in (7200, 7300, 9000, 10800):
                    at = cooldowns.scheduled_at(created, delay, now, cooldown)
                    assert created <= at <= now
                    assert cooldown is None or abs(now - at - cooldown) >= cooldowns.MARGIN


def test_task_topology_documents_name_their_jobs_roles():
    seen: Counter[str] = Counter()
    for doc in with_plugin("task-topology"):
        pods = of_kind(doc, "Pod")
        for group in of_kind(doc, "PodGroup"):
            annotations = group["metadata"].get("annotations", {})
            roles = {p["metadata"]["annotations"].get(TASK_SPEC) for p in pods
                     if p["metadata"]["namespace"] == group["metadata"]["namespace"]
                     and p["metadata"]["annotations"].get(GROUP_NAME) == group["metadata"]["name"]}
            for key in (task_topology.AFFINITY_ANNOTATION, task_topology.ANTI_AFFINITY_ANNOTATION,
                        task_topology.TASK_ORDER_ANNOTATION):
                if key not in annotations:
                    continue
                seen[key] += 1
                names = {n for part in annotations[key].split(";") for n in part.split(",")}
                assert names <= roles | {task_topologies.STRANGER}
                seen["stranger"] += task_topologies.STRANGER in names
    assert all(seen[k] > 0 for k in (task_topology.AFFINITY_ANNOTATION, task_topology.ANTI_AFFINITY_ANNOTATION,
                                      task_topology.TASK_ORDER_ANNOTATION)), seen


def test_task_topology_annotations_give_jobs_a_topology_in_the_reference():
    """Read by the plugin itself at session open: some generated jobs get buckets."""
    from schedcheck.reference.cache.cache import SchedulerCache
    from schedcheck.reference.framework.framework import open_session

    managed = 0
    for doc in with_plugin("task-topology")[:60]:
        scenario = scenario_from_document(doc, "<generated>")
        ssn = open_session(SchedulerCache(scenario.objects, now=doc.get("now")), scenario.conf, cycle=0, seed=0)
        managed += len(ssn.plugins["task-topology"].managers)
    assert managed > 0


def test_the_plain_nodegroup_scenario_puts_every_node_and_queue_in_pool_a():
    def has_queue_with_affinity(doc):
        return "nodegroup" in conf_features(doc["schedulerConf"]).plugins and any(
            "affinity" in q["spec"] for q in of_kind(doc, "Queue"))

    doc = find(scenarios(), has_queue_with_affinity, settings=FIND)
    [node] = of_kind(doc, "Node")
    assert node["metadata"]["labels"][nodegroup.NODE_GROUP_LABEL] == "pool-a"
    [queue] = of_kind(doc, "Queue")
    assert queue["spec"]["affinity"] == {"nodeGroupAffinity": {nodegroups.REQUIRED: ["pool-a"]}}
    assert nodegroup.RESOURCE_LIMITS_ANNOTATION not in queue["metadata"].get("annotations", {})


def test_limits_are_json_maps_of_resource_lists():
    for doc in with_plugin("nodegroup"):
        for queue in of_kind(doc, "Queue"):
            text = queue["metadata"].get("annotations", {}).get(nodegroup.RESOURCE_LIMITS_ANNOTATION)
            if text is not None:
                parsed = json.loads(text)
                assert set(parsed) <= set(vocabulary.NODE_GROUPS)
                assert all(set(limits) <= {"cpu", "memory"} and limits for limits in parsed.values())


def test_cooldown_times_follow_the_pods_creation():
    for doc in with_plugin("cdp"):
        for pod in of_kind(doc, "Pod"):
            for condition in pod["status"].get("conditions", []):
                if condition["type"] == "PodScheduled":
                    at = seconds_of(condition["lastTransitionTime"])
                    assert seconds_of(pod["metadata"]["creationTimestamp"]) <= at < seconds_of(doc["now"])
                    if "startTime" in pod["status"]:
                        assert seconds_of(pod["status"]["startTime"]) > at


@cache
def _with_each_device_mode() -> list[dict[str, Any]]:
    """Documents under a default conf plus deviceshare in each of its modes (the drawn documents above hold
    deviceshare in about one conf in ten, and not always every mode)."""
    out = []
    for arguments in ({"deviceshare.VGPUEnable": True}, {"deviceshare.GPUSharingEnable": True},
                      {"deviceshare.GPUNumberEnable": True}, {"deviceshare.AscendHAMiVNPUEnable": True}):
        conf = default_conf()
        conf["tiers"][-1]["plugins"].append({"name": "deviceshare", "arguments": arguments})
        out += sample_documents(scenarios(**scenario_profiles["ci"], confs=st.just(conf)), 40, 1)
    return out


def test_deviceshare_documents_carry_gpu_nodes_and_a_minority_of_gpu_pods():
    """generators/devices.py: one pool per conf, GPU nodes that the pool reads, most pods asking no GPU, and
    every running GPU pod's annotation naming cards of its own node."""
    from schedcheck.invariants.catalog.devices import assigned_ids
    from schedcheck.reference.api.devices import node_devices
    from schedcheck.reference.plugins.deviceshare import device_flags

    seen: Counter[str] = Counter()
    for doc in with_plugin("deviceshare") + _with_each_device_mode():
        scenario = scenario_from_document(doc, "<generated>")
        flags = device_flags(scenario.conf)
        seen["vgpu" if flags.vgpu else "share" if flags.gpu_sharing else "number"] += 1
        pools = {n.name: node_devices(n, flags) for n in scenario.objects.nodes}
        seen["gpu nodes"] += sum(bool(p) for p in pools.values())
        for pod in scenario.objects.pods:
            asks = any(name.startswith("volcano.sh/") for c in pod.containers for name in c.limits)
            seen["gpu pods" if asks else "other pods"] += 1
            if asks and pod.node_name:
                ids = {i for pool in pools[pod.node_name].values() for i in pool.device_ids()}
                named = assigned_ids(pod.annotations)
                assert named and set(named) <= ids, (pod.key, named, ids)
                seen["running gpu pods"] += 1
    assert all(seen[k] > 0 for k in ("vgpu", "share", "number", "gpu nodes", "gpu pods", "running gpu pods")), seen
    assert seen["other pods"] > seen["gpu pods"], seen


def test_vgpu_documents_sometimes_carry_a_device_configmap_mig_and_mps_nodes_and_the_node_lock():
    """generators/devices.py vgpu_extras: the ConfigMap the conf reads (its geometries decode), mig nodes whose
    pools take MIG geometries from it, mps nodes read as hami-core, and NodeLockEnable with lock annotations."""
    from schedcheck.reference.api.devices import mig, node_devices, vgpu
    from schedcheck.reference.api.devices.config import load_device_config
    from schedcheck.reference.plugins.deviceshare import device_flags

    from schedcheck.generators.devices import deviceshare_arguments

    vgpu_args = deviceshare_arguments().filter(lambda a: bool(a.get("deviceshare.VGPUEnable")))
    vgpu_confs = vgpu_args.map(lambda args: {"actions": "enqueue, allocate, backfill", "tiers": [
        {"plugins": [{"name": "priority"}, {"name": "gang"}]},
        {"plugins": [{"name": "predicates"}, {"name": "deviceshare", "arguments": args}]}]})
    seen: Counter[str] = Counter()
    wanted = ("configmap", "configmap read", "mig nodes", "mig pools", "mps nodes", "node lock")
    # which samples draw each rare part moves with every draw the generators add: seeds until all are seen
    docs = (doc for seed in range(1, 6) for doc in sample_documents(
        profile_scenarios("ci", confs=vgpu_confs, gpu=True), 150, seed))
    for doc in docs:
        if seen["vgpu"] >= 150 and all(seen[k] > 0 for k in wanted):
            break
        scenario = scenario_from_document(doc, "<generated>")
        flags = device_flags(scenario.conf)
        assert flags.vgpu
        seen["vgpu"] += 1
        config = load_device_config(scenario.objects.config_maps, flags.cm_name, flags.cm_namespace)
        if scenario.objects.config_maps:
            seen["configmap"] += 1
            seen["configmap read"] += bool(config.source)
        if flags.node_lock:
            seen["node lock"] += 1
        for node in scenario.objects.nodes:
            register = node.annotations.get(vgpu.VOLCANO_VGPU_REGISTER, "")
            pool = node_devices(node, dataclasses.replace(flags, config=config)).get(vgpu.DEVICE_NAME)
            if ",mig:" in register:
                seen["mig nodes"] += 1
                seen["mig pools"] += pool is not None and pool.mode == mig.MIG
            if ",mps:" in register:
                seen["mps nodes"] += 1
                assert pool is None or pool.mode == mig.HAMI_CORE
    assert all(seen[k] > 0 for k in wanted), seen
    assert seen["configmap"] < seen["vgpu"], seen


def test_mindcluster_documents_carry_310p_nodes_and_vnpu_pods_that_load_without_warnings():
    """generators/devices.py mindcluster_extras (drawn last): with the switch on, 310P nodes whose chips the
    session builds, pending jobs asking a vNPU by template labels or whole chips, running vNPU pods whose
    annotation names a chip of their node and one template per node; no document warns."""
    from schedcheck.reference.api.devices import ascend310p_vnpu as mc, node_devices
    from schedcheck.reference.api.node_info import NodeInfo
    from schedcheck.reference.api.task_info import TaskInfo
    from schedcheck.reference.plugins.deviceshare import device_flags

    seen: Counter[str] = Counter()
    conf = default_conf()  # the switch in the conf: always drawn, so that rare shapes (unstable chips) show
    conf["tiers"][-1]["plugins"].append({"name": "deviceshare",
                                         "arguments": {"deviceshare.AscendMindClusterVNPUEnable": True}})
    switched = sample_documents(scenarios(**scenario_profiles["ci"], confs=st.just(conf)), 80, 1)
    for doc in with_plugin("deviceshare") + _with_each_device_mode() + switched:
        scenario = scenario_from_document(doc, "<generated>")
        flags = device_flags(scenario.conf)
        if not flags.ascend_mindcluster:
            seen["off"] += 1
            assert not any(mc.NPU_CORE in n.capacity for n in scenario.objects.nodes)
            continue
        seen["on"] += 1
        assert not scenario.warnings, scenario.warnings
        for node in scenario.objects.nodes:
            if mc.NPU_CORE not in node.capacity:
                continue
            info = NodeInfo(node)
            info.set_others(node_devices(node, flags))
            templates = set()
            for pod in scenario.objects.pods:
                if pod.node_name == node.name:
                    info.add_task(TaskInfo(pod))
                    if mc.NPU_CORE in pod.annotations:
                        value = pod.annotations[mc.NPU_CORE]
                        templates.add(value.split("-")[1] if "-" in value else "")
                        seen["running vnpu pods"] += 1
                        seen["unstable"] += mc.REAL_USE not in pod.annotations
            pool = info.others[mc.DEVICE_NAME].deep_copy()
            pool.init_session(info)
            assert pool.valid and pool.chips, node.name
            assert all(c.used.aicore <= c.total.aicore and c.used.aicpu <= c.total.aicpu for c in pool.chips.values())
            assert len(templates) <= 1 and set(pool.con_cache) == templates
            seen["310p nodes"] += 1
            seen["10-core chips"] += pool.ai_core_per_chip == 10
        for pod in scenario.objects.pods:
            if mc.pod_asks(pod) and not pod.node_name:
                seen["whole" if mc.pod_cores(pod) % 8 == 0 else "vnpu"] += 1
    assert all(seen[k] > 0 for k in ("off", "on", "310p nodes", "10-core chips", "running vnpu pods", "unstable",
                                     "whole", "vnpu")), seen
    assert seen["off"] > seen["on"], seen


def test_ascend_documents_sometimes_carry_an_ascend910_kind_with_network_ids():
    """generators/devices.py ascend910_extras: rarely the device ConfigMap configures Ascend910B and every
    name is renamed to it; the pools read the network ids, running pods' devices are their node's, and such
    documents load without warnings."""
    from schedcheck.reference.api.devices import ascend_hami, node_devices
    from schedcheck.reference.api.devices.config import load_device_config
    from schedcheck.reference.plugins.deviceshare import device_flags

    import dataclasses

    conf = default_conf()
    conf["tiers"][-1]["plugins"].append({"name": "deviceshare",
                                         "arguments": {"deviceshare.AscendHAMiVNPUEnable": True}})
    seen: Counter[str] = Counter()
    wanted = ("310p", "910", "nodes", "topology", "asking")
    # samples shift whenever a generator draws something new: take seeds until each kind has been seen
    drawn = (doc for seed in range(3, 9) if not all(seen[k] > 0 for k in wanted)
             for doc in sample_documents(scenarios(**scenario_profiles["ci"], confs=st.just(conf)), 120, seed))
    for doc in drawn:
        scenario = scenario_from_document(doc, "<generated>")
        flags = device_flags(scenario.conf)
        config = load_device_config(scenario.objects.config_maps, flags.cm_name, flags.cm_namespace)
        flags = dataclasses.replace(flags, config=config)
        if ascend_hami.common_words(config) != ["Ascend910B"]:
            seen["310p"] += 1
            continue
        seen["910"] += 1
        assert not [w for w in scenario.warnings if "Ascend" in w or "ConfigMap" in w], scenario.warnings
        assert not any("Ascend310P" in k for n in scenario.objects.nodes for k in n.allocatable)
        for node in scenario.objects.nodes:
            pool = node_devices(node, flags).get("Ascend910B")
            if pool is None:
                continue
            seen["nodes"] += 1
            tagged = ascend_hami.has_network_id(d.info for d in pool.devices.values())
            seen["topology" if tagged else "first fit"] += 1
            for pod in scenario.objects.pods:
                value = pod.annotations.get("hami.io/Ascend910B-devices-allocated")
                if pod.node_name == node.name and value:
                    seen["running"] += 1
                    assert {e[0] for e in ascend_hami.decode_container_devices(value)} <= pool.device_ids()
        seen["asking"] += sum(1 for p in scenario.objects.pods if not p.node_name
                              and any("huawei.com/Ascend910B" in c.limits for c in p.containers))
    assert all(seen[k] > 0 for k in wanted), seen
    assert seen["310p"] > seen["910"], seen

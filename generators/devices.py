"""What the deviceshare plugin reads: GPU nodes and GPU pods (reference_impl/api/devices).

Drawn only when the conf has deviceshare (scenarios.py), after the jobs are placed. The conf's arguments
(`deviceshare_arguments`) turn on one pool, as users run it: GPU sharing by memory, whole GPUs by number,
HAMi vGPU (with binpack or spread and a weight, rarely an exclusivity rule on the label
`gpu-exclusive: "true"`), or HAMi Ascend vNPU (`deviceshare.AscendHAMiVNPUEnable`, with binpack or spread
and a weight). Ascend nodes get 1 to 4 310P devices of upstream's default config (devmem 21527, 8 cores, 7
shares; every device of a node alike, sometimes hami-core support) under the registration annotation
`hami.io/node-register-Ascend310P` and allocatable `huawei.com/Ascend310P`; an Ascend job asks, in one
container, one device with a template-sized memory (or none: the whole device), rarely two whole devices
or two partial ones (refused upstream), sometimes cores, rarely hami-core mode; rarely the device ConfigMap
turns the kind into an Ascend910 one whose devices carry network ids (`ascend910_extras`). Some nodes get cards (1 to 4 of 8000, 16000 or 24000 memory): GPU-share
capacity `volcano.sh/gpu-memory` / `gpu-number`, or the vGPU registration annotation and allocatable
`volcano.sh/vgpu-number` / `-memory` / `-cores`. Most pods ask for no GPU: a pending job asks for one in
two cases of five (every pod of the job alike), a running pod on a GPU node in one of five, and then only where
a card has room, with the annotation that names its card(s), so the cluster starts consistent; rarely a
GPU-share pod names card 0 although it is full (a pod bound directly, as in volcano-sh/volcano#5470).
Shrinks to no GPU at all.

With vGPU, after everything else is drawn (so that the draws of earlier samples stay put; `vgpu_extras`):
sometimes the device ConfigMap (default name, or rarely one the conf names through
`deviceshare.KnownGeometriesCMName` / `-Namespace`) with MIG geometries for the model "A100" (two groups of
small instances; rarely a `gpuMemoryFactor` of 2; rarely no `device-config.yaml` key), and then some GPU
nodes without running vGPU pods registered in mig mode (rarely as an H100, which no geometry names, so
upstream falls back to hami-core); rarely a node in mps mode (read as hami-core); rarely a pending job
asking a sharing mode (`volcano.sh/vgpu-mode`); rarely `deviceshare.NodeLockEnable`, with some nodes
holding a lock annotation `hamivgpu` (long expired, in the future, or not a time).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

from schedcheck.generators.quantities import choice, rarely, sometimes
from schedcheck.generators.vocabulary import GROUP_NAME

GPU_MEMORY = "volcano.sh/gpu-memory"
GPU_NUMBER = "volcano.sh/gpu-number"
GPU_INDEX = "volcano.sh/gpu-index"
VGPU_NUMBER = "volcano.sh/vgpu-number"
VGPU_MEMORY = "volcano.sh/vgpu-memory"
VGPU_CORES = "volcano.sh/vgpu-cores"
VGPU_REGISTER = "volcano.sh/node-vgpu-register"
VGPU_IDS = "volcano.sh/vgpu-ids-new"
EXCLUSIVE_LABEL = "gpu-exclusive"
GPU_MODE = "volcano.sh/vgpu-mode"
NODE_LOCK = "hamivgpu"
SHARES = 10  # a vGPU card's share count, as HAMi's default deviceSplitCount
CARD_MEMORY = (16000, 8000, 24000)
NPU = "huawei.com/Ascend310P"
NPU_MEMORY = "huawei.com/Ascend310P-memory"
NPU_CORE = "huawei.com/Ascend310P-core"
NPU_REGISTER = "hami.io/node-register-Ascend310P"
NPU_ALLOCATED = "hami.io/Ascend310P-devices-allocated"
NPU_MODE = "huawei.com/vnpu-mode"
NPU_NODE_HAMI_CORE = "hami-vnpu-core"
NPU_DEVMEM, NPU_CORES, NPU_SHARES = 21527, 8, 7
NPU_TEMPLATES = (3072, 6144, 12288)  # the default config's vir01, vir02, vir04


@st.composite
def deviceshare_arguments(draw: st.DrawFn) -> dict[str, Any]:
    mode = draw(choice(("vgpu", "gpushare", "gpunumber", "ascend")))
    if mode == "ascend":
        out = {"deviceshare.AscendHAMiVNPUEnable": True}
        if draw(sometimes(60)):
            out["deviceshare.SchedulePolicy"] = draw(choice(("binpack", "spread")))
            out["deviceshare.ScheduleWeight"] = draw(choice((10, 1, 0)))
        return out
    if mode == "gpushare":
        return {"deviceshare.GPUSharingEnable": True}
    if mode == "gpunumber":
        return {"deviceshare.GPUNumberEnable": True}
    out: dict[str, Any] = {"deviceshare.VGPUEnable": True}
    if draw(sometimes(60)):
        out["deviceshare.SchedulePolicy"] = draw(choice(("binpack", "spread")))
        out["deviceshare.ScheduleWeight"] = draw(choice((10, 1, 0)))
    if draw(rarely(25)):
        out["deviceshare.GPUExclusiveRules"] = [{EXCLUSIVE_LABEL: "true"}]
    return out


def _mode(arguments: dict[str, Any]) -> str:
    if arguments.get("deviceshare.AscendHAMiVNPUEnable"):
        return "ascend"
    if arguments.get("deviceshare.VGPUEnable"):
        return "vgpu"
    return "gpunumber" if arguments.get("deviceshare.GPUNumberEnable") else "gpushare"


def _set_resources(node: dict[str, Any], values: dict[str, str]) -> None:
    # both, as a kubelet reports them (the GPU-share pool reads capacity, the vGPU pool allocatable)
    status = node.setdefault("status", {})
    status.setdefault("allocatable", {})
    status.setdefault("capacity", dict(status["allocatable"]))
    status["capacity"].update(values)
    status["allocatable"].update(values)


def _limits(pod: dict[str, Any], values: dict[str, str]) -> None:
    pod["spec"]["containers"][0].setdefault("resources", {}).setdefault("limits", {}).update(values)


@st.composite
def _request(draw: st.DrawFn, mode: str) -> dict[str, str]:
    if mode == "gpushare":
        return {GPU_MEMORY: str(draw(choice((4000, 2000, 8000, 1000))))}
    if mode == "gpunumber":
        return {GPU_NUMBER: str(draw(choice((1, 2))))}
    if mode == "ascend":
        return draw(_npu_request())
    out = {VGPU_NUMBER: str(draw(choice((1, 2))))}
    if draw(sometimes(80)):
        out[VGPU_MEMORY] = str(draw(choice((4000, 2000, 8000))))
    if draw(sometimes(50)):
        out[VGPU_CORES] = str(draw(choice((20, 50, 10, 100))))
    return out


@st.composite
def _npu_request(draw: st.DrawFn) -> dict[str, str]:
    """One container's Ascend request; the hami-core mode marker travels as the key NPU_MODE (an annotation)."""
    if draw(rarely(15)):  # two devices: whole (fits only idle devices) or partial (upstream refuses it)
        out = {NPU: "2"}
        if draw(rarely(30)):
            out[NPU_MEMORY] = str(draw(choice(NPU_TEMPLATES)))
        return out
    out = {NPU: "1"}
    if draw(sometimes(85)):
        out[NPU_MEMORY] = str(draw(choice((3072, 4000, 6144, 2000, 12288, 21527))))
    if draw(rarely(25)):
        out[NPU_CORE] = str(draw(choice((1, 2, 4))))
    if draw(rarely(15)):
        out[NPU_MODE] = "hami-core"
        out[NPU_MEMORY] = str(draw(choice((1024, 4096))))
        out[NPU_CORE] = str(draw(choice((20, 50))))
    return out


def _npu_trim(memory: int) -> int:
    return next((t for t in NPU_TEMPLATES if memory <= t), NPU_DEVMEM)


def _place_npu(devices: list[dict[str, Any]], request: dict[str, str]) -> str | None:
    """The -devices-allocated value of a running pod on these devices, charging them; None if no room."""
    hami = request.get(NPU_MODE) == "hami-core"
    number = int(request[NPU])
    memory = int(request.get(NPU_MEMORY, str(NPU_DEVMEM)))
    memory = memory if hami else _npu_trim(memory)
    cores = int(request.get(NPU_CORE, "0"))
    if number > 1 and memory != NPU_DEVMEM and not hami:
        return None
    chosen = []
    for dev in devices:
        cap = 100 if hami else NPU_CORES
        if hami and not dev["hami"]:
            continue
        if dev["pods"] < NPU_SHARES and dev["memory"] - dev["used"] >= memory and dev["cores"] + cores <= cap \
                and not (cores == 0 and dev["cores"] == cap):
            chosen.append(dev)
            if len(chosen) == number:
                break
    if len(chosen) < number:
        return None
    for dev in chosen:
        dev["pods"] += 1
        dev["used"] += memory
        dev["cores"] += cores
    return "".join(f"{dev['uuid']},Ascend310P,{memory},{cores}:" for dev in chosen) + ";"


def _npu_node(draw: st.DrawFn, node: dict[str, Any], name: str) -> list[dict[str, Any]]:
    count = draw(st.integers(1, 4))
    hami = draw(rarely(30))
    devices = [{"memory": NPU_DEVMEM, "used": 0, "pods": 0, "cores": 0, "uuid": f"NPU-{name}-{i}", "hami": hami}
               for i in range(count)]
    annotations = node["metadata"].setdefault("annotations", {})
    annotations[NPU_REGISTER] = json.dumps(
        [{"id": d["uuid"], "count": NPU_SHARES, "devmem": NPU_DEVMEM, "devcore": NPU_CORES, "type": "Ascend310P",
          "health": True} for d in devices], separators=(",", ":"))
    if hami:
        annotations[NPU_NODE_HAMI_CORE] = "true"
    _set_resources(node, {NPU: str(count * NPU_SHARES)})
    return devices


def _npu_limits(pod: dict[str, Any], request: dict[str, str]) -> None:
    if NPU_MODE in request:
        pod["metadata"].setdefault("annotations", {})[NPU_MODE] = request[NPU_MODE]
    _limits(pod, {k: v for k, v in request.items() if k != NPU_MODE})


def _place(mode: str, cards: list[dict[str, int]], request: dict[str, str], uid: str) -> str | None:
    """The annotation value naming the cards a running pod holds, charging them; None if no room."""
    if mode == "ascend":
        return _place_npu(cards, request)
    if mode == "gpushare":
        need = int(request[GPU_MEMORY])
        for i, card in enumerate(cards):
            if card["memory"] - card["used"] >= need:
                card["used"] += need
                return str(i)
        return None
    if mode == "gpunumber":
        idle = [i for i, card in enumerate(cards) if card["pods"] == 0][: int(request[GPU_NUMBER])]
        if len(idle) < int(request[GPU_NUMBER]):
            return None
        for i in idle:
            cards[i]["pods"] += 1
        return ",".join(str(i) for i in idle)
    memory = int(request.get(VGPU_MEMORY, "0"))
    cores = int(request.get(VGPU_CORES, "0"))
    chosen = []
    for i, card in enumerate(cards):
        per_card = memory or card["memory"]
        if card["pods"] < SHARES and card["memory"] - card["used"] >= per_card and card["cores"] + cores <= 100:
            chosen.append((i, per_card))
            if len(chosen) == int(request[VGPU_NUMBER]):
                break
    if len(chosen) < int(request[VGPU_NUMBER]):
        return None
    for i, per_card in chosen:
        cards[i]["pods"] += 1
        cards[i]["used"] += per_card
        cards[i]["cores"] += cores
    return "".join(f"{cards[i]['uuid']},NVIDIA,{per_card},{cores}:" for i, per_card in chosen)


def apply_devices(draw: st.DrawFn, arguments: dict[str, Any], node_docs: list[dict[str, Any]],
                  job_docs: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Give some nodes cards and some pods GPU requests, in place; the objects to add (the device
    ConfigMap) and the deviceshare arguments to add (vgpu_extras). The mindcluster switch comes after
    every other draw of the scenario (apply_mindcluster)."""
    mode = _mode(arguments)
    exclusive = bool(arguments.get("deviceshare.GPUExclusiveRules"))
    pools: dict[str, list[dict[str, int]]] = {}
    for index, node in enumerate(node_docs):
        if not draw(sometimes(70) if index == 0 else sometimes(50)):
            continue
        name = node["metadata"]["name"]
        if mode == "ascend":
            pools[name] = _npu_node(draw, node, name)
            continue
        count = draw(st.integers(1, 4))
        memory = draw(choice(CARD_MEMORY))
        cards = [{"memory": memory, "used": 0, "pods": 0, "cores": 0, "uuid": f"GPU-{name}-{i}"}
                 for i in range(count)]
        pools[name] = cards
        if mode == "vgpu":
            node["metadata"].setdefault("annotations", {})[VGPU_REGISTER] = "".join(
                f"{c['uuid']},{SHARES},{memory},NVIDIA-A100,true,hami-core:" for c in cards)
            _set_resources(node, {VGPU_NUMBER: str(count * SHARES), VGPU_MEMORY: str(count * memory),
                                  VGPU_CORES: str(count * 100)})
        else:
            _set_resources(node, {GPU_MEMORY: str(count * memory), GPU_NUMBER: str(count)})
    if not pools:
        return [], {}
    held: set[str] = set()
    job_requests: dict[str, dict[str, str] | None] = {}
    for pod in job_docs:
        if pod.get("kind") != "Pod":
            continue
        meta = pod["metadata"]
        node = pod["spec"].get("nodeName")
        if node:
            if node not in pools or meta.get("deletionTimestamp") or not draw(rarely(20)):
                continue
            request = draw(_request(mode))
            where = _place(mode, pools[node], request, meta.get("uid", meta["name"]))
            if where is None and mode == "gpushare" and draw(rarely(20)):
                where = "0"  # bound directly with its card named by hand, room or not (volcano-sh/volcano#5470)
            if where is None:
                continue
            if mode == "ascend":
                _npu_limits(pod, request)
                meta.setdefault("annotations", {})[NPU_ALLOCATED] = where
                continue
            _limits(pod, request)
            meta.setdefault("annotations", {})[VGPU_IDS if mode == "vgpu" else GPU_INDEX] = where
            held.add(node)
        else:
            group = meta.get("annotations", {}).get(GROUP_NAME, meta["name"])
            if group not in job_requests:
                job_requests[group] = draw(_request(mode)) if draw(sometimes(40)) else None
            request = job_requests[group]
            if request is None:
                continue
            if mode == "ascend":
                _npu_limits(pod, request)
                continue
            _limits(pod, request)
        if exclusive and draw(sometimes(50)):
            meta.setdefault("labels", {})[EXCLUSIVE_LABEL] = "true"
    if mode == "ascend":
        return ascend910_extras(draw, [n for n in node_docs if n["metadata"]["name"] in pools], job_docs)
    if mode != "vgpu":
        return [], {}
    return vgpu_extras(draw, [n for n in node_docs if n["metadata"]["name"] in pools], held, job_docs)


A910 = "Ascend910B"
A910_CONFIG = f"""vnpus:
  configs:
  - commonWord: {A910}
    chipName: 910B3
    resourceName: huawei.com/{A910}
    resourceMemoryName: huawei.com/{A910}-memory
    memoryAllocatable: {NPU_DEVMEM}
    memoryCapacity: 24576
    aiCore: {NPU_CORES}
    aiCPU: 7
    templates:
    - {{name: vir01, memory: 3072, aiCore: 1, aiCPU: 1}}
    - {{name: vir02, memory: 6144, aiCore: 2, aiCPU: 2}}
    - {{name: vir04, memory: 12288, aiCore: 4, aiCPU: 4}}
"""


def _to_910(mapping: dict[str, Any]) -> dict[str, Any]:
    return {k.replace("Ascend310P", A910): v for k, v in mapping.items()}


def ascend910_extras(draw: st.DrawFn, npu_nodes: list[dict[str, Any]],
                     job_docs: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Rarely, drawn after everything else: the device ConfigMap makes the vNPU kind an Ascend910 one (the
    default kind's numbers under the common word Ascend910B), every name the nodes and pods carry is renamed
    to it, and each registered device gets custominfo.NetworkID 0 to 2 (rarely one device of a node none, so
    that node chooses first fit). Text ids (upstream gives the container no device, findings 34 and 42) are
    left to the hand scenarios."""
    if not npu_nodes or not draw(rarely(30)):
        return [], {}
    for node in npu_nodes:
        annotations = node["metadata"]["annotations"]
        devices = json.loads(annotations.pop(NPU_REGISTER))
        untagged = draw(rarely(15))
        for i, dev in enumerate(devices):
            dev["type"] = A910
            if not (untagged and i == 0):
                dev["customInfo"] = {"NetworkID": draw(st.integers(0, 2))}
        annotations[NPU_REGISTER.replace("Ascend310P", A910)] = json.dumps(devices, separators=(",", ":"))
        for key in ("capacity", "allocatable"):
            node["status"][key] = _to_910(node["status"][key])
    for pod in job_docs:
        if pod.get("kind") != "Pod":
            continue
        for container in pod["spec"]["containers"]:
            resources = container.get("resources", {})
            for key in ("limits", "requests"):
                if key in resources:
                    resources[key] = _to_910(resources[key])
        annotations = pod["metadata"].get("annotations")
        if annotations and NPU_ALLOCATED in annotations:
            annotations[NPU_ALLOCATED.replace("Ascend310P", A910)] = annotations.pop(NPU_ALLOCATED).replace(
                ",Ascend310P,", f",{A910},")
    name, namespace = MIG_CM
    return [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace},
             "data": {"device-config.yaml": A910_CONFIG}}], {}


MIG_GROUPS = (("g1", (("1g.2gb", 2000, 4), ("2g.4gb", 4000, 2))), ("g2", (("4g.8gb", 8000, 1),)))
MIG_CM = ("volcano-vgpu-device-config", "kube-system")
CUSTOM_CM = ("gpu-config", "volcano-system")


def _device_config_text(groups: list, factor: int) -> str:
    lines = ["nvidia:", "  resourceCountName: volcano.sh/vgpu-number", "  resourceMemoryName: volcano.sh/vgpu-memory",
             "  resourceCoreName: volcano.sh/vgpu-cores"]
    if factor > 1:
        lines.append(f"  gpuMemoryFactor: {factor}")
    lines += ["  knownMigGeometries:", '  - models: ["A100"]', "    allowedGeometries:"]
    for name, instances in groups:
        lines += [f"    - group: {name}", "      geometries:"]
        lines += [f"      - {{name: {inst}, memory: {memory}, count: {count}}}" for inst, memory, count in instances]
    return "\n".join(lines) + "\n"


def vgpu_extras(draw: st.DrawFn, gpu_nodes: list[dict[str, Any]], held: set[str],
                job_docs: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    args: dict[str, Any] = {}
    if draw(sometimes(40)):
        name, namespace = MIG_CM
        if draw(rarely(30)):
            name, namespace = CUSTOM_CM
            args["deviceshare.KnownGeometriesCMName"] = name
            args["deviceshare.KnownGeometriesCMNamespace"] = namespace
        groups = [g for g in MIG_GROUPS if draw(sometimes(80))] or [MIG_GROUPS[0]]
        factor = 2 if draw(rarely(15)) else 0
        key = "other.yaml" if draw(rarely(10)) else "device-config.yaml"
        docs.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace},
                     "data": {key: _device_config_text(groups, factor)}})
        for node in gpu_nodes:
            if node["metadata"]["name"] in held or not draw(sometimes(50)):
                continue
            card_type = "NVIDIA-H100" if draw(rarely(15)) else "NVIDIA-A100"
            _set_mode(node, "mig", card_type)
    for node in gpu_nodes:
        if draw(rarely(20)):
            _set_mode(node, "mps", None)
    asked: dict[str, str | None] = {}
    for pod in job_docs:
        if pod.get("kind") != "Pod" or pod["spec"].get("nodeName"):
            continue
        limits = pod["spec"]["containers"][0].get("resources", {}).get("limits", {})
        if VGPU_NUMBER not in limits:
            continue
        group = pod["metadata"].get("annotations", {}).get(GROUP_NAME, pod["metadata"]["name"])
        if group not in asked:
            asked[group] = draw(choice(("mig", "hami-core", "mps"))) if draw(rarely(15)) else None
        if asked[group]:
            pod["metadata"].setdefault("annotations", {})[GPU_MODE] = asked[group]
    if draw(rarely(15)):
        args["deviceshare.NodeLockEnable"] = True
        for node in gpu_nodes:
            if draw(rarely(30)):
                value = draw(choice(("2000-01-01T00:00:00Z", "2100-01-01T00:00:00Z", "not-a-time")))
                node["metadata"].setdefault("annotations", {})[NODE_LOCK] = value
    return docs, args


def _set_mode(node: dict[str, Any], mode: str, card_type: str | None) -> None:
    annotations = node["metadata"]["annotations"]
    entries = []
    for entry in annotations[VGPU_REGISTER].split(":"):
        if not entry:
            continue
        items = entry.split(",")
        if card_type:
            items[3] = card_type
        items[5] = mode
        entries.append(",".join(items) + ":")
    annotations[VGPU_REGISTER] = "".join(entries)


# -- mindcluster Ascend 310P vNPU (deviceshare.AscendMindClusterVNPUEnable; api/devices/ascend310p_vnpu.py) --

MC_SWITCH = "deviceshare.AscendMindClusterVNPUEnable"
MC_CORE = "huawei.com/npu-core"
MC_REAL = "huawei.com/AscendReal"
MC_CHIPS = "huawei.com/Ascend310P"
MC_UNHEALTHY = "huawei.com/Ascend310P-Unhealthy"
MC_ATLAS = ("ring-controller.atlas", "ascend-310P")
# template -> (cores, AI CPUs, labels a pod asking it carries)
MC_TEMPLATES = {"vir02_1c": (2, 1, {}), "vir01": (1, 1, {}), "vir04_3c": (4, 3, {}),
                "vir02": (2, 2, {"vnpu-level": "high"}), "vir04": (4, 4, {"vnpu-level": "high"}),
                "vir04_3c_ndvpp": (4, 3, {"vnpu-dvpp": "no"}), "vir04_4c_dvpp": (4, 4, {"vnpu-dvpp": "yes"})}


def _mc_node(draw: st.DrawFn, node: dict[str, Any]) -> list[dict[str, Any]]:
    """A 310P node: 1 to 4 chips of 8 cores (rarely 10), 7 AI CPUs each, rarely one unhealthy; the chips."""
    count = draw(st.integers(1, 4))
    per_chip = 10 if draw(rarely(15)) else 8
    unhealthy = draw(st.integers(0, count - 1)) if count > 1 and draw(rarely(15)) else None
    labels = node["metadata"].setdefault("labels", {})
    labels.update({"accelerator": "huawei-Ascend310P", "servertype": f"Ascend310P-{per_chip}",
                   "node.kubernetes.io/npu.chip.name": "310P3"})
    annotations = node["metadata"].setdefault("annotations", {})
    annotations[MC_CHIPS] = ",".join(f"Ascend310P-{i}" for i in range(count) if i != unhealthy)
    if unhealthy is not None:
        annotations[MC_UNHEALTHY] = f"Ascend310P-{unhealthy}"
    _set_resources(node, {MC_CORE: str(count * per_chip)})
    return [{"id": i, "cores": per_chip, "cpus": 7, "used": 0, "used_cpu": 0, "pods": 0}
            for i in range(count) if i != unhealthy]


def _mc_request(draw: st.DrawFn, per_chip: int) -> tuple[int, dict[str, str], str]:
    """(cores, labels, template; "" for whole chips) of a vNPU pod."""
    if draw(rarely(25)):
        return per_chip * draw(st.integers(1, 2)), {}, ""
    template = draw(choice(tuple(MC_TEMPLATES)))
    cores, _cpus, labels = MC_TEMPLATES[template]
    return cores, dict(labels), template


def _mc_ask(pod: dict[str, Any], cores: int, labels: dict[str, str]) -> None:
    pod["metadata"].setdefault("labels", {}).update({MC_ATLAS[0]: MC_ATLAS[1], **labels})
    _limits(pod, {MC_CORE: str(cores)})


def _mc_place(chips: list[dict[str, Any]], cores: int, template: str, uid: int) -> tuple[str, str] | None:
    """(npu-core annotation, AscendReal) of a running pod on these chips, charging them; None if no room."""
    if not template:
        free = [c for c in chips if c["used"] == 0][: cores // chips[0]["cores"]]
        if len(free) * chips[0]["cores"] < cores:
            return None
        for chip in free:
            chip["used"], chip["used_cpu"], chip["pods"] = chip["cores"], chip["cpus"], 1
        ids = ",".join(str(c["id"]) for c in free)
        return ids, ids
    _cores, cpus, _ = MC_TEMPLATES[template]
    for chip in chips:
        if chip["cores"] - chip["used"] >= cores and chip["cpus"] - chip["used_cpu"] >= cpus and chip["pods"] < 3:
            chip["used"] += cores
            chip["used_cpu"] += cpus
            chip["pods"] += 1
            return f"{chip['id']}-{template}", f"Ascend310P-{template}-{100 + uid}-{chip['id']}_{chip['pods']}"
    return None


def apply_mindcluster(draw: st.DrawFn, conf: dict[str, Any], node_docs: list[dict[str, Any]],
                      job_docs: list[dict[str, Any]]) -> dict[str, Any]:
    """mindcluster_extras on a scenario whose conf has deviceshare, drawn after every other draw of the
    scenario so that the samples drawn before it stay put; the conf (a copy when the arguments change)."""
    plugins = [p for tier in conf.get("tiers", []) for p in tier.get("plugins", []) if p.get("name") == "deviceshare"]
    if not plugins:
        return conf
    extra = mindcluster_extras(draw, dict(plugins[0].get("arguments") or {}), node_docs, job_docs)
    if not extra:
        return conf
    conf = copy.deepcopy(conf)  # a conf strategy may hand out one object every time
    for tier in conf.get("tiers", []):
        for plugin in tier.get("plugins", []):
            if plugin.get("name") == "deviceshare":
                plugin["arguments"] = {**(plugin.get("arguments") or {}), **extra}
    return conf


def mindcluster_extras(draw: st.DrawFn, arguments: dict[str, Any], node_docs: list[dict[str, Any]],
                       job_docs: list[dict[str, Any]]) -> dict[str, Any]:
    """Rarely the mindcluster 310P vNPU switch, alongside whatever pool the conf has: some nodes without an
    accelerator become 310P nodes (npu-core capacity, the chip labels and annotation); some running pods
    there without device limits hold a vNPU of the node's one template (or whole free chips), with the
    annotations the scheduler and the device plugin wrote (rarely no AscendReal: an unstable chip); some
    pending jobs without device limits ask a vNPU (a template, by its labels, or whole chips); sometimes a
    ScheduleWeight when the conf has none (the batch node order). Always when the conf has the switch."""
    if not arguments.get(MC_SWITCH) and not draw(rarely(30)):  # a conf that has the switch: always
        return {}
    args: dict[str, Any] = {MC_SWITCH: True}
    if "deviceshare.ScheduleWeight" not in arguments and draw(sometimes(50)):
        args["deviceshare.ScheduleWeight"] = draw(choice((10, 1)))
    nodes: dict[str, list[dict[str, Any]]] = {}
    for index, node in enumerate(node_docs):
        meta = node["metadata"]
        if "accelerator" in meta.get("labels", {}) or not draw(sometimes(90) if index == 0 else sometimes(60)):
            continue
        nodes[meta["name"]] = _mc_node(draw, node)
    per_chip = {name: int(node_docs[i]["metadata"]["labels"]["servertype"].split("-")[1])
                for i, name in ((i, n["metadata"]["name"]) for i, n in enumerate(node_docs)) if name in nodes}
    node_template: dict[str, str | None] = {}
    asked: dict[str, tuple[int, dict[str, str], str] | None] = {}
    placed = 0
    for pod in job_docs:
        if pod.get("kind") != "Pod" or pod["spec"]["containers"][0].get("resources", {}).get("limits"):
            continue
        meta = pod["metadata"]
        node = pod["spec"].get("nodeName")
        if node:
            if node not in nodes or not nodes[node] or meta.get("deletionTimestamp") or not draw(rarely(25)):
                continue
            if node not in node_template:
                node_template[node] = _mc_request(draw, per_chip[node])[2]
            template = node_template[node]
            cores = MC_TEMPLATES[template][0] if template else per_chip[node]
            where = _mc_place(nodes[node], cores, template, placed)
            if where is None:
                continue
            placed += 1
            _mc_ask(pod, cores, dict(MC_TEMPLATES[template][2]) if template else {})
            annotations = meta.setdefault("annotations", {})
            annotations[MC_CORE] = where[0]
            if not draw(rarely(25)):
                annotations[MC_REAL] = where[1]
            continue
        group = meta.get("annotations", {}).get(GROUP_NAME, meta["name"])
        if group not in asked:
            asked[group] = _mc_request(draw, 8) if nodes and draw(sometimes(60)) else None
        if asked[group] is not None:
            cores, labels, _ = asked[group]
            _mc_ask(pod, cores, labels)
    return args

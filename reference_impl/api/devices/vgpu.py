"""HAMi vGPU (api/devices/nvidia/vgpu): hami-core and MIG sharing (mig.py; MPS is read as hami-core).

A node has the pool when its annotation `volcano.sh/node-vgpu-register` holds devices
("uuid,count,memory,type,health,mode:" per card, at least six fields, else the whole list is refused) and
its allocatable names non-zero `volcano.sh/vgpu-number`, `volcano.sh/vgpu-cores` and `volcano.sh/vgpu-memory`.
Card i is the i-th ":"-separated entry. Each card has a share count (`count`), memory and 100 cores.

A container asks with limits `volcano.sh/vgpu-number` (cards; without it one card when
`volcano.sh/vgpu-memory` is limited), `volcano.sh/vgpu-memory` (per card, from limits or requests;
none means the whole card: 100 percent) and `volcano.sh/vgpu-cores` (per card). Pod annotations
`volcano.sh/vgpu-mode`, `nvidia.com/use-gputype` / `nouse-gputype`, `volcano.sh/vgpu-use-gpuuuid` /
`nouse-gpuuuid` and `volcano.sh/vgpu-podgroup-policy: spread` narrow the cards. The three resource names
(and a memory-percentage name, none by default) are the device config's (config.py: the ConfigMap).

The session writes the pod's cards at allocation as `volcano.sh/vgpu-ids-new` (and the same in
`volcano.sh/devices-to-allocate`, `volcano.sh/vgpu-node`, bind phase and times); a placed pod's usage is
read back from `volcano.sh/vgpu-ids-new`.

Faithful to upstream, including where it looks wrong (docs/findings.md): the spread policy's card score
is read after the tentative placement has counted the pod, so it is always 0; a discarded allocation
leaves its cards charged for the rest of the session (the release reads the pod's own annotations,
which do not carry the session's choice yet).
"""

from __future__ import annotations

from schedcheck.reference.api.devices import mig
from schedcheck.reference.api.devices.base import VGPU_DEVICE, DeviceFlags, SUCCESS, UNSCHEDULABLE, as_int64
from schedcheck.reference.api.devices.config import DEFAULT_NVIDIA, NvidiaConfig, VOLCANO_VGPU_CORES, \
    VOLCANO_VGPU_MEMORY, VOLCANO_VGPU_NUMBER, VOLCANO_VGPU_REGISTER
from schedcheck.reference.api.devices.nodelock import lock_node

DEVICE_NAME = VGPU_DEVICE
GPU_IN_USE = "nvidia.com/use-gputype"
GPU_NO_USE = "nvidia.com/nouse-gputype"
VGPU_USE_UUID = "volcano.sh/vgpu-use-gpuuuid"
VGPU_NOUSE_UUID = "volcano.sh/vgpu-nouse-gpuuuid"
ASSIGNED_TIME = "volcano.sh/vgpu-time"
ASSIGNED_IDS = "volcano.sh/vgpu-ids-new"
ASSIGNED_IDS_TO_ALLOCATE = "volcano.sh/devices-to-allocate"
ASSIGNED_NODE = "volcano.sh/vgpu-node"
BIND_TIME = "volcano.sh/bind-time"
DEVICE_BIND_PHASE = "volcano.sh/bind-phase"
GPU_MODE = "volcano.sh/vgpu-mode"
PODGROUP_POLICY = "volcano.sh/vgpu-podgroup-policy"
NVIDIA = "NVIDIA"
HAMI_CORE = "hami-core"
BINPACK = "binpack"
SPREAD = "spread"
KUBE_GROUP_NAME = "scheduling.k8s.io/group-name"
VOLCANO_GROUP_NAME = "scheduling.volcano.sh/group-name"
UINT_MOD = 2**64


def _atoi(text: str) -> int:
    """strconv.Atoi with the error ignored (0)."""
    try:
        return int(text) if text.strip() == text and "_" not in text else 0
    except ValueError:
        return 0


def _parse_bool(text: str) -> bool:
    return text in ("1", "t", "T", "TRUE", "true", "True")


def _int32(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


class GPUUsage:
    __slots__ = ("used_mem", "used_core", "group")

    def __init__(self, used_mem: int = 0, used_core: int = 0, group: str = "") -> None:
        self.used_mem, self.used_core, self.group = used_mem, used_core, group


class GPUDevice:
    __slots__ = ("id", "uuid", "number", "memory", "type", "health", "used_num", "used_mem", "used_core", "pods",
                 "mig_template", "mig_usage")

    def __init__(self, dev_id: int, uuid: str, number: int, memory: int, dev_type: str, health: bool) -> None:
        self.id, self.uuid, self.number, self.memory, self.type, self.health = dev_id, uuid, number, memory, dev_type, health
        self.used_num = self.used_mem = self.used_core = 0
        self.pods: dict[str, GPUUsage] = {}
        self.mig_template: tuple = ()  # the card's MIG geometries (mig.py), empty unless registered as mig
        self.mig_usage = mig.MigInUse()

    def copy(self) -> GPUDevice:
        c = GPUDevice(self.id, self.uuid, self.number, self.memory, self.type, self.health)
        c.used_num, c.used_mem, c.used_core = self.used_num, self.used_mem, self.used_core
        c.pods = {uid: GPUUsage(u.used_mem, u.used_core, u.group) for uid, u in self.pods.items()}
        c.mig_template, c.mig_usage = self.mig_template, self.mig_usage.copy()
        return c


def decode_node_devices(text: str, cfg: NvidiaConfig = DEFAULT_NVIDIA) -> dict[int, GPUDevice] | None:
    return decode_node_devices_and_mode(text, cfg)[0]


def decode_node_devices_and_mode(text: str, cfg: NvidiaConfig = DEFAULT_NVIDIA) -> tuple[dict[int, GPUDevice] | None, str]:
    """decodeNodeDevices: the cards and the pool's sharing mode (the one the last card decided)."""
    if ":" not in text:
        return None, ""
    devices: dict[int, GPUDevice] = {}
    mode = HAMI_CORE
    for index, entry in enumerate(text.split(":")):
        if "," not in entry:
            continue
        items = entry.split(",")
        if len(items) < 6:
            return None, ""
        dev = GPUDevice(index, items[0], _atoi(items[1]) % UINT_MOD, _atoi(items[2]) % UINT_MOD,
                        items[3], _parse_bool(items[4]))
        mode = mig.sharing_mode(items[5])
        if mode == mig.MIG:
            template = mig.geometry_for_type(dev.type, cfg)
            if template is None:
                mode = HAMI_CORE  # upstream logs and falls back
            else:
                dev.mig_template = template
        devices[index] = dev
    return devices, mode


def encode_pod_devices(containers: list[list[tuple[str, str, int, int]]]) -> str:
    return ";".join("".join(f"{u},{t},{m},{c}:" for u, t, m, c in cd) for cd in containers)


def decode_pod_devices(text: str) -> list[list[tuple[str, str, int, int]]]:
    if not text:
        return []
    result = []
    for part in text.split(";"):
        devs = []
        for entry in part.split(":") if part else []:
            if "," not in entry:
                continue
            items = entry.split(",")
            if len(items) < 4 or not items[2].isdigit() or not items[3].isdigit():
                continue  # upstream logs and skips the entry
            mem, cores = int(items[2]), int(items[3])
            if mem >= 2**32 or cores >= 2**32:
                continue
            devs.append((items[0], items[1], mem, cores))
        result.append(devs)
    return result


def pod_group_key(pod) -> str:
    group = pod.annotations.get(KUBE_GROUP_NAME, "") or pod.annotations.get(VOLCANO_GROUP_NAME, "")
    return f"{pod.namespace}/{group}" if group else ""


def has_vgpu_request(pod, cfg: NvidiaConfig = DEFAULT_NVIDIA) -> bool:
    return any(cfg.resource_memory_name in c.limits or cfg.resource_count_name in c.limits for c in pod.containers)


def container_requests(pod, cfg: NvidiaConfig = DEFAULT_NVIDIA) -> list[tuple[int, int, int, int]]:
    """ExtractResourceRequest: per container asking for cards, (nums, memreq, mem percentage, cores)."""
    out = []
    for c in pod.containers:
        single = False
        v = c.limits.get(cfg.resource_count_name)
        if v is None:
            v = c.limits.get(cfg.resource_memory_name)
            single = True
        if v is None:
            continue
        n = 1 if single else as_int64(v)[0]
        mem = 0
        q = c.limits.get(cfg.resource_memory_name) or c.requests.get(cfg.resource_memory_name)
        if q is not None:
            value, ok = as_int64(q)
            if ok:
                mem = _int32(value)
        pct = 101
        if cfg.resource_memory_percentage_name:
            q = c.limits.get(cfg.resource_memory_percentage_name) or c.requests.get(cfg.resource_memory_percentage_name)
            if q is not None:
                value, ok = as_int64(q)
                if ok:
                    pct = _int32(value)
        if pct == 101 and mem == 0:
            pct = 100
        cores = 0
        q = c.limits.get(cfg.resource_core_name) or c.requests.get(cfg.resource_core_name)
        if q is not None:
            value, ok = as_int64(q)
            if ok:
                cores = _int32(value)
        out.append((_int32(n), mem, pct, cores))
    return out


def _check_gpu_type(annotations: dict, card_type: str) -> bool:
    upper = card_type.upper()
    if GPU_IN_USE in annotations:
        return any(v.upper() in upper for v in annotations[GPU_IN_USE].split(","))
    if GPU_NO_USE in annotations:
        return not any(v.upper() in upper for v in annotations[GPU_NO_USE].split(","))
    return True


def _uuid_list(value: str) -> list[str]:
    return [u.strip() for u in value.split(",") if u.strip()]


def gpu_score(policy: str, dev: GPUDevice) -> float:
    if policy == BINPACK:
        return 100 * (dev.used_mem / dev.memory) if dev.memory else (float("nan") if dev.used_mem == 0 else float("inf"))
    if policy == SPREAD:
        return 100.0 if dev.used_num == 0 else 0.0
    return 0.0


class GPUDevices:
    def __init__(self, node_name: str, devices: dict[int, GPUDevice], flags: DeviceFlags, mode: str = HAMI_CORE) -> None:
        self.name = node_name
        self.devices = devices
        self.flags = flags
        self.mode = mode
        self.score = 0.0
        self.locks = None  # the API server's node lock annotations (nodelock.py), set by the cache

    @property
    def cfg(self) -> NvidiaConfig:
        return self.flags.config.nvidia

    @classmethod
    def from_node(cls, node, flags: DeviceFlags) -> GPUDevices | None:
        register = node.annotations.get(VOLCANO_VGPU_REGISTER)
        if register is None:
            return None
        for name in (VOLCANO_VGPU_NUMBER, VOLCANO_VGPU_CORES, VOLCANO_VGPU_MEMORY):
            q = node.allocatable.get(name)
            if q is None or q.value() == 0:
                return None
        devices, mode = decode_node_devices_and_mode(register, flags.config.nvidia)
        if not devices:
            return None
        return cls(node.name, devices, flags, mode)

    def deep_copy(self) -> GPUDevices:
        c = GPUDevices(self.name, {i: d.copy() for i, d in self.devices.items()}, self.flags, self.mode)
        c.score = self.score
        c.locks = self.locks
        return c

    # -- ledger (hami-core sharing) ----------------------------------------------------------

    def _match(self, uuid: str) -> GPUDevice | None:
        for dev in self.devices.values():  # upstream: Go map order; card uuids that contain one another differ
            if dev.uuid in uuid:
                return dev
        return None

    def add_resource(self, pod) -> None:
        ids = pod.annotations.get(ASSIGNED_IDS)
        if ids is None:
            return
        for container in decode_pod_devices(ids):
            for uuid, _type, mem, cores in container:
                dev = self._match(uuid)
                if dev is None:
                    continue
                if self.mode == mig.MIG:  # MIGFactory.AddPod: the instance's memory, not the entry's
                    decoded = mig.decode_mig_id(uuid)
                    if decoded is None or pod.uid in dev.pods:
                        continue  # upstream logs the decoding error
                    used = mig.add_mig_used(dev, *decoded)
                    if used is None:
                        continue  # upstream panics (a position beyond the group's instances)
                    mem = used // mig.factor_of(self.cfg)
                elif pod.uid in dev.pods:
                    continue
                dev.pods[pod.uid] = GPUUsage(mem, cores, pod_group_key(pod))
                dev.used_num = (dev.used_num + 1) % UINT_MOD
                dev.used_mem = (dev.used_mem + mem) % UINT_MOD
                dev.used_core = (dev.used_core + cores) % UINT_MOD

    def sub_resource(self, pod) -> None:
        ids = pod.annotations.get(ASSIGNED_IDS)
        if ids is None:
            return
        for container in decode_pod_devices(ids):
            for uuid, _type, mem, cores in container:
                dev = self._match(uuid)
                if dev is None:
                    continue
                if self.mode == mig.MIG:
                    decoded = mig.decode_mig_id(uuid)
                    if decoded is None or pod.uid not in dev.pods:
                        continue
                    used = mig.sub_mig_used(dev, *decoded)
                    if used is None:
                        continue  # upstream panics
                    mem = used // mig.factor_of(self.cfg)
                elif pod.uid not in dev.pods:
                    continue  # upstream logs "pod not exist in GPU pod map"
                dev.used_num = (dev.used_num - 1) % UINT_MOD
                dev.used_mem = (dev.used_mem - mem) % UINT_MOD
                dev.used_core = (dev.used_core - cores) % UINT_MOD
                del dev.pods[pod.uid]

    def add_queue_resource(self, pod) -> dict[str, float]:
        res: dict[str, float] = {}
        ids = pod.annotations.get(ASSIGNED_IDS)
        if ids is None:
            return res
        for container in decode_pod_devices(ids):
            for uuid, _type, mem, cores in container:
                for dev in self.devices.values():
                    if dev.uuid in uuid:
                        cfg = self.cfg
                        res[cfg.resource_memory_name] = res.get(cfg.resource_memory_name, 0.0) + float(mem * 1000 % UINT_MOD)
                        res[cfg.resource_core_name] = res.get(cfg.resource_core_name, 0.0) + float(cores * 1000 % UINT_MOD)
        return res

    # -- scheduling -------------------------------------------------------------------------

    def has_device_request(self, pod) -> bool:
        return self.flags.vgpu and has_vgpu_request(pod, self.cfg)

    def _order(self, policy: str) -> list[int]:
        keys = list(self.devices)
        if policy == BINPACK:
            return sorted(keys, key=lambda i: (-self.devices[i].used_mem, i))
        if policy == SPREAD:
            return sorted(keys, key=lambda i: (self.devices[i].used_num, i))
        return list(range(len(self.devices) - 1, -1, -1))  # upstream indexes 0..n-1 whatever the keys

    def fit(self, pod, replicate: bool, policy: str):
        """checkNodeGPUSharingPredicateAndScore: (fit, per-container cards, score, error)."""
        cfg = self.cfg
        if not has_vgpu_request(pod, cfg):
            return True, [], 0.0, None
        mode = pod.annotations.get(GPU_MODE)
        if mode is not None and mode != self.mode:
            return False, [], 0.0, f"pod required sharing mode {mode} is not the same as the node mode {self.mode}"
        requests = container_requests(pod, cfg)
        if not requests:
            return True, [], 0.0, None
        pool = self.deep_copy() if replicate else self
        group = pod_group_key(pod) if pod.annotations.get(PODGROUP_POLICY) == SPREAD else ""
        allow = _uuid_list(pod.annotations.get(VGPU_USE_UUID, ""))
        deny = _uuid_list(pod.annotations.get(VGPU_NOUSE_UUID, ""))
        filtering = bool(allow or deny)
        tentative: list[tuple[GPUDevice, int, int]] = []

        def rollback() -> None:
            for dev, mem, core in tentative:
                dev.used_num = dev.used_num - 1 if dev.used_num > 0 else 0
                dev.used_mem = dev.used_mem - mem if dev.used_mem >= mem else 0
                dev.used_core = dev.used_core - core if dev.used_core >= core else 0

        score = 0.0
        chosen: list[list[tuple[str, str, int, int]]] = []
        for nums, memreq, pct, cores in requests:
            devs: list[tuple[str, str, int, int]] = []
            uuid_matched = False
            if nums > len(pool.devices):
                rollback()
                return False, [], 0.0, f"no enough gpu cards on node {pool.name}"
            for i in pool._order(policy):
                dev = pool.devices.get(i)
                if dev is None:
                    continue  # upstream dereferences a missing card and panics (an annotation with a gap)
                if (dev.uuid == "" and filtering) or (allow and dev.uuid not in allow) or dev.uuid in deny:
                    continue
                uuid_matched = True
                if dev.number <= dev.used_num:
                    continue
                if group and any(u.group == group and (u.used_mem > 0 or u.used_core > 0) for u in dev.pods.values()):
                    continue
                mem = int(dev.memory * pct / 100.0) % UINT_MOD if pct != 101 else memreq % UINT_MOD
                if dev.memory - dev.used_mem < mem:
                    continue
                if dev.used_core + cores % UINT_MOD > 100:
                    continue
                if cores == 100 and dev.used_num > 0:
                    continue
                if dev.used_core == 100 and cores == 0:
                    continue
                if NVIDIA not in dev.type or not _check_gpu_type(pod.annotations, dev.type):
                    continue
                fitted, dev_id = pool._try_add_pod(dev, mem, cores % UINT_MOD)
                if not fitted:
                    continue
                tentative.append((dev, mem, cores % UINT_MOD))  # rolled back by the request, as upstream
                if nums > 0:
                    nums -= 1
                    devs.append((dev_id, NVIDIA, mem, cores % UINT_MOD))
                    score += gpu_score(policy, dev)
                if nums == 0:
                    break
            if nums > 0:
                rollback()
                if filtering and not uuid_matched:
                    return False, [], 0.0, (
                        f'no GPU matches UUID constraints {VGPU_USE_UUID}="{pod.annotations.get(VGPU_USE_UUID, "")}", '
                        f'{VGPU_NOUSE_UUID}="{pod.annotations.get(VGPU_NOUSE_UUID, "")}" on node {pool.name}')
                return False, [], 0.0, "not enough gpu fitted on this node"
            chosen.append(devs)
        return True, chosen, score, None

    def _try_add_pod(self, dev: GPUDevice, mem: int, cores: int) -> tuple[bool, str]:
        """The sharing handler's TryAddPod: hami-core charges the request, MIG an instance (mig.py)."""
        if self.mode == mig.MIG:
            factor = mig.factor_of(self.cfg)
            found, dev_id, used = mig.find_match(dev.uuid, mem * factor % UINT_MOD, dev.mig_usage, dev.mig_template)
            if not found:
                return False, ""
            mem = used // factor
        else:
            dev_id = dev.uuid
        dev.used_num = (dev.used_num + 1) % UINT_MOD
        dev.used_mem = (dev.used_mem + mem) % UINT_MOD
        dev.used_core = (dev.used_core + cores) % UINT_MOD
        return True, dev_id

    def filter_node(self, pod, policy: str) -> tuple[int, str, str | None]:
        fit, _cards, score, err = self.fit(pod, True, policy)
        if err is not None or not fit:
            return UNSCHEDULABLE, "hami-vgpuDeviceSharing error", err
        self.score = score
        return SUCCESS, "", None

    def score_node(self, pod, policy: str) -> float:
        return self.score

    def allocate(self, pod, now_ns: int) -> tuple[dict[str, str] | None, str | None]:
        fit, cards, _score, err = self.fit(pod, False, self.flags.schedule_policy)
        if err is not None or not fit:
            return None, err or "not fit"
        if self.flags.node_lock and self.locks is not None:
            lock_err = lock_node(self.locks, self.name, DEVICE_NAME, now_ns)
            if lock_err is not None:
                return None, f"node {self.name} locked for {pod.name} hamivgpu lockname {lock_err}"
        seconds = str(now_ns // 10**9)
        encoded = encode_pod_devices(cards)
        annotations = {
            ASSIGNED_NODE: self.name, ASSIGNED_TIME: seconds, ASSIGNED_IDS: encoded,
            ASSIGNED_IDS_TO_ALLOCATE: encoded, DEVICE_BIND_PHASE: "allocating", BIND_TIME: seconds,
        }
        group = pod_group_key(pod)
        for container in cards:  # addToPodMap: every card whose uuid the chosen one contains
            for uuid, _type, mem, cores in container:
                for dev in self.devices.values():
                    if dev.uuid in uuid:
                        usage = dev.pods.setdefault(pod.uid, GPUUsage())
                        usage.used_mem += mem
                        usage.used_core += cores
                        usage.group = group
        return annotations, None

    def release(self, pod) -> list[str]:
        self.sub_resource(pod)
        if pod.annotations.get(DEVICE_BIND_PHASE) == "success":
            return []
        return [ASSIGNED_NODE, ASSIGNED_IDS, ASSIGNED_IDS_TO_ALLOCATE, ASSIGNED_TIME, BIND_TIME, DEVICE_BIND_PHASE]

    # -- what the invariants read ------------------------------------------------------------

    def ledger(self) -> list[dict]:
        out = [{"id": d.uuid, "number": d.number, "used_num": d.used_num, "memory": d.memory,
                "used_memory": d.used_mem, "cores": 100, "used_cores": d.used_core, "pods": sorted(d.pods)}
               for _i, d in sorted(self.devices.items())]
        if self.mode == mig.MIG:  # each MIG instance kind offers `count` indexes; the usage list takes some
            for _i, d in sorted(self.devices.items()):
                if d.mig_usage.index < 0 or d.mig_usage.index >= len(d.mig_template):
                    continue
                group = d.mig_template[d.mig_usage.index]
                for used in d.mig_usage.usage_list:
                    count = sum(inst.count for inst in group.instances if inst.name == used.name)
                    out.append({"id": f"{d.uuid}[{group.group}:{used.name}]", "number": count,
                                "used_num": len(used.used_index)})
        return out

    def device_ids(self) -> set[str]:
        ids = {d.uuid for d in self.devices.values()}
        if self.mode == mig.MIG:
            for d in self.devices.values():
                ids |= mig.instance_ids(d.uuid, d.mig_template)
        return ids

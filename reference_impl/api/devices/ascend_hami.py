"""HAMi Ascend vNPU (api/devices/ascend/hami), one pool per vNPU kind of the device configuration.

The reference uses upstream's default configuration (config.py): one kind, common word "Ascend310P"
(resource `huawei.com/Ascend310P`, memory resource `huawei.com/Ascend310P-memory`, templates vir01 3072,
vir02 6144, vir04 12288, memoryAllocatable 21527, memoryCapacity 24576). A node has the kind's pool when
its allocatable names a non-zero `huawei.com/Ascend310P` and its annotation `hami.io/node-register-Ascend310P`
holds a non-empty JSON list of devices (objects with `id`, `count`, `devmem`, `devcore`, ...; Go's
encoding/json rules: keys matched regardless of case, an integer field refuses a fraction or an exponent,
any type mismatch refuses the whole list). The node annotation `hami-vnpu-core` ("true" or anything else)
says whether the node supports hami-core mode (default: the configuration's hamiVnpuCore, false).

A container asks when its limits name the count or the memory resource: `huawei.com/Ascend310P` N devices
(without it one device), memory from limits or requests of `huawei.com/Ascend310P-memory` (none: the
first device's whole memory), cores from `huawei.com/Ascend310P-core`. Unless the pod's annotation
`huawei.com/vnpu-mode` is "hami-core", the memory is rounded up to the smallest template that holds it
(above the last template: memoryAllocatable up to memoryCapacity, beyond it 0), and asking for several
devices with less than memoryAllocatable is an error (code Error, not Unschedulable).

Devices are tried by score, highest first (binpack: 100 * used / total memory; spread: 100 on an unused
device; otherwise 0). Upstream snapshots them from a Go map and sorts with an unstable sort, so ties fall
in random order; the reference keeps the annotation's order among ties (one of upstream's outcomes: the
node decision only differs where two containers compete for devices, which the generators do not draw).

A kind whose common word starts with "Ascend910" (configured through the device ConfigMap) chooses by
network when every device of the node has the key NetworkID in its registration's `custominfo` (any
value): a container's candidates are all the devices that fit (not only the first N), grouped by network
(a JSON number, truncated towards zero as Go converts float64 to int; a device whose id is not a number is
in no group and never chosen, though the count check before the grouping saw it), the largest group first
and each group in device order, until N are taken (a count of 0 or less takes every grouped device). Its
ScoreNode adds 10 * (containers whose first device lies in the commonest network) / (containers with a
numeric id), when every first device has the key; when none of those ids is a number the whole score is 0.
Upstream sorts equal-sized networks with an unstable sort over a Go map (random order); the reference
takes them in the order their first device appears.

The session writes, at allocation, `hami.io/Ascend310P-devices-to-allocate` and
`hami.io/Ascend310P-devices-allocated` ("id,Ascend310P,memory,cores:" per device, ";" after each
container), `huawei.com/Ascend310P` (JSON: each device's UUID and template name, or memory and core in
hami-core mode), `predicate-time`, `hami.io/vgpu-node`, `hami.io/vgpu-time`, `hami.io/bind-phase`
(allocating) and `hami.io/bind-time`. A placed pod's usage is read back from the -devices-allocated
annotation. With `deviceshare.NodeLockEnable` the allocation first takes the node lock named
`hami.io/mutex.lock` (nodelock.py: refused while another lock of that name is younger than five minutes);
upstream 3347c2025 named it after the kind and released it right after allocating.

Faithful to upstream where it looks wrong (docs/findings.md): the annotation is decoded as one
container's list (split on ":" only), so from the second container on a device id reads ";id", matches no
device and is not charged, neither at allocation nor when the placed pod is read back; the node's
scheduling policy used at allocation is the one its last ScoreNode saw (none when the node was the only
candidate or ScheduleWeight is 0: then every device scores 0); a container asking a count of 0 still
takes one device when one fits, and where none fits ScoreNode indexes an empty list: upstream panics, the
reference raises an upstream assertion. On an Ascend910 kind whose NetworkIDs are text, a container is given
no device at all: with one candidate node the pod is bound holding nothing (annotation ";"), with several and
a score weight ScoreNode panics the same way (docs/findings.md rows 34 and 42).
"""

from __future__ import annotations

import json
import math
import re

from schedcheck.reference.api.devices.base import DeviceFlags, ERROR, SUCCESS, UNSCHEDULABLE, as_int64
from schedcheck.reference.api.devices.config import DEFAULT_CONFIG, DeviceConfig, VNPUConfig
from schedcheck.reference.api.devices.nodelock import lock_node
from schedcheck.reference.util.assertion import assertf

HAMI_PREFIX = "hami.io"
VNPU_MODE = "huawei.com/vnpu-mode"
HAMI_CORE = "hami-core"
NODE_HAMI_CORE = "hami-vnpu-core"
NODE_LOCK = "hami.io/mutex.lock"  # NodeLockAscend: the lock of every kind (3347c2025)
ASSIGNED_NODE = "hami.io/vgpu-node"
ASSIGNED_TIME = "hami.io/vgpu-time"
BIND_TIME = "hami.io/bind-time"
DEVICE_BIND_PHASE = "hami.io/bind-phase"
PREDICATE_TIME = "predicate-time"
ASCEND910_PREFIX = "Ascend910"
ASCEND910_NETWORK_WEIGHT = 10
BINPACK = "binpack"
SPREAD = "spread"
NO_DEVICE_REASON = "no ascend device available"
INSUFFICIENT = "no enough ascend device available"
PARTIAL_MEMORY = "vNPU does not support partial memory allocation when requesting multiple devices"


def common_words(config: DeviceConfig = DEFAULT_CONFIG) -> list[str]:
    """GetAscendDeviceNames: the vNPU kinds of the configuration, in its order (the device names)."""
    return [c.common_word for c in config.vnpu_configs]


def register_annotation(word: str) -> str:
    return f"{HAMI_PREFIX}/node-register-{word}"


def to_allocate_annotation(word: str) -> str:
    return f"{HAMI_PREFIX}/{word}-devices-to-allocate"


def allocated_annotation(word: str) -> str:
    return f"{HAMI_PREFIX}/{word}-devices-allocated"


def runtime_annotation(word: str) -> str:
    return f"huawei.com/{word}"


def core_resource(config: VNPUConfig) -> str:
    return f"{config.resource_name}-core"


def _int32(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


def _go_div(a: int, b: int) -> int:
    """Go's integer division, truncating towards zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


# -- the node's registration (devices.UnMarshalNodeDevices into []*DeviceInfo) ------------------------

class _Float:
    """A JSON number written with a fraction or an exponent: Go refuses it for an integer field."""

    def __init__(self, text: str) -> None:
        self.text = text


def _no_constant(text: str):
    raise ValueError(f"{text} is not JSON")


_INT_FIELDS = {"index": (0, 2**64 - 1), "count": (-2**31, 2**31 - 1), "devmem": (-2**31, 2**31 - 1),
               "devcore": (-2**31, 2**31 - 1), "numa": (-2**63, 2**63 - 1)}
_STR_FIELDS = ("id", "type", "mode", "devicevendor")


NO_NETWORK = object()  # custominfo has no NetworkID key (or no custominfo at all)
NETWORK_ID = "NetworkID"


class DeviceInfo:
    __slots__ = ("id", "count", "devmem", "devcore", "custom", "network")

    def __init__(self, dev_id: str = "", count: int = 0, devmem: int = 0, devcore: int = 0,
                 network: object = NO_NETWORK) -> None:
        self.id, self.count, self.devmem, self.devcore = dev_id, count, devmem, devcore
        self.custom: dict | None = None if network is NO_NETWORK else {NETWORK_ID: network}
        self.network = network  # custominfo["NetworkID"] as decoded (a number: int or _Float), or NO_NETWORK


def _float64(value: object) -> float | None:
    """A JSON number as Go's decoder reads it into an interface (strconv.ParseFloat); None beyond float64."""
    try:
        f = float(value.text) if isinstance(value, _Float) else float(value)
    except OverflowError:
        return None
    return None if math.isinf(f) else f


def _numbers_fit_float64(value: object) -> bool:
    """Every number anywhere in a decoded JSON value reads as a float64 (iterative: any depth json allows)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif (isinstance(item, _Float) or (isinstance(item, int) and not isinstance(item, bool))) \
                and _float64(item) is None:
            return False
    return True


def network_number(info: DeviceInfo) -> int | None:
    """int(NetworkID.(float64)): the device's network when its NetworkID is a JSON number (truncated towards
    zero, as Go converts a float64 to int), else None (upstream's type assertion fails and skips it). Beyond
    int64 Go's conversion is implementation-dependent (amd64: the smallest int64); the scenario reader refuses
    such an id (network_id_problem), so the value here is amd64's only for completeness."""
    value = info.network
    if value is NO_NETWORK or not (isinstance(value, _Float) or (isinstance(value, int)
                                                                  and not isinstance(value, bool))):
        return None
    f = _float64(value)
    if f is None or not -2.0**63 <= f < 2.0**63:
        return -2**63
    return int(f)


def network_id_problem(info: DeviceInfo) -> str | None:
    """Why a device's NetworkID cannot be run faithfully (a number Go's float64-to-int conversion leaves to
    the platform), or None."""
    value = info.network
    if isinstance(value, _Float) or (isinstance(value, int) and not isinstance(value, bool)):
        f = _float64(value)
        if f is not None and not -2.0**63 <= f < 2.0**63:
            text = value.text if isinstance(value, _Float) else str(value)
            return (f"custominfo.NetworkID {text} lies outside int64: Go's conversion of it to int is "
                    "implementation-dependent")
    return None


def has_network_id(infos) -> bool:
    """hasNetworkID: every device's custominfo holds the key NetworkID (whatever its value)."""
    return all(info.network is not NO_NETWORK for info in infos)


def decode_node_devices(text: str) -> tuple[list[DeviceInfo] | None, str]:
    """The devices of a registration annotation, or (None, why upstream refuses it)."""
    try:
        raw = json.loads(text, parse_float=_Float, parse_constant=_no_constant)
    except (ValueError, RecursionError) as err:
        return None, f"not JSON ({str(err).splitlines()[0]})"
    if raw is None:
        return None, "no device found on node"
    if not isinstance(raw, list):
        return None, "not a JSON list of devices"
    out = []
    for i, entry in enumerate(raw):
        if entry is None:
            return None, f"entry {i} is null (upstream's scheduler dereferences it and panics)"
        if not isinstance(entry, dict):
            return None, f"entry {i} is not an object"
        info = DeviceInfo()
        for key, value in entry.items():
            name = key.lower()
            if name == "custominfo":
                if value is None:  # Go sets a map to nil on null
                    info.custom = None
                    continue
                if not isinstance(value, dict):
                    return None, f"entry {i}: {key} is not an object"
                if not _numbers_fit_float64(value):
                    return None, f"entry {i}: {key} holds a number beyond float64"
                info.custom = {**(info.custom or {}), **value}  # a second spelling of the key adds to the map
                continue
            if value is None:
                continue  # Go leaves the field alone
            if name in _STR_FIELDS:
                if not isinstance(value, str):
                    return None, f"entry {i}: {key} is not a string"
                if name == "id":
                    info.id = value
            elif name in _INT_FIELDS:
                low, high = _INT_FIELDS[name]
                if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                    return None, f"entry {i}: {key} is not a whole number within {low}..{high}"
                if name in ("count", "devmem", "devcore"):
                    setattr(info, name, value)
            elif name == "health":
                if not isinstance(value, bool):
                    return None, f"entry {i}: {key} is not a boolean"
            elif name == "devicepairscore":
                if not isinstance(value, dict):
                    return None, f"entry {i}: {key} is not an object"
        info.network = NO_NETWORK if info.custom is None else info.custom.get(NETWORK_ID, NO_NETWORK)
        out.append(info)
    if not out:
        return None, "no device found on node"
    return out, ""


def node_supports_hami_core(node, config: DeviceConfig = DEFAULT_CONFIG) -> bool:
    value = node.annotations.get(NODE_HAMI_CORE)
    if value is None:
        return config.vnpu_hami_core
    return value == "true"


# -- a pod's annotation of its devices (DecodeContainerDevices over the whole value) -------------------

_GO_INT = re.compile(r"[+-]?[0-9]+\Z")


def _parse_int32(text: str) -> int:
    """strconv.ParseInt(s, 10, 32) with the error ignored: 0 on bad syntax, clamped when out of range."""
    if not _GO_INT.match(text):
        return 0
    return max(-2**31, min(2**31 - 1, int(text)))


def decode_container_devices(text: str) -> list[tuple[str, str, int, int]] | None:
    """(id, type, memory, cores) of each ":"-separated entry holding a comma; None when an entry has fewer
    than four fields (upstream's decode error). The ";" after a container stays in front of the next id."""
    out = []
    if not text:
        return out
    for entry in text.split(":"):
        if "," not in entry:
            continue
        fields = entry.split(",")
        if len(fields) < 4:
            return None
        out.append((fields[0], fields[1], _parse_int32(fields[2]), _parse_int32(fields[3])))
    return out


def encode_pod_devices(pod_devs: list[list[tuple[str, str, int, int]]]) -> str:
    return "".join("".join(f"{u},{t},{m},{c}:" for u, t, m, c in container) + ";" for container in pod_devs)


def is_hami_core_mode(pod) -> bool:
    return pod.annotations.get(VNPU_MODE) == HAMI_CORE


# -- the pool ---------------------------------------------------------------------------------------

class AscendDevice:
    __slots__ = ("id", "count", "devmem", "devcore", "info", "used", "usedmem", "usedcores", "pods")

    def __init__(self, info: DeviceInfo) -> None:
        self.id, self.count, self.devmem, self.devcore = info.id, info.count, info.devmem, info.devcore
        self.info = info  # shared by copies, as upstream's snapshots share the *DeviceInfo
        self.used = self.usedmem = self.usedcores = 0
        self.pods: dict[str, tuple[int, int]] = {}  # PodMap: pod uid -> (memory, cores)

    def copy(self) -> AscendDevice:
        c = AscendDevice(self.info)
        c.used, c.usedmem, c.usedcores = self.used, self.usedmem, self.usedcores
        c.pods = dict(self.pods)
        return c


class Request:
    __slots__ = ("nums", "memreq", "pct", "coresreq")

    def __init__(self, nums: int, memreq: int, pct: int, coresreq: int) -> None:
        self.nums, self.memreq, self.pct, self.coresreq = nums, memreq, pct, coresreq


def _quantity_int32(container, name: str, requests_too: bool) -> tuple[int, bool]:
    q = container.limits.get(name)
    if q is None and requests_too:
        q = container.requests.get(name)
    if q is None:
        return 0, False
    value, ok = as_int64(q)
    return (_int32(value), True) if ok else (0, True)


def cal_score(policy: str, dev: AscendDevice) -> float:
    if dev.devmem == 0:
        return 0.0
    if policy == BINPACK:
        return 100 * (dev.usedmem / dev.devmem)
    if policy == SPREAD:
        return 100.0 if dev.used == 0 else 0.0
    return 0.0


class AscendDevices:
    def __init__(self, node_name: str, config: VNPUConfig, devices: dict[str, AscendDevice], hami_core: bool,
                 flags: DeviceFlags, policy: str = "") -> None:
        self.name = node_name
        self.config = config
        self.type = config.common_word
        self.devices = devices
        self.hami_core = hami_core
        self.flags = flags
        self.policy = policy  # ads.Policy: set by ScoreNode, read by Allocate
        self.locks = None  # the API server's node annotations (nodelock.py), set by the cache
        self.templates = sorted(config.templates, key=lambda t: t.memory)

    @classmethod
    def from_node(cls, node, config: VNPUConfig, flags: DeviceFlags) -> AscendDevices | None:
        count = node.allocatable.get(config.resource_name)
        if count is None or count.is_zero():
            return None
        text = node.annotations.get(register_annotation(config.common_word))
        if text is None:
            return None
        infos, _why = decode_node_devices(text)
        if infos is None:
            return None
        devices = {info.id: AscendDevice(info) for info in infos}  # a repeated id: the last one
        return cls(node.name, config, devices, node_supports_hami_core(node, flags.config), flags)

    def deep_copy(self) -> AscendDevices:
        out = AscendDevices(self.name, self.config, {k: d.copy() for k, d in self.devices.items()}, self.hami_core,
                            self.flags, self.policy)
        out.locks = self.locks
        return out

    # -- ledger ------------------------------------------------------------------------------

    def _charge(self, dev: AscendDevice, uid: str, mem: int, cores: int) -> None:
        dev.pods[uid] = (mem, cores)
        dev.used = _int32(dev.used + 1)
        dev.usedcores = _int32(dev.usedcores + cores)
        dev.usedmem = _int32(dev.usedmem + mem)

    def _uncharge(self, dev: AscendDevice, uid: str, mem: int, cores: int) -> None:
        del dev.pods[uid]
        dev.used = _int32(dev.used - 1)
        dev.usedcores = _int32(dev.usedcores - cores)
        dev.usedmem = _int32(dev.usedmem - mem)

    def _add_from(self, annotations: dict[str, str], uid: str) -> None:
        value = annotations.get(allocated_annotation(self.type))
        if value is None:
            return
        for dev_id, _type, mem, cores in decode_container_devices(value) or []:
            dev = self.devices.get(dev_id)
            if dev is not None and uid not in dev.pods:
                self._charge(dev, uid, mem, cores)

    def add_resource(self, pod) -> None:
        self._add_from(pod.annotations, pod.uid)

    def sub_resource(self, pod) -> None:
        value = pod.annotations.get(allocated_annotation(self.type))
        if value is None:  # subResourceByUID
            for dev in self.devices.values():
                if pod.uid in dev.pods:
                    mem, cores = dev.pods[pod.uid]
                    self._uncharge(dev, pod.uid, mem, cores)
            return
        for dev_id, _type, mem, cores in decode_container_devices(value) or []:
            dev = self.devices.get(dev_id)
            if dev is not None and pod.uid in dev.pods:
                self._uncharge(dev, pod.uid, mem, cores)

    def add_queue_resource(self, pod) -> dict[str, float]:
        return {}

    def ignored_devices(self) -> list[str]:
        """GetIgnoredDevices: the resource names NewResource leaves out once a node has this pool."""
        return [self.config.resource_memory_name, core_resource(self.config)]

    # -- requests ----------------------------------------------------------------------------

    def has_device_request(self, pod) -> bool:
        if not self.flags.ascend_hami or not self.devices:
            return False
        return any(self.config.resource_name in c.limits or self.config.resource_memory_name in c.limits
                   for c in pod.containers)

    def trim_memory(self, m: int) -> tuple[int, str]:
        for t in self.templates:
            if m <= t.memory:
                return t.memory, t.name
        if m <= self.config.memory_capacity:
            return self.config.memory_allocatable, ""
        return 0, ""

    def resource_reqs(self, pod, first: AscendDevice) -> list[Request]:
        """ExtractResourceRequest, then the percentage and template rounding of ResourceReqs."""
        reqs = []
        hami = is_hami_core_mode(pod)
        for c in pod.containers:
            q = c.limits.get(self.config.resource_name)
            single = q is None
            if single and self.config.resource_memory_name not in c.limits:
                continue
            n = 1
            if not single:
                n, ok = as_int64(q)
                n = n if ok else 0
            memnum, _ = _quantity_int32(c, self.config.resource_memory_name, True)
            pct = 100 if memnum == 0 else 101
            cores, _ = _quantity_int32(c, core_resource(self.config), True)
            req = Request(_int32(n), memnum, pct, cores)
            if req.memreq == 0 and req.pct != 0:
                req.memreq = _int32(_go_div(_int32(first.devmem * req.pct), 100))
            if req.memreq > 0 and not hami:
                req.memreq = _int32(self.trim_memory(req.memreq)[0])
            reqs.append(req)
        return reqs

    def fit(self, req: Request, dev: AscendDevice, hami: bool) -> bool:
        if hami and not self.hami_core:
            return False
        if dev.count <= dev.used:
            return False
        if _int32(dev.devmem - dev.usedmem) < req.memreq:
            return False
        total = 100 if hami else dev.devcore
        if _int32(total - dev.usedcores) < req.coresreq:
            return False
        if total == 100 and req.coresreq == 100 and dev.used > 0:
            return False
        if total != 0 and dev.usedcores == total and req.coresreq == 0:
            return False
        return True

    def select_devices(self, pod, policy: str) -> tuple[list[list[tuple[str, str, int, int]]] | None, int, str]:
        """selectDevices: (per-container devices, code, error); code UNSCHEDULABLE when too few devices fit,
        ERROR for a malformed request."""
        snapshot = [d.copy() for d in self.devices.values()]
        if not snapshot:
            return None, ERROR, NO_DEVICE_REASON
        snapshot.sort(key=lambda d: -cal_score(policy, d))  # stable: the annotation's order among ties
        topology = self.is_ascend910() and has_network_id(d.info for d in snapshot)
        hami = is_hami_core_mode(pod)
        reqs = self.resource_reqs(pod, snapshot[0])
        used: set[str] = set()
        pod_devs = []
        for req in reqs:
            if not hami and req.nums > 1 and self.trim_memory(req.memreq)[0] != self.config.memory_allocatable:
                return None, ERROR, PARTIAL_MEMORY
            left = req.nums
            selected = []
            for dev in snapshot:
                if dev.id in used or not self.fit(req, dev, hami):
                    continue
                selected.append(dev)
                left -= 1
                if left <= 0 and not topology:
                    break  # with topology every fitting device is a candidate
            if left > 0:
                return None, UNSCHEDULABLE, INSUFFICIENT
            if topology:
                selected = select_with_topology(req.nums, selected)
            used |= {d.id for d in selected}
            pod_devs.append([(d.id, self.type, req.memreq, req.coresreq) for d in selected])
        return pod_devs, SUCCESS, ""

    def is_ascend910(self) -> bool:
        return self.type.startswith(ASCEND910_PREFIX)

    # -- scheduling --------------------------------------------------------------------------

    def filter_node(self, pod, policy: str) -> tuple[int, str, str | None]:
        _devs, code, err = self.select_devices(pod, policy)
        if code != SUCCESS:
            return code, NO_DEVICE_REASON, err
        return SUCCESS, "", None

    def score_node(self, pod, policy: str) -> float:
        self.policy = policy
        pod_devs, code, _err = self.select_devices(pod, policy)
        if code != SUCCESS:
            return 0.0
        score = 0.0
        firsts = []
        for container in pod_devs:
            assertf(bool(container), f"ascend ScoreNode: pod {pod.namespace}/{pod.name} has a container given no "
                                     f"device on node {self.name} (a count of 0 where none fits, or on an "
                                     "Ascend910 kind no fitting device with a numeric NetworkID): upstream indexes "
                                     "the empty list and panics (index out of range)")
            dev = self.devices.get(container[0][0])
            if dev is None:
                return 0.0
            firsts.append(dev)
            score += cal_score(policy, dev)
        if self.is_ascend910() and has_network_id(d.info for d in firsts):
            counts: dict[int, int] = {}
            for dev in firsts:
                network = network_number(dev.info)
                if network is not None:
                    counts[network] = counts.get(network, 0) + 1
            total = sum(counts.values())
            if total == 0:
                return 0.0  # upstream gives up the whole score, the devices' own included
            score += (max(counts.values()) / total) * ASCEND910_NETWORK_WEIGHT
        return score

    def runtime_info(self, pod, pod_devs) -> str:
        entries = []
        for container in pod_devs:
            for dev_id, _type, mem, cores in container:
                info: dict[str, object] = {}
                if dev_id:
                    info["UUID"] = dev_id
                if is_hami_core_mode(pod):
                    if mem:
                        info["memory"] = mem
                    if cores:
                        info["core"] = cores
                else:
                    temp = self.trim_memory(mem)[1]
                    if temp:
                        info["temp"] = temp
                entries.append(info)
        text = json.dumps(entries if entries else None, separators=(",", ":"), ensure_ascii=False)
        return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")  # Go's HTML escaping

    def allocate(self, pod, now_ns: int) -> tuple[dict[str, str] | None, str | None]:
        if self.flags.node_lock and self.locks is not None:
            lock_err = lock_node(self.locks, self.name, NODE_LOCK, now_ns)
            if lock_err is not None:
                return None, f"node {self.name} locked for {pod.name} hami vnpu. lockname {lock_err}"
        pod_devs, code, err = self.select_devices(pod, self.policy)
        if code != SUCCESS:
            return None, f"failed to select ascend devices for pod {pod.name}: {err}"
        seconds = str(now_ns // 10**9)
        encoded = encode_pod_devices(pod_devs)
        annotations = {to_allocate_annotation(self.type): encoded, allocated_annotation(self.type): encoded,
                       PREDICATE_TIME: seconds, runtime_annotation(self.type): self.runtime_info(pod, pod_devs)}
        self._add_from(annotations, pod.uid)
        annotations.update({ASSIGNED_NODE: self.name, ASSIGNED_TIME: seconds, DEVICE_BIND_PHASE: "allocating",
                            BIND_TIME: seconds})
        return annotations, None

    def release(self, pod) -> list[str]:
        self.sub_resource(pod)
        if pod.annotations.get(DEVICE_BIND_PHASE) == "success":
            return []
        keys = [ASSIGNED_NODE, ASSIGNED_TIME, DEVICE_BIND_PHASE, BIND_TIME, PREDICATE_TIME]
        for word in common_words(self.flags.config):
            keys += [to_allocate_annotation(word), allocated_annotation(word), runtime_annotation(word)]
        return keys

    # -- what the invariants read --------------------------------------------------------------

    def ledger(self) -> list[dict]:
        cores_cap = lambda d: max(d.devcore, 100) if self.hami_core else d.devcore  # noqa: E731
        return [{"id": d.id, "number": d.count, "used_num": d.used, "memory": d.devmem, "used_memory": d.usedmem,
                 "cores": cores_cap(d), "used_cores": d.usedcores, "pods": sorted(d.pods)}
                for d in self.devices.values()]

    def device_ids(self) -> set[str]:
        return set(self.devices)


def select_with_topology(nums: int, candidates: list[AscendDevice]) -> list[AscendDevice]:
    """selectDevicesWithTopology: the fitting devices grouped by network (those whose NetworkID is not a number
    are left out), the groups taken largest first, each in the candidates' order, until `nums` are chosen (a
    count of 0 or less is never reached: every grouped device). Upstream lists the networks from a Go map and
    sorts them by size with an unstable sort, so equal-sized networks come in random order; the reference
    takes them in the order their first device appears among the candidates (one of upstream's orders)."""
    groups: dict[int, list[AscendDevice]] = {}
    for dev in candidates:
        network = network_number(dev.info)
        if network is not None:
            groups.setdefault(network, []).append(dev)
    out: list[AscendDevice] = []
    for members in sorted(groups.values(), key=len, reverse=True):  # stable: first appearance among ties
        for dev in members:
            out.append(dev)
            if len(out) == nums:
                return out
    return out


def node_pools(node, flags: DeviceFlags) -> dict[str, AscendDevices]:
    """NewAscendDevices: a pool per configured vNPU kind the node offers."""
    out = {}
    for config in flags.config.vnpu_configs:
        pool = AscendDevices.from_node(node, config, flags)
        if pool is not None:
            out[config.common_word] = pool
    return out

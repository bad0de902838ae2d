"""mindcluster Ascend 310P vNPU (api/devices/ascend/mindcluster/ascend310p/vnpu, with the session-open
initialisation of plugins/deviceshare/devices/ascend/310p/vnpu), device name "ascend310p-vNPU".

Switched on by `deviceshare.AscendMindClusterVNPUEnable`; then EVERY node carries the pool, whatever its
resources. The cache's pool only keeps what NodeInfo's add / sub of tasks tell it: the vNPU pods placed on
the node by their annotation `huawei.com/npu-core` ("C" or "C1,C2" whole chips, "C-template" a vNPU of
chip C), grouped by template (the concurrency cache: a node whose placed vNPU pods use one template only
takes pods of that same template, see `different_template`), and the annotation each pod was given. Its
chips are built at every session open, on the session's copy (`init_session`), from the node:

- capacity `huawei.com/npu-core` (N cores in all; a node whose capacity names no `huawei.com/` resource
  at all is left uninitialised, and so is one without npu-core),
- label `accelerator` ("huawei-Ascend310P": the chip kind is what follows the first "-"), label
  `servertype` ("Ascend310P-8" or "Ascend310P-10-dual": the cores per chip, the second "-" field), label
  `node.kubernetes.io/npu.chip.name` (the chip type, e.g. "310P3", only checked for presence by 310P),
- annotation `huawei.com/<kind>` ("Ascend310P-0,Ascend310P-1": the chips, which start free) and
  `huawei.com/<kind>-Unhealthy` (chips whose placed pods are not counted),
- the AI CPUs per chip from upstream's node templates (7 for a 310P of 8 or 10 cores; the 910B types'
  by chip type), so that cores = chips * cores-per-chip must hold exactly,
- the pods on the node whose annotation names a chip: a whole chip is charged whole, a vNPU by its
  template; a chip a pod names that the annotation does not list is created then; a chip holding a pod
  without the annotation `huawei.com/AscendReal` (the device plugin's real device) is unstable (never
  chosen for a vNPU), and that annotation's "_N" suffixes are the chip's vgroups (3 groups: only 1- and
  2-core vNPUs fit; 4: only 1-core).

A pod asks when its label `ring-controller.atlas` is "ascend-310P" and a container's limits name
`huawei.com/npu-core`; the cores asked are the first container's non-zero REQUEST of it. A multiple of
cores-per-chip is whole chips; 1, 2 or 4 cores a vNPU whose template comes from the labels `vnpu-level`
(low, the default, or high) and `vnpu-dvpp` (yes, no, null, the default; anything else is an error):
vir01 (1 core, 1 cpu), vir02_1c (2, 1) / vir02 (2, 2), vir04_3c (4, 3) / vir04 (4, 4),
vir04_3c_ndvpp (4, 3, dvpp no), vir04_4c_dvpp (4, 4, dvpp yes). Any other count reads as an empty
request, which is "whole" (0 is a multiple) and allocates nothing.

FilterNode (code Error on failure): the node's idle npu-core (the session node's live Idle) must hold the
cores ("preCheckNodePredicate failure"); then (reason "") the node must be initialised, and when the
chips lack room a high-level vir02 / vir04 (not dvpp yes) is downgraded to its low template for this pod
on this node (DowngradeCache, by pod NAME); a lack of room otherwise does NOT fail the predicate (upstream
falls through), the allocation fails instead; last the template rule above (a whole-chip request on a node
holding any vNPU pod fails it: no template matches it). Allocate: chips sorted by free resource (Go's sort
with upstream's non-strict comparator), a whole request takes the first free unsegmented chips, a vNPU
the first stable chip with room, vgroups and DVPP to spare; it writes `huawei.com/npu-core` and
`predicate-time` (nanoseconds) and charges the chip with the pod's UNdowngraded request (so a downgraded
pod charges more AI CPUs than its template: docs/findings.md). Release frees what the pod's annotation (or
the one given this session) names, by the pod's current request, and deletes both keys.

BatchNodeOrderFn (ScheduleWeight > 0, not NodeOrderFn): the candidate with the least idle npu-core gets
8 * weight; when the pod was downgraded on some candidates, they get 8 each in that order until the first
one that was not, which gets 16.

Upstream builds its chip map from a Go map, so ties in the chip order are random; the reference lists
chips by id before sorting. Likewise the batch score's candidates come in the predicate workers'
completion order: between nodes of equal least idle npu-core, which one scores is random upstream (a
guided replay steers it, `batch_scores`). The device-info, node-D and cluster-info ConfigMaps (mindx-dl-deviceinfo-*,
mindx-dl-nodeinfo-*, cluster-info-*) and the `init-params` configuration are not modelled: without them
upstream reads the node's own annotations, as here.
"""

from __future__ import annotations

import re

from schedcheck.reference.api.devices.base import DeviceFlags, ERROR, SUCCESS
from schedcheck.reference.util.go_sort import go_sort_slice

DEVICE_NAME = "ascend310p-vNPU"
NPU_CORE = "huawei.com/npu-core"
REAL_USE = "huawei.com/AscendReal"
PREDICATE_TIME = "predicate-time"
JOB_KIND_KEY = "ring-controller.atlas"
JOB_KIND_310P = "ascend-310P"
VNPU_LEVEL = "vnpu-level"
VNPU_DVPP = "vnpu-dvpp"
ACCELERATOR = "accelerator"
SERVER_TYPE = "servertype"
CHIP_TYPE_KEY = "node.kubernetes.io/npu.chip.name"
HW_PREFIX = "huawei.com/"
UNHEALTHY_SUFFIX = "-Unhealthy"
NODED_STATUS = "nodedNodeHealtyStatus"
PRE_SEPARATE = "PreSeparate"
ASCEND_310P = "Ascend310P"
LOW, HIGH = "low", "high"
DVPP_ON, DVPP_OFF, DVPP_NULL = "yes", "no", "null"
PRECHECK_REASON = "preCheckNodePredicate failure"

# NPUDevices.VT: the 310P vNPU templates (aicore, aicpu, dvpp)
TEMPLATES: dict[str, tuple[int, int, str]] = {
    "vir01": (1, 1, DVPP_NULL), "vir02": (2, 2, DVPP_NULL), "vir02_1c": (2, 1, DVPP_NULL),
    "vir04": (4, 4, DVPP_NULL), "vir04_3c": (4, 3, DVPP_NULL), "vir04_3c_ndvpp": (4, 3, DVPP_OFF),
    "vir04_4c_dvpp": (4, 4, DVPP_ON),
}
# FrameAttr.VJobTemplate: what a placed pod's template charges, by chip kind (310P) or chip type (others)
JOB_TEMPLATES: dict[str, dict[str, tuple[int, int, str]]] = {
    ASCEND_310P: TEMPLATES,
    "Ascend910": {"vir02": (2, 1, DVPP_NULL), "vir04": (4, 1, DVPP_NULL), "vir08": (8, 3, DVPP_NULL),
                  "vir16": (16, 7, DVPP_NULL)},
    **{t: {"vir06_1c": (6, 1, DVPP_NULL), "vir03_1c": (3, 1, DVPP_NULL), "vir12_3c": (12, 3, DVPP_NULL)}
       for t in ("910B1", "910B2C", "910B2")},
    "910B3": {"vir05_1c": (5, 1, DVPP_NULL), "vir10_3c": (10, 3, DVPP_NULL)},
    "910B4": {"vir05_1c_8g": (5, 1, DVPP_NULL), "vir10_3c_16g_nm": (10, 3, DVPP_OFF),
              "vir10_4c_16g_m": (10, 4, DVPP_ON), "vir10_3c_16g": (10, 3, DVPP_NULL)},
}
# initTemplate: (chip kind or type, aicore per chip, aicpu per chip); the last match wins
NODE_TEMPLATES = ((ASCEND_310P, 8, 7), ("910B1", 25, 6), ("910B2C", 24, 6), ("910B3", 20, 6), ("910B4", 20, 6),
                  ("910B2", 24, 6), (ASCEND_310P, 10, 7))

_GO_INT = re.compile(r"[+-]?[0-9]+\Z")


def go_atoi(text: str) -> int | None:
    """strconv.Atoi: None on bad syntax or beyond int64."""
    if not _GO_INT.match(text):
        return None
    value = int(text)
    return value if -2**63 <= value < 2**63 else None


def go_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


class VResource:
    __slots__ = ("aicore", "aicpu", "dvpp")

    def __init__(self, aicore: int = 0, aicpu: int = 0, dvpp: str = "") -> None:
        self.aicore, self.aicpu, self.dvpp = aicore, aicpu, dvpp

    @classmethod
    def of(cls, t: tuple[int, int, str]) -> VResource:
        return cls(*t)

    def copy(self) -> VResource:
        return VResource(self.aicore, self.aicpu, self.dvpp)

    def key(self) -> tuple[int, int, str]:
        return self.aicore, self.aicpu, self.dvpp

    def add(self, r: VResource) -> None:  # DVPP untouched, as upstream
        self.aicore += r.aicore
        self.aicpu += r.aicpu

    def sub(self, r: VResource) -> None:
        self.aicore -= r.aicore
        self.aicpu -= r.aicpu

    def be_greater(self, r: VResource) -> bool:
        return self.aicore >= r.aicore and self.aicpu >= r.aicpu

    def __repr__(self) -> str:  # Go's %#v
        return f'vnpu.VResource{{Aicore:{self.aicore}, Aicpu:{self.aicpu}, DVPP:"{self.dvpp}"}}'


class VChip:
    __slots__ = ("id", "name", "kind", "ids", "pods", "unstable", "core_num", "segment", "total", "used", "free")

    def __init__(self, chip_id: int, kind: str, core_num: int, total: VResource) -> None:
        self.id = chip_id
        self.name = f"{kind}-{chip_id}"
        self.kind = kind
        self.ids: list[str] = []  # the real devices (AscendReal) of its pods
        self.pods: set[str] = set()  # PodMap's keys
        self.unstable = False
        self.core_num = core_num
        self.segment = False
        self.total = VResource(total.aicore, total.aicpu, DVPP_OFF)
        self.used = VResource(0, 0, DVPP_OFF)
        self.free = VResource(total.aicore, total.aicpu, DVPP_ON)

    def copy(self) -> VChip:
        c = VChip.__new__(VChip)
        c.id, c.name, c.kind, c.core_num = self.id, self.name, self.kind, self.core_num
        c.ids, c.pods, c.unstable, c.segment = list(self.ids), set(self.pods), self.unstable, self.segment
        c.total, c.used, c.free = self.total.copy(), self.used.copy(), self.free.copy()
        return c

    def update_dvpp(self, dvpp: str) -> None:
        if dvpp == DVPP_ON:
            self.used.dvpp, self.free.dvpp = DVPP_ON, DVPP_OFF
        if dvpp == DVPP_OFF and self.used.dvpp == DVPP_OFF:
            self.used.dvpp, self.free.dvpp = DVPP_OFF, DVPP_ON
        if dvpp == DVPP_NULL and self.used.dvpp != DVPP_ON:
            self.used.dvpp, self.free.dvpp = DVPP_NULL, DVPP_NULL

    def reset_dvpp(self, dvpp: str) -> None:
        if dvpp == DVPP_ON:
            self.used.dvpp, self.free.dvpp = DVPP_OFF, DVPP_ON

    def vgroups(self) -> list[int]:
        out: list[int] = []
        for real in self.ids:
            parts = real.split("_")
            if len(parts) < 2:
                continue
            group = go_atoi(parts[-1])
            if group is not None and group not in out:
                out.append(group)
        return out

    def meets(self, req: VResource) -> bool:
        """isChipMeetResReq: room, vgroups, DVPP."""
        if not self.free.be_greater(req):
            return False
        if self.kind == ASCEND_310P and self.segment:
            groups = len(self.vgroups())
            if (groups == 3 and req.aicore >= 4) or (groups == 4 and req.aicore >= 2):
                return False
        if req.dvpp == DVPP_ON and self.free.dvpp != DVPP_ON:
            return False
        if req.dvpp == DVPP_NULL and self.free.dvpp == DVPP_OFF:
            return False
        return True


def pod_asks(pod) -> bool:
    """checkVNPUResourcesInPod."""
    return pod.labels.get(JOB_KIND_KEY) == JOB_KIND_310P and any(NPU_CORE in c.limits for c in pod.containers)


def pod_cores(pod) -> int:
    """getAiCoreNumFromPod: the first container's non-zero request of npu-core."""
    for c in pod.containers:
        q = c.requests.get(NPU_CORE)
        if q is None or q.value() == 0:
            continue
        return q.value()
    return 0


def template_of(cores: int, level: str, dvpp: str) -> str:
    """getResTemplateFromTaskSetting."""
    if cores == 1:
        return "vir01"
    if cores == 2:
        return "vir02_1c" if level == LOW else "vir02"
    if cores == 4:
        if dvpp == DVPP_ON:
            return "vir04_4c_dvpp"
        if dvpp == DVPP_OFF:
            return "vir04_3c_ndvpp"
        return "vir04_3c" if level == LOW else "vir04"
    return ""


def can_downgrade(req: VResource) -> bool:
    return (req.aicore == 2 and req.aicpu == 2) or (req.aicore == 4 and req.aicpu == 4 and req.dvpp != DVPP_ON)


def downgrade(req: VResource) -> VResource:
    if req.aicore == 2:
        return VResource(2, 1, req.dvpp)
    if req.aicore == 4:
        return VResource(4, 3, req.dvpp)
    return req


def template_by_request(req: VResource) -> str | None:
    """GetTemplateByResReq (the templates are distinct, so Go's map order does not matter)."""
    for name, value in TEMPLATES.items():
        if value == req.key():
            return name
    return None


def core_ids(value: str) -> list[str]:
    """The chip ids a `huawei.com/npu-core` annotation names (what the invariants read)."""
    return [part.split("-")[0] for part in value.split(",") if part.split("-")[0]]


class NPUDevices:
    def __init__(self, node, flags: DeviceFlags) -> None:
        self.name = node.name
        self.node = node
        self.flags = flags
        # kept by the cache (NodeInfo add / sub of tasks) and copied into the session
        self.con_cache: dict[str, list[str]] = {}  # template ("" for whole chips) -> pod uids
        self.pod_allocation: dict[str, str] = {}  # pod uid -> its npu-core annotation
        self.downgraded: set[str] = set()  # DowngradeCache: pod names
        # built at session open (init_session)
        self.capability: dict[str, float] = {}
        self.annotation: dict[str, str] = {}
        self.labels: dict[str, str] = {}
        self.idle: dict[str, float] | None = {}  # the session node's live Idle scalars once initialised
        self.chip_kind = self.server_type = self.chip_type = ""
        self.free_chip_num = self.total_chip_num = self.ai_core_per_chip = 0
        self.total = VResource()
        self.valid = False
        self.chips: dict[int, VChip] = {}
        self.unhealthy: set[int] = set()
        self.opening: list[dict] | None = None  # the ledger right after the session-open initialisation

    def deep_copy(self) -> NPUDevices:
        c = NPUDevices.__new__(NPUDevices)
        c.name, c.node, c.flags = self.name, self.node, self.flags
        c.con_cache = {k: list(v) for k, v in self.con_cache.items()}
        c.pod_allocation = dict(self.pod_allocation)
        c.downgraded = set(self.downgraded)
        c.capability = dict(self.capability)
        c.annotation = dict(self.annotation)
        c.labels = dict(self.labels)
        c.idle = None if self.idle is None else dict(self.idle)
        c.chip_kind, c.server_type, c.chip_type = self.chip_kind, self.server_type, self.chip_type
        c.free_chip_num, c.total_chip_num, c.ai_core_per_chip = (self.free_chip_num, self.total_chip_num,
                                                                 self.ai_core_per_chip)
        c.total = self.total.copy()
        c.valid = self.valid
        c.chips = {k: chip.copy() for k, chip in self.chips.items()}
        c.unhealthy = set(self.unhealthy)
        c.opening = self.opening
        return c

    # -- session-open initialisation (InitVNPUDevice) -----------------------------------------

    def init_session(self, node_info) -> None:
        capability = node_info.capacity.scalars
        if not capability or not any(HW_PREFIX in k for k in capability):
            return  # "npu resource is not enable"
        self.capability = dict(capability)
        self.idle = node_info.idle.scalars  # the same map, so it follows the session's accounting
        self.labels = dict(node_info.node.labels)
        annotation = dict(node_info.node.annotations)
        for k, v in self.annotation.items():
            if HW_PREFIX in k:
                annotation[k] = v
        annotation[NODED_STATUS] = "Healthy"  # no node-D ConfigMap
        self.annotation = annotation
        if self._set_vnpu_info(node_info):
            self.valid = True
        self.opening = self.ledger()

    def _set_vnpu_info(self, node_info) -> bool:
        if not self.capability.get(NPU_CORE, 0) > 0:
            return False
        accelerator = self.labels.get(ACCELERATOR)
        if accelerator is None or len(accelerator.split("-")) < 2:
            return False
        self.chip_kind = accelerator.split("-")[1]
        if SERVER_TYPE not in self.labels:
            return False
        self.server_type = self.labels[SERVER_TYPE]
        if CHIP_TYPE_KEY not in self.labels:
            return False
        self.chip_type = self.labels[CHIP_TYPE_KEY]
        free = self.annotation.get(HW_PREFIX + self.chip_kind)
        if free is None:
            return False
        self.free_chip_num = len(free.split(","))
        self.total.aicore = int(self.capability[NPU_CORE] / 1000)
        per_chip = self.chip_core_num()
        if not per_chip:
            return False
        self.ai_core_per_chip = per_chip
        if self.total.aicore % per_chip != 0 or go_div(self.total.aicore, per_chip) == 0:
            return False
        self.total_chip_num = go_div(self.total.aicore, per_chip)
        cpu = -1
        for kind, core, aicpu in NODE_TEMPLATES:
            if kind in (self.chip_kind, self.chip_type) and core * self.total_chip_num == self.total.aicore:
                cpu = aicpu
        if cpu == -1:
            return False
        self.total.aicpu = cpu * self.total_chip_num
        self.total.dvpp = DVPP_OFF
        chip_total = self.chip_total()
        for chip_id in self._card_ids(""):
            self.chips[chip_id] = VChip(chip_id, self.chip_kind, self.ai_core_per_chip, chip_total)
        self.unhealthy.update(self._card_ids(UNHEALTHY_SUFFIX))
        for task in node_info.tasks.values():
            if any(HW_PREFIX in name for name in (task.resreq.scalars or {})):
                self._add_placed(task.pod, chip_total)
        return True

    def chip_total(self) -> VResource:
        return VResource(go_div(self.total.aicore, self.total_chip_num), go_div(self.total.aicpu, self.total_chip_num),
                         DVPP_OFF)

    def _card_ids(self, suffix: str) -> list[int]:
        value = self.annotation.get(HW_PREFIX + self.chip_kind + suffix)
        if value is None:
            return []
        out = []
        for chip in value.split(","):
            if not chip:
                continue
            text = chip[len(self.chip_kind) + 1:] if chip.startswith(self.chip_kind + "-") else chip
            chip_id = go_atoi(text)
            if chip_id is not None:
                out.append(chip_id)
        return out

    def _chip(self, chip_id: int, total: VResource) -> VChip:
        chip = self.chips.get(chip_id)
        if chip is None:
            chip = self.chips[chip_id] = VChip(chip_id, self.chip_kind, self.ai_core_per_chip, total)
        return chip

    def _add_placed(self, pod, chip_total: VResource) -> None:
        """addNPUResource: a pod already on the node, by its annotation."""
        value = pod.annotations.get(NPU_CORE)
        if value is None:
            return
        stable_missing = not pod.annotations.get(REAL_USE)
        if any(len(part.split("-")) == 1 for part in value.split(",")):  # whole chips
            ids = [go_atoi(part) for part in value.split(",")]
            if not ids or any(i is None for i in ids):
                return
            for chip_id in ids:
                if chip_id in self.unhealthy:
                    continue
                res = self.chip_total()
                chip = self._chip(chip_id, res)
                chip.unstable = stable_missing or chip.unstable
                chip.ids.append(str(chip_id))
                chip.pods.add(pod.uid)
                chip.used.add(res)
                chip.free.sub(res)
            return
        parts = value.split("-")
        chip_id = go_atoi(parts[0]) if len(parts) == 2 else None
        if chip_id is None or chip_id in self.unhealthy:
            return
        chip = self._chip(chip_id, chip_total)
        chip.unstable = stable_missing or chip.unstable
        real = pod.annotations.get(REAL_USE, "")
        if real:
            chip.ids.append(real)
        chip.pods.add(pod.uid)
        chip.segment = True
        table = JOB_TEMPLATES.get(self.chip_kind if self.chip_kind == ASCEND_310P else self.chip_type, {})
        used = table.get(parts[1])
        if used is None:
            return
        res = VResource.of(used)
        chip.used.add(res)
        chip.free.sub(res)
        chip.update_dvpp(res.dvpp)

    # -- requests ------------------------------------------------------------------------------

    def has_device_request(self, pod) -> bool:
        return self.flags.ascend_mindcluster and pod_asks(pod)

    def chip_core_num(self) -> int:
        parts = self.server_type.split("-")
        if len(parts) < 2:
            return 0
        return go_atoi(parts[1]) or 0

    def is_whole(self, aicore: int) -> bool:
        per_chip = self.chip_core_num()
        if per_chip == 0:
            return False
        return aicore - per_chip * int(aicore / per_chip) == 0  # Go's %, sign of the dividend

    def pod_resource(self, pod) -> tuple[VResource, str | None]:
        """GetPodResource."""
        cores = pod_cores(pod)
        if self.total.aicore == 0:
            return VResource(), None
        if self.is_whole(cores):
            return VResource(cores, go_div(cores * self.total.aicpu, self.total.aicore), DVPP_NULL), None
        dvpp = pod.labels.get(VNPU_DVPP, DVPP_NULL)
        if dvpp not in (DVPP_ON, DVPP_OFF, DVPP_NULL):
            return VResource(), f"err dvpp value:{dvpp}"
        level = pod.labels.get(VNPU_LEVEL, LOW)
        if level not in (LOW, HIGH):
            level = LOW
        template = TEMPLATES.get(template_of(cores, level, dvpp))
        return (VResource.of(template) if template else VResource()), None

    # -- ledger (NodeInfo's add / sub of a task) ------------------------------------------------

    def add_resource(self, pod) -> None:
        if self.has_device_request(pod):
            self._add(pod.annotations, pod)

    def _add(self, annotations: dict[str, str], pod) -> None:
        res, _err = self.pod_resource(pod)
        value = annotations.get(NPU_CORE)
        if value is None:
            return
        self.pod_allocation[pod.uid] = value
        parts = value.split("-")
        template = ""
        if len(parts) == 2:
            template = parts[1]
            self._segment_add(parts[0], res)
        else:
            self._whole_add(parts[0])
        uids = self.con_cache.setdefault(template, [])
        if pod.uid not in uids:
            uids.append(pod.uid)

    def sub_resource(self, pod) -> None:
        if not self.has_device_request(pod):
            return
        res, _err = self.pod_resource(pod)
        value = pod.annotations.get(NPU_CORE)
        if value is None:
            value = self.pod_allocation.get(pod.uid)
            if value is None:
                return
        self.pod_allocation.pop(pod.uid, None)
        parts = value.split("-")
        template = ""
        if len(parts) == 2:
            template = parts[1]
            self._segment_sub(parts[0], res)
        else:
            self._whole_sub(parts[0])
        uids = self.con_cache.get(template)
        if uids is not None and pod.uid in uids:
            uids.remove(pod.uid)
            if not uids:
                del self.con_cache[template]

    def _segment_add(self, chip_id: str, res: VResource) -> None:
        self._charge(chip_id, res, True, mark_segment=True)

    def _segment_sub(self, chip_id: str, res: VResource) -> None:
        self._charge(chip_id, res, False)

    def _charge(self, chip_id: str, res: VResource, add: bool, mark_segment: bool = False) -> None:
        """Move `res` from the chip's free to its used (add) or back; a partial chip taken is marked segmented."""
        for cid, chip in self.chips.items():
            if str(cid) != chip_id:
                continue
            if add:
                chip.used.add(res)
                chip.free.sub(res)
                if mark_segment and not self.is_whole(res.aicore):
                    chip.segment = True
                chip.update_dvpp(res.dvpp)
            else:
                chip.used.sub(res)
                chip.free.add(res)
                chip.reset_dvpp(res.dvpp)

    def _whole_res(self) -> VResource:
        return VResource(self.ai_core_per_chip, go_div(self.total.aicpu, self.total_chip_num), DVPP_NULL)

    def _whole_add(self, ids: str) -> None:
        self._whole_charge(ids, True)

    def _whole_sub(self, ids: str) -> None:
        self._whole_charge(ids, False)

    def _whole_charge(self, ids: str, add: bool) -> None:
        if self.total_chip_num == 0:
            return
        res = self._whole_res()
        for chip_id in ids.split(","):
            self._charge(chip_id, res, add)

    def add_queue_resource(self, pod) -> dict[str, float]:
        return {}

    def ignored_devices(self) -> list[str]:
        return [""]

    # -- scheduling ----------------------------------------------------------------------------

    def filter_node(self, pod, policy: str) -> tuple[int, str, str | None]:
        if self.annotation.get(NODED_STATUS) == PRE_SEPARATE:
            return ERROR, PRECHECK_REASON, f"node is {PRE_SEPARATE}, due to nodeD reported node status"
        idle = (self.idle or {}).get(NPU_CORE)
        cores = pod_cores(pod)
        if idle is None:
            return ERROR, PRECHECK_REASON, f"not have {NPU_CORE}"
        if int(idle / 1000) < cores:
            return ERROR, PRECHECK_REASON, f"node not meet task request {NPU_CORE}:{cores}"
        req, err = self.pod_resource(pod)
        if err is not None:
            return ERROR, "", err
        err = self._check_dy(pod, req)
        if err is not None:
            return ERROR, "", err
        return SUCCESS, "", None

    def _check_dy(self, pod, req: VResource) -> str | None:
        """CheckNodeNPUByDyPod."""
        if not self.valid:
            return "checkNodeNPUByDyTask invalid VNode"
        if self._not_meet(req) and can_downgrade(req):
            self.downgraded.add(pod.name)
            return self._check_dy(pod, downgrade(req))
        return self.different_template(pod, req)

    def _not_meet(self, req: VResource) -> bool:
        free = VResource()
        for chip in self.chips.values():
            free.add(chip.free)
        if not free.be_greater(req):
            return True
        if self.is_whole(req.aicore):
            if self.ai_core_per_chip == 0:
                return True
            whole = sum(1 for chip in self.chips.values() if not chip.segment and chip.free.aicore != 0)
            return not go_div(req.aicore, self.ai_core_per_chip) <= whole
        return not any(chip.meets(req) and not chip.unstable for chip in self.chips.values())

    def different_template(self, pod, req: VResource) -> str | None:
        """IsNodeHasDifferentUnFinishedTask: the node's placed vNPU pods must all use this pod's template."""
        if not self.con_cache:
            return None
        template = template_by_request(req)
        if template is None:
            return f"{req!r} not get template"
        if len(self.con_cache) == 1 and template in self.con_cache:
            return None
        return f"{pod.name} is using {self.name}, and not rewrite"

    def score_node(self, pod, policy: str) -> float:
        return 0.0  # scored in batch (batch_scores)

    def _sorted_chips(self) -> list[VChip]:
        chips = [self.chips[k] for k in sorted(self.chips)]
        go_sort_slice(chips, lambda a, b: not a.free.be_greater(b.free))
        return chips

    def select_chip(self, req: VResource) -> tuple[str | None, str]:
        chips = self._sorted_chips()
        if not chips:
            return None, "selectChipFromNode sorted chips len 0"
        if self.is_whole(req.aicore):
            if self.ai_core_per_chip == 0:
                return None, "AiCorePerChip is zero, division by zero avoided"
            want = go_div(req.aicore, self.ai_core_per_chip)
            if want == 0:
                return None, "task require card number 0"
            per = VResource(go_div(req.aicore, want), go_div(req.aicpu, want), DVPP_NULL)
            names = []
            for chip in chips:
                if not chip.meets(per) or chip.segment:
                    continue
                names.append(str(chip.id))
                if len(names) == want:
                    return ",".join(names), ""
            return None, f"selectChipFromNodeWhole free whole chip <{len(names)}> not enough for req <{want}>"
        go_sort_slice(chips, lambda a, b: not a.free.be_greater(b.free))  # sorted a second time, as upstream
        for chip in chips:
            if chip.meets(req) and not chip.unstable:
                return str(chip.id), ""
        return None, f"selectChipFromNodeSegment available chip not found for req <{req.aicore}>"

    def allocate(self, pod, now_ns: int) -> tuple[dict[str, str] | None, str | None]:
        req, err = self.pod_resource(pod)
        if err is not None:
            return None, err
        if pod.name in self.downgraded:
            req = downgrade(req)
        chip, why = self.select_chip(req)
        if chip is None:
            return None, why
        annotations: dict[str, str] | None = None
        if self.is_whole(req.aicore):
            annotations = {PREDICATE_TIME: str(now_ns), NPU_CORE: chip}
        else:
            template = template_by_request(req)
            if template is not None:
                annotations = {PREDICATE_TIME: str(now_ns), NPU_CORE: f"{chip}-{template}"}
        if annotations:
            self._add(annotations, pod)
        return annotations, None

    def release(self, pod) -> list[str]:
        self.sub_resource(pod)
        return [PREDICATE_TIME, NPU_CORE]

    # -- what the invariants read --------------------------------------------------------------

    def ledger(self) -> list[dict]:
        """Each chip's AI cores (its AI CPUs are left out: a downgraded pod charges more than its template,
        docs/findings.md)."""
        return [{"id": str(k), "cores": c.total.aicore, "used_cores": c.used.aicore, "pods": sorted(c.pods)}
                for k, c in sorted(self.chips.items())]

    def device_ids(self) -> set[str]:
        """The chips a session could choose: the node's chip annotation's, those placed pods name, and those
        built this session."""
        ids = {str(k) for k in self.chips}
        accelerator = self.node.labels.get(ACCELERATOR, "")
        if len(accelerator.split("-")) >= 2:
            kind = accelerator.split("-")[1]
            for chip in self.node.annotations.get(HW_PREFIX + kind, "").split(","):
                if chip.startswith(kind + "-"):
                    ids.add(chip[len(kind) + 1:])
        for value in self.pod_allocation.values():
            ids.update(core_ids(value))
        return ids


def batch_scores(pod, pools: list[NPUDevices], first=None) -> list[float]:
    """ScoreBatchNodes over the candidates' pools, in their order. Upstream's candidates come in the
    predicate workers' completion order, so among the nodes of least (equal) idle npu-core the one that
    scores is any of them; the reference takes the first in its order, unless `first` (a guided replay's
    choice among that leading group) names another."""
    downgraded = [p.name for p in pools if pod.name in p.downgraded]
    scores = {p.name: 0.0 for p in pools}
    if not pools:
        return []

    def less(a: NPUDevices, b: NPUDevices) -> bool:
        ia = (a.idle or {}).get(NPU_CORE)
        if ia is None:
            return False
        ib = (b.idle or {}).get(NPU_CORE)
        if ib is None:
            return True
        return ia < ib

    ordered = list(pools)
    go_sort_slice(ordered, less)
    lead = (ordered[0].idle or {}).get(NPU_CORE)
    group = [p for p in ordered if lead is not None and (p.idle or {}).get(NPU_CORE) == lead]
    chosen = first(group) if first is not None and len(group) > 1 else None
    if chosen is not None and chosen in group:
        ordered.remove(chosen)
        ordered.insert(0, chosen)
    if not downgraded:
        scores[ordered[0].name] += 8
    else:
        for p in ordered:
            if p.name not in downgraded:
                scores[p.name] += 16
                break
            scores[p.name] += 8
    return [scores[p.name] for p in pools]


def node_pool(node, flags: DeviceFlags) -> NPUDevices:
    return NPUDevices(node, flags)

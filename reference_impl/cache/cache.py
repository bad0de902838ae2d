"""SchedulerCache: cluster state that lives across sessions (pkg/scheduler/cache/cache.go).

The cache owns a private copy of the scenario's Kubernetes objects (the
"world") and derives the scheduler's view from it the way upstream's informer
handlers do: every pod becomes a task, placed pods sit on their node, PodGroups
and Queues become jobs and queues. A session sees a deep copy (snapshot); only
binds, evictions and PodGroup status written at close reach the cache.

Between sessions `advance()` lets the world move on (world.py: the API server
and kubelets, deterministic, with injectable faults), then rebuilds the view;
pipelined decisions are not kept (upstream behaviour).

Volumes (volumes.py): the storage objects are read as upstream's informers hold them; a pod's claim counts
as a request of `attachable-volumes-csi-<driver>`, the driver being its bound PV's CSI driver or, unbound,
its class's provisioner (unless --ignored-provisioners names it), and a node offers that resource only for
the drivers its CSINode lists. Plugins registered as binders run
their PreBind on each bind: a bind whose claims the PV controller must still bind is accepted but waits
(its BindRecord says "waiting") until the world has bound them between sessions; only then does it reach
the binder. A bind waiting for its devices' binding conditions (cache/dra_binding.py) keeps its task
Binding on its node across sessions until the world ends the wait.

With `persistent` on (conf pipelinePersistence: persistent, the unmerged PR #4552 design, seed 004)
the session's pipelined decisions are written to the pod's annotations at close, restored as
Pipelined tasks on their node by the next snapshot, and cleared on bind; a decision whose node or
pod has gone, or whose pod another scheduler bound, is released and logged (`log.releases`).
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import Any

from schedcheck.reference.api.job_info import JobInfo, task_scheduling_reason
from schedcheck.reference.api.devices import DeviceFlags, node_devices
from schedcheck.reference.api.resource_info import IGNORED_DEVICES
from schedcheck.reference.api.devices.config import load_device_config
from schedcheck.reference.api.node_info import NodeError, NodeInfo
from schedcheck.reference.api.numa_info import PodMeta, numa_info_from_object, refresh_numa_scheduler_info
from schedcheck.reference.api.pipelined import (
    clear_pipelined,
    read_pipelined,
    set_pipelined,
)
from schedcheck.reference.api.queue_info import QueueInfo
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import TaskStatus, completed_status
from schedcheck.reference.cache.dra import MissingClaim, task_dra_info
from schedcheck.reference.cache.dra_binding import DeviceBindingWait
from schedcheck.reference.cache.dra_claims import ClaimTracker
from schedcheck.reference.cache.errors import CacheError
from schedcheck.reference.cache.image_states import NO_IMAGES, ImageStates
from schedcheck.reference.cache.log import (
    BINDING_CONDITIONS_WAIT,
    BindRecord,
    CacheLog,
    EvictRecord,
    GateRemovalRecord,
    ReleaseRecord,
)
from schedcheck.reference.cache.volumes import (
    DEFAULT_IGNORED_PROVISIONERS,
    ClaimNotForPod,
    VolumeCaches,
    VolumeWait,
    csi_node_resources,
    pod_csi_volumes,
)
from schedcheck.reference.cache.world import World
from schedcheck.reference.k8s import (
    DEFAULT_SCHEDULER_NAME,
    ClusterObjects,
    Node,
    Pod,
    Queue,
    ResourceQuota,
)
from schedcheck.reference.api.hyper_node_info import build_hyper_nodes
from schedcheck.reference.util.scheduler_helper import HARD_SHARDING, SOFT_SHARDING, ServerOptions
from schedcheck.reference.util.timestamps import parse_timestamp

DEFAULT_QUEUE = "default"
ROOT_QUEUE = "root"


@dataclass
class BindContext:
    """What a bind carries to the PreBinds: the task, and each plugin's extension (its cycle state)."""

    task: TaskInfo
    extensions: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclass
class ClusterSnapshot:
    nodes: dict[str, NodeInfo]
    node_list: list[str]
    jobs: dict[str, JobInfo]
    queues: dict[str, QueueInfo]
    resource_quotas: list[ResourceQuota]
    now: float
    nodes_in_shard: set[str]


def _latest_timestamp(world: ClusterObjects) -> float:
    stamps = [parse_timestamp(o.creation_timestamp)
              for group in (world.nodes, world.pods, world.pod_groups, world.queues) for o in group
              if o.creation_timestamp]
    return max(stamps) if stamps else 0.0


class SchedulerCache:
    def __init__(
        self,
        objects: ClusterObjects,
        scheduler_names: tuple[str, ...] = (DEFAULT_SCHEDULER_NAME,),
        server_options: ServerOptions | None = None,
        now: str | None = None,
        copy_objects: bool = True,
        device_flags: DeviceFlags | None = None,
    ) -> None:
        # The deviceshare plugin's switches: which shared-device pools nodes carry (api/devices)
        # api.IgnoredDevicesList: process-wide upstream, filled as nodes with such pools are added; a run of
        # the reference is one scheduler process, so it starts empty here.
        IGNORED_DEVICES.clear()
        self.world = copy.deepcopy(objects) if copy_objects else objects
        flags = device_flags or DeviceFlags()
        if flags.any and self.world.config_maps:  # config.InitDevicesConfig, from the API server's ConfigMaps
            flags = dataclasses.replace(flags, config=load_device_config(self.world.config_maps, flags.cm_name,
                                                                         flags.cm_namespace))
        self.device_flags = flags
        # The API server and kubelets between sessions, with the faults a test can inject (world.py).
        self.cluster = World(self.world, parse_timestamp(now) if now else _latest_timestamp(self.world))
        self.scheduler_names = scheduler_names
        self.server_options = server_options or ServerOptions()
        # Upstream keeps this rotating predicate start index in a process-wide variable.
        self.last_processed_node_index = 0
        self.log = CacheLog()
        self.cycle = 0
        self.persistent = False  # pipelined decisions kept across sessions (set_pipeline_persistence)
        # The storage informers and the volume binder's assume caches, which outlast sessions (volumes.py).
        self.volumes = VolumeCaches(self.world)
        self.dra = ClaimTracker(self.world)  # the shared DRA manager: claims, classes, allocations in flight
        self.ignored_provisioners = DEFAULT_IGNORED_PROVISIONERS | set(self.server_options.ignored_provisioners)
        self.binders: dict[str, Any] = {}  # binderRegistry: plugins with PreBind, by name
        self._ensure_default_queues()
        self.image_states = ImageStates()
        # UnassignedNumaPods: by node, the CPU sets the numa-aware plugin gave pods the node's Numatopology
        # does not list yet (add_unassigned_numa_pods); they outlast sessions, as the cache's nodes do upstream
        self.unassigned_numa_pods: dict[str, dict[PodMeta, dict[str, frozenset[int]]]] = {}
        self._rebuild()
        self.refresh_node_shards()
        self.hyper_nodes_info = build_hyper_nodes(self.world.hyper_nodes, self.world.nodes)

    def refresh_node_shards(self) -> None:
        """RefreshNodeShards (cache/shard_coordinator.go): with sharding on, this scheduler's nodes are its
        shard's desired nodes less those another shard still has in use; no shard of that name leaves the
        set empty (upstream logs an error)."""
        self.in_use_nodes_in_shard: set[str] = set()
        if self.server_options.sharding_mode not in (HARD_SHARDING, SOFT_SHARDING):
            return
        shards = {shard.name: shard for shard in self.world.node_shards}
        own = shards.get(self.server_options.shard_name)
        if own is None:
            return
        nodes = set(own.nodes_desired)
        for name, shard in shards.items():
            if name != own.name:
                nodes -= set(shard.nodes_in_use)
        self.in_use_nodes_in_shard = nodes

    def set_pipeline_persistence(self, persistent: bool) -> None:
        if persistent != self.persistent:
            self.persistent = persistent
            self._rebuild()

    # -- building the scheduler's view from the world ------------------------------------

    def _ensure_default_queues(self) -> None:
        """The scheduler creates `root` (not reclaimable) and `default` queues when absent."""
        names = {q.name for q in self.world.queues}
        if ROOT_QUEUE not in names:
            self.world.queues.append(Queue(name=ROOT_QUEUE, uid=f"queue-{ROOT_QUEUE}", reclaimable=False))
        if DEFAULT_QUEUE not in names:
            self.world.queues.append(Queue(name=DEFAULT_QUEUE, uid=f"queue-{DEFAULT_QUEUE}", reclaimable=True))

    def _priority_of_class(self, class_name: str) -> int:
        classes = {pc.name: pc for pc in self.world.priority_classes}
        if class_name in classes:
            return classes[class_name].value
        return self.default_priority

    def _preemption_policy_of_class(self, class_name: str) -> str:
        for pc in self.world.priority_classes:
            if (class_name and pc.name == class_name) or (not class_name and pc.global_default):
                return pc.preemption_policy
        return ""

    @property
    def default_priority(self) -> int:
        for pc in self.world.priority_classes:
            if pc.global_default:
                return pc.value
        return 0

    def _rebuild(self) -> None:
        self.nodes: dict[str, NodeInfo] = {}
        self.node_list: list[str] = []
        self.volumes.refresh()
        self.image_states.refresh(self.world.nodes)
        summaries = self.image_states.summaries
        for node in self.world.nodes:
            info = self.nodes[node.name] = NodeInfo(self._with_csi_resources(node))
            if self.device_flags.any:
                info.set_others(node_devices(node, self.device_flags))
                for pool in info.others.values():
                    # after this node's own resources, as upstream's NewNodeInfo
                    IGNORED_DEVICES.update(getattr(pool, "ignored_devices", list)())
                    pool.locks = node.annotations  # the node lock reads and writes the API server's node
            info.image_states = summaries.get(node.name, NO_IMAGES)
            self.node_list.append(node.name)
        self._attach_numa_infos()
        self.queues = {q.name: QueueInfo(q) for q in self.world.queues}
        self.jobs: dict[str, JobInfo] = {}
        for pod_group in self.world.pod_groups:
            job = self.jobs.setdefault(f"{pod_group.namespace}/{pod_group.name}",
                                       JobInfo(f"{pod_group.namespace}/{pod_group.name}"))
            job.set_pod_group(pod_group)
        self.dra.refresh()
        for pod in self.world.pods:
            self._add_pod(pod)
        self._hold_binding_waits()
        if self.persistent:
            for job in self.jobs.values():
                job.pipelined_ready = True  # the PR counts Pipelined tasks as ready (semantics §11)

    def _hold_binding_waits(self) -> None:
        """A bind still waiting in DRA PreBind (binding conditions): upstream's cache kept the task Binding on
        its node since AddBindTask, with the session's spec.nodeName on its pod (the session shares the pod
        object), while the bind goroutine polls; the rebuilt view puts it back so."""
        waits = self.cluster.device_binding_waits
        if not waits:
            return
        for job in self.jobs.values():
            for task in list(job.tasks.values()):
                wait = waits.get(task.key)
                node = self.nodes.get(wait.node) if wait is not None else None
                if node is None or task.status != TaskStatus.Pending:
                    continue
                task.pod = copy.copy(task.pod)  # the world's pod stays unbound
                task.pod.node_name = wait.node
                job.update_task_status(task, TaskStatus.Binding)
                try:
                    node.add_task(task)
                except NodeError:
                    job.update_task_status(task, TaskStatus.Pending)

    def _attach_numa_infos(self) -> None:
        """addNumaInfo: each Numatopology becomes its node's numa_info. Upstream makes a placeholder node
        for an object naming no node; such a node is never Ready, so no session sees it: here the object
        is simply not attached. A node gone from the world takes its pre-occupation records with it."""
        for topo in self.world.numatopologies:
            node = self.nodes.get(topo.name)
            if node is not None:
                node.numa_info = numa_info_from_object(topo)
        for name in [n for n in self.unassigned_numa_pods if n not in self.nodes]:
            del self.unassigned_numa_pods[name]

    def add_unassigned_numa_pods(self, allocated: dict[PodMeta, dict[str, dict[str, frozenset[int]]]]) -> None:
        """AddUnassignedNumaPods: record each pod's sets on its node (a node the cache lacks is skipped)."""
        for meta, by_node in allocated.items():
            for node_name, sets in by_node.items():
                if node_name in self.nodes:
                    self.unassigned_numa_pods.setdefault(node_name, {})[meta] = sets

    def _clear_unassigned_numa_pods(self, placed: dict[str, tuple[PodMeta, str]]) -> None:
        """clearUnassignedNumaPod: a deleted pod's record goes from the node its cached task named."""
        present = {pod.key for pod in self.world.pods}
        for key, (meta, node_name) in placed.items():
            records = self.unassigned_numa_pods.get(node_name)
            if key not in present and records is not None:
                records.pop(meta, None)

    def _with_csi_resources(self, node: Node) -> Node:
        """syncNode: a node with a CSINode gets each driver's volume limit as an allocatable resource."""
        extra = csi_node_resources(self.volumes.objects.csi_node(node.name))
        if not extra:
            return node
        return dataclasses.replace(node, allocatable={**node.allocatable, **extra},
                                   capacity={**node.capacity, **extra})

    def _add_pod(self, pod: Pod) -> None:
        if pod.priority is None and pod.priority_class_name:
            # The Priority admission plugin resolves the class into spec.priority ...
            pod.priority = self._priority_of_class(pod.priority_class_name)
        if not pod.preemption_policy:
            # ... and into spec.preemptionPolicy (the named class, else the global default).
            pod.preemption_policy = self._preemption_policy_of_class(pod.priority_class_name)
        if not pod.node_name and pod.scheduler_name not in self.scheduler_names:
            return  # a pending pod of another scheduler is not this scheduler's business
        task = TaskInfo(pod)
        try:
            self._add_csi_volumes(task)
        except ClaimNotForPod:
            return  # upstream's addPod fails (and retries): the pod is not in the cache
        if pod.resource_claims:
            try:
                task.dra_resreq, task.claim_dra_resreq, task.claim_keys = task_dra_info(pod, self.dra.claims)
            except MissingClaim:
                return  # upstream's addPod fails (and retries): the pod is not in the cache
        if self.persistent:
            self._restore_pipelined(pod, task)
        if task.node_name:
            node = self.nodes.get(task.node_name)
            if node is None:
                node = NodeInfo(None, task.node_name)  # held on an uninitialised, NotReady node
                self.nodes[task.node_name] = node
            if not completed_status(task.status):
                node.add_task(task)
        if task.job:
            job = self.jobs.setdefault(task.job, JobInfo(task.job))
            job.add_task_info(task)

    def _add_csi_volumes(self, task: TaskInfo) -> None:
        """addPodCSIVolumesToTask: each CSI driver's claims become a request of its limit resource."""
        volumes = pod_csi_volumes(self.volumes.objects, task.pod, self.ignored_provisioners)
        for resource, count in volumes.items():
            task.resreq.add_scalar(resource, float(count))  # resreq is init_resreq: one object
        if volumes:
            task.best_effort = task.init_resreq.is_empty()

    def register_binder(self, name: str, binder: Any) -> None:
        """RegisterBinder: a plugin whose pre_bind(bind_context) runs before each bind, kept across sessions."""
        self.binders[name] = binder

    def _restore_pipelined(self, pod: Pod, task: TaskInfo) -> None:
        """getTaskStatus / NewTaskInfo of the PR: a kept decision makes the task Pipelined on its node."""
        state = read_pipelined(pod)
        if state is None:
            return
        if pod.node_name or pod.deletion_timestamp or task.status != TaskStatus.Pending:
            clear_pipelined(pod)  # bound or going: the decision is over
            return
        node = next((n for n in self.world.nodes if n.name == state.node), None)
        if node is None or not NodeInfo(node).ready():
            clear_pipelined(pod)
            self.log.releases.append(ReleaseRecord(self.cycle, pod.key, state.node, "node gone or not ready"))
            return
        task.status = TaskStatus.Pipelined
        task.node_name = state.node
        task.eviction_occurred = state.eviction_occurred

    # -- the session's view --------------------------------------------------------------

    def snapshot(self) -> ClusterSnapshot:
        for name, node in self.nodes.items():  # RefreshNumaSchedulerInfoByCrd, every node, Ready or not
            node.numa_scheduler_info, kept = refresh_numa_scheduler_info(
                node.numa_info, self.unassigned_numa_pods.get(name, {}))
            if kept:
                self.unassigned_numa_pods[name] = kept
            else:
                self.unassigned_numa_pods.pop(name, None)
        nodes = {name: node.clone() for name, node in self.nodes.items() if node.ready()}
        queues = {name: queue.clone() for name, queue in self.queues.items()}
        jobs = {}
        for uid, job in self.jobs.items():
            if job.pod_group is None or job.queue not in queues:
                continue
            job.priority = self._priority_of_class(job.pod_group.priority_class_name)
            clone = job.clone()
            # The session gets its own pod objects, so nothing it writes reaches the cache.
            # A shallow copy suffices: the session only rebinds scalar fields (spec.nodeName).
            for task in clone.tasks.values():
                task.pod = copy.copy(task.pod)
                if self.persistent and task.status == TaskStatus.Pipelined:
                    task.eviction_occurred = job.tasks[task.uid].eviction_occurred  # Clone drops it
            jobs[uid] = clone
        for node in nodes.values():
            for stored in node.tasks.values():
                job = jobs.get(stored.job)
                if job is not None and stored.uid in job.tasks:
                    stored.pod = job.tasks[stored.uid].pod
        return ClusterSnapshot(nodes, list(self.node_list), jobs, queues,
                               copy.deepcopy(self.world.resource_quotas), self.cluster.clock,
                               set(self.in_use_nodes_in_shard))

    # -- what a session commits ----------------------------------------------------------

    def _find(self, task: TaskInfo) -> tuple[JobInfo, TaskInfo]:
        job = self.jobs.get(task.job)
        if job is None or task.uid not in job.tasks:
            raise CacheError(f"task {task.key} of job {task.job} is not in the cache")
        return job, job.tasks[task.uid]

    def add_bind_task(self, task: TaskInfo, bind_context: BindContext | None = None) -> None:
        job, cached = self._find(task)
        node = self.nodes.get(task.node_name)
        if node is None:
            raise CacheError(f"failed to bind task {task.key} to host {task.node_name}, host does not exist")
        original = cached.status
        if original == TaskStatus.Pipelined:  # a kept pipelined task (persistent mode) leaves its reservation
            held = self.nodes.get(cached.node_name)
            if held is not None:
                held.remove_task(cached)
            cached.node_name = task.node_name
        job.update_task_status(cached, TaskStatus.Binding)
        try:
            node.add_task(cached)
        except NodeError as exc:
            job.update_task_status(cached, original)
            raise CacheError(str(exc)) from exc
        outcome = self._pre_bind(bind_context or BindContext(task))
        if outcome is None:
            self.cluster.bound_this_cycle[cached.key] = node.name
            if task.pod_annotations:  # the Binding's annotations, which the API server puts on the pod
                self.cluster.bind_annotations[cached.key] = dict(task.pod_annotations)
            self.log.binds.append(BindRecord(self.cycle, cached.key, node.name))
        elif isinstance(outcome, VolumeWait):
            self.cluster.volume_waits[cached.key] = outcome
            self.log.binds.append(BindRecord(self.cycle, cached.key, node.name, "waiting"))
        elif isinstance(outcome, DeviceBindingWait):
            self.cluster.device_binding_waits[cached.key] = outcome
            self.log.binds.append(BindRecord(self.cycle, cached.key, node.name, BINDING_CONDITIONS_WAIT))
        else:  # upstream resyncs the task: the next session finds the pod pending again
            self.log.binds.append(BindRecord(self.cycle, cached.key, node.name, f"failed: {outcome}"))

    def _pre_bind(self, bind_context: BindContext) -> VolumeWait | DeviceBindingWait | Exception | None:
        """executePreBind: the registered PreBinds in turn; the first failure stops the bind."""
        for binder in self.binders.values():
            outcome = binder.pre_bind(bind_context)
            if outcome is not None:
                return outcome
        return None

    def remove_volcano_sch_gate(self, task: TaskInfo) -> None:
        """The gate manager's request (gate.SchGateManager): the world patches the gate away between sessions."""
        self.cluster.gate_removals.add(task.key)
        job = self.jobs.get(task.job)
        self.log.gate_removals.append(GateRemovalRecord(self.cycle, task.key, job.queue if job is not None else ""))

    def evict(self, task: TaskInfo, reason: str) -> None:
        job, cached = self._find(task)
        node = self.nodes.get(cached.node_name)
        if node is None:
            raise CacheError(f"failed to evict task {task.key} from host {cached.node_name}, host does not exist")
        if job.pod_group is None:
            raise CacheError(f"cannot evict task {task.key}: PodGroup of job {job.uid} is nil")
        job.update_task_status(cached, TaskStatus.Releasing)
        node.update_task(cached)
        self.cluster.evicted_this_cycle.add(cached.key)
        self.log.evictions.append(EvictRecord(self.cycle, cached.key, cached.node_name, reason))

    def update_job_status(self, job: JobInfo) -> None:
        """Write the session's PodGroup status and the pods' nominated nodes back (JobUpdater)."""
        cached = self.jobs.get(job.uid)
        if cached is None or cached.pod_group is None or job.pod_group is None:
            return
        cached.pod_group.phase = job.pod_group.phase
        cached.allocated_hyper_node = job.allocated_hyper_node  # updateJobInfo
        for uid, sub in cached.sub_jobs.items():
            if uid in job.sub_jobs:
                sub.allocated_hyper_node = job.sub_jobs[uid].allocated_hyper_node
        cached.pod_group.conditions = copy.deepcopy(job.pod_group.conditions)
        for status in (TaskStatus.Allocated, TaskStatus.Pending, TaskStatus.Pipelined):
            for task in job.tasks_with_status(status):
                if task.sch_gated:
                    continue
                _, _, nominated = task_scheduling_reason(task)
                if nominated and task.uid in cached.tasks:
                    cached.tasks[task.uid].pod.nominated_node_name = nominated

    def on_session_close(self, ssn) -> None:
        """Persistent mode: every pipelined task's decision goes on its pod, every other task's is cleared."""
        if not self.persistent:
            return
        for job in ssn.jobs.values():
            cached_job = self.jobs.get(job.uid)
            if cached_job is None:
                continue
            for task in job.tasks.values():
                cached = cached_job.tasks.get(task.uid)
                if cached is None:
                    continue
                if task.status == TaskStatus.Pipelined and task.node_name:
                    set_pipelined(cached.pod, task.node_name, task.eviction_occurred)
                else:
                    clear_pipelined(cached.pod)
        return

    # -- between sessions ------------------------------------------------------------------

    def advance(self) -> None:
        """The world moves on (world.py), then the scheduler's view is rebuilt from it."""
        placed = {task.key: (PodMeta(task.pod.uid, task.pod.name, task.pod.namespace), task.node_name)
                  for node in self.nodes.values() for task in node.tasks.values()} \
            if self.unassigned_numa_pods else {}
        self.cluster.advance(self.cycle, self.persistent, self.log)
        self._clear_unassigned_numa_pods(placed)
        self.cycle += 1
        self._rebuild()

    # -- read-only views for results -----------------------------------------------------

    def pod_group_phases(self) -> dict[str, str]:
        return {f"{pg.namespace}/{pg.name}": pg.phase for pg in self.world.pod_groups}

"""predicates: node filters (pkg/scheduler/plugins/predicates/predicates.go; semantics §9.6).

PredicateFn, in upstream's order:
1. pod count: `MaxTaskNum <= pods in the k8s mirror` -> Unschedulable "node(s) pod number exceeded",
   collected (so preempt may still evict to make room);
2. the stable filters, each returning k8s's UnschedulableAndUnresolvable, which aborts:
   NodeUnschedulable (always on), NodeAffinity (`predicate.NodeAffinityEnable`),
   TaintToleration (`predicate.TaintTolerationEnable`); with `predicate.CacheEnable` their verdict
   is cached per (node, `volcano.sh/template-uid`) for the session, and a cached failure becomes an
   Error status "plugin equivalence cache predicates failed";
3. NodePorts (`predicate.NodePortsEnable`), InterPodAffinity (`predicate.PodAffinityEnable`, its
   PreFilter counts taken in PrePredicate: interpod_affinity.py), NodeVolumeLimits
   (`predicate.NodeVolumeLimitsEnable`, CSI limits from CSINode objects), VolumeZone
   (`predicate.VolumeZoneEnable`): both in volume_filters.py, PodTopologySpread
   (`predicate.PodTopologySpreadEnable`: pod_topology_spread.py), VolumeBinding
   (`predicate.VolumeBindingEnable`: volume_binding.py) and DynamicResources
   (`predicate.DynamicResourceAllocationEnable`, on by default: dynamic_resources.py); a status that is
   UnschedulableAndUnresolvable, Error, Wait or Skip stops the rest.

PrePredicateFn runs upstream's PreFilters in that order: the sidecar rule (dead: SidecarContainers is
locked on in k8s 1.36), NodeAffinity's (a pod whose required terms all pin `metadata.name` to disjoint
sets), then InterPodAffinity, NodeVolumeLimits, VolumeZone, PodTopologySpread, VolumeBinding and
DynamicResources; a
failure reads "plugin <name> pre-predicates failed <reason>". A claim VolumeZone cannot resolve (missing,
or unbound outside a WaitForFirstConsumer class) fails there, so VolumeBinding's "pod has unbound
immediate PersistentVolumeClaims" is what a pod gets only with VolumeZone off (or for a claim pre-bound
to a volume that is not yet bound back).

Volumes beyond the filters: the allocate event runs VolumeBinding's Reserve (on `pod.spec.nodeName`,
which a pipeline leaves unset, so a pipelined pod assumes nothing), the deallocate event its Unreserve;
the plugin registers with the cache as a binder whose PreBind writes the chosen PVs' claimRefs and the
provisioning claims' selected-node annotations and makes the bind wait for the PV controller (the cache's
world runs it between sessions). DynamicResources reserves its allocations after VolumeBinding (and is
unreserved before it); its PreBind writes the claims' allocations after VolumeBinding's writes (even a
bind that then waits for its volumes). Volcano's own cache counts each claim's CSI driver as a request of
`attachable-volumes-csi-<driver>`, which only a node whose CSINode lists the driver has (cache.py,
cache/volumes.py; `--ignored-provisioners` drivers are not counted).

Topology-aware preemption's dry runs ask SimulateAddTask, SimulateRemoveTask and SimulatePredicate:
InterPodAffinity's AddPod / RemovePod on the dry run's copy of the preemptor's PreFilter counts, and its
Filter against them (upstream's device check there is not modelled).

Event handlers keep the shared k8s mirror current (allocate/pipeline/unevict add the pod,
evict/unallocate/unpipeline remove it). Upstream runs the VolumeBinding and DRA Reserve plugins first,
and they fail when the task's cycle state has no PreFilter data, i.e. when PrePredicate did not run for
the task in this session. That is always the case for a victim being unevicted, so a discarded
eviction leaves the victim OUT of the mirror; it also fails (rolls back) an allocation made without
a prior PrePredicate, as upstream.

Not modelled, and why:
- VolumeRestrictions (ReadWriteOncePod conflicts, inline disk conflicts): upstream's predicates plugin
  does not enable it, so Volcano never checks it;
- volume sources other than claims (persistentVolumeClaim, generic ephemeral) and the in-tree disks CSI
  migration translates (csi_translation.py: NodeVolumeLimits counts them, VolumeBinding checks a migrated
  PV's translated node affinity): no enabled filter reads the others;
- CSIStorageCapacity and CSIDriver objects: without them volume binding finds every node's storage
  sufficient and NodeVolumeLimits' driver-installed check stays off (VolumeLimitScaling is off);
- shared devices (GPU share, vGPU), the PodLister; DRA's limits are dynamic_resources.py's;
- BatchNodeOrder: VolumeBinding scores only with StorageCapacityScoring (alpha, off at 1.36).

BatchNodeOrder: DynamicResources' Score (weight 1) prefers nodes where a firstAvailable request got an
earlier subrequest (dynamic_resources.scores; 0 everywhere without such requests).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.unschedule_info import (
    NODE_POD_NUMBER_EXCEEDED,
    FitError,
    Status,
    StatusCode,
)
from schedcheck.reference.framework.arguments import as_arguments
from schedcheck.reference.framework.event import Event, EventHandler
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.cache.cache import BindContext
from schedcheck.reference.cache.dra_binding import DeviceBindingWait
from schedcheck.reference.cache.volumes import VolumeWait
from schedcheck.reference.framework.session import Session
from schedcheck.reference.k8s import Node, Pod, Taint
from schedcheck.reference.plugins import dynamic_resources as dra
from schedcheck.reference.plugins import pod_topology_spread
from schedcheck.reference.plugins.interpod_affinity import filter_labels, filter_node, pre_filter, update_with_pod
from schedcheck.reference.plugins.volume_binding import STATE_KEY as BINDING_STATE
from schedcheck.reference.plugins.volume_binding import BindingState, VolumeBinding
from schedcheck.reference.plugins.volume_filters import (
    ZONE_NAME,
    ZONE_STATE,
    limits_filter,
    limits_pre_filter,
    zone_filter,
    zone_pre_filter,
)
from schedcheck.reference.plugins.k8s_mirror import (
    MirrorNode,
    RequiredNodeAffinity,
    host_ports,
    node_affinity_key,
    session_mirror,
    tolerations_key,
    tolerations_tolerate,
)

PLUGIN_NAME = "predicates"
NODE_AFFINITY_ENABLE = "predicate.NodeAffinityEnable"
NODE_PORTS_ENABLE = "predicate.NodePortsEnable"
POD_AFFINITY_ENABLE = "predicate.PodAffinityEnable"
AFFINITY_STATE = "PreFilterInterPodAffinity"
POD_TOPOLOGY_SPREAD_ENABLE = "predicate.PodTopologySpreadEnable"
SPREAD_STATE = "PreFilterPodTopologySpread"
SKIP = "skip"  # PreFilter said Skip: the filter does not run
CHECKS_STATE = "schedcheck/predicates-filters"  # the filters predicate() runs for the task (_filters_to_run)
REASON_NODE_PORTS = "node(s) didn't have free ports for the requested pod ports"
TAINT_TOLERATION_ENABLE = "predicate.TaintTolerationEnable"
NODE_VOLUME_LIMITS_ENABLE = "predicate.NodeVolumeLimitsEnable"
VOLUME_ZONE_ENABLE = "predicate.VolumeZoneEnable"
VOLUME_BINDING_ENABLE = "predicate.VolumeBindingEnable"
LIMITS_STATE = "PreFilterNodeVolumeLimits"  # only whether the filter runs: CSILimits keeps no state
CACHE_ENABLE = "predicate.CacheEnable"
TEMPLATE_UID_ANNOTATION = "volcano.sh/template-uid"

REASON_NODE_UNSCHEDULABLE = "node(s) were unschedulable"
REASON_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
REASON_TAINTS = "node(s) had untolerated taint(s)"
REASON_AFFINITY_CONFLICT = "pod affinity terms conflict"
REASON_CACHED_FAILURE = "plugin equivalence cache predicates failed"
REASON_NODE_NOT_FOUND = "node info not found"
SIDECAR_CONTAINERS_ENABLED = True  # k8s feature gate, GA and locked on since 1.33
UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")
_HARD_EFFECTS = ("NoSchedule", "NoExecute")
_ABORTING = (StatusCode.UnschedulableAndUnresolvable, StatusCode.Error, StatusCode.Wait, StatusCode.Skip)
_UNSET = object()


class ReserveError(Exception):
    """A Reserve plugin failed; the event handler sets it as the event's error."""


class _PodFilter:
    """The node-independent part of the stable filters for one pod spec, memoising verdicts per node."""

    __slots__ = ("tolerations", "tolerates_cordon", "affinity", "verdicts")

    def __init__(self, pod: Pod) -> None:
        self.tolerations = tuple(pod.tolerations)
        self.tolerates_cordon = tolerations_tolerate(self.tolerations, UNSCHEDULABLE_TAINT)
        self.affinity = RequiredNodeAffinity(pod)
        self.verdicts: dict[str, Status | None] = {}

    def check(self, node: Node, affinity_on: bool, taints_on: bool) -> Status | None:
        """The first failing stable filter; all of them answer UnschedulableAndUnresolvable, so it aborts."""
        if node.unschedulable and not self.tolerates_cordon:
            return Status(StatusCode.UnschedulableAndUnresolvable, REASON_NODE_UNSCHEDULABLE)
        if affinity_on and not self.affinity.matches(node):
            return Status(StatusCode.UnschedulableAndUnresolvable, REASON_NODE_AFFINITY)
        if taints_on:
            for taint in node.taints:
                if taint.effect in _HARD_EFFECTS and not tolerations_tolerate(self.tolerations, taint):
                    return Status(StatusCode.UnschedulableAndUnresolvable, REASON_TAINTS)
        return None


def _code(unresolvable: bool) -> StatusCode:
    return StatusCode.UnschedulableAndUnresolvable if unresolvable else StatusCode.Unschedulable


def ports_conflict(left: tuple[str, str, int], right: tuple[str, str, int]) -> bool:
    """HostPortInfo.CheckConflict: same protocol and port, and the same address or either the wildcard."""
    return left[0] == right[0] and left[2] == right[2] and (
        left[1] == right[1] or "0.0.0.0" in (left[1], right[1]))


def host_ports_conflict(pod: Pod, node: MirrorNode) -> bool:
    wanted = host_ports(pod)
    if not wanted:
        return False
    return any(ports_conflict(want, use) for want in wanted for use in node.used_ports)


def required_terms_conflict(pod: Pod) -> bool:
    """NodeAffinity PreFilter: every required term pins metadata.name (In) and their union is empty."""
    affinity = pod.node_affinity
    if affinity is None or not affinity.required:
        return False
    names: set[str] | None = None
    for term in affinity.required:
        term_names: set[str] | None = None
        for req in term.match_fields:
            if req.key == "metadata.name" and req.operator == "In":
                term_names = set(req.values) if term_names is None else term_names & set(req.values)
        if term_names is None:
            return False  # this term allows every node
        names = term_names if names is None else names | term_names
    return names is not None and not names


class PredicatesPlugin(Plugin):
    name = PLUGIN_NAME

    def __init__(self, arguments: dict) -> None:
        super().__init__(arguments)
        args = as_arguments(arguments)
        self.node_affinity_enable = args.get_bool(NODE_AFFINITY_ENABLE, True)
        self.taint_toleration_enable = args.get_bool(TAINT_TOLERATION_ENABLE, True)
        self.node_ports_enable = args.get_bool(NODE_PORTS_ENABLE, True)
        self.pod_affinity_enable = args.get_bool(POD_AFFINITY_ENABLE, True)
        self.pod_topology_spread_enable = args.get_bool(POD_TOPOLOGY_SPREAD_ENABLE, True)
        self.cache_enable = args.get_bool(CACHE_ENABLE, False)
        self.node_volume_limits_enable = args.get_bool(NODE_VOLUME_LIMITS_ENABLE, True)
        self.volume_zone_enable = args.get_bool(VOLUME_ZONE_ENABLE, True)
        self.volume_binding_enable = args.get_bool(VOLUME_BINDING_ENABLE, True)
        self.dra_enable = args.get_bool(dra.ENABLE, True)  # the DynamicResourceAllocation gate is GA at 1.36
        self._checks: dict[tuple[int, ...] | None, tuple[Callable[..., Status | None], ...]] = {}
        self._filters_by_task: dict[str, _PodFilter] = {}
        self._filters_by_spec: dict[tuple, _PodFilter] = {}
        self._equivalence: dict[tuple[str, str], bool] = {}  # (node, template uid) -> fit

    def on_session_open(self, ssn: Session) -> None:
        self.ssn = ssn
        self.mirror = session_mirror(ssn)
        self.volumes = ssn.cache.volumes
        self.binding = VolumeBinding(ssn.cache.volumes)
        self.dra_claims = ssn.cache.dra
        ssn.cache.register_binder(self.name, self)
        ssn.add_event_handler(EventHandler(self.on_allocate, self.on_deallocate))
        ssn.add_fn("pre_predicate", self.name, self.pre_predicate)
        ssn.add_fn("predicate", self.name, self.predicate)
        ssn.add_fn("simulate_add_task", self.name, self.simulate_add_task)
        ssn.add_fn("simulate_remove_task", self.name, self.simulate_remove_task)
        ssn.add_fn("simulate_predicate", self.name, self.simulate_predicate)
        if self.dra_enable:
            ssn.add_fn("batch_node_order", self.name, self.batch_node_order)

    def batch_node_order(self, task: TaskInfo, nodes: list[NodeInfo]) -> dict[str, float]:
        """The Score plugins' sum: only DynamicResources' can be non-zero here."""
        found = self.ssn.cycle_states.get(task.uid, {}).get(dra.NAME)
        if not isinstance(found, dra.DRAState):
            return {}
        return dra.scores(found, [node.name for node in nodes])

    # -- event handlers -----------------------------------------------------------------

    def on_allocate(self, event: Event) -> None:
        task = event.task
        node_name = task.node_name
        if node_name not in self.mirror.nodes or node_name not in self.ssn.nodes:
            return  # upstream logs and returns
        if task.uid not in self.mirror.prefiltered:
            # VolumeBinding's Reserve cannot read its PreFilter state (CycleState.Read: "not found")
            # and returns before the pod is added to the node.
            event.err = ReserveError("not found")
            return
        err = self._reserve(task)
        if err is not None:
            event.err = ReserveError(str(err))
            return
        node = self.ssn.nodes[node_name]
        for name in self.ssn.cache.device_flags.registered():  # the shared-device choice (api/devices)
            pool = node.others.get(name)
            if pool is None or not pool.has_device_request(task.pod):
                continue
            annotations, device_err = pool.allocate(task.pod, int(self.ssn.now * 1e9))
            if device_err is not None:
                event.err = Exception(device_err)
                return
            if annotations:
                task.pod_annotations = {**(task.pod_annotations or {}), **annotations}
        self.mirror.add_pod(node_name, task.pod)

    def on_deallocate(self, event: Event) -> None:
        task = event.task
        if task.node_name not in self.mirror.nodes or task.node_name not in self.ssn.nodes:
            return
        self._unreserve(task)
        node = self.ssn.nodes[task.node_name]
        for name in self.ssn.cache.device_flags.registered():
            pool = node.others.get(name)
            if pool is None or not pool.has_device_request(task.pod):
                continue
            for key in pool.release(task.pod):
                if task.pod_annotations:
                    task.pod_annotations.pop(key, None)
        self.mirror.remove_pod(task.node_name, task.pod)

    # -- pre-predicate ------------------------------------------------------------------

    def pre_predicate(self, task: TaskInfo) -> Exception | None:
        """The PreFilters, in upstream's order; success records the task's cycle state."""
        pod = task.pod
        if not SIDECAR_CONTAINERS_ENABLED and any(c.restart_policy == "Always" for c in pod.init_containers):
            return Exception("pod has a restartable init container and the SidecarContainers feature is disabled")
        if self.node_affinity_enable and required_terms_conflict(pod):
            return Exception(f"plugin NodeAffinity pre-predicates failed {REASON_AFFINITY_CONFLICT}")
        state = self.ssn.cycle_states.setdefault(task.uid, {})
        state.pop(CHECKS_STATE, None)  # written again below once every PreFilter passed
        if self.pod_affinity_enable:  # InterPodAffinity's PreFilter: counts over the node view as it is now
            state[AFFINITY_STATE] = pre_filter(pod, self.mirror.nodes.values(),
                                              self.mirror.affinity_nodes.values()) or SKIP
        if self.node_volume_limits_enable:
            state[LIMITS_STATE] = True if limits_pre_filter(pod) else SKIP
        if self.volume_zone_enable:
            topologies, status = zone_pre_filter(self.volumes.objects, pod)
            if status is not None and status.code != StatusCode.Skip:
                return Exception(f"plugin {ZONE_NAME} pre-predicates failed {status.reason}")
            state[ZONE_STATE] = topologies if status is None else SKIP
        if self.pod_topology_spread_enable:  # PodTopologySpread's PreFilter, likewise
            state[SPREAD_STATE] = pod_topology_spread.pre_filter(pod, self.mirror.nodes.values()) or SKIP
        if self.volume_binding_enable:
            binding = self.binding.pre_filter(pod)
            if isinstance(binding, Status):
                return Exception(f"plugin {BINDING_STATE} pre-predicates failed {binding.reason}")
            state[BINDING_STATE] = binding
        if self.dra_enable:
            found = dra.pre_filter(self.dra_claims, pod, self.ssn.now)
            if isinstance(found, Status) and found.code != StatusCode.Skip:
                return Exception(f"plugin {dra.NAME} pre-predicates failed {found.reason}")
            state[dra.NAME] = SKIP if isinstance(found, Status) else found
        state[CHECKS_STATE] = self._filters_to_run(pod, state)
        self.mirror.prefiltered.add(task.uid)
        return None

    def _filters_to_run(self, pod: Pod, state: dict[str, Any]) -> tuple[int, ...]:
        """Which per-node filters of `predicate` (indices into _per_node_filters) can say anything for this pod,
        given its PreFilter state: a filter that is off, or that its PreFilter told to Skip, or that has
        nothing of the pod's to check (no host ports, no volumes, no claims) passes every node and is left out. Plain
        integers, since dry runs deep-copy cycle states."""
        binding = state.get(BINDING_STATE)
        wanted = (
            self.node_ports_enable and bool(host_ports(pod)),
            self.pod_affinity_enable and state.get(AFFINITY_STATE) is not SKIP,
            self.node_volume_limits_enable and state.get(LIMITS_STATE) is not SKIP
            and bool(pod.volumes or pod.inline_volumes),
            self.volume_zone_enable and bool(pod.volumes),
            self.pod_topology_spread_enable and state.get(SPREAD_STATE) is not SKIP,
            self.volume_binding_enable and not (isinstance(binding, BindingState) and binding.skip),
            self.dra_enable and state.get(dra.NAME) is not SKIP,
        )
        return tuple(index for index, on in enumerate(wanted) if on)

    def _per_node_filters(self) -> tuple[Callable[..., Status | None], ...]:
        """The per-node filters in upstream's order."""
        return (self._node_ports, self._pod_affinity, self._volume_limits, self._volume_zone,
                self._topology_spread, self._volume_binding, self._dynamic_resources)

    # -- predicate ----------------------------------------------------------------------

    def predicate(self, task: TaskInfo, node: NodeInfo) -> Exception | None:
        mirror_node = self.mirror.nodes.get(node.name)
        if mirror_node is None:
            return FitError(task.key, node.name, [Status(StatusCode.Error, REASON_NODE_NOT_FOUND, PLUGIN_NAME)])
        if self.cache_enable:
            failed = self._cached_stable_filters(task, node)
        else:
            failed = self._stable_filters(task, node)
        statuses = []
        if node.allocatable.max_task_num <= mirror_node.num_pods:
            statuses.append(Status(StatusCode.Unschedulable, NODE_POD_NUMBER_EXCEEDED, PLUGIN_NAME))
        if failed is not None:  # the stable filters abort first (UnschedulableAndUnresolvable)
            statuses.append(Status(failed.code, failed.reason))  # a fresh status per FitError
        else:  # then the other filters, in upstream's order; an aborting one stops them
            state = self.ssn.cycle_states.get(task.uid, {})
            wanted = state.get(CHECKS_STATE)
            checks = self._checks.get(wanted)  # the same few index tuples, node after node
            if checks is None:
                filters = self._per_node_filters()
                checks = self._checks[wanted] = filters if wanted is None else tuple(filters[i] for i in wanted)
            for check in checks:  # None: no PrePredicate ran, every filter
                status = check(task, mirror_node, state)
                if status is not None:
                    statuses.append(status)
                    if status.code in _ABORTING:
                        break
        return FitError(task.key, node.name, statuses) if statuses else None

    def _node_ports(self, task: TaskInfo, node: MirrorNode, state: dict[str, Any]) -> Status | None:
        if self.node_ports_enable and host_ports_conflict(task.pod, node):
            return Status(StatusCode.Unschedulable, REASON_NODE_PORTS)
        return None

    def _pod_affinity(self, task: TaskInfo, node: MirrorNode, state: dict[str, Any]) -> Status | None:
        if not self.pod_affinity_enable:
            return None
        affinity = state.get(AFFINITY_STATE)
        if affinity is None:
            return Status(StatusCode.Error, f'reading "{AFFINITY_STATE}" from cycleState: not found')
        if affinity is SKIP:
            return None
        failed = filter_node(affinity, node)
        return None if failed is None else Status(_code(failed[0]), failed[1])

    def _volume_limits(self, task: TaskInfo, node: MirrorNode, state: dict[str, Any]) -> Status | None:
        """NodeVolumeLimits (CSI): it keeps no state, so it runs unless its PreFilter said Skip."""
        if (not self.node_volume_limits_enable or state.get(LIMITS_STATE) is SKIP
                or not (task.pod.volumes or task.pod.inline_volumes)):
            return None
        return limits_filter(self.volumes.objects, task.pod, node.name, list(node.pod_objects.values()))

    def _volume_zone(self, task: TaskInfo, node: MirrorNode, state: dict[str, Any]) -> Status | None:
        if not self.volume_zone_enable or not task.pod.volumes or node.node is None:
            return None
        topologies = state.get(ZONE_STATE)
        if topologies is SKIP:
            return None
        if topologies is None:  # no PreFilter state: VolumeZone works it out again
            topologies, status = zone_pre_filter(self.volumes.objects, task.pod)
            if status is not None and status.code != StatusCode.Skip:
                return status
        return zone_filter(topologies, node.node)

    def _topology_spread(self, task: TaskInfo, node: MirrorNode, state: dict[str, Any]) -> Status | None:
        if not self.pod_topology_spread_enable:
            return None
        spread = state.get(SPREAD_STATE)
        if spread is None:
            return Status(StatusCode.Error, f'reading "{SPREAD_STATE}" from cycleState: not found')
        if spread is SKIP:
            return None
        failed = pod_topology_spread.filter_node(spread, task.pod, node)
        return None if failed is None else Status(_code(failed[0]), failed[1])

    def _volume_binding(self, task: TaskInfo, node: MirrorNode, state: dict[str, Any]) -> Status | None:
        if not self.volume_binding_enable or node.node is None:
            return None
        binding = state.get(BINDING_STATE)
        if binding is None:
            return Status(StatusCode.Error, "not found")
        return None if binding.skip else self.binding.filter(binding, node.node)

    def _dynamic_resources(self, task: TaskInfo, node: MirrorNode, state: dict[str, Any]) -> Status | None:
        if not self.dra_enable or node.node is None:
            return None
        found = state.get(dra.NAME)
        if found is None:
            return Status(StatusCode.Error, f'reading "{dra.NAME}" from cycleState: not found')
        return None if found is SKIP else dra.filter_node(found, node.node)

    # -- volume binding and DRA at Reserve and PreBind -----------------------------------

    def _reserve(self, task: TaskInfo) -> Exception | None:
        state = self.ssn.cycle_states.get(task.uid, {})
        # upstream reserves on pod.spec.nodeName, which a pipeline does not set
        if self.volume_binding_enable:
            binding = state.get(BINDING_STATE)
            if binding is None:
                return Exception("not found")
            err = self.binding.reserve(binding, task.pod, task.pod.node_name)
            if err is not None:
                return err
        if self.dra_enable:
            found = state.get(dra.NAME)
            if found is None:
                return Exception(f'reading "{dra.NAME}" from cycleState: not found')
            if found is not SKIP:
                return dra.reserve(self.dra_claims, found, task.pod.node_name)
        return None

    def _unreserve(self, task: TaskInfo) -> None:
        state = self.ssn.cycle_states.get(task.uid, {})
        found = state.get(dra.NAME)
        if self.dra_enable and isinstance(found, dra.DRAState):
            dra.unreserve(self.dra_claims, found)
        binding = state.get(BINDING_STATE)
        if self.volume_binding_enable and isinstance(binding, BindingState):
            self.binding.unreserve(binding, task.pod.node_name)

    def _needs_pre_bind(self, task: TaskInfo) -> bool:
        return (self.volume_binding_enable and bool(task.pod.volumes)) or (
            self.dra_enable and bool(task.pod.resource_claims))

    def setup_bind_context_extension(self, state: dict[str, Any], context: BindContext) -> None:
        if self._needs_pre_bind(context.task):
            context.extensions[self.name] = state

    def pre_bind(self, context: BindContext) -> VolumeWait | DeviceBindingWait | Exception | None:
        """PreBind: VolumeBinding writes the claims' bindings and waits for them, then DynamicResources writes
        each ResourceClaim's allocation and the pod as its consumer, and waits for its devices' binding
        conditions (a bind waiting for its volumes is not also made to wait for them: not modelled)."""
        if not self._needs_pre_bind(context.task):
            return None
        state = context.extensions.get(self.name, {})
        outcome: VolumeWait | Exception | None = None
        if self.volume_binding_enable:
            binding = state.get(BINDING_STATE)
            if binding is None:
                return Exception("not found")
            outcome = self.binding.pre_bind(binding, context.task.pod.node_name)
            if isinstance(outcome, Exception):
                return outcome
        if self.dra_enable:
            found = state.get(dra.NAME)
            if found is None:
                return Exception(f'reading "{dra.NAME}" from cycleState: not found')
            if found is not SKIP:
                dra_outcome = dra.pre_bind(self.dra_claims, found, context.task.pod, self.ssn.now)
                if isinstance(dra_outcome, Exception) or outcome is None:
                    return dra_outcome
        return outcome

    # -- topology-aware preemption's dry runs (InterPodAffinity only, as upstream) --------

    def simulate_add_task(self, state: dict[str, Any], task_to_schedule: TaskInfo, task_to_add: TaskInfo,
                          node: NodeInfo) -> Exception | None:
        return self._simulate_update(state, task_to_add, node, +1)

    def simulate_remove_task(self, state: dict[str, Any], task_to_schedule: TaskInfo, task_to_remove: TaskInfo,
                             node: NodeInfo) -> Exception | None:
        return self._simulate_update(state, task_to_remove, node, -1)

    def _simulate_update(self, state: dict[str, Any], task: TaskInfo, node: NodeInfo, multiplier: int
                         ) -> Exception | None:
        """InterPodAffinity's AddPod / RemovePod on the dry run's copy of the preemptor's counts."""
        verb = "add pod to" if multiplier > 0 else "remove pod from"
        affinity, err = self._dry_run_affinity(state, f"failed to {verb} node {node.name}")
        if affinity is not None:
            update_with_pod(affinity, task.pod, node.node.labels if node.node is not None else {}, multiplier)
        return err

    def simulate_predicate(self, state: dict[str, Any], task: TaskInfo, node: NodeInfo) -> Exception | None:
        """SimulatePredicate: InterPodAffinity's Filter against the dry run's counts, then the shared devices."""
        affinity, err = self._dry_run_affinity(state, f"failed to filter pod on node {node.name}")
        if affinity is None:
            return err or self._simulate_devices(task, node)
        failed = filter_labels(affinity, node.node.labels if node.node is not None else {})
        if failed is not None:
            return Exception(f"failed to filter pod on node {node.name}: {failed[1]}")
        return self._simulate_devices(task, node)

    def _simulate_devices(self, task: TaskInfo, node: NodeInfo) -> Exception | None:
        """SimulatePredicate's device check: FilterNode with no policy on the dry run's pools."""
        for name in self.ssn.cache.device_flags.registered():
            pool = node.others.get(name)
            if pool is None or not pool.has_device_request(task.pod):
                continue
            code, reason, err = pool.filter_node(task.pod, "")
            if code != 0 or err is not None:
                return Exception(f"device {name} cannot fit task {task.key} on node {node.name}: {reason}")
        return None

    def _dry_run_affinity(self, state: dict[str, Any], context: str) -> tuple[Any, Exception | None]:
        """The InterPodAffinity counts of a dry run's cycle state: (counts, None) to use; (None, None) when the
        filter is off or PreFilter skipped; (None, error) when PreFilter never wrote them."""
        if not self.pod_affinity_enable:
            return None, None
        affinity = state.get(AFFINITY_STATE)
        if affinity is SKIP:
            return None, None
        if affinity is None:
            return None, Exception(f'{context}: reading "{AFFINITY_STATE}" from cycleState: not found')
        return affinity, None

    def _cached_stable_filters(self, task: TaskInfo, node: NodeInfo) -> Status | None:
        """predicate.CacheEnable: the verdict per (node, template uid) is reused for the session."""
        template = task.pod.annotations.get(TEMPLATE_UID_ANNOTATION, "")
        if template:
            fit = self._equivalence.get((node.name, template))
            if fit is not None:
                return None if fit else Status(StatusCode.Error, REASON_CACHED_FAILURE, CACHE_ENABLE)
        status = self._stable_filters(task, node)
        if template:
            self._equivalence[(node.name, template)] = status is None
        return status

    def _stable_filters(self, task: TaskInfo, node: NodeInfo) -> Status | None:
        pod_filter = self._filters_by_task.get(task.uid)
        if pod_filter is None:
            pod_filter = self._filters_by_task[task.uid] = self._pod_filter(task.pod)
        verdict = pod_filter.verdicts.get(node.name, _UNSET)
        if verdict is _UNSET:
            verdict = None
            if node.node is not None:
                verdict = pod_filter.check(node.node, self.node_affinity_enable, self.taint_toleration_enable)
            pod_filter.verdicts[node.name] = verdict
        return verdict  # type: ignore[return-value]

    def _pod_filter(self, pod: Pod) -> _PodFilter:
        key = (node_affinity_key(pod), tolerations_key(pod.tolerations))
        pod_filter = self._filters_by_spec.get(key)
        if pod_filter is None:
            pod_filter = self._filters_by_spec[key] = _PodFilter(pod)
        return pod_filter


register_plugin_builder(PLUGIN_NAME, PredicatesPlugin)

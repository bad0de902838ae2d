"""The world between sessions: the API server and kubelets around the scheduler, deterministic.

A pod bound in a session is running on its node by the next one (a bind that waits for its volumes goes
once the PV controller, pv_controller.py, has bound them, which it does first; one that waits for its
devices' binding conditions fails at its deadline, cache/dra_binding.py); a pod evicted in a session is
terminating (Releasing) in the next one and gone in the one after. Faults a test can inject:
`failing_binds` (the API server refuses a pod's next bind), `slow_evictions` (a pod stays
terminating that many more sessions), `bound_elsewhere` (another scheduler binds a pending pod
first). The scheduler's clock advances one schedule period per session.
"""

from __future__ import annotations

from schedcheck.reference.api.pipelined import clear_pipelined
from schedcheck.reference.cache.log import BINDING_CONDITIONS_WAIT, BindOutcome, CacheLog, ReleaseRecord
from schedcheck.reference.cache.dra_binding import DeviceBindingWait
from schedcheck.reference.cache.dra_claims import release_claims
from schedcheck.reference.cache.ephemeral_controller import create_ephemeral_claims
from schedcheck.reference.cache.pv_controller import sync_claims
from schedcheck.reference.cache.volumes import VolumeWait
from schedcheck.reference.api.task_info import QUEUE_ALLOCATION_GATE
from schedcheck.reference.k8s import ClusterObjects, Pod, PodCondition
from schedcheck.reference.plugins.volume_helpers import fully_bound
from schedcheck.reference.util.timestamps import format_timestamp

SCHEDULE_PERIOD_SECONDS = 1.0  # --schedule-period


class World:
    def __init__(self, objects: ClusterObjects, clock: float) -> None:
        self.objects = objects  # the cache's own copy: the world and the cache see the same objects
        self.clock = clock
        self.bound_this_cycle: dict[str, str] = {}  # pod key -> node, sent to the binder this session
        self.evicted_this_cycle: set[str] = set()  # pod keys evicted this session
        self.failing_binds: set[str] = set()  # pod keys whose next bind the API server refuses
        self.slow_evictions: dict[str, int] = {}  # pod key -> extra sessions it stays terminating
        self.bound_elsewhere: dict[str, str] = {}  # pod key -> node another scheduler binds it to
        self.volume_waits: dict[str, VolumeWait] = {}  # pod key -> a bind waiting for its claims to be bound
        # pod key -> a bind waiting in DRA PreBind for its devices' binding conditions
        self.device_binding_waits: dict[str, DeviceBindingWait] = {}
        self.bind_annotations: dict[str, dict[str, str]] = {}  # pod key -> annotations its Binding carries
        self.gate_removals: set[str] = set()  # pod keys whose Volcano queue-allocation gate is patched away

    def advance(self, cycle: int, persistent: bool, log: CacheLog) -> None:
        """Let the world move on: binds complete, evictions progress, terminated pods disappear.

        Injected faults: a bind of a pod in `failing_binds` fails once (the pod stays pending);
        a terminating pod in `slow_evictions` stays terminating for that many more sessions; a pending
        pod in `bound_elsewhere` is bound to that node by another scheduler first (our bind of it then
        finds it bound: to the same node, or elsewhere).
        """
        create_ephemeral_claims(self.objects)  # the ephemeral volume controller, then the PV controller
        sync_claims(self.objects)
        self._release_volume_waits(log)
        self._apply_concurrent_binds(cycle, persistent, log)
        kept = []
        for pod in self.objects.pods:
            key = pod.key
            if pod.deletion_timestamp and self.slow_evictions.get(key, 0) > 0 \
                    and key not in self.evicted_this_cycle:
                self.slow_evictions[key] -= 1  # a slow termination: still Releasing next session
                kept.append(pod)
                continue
            if key in self.evicted_this_cycle:
                # The evictor marks the pod disrupted by the scheduler, then deletes it.
                pod.deletion_timestamp = pod.deletion_timestamp or format_timestamp(self.clock)
                pod.conditions = [c for c in pod.conditions if c.type not in ("Ready", "DisruptionTarget")] + [
                    PodCondition("Ready", "False", "Evict"),
                    PodCondition("DisruptionTarget", "True", "PreemptionByScheduler"),
                ]
                kept.append(pod)
            elif pod.deletion_timestamp:
                continue  # finished terminating
            else:
                if key in self.bound_this_cycle:
                    self._bind(pod, self.bound_this_cycle[key], cycle, persistent, log)
                kept.append(pod)
        self.objects.pods = kept
        self._remove_sch_gates()
        release_claims(self.objects)  # the resourceclaim controller
        self.bound_this_cycle.clear()
        self.bind_annotations.clear()
        self.evicted_this_cycle.clear()
        self.clock += SCHEDULE_PERIOD_SECONDS
        self._end_device_binding_waits(log)

    def _remove_sch_gates(self) -> None:
        """The gate manager's patches (cache.RemoveVolcanoSchGate: a strategic-merge patch deleting the gate
        of that name, other gates kept); a pod gone by now is a NotFound upstream logs."""
        for pod in self.objects.pods:
            if pod.key in self.gate_removals:
                pod.scheduling_gates = [gate for gate in pod.scheduling_gates if gate != QUEUE_ALLOCATION_GATE]
        self.gate_removals.clear()

    def _release_volume_waits(self, log: CacheLog) -> None:
        """A bind waiting in PreBind goes to the binder once every claim it waits for is bound."""
        claims = {pvc.key: pvc for pvc in self.objects.persistent_volume_claims}
        for key, wait in list(self.volume_waits.items()):
            if not all(name in claims and fully_bound(claims[name]) for name in wait.claims):
                continue  # upstream would give up after volumebinding.bindTimeoutSeconds
            del self.volume_waits[key]
            self.bound_this_cycle[key] = wait.node
            record = next(r for r in reversed(log.binds) if r.task == key and r.pre_bind == "waiting")
            record.pre_bind = ""

    def _end_device_binding_waits(self, log: CacheLog) -> None:
        """A bind waiting for binding conditions fails once its deadline has passed by the next session's clock
        (no driver sets conditions here): upstream's executePreBinds resyncs the task, which is Pending again,
        and rolls nothing back, so the claims keep their allocation and the pod in reservedFor. A pod gone
        meanwhile ends its wait too."""
        present = {pod.key for pod in self.objects.pods if not pod.node_name}
        for key, wait in list(self.device_binding_waits.items()):
            if key in present and self.clock <= wait.deadline:
                continue
            del self.device_binding_waits[key]
            record = next((r for r in reversed(log.binds) if r.task == key and r.pre_bind == BINDING_CONDITIONS_WAIT),
                          None)
            if record is not None:
                record.pre_bind = f"failed: device binding timeout: claim={wait.claim.partition('/')[2]}"

    def _apply_concurrent_binds(self, cycle: int, persistent: bool, log: CacheLog) -> None:
        for pod in self.objects.pods:
            node = self.bound_elsewhere.pop(pod.key, None)
            if node is None or pod.node_name or pod.deletion_timestamp:
                continue
            pod.node_name, pod.phase = node, "Running"
            pod.start_time = pod.start_time or format_timestamp(self.clock)
            if persistent and clear_pipelined(pod):
                log.releases.append(ReleaseRecord(cycle, pod.key, node, "bound by another scheduler"))

    def _bind(self, pod: Pod, node: str, cycle: int, persistent: bool, log: CacheLog) -> None:
        """The binder. A pod already bound (by another scheduler) stays where it is; the persistent
        binder counts the same node as success and clears the pipelined annotations either way."""
        if pod.node_name:
            outcome = "already-bound" if pod.node_name == node else "bound-elsewhere"
        elif pod.key in self.failing_binds:
            self.failing_binds.discard(pod.key)  # the binder failed: the pod stays pending, unbound
            outcome = "failed"
        else:
            pod.node_name = node
            pod.annotations = {**pod.annotations, **self.bind_annotations.pop(pod.key, {})}
            pod.phase = "Running"
            pod.start_time = pod.start_time or format_timestamp(self.clock)
            outcome = "bound"
        if persistent:
            clear_pipelined(pod)
        elif outcome == "already-bound":
            outcome = "conflict"  # upstream's binder gets the API server's conflict for any bound pod
        log.bind_outcomes.append(BindOutcome(cycle, pod.key, node, outcome))

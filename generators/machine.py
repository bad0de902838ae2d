"""A stateful machine over the scheduler's cache: many sessions in a row, with the world changing between.

Rules submit jobs, finish, fail or delete pods, add, remove or cordon nodes,
change queues, make a bind fail or an eviction slow, bind a pod by another
scheduler, patch a pod's labels, delete a pipelined pod, and run a session; the
invariant engine watches every session and the machine's invariant fails on
the first violation. A failure is saved as a scenario: the world as it stood
right before the first session of the failing run of sessions that no rule
touched in between (`cycles` is that run's length), so a cross-session
failure replays with its history. `persistence` picks pipelinePersistence.
"""

from __future__ import annotations

import time
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from schedcheck.generators.vocabulary import SCHEDULING_GATE
from schedcheck.invariants.engine import InvariantEngine
from schedcheck.reference.api.pipelined import read_pipelined
from schedcheck.reference.framework.conf import PERSISTENCE_UPSTREAM, SchedulerConf, default_scheduler_conf
from schedcheck.scenario.conf_loader import PERSISTENCE_KEY
from schedcheck.reference.k8s import GROUP_NAME_ANNOTATION, ClusterObjects, Container, Node, Pod, PodGroup, Queue
from schedcheck.reference.quantity import Quantity
from schedcheck.reference.scheduler import Scheduler
from schedcheck.reference.util.timestamps import format_timestamp
from schedcheck.scenario.dump import scenario_document

MACHINE_CONFS = {
    "default": default_scheduler_conf,
}
MAX_NODES = 5
MAX_JOBS = 8


def _resources(cpu: int, memory_gi: int) -> dict[str, Quantity]:
    return {"cpu": Quantity.parse(str(cpu)), "memory": Quantity.parse(f"{memory_gi}Gi")}


class SchedulerMachine(RuleBasedStateMachine):
    """Sessions in a row over one cache; subclasses may set `conf_factory`, `seed` and `strict`."""

    conf_factory = staticmethod(default_scheduler_conf)
    seed = 0
    strict = False
    only: list[str] | None = None
    conf_actions = "enqueue, allocate, preempt, reclaim, backfill"
    persistence = PERSISTENCE_UPSTREAM
    last_failure: tuple[dict[str, Any] | None, dict[str, Any]] | None = None
    last_failing_run: dict[str, Any] | None = None  # the failing session with its untouched predecessors
    first_found_at: float | None = None  # monotonic time of the first violation (before shrinking)
    sessions_total = 0  # over every run of this class, for the gate's figures
    checks_total = 0

    def __init__(self) -> None:
        super().__init__()
        self.engine = InvariantEngine(only=self.only, stop_at_first=True)
        self.scheduler: Scheduler | None = None
        self.sessions = 0
        self.jobs = 0
        self.before_session: dict[str, Any] | None = None
        self.failure_doc: dict[str, Any] | None = None
        self.touched = True  # a rule changed the world or injected a fault since the last session
        self.chain_doc: dict[str, Any] | None = None  # the world before the first untouched session in a row
        self.chain_length = 0
        self.evictions = 0

    # -- setup --------------------------------------------------------------------------------

    @initialize(nodes=st.integers(1, 3), cpu=st.sampled_from([4, 8, 2]))
    def start(self, nodes: int, cpu: int) -> None:
        objects = ClusterObjects(
            nodes=[Node(name=f"node-{i}", uid=f"node-{i}", allocatable={**_resources(cpu, 2 * cpu),
                                                                        "pods": Quantity.parse("110")})
                   for i in range(nodes)],
            queues=[Queue("default", "queue-default"), Queue("batch", "queue-batch", weight=2)],
        )
        conf: SchedulerConf = self.conf_factory()
        conf.actions = [a.strip() for a in self.conf_actions.split(",")]
        conf.pipeline_persistence = self.persistence
        self.scheduler = Scheduler(objects, conf, seed=self.seed, hooks_factory=self.engine.hooks)

    @property
    def world(self) -> ClusterObjects:
        assert self.scheduler is not None
        return self.scheduler.cache.world

    def _changed(self) -> None:
        assert self.scheduler is not None
        self.touched = True
        self.scheduler.cache._rebuild()

    # -- the world changes ---------------------------------------------------------------------

    @precondition(lambda self: self.jobs < MAX_JOBS)
    @rule(size=st.integers(1, 4), cpu=st.integers(1, 4), gang=st.booleans(), priority=st.sampled_from([0, 10, 100]),
          queue=st.sampled_from(["default", "batch"]))
    def submit_job(self, size: int, cpu: int, gang: bool, priority: int, queue: str) -> None:
        name = f"job-{self.jobs}"
        self.jobs += 1
        self.world.pod_groups.append(PodGroup(name=name, namespace="ns", uid=f"pg-{name}",
                                              min_member=size if gang else 1, queue=queue))
        for i in range(size):
            self.world.pods.append(Pod(name=f"{name}-{i}", namespace="ns", uid=f"pod-{name}-{i}",
                                       annotations={GROUP_NAME_ANNOTATION: name}, priority=priority,
                                       containers=[Container("main", _resources(cpu, cpu))]))
        self._changed()

    @precondition(lambda self: self.jobs < MAX_JOBS)
    @rule(size=st.integers(1, 3), cpu=st.integers(1, 4))
    def submit_gated_job(self, size: int, cpu: int) -> None:
        """A job whose pods arrive with a scheduling gate (a gate can only be set at creation)."""
        self.submit_job(size, cpu, False, 0, "default")
        for pod in self.world.pods[-size:]:
            pod.scheduling_gates = [SCHEDULING_GATE]
        self._changed()

    @rule(index=st.integers(0, 50))
    def gate_removed(self, index: int) -> None:
        """The controller that owns the gate lets one pod go; it is scheduled from the next session on."""
        gated = [p for p in self.world.pods if p.scheduling_gates]
        if gated:
            gated[index % len(gated)].scheduling_gates = []
            self._changed()

    def _pods(self, phase: str) -> list[Pod]:
        return [p for p in self.world.pods if p.phase == phase and not p.deletion_timestamp]

    @rule(index=st.integers(0, 50), failed=st.booleans())
    def pod_finishes(self, index: int, failed: bool) -> None:
        running = self._pods("Running")
        if running:
            running[index % len(running)].phase = "Failed" if failed else "Succeeded"
            self._changed()

    @rule(index=st.integers(0, 50))
    def pod_deleted(self, index: int) -> None:
        if self.world.pods:
            del self.world.pods[index % len(self.world.pods)]
            self._changed()

    @precondition(lambda self: len(self.world.nodes) < MAX_NODES)
    @rule(cpu=st.sampled_from([4, 8, 2]))
    def node_added(self, cpu: int) -> None:
        name = f"node-{len(self.world.nodes)}-{self.sessions}"
        self.world.nodes.append(Node(name=name, uid=name, allocatable={**_resources(cpu, 2 * cpu),
                                                                       "pods": Quantity.parse("110")}))
        self._changed()

    @precondition(lambda self: len(self.world.nodes) > 1)
    @rule(index=st.integers(0, 10))
    def node_removed(self, index: int) -> None:
        node = self.world.nodes.pop(index % len(self.world.nodes))
        # Its pods go with it (the node controller evicts them); pods of other nodes stay.
        self.world.pods = [p for p in self.world.pods if p.node_name != node.name]
        self._changed()

    @rule(index=st.integers(0, 10), cordoned=st.booleans())
    def node_cordoned(self, index: int, cordoned: bool) -> None:
        self.world.nodes[index % len(self.world.nodes)].unschedulable = cordoned
        self._changed()

    @rule(queue=st.sampled_from(["default", "batch"]), weight=st.integers(1, 4), cap_cpu=st.sampled_from([0, 4, 8]))
    def queue_changed(self, queue: str, weight: int, cap_cpu: int) -> None:
        for q in self.world.queues:
            if q.name == queue:
                q.weight = weight
                q.capability = {"cpu": Quantity.parse(str(cap_cpu))} if cap_cpu else {}
        self._changed()

    @rule(index=st.integers(0, 50))
    def bind_will_fail(self, index: int) -> None:
        pending = self._pods("Pending")
        if pending and self.scheduler is not None:
            self.scheduler.cache.cluster.failing_binds.add(pending[index % len(pending)].key)
            self.touched = True

    @rule(index=st.integers(0, 50), sessions=st.integers(1, 3))
    def eviction_is_slow(self, index: int, sessions: int) -> None:
        running = self._pods("Running")
        if running and self.scheduler is not None:
            self.scheduler.cache.cluster.slow_evictions[running[index % len(running)].key] = sessions
            self.touched = True

    # -- sessions ----------------------------------------------------------------------------------

    @rule()
    def run_session(self) -> None:
        assert self.scheduler is not None
        if self.sessions:
            self.scheduler.advance()
        self.before_session = scenario_document(
            f"machine-session-{self.sessions}", self.world, self.scheduler.conf, cycles=1,
            now=format_timestamp(self.scheduler.cache.cluster.clock))
        if self.scheduler.conf.persistent_pipelines:  # the dump knows no schedcheck-only keys
            self.before_session["schedulerConf"][PERSISTENCE_KEY] = self.scheduler.conf.pipeline_persistence
        if self.touched or self.chain_doc is None:
            self.chain_doc, self.chain_length = self.before_session, 0
            self.touched = False
        self.chain_length += 1
        evictions_before = len(self.scheduler.cache.log.evictions)
        checks_before = self.engine.checks_run
        try:
            self.scheduler.run_once()
        except Exception as exc:  # a crash of the reference: keep the session that caused it
            type(self).last_failure = (self.before_session, {"id": "reference.crash",
                                                             "message": f"{type(exc).__name__}: {exc}"})
            raise
        self.sessions += 1
        self.evictions += len(self.scheduler.cache.log.evictions) - evictions_before
        cls = type(self)
        cls.sessions_total += 1
        cls.checks_total += self.engine.checks_run - checks_before

    @invariant()
    def no_violation(self) -> None:
        broken = self.engine.violations + (self.engine.findings if self.strict else [])
        if broken:
            first = broken[0]
            cls = type(self)
            if cls.first_found_at is None:
                cls.first_found_at = time.monotonic()
            # Hypothesis replays the shrunk failure last, so this ends holding the minimal one.
            cls.last_failure = (self.before_session, first.to_json())
            cls.last_failing_run = self.failing_run()
            raise AssertionError(f"{first.invariant} (session {self.sessions - 1}): {first.message}")

    def failing_run(self) -> dict[str, Any] | None:
        """The scenario replaying the untouched sessions in a row that ended in the failure."""
        if self.chain_doc is None:
            return self.before_session
        doc = dict(self.chain_doc)
        doc["cycles"] = self.chain_length
        doc["metadata"] = {**doc.get("metadata", {}), "name": f"machine-sessions-{self.sessions - self.chain_length}"
                           f"-to-{self.sessions - 1}"}
        return doc


class CrossSessionMachine(SchedulerMachine):
    """The machine plus the faults that test state kept across sessions (seed 004): a pipelined pod
    deleted, a pending pod bound by another scheduler, a pod patched by another client. A subclass,
    so that the gate's machine draws exactly the rule sequences it drew before."""

    @initialize(nodes=st.integers(1, 3), cpu=st.sampled_from([4, 8]), fill=st.integers(1, 2))
    def start(self, nodes: int, cpu: int, fill: int) -> None:
        """The base cluster, but already busy: every node full of low-priority Running pods of queue
        default (one job per node, minMember 1), so that reclaim and preempt have victims at once."""
        SchedulerMachine.start(self, nodes, cpu)
        for i in range(nodes):
            name = f"filler-{i}"
            self.world.pod_groups.append(PodGroup(name=name, namespace="ns", uid=f"pg-{name}", min_member=1,
                                                  queue="default", phase="Running"))
            for j in range(fill):
                share = cpu // fill
                self.world.pods.append(Pod(name=f"{name}-{j}", namespace="ns", uid=f"pod-{name}-{j}",
                                           annotations={GROUP_NAME_ANNOTATION: name}, priority=0,
                                           node_name=f"node-{i}", phase="Running",
                                           containers=[Container("main", _resources(share, share))]))
        self._changed()

    @precondition(lambda self: self.jobs < MAX_JOBS)
    @rule(size=st.integers(1, 4), cpu=st.integers(1, 4), gang=st.booleans(), priority=st.sampled_from([0, 10, 100]),
          queue=st.sampled_from(["default", "batch"]))
    def submit_job(self, size: int, cpu: int, gang: bool, priority: int, queue: str) -> None:
        """As the base rule, but the PodGroup arrives Inqueue: on a full cluster, overcommit's enqueue gate
        would hold every new job Pending, and pending jobs are never reclaimed or preempted for."""
        SchedulerMachine.submit_job(self, size, cpu, gang, priority, queue)
        self.world.pod_groups[-1].phase = "Inqueue"
        self._changed()

    @rule(sessions=st.integers(3, 6))
    def run_sessions(self, sessions: int) -> None:
        """Several sessions with the world left alone: what one session leaves the next."""
        for _ in range(sessions):
            self.run_session()
            self.no_violation()

    def _pipelined_pods(self) -> list[Pod]:
        """Pending pods carrying a decision: kept annotations (persistent) or a nominated node (upstream)."""
        return [p for p in self._pods("Pending") if not p.node_name
                and (read_pipelined(p) is not None or p.nominated_node_name)]

    @rule(index=st.integers(0, 50))
    def pipelined_pod_deleted(self, index: int) -> None:
        pods = self._pipelined_pods()
        if pods:
            self.world.pods.remove(pods[index % len(pods)])
            self._changed()

    @rule(index=st.integers(0, 50), node=st.integers(0, 10))
    def bound_by_another_scheduler(self, index: int, node: int) -> None:
        pending = [p for p in self._pods("Pending") if not p.node_name]
        if pending and self.scheduler is not None:
            target = self.world.nodes[node % len(self.world.nodes)].name
            self.scheduler.cache.cluster.bound_elsewhere[pending[index % len(pending)].key] = target
            self.touched = True

    @rule(index=st.integers(0, 50), value=st.sampled_from(["a", "b"]))
    def pod_patched(self, index: int, value: str) -> None:
        """Another client patches one label (a PATCH: the scheduler's annotations are left alone)."""
        if self.world.pods:
            pod = self.world.pods[index % len(self.world.pods)]
            pod.labels = {**pod.labels, "touched-by": value}
            self._changed()


def machine_for(seed: int, strict: bool = False, actions: str | None = None,
                only: list[str] | None = None, persistence: str | None = None) -> type[SchedulerMachine]:
    """A machine class for one gate seed (its name feeds Hypothesis's derandomised seed). With a
    `persistence` mode (upstream | persistent) it is a CrossSessionMachine running that mode."""
    attrs: dict[str, Any] = {"seed": seed, "strict": strict, "only": only, "last_failure": None, "sessions_total": 0,
                             "checks_total": 0, "first_found_at": None, "last_failing_run": None}
    if actions:
        attrs["conf_actions"] = actions
    if persistence is not None:
        # One name for both modes: Hypothesis then draws the same programs in each.
        attrs["persistence"] = persistence
        return type(f"CrossSessionMachine_{seed}", (CrossSessionMachine,), attrs)
    return type(f"SchedulerMachine_{seed}", (SchedulerMachine,), attrs)

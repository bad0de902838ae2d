"""What the cache and the world between sessions record: binds and evictions the sessions sent, the
binder's outcomes, and kept pipelined decisions the world released (persistent mode)."""

from __future__ import annotations

from dataclasses import dataclass, field


BINDING_CONDITIONS_WAIT = "waiting for binding conditions"


@dataclass
class BindRecord:
    """A bind the cache accepted (AddBindTask). `pre_bind` says why it has not reached the binder: "waiting"
    (PreBind waits for the PV controller to bind the pod's claims), BINDING_CONDITIONS_WAIT (PreBind waits for
    the devices' binding conditions) or "failed: <error>"; "" once it has."""

    cycle: int
    task: str  # ns/pod
    node: str
    pre_bind: str = ""


@dataclass
class EvictRecord:
    cycle: int
    task: str
    node: str
    reason: str


@dataclass
class ReleaseRecord:
    """A kept pipelined decision dropped by the world (persistent mode), not by a session."""

    cycle: int
    task: str
    node: str
    reason: str


@dataclass
class BindOutcome:
    cycle: int
    task: str
    node: str
    outcome: str  # bound | failed | already-bound (same node) | bound-elsewhere | conflict (upstream)


@dataclass
class GateRemovalRecord:
    """A removal of Volcano's queue-allocation gate the session asked for (SchGateManager.Enqueue); the
    world applies it between sessions. `queue` is the task's job's queue."""

    cycle: int
    task: str  # ns/pod
    queue: str


@dataclass
class CacheLog:
    binds: list[BindRecord] = field(default_factory=list)
    evictions: list[EvictRecord] = field(default_factory=list)
    releases: list[ReleaseRecord] = field(default_factory=list)
    bind_outcomes: list[BindOutcome] = field(default_factory=list)
    gate_removals: list[GateRemovalRecord] = field(default_factory=list)

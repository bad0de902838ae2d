"""The invariant catalog: each rule a small pure function, registered with its metadata.

An invariant declares where it runs (its checkpoints) and which plugins it
needs; the engine dispatches on those declarations, never on invariant ids.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from schedcheck.invariants.context import CheckContext
    from schedcheck.invariants.violation import Violation

# Checkpoints, in the order they happen within a session.
OPERATION = "operation"  # after every statement or session operation (allocate, pipeline, evict, undo, bind)
STATEMENT = "statement"  # after a statement commits or discards
ACTION = "action"  # after every action
CLOSE = "close"  # after the session closes (PodGroup status written, cache updated)
CHECKPOINTS = (OPERATION, STATEMENT, ACTION, CLOSE)

# The operations that move a task onto or off a node's ledger and fire the plugins' event handlers; a bind
# (dispatch: an allocated task handed to the binder) does neither, so rules of the node ledgers and of the
# plugins' accounting judge these alone at an operation (they judge every node and job at action ends).
LEDGER_OPS = frozenset({"allocate", "pipeline", "evict", "unallocate", "unpipeline", "unevict", "release"})
# The operations that place a task on a node: the placement rules judge these alone.
PLACING_OPS = frozenset({"allocate", "pipeline"})

SAFETY = "safety"  # must never fail, upstream included
QUALITY = "quality"  # upstream itself may fail it (e.g. minimal evictions): a finding, not a crash

CheckFn = Callable[["CheckContext"], Iterable["Violation"]]


@dataclass(frozen=True)
class Invariant:
    id: str
    statement: str  # the rule, one line
    cls: str  # node | job | gang | queue | statement | session | victim | eviction | order
    source: str  # seed section or upstream file
    at: tuple[str, ...]
    check: CheckFn = field(compare=False)
    # plugins that must be configured for the rule to apply; "plugin:flag" also needs that enable flag on
    # (upstream asks a plugin at an extension point only when its flag is set: an unset flag in a unit
    # test's tier is off, a conf file's is on)
    requires: tuple[str, ...] = ()
    severity: str = SAFETY
    # At an action end, a function of the session's state alone (not of the action or of what the engine
    # remembers): where no operation, statement end or PodGroup phase came since it last ran at an action end,
    # it would judge the same state again, so the engine skips it there (`InvariantEngine.skipped`). Its
    # operation and close checks always run.
    state_only: bool = False
    # At the operation checkpoint, the operations it judges (None: every one).
    operations: frozenset[str] | None = None
    # A condition on the session as it opens without which the rule has nothing to judge in that session (its
    # docstring says what): where it is false, the engine leaves the rule out of the session.
    applies_when: Callable[[Any], bool] | None = field(default=None, compare=False)

    @property
    def condition(self) -> str:
        """applies_when's docstring on one line ("" without one)."""
        return " ".join((self.applies_when.__doc__ or "").split()) if self.applies_when is not None else ""

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "class": self.cls, "statement": self.statement, "source": self.source,
                "checkpoints": list(self.at), "requires": list(self.requires), "severity": self.severity,
                **({"appliesWhen": self.condition} if self.applies_when is not None else {})}


_CATALOG: dict[str, Invariant] = {}


def invariant(id: str, statement: str, cls: str, source: str, at: tuple[str, ...],
              requires: tuple[str, ...] = (), severity: str = SAFETY,
              state_only: bool = False, operations: frozenset[str] | None = None,
              applies_when: Callable[[Any], bool] | None = None) -> Callable[[CheckFn], CheckFn]:
    """Register the decorated check function as an invariant."""
    for checkpoint in at:
        if checkpoint not in CHECKPOINTS:
            raise ValueError(f"invariant {id}: unknown checkpoint {checkpoint}")

    def register(fn: CheckFn) -> CheckFn:
        if id in _CATALOG:
            raise ValueError(f"invariant {id} registered twice")
        _CATALOG[id] = Invariant(id, statement, cls, source, at, fn, requires, severity, state_only, operations,
                                 applies_when)
        return fn

    return register


# What some rules must remember of the session as it opened (after the plugins opened): memory key ->
# (a function of the session, the invariant ids that read it). The engine runs a collector only when one
# of its readers is active.
OpenCollector = Callable[[Any], Any]
_OPEN_COLLECTORS: dict[str, tuple[OpenCollector, tuple[str, ...]]] = {}


def collect_at_open(key: str, readers: tuple[str, ...]) -> Callable[[OpenCollector], OpenCollector]:
    def register(fn: OpenCollector) -> OpenCollector:
        _OPEN_COLLECTORS[key] = (fn, readers)
        return fn
    return register


def open_collectors() -> dict[str, tuple[OpenCollector, tuple[str, ...]]]:
    return dict(_OPEN_COLLECTORS)

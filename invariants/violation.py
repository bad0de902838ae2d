"""A broken invariant, as a structured record a scheduler developer can act on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Violation:
    invariant: str
    message: str  # what went wrong, in scheduler terms
    objects: list[str] = field(default_factory=list)  # e.g. ["node n1", "task ns/p1"]
    expected: Any = None
    found: Any = None
    # Where it happened; filled in by the engine.
    cycle: int = -1
    action: str = ""
    checkpoint: str = ""
    operation: str = ""  # e.g. "pipeline ns/p1 -> n2 (statement 7)"
    state: dict[str, Any] = field(default_factory=dict)  # excerpt of the objects at the time
    known: str = ""  # the known upstream finding it matches (invariants/known.py), if any

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.invariant, "cycle": self.cycle, "action": self.action, "checkpoint": self.checkpoint,
            "operation": self.operation, "objects": self.objects, "expected": plain(self.expected),
            "found": plain(self.found), "message": self.message, "state": plain(self.state),
            **({"known": self.known} if self.known else {}),
        }

    def one_line(self) -> str:
        where = f"cycle {self.cycle}" + (f", {self.action}" if self.action else "") + f", {self.checkpoint}"
        if self.operation:
            where += f" after {self.operation}"
        known = f" [known upstream finding {self.known}]" if self.known else ""
        return f"{self.invariant} ({where}): {self.message}{known}"


def plain(value: Any) -> Any:
    """JSON-friendly numbers and containers: whole floats as ints, anything else as its string."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)

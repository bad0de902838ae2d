"""A non-conformance: what an implementation did wrong on one scenario."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Finding kinds, by family. Faults: the implementation did not answer properly. Checks: its own
# decisions break a rule judged from outside. Divergence: no legal tie-break of the reference
# explains its decisions.
FAULTS = ("fault.crash", "fault.exit", "fault.timeout", "fault.no-output", "fault.partial", "fault.oversized",
          "fault.not-json", "fault.not-object", "fault.schema", "fault.unknown-object", "fault.wrong-scenario")


@dataclass
class Finding:
    kind: str  # e.g. fault.timeout, check.node.placement-fits, ledger.identity, trace.inconsistent, divergence
    message: str
    cycle: int | None = None
    objects: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def family(self) -> str:
        return self.kind.split(".", 1)[0]

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "cycle": self.cycle, "objects": self.objects,
                "details": self.details}

    def line(self) -> str:
        where = f" (cycle {self.cycle})" if self.cycle is not None else ""
        return f"{self.kind}{where}: {self.message}"

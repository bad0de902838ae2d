"""The one error type for unreadable scenario input."""

from __future__ import annotations

import re


class ScenarioError(Exception):
    """Bad input, located by file, object and field.

    `obj` names the object at fault (`Pod default/p1`, `schedulerConf`,
    `Scenario`), `field` the dotted path inside it
    (`spec.containers[0].resources.requests.cpu`). Either may be empty when
    the fault is not inside an object (a YAML syntax error, say).
    """

    def __init__(self, file: str, obj: str, field: str, reason: str) -> None:
        self.file = file
        self.obj = obj
        self.field = field
        self.reason = reason
        super().__init__(str(self))

    def __str__(self) -> str:
        parts = [p for p in (self.file, self.obj, self.field, self.reason) if p]
        return re.sub(r"\s*[\r\n]+\s*", " ", ": ".join(parts)).strip()


def describe(value: object) -> str:
    """How a bad value reads in a reason: `"yes"`, `1.5`, `a list`, `null`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:37] + "..."
        return '"' + text.replace("\n", "\\n") + '"'
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    return f"a {type(value).__name__}"

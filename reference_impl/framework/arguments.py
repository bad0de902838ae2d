"""Typed access to plugin and action arguments (pkg/scheduler/framework/arguments.go)."""

from __future__ import annotations

from typing import Any


class Arguments(dict):
    """A plugin's `arguments` map with upstream's lenient getters."""

    def get_int(self, key: str, default: int) -> int:
        value = self.get(key)
        # Only YAML ints count; anything else is ignored (upstream logs a warning).
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        return default

    def get_float(self, key: str, default: float) -> float:
        value = self.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        return default

    def get_bool(self, key: str, default: bool) -> bool:
        value = self.get(key)
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            from schedcheck.reference.api.task_info import parse_go_bool

            parsed = parse_go_bool(value)
            return default if parsed is None else parsed
        return default

    def get_str(self, key: str, default: str) -> str:
        value = self.get(key)
        return value if isinstance(value, str) else default


def as_arguments(values: dict[str, Any] | None) -> Arguments:
    return Arguments(values or {})

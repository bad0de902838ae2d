"""Typed reads of scenario fields: each failure names the file, the object and the field."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any, NoReturn

from schedcheck.reference import k8s
from schedcheck.reference.quantity import Quantity
from schedcheck.scenario.errors import ScenarioError, describe

_INT32 = (-(2**31), 2**31 - 1)


INT64_MAX = 2**63 - 1


class Fields:
    """Typed reads from one object; a failure names the file, the object and the field."""

    def __init__(self, file: str, obj: str) -> None:
        self.file = file
        self.obj = obj

    def fail(self, field: str, reason: str) -> NoReturn:
        raise ScenarioError(self.file, self.obj, field, reason)

    def mapping(self, value: Any, field: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.fail(field, f"expected a mapping, got {describe(value)}")
        for key in value:
            if not isinstance(key, str):
                self.fail(field, f"expected string keys, got {describe(key)}")
        return dict(value)

    def sequence(self, value: Any, field: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(field, f"expected a list, got {describe(value)}")
        return value

    def string(self, value: Any, field: str, default: str = "", required: bool = False) -> str:
        if value is None or value == "":
            if required:
                self.fail(field, "missing")
            return default
        if not isinstance(value, str):
            hint = " (quote it)" if isinstance(value, (bool, int, float)) else ""
            self.fail(field, f"expected a string, got {describe(value)}{hint}")
        return value

    def choice(self, value: Any, field: str, choices: set[str], default: str = "") -> str:
        text = self.string(value, field, default, required=not default and "" not in choices)
        if text not in choices and text != default:
            self.fail(field, f"expected one of {', '.join(sorted(choices))}, got {describe(text)}")
        return text

    def integer(
        self,
        value: Any,
        field: str,
        default: int | None = None,
        minimum: int | None = None,
        bits: int | None = 32,
    ) -> Any:
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(field, f"expected an integer, got {describe(value)}")
        if minimum is not None and value < minimum:
            self.fail(field, f"must be at least {minimum}, got {value}")
        if bits == 32 and not _INT32[0] <= value <= _INT32[1]:
            self.fail(field, f"out of the int32 range, got {value}")
        return value

    def boolean(self, value: Any, field: str, default: bool | None = None) -> Any:
        if value is None:
            return default
        if not isinstance(value, bool):
            self.fail(field, f"expected true or false, got {describe(value)}")
        return value

    def str_map(self, value: Any, field: str) -> dict[str, str]:
        result = self.mapping(value, field)
        for key, item in result.items():
            if not isinstance(item, str):
                self.fail(f"{field}.{key}", f"expected a string, got {describe(item)} (quote it)")
        return result

    def resources(self, value: Any, field: str) -> k8s.ResourceList:
        result: k8s.ResourceList = {}
        for name, raw in self.mapping(value, field).items():
            try:
                quantity = Quantity.parse(raw)
            except ValueError as err:
                self.fail(f"{field}.{name}", str(err))
            if quantity.is_negative():
                self.fail(f"{field}.{name}", f"must not be negative, got {raw}")
            counted = quantity.value() if name in ("memory", "pods") else quantity.milli_value()
            if counted > INT64_MAX:  # the scheduler counts in int64 (bytes, pods, or thousandths)
                unit = "" if name in ("memory", "pods") else "m"
                self.fail(f"{field}.{name}", f"{raw} is out of range: the scheduler counts at most {INT64_MAX}{unit}")
            result[name] = quantity
        return result

    def timestamp(self, value: Any, field: str) -> str | None:
        if value is None or value == "":
            return None
        if isinstance(value, datetime) and value.tzinfo is not None:
            return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
        if isinstance(value, str):
            try:
                if datetime.fromisoformat(value).tzinfo is not None:
                    return value
            except ValueError:
                pass
        if isinstance(value, (str, date)):
            self.fail(field, f"expected an RFC 3339 time such as 2024-01-01T00:00:00Z, got {describe(str(value))}")
        self.fail(field, f"expected an RFC 3339 time, got {describe(value)}")

"""What a value answers itself when a singleton's trait does not fit (cel-go's Receiver values): a string's
contains/startsWith/endsWith, a timestamp's and a duration's getters."""

from __future__ import annotations

from typing import Any, Callable

from schedcheck.reference.util.cel.values import Err

RECEIVERS: dict[tuple[str, str, int], Callable[..., Any]] = {}


def _string(fn: Callable[[str, str], bool]) -> Callable[[str, Any], Any]:
    return lambda s, other: fn(s, other) if isinstance(other, str) else (other if isinstance(other, Err)
                                                                         else Err("no such overload"))


RECEIVERS[("string", "contains", 1)] = _string(lambda s, sub: sub in s)
RECEIVERS[("string", "startsWith", 1)] = _string(lambda s, p: s.startswith(p))
RECEIVERS[("string", "endsWith", 1)] = _string(lambda s, p: s.endswith(p))

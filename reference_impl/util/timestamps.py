"""Kubernetes timestamps (RFC 3339) as sortable numbers."""

from __future__ import annotations

from datetime import datetime, timezone
from functools import lru_cache

ZERO_TIME = -62135596800.0
"""Go's zero time (0001-01-01T00:00:00Z): what an absent creationTimestamp reads as."""


@lru_cache(maxsize=4096)
def parse_timestamp(text: str) -> float:
    if not text:
        return ZERO_TIME
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.timestamp()


def format_timestamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

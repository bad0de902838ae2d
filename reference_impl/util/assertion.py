"""Upstream's assert package (pkg/scheduler/util/assert).

Upstream panics on a failed assertion unless PANIC_ON_ERROR=false, in which
case it logs and carries on. The reference raises `AssertionViolation` by
default, so a harness sees the broken precondition; with
`set_panic_on_error(False)` it records the message and carries on, as
upstream does in that mode.
"""

from __future__ import annotations


class AssertionViolation(AssertionError):
    """An upstream assertion (e.g. the asserting Resource.Sub) failed."""


_panic_on_error = True
_recorded: list[str] = []


def set_panic_on_error(value: bool) -> None:
    global _panic_on_error
    _panic_on_error = value


def recorded_assertions() -> list[str]:
    """Messages of the assertions that failed while panic-on-error was off."""
    return _recorded


def assertf(condition: bool, message: str) -> None:
    if condition:
        return
    if _panic_on_error:
        raise AssertionViolation(message)
    _recorded.append(message)

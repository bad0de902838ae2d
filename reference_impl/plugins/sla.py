"""sla: let jobs that waited long enough through (pkg/scheduler/plugins/sla/sla.go; semantics §9.11).

Waiting time of a job (JobInfo.WaitingTime, set in SetPodGroup): the PodGroup annotation
`volcano.sh/sla-waiting-time`, else the legacy annotation `sla-waiting-time`; an annotation that
does not parse, or is not positive, counts as absent. Without either, the plugin argument
`sla-waiting-time` applies (it must be a string; a non-string, unparsable or non-positive value
leaves no global waiting time). All of them are Go duration strings ("1h30m", "300s", "1.5h"),
parsed exactly as Go's time.ParseDuration (see parse_go_duration).

- JobOrder: a job with a waiting time goes before one without; between two with, the earlier
  `creationTimestamp + waitingTime` goes first; otherwise 0.
- JobEnqueueable and JobPipelined: Abstain without a waiting time or while
  `now − creationTimestamp < waitingTime`; Permit once it has elapsed. Placed in an earlier tier,
  the Permit overrides later tiers' Rejects; within one tier a Reject still wins.

`now` is the session clock (ssn.now) where upstream calls time.Since.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import ABSTAIN, PERMIT, Session

PLUGIN_NAME = "sla"
JOB_WAITING_TIME = "sla-waiting-time"  # the plugin argument and the legacy annotation
JOB_WAITING_TIME_ANNOTATION = "volcano.sh/sla-waiting-time"

SECOND = 1_000_000_000
MIN_INT64 = -(2**63)
MAX_INT64 = 2**63 - 1
_UNITS: dict[bytes, int] = {
    b"ns": 1,
    b"us": 1_000,
    "µs".encode(): 1_000,  # U+00B5 micro sign
    "μs".encode(): 1_000,  # U+03BC Greek mu
    b"ms": 1_000_000,
    b"s": SECOND,
    b"m": 60 * SECOND,
    b"h": 3600 * SECOND,
}
_DIGITS = b"0123456789"


class DurationError(ValueError):
    """The text is not a Go duration."""


def parse_go_duration(text: str) -> int:
    """time.ParseDuration: a signed sequence of decimal numbers with units, in nanoseconds.

    Works on the UTF-8 bytes, as Go does. Overflow beyond int64 is an error; a fraction is
    scaled through float64, as Go does, so "1.1h" loses nothing but very long fractions may.
    """
    s = text.encode()
    negative = False
    if s[:1] in (b"-", b"+"):
        negative = s[:1] == b"-"
        s = s[1:]
    if s == b"0":
        return 0
    if not s:
        raise DurationError(f"time: invalid duration {text!r}")
    total = 0
    while s:
        value, s = _parse_component(s, text)
        total = (total + value) % 2**64  # uint64 arithmetic
        if total > 1 << 63:
            raise DurationError(f"time: invalid duration {text!r}")
    if negative:
        return -total
    if total > MAX_INT64:
        raise DurationError(f"time: invalid duration {text!r}")
    return total


def _parse_component(s: bytes, text: str) -> tuple[int, bytes]:
    """One `[0-9]*(.[0-9]*)?unit`: its value in nanoseconds and the rest of the text."""
    if not (s[:1] == b"." or s[:1].isdigit()):
        raise DurationError(f"time: invalid duration {text!r}")
    length = len(s)
    whole, s = _leading_int(s, text)
    had_whole = len(s) != length
    fraction, scale, had_fraction = 0, 1.0, False
    if s[:1] == b".":
        s = s[1:]
        length = len(s)
        fraction, scale, s = _leading_fraction(s)
        had_fraction = len(s) != length
    if not had_whole and not had_fraction:
        raise DurationError(f"time: invalid duration {text!r}")
    end = 0
    while end < len(s) and s[end:end + 1] != b"." and s[end] not in _DIGITS:
        end += 1
    if end == 0:
        raise DurationError(f"time: missing unit in duration {text!r}")
    unit = _UNITS.get(s[:end])
    if unit is None:
        raise DurationError(f"time: unknown unit {s[:end]!r} in duration {text!r}")
    if whole > (1 << 63) // unit:
        raise DurationError(f"time: invalid duration {text!r}")
    value = whole * unit
    if fraction > 0:
        value += int(float(fraction) * (float(unit) / scale))
        if value > 1 << 63:
            raise DurationError(f"time: invalid duration {text!r}")
    return value, s[end:]


def _leading_int(s: bytes, text: str) -> tuple[int, bytes]:
    x, i = 0, 0
    while i < len(s) and s[i] in _DIGITS:
        if x > (1 << 63) // 10:
            raise DurationError(f"time: invalid duration {text!r}")
        x = x * 10 + (s[i] - 48)
        if x > 1 << 63:
            raise DurationError(f"time: invalid duration {text!r}")
        i += 1
    return x, s[i:]


def _leading_fraction(s: bytes) -> tuple[int, float, bytes]:
    """Digits after the point; past uint64 precision the digits are consumed but ignored."""
    x, scale, i, overflow = 0, 1.0, 0, False
    while i < len(s) and s[i] in _DIGITS:
        if not overflow:
            candidate = x * 10 + (s[i] - 48)
            if x > ((1 << 63) - 1) // 10 or candidate > 1 << 63:
                overflow = True
            else:
                x, scale = candidate, scale * 10
        i += 1
    return x, scale, s[i:]


def seconds_to_ns(seconds: float) -> int:
    """A session-clock or creation timestamp (float seconds) as integer nanoseconds."""
    return round(Fraction(seconds) * SECOND)


def positive_duration(text: Any) -> int | None:
    """A Go duration string that parses to a positive value, else None."""
    if not isinstance(text, str):
        return None
    try:
        value = parse_go_duration(text)
    except DurationError:
        return None
    return value if value > 0 else None


def job_waiting_time(job: JobInfo) -> int | None:
    """JobInfo.WaitingTime from the PodGroup annotations (nanoseconds), or None."""
    if job.pod_group is None:
        return None
    annotations = job.pod_group.annotations
    for key in (JOB_WAITING_TIME_ANNOTATION, JOB_WAITING_TIME):
        if key in annotations:
            value = positive_duration(annotations[key])
            if value is not None:
                return value
    return None


def global_waiting_time(arguments: dict[str, Any]) -> int | None:
    if JOB_WAITING_TIME not in arguments:
        return None
    return positive_duration(arguments[JOB_WAITING_TIME])  # a non-string reads as "" upstream: invalid


def go_since(now_ns: int, then_ns: int) -> int:
    """time.Since as a Duration: saturates at the int64 bounds."""
    return max(MIN_INT64, min(MAX_INT64, now_ns - then_ns))


class SlaPlugin(Plugin):
    name = PLUGIN_NAME

    def on_session_open(self, ssn: Session) -> None:
        self.ssn = ssn
        self.global_waiting_time = global_waiting_time(self.arguments)
        ssn.add_fn("job_order", self.name, self.job_order)
        ssn.add_fn("job_enqueueable", self.name, self.permitable)
        ssn.add_fn("job_pipelined", self.name, self.permitable)

    def waiting_time(self, job: JobInfo) -> int | None:
        own = job_waiting_time(job)
        return own if own is not None else self.global_waiting_time

    def job_order(self, left: JobInfo, right: JobInfo) -> int:
        left_wait, right_wait = self.waiting_time(left), self.waiting_time(right)
        if left_wait is None:
            return 0 if right_wait is None else 1
        if right_wait is None:
            return -1
        left_due = seconds_to_ns(left.creation_timestamp) + left_wait
        right_due = seconds_to_ns(right.creation_timestamp) + right_wait
        if left_due < right_due:
            return -1
        return 1 if left_due > right_due else 0

    def permitable(self, job: JobInfo) -> int:
        wait = self.waiting_time(job)
        if wait is None:
            return ABSTAIN
        waited = go_since(seconds_to_ns(self.ssn.now), seconds_to_ns(job.creation_timestamp))
        return ABSTAIN if waited < wait else PERMIT


register_plugin_builder(PLUGIN_NAME, SlaPlugin)

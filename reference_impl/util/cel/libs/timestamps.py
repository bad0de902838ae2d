"""CEL's timestamps and durations as cel-go holds them (a Go time.Time and time.Duration): parsing (RFC 3339 and
Go's duration syntax), printing, arithmetic with int64 overflow checks, the range 0001-01-01 to 9999-12-31, and
the getters, in UTC unless a time zone is given (Kubernetes' environment sets DefaultUTCTimeZone).
"""

from __future__ import annotations

import datetime
import re
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from schedcheck.reference.util.cel.registry import overload
from schedcheck.reference.util.cel.values import (INT_MAX, INT_MIN, Duration, Err, Timestamp, no_such_overload)

MIN_UNIX, MAX_UNIX = -62135596800, 253402300799
NANOS = 10**9
OVERFLOW = Err("integer overflow")
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def _int64(value: int) -> bool:
    return INT_MIN <= value <= INT_MAX


def duration_or_overflow(nanos: int) -> Any:
    return Duration(nanos) if _int64(nanos) else OVERFLOW


def go_div(a: int, b: int) -> int:
    """Go's integer division (truncated toward zero)."""
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b > 0) else -quotient


def add_duration_to(ts: Timestamp, nanos: int) -> Any:
    """addTimeDurationChecked: seconds and nanoseconds apart, int64 checks, then the timestamp range."""
    whole = go_div(nanos, NANOS)
    sec = ts.seconds + whole
    if not _int64(sec):
        return OVERFLOW
    total = ts.nanos + nanos - whole * NANOS
    sec += total // NANOS
    total %= NANOS
    if not MIN_UNIX <= sec <= MAX_UNIX:
        return Err("timestamp overflow")
    return Timestamp(sec, total, ts.offset)


def add(a: Any, b: Any) -> Any:
    if isinstance(a, Duration):
        if isinstance(b, Duration):
            return duration_or_overflow(a.nanos + b.nanos)
        if isinstance(b, Timestamp):
            return add_duration_to(b, a.nanos)
        return no_such_overload(b)
    if isinstance(b, Duration):
        return add_duration_to(a, b.nanos)
    return no_such_overload(b)


def subtract(a: Any, b: Any) -> Any:
    if isinstance(a, Duration):
        if not isinstance(b, Duration):
            return no_such_overload(b)
        return duration_or_overflow(a.nanos - b.nanos)
    if isinstance(b, Duration):
        if not _int64(-b.nanos):
            return OVERFLOW
        return add_duration_to(a, -b.nanos)
    if isinstance(b, Timestamp):
        seconds = a.seconds - b.seconds
        if not _int64(seconds) or not _int64(seconds * NANOS):
            return OVERFLOW
        return duration_or_overflow(seconds * NANOS + a.nanos - b.nanos)
    return no_such_overload(b)


# -- text ---------------------------------------------------------------------------------------------------------
def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


_FAST = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})")
# Go's general parser, which time.Parse falls back to: one- or two-digit hour, ',' or '.' before the fraction,
# a zone offset of up to 24:60.
_GENERAL = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d+))?(Z|[+-]\d{2}:\d{2})")


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (year 0 included)."""
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _fields(match: re.Match, hour_max: int, zone_hour_max: int, zone_minute_max: int) -> Timestamp | None:
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    if not (1 <= month <= 12 and 1 <= day <= _days_in(month, year) and hour <= hour_max and minute <= 59
            and second <= 59):
        return None
    fraction = match.group(7) or ""
    nanos = int((fraction + "000000000")[:9]) if fraction else 0
    offset = 0
    zone = match.group(8)
    if zone != "Z":
        zh, zm = int(zone[1:3]), int(zone[4:6])
        if zh > zone_hour_max or zm > zone_minute_max:
            return None
        offset = (zh * 60 + zm) * 60 * (-1 if zone[0] == "-" else 1)
    seconds = days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset
    return Timestamp(seconds, nanos, offset)


def parse_timestamp(text: str) -> Timestamp | None:
    """time.Parse(time.RFC3339, text): the strict RFC 3339 form, else Go's general layout parser."""
    match = _FAST.fullmatch(text)
    found = _fields(match, 23, 23, 59) if match is not None else None
    if found is None:
        match = _GENERAL.fullmatch(text)
        found = _fields(match, 23, 24, 60) if match is not None else None
    return found


def _civil(ts: Timestamp, offset: int) -> datetime.datetime:
    return datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=ts.seconds + offset)


def _civil_fields(seconds: int) -> tuple[int, int, int, int, int, int]:
    """(year, month, day, hour, minute, second) of Unix seconds, proleptic Gregorian, any year."""
    days, rest = divmod(seconds, 86400)
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (month <= 2)
    return year, month, day, rest // 3600, rest // 60 % 60, rest % 60


def format_timestamp(ts: Timestamp) -> str:
    """Format(time.RFC3339Nano) in the timestamp's own zone."""
    year, month, day, hour, minute, second = _civil_fields(ts.seconds + ts.offset)
    text = f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}"
    if ts.nanos:
        text += "." + f"{ts.nanos:09d}".rstrip("0")
    if ts.offset == 0:
        return text + "Z"
    sign = "-" if ts.offset < 0 else "+"
    minutes = abs(ts.offset) // 60
    return text + f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


_UNITS = {"ns": 1, "us": 1000, "µs": 1000, "μs": 1000, "ms": 10**6, "s": NANOS, "m": 60 * NANOS, "h": 3600 * NANOS}
_DURATION_PART = re.compile(r"([0-9]*)(?:(\.)([0-9]*))?([^0-9.]*)")
_LIMIT = 1 << 63


def _fraction(digits: str) -> tuple[int, float]:
    """leadingFraction: the digits as an integer and their scale, accumulation stopping before overflow."""
    value, scale, overflow = 0, 1.0, False
    for ch in digits:
        if overflow:
            continue
        if value > (_LIMIT - 1) // 10:
            overflow = True
            continue
        candidate = value * 10 + int(ch)
        if candidate > _LIMIT:
            overflow = True
            continue
        value, scale = candidate, scale * 10
    return value, scale


def parse_duration(text: str) -> int | None:
    """time.ParseDuration: nanoseconds, None where Go refuses (no digits, a missing or unknown unit, overflow)."""
    rest, negative = text, False
    if rest[:1] in ("-", "+"):
        negative, rest = rest[0] == "-", rest[1:]
    if rest == "0":
        return 0
    if rest == "":
        return None
    total = 0
    while rest:
        if not (rest[0] == "." or rest[0].isdigit() and rest[0].isascii()):
            return None
        match = _DURATION_PART.match(rest)
        whole, dot, frac, unit = match.group(1), match.group(2), match.group(3), match.group(4)  # type: ignore
        if whole == "" and not frac or unit == "" or unit not in _UNITS:
            return None
        value = int(whole or "0")
        if value >= _LIMIT or value > _LIMIT // _UNITS[unit]:
            return None
        value *= _UNITS[unit]
        if dot and frac:
            f, scale = _fraction(frac)
            if f > 0:
                value += int(float(f) * (float(_UNITS[unit]) / scale))
                if value > _LIMIT:
                    return None
        total += value
        if total > _LIMIT:
            return None
        rest = rest[match.end():]  # type: ignore[union-attr]
    if negative:
        return -total
    return total if total <= INT_MAX else None


def format_duration(nanos: int) -> str:
    """strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"."""
    seconds = go_div(nanos, NANOS)
    value = float(seconds) + float(nanos - seconds * NANOS) / 1e9
    digits = format(Decimal(repr(value)), "f")
    if "." in digits:
        digits = digits.rstrip("0").rstrip(".")
    return (digits if digits != "-0" else "0") + "s"


# -- conversions -------------------------------------------------------------------------------------------------
@overload("string_to_timestamp")
def string_to_timestamp(text: str) -> Any:
    ts = parse_timestamp(text)
    if ts is None:
        return Err("type conversion error from 'string' to 'google.protobuf.Timestamp'")
    if not MIN_UNIX <= ts.seconds <= MAX_UNIX:
        return Err("timestamp overflow")
    return ts


@overload("int64_to_timestamp")
def int_to_timestamp(seconds: int) -> Any:
    if not MIN_UNIX <= seconds <= MAX_UNIX:
        return Err("timestamp overflow")
    return Timestamp(seconds)


@overload("string_to_duration")
def string_to_duration(text: str) -> Any:
    nanos = parse_duration(text)
    if nanos is None:
        return Err("type conversion error from 'string' to 'google.protobuf.Duration'")
    return Duration(nanos)


overload("int64_to_duration")(lambda _v: Err("type conversion error from 'int' to 'google.protobuf.Duration'"))
overload("timestamp_to_string")(format_timestamp)
overload("duration_to_string")(lambda d: format_duration(d.nanos))
overload("timestamp_to_int64")(lambda ts: ts.seconds)
overload("duration_to_int64")(lambda d: d.nanos)


# -- getters -----------------------------------------------------------------------------------------------------
def _go_atoi(text: str) -> int | Err:
    if re.fullmatch(r"[+-]?[0-9]+", text) is None:
        return Err(f'strconv.Atoi: parsing "{text}": invalid syntax')
    return int(text)


def in_zone(ts: Timestamp, zone: str) -> datetime.datetime | Err:
    """inTimeZone: an IANA name (time.LoadLocation), or a [+-]hh:mm offset."""
    if ":" not in zone:
        if zone in ("", "UTC"):
            return _civil(ts, 0)
        if zone == "Local":
            return _civil(ts, 0)
        try:
            info = ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            return Err(f"unknown time zone {zone}")
        instant = _EPOCH + datetime.timedelta(seconds=ts.seconds)
        return instant.astimezone(info).replace(tzinfo=None)
    hours_text, _, minutes_text = zone.partition(":")
    hours, minutes = _go_atoi(hours_text), _go_atoi(minutes_text)
    if isinstance(hours, Err):
        return hours
    if isinstance(minutes, Err):
        return minutes
    offset = hours * 60 - minutes if zone.startswith("-") else hours * 60 + minutes
    return _civil(ts, offset * 60)


_GETTERS = {
    "getFullYear": lambda t, n: t.year, "getMonth": lambda t, n: t.month - 1,
    "getDayOfYear": lambda t, n: t.timetuple().tm_yday - 1, "getDayOfMonth": lambda t, n: t.day - 1,
    "getDate": lambda t, n: t.day, "getDayOfWeek": lambda t, n: (t.weekday() + 1) % 7,
    "getHours": lambda t, n: t.hour, "getMinutes": lambda t, n: t.minute, "getSeconds": lambda t, n: t.second,
    "getMilliseconds": lambda t, n: n // 10**6,
}
_IDS = {"getFullYear": "timestamp_to_year", "getMonth": "timestamp_to_month",
        "getDayOfYear": "timestamp_to_day_of_year", "getDayOfMonth": "timestamp_to_day_of_month",
        "getDate": "timestamp_to_day_of_month_1_based", "getDayOfWeek": "timestamp_to_day_of_week",
        "getHours": "timestamp_to_hours", "getMinutes": "timestamp_to_minutes",
        "getSeconds": "timestamp_to_seconds", "getMilliseconds": "timestamp_to_milliseconds"}


def timestamp_getter(name: str) -> Any:
    def get(ts: Any, zone: Any = "UTC") -> Any:
        civil = in_zone(ts, zone)
        return civil if isinstance(civil, Err) else _GETTERS[name](civil, ts.nanos)
    return get


for _name, _id in _IDS.items():
    overload(_id)(timestamp_getter(_name))
    overload(_id + ("_tz" if _name == "getSeconds" else "_with_tz"))(timestamp_getter(_name))


def _duration_part(unit: int) -> Any:
    def get(d: Any) -> Any:
        whole = go_div(d.nanos, unit)
        rest = d.nanos - whole * unit
        return int(float(whole) + float(rest) / unit)  # Go: float64(whole) + float64(rest)/unit, truncated
    return get


overload("duration_to_hours")(_duration_part(3600 * NANOS))
overload("duration_to_minutes")(_duration_part(60 * NANOS))
overload("duration_to_seconds")(_duration_part(NANOS))
overload("duration_to_milliseconds")(lambda d: go_div(d.nanos, 10**6))

"""What the cdp plugin reads: a pod's `volcano.sh/cooldown-time` (a Go duration, looked up among its labels
first, then its annotations) and the lastTransitionTime of its PodScheduled condition, against the
scenario clock (`now`).

Drawn only when the conf has cdp (scenarios.py), per job, as the cdp guide sets it on a whole job (the
job controller copies it to every pod, as an annotation) or on one task's template (a label or an
annotation). Every pod on a node gets the PodScheduled condition the API server writes at binding, so
some running pods are still cooling down at `now` and some are not. A scheduling time is never within
MARGIN seconds of the end of its pod's cooldown, so the verdict does not depend on how far the clock
moves between sessions (one second each) or how long a session takes (the Go adapter moves the times
onto the wall clock). Shrinks to no cooldown at all.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from hypothesis import strategies as st

from schedcheck.generators.vocabulary import COOLDOWN_TIME, GROUP_NAME, seconds_of, timestamp
from schedcheck.generators.quantities import choice, rarely, sometimes

MARGIN = 60  # seconds between a pod's end of cooldown and `now`, at the least
# Durations users write (the guide's 600s first); "87600h" protects against any clock.
COOLDOWNS: dict[str, int] = {"600s": 600, "10m": 600, "30m": 1800, "1h": 3600, "2h": 7200, "3h": 10800,
                             "90s": 90, "87600h": 87600 * 3600}
# Rare values the plugin still reads: zero protects nothing; one that does not parse switches it off.
ODD_COOLDOWNS: dict[str, int | None] = {"0s": 0, "ten-minutes": None}
# Where the duration goes: the job's annotation (copied to every pod), a task template's label, or both
# (the label is read first, even when it does not parse).
PLACES = ("annotations", "labels", "both")
# When a pod was bound after its creation: at once, or after it waited (or was rescheduled), up to shortly
# before `now` (scheduled_at), so that pods run for seconds to hours.
_DELAYS = st.sampled_from((0, 0, 600, 1800, 3600, 6000, 9000))


@st.composite
def cooldown_values(draw: st.DrawFn) -> str:
    """A duration: a round one mostly, rarely zero or one that does not parse."""
    if draw(rarely(8)):
        return draw(choice(tuple(ODD_COOLDOWNS)))
    return draw(choice(tuple(COOLDOWNS)))


def cooldown_seconds(text: str) -> int | None:
    return COOLDOWNS[text] if text in COOLDOWNS else ODD_COOLDOWNS.get(text)


@st.composite
def job_cooldowns(draw: st.DrawFn) -> dict[str, str]:
    """{"labels" | "annotations": duration} for one job's pods; {} (the shrink target) for none."""
    if not draw(sometimes(60)):
        return {}
    place = draw(choice(PLACES))
    if place == "both":
        return {"labels": draw(cooldown_values()), "annotations": draw(cooldown_values())}
    return {place: draw(cooldown_values())}


def effective_cooldown(cooldown: dict[str, str]) -> int | None:
    """The seconds the plugin reads (label first), None when it reads none."""
    text = cooldown.get("labels", cooldown.get("annotations"))
    return None if text is None else cooldown_seconds(text)


def scheduled_at(created: int, delay: int, now: int, cooldown: int | None) -> int:
    """When a pod created at `created` was bound: `delay` later, at least 2 * MARGIN before now, and never
    within MARGIN of the end of its cooldown."""
    at = max(created, min(created + delay, now - 2 * MARGIN))
    if cooldown is not None and abs(now - at - cooldown) < MARGIN:
        at = at - 2 * MARGIN if at - 2 * MARGIN >= created else at + 2 * MARGIN
    return at


def _pods_by_job(docs: list[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    out: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for doc in docs:
        meta = doc["metadata"]
        if doc["kind"] == "Pod" and GROUP_NAME in meta.get("annotations", {}):
            out[(meta.get("namespace", "default"), meta["annotations"][GROUP_NAME])].append(doc)
    return out


def apply_cooldowns(draw: st.DrawFn, docs: list[dict[str, Any]], now: int) -> None:
    """Give some jobs' pods a cooldown, and every pod on a node its PodScheduled condition (in place)."""
    for pods in _pods_by_job(docs).values():
        cooldown = draw(job_cooldowns())
        for pod in pods:
            for place, text in cooldown.items():
                pod["metadata"].setdefault(place, {})[COOLDOWN_TIME] = text
            if pod["spec"].get("nodeName"):
                _mark_scheduled(pod, draw(_DELAYS), now, effective_cooldown(cooldown))


def _mark_scheduled(pod: dict[str, Any], delay: int, now: int, cooldown: int | None) -> None:
    created = seconds_of(pod["metadata"]["creationTimestamp"])
    if created > now - 2 * MARGIN:
        return  # created at about `now` (a clock the usage metrics chose): no scheduling time to give it
    at = scheduled_at(created, delay, now, cooldown)
    status = pod["status"]
    status.setdefault("conditions", []).append(
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": timestamp(at)})
    if "startTime" in status and seconds_of(status["startTime"]) <= at:
        status["startTime"] = timestamp(at + 1)  # the kubelet starts a pod after it is bound

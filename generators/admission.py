"""Admission pressure: pending jobs whose minResources are sized against what admission has left.

Overcommit admits a job while what is already inqueue plus its minResources fits the overcommitted idle
(Σ allocatable · factor − Σ used; seed 003, semantics §8.1, §9.9). Its inqueue accounting only matters
when two pending jobs each fit alone and not together; with minResources summed from the pods' requests,
as the job controller writes them, that is rare in a small cluster. This pass (swarm `min_resources`)
turns some jobs that have no pod placed back to Pending and sizes their minResources as fractions of
that room (overcommit's, or the plain one proportion and capacity measure against); where its pods
request less than that together, the first one (a driver or leader) asks for the rest, since a PodGroup's
minimum is some of its pods' requests. The fractions pair up: 0.35 + 0.55 fits, 0.55 + 0.55 does
not, so one admission holds the next back.

Shrinks towards leaving every job as it was drawn.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

from schedcheck.generators.ledger import pod_request
from schedcheck.generators.quantities import CPU, MEMORY, amounts, choice, format_quantity, sometimes
from schedcheck.generators.vocabulary import GROUP_NAME, group_pods

DEFAULT_FACTOR = Fraction(6, 5)  # overcommit's default overcommit-factor
FRACTIONS = (Fraction(35, 100), Fraction(55, 100), Fraction(7, 10), Fraction(9, 10), Fraction(2, 10))
_TERMINAL = ("Succeeded", "Failed")


def admission_room(objects: list[dict[str, Any]], factor: Fraction = DEFAULT_FACTOR) -> dict[str, Fraction]:
    """cpu and memory that admission would still let in: allocatable · factor (overcommit's 1.2 by default;
    1 for what proportion and capacity measure against), less what placed pods use and what Inqueue jobs
    reserve (their minResources)."""
    room = {CPU: Fraction(0), MEMORY: Fraction(0)}
    for doc in objects:
        kind = doc.get("kind")
        if kind == "Node":
            have = amounts(doc["status"].get("allocatable", {}))
            for name in room:
                room[name] += have.get(name, Fraction(0)) * factor
        elif kind == "Pod" and doc["spec"].get("nodeName") and doc.get("status", {}).get("phase") not in _TERMINAL:
            used = pod_request(doc["spec"])
            for name in room:
                room[name] -= used.get(name, Fraction(0))
        elif kind == "PodGroup" and doc.get("status", {}).get("phase") == "Inqueue":
            reserved = amounts(doc["spec"].get("minResources") or {})
            for name in room:
                room[name] -= reserved.get(name, Fraction(0))
    return room


def unplaced_groups(job_docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """PodGroups none of whose pods is on a node (waiting for admission, or admitted and not yet placed)."""
    placed = {(d["metadata"]["namespace"], d["metadata"].get("annotations", {}).get(GROUP_NAME))
              for d in job_docs if d["kind"] == "Pod" and d["spec"].get("nodeName")}
    return [d for d in job_docs if d["kind"] == "PodGroup" and d["status"].get("phase") in ("Pending", "Inqueue")
            and (d["metadata"]["namespace"], d["metadata"]["name"]) not in placed]


def apply_admission_pressure(draw: st.DrawFn, objects: list[dict[str, Any]],
                             job_docs: list[dict[str, Any]]) -> None:
    """Resize some waiting jobs' minResources against admission's room, overcommit's or the plain one (in place)."""
    groups = unplaced_groups(job_docs)
    if len(groups) < 2:
        return
    chosen = [group for group in groups if draw(sometimes(70))]
    for group in chosen:
        group["status"]["phase"] = "Pending"  # waits for admission again: reserves nothing yet
    # against overcommit's room or the plain one (proportion's and capacity's), where the pairs tell apart
    room = admission_room(objects, draw(choice((DEFAULT_FACTOR, Fraction(1)))))
    if room[CPU] < Fraction(1, 5) or room[MEMORY] <= 0:
        return  # nothing left to admit: every job with minResources waits either way
    for group in chosen:
        fraction = draw(choice(FRACTIONS))
        wanted = {CPU: Fraction(max(100, int(room[CPU] * fraction * 1000)), 1000),
                  MEMORY: Fraction(max(1, int(room[MEMORY] * fraction / 2**20)) * 2**20)}
        pods = group_pods(group, job_docs)
        _grow_first_pod(pods, wanted)
        # never more than the pods request together (a PodGroup's minimum is some of its pods' requests)
        have = _requested(pods)
        resources = dict(group["spec"].get("minResources") or {})
        for name, value in wanted.items():
            resources[name] = format_quantity(name, min(value, have.get(name, Fraction(0))))
        group["spec"]["minResources"] = resources


def _requested(pods: list[dict[str, Any]]) -> dict[str, Fraction]:
    total: dict[str, Fraction] = {}
    for pod in pods:
        for name, value in pod_request(pod["spec"]).items():
            total[name] = total.get(name, Fraction(0)) + value
    return total


def _grow_first_pod(pods: list[dict[str, Any]], wanted: dict[str, Fraction]) -> None:
    """Where the pods together request less than `wanted`, the first one's main container asks for the rest
    (a driver or leader sized like the job's minimum); not a pod with pod-level resources or limits."""
    plain = [p for p in pods if "resources" not in p["spec"]
             and not p["spec"]["containers"][0].get("resources", {}).get("limits")]
    if not plain:
        return  # pod-level resources or limits bound what a container may ask: the minimum is capped instead
    have = _requested(pods)
    container = plain[0]["spec"]["containers"][0]
    requests = container.setdefault("resources", {}).setdefault("requests", {})
    for name, value in wanted.items():
        short = value - have.get(name, Fraction(0))
        if short > 0:
            requests[name] = format_quantity(name, amounts({name: requests.get(name, "0")})[name] + short)

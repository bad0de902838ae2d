"""One bug's hunt: generated scenarios through the buggy build until the harness flags one the fixed
build passes, then that scenario minimised with both builds re-run on every candidate."""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from schedcheck.conform.check import Verdict, conform_one
from schedcheck.conform.impl import Implementation
from schedcheck.conform.search import _reference_passes
from schedcheck.progress import Progress
from schedcheck.scenario.errors import ScenarioError


@dataclass
class Hunt:
    seed: int
    scenarios: int = 0  # scenarios run through the buggy build
    shared: int = 0  # flagged on the buggy build and on the fixed one too: not this bug (a version difference)
    seconds: float = 0.0
    found_after: float | None = None  # seconds from the start to the first scenario only the buggy build fails
    failing: Verdict | None = None  # the buggy build's verdict on that scenario
    original: dict[str, Any] | None = None
    minimised: dict[str, Any] | None = None
    minimised_verdict: Verdict | None = None
    stats: Any = None  # minimize.MinimizeStats
    replays: dict[str, list[bool]] = field(default_factory=dict)  # replay(): per build, per run
    shared_kinds: dict[str, int] = field(default_factory=dict)

    @property
    def found(self) -> bool:
        return self.failing is not None

    @property
    def confirmed(self) -> bool:
        """Every replay of the minimised scenario flagged the buggy build the same way and left the fixed one
        clear; where the fixed build is flagged otherwise (an older release), both builds also decided the
        same in every replay, so the difference between them is the fix's and not a random tie-break."""
        r = self.replays
        if not r.get("parent") or not all(r["parent"]) or any(r["fix"]):
            return False
        return not any(r.get("fixFlagged", [])) or all(r.get("stable", [False]))


def _verdict(impl: Implementation, doc: dict[str, Any], seed: int) -> Verdict | None:
    from schedcheck.scenario.loader import scenario_from_document

    try:
        scenario = scenario_from_document(doc, doc.get("metadata", {}).get("name") or "<hunt>")
    except ScenarioError:
        return None
    return conform_one(impl, scenario, copy.deepcopy(doc), seed)


DECISIONS = ("binds", "evicted", "pipelined", "podGroupPhases", "taskStatusCounts")


def _signature(finding: Any) -> tuple:
    return finding.kind, finding.cycle, tuple(finding.objects), finding.message


def clear_of(buggy: Verdict, fixed: Verdict | None) -> bool:
    """The fixed build is clear of what flags the buggy one: not flagged at all, or (on an older release,
    where other version differences flag both) without the buggy build's first finding and with other
    decisions. The two builds differ by the fix alone, so what the fix removed is what it fixed."""
    if fixed is None:
        return False
    if fixed.ok:
        return True
    if _signature(buggy.findings[0]) in {_signature(f) for f in fixed.findings}:
        return False
    a, b = buggy.result or {}, fixed.result or {}
    return any(_canonical(a.get(key)) != _canonical(b.get(key)) for key in DECISIONS)


def _canonical(value: Any) -> Any:
    return sorted(value) if isinstance(value, list) else value


FIX_RUNS = 2  # the fixed build must be clear this many runs in a row: upstream breaks ties at random


def only_buggy_fails(parent: Implementation, fix: Implementation, doc: dict[str, Any], seed: int,
                     kind: str | None = None) -> Verdict | None:
    """The buggy build's verdict when it is flagged (with `kind`, if given), reproducibly, and the fixed build
    is clear of it on the same scenario; else None."""
    found = _verdict(parent, doc, seed)
    if found is None or found.ok or (kind is not None and found.kind != kind):
        return None
    return found if _reproduced(found, parent, fix, doc, seed) else None


def _reproduced(found: Verdict, parent: Implementation, fix: Implementation, doc: dict[str, Any], seed: int
                ) -> bool:
    """The buggy build shows the same first finding once more, and the fixed build stays clear of it
    FIX_RUNS runs in a row: a difference that comes and goes with upstream's random tie-breaks is not the fix's."""
    again = _verdict(parent, doc, seed)
    if again is None or again.ok or _signature(again.findings[0]) != _signature(found.findings[0]):
        return False
    return all(clear_of(found, _verdict(fix, doc, seed)) for _ in range(FIX_RUNS))


def hunt(parent: Implementation, fix: Implementation, source: Iterator[tuple[str, dict[str, Any]]], seed: int,
         budget: float, minimise_budget: float = 60.0, workers: int = 1, replays: int = 3,
         progress: Progress | None = None) -> Hunt:
    """Search `source` for a scenario only the buggy build fails; minimise and replay it."""
    started = time.monotonic()
    out = Hunt(seed=seed)
    stream = iter(source)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        pending: list[tuple[dict[str, Any], Any]] = []
        while out.failing is None:
            while len(pending) < max(1, workers) and time.monotonic() - started <= budget:
                item = next(stream, None)
                if item is None:
                    break
                pending.append((item[1], pool.submit(_verdict, parent, item[1], seed)))
            if not pending:
                break
            doc, future = pending.pop(0)
            verdict = future.result()
            out.scenarios += 1
            if verdict is not None and not verdict.ok:
                fixed = _verdict(fix, doc, seed)
                if clear_of(verdict, fixed) and _reproduced(verdict, parent, fix, doc, seed):
                    out.failing, out.original = verdict, doc
                    out.found_after = time.monotonic() - started
                else:
                    out.shared += 1
                    out.shared_kinds[str(verdict.kind)] = out.shared_kinds.get(str(verdict.kind), 0) + 1
            if progress is not None:
                elapsed = time.monotonic() - started
                progress.update(elapsed, scenarios=out.scenarios, per_s=out.scenarios / max(elapsed, 1e-9),
                                findings=int(out.failing is not None))
        for _, future in pending:
            future.cancel()
    if out.failing is not None:
        assert out.original is not None
        out.minimised, out.stats, out.minimised_verdict = _minimise(parent, fix, out.original, out.failing, seed,
                                                                    minimise_budget)
        out.replays = replay(parent, fix, out.minimised, seed, replays)
    out.seconds = time.monotonic() - started
    return out


def _minimise(parent: Implementation, fix: Implementation, doc: dict[str, Any], verdict: Verdict, seed: int,
              budget: float) -> tuple[dict[str, Any], Any, Verdict]:
    from schedcheck.minimize import minimize_with_stats
    from schedcheck.scenario.loader import scenario_from_document

    kind = verdict.kind
    last: dict[str, Verdict] = {"verdict": verdict}

    def still_only_buggy(candidate: dict[str, Any]) -> bool:
        try:
            found = only_buggy_fails(parent, fix, candidate, seed, kind)
        except Exception:  # noqa: BLE001 - the reference cannot judge this candidate: not the same failure
            return False
        if found is None or not _reference_passes(scenario_from_document(candidate, "<m>"), candidate, seed, kind):
            return False
        last["verdict"] = found
        return True

    small, stats = minimize_with_stats(copy.deepcopy(doc), still_only_buggy, budget_seconds=budget)
    return small, stats, last["verdict"]


def replay(parent: Implementation, fix: Implementation, doc: dict[str, Any], seed: int, times: int
           ) -> dict[str, list[bool]]:
    """`times` runs of each build on `doc` (upstream breaks ties at random): "parent", whether the buggy
    build is flagged with the first run's finding; "fix", whether the fixed build still shows that finding;
    "fixFlagged", whether the fixed build is flagged at all; "stable", whether each build made the same
    decisions in every run (one entry)."""
    out: dict[str, list[bool]] = {"parent": [], "fix": [], "fixFlagged": []}
    first: Verdict | None = None
    decisions: dict[str, set[str]] = {"parent": set(), "fix": set()}
    for _ in range(max(1, times)):
        buggy = _verdict(parent, doc, seed)
        if first is None and buggy is not None and not buggy.ok:
            first = buggy
        out["parent"].append(bool(buggy is not None and not buggy.ok and first is not None
                                  and _signature(buggy.findings[0]) == _signature(first.findings[0])))
        fixed = _verdict(fix, doc, seed)
        out["fix"].append(not clear_of(first, fixed) if first is not None else True)
        out["fixFlagged"].append(bool(fixed is None or not fixed.ok))
        for name, verdict in (("parent", buggy), ("fix", fixed)):
            decisions[name].add(_decisions_key(verdict))
    out["stable"] = [len(decisions["parent"]) == 1 and len(decisions["fix"]) == 1]
    return out


def _decisions_key(verdict: Verdict | None) -> str:
    import json

    result = (verdict.result if verdict is not None else None) or {}
    return json.dumps({key: _canonical(result.get(key)) for key in DECISIONS}, sort_keys=True, default=str)

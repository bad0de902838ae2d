"""`schedcheck gate`: generate clusters and cycles, check every invariant, minimise the first failure.

One worker runs in this process. More workers run as pytest-xdist processes
over `schedcheck/gate_pytest.py` (pytest also writes the JUnit XML), or as
tasks on a Dask distributed cluster (`--cluster`, schedcheck.gate_cluster),
each searching with its own seed and sharing the Hypothesis example database
(a folder, or Redis for workers on several machines: schedcheck.gate_database). A
worker that finds a counterexample leaves it in the shared stats folder; this
process then shrinks it further with the domain-aware minimiser and writes the
report folder with a replayable `counterexample.yaml`.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from schedcheck.gate_properties import Failure, WorkerConfig, WorkerStats, run_worker

PROFILES = {"ci": 60.0, "nightly": 1800.0}  # default budget in seconds per profile
GATE_PYTEST = Path(__file__).resolve().with_name("gate_pytest.py")
CONFIG_ENV = "SCHEDCHECK_GATE_CONFIG"
MINIMISE_BUDGET = 120.0


@dataclass
class GateOptions:
    budget: float | None = None  # None: the profile's default
    seed: int | None = None  # None: drawn from the clock, and printed
    profile: str = "ci"
    report_dir: str = "reports"
    workers: int = 1
    junit: str | None = None
    database: str = ".schedcheck/hypothesis"
    mutant: str | None = None
    strict: bool = False
    only: list[str] | None = None
    json: bool = False
    fail_on_known: tuple[str, ...] = ()  # known upstream findings that fail the gate (invariants/known.py)
    cluster: str | None = None  # a Dask scheduler address, or "local" (schedcheck.gate_cluster)
    progress: bool = True  # a bar on a terminal, periodic lines otherwise (schedcheck.progress)
    corpus: bool = True  # replay the packaged scenarios before generating (schedcheck.gate_corpus)


@dataclass
class GateResult:
    seed: int
    budget: float
    workers: int
    stats: list[WorkerStats]
    failure: Failure | None
    report: str | None = None
    minimised: dict[str, Any] | None = None

    def totals(self) -> dict[str, Any]:
        examples = sum(s.examples for s in self.stats)
        cycles = sum(s.cycles for s in self.stats)
        checks = sum(s.invariant_checks for s in self.stats)
        seconds = max((s.seconds for s in self.stats), default=0.0) or 1e-9
        # the generated search's throughput: the corpus replayed first is timed apart
        searching = max((s.seconds - s.corpus_seconds for s in self.stats), default=0.0) or 1e-9
        spent = sum(s.seconds for s in self.stats) or 1e-9
        corpus_spent = sum(s.corpus_seconds for s in self.stats)
        run = sum(s.run_seconds for s in self.stats)
        check = sum(s.check_seconds for s in self.stats)
        shrink = sum(s.shrink_seconds for s in self.stats)
        rest = max(spent - corpus_spent - run - shrink, 0.0)
        share = {"corpus": round(corpus_spent / spent, 3), "checking": round(check / spent, 3),
                 "scheduling": round(max(run - check, 0.0) / spent, 3), "generationAndSearch": round(rest / spent, 3),
                 "shrinking": round(shrink / spent, 3)}
        corpus = {"scenarios": sum(s.corpus_scenarios for s in self.stats),
                  "cycles": sum(s.corpus_cycles for s in self.stats), "seconds": round(corpus_spent, 2)}
        return {"examples": examples, "cycles": cycles, "invariantChecks": checks, "seconds": round(seconds, 2),
                "corpus": corpus, "timeShare": share,
                "cyclesPerSecond": round(cycles / searching, 1), "cyclesPerSecondPerWorker":
                    round(cycles / searching / max(1, self.workers), 1),
                "checksPerSecond": round(checks / seconds, 1)}

    def coverage(self) -> dict[str, Any]:
        """Checks per invariant and what the generated scenarios reached (actions, plugins, outcomes)."""
        checks: dict[str, int] = {}
        covered: dict[str, int] = {}
        combinations: set[str] = set()
        for s in self.stats:
            for key, count in s.checks.items():
                checks[key] = checks.get(key, 0) + count
            for key, count in s.covered.items():
                covered[key] = covered.get(key, 0) + count
            combinations.update(s.combinations)
        return {"checksPerInvariant": dict(sorted(checks.items())), "reached": dict(sorted(covered.items())),
                "combinations": len(combinations)}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seed": self.seed, "budget": self.budget, "workers": self.workers,
                               "result": "violation" if self.failure else "clean", **self.totals()}
        if self.failure is not None:
            out["failure"] = {"invariant": self.failure.invariant, "message": self.failure.message,
                              "cycle": self.failure.cycle, "action": self.failure.action,
                              "foundAfterSeconds": round(self.failure.found_after, 2),
                              "corpusScenario": self.failure.corpus}
            out["minimised"] = self.minimised
        if self.report:
            out["report"] = self.report
        return out


def run_gate(opts: GateOptions, err: IO[str] | None = None) -> GateResult:
    err = err if err is not None else sys.stderr
    seed = opts.seed if opts.seed is not None else int(time.time()) % 100_000
    budget = opts.budget if opts.budget is not None else PROFILES[opts.profile]
    print(f"schedcheck gate: seed {seed}, budget {budget:g} s, profile {opts.profile}, {opts.workers} worker(s)"
          + (f", mutant {opts.mutant}" if opts.mutant else ""), file=err)
    with tempfile.TemporaryDirectory(prefix="schedcheck-gate-") as stats_dir:
        config = WorkerConfig(budget=budget, seed=seed, profile=opts.profile, database=opts.database,
                              mutant=opts.mutant, strict=opts.strict, stats_dir=stats_dir, only=opts.only,
                              fail_on_known=list(opts.fail_on_known), workers=max(1, opts.workers),
                              corpus=opts.corpus)
        progress = _Progress(stats_dir, err, budget, max(1, opts.workers)) if opts.progress else None
        if progress:
            progress.start()
        try:
            if opts.cluster:
                all_stats = _run_on_cluster(config, opts, stats_dir, progress)
            elif opts.workers <= 1 and not opts.junit:
                stats, failure = run_worker(config)
                if failure is not None:
                    _save_failure(stats_dir, 0, failure)
                all_stats = [stats]
            else:
                _run_with_pytest(config, opts.workers, opts.junit)
                all_stats = _read_stats(stats_dir)
        finally:
            if progress:
                progress.stop()
        failure = _first_failure(stats_dir)
    result = GateResult(seed, budget, max(1, opts.workers), all_stats, failure)
    if failure is not None:
        _minimise_and_report(result, opts, err)
    else:
        result.report = str(_write_summary(result, opts))
    return result


def _write_summary(result: GateResult, opts: GateOptions) -> Path:
    """A clean gate leaves evidence of what it tried: summary.json (totals, checks per invariant, what the
    scenarios reached, and which catalog rules never ran) and report.html in reports/<time>-gate-clean/."""
    from schedcheck.invariants.catalog import catalog
    from schedcheck.report_folder import write_report_folder
    from schedcheck.report_html import render_summary_html

    summary = {**result.to_json(), **result.coverage(), "mutant": opts.mutant}
    summary["neverChecked"] = sorted({inv.id for inv in catalog()} - set(summary["checksPerInvariant"]))
    return write_report_folder(Path(opts.report_dir), "gate-clean",
                               {"summary.json": json.dumps(summary, indent=2) + "\n",
                                "report.html": render_summary_html(summary)})


def _run_with_pytest(config: WorkerConfig, workers: int, junit: str | None) -> int:
    import pytest

    env = asdict(config)
    os.environ[CONFIG_ENV] = json.dumps(env)
    args = [str(GATE_PYTEST), "-qq", "-p", "no:cacheprovider", "-p", "no:warnings", "-o", "addopts=",
            "--rootdir", str(GATE_PYTEST.parent)]
    if workers > 1:
        args += ["-n", str(workers), "--dist", "load"]
    else:
        args += ["-p", "no:xdist"]
    if junit:
        args += [f"--junitxml={junit}"]
    try:
        with contextlib.redirect_stdout(sys.stderr):  # stdout belongs to the gate's own result
            return pytest.main(args)
    finally:
        os.environ.pop(CONFIG_ENV, None)


def _run_on_cluster(config: WorkerConfig, opts: GateOptions, stats_dir: str,
                    progress: _Progress | None) -> list[WorkerStats]:
    from schedcheck.gate_cluster import run_on_cluster

    def done(stats: WorkerStats, failure: Failure | None) -> None:
        if failure is not None:
            _save_failure(stats_dir, stats.worker, failure)
        if progress is not None:
            progress.finished += 1

    stats, _ = run_on_cluster(config, max(1, opts.workers), opts.cluster or "local", done)
    return stats


def _save_failure(stats_dir: str, worker: int, failure: Failure) -> None:
    path = Path(stats_dir) / f"failure-{worker}.json"
    path.write_text(json.dumps(asdict(failure)), encoding="utf-8")


def _first_failure(stats_dir: str) -> Failure | None:
    found = []
    for path in sorted(Path(stats_dir).glob("failure-*.json")):
        found.append(Failure(**json.loads(path.read_text(encoding="utf-8"))))
    return min(found, key=lambda f: f.found_after) if found else None


def _read_stats(stats_dir: str) -> list[WorkerStats]:
    stats = []
    for path in sorted(Path(stats_dir).glob("worker-*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        stats.append(WorkerStats(**data))
    return stats


def _minimise_and_report(result: GateResult, opts: GateOptions, err: IO[str]) -> None:
    from schedcheck.counterexample import write_counterexample_report
    from schedcheck.minimize import failing_predicate, minimize_with_stats

    from schedcheck.gate_corpus import EXPECTATION

    failure = result.failure
    assert failure is not None
    seed = failure.seed if failure.seed is not None else result.seed  # the run that failed
    if failure.invariant == EXPECTATION:
        # a hand-derived scenario whose decisions changed: it is already small, and its expect block is
        # the oracle, which a smaller scenario would no longer have
        print(f"schedcheck gate: {failure.message}", file=err)
        folder = write_counterexample_report(
            Path(opts.report_dir), failure.doc, _as_violation(failure), seed, opts.mutant,
            {"minimised": False, "why": "a corpus scenario judged by its expect block is kept whole"},
            failure.found_after)
        result.report = str(folder)
        result.minimised = None
        return
    print(f"schedcheck gate: {failure.invariant} broken after {failure.found_after:.1f} s; minimising ...", file=err)
    # activates the mutant itself; keeps the failure's cause, not only its invariant id
    predicate = failing_predicate(failure.invariant, seed, opts.mutant, original=failure.doc)
    started = time.monotonic()
    minimised, stats = minimize_with_stats(failure.doc, predicate, budget_seconds=MINIMISE_BUDGET)
    stats = {**stats, "minimiseSeconds": round(time.monotonic() - started, 2)}
    folder = write_counterexample_report(Path(opts.report_dir), minimised, failure.invariant, seed,
                                         opts.mutant, stats, failure.found_after, original=failure.doc)
    result.report = str(folder)
    result.minimised = stats


def _as_violation(failure: Failure) -> dict[str, Any]:
    return {"id": failure.invariant, "message": failure.message, "cycle": failure.cycle, "action": failure.action,
            "scenario": failure.corpus}


class _Progress:
    """Polls the workers' stats files every two seconds: a bar on a terminal (elapsed against the budget,
    scenarios, cycles/s, findings so far), a plain line every 15 s otherwise."""

    def __init__(self, stats_dir: str, out: IO[str], budget: float, workers: int) -> None:
        from schedcheck.progress import Progress

        self.stats_dir = stats_dir
        self.display = Progress(out, "gate", budget)
        self.workers = workers
        self.finished = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=3)
        self.display.close()

    def _run(self) -> None:
        while not self._stop.wait(2.0):
            try:
                stats = _read_stats(self.stats_dir)
                failures = len(list(Path(self.stats_dir).glob("failure-*.json")))
            except (OSError, ValueError):
                continue
            elapsed = time.monotonic() - self.display.started
            cycles = sum(s.cycles for s in stats)
            figures: dict[str, Any] = {"scenarios": sum(s.examples for s in stats), "cycles": cycles,
                                       "cycles/s": cycles / max(elapsed, 1e-9),
                                       "violations": failures + sum(1 for s in stats if s.failure),
                                       "findings": sum(s.findings for s in stats)}
            if self.workers > 1:
                figures["workers done"] = f"{self.finished}/{self.workers}"
            self.display.update(elapsed, **figures)


def render_gate(result: GateResult) -> str:
    totals = result.totals()
    lines = [f"seed {result.seed}, budget {result.budget:g} s, {result.workers} worker(s): {totals['examples']} "
             f"scenarios, {totals['cycles']} cycles ({totals['cyclesPerSecond']}/s, "
             f"{totals['cyclesPerSecondPerWorker']}/s per worker), {totals['invariantChecks']} invariant checks",
             "time: {corpus:.0%} corpus, {checking:.0%} invariants, {scheduling:.0%} scheduling, "
             "{generationAndSearch:.0%} generation, stateful runs and Hypothesis, {shrinking:.0%} shrinking"
             .format(**totals["timeShare"]),
             f"reached {result.coverage()['combinations']} distinct (action, plugin, outcome) combinations: an "
             f"action that bound, pipelined or evicted with that plugin on"]
    corpus = totals["corpus"]
    if corpus["scenarios"]:
        lines.insert(1, f"corpus first: {corpus['scenarios']} packaged scenarios ({corpus['cycles']} cycles) "
                        f"in {corpus['seconds']:g} s, judged by their expect blocks and every invariant (the "
                        f"cycles/s above are the generated search's)")
    if result.failure is None:
        lines.append("clean: no invariant violated")
        if result.report:
            lines.append(f"summary: {result.report}/summary.json (and report.html)")
    else:
        f = result.failure
        lines.append(f"VIOLATION {f.invariant} (cycle {f.cycle}, {f.action or '-'}) found after "
                     f"{f.found_after:.1f} s: {f.message}")
        if result.minimised:
            m = result.minimised
            lines.append(f"minimised to {m.get('after', {})} from {m.get('before', {})} in "
                         f"{m.get('minimiseSeconds', '?')} s")
        lines.append(f"report: {result.report}/report.md")
        lines.append(f"replay: schedcheck replay {result.report}/counterexample.yaml")
    return "\n".join(lines) + "\n"

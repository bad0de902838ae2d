"""The measurements behind `schedcheck bench`: one session of a scenario file, in a process of its own.

Both sides read the same scenario file (schedcheck.bench writes it) and are timed by the same phases:

- load: reading the file into objects and filling the scheduler's cache (reference: the scenario loader
  and SchedulerCache; upstream: the adapter's decoding, then a fresh mock cache whose informers are
  started and synced, filled with the world);
- open: snapshot and every plugin's OnSessionOpen; each action's Execute; close: CloseSession;
- invariants (reference only): seconds inside the invariant engine's hooks, when they are on.

Each run is a fresh process, so that its peak resident set (getrusage maxrss) is its own. For upstream the
process also decodes JSON, starts Go, waits for the asynchronous binds and writes its result: those are
reported apart (`outsideSessionSeconds`) and never counted in the session.

The reference side runs as `python -m schedcheck.bench_measure SCENARIO SEED INVARIANTS(0|1)` and prints
one JSON object.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from typing import Any

from schedcheck.reference.framework.session import SessionObserverHooks

SESSION_PHASES = ("open", "close")  # with the actions in between


def measure_reference(path: str, seed: int, with_invariants: bool) -> dict[str, Any]:
    """One reference session of the scenario at `path`, in a child process; its figures."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "schedcheck.bench_measure", path, str(seed),
                           "1" if with_invariants else "0"], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        raise RuntimeError(f"the reference's bench process failed: {lines[-1]}")
    figures = json.loads(done.stdout)
    figures["processSeconds"] = round(wall, 4)
    return figures


def _timed_hooks(factory, spent: list[float]):
    """The engine's hooks, each call's wall time added to spent[0]."""
    def wrap(fn):
        def timed(*args: Any) -> Any:
            begun = time.perf_counter()
            try:
                return fn(*args)
            finally:
                spent[0] += time.perf_counter() - begun
        return timed

    def make() -> SessionObserverHooks:
        hooks = factory()
        for name, value in vars(hooks).items():
            if isinstance(value, list):
                setattr(hooks, name, [wrap(fn) for fn in value])
        return hooks
    return make


def reference_session(path: str, seed: int, with_invariants: bool) -> dict[str, Any]:
    """Load, open, the actions, close, in this process (the child's work)."""
    from schedcheck.invariants.engine import InvariantEngine
    from schedcheck.reference.scheduler import Scheduler
    from schedcheck.scenario.loader import load_scenario

    spent = [0.0]
    engine = InvariantEngine() if with_invariants else None
    started = time.perf_counter()
    scenario = load_scenario(path)
    scheduler = Scheduler(scenario.objects, scenario.conf, seed=seed, now=scenario.now,
                          server_options=scenario.options,
                          hooks_factory=_timed_hooks(engine.hooks, spent) if engine else None)
    load = time.perf_counter() - started
    report = scheduler.run_once()
    phases = {"load": load, **report.phase_seconds}
    ops = report.session.operations
    figures: dict[str, Any] = {
        "phases": {k: round(v, 4) for k, v in phases.items()},
        "sessionSeconds": round(sum(v for k, v in phases.items() if k != "load"), 4),
        "binds": sum(1 for op in ops if op.op == "bind"),
        "pipelined": sum(1 for op in ops if op.op == "pipeline"),
        "maxRSSMB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    if engine is not None:
        costliest = sorted(engine.cost.items(), key=lambda kv: -kv[1])[:3]
        figures.update({
            "invariantSeconds": round(spent[0], 4),
            "invariantChecks": engine.checks_run,
            "violations": len(engine.violations),
            "findings": len(engine.findings),
            "costliestInvariants": {k: round(v, 4) for k, v in costliest},
        })
    return figures


def measure_upstream(command: list[str], path: str, seed: int) -> dict[str, Any]:
    """One session of the scenario at `path` through upstream's scheduler (the Go adapter)."""
    started = time.perf_counter()
    done = subprocess.run([*command, path], capture_output=True, text=True, check=False,
                          env={**os.environ, "SCHEDCHECK_PROTOCOL": "1", "SCHEDCHECK_SEED": str(seed)})
    wall = time.perf_counter() - started
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        raise RuntimeError(f"the Volcano adapter failed: {lines[-1]}")
    result = json.loads(done.stdout)
    return upstream_figures(result, wall)


def upstream_figures(result: dict[str, Any], wall: float) -> dict[str, Any]:
    """The adapter's result object's timings, in the reference's phases."""
    timings = result["timings"]
    (session,) = timings["sessions"]  # the bench's scenarios run one cycle
    phases = {"load": timings["readSeconds"] + session["cacheSeconds"], "open": session["openSeconds"]}
    for action in session["actions"]:
        phases[action["name"]] = phases.get(action["name"], 0.0) + action["seconds"]
    phases["close"] = session["closeSeconds"]
    inside = sum(phases.values())
    return {
        "phases": {k: round(v, 4) for k, v in phases.items()},
        "sessionSeconds": round(timings["totalSeconds"], 4),
        "processSeconds": round(wall, 4),
        # process start and Go's init, the adapter's own bookkeeping, the wait for the asynchronous binds,
        # writing the result: all that the process did besides the phases above
        "outsideSessionSeconds": round(wall - inside, 4),
        "adapterSeconds": round(session["adapterSeconds"], 4),
        "bindWaitSeconds": round(session["waitSeconds"], 4),
        "binds": len(result["binds"]),
        "pipelined": len(result["pipelined"]),
        "maxRSSMB": round(timings.get("maxRSSKB", 0) / 1024, 1),
        "implementation": result.get("implementation", ""),
    }


def main(argv: list[str]) -> int:
    path, seed, invariants = argv
    from schedcheck.gc_tuning import tune_gc

    tune_gc()  # as every schedcheck command runs the reference
    json.dump(reference_session(path, int(seed), invariants == "1"), sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

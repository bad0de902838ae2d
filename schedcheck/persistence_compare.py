"""Upstream vs persistent pipelines (seed 004) on the same generated runs.

    schedcheck compare-persistence --budget 60 --seed 3

Two parts, each run in both pipelinePersistence modes:
1. find: the CrossSessionMachine (generators/machine.py) with the cross-session rules only, quality
   findings counted, `--budget` Hypothesis examples. Both modes share the machine's class name, so
   Hypothesis draws the same programs in each. A failure is shrunk; its failing run (the world before
   the first of the untouched sessions that ended in it, `cycles` = their number) is printed, replayed
   in both modes, and with `--save FILE` written as a counterexample scenario.
2. evictions: `--walks` seeded random programs over the same machine, each executed in both modes;
   evictions counted per run, with the ratio persistent / upstream.
Actions default to "enqueue, reclaim, allocate, backfill": with allocate first, upstream's
nominated-node attempt keeps most pipelined decisions alive and the machine finds nothing in either mode
(try `--actions "enqueue, allocate, preempt, reclaim, backfill"`). The seed is printed.
"""

from __future__ import annotations

import argparse
import copy
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from schedcheck.generators.machine import MAX_JOBS, MAX_NODES, SchedulerMachine, machine_for
from schedcheck.reference.framework.conf import PERSISTENCE_MODES
from schedcheck.scenario.conf_loader import PERSISTENCE_KEY

CROSS_SESSION = ["cross.no-oscillation", "cross.pipelined-kept", "cross.pipelined-liveness", "cross.single-placement"]
DEFAULT_ACTIONS = "enqueue, reclaim, allocate, backfill"  # reclaim first: the order that loses pipelines (findings #10)


@dataclass
class Found:
    mode: str
    found: bool
    violation: dict[str, Any] = field(default_factory=dict)
    run: dict[str, Any] | None = None  # the failing run as a scenario document
    sessions: int = 0  # sessions the machine ran over every example
    seconds: float = 0.0


def find(mode: str, seed: int, budget: int, steps: int = 20, actions: str = DEFAULT_ACTIONS) -> Found:
    machine = machine_for(seed, strict=True, only=CROSS_SESSION, persistence=mode, actions=actions)
    started = time.monotonic()
    try:
        run_state_machine_as_test(machine, settings=settings(
            max_examples=budget, stateful_step_count=steps, deadline=None, derandomize=True, database=None,
            suppress_health_check=list(HealthCheck), print_blob=False))
    except AssertionError:
        _, violation = machine.last_failure or (None, {})
        return Found(mode, True, violation, machine.last_failing_run, machine.sessions_total,
                     time.monotonic() - started)
    return Found(mode, False, sessions=machine.sessions_total, seconds=time.monotonic() - started)


def in_mode(doc: dict[str, Any], mode: str) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    out["schedulerConf"][PERSISTENCE_KEY] = mode
    return out


def replay(doc: dict[str, Any], mode: str) -> list[str]:
    """The cross-session rules the scenario breaks (violations and findings) when run in `mode`."""
    from schedcheck.invariants.engine import InvariantEngine
    from schedcheck.runner import run_scenario
    from schedcheck.scenario.loader import scenario_from_document

    scenario = scenario_from_document(in_mode(doc, mode), "<failing run>")
    result = run_scenario(scenario, seed=0, engine=InvariantEngine(only=CROSS_SESSION))
    return sorted({v["id"] for v in result.violations + result.findings})


# -- random walks: the same program in both modes ---------------------------------------------------

def random_program(rng: random.Random, steps: int) -> list[tuple[str, dict[str, Any]]]:
    """Rule calls drawn from the rng alone, so that both modes execute exactly the same program."""
    program: list[tuple[str, dict[str, Any]]] = [("start", {"nodes": rng.randint(1, 3), "cpu": rng.choice([4, 8]),
                                                           "fill": rng.randint(1, 2)})]
    choices = [
        ("submit_job", lambda: {"size": rng.randint(1, 4), "cpu": rng.randint(1, 4), "gang": rng.random() < 0.5,
                                "priority": rng.choice([0, 10, 100]), "queue": rng.choice(["default", "batch"])}),
        ("run_sessions", lambda: {"sessions": rng.randint(3, 6)}),
        ("run_session", dict),
        ("pod_finishes", lambda: {"index": rng.randint(0, 50), "failed": rng.random() < 0.5}),
        ("pod_deleted", lambda: {"index": rng.randint(0, 50)}),
        ("node_added", lambda: {"cpu": rng.choice([4, 8, 2])}),
        ("node_removed", lambda: {"index": rng.randint(0, 10)}),
        ("eviction_is_slow", lambda: {"index": rng.randint(0, 50), "sessions": rng.randint(1, 3)}),
        ("bind_will_fail", lambda: {"index": rng.randint(0, 50)}),
        ("pipelined_pod_deleted", lambda: {"index": rng.randint(0, 50)}),
        ("bound_by_another_scheduler", lambda: {"index": rng.randint(0, 50), "node": rng.randint(0, 10)}),
        ("pod_patched", lambda: {"index": rng.randint(0, 50), "value": rng.choice(["a", "b"])}),
    ]
    weights = [4, 4, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    for _ in range(steps):
        name, args = rng.choices(choices, weights)[0]
        program.append((name, args()))
    return program


def execute(program: list[tuple[str, dict[str, Any]]], mode: str, seed: int, actions: str) -> int:
    """Run the program in one mode; the number of evictions it made (up to a safety violation, if any)."""
    machine: SchedulerMachine = machine_for(seed, only=CROSS_SESSION, persistence=mode, actions=actions)()
    for name, args in program:
        if name == "submit_job" and machine.jobs >= MAX_JOBS:
            continue
        if name == "node_added" and len(machine.world.nodes) >= MAX_NODES:
            continue
        if name == "node_removed" and len(machine.world.nodes) <= 1:
            continue
        try:
            getattr(machine, name)(**args)
            if name == "run_session":
                machine.no_violation()
        except AssertionError:
            break
    assert machine.scheduler is not None
    return len(machine.scheduler.cache.log.evictions)


def compare_evictions(seed: int, walks: int, steps: int = 20,
                      actions: str = DEFAULT_ACTIONS) -> list[tuple[int, int]]:
    """(upstream evictions, persistent evictions) per walk."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(walks):
        program = random_program(rng, steps)
        pairs.append((execute(program, "upstream", seed, actions), execute(program, "persistent", seed, actions)))
    return pairs


def ratio(pairs: list[tuple[int, int]]) -> float | None:
    upstream = sum(u for u, _ in pairs)
    return sum(p for _, p in pairs) / upstream if upstream else None


# -- command line -----------------------------------------------------------------------------------

def _describe_run(doc: dict[str, Any]) -> str:
    kinds: dict[str, int] = {}
    for obj in doc.get("objects", []):
        kinds[obj.get("kind", "?")] = kinds.get(obj.get("kind", "?"), 0) + 1
    return f"{doc.get('cycles')} session(s); objects: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))


HELP = "compare pipelined-state persistence modes on the same multi-session programs"
DESCRIPTION = ("Run the cross-session machine in upstream and persistent pipeline mode on the same programs: "
               "what each finds (minimised, replayed in both modes) and the evictions per program in each mode.")
EPILOG = """example:
  schedcheck compare-persistence --budget 60 --seed 3 --walks 40

exit status: 0 ran (a finding is a result, not a failure), 2 usage"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--budget", type=int, default=60, help="Hypothesis examples per mode (default 60)")
    parser.add_argument("--seed", type=int, default=None, help="machine and walk seed (default: random, printed)")
    parser.add_argument("--steps", type=int, default=20, help="rules per example or walk (default 20)")
    parser.add_argument("--walks", type=int, default=30, help="random programs for the eviction count (default 30)")
    parser.add_argument("--actions", default=DEFAULT_ACTIONS, help=f'conf actions (default "{DEFAULT_ACTIONS}")')
    parser.add_argument("--save", type=Path, default=None, help="write the upstream failing run here (new file)")


def main(args: argparse.Namespace | list[str] | None = None) -> int:
    if not isinstance(args, argparse.Namespace):
        parser = argparse.ArgumentParser(prog="schedcheck compare-persistence", description=DESCRIPTION,
                                         epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
        add_arguments(parser)
        args = parser.parse_args(args)
    if args.save is not None and args.save.exists():
        print(f"error: {args.save} exists; not overwriting it", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else random.randrange(1 << 16)
    print(f"seed {seed}, budget {args.budget} examples x {args.steps} steps, actions \"{args.actions}\"")
    failing: dict[str, Any] | None = None
    for mode in PERSISTENCE_MODES:
        found = find(mode, seed, args.budget, args.steps, args.actions)
        print(f"[{mode}] {'FOUND' if found.found else 'nothing found'} ({found.sessions} sessions, "
              f"{found.seconds:.1f}s)")
        if found.found and found.run is not None:
            print(f"  {found.violation.get('id')} at session {found.violation.get('cycle')}: "
                  f"{found.violation.get('message')}")
            print(f"  minimised failing run: {_describe_run(found.run)}")
            for replay_mode in PERSISTENCE_MODES:
                print(f"  replayed in {replay_mode} mode: {', '.join(replay(found.run, replay_mode)) or 'clean'}")
            if mode == "upstream":
                failing = found.run
    if args.save is not None and failing is not None:
        from schedcheck.counterexample import dump_counterexample

        args.save.write_text(dump_counterexample(failing))
        print(f"saved the upstream failing run to {args.save}")
    pairs = compare_evictions(seed, args.walks, args.steps, args.actions)
    print(f"evictions over {len(pairs)} random programs, each run in both modes:")
    print("  upstream:   " + " ".join(str(u) for u, _ in pairs) + f"  (total {sum(u for u, _ in pairs)})")
    print("  persistent: " + " ".join(str(p) for _, p in pairs) + f"  (total {sum(p for _, p in pairs)})")
    worse = [i for i, (u, p) in enumerate(pairs) if p > u]
    value = ratio(pairs)
    print(f"  ratio persistent/upstream: {value:.2f}" if value is not None else "  ratio: no evictions upstream")
    print(f"  programs where persistent evicted more: {worse or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

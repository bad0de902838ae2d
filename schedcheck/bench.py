"""`schedcheck bench`: wall time of one scheduling session on synthetic clusters.

A cluster of N nodes carries 10xN pods: half already running (spread over the
nodes), half pending in gangs of 5 spread over four weighted queues. The
scheduler runs upstream's default configuration, as a cluster without a conf
runs (the reference's `default_scheduler_conf`: DEFAULT_ACTIONS and
DEFAULT_TIERS in reference_impl/framework/conf.py). Each size is timed without and with every invariant checked. The
figures are measured, printed and never asserted: machines are shared and noisy.

The same snapshot also goes through upstream's own Go scheduler (the Volcano
adapter, adapters/volcano/), which reports its own session time; the ratio
reference / upstream is printed. Without Go (or with SCHEDCHECK_BENCH_UPSTREAM=0,
or `upstream=False`) that part is skipped and a note goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from typing import IO, Any

from schedcheck.reference.framework.conf import DEFAULT_ACTIONS, DEFAULT_TIERS, SchedulerConf, default_scheduler_conf
from schedcheck.reference.k8s import (
    GROUP_NAME_ANNOTATION,
    ClusterObjects,
    Container,
    Node,
    Pod,
    PodGroup,
    Queue,
)
from schedcheck.reference.quantity import Quantity
from schedcheck.invariants.engine import InvariantEngine
from schedcheck.reference.cache.cache import SchedulerCache
from schedcheck.reference.scheduler import Scheduler

GANG_SIZE = 5
QUEUES = 4
BENCH_ACTIONS = list(DEFAULT_ACTIONS)  # upstream's default configuration, as a cluster without a conf runs
BENCH_TIERS = [list(t) for t in DEFAULT_TIERS]


def bench_conf() -> SchedulerConf:
    return default_scheduler_conf()


def _requests(cpu: str, memory: str) -> dict[str, Quantity]:
    return {"cpu": Quantity.parse(cpu), "memory": Quantity.parse(memory)}


def build_cluster(num_nodes: int, seed: int = 0) -> ClusterObjects:
    rng = random.Random(seed)
    objects = ClusterObjects()
    for i in range(num_nodes):
        objects.nodes.append(Node(
            name=f"node-{i:05d}", uid=f"node-{i}",
            allocatable={"cpu": Quantity.parse("32"), "memory": Quantity.parse("128Gi"),
                         "pods": Quantity.parse("110")},
        ))
    for q in range(QUEUES):
        objects.queues.append(Queue(name=f"queue-{q}", uid=f"queue-{q}", weight=q + 1))
    num_pods = 10 * num_nodes
    running, pending = num_pods // 2, num_pods - num_pods // 2
    # Running pods: one PodGroup of GANG_SIZE per group of consecutive pods, already placed.
    for g in range(running // GANG_SIZE):
        _add_gang(objects, f"running-{g:05d}", f"queue-{g % QUEUES}", "Running", rng,
                  nodes=[objects.nodes[(g * GANG_SIZE + k) % num_nodes].name for k in range(GANG_SIZE)])
    for g in range(pending // GANG_SIZE):
        _add_gang(objects, f"pending-{g:05d}", f"queue-{g % QUEUES}", "Pending", rng, nodes=None)
    return objects


def _add_gang(objects: ClusterObjects, name: str, queue: str, phase: str, rng: random.Random,
              nodes: list[str] | None) -> None:
    objects.pod_groups.append(PodGroup(name=name, namespace="bench", uid=f"pg-{name}",
                                       min_member=GANG_SIZE, queue=queue, phase=phase))
    cpu, memory = rng.choice([("1", "2Gi"), ("2", "4Gi"), ("500m", "1Gi")])
    for k in range(GANG_SIZE):
        objects.pods.append(Pod(
            name=f"{name}-{k}", namespace="bench", uid=f"pod-{name}-{k}",
            annotations={GROUP_NAME_ANNOTATION: name},
            containers=[Container("main", _requests(cpu, memory))],
            node_name=nodes[k] if nodes else "",
            phase="Running" if nodes else "Pending",
        ))


def _timed_session(objects: ClusterObjects, seed: int, engine: InvariantEngine | None):
    scheduler = Scheduler(objects, bench_conf(), seed=seed, hooks_factory=engine.hooks if engine else None)
    started = time.perf_counter()
    report = scheduler.run_once()
    return report.session, time.perf_counter() - started


def measure(num_nodes: int, seed: int, with_invariants: bool = True) -> dict[str, Any]:
    started = time.perf_counter()
    objects = build_cluster(num_nodes, seed)
    built = time.perf_counter()
    SchedulerCache(objects)
    cache_ready = time.perf_counter()
    ssn, session_seconds = _timed_session(objects, seed, None)
    binds = sum(1 for op in ssn.operations if op.op == "bind")
    pipelined = sum(1 for op in ssn.operations if op.op == "pipeline")
    checked: dict[str, Any] = {}
    if with_invariants:
        engine = InvariantEngine()
        checked_ssn, checked_seconds = _timed_session(objects, seed, engine)
        costliest = sorted(engine.cost.items(), key=lambda kv: -kv[1])[:3]
        checked = {
            "sessionSecondsWithInvariants": round(checked_seconds, 4),
            "invariantOverhead": round(checked_seconds / session_seconds - 1, 3) if session_seconds else None,
            "invariantChecks": engine.checks_run,
            "violations": len(engine.violations),
            "findings": len(engine.findings),
            "costliestInvariants": {k: round(v, 4) for k, v in costliest},
        }
    return {
        "nodes": num_nodes,
        "pods": len(objects.pods),
        "pendingPods": sum(1 for p in objects.pods if not p.node_name),
        "buildSeconds": round(built - started, 4),
        "cacheSeconds": round(cache_ready - built, 4),
        "sessionSeconds": round(session_seconds, 4),
        "binds": binds,
        "pipelined": pipelined,
        "podsPlacedPerSecond": round(binds / session_seconds, 1) if session_seconds > 0 else None,
        **checked,
    }


def measure_upstream(command: list[str], num_nodes: int, seed: int) -> dict[str, Any]:
    """One session of the same synthetic cluster through upstream's scheduler (the adapter)."""
    from schedcheck.scenario.dump import scenario_document

    doc = scenario_document(f"bench-{num_nodes}", build_cluster(num_nodes, seed), bench_conf())
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
        path = f.name
    try:
        started = time.perf_counter()
        done = subprocess.run([*command, path], capture_output=True, text=True,
                              env={**os.environ, "SCHEDCHECK_PROTOCOL": "1", "SCHEDCHECK_SEED": str(seed)})
        wall = time.perf_counter() - started
    finally:
        os.unlink(path)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        raise RuntimeError(f"the Volcano adapter failed: {lines[-1]}")
    result = json.loads(done.stdout)
    return {
        "sessionSeconds": round(result["timings"]["totalSeconds"], 4),
        "processSeconds": round(wall, 4),
        "binds": len(result["binds"]),
        "pipelined": len(result["pipelined"]),
        "implementation": result.get("implementation", ""),
    }


def _upstream_command(upstream: bool | None, progress: IO[str] | None) -> list[str] | None:
    if upstream is False or (upstream is None and os.environ.get("SCHEDCHECK_BENCH_UPSTREAM") == "0"):
        return None
    from schedcheck.adapters import AdapterError, adapter_command

    try:
        return adapter_command()
    except AdapterError as err:
        if upstream:
            raise
        print(f"schedcheck: bench: upstream Volcano not measured: {err}", file=progress or sys.stderr)
        return None


def run_bench(sizes: list[int], seed: int = 0, progress: IO[str] | None = None,
              with_invariants: bool = True, upstream: bool | None = None) -> dict[str, Any]:
    """Measure every size; `upstream` None measures upstream's scheduler too when the adapter can be had."""
    from schedcheck.progress import Progress

    results = []
    command = _upstream_command(upstream, progress)
    display = Progress(progress, "bench", len(sizes), unit="sizes", interval=0.0) if progress is not None else None
    for index, size in enumerate(sizes):
        if display is not None:
            display.update(index, measuring=f"{size} nodes")
        figures = measure(size, seed, with_invariants)
        if command is not None:
            up = measure_upstream(command, size, seed)
            figures["upstream"] = up
            figures["referenceOverUpstream"] = (
                round(figures["sessionSeconds"] / up["sessionSeconds"], 1) if up["sessionSeconds"] > 0 else None)
        results.append(figures)
    if display is not None:
        display.update(len(sizes), measured=f"{len(sizes)} sizes")
        display.close()
    return {"seed": seed, "actions": BENCH_ACTIONS, "tiers": BENCH_TIERS, "sizes": results}


def render_bench(figures: dict[str, Any]) -> str:
    from schedcheck.render import table

    rows = []
    for r in figures["sizes"]:
        with_checks = r.get("sessionSecondsWithInvariants")
        rows.append([str(r["nodes"]), str(r["pods"]), str(r["pendingPods"]), f"{r['sessionSeconds']:.3f}",
                     str(r["binds"]), str(r["podsPlacedPerSecond"]),
                     f"{with_checks:.3f}" if with_checks is not None else "-",
                     f"{100 * r['invariantOverhead']:.0f}%" if r.get("invariantOverhead") is not None else "-",
                     str(r.get("invariantChecks", "-")),
                     f"{r['upstream']['sessionSeconds']:.3f}" if "upstream" in r else "-",
                     f"{r['referenceOverUpstream']}x" if r.get("referenceOverUpstream") else "-"])
    header = (f"one session ({', '.join(figures['actions'])}; plugins "
              f"{' | '.join(', '.join(t) for t in figures['tiers'])}), seed {figures['seed']}\n")
    return header + table(["nodes", "pods", "pending", "session s", "binds", "pods placed/s",
                           "with invariants s", "overhead", "checks", "upstream s", "ref/upstream"], rows)


# ---------------------------------------------------------------- the command


DESCRIPTION = ("Build synthetic clusters (N nodes, 10xN pods, half of them pending in gangs across "
               "several queues) and time one allocate session at each size, with and without the invariants, "
               "and through upstream Volcano's own scheduler (the Go adapter) for the ratio reference / "
               "upstream. Prints figures; asserts nothing.")
EPILOG = """examples:
  schedcheck bench
  schedcheck bench --sizes 100 --json
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--sizes", default="100,1000", help="comma-separated node counts (default 100,1000)")
    parser.add_argument("--seed", type=int, default=0, help="seed for the synthetic cluster (default 0)")
    parser.add_argument("--no-invariants", action="store_true", help="skip the run with every invariant checked")
    parser.add_argument("--no-upstream", action="store_true",
                        help="skip the same session through upstream Volcano (the Go adapter, built on first use)")


def main(args: argparse.Namespace) -> int:
    from schedcheck.commands import EXIT_OK, EXIT_USAGE

    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
        if not sizes or any(s <= 0 for s in sizes):
            raise ValueError
    except ValueError:
        print(f"schedcheck: bench: --sizes: expected positive integers separated by commas, got {args.sizes!r}",
              file=sys.stderr)
        return EXIT_USAGE
    figures = run_bench(sizes, seed=args.seed, progress=None if args.json else sys.stderr,
                        with_invariants=not args.no_invariants, upstream=False if args.no_upstream else None)
    if args.json:
        json.dump(figures, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_bench(figures))
    return EXIT_OK

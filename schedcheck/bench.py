"""`schedcheck bench`: one scheduling session on synthetic clusters, phase by phase, reference and upstream.

A cluster of N nodes carries 10xN pods: half already running (spread over the
nodes), half pending in gangs of 5 spread over four weighted queues. The
scheduler runs upstream's default configuration, as a cluster without a conf
runs (the reference's `default_scheduler_conf`: DEFAULT_ACTIONS and
DEFAULT_TIERS in reference_impl/framework/conf.py).

The cluster is written once as a scenario file; the reference (without, then with every invariant
checked) and upstream's own Go scheduler (the Volcano adapter, adapters/volcano/) each read it in a
process of their own and report the same phases: load, open, each action, close (and, for the
reference with invariants, the seconds inside the invariant engine), plus the process's peak memory.
The ratio reference / upstream compares the sessions (open to close); what else upstream's process
spends (process start, decoding, informers, waiting for its asynchronous binds) is reported apart
(schedcheck/bench_measure.py). Without Go (or with SCHEDCHECK_BENCH_UPSTREAM=0, or `upstream=False`)
the upstream part is skipped and a note goes to stderr. Figures are measured, printed and never asserted:
machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
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


def write_scenario(num_nodes: int, seed: int, folder: str) -> str:
    """The synthetic cluster as a scenario file (JSON), the input both sides read."""
    from schedcheck.scenario.dump import scenario_document

    path = os.path.join(folder, f"bench-{num_nodes}.json")
    with open(path, "w") as f:
        json.dump(scenario_document(f"bench-{num_nodes}", build_cluster(num_nodes, seed), bench_conf()), f)
    return path


def measure(num_nodes: int, seed: int, with_invariants: bool = True, command: list[str] | None = None
            ) -> dict[str, Any]:
    """One size: the reference without (and with) the invariants, and upstream when `command` is given."""
    from schedcheck.bench_measure import measure_reference, measure_upstream

    objects = build_cluster(num_nodes, seed)
    figures: dict[str, Any] = {
        "nodes": num_nodes, "pods": len(objects.pods), "pendingPods": sum(1 for p in objects.pods if not p.node_name),
    }
    with tempfile.TemporaryDirectory(prefix="schedcheck-bench-") as folder:
        path = write_scenario(num_nodes, seed, folder)
        reference = figures["reference"] = measure_reference(path, seed, False)
        if with_invariants:
            checked = figures["referenceWithInvariants"] = measure_reference(path, seed, True)
            figures["invariantOverhead"] = (round(checked["sessionSeconds"] / reference["sessionSeconds"] - 1, 3)
                                            if reference["sessionSeconds"] else None)
            figures["invariantShare"] = (round(checked["invariantSeconds"] / checked["sessionSeconds"], 3)
                                         if checked["sessionSeconds"] else None)
        if command is not None:
            up = figures["upstream"] = measure_upstream(command, path, seed)
            figures["referenceOverUpstream"] = (round(reference["sessionSeconds"] / up["sessionSeconds"], 2)
                                                if up["sessionSeconds"] > 0 else None)
    seconds = reference["sessionSeconds"]
    figures["podsPlacedPerSecond"] = round(reference["binds"] / seconds, 1) if seconds > 0 else None
    return figures


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
        results.append(measure(size, seed, with_invariants, command))
    if display is not None:
        display.update(len(sizes), measured=f"{len(sizes)} sizes")
        display.close()
    return {"seed": seed, "actions": BENCH_ACTIONS, "tiers": BENCH_TIERS, "sizes": results}


def render_bench(figures: dict[str, Any]) -> str:
    """One row per size and side: the phases in seconds, peak memory, binds."""
    from schedcheck.render import table

    phases = ["load", "open", *figures["actions"], "close"]
    rows = []
    for r in figures["sizes"]:
        for side, label in (("reference", "reference"), ("referenceWithInvariants", "ref+invariants"),
                            ("upstream", "upstream")):
            if side not in r:
                continue
            m = r[side]
            inv = f"{m['invariantSeconds']:.2f}" if "invariantSeconds" in m else "-"
            rows.append([str(r["nodes"]), str(r["pods"]), label,
                         *(f"{m['phases'].get(p, 0.0):.2f}" for p in phases),
                         f"{m['sessionSeconds']:.2f}", inv, f"{m['maxRSSMB']:.0f}", str(m["binds"])])
    header = (f"one session ({', '.join(figures['actions'])}; plugins "
              f"{' | '.join(', '.join(t) for t in figures['tiers'])}), seed {figures['seed']}; seconds\n")
    notes = []
    for r in figures["sizes"]:
        parts = []
        if r.get("invariantOverhead") is not None:
            parts.append(f"invariants add {100 * r['invariantOverhead']:.0f}% to the session "
                         f"({100 * r['invariantShare']:.0f}% of it in the engine)")
        if "upstream" in r:
            up = r["upstream"]
            parts.append(f"reference/upstream {r['referenceOverUpstream']}x; upstream's process "
                         f"{up['processSeconds']:.2f} s, of which {up['outsideSessionSeconds']:.2f} s outside "
                         f"load and session (process start, bind wait {up['bindWaitSeconds']:.2f} s, "
                         f"adapter {up['adapterSeconds']:.2f} s)")
        if parts:
            notes.append(f"{r['nodes']} nodes: " + "; ".join(parts))
    body = table(["nodes", "pods", "side", *phases, "session", "invariants", "peak MB", "binds"], rows)
    return header + body + "".join(n + "\n" for n in notes)


# ---------------------------------------------------------------- the command


DESCRIPTION = ("Build synthetic clusters (N nodes, 10xN pods, half of them pending in gangs across "
               "several queues) and time one session at each size, phase by phase (load, open, each action, "
               "close), for the reference without and with every invariant checked, and for upstream Volcano's "
               "own scheduler (the Go adapter, timed inside its process), with each process's peak memory and "
               "the ratio reference / upstream of the sessions. Prints figures; asserts nothing.")
EPILOG = """examples:
  schedcheck bench                          100 and 1,000 nodes (a few minutes)
  schedcheck bench --sizes 1000,5000        upstream scale: 10,000 and 50,000 pods (tens of minutes)
  schedcheck bench --sizes 100 --json --no-upstream

what upstream's figures include: load is the adapter's decoding of the scenario file plus a fresh mock
cache (informers started and synced, every object added); open..close are OpenSession, each action's
Execute and CloseSession. Process start, Go's init, the adapter's own trace and ledgers, the wait for the
asynchronous binds and writing the result are outside the session and reported apart.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--sizes", default="100,1000",
                        help="comma-separated node counts, 10 pods per node (default 100,1000; upstream scale: "
                             "1000,5000)")
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

"""Where a gate worker's time goes, on a fixed sample: `schedcheck gate --bench N`.

The gate's own figures (cycles/s and shares) come from a live, shared, noisy run; this command draws
the same N documents for a seed and times each stage of checking them, in CPU time of this process
(so other processes on the machine disturb it less), best of `repeats`:

- generation: Hypothesis drawing the scenario documents and their conf variants (the gate's strategy,
  its profile);
- load: reading each scenario (a document, or a document under a variant conf) into objects;
- run: start-up, every session and every invariant, of which invariants;
- the stateful machine: its batches, as the gate runs them, in cycles per second.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import scenario_from_document


@dataclass
class GateBench:
    documents: int  # drawn
    scenarios: int  # checked: the documents and their conf variants
    cycles: int
    generation_ms: float  # per drawn document
    load_ms: float
    run_ms: float  # start-up, sessions and invariants
    invariants_ms: float  # of run_ms
    machine_cycles_per_s: float
    machine_cycles: int

    @property
    def generated_cycles_per_s(self) -> float:
        per_doc = self.generation_ms + self.load_ms + self.run_ms
        return 1000 * self.cycles / self.documents / per_doc if per_doc else 0.0

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "generated_cycles_per_s": round(self.generated_cycles_per_s, 1)}


def bench_gate(documents: int = 300, seed: int = 0, profile: str = "ci", repeats: int = 3,
               machine_batches: int = 4) -> GateBench:
    from schedcheck.gate_properties import (WorkerConfig, WorkerStats, _machine_batch, conf_variants, gate_scenarios,
                                            variant_runs)
    from schedcheck.generators.scenarios import sample_documents

    clock = time.process_time
    strategy = conf_variants(gate_scenarios(profile))
    sample_documents(strategy, 5, seed + 1)  # warm Hypothesis's strategy caches and imports
    generation = []
    for _ in range(repeats):
        started = clock()
        drawn = sample_documents(strategy, documents, seed)
        generation.append(clock() - started)
    load = run = invariants = float("inf")
    cycles = scenarios = 0
    for _ in range(repeats):
        load_s = run_s = inv_s = 0.0
        cycles = scenarios = 0
        for doc, confs in drawn:
            started = clock()  # as the gate does: read once, then copies for the conf variants
            base = scenario_from_document(doc, "<bench>")
            prepared = [prepare() for _, prepare in variant_runs(doc, confs, base)]
            load_s += clock() - started
            for scenario in prepared:
                engine = InvariantEngine(stop_at_first=True, clock=clock)
                started = clock()
                result = run_scenario(scenario, seed=seed, engine=engine, consume=True)
                run_s += clock() - started
                inv_s += sum(engine.cost.values())
                cycles += result.cycles
                scenarios += 1
        if run_s + load_s < run + load:
            load, run, invariants = load_s, run_s, inv_s
    stats = WorkerStats(0)
    cfg = WorkerConfig(budget=0, seed=seed, database=":memory:")
    started = clock()
    for batch in range(machine_batches):
        _machine_batch(cfg, stats, seed * 7919 + batch, 10, time.monotonic())
    machine_s = clock() - started
    per_doc = 1000 / len(drawn)
    return GateBench(len(drawn), scenarios, cycles, min(generation) * per_doc, load * per_doc, run * per_doc,
                     invariants * per_doc, stats.cycles / machine_s if machine_s else 0.0, stats.cycles)


def render_gate_bench(bench: GateBench, seed: int, profile: str) -> str:
    per_doc = bench.generation_ms + bench.load_ms + bench.run_ms

    def share(ms: float) -> str:
        return f"{100 * ms / per_doc:4.1f}%"
    return "\n".join([
        f"gate bench: {bench.documents} {profile}-profile documents drawn, seed {seed}; {bench.scenarios} scenarios "
        f"with their conf variants, {bench.cycles} cycles ({bench.cycles / bench.documents:.2f} per drawn "
        f"document); CPU time of this process, best of 3",
        f"  generation  {bench.generation_ms:6.2f} ms/document  {share(bench.generation_ms)}",
        f"  load        {bench.load_ms:6.2f} ms/document  {share(bench.load_ms)}",
        f"  run         {bench.run_ms:6.2f} ms/document  {share(bench.run_ms)}  "
        f"(invariants {bench.invariants_ms:.2f} ms, {share(bench.invariants_ms)})",
        f"  generated scenarios: {bench.generated_cycles_per_s:.0f} checked cycles/s "
        f"(without Hypothesis's own shrinking and targeting)",
        f"  stateful machine: {bench.machine_cycles_per_s:.0f} checked cycles/s ({bench.machine_cycles} cycles)",
    ])

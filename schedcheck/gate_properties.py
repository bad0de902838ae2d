"""The gate's properties and the loop one gate worker runs.

The property: for every generated scenario, the reference runs every cycle and
no safety invariant is violated (with `strict`, no quality finding either).
Hypothesis generates and shrinks; the worker runs it in batches until its time
budget is spent or a counterexample is found, sharing the example database
with other workers and later runs, so a failure found once is retried first.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings, target
from hypothesis import seed as hypothesis_seed
from hypothesis.control import currently_in_test_context
from hypothesis.errors import FlakyFailure

from schedcheck.gate_corpus import CRASH
from schedcheck.gate_database import FailureStore, open_database
from schedcheck.invariants.engine import InvariantEngine
from schedcheck.runner import RunResult, run_scenario
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.loader import fresh_copy, scenario_from_document, with_scheduler_conf
from schedcheck.scenario.model import Scenario

BATCH_EXAMPLES = 40
SHRINK_CALLS = 400  # Hypothesis shrink attempts after the first failure; the domain minimiser does the rest


@dataclass
class WorkerConfig:
    budget: float  # seconds of searching (minimisation comes on top)
    seed: int
    profile: str = "ci"
    database: str = ".schedcheck/hypothesis"  # a folder, or redis://HOST:PORT/DB (schedcheck.gate_database)
    mutant: str | None = None
    strict: bool = False  # quality findings fail too
    worker: int = 0
    stats_dir: str | None = None
    max_examples: int | None = None  # a fixed example count instead of a time budget (plain pytest)
    machine: bool = True  # alternate scenario batches with stateful-machine batches
    only: list[str] | None = None  # check only these invariants (default: the whole catalog)
    fail_on_known: list[str] = field(default_factory=list)  # known upstream findings that fail (invariants/known.py)
    workers: int = 1  # how many workers share the corpus (each replays every workers-th scenario)
    corpus: bool = True  # replay the packaged scenarios first (schedcheck.gate_corpus)
    corpus_exclude: list[str] = field(default_factory=list)  # scenario names withheld (selftest: the mutant's own)


@dataclass
class Failure:
    doc: dict[str, Any]
    invariant: str
    message: str
    cycle: int
    action: str
    found_after: float  # seconds from the worker's start
    seed: int | None = None  # the tie-breaking seed of the run that failed (None: the gate's own)
    corpus: str | None = None  # the corpus scenario that failed (None: a generated one)


@dataclass
class WorkerStats:
    worker: int
    examples: int = 0
    cycles: int = 0
    invariant_checks: int = 0
    seconds: float = 0.0
    batches: int = 0
    failure: dict[str, Any] | None = field(default=None)
    run_seconds: float = 0.0  # inside the reference and the invariants (the rest: generation, Hypothesis, machine)
    check_seconds: float = 0.0  # of which in the invariants
    checks: dict[str, int] = field(default_factory=dict)  # invariant id -> times checked
    covered: dict[str, int] = field(default_factory=dict)  # "action:x", "plugin:x", "outcome:x" -> scenarios
    combinations: dict[str, int] = field(default_factory=dict)  # "action|plugin|outcome" -> scenarios (_cover)
    findings: int = 0  # quality findings reported (they fail only a strict gate)
    corpus_scenarios: int = 0  # packaged scenarios replayed before generation (not counted in examples)
    corpus_cycles: int = 0  # their cycles (not counted in cycles, the generated search's throughput)
    corpus_seconds: float = 0.0
    shrink_seconds: float = 0.0  # after the first failure: Hypothesis's shrinking (run and check times stop there)


class CounterexampleFound(AssertionError):
    pass


class ShrinkBudgetSpent(BaseException):
    """Not an Exception, so Hypothesis does not take it for another failure: it ends the shrink phase, and
    Hypothesis replays the smallest failing example found so far."""


SEEDS_PER_DOCUMENT = 3  # tie-breaking seeds tried on a drawn scenario whose runs break ties
CONF_VARIANTS = 2  # other confs a drawn cluster is also checked under


def gate_scenarios(profile: str = "ci"):
    """What the gate draws, under the profile's bounds: half `scenarios()` (every feature, each on its own)
    and half `contested_scenarios()` (a full cluster and jobs that preempt or reclaim into it, a state the
    first draws about once in a thousand documents)."""
    from hypothesis import strategies as st

    from schedcheck.generators.contests import contested_scenarios
    from schedcheck.generators.scenarios import scenario_profiles, scenarios

    bounds = scenario_profiles[profile]
    return st.one_of(scenarios(**bounds), contested_scenarios(**bounds))


def conf_variants(documents):
    """(document, confs): each drawn cluster is checked under its own conf and then under CONF_VARIANTS
    more drawn confs (they shrink towards upstream's default conf). Drawing a whole scenario costs more than a cycle of scheduling and
    checking it; drawing a conf costs a tenth of that, so the same budget checks more (cluster, conf)
    pairs. A failure under a variant is saved as that variant's document (the cluster with that conf)."""
    from hypothesis import strategies as st

    from schedcheck.generators.confs import scheduler_confs

    return st.tuples(documents, st.lists(scheduler_confs(), min_size=CONF_VARIANTS, max_size=CONF_VARIANTS))


def variant_runs(doc: dict[str, Any], confs: Any,
                 base: Scenario) -> list[tuple[dict[str, Any], Callable[[], Scenario]]]:
    """(document, prepare) for the drawn document and each conf variant: `prepare` gives that scenario with
    objects of its own, copied from `base` (the drawn document, read once)."""
    runs: list[tuple[dict[str, Any], Callable[[], Scenario]]] = [(doc, lambda: fresh_copy(base))]
    for conf in confs:
        variant = with_conf(doc, conf, named=False)  # named when it fails (hashing it cost 0.3 ms a run)
        runs.append((variant, lambda conf=conf, variant=variant: with_scheduler_conf(base, conf, variant)))
    return runs


def with_conf(doc: dict[str, Any], conf: dict[str, Any], named: bool = True) -> dict[str, Any]:
    """The scenario with another conf (and, `named`, the content-derived name that goes with it; else none
    until `name_variant`)."""
    variant = {**doc, "schedulerConf": conf}
    variant["metadata"] = {**(doc.get("metadata") or {}), "name": ""}
    return name_variant(variant) if named else variant


def name_variant(doc: dict[str, Any]) -> dict[str, Any]:
    """Give a document without a name its content-derived one (in place)."""
    from schedcheck.generators.scenarios import scenario_name

    if not doc["metadata"].get("name"):
        doc["metadata"]["name"] = scenario_name(doc)
    return doc


def check_document(doc: dict[str, Any], seed: int, strict: bool, only: list[str] | None = None,
                   fail_on_known: list[str] | None = None,
                   stats: WorkerStats | None = None,
                   scenario: Scenario | None = None) -> tuple[RunResult | None, dict[str, Any] | None]:
    """Run one generated scenario with every invariant on; the first failure, if any.

    `scenario`, when given, is `doc` already read, with objects of its own (the run changes them).
    An exception out of the reference is a failure too (`reference.crash`), never a harness error.
    """
    if scenario is None:
        try:
            scenario = scenario_from_document(doc, "<generated>")
        except ScenarioError:
            return None, None  # an edit made the document unreadable: nothing to judge (never a generated one)
    engine = InvariantEngine(only=only, stop_at_first=True, fail_on_known=fail_on_known or ())
    try:
        result = run_scenario(scenario, seed=seed, engine=engine, consume=True)  # built for this run alone
    except Exception as exc:  # noqa: BLE001 - a crash of the scheduler under test is a finding
        return None, {"id": CRASH, "message": f"{type(exc).__name__}: {exc}", "cycle": -1, "action": ""}
    finally:
        if stats is not None:
            stats.check_seconds += sum(engine.cost.values())
            for inv_id, count in engine.checks.items():
                stats.checks[inv_id] = stats.checks.get(inv_id, 0) + count
    if stats is not None:
        _cover(stats, scenario, result)
        stats.findings += len(result.findings)
    failures = result.violations + (result.findings if strict else [])
    return result, (failures[0] if failures else None)


def _cover(stats: WorkerStats, scenario: Any, result: RunResult) -> None:
    """What this scenario reached: its actions and plugins, and the kinds of decision it produced; and the
    (action, plugin, outcome) combinations: an action that bound, pipelined or evicted with a plugin on."""
    reached = [f"action:{a}" for a in scenario.conf.actions]
    plugins = {p.name for tier in scenario.conf.tiers for p in tier.plugins}
    reached += [f"plugin:{p}" for p in plugins]
    outcomes = {"bind": bool(result.binds), "evict": bool(result.evicted), "pipeline": bool(result.pipelined),
                "admit": any(p == "Inqueue" for p in result.pod_group_phases.values()),
                "finding": bool(result.findings), "multi-session": result.cycles > 1}
    reached += [f"outcome:{name}" for name, hit in outcomes.items() if hit]
    for key in set(reached):
        stats.covered[key] = stats.covered.get(key, 0) + 1
    decisions = {(step["action"], step["op"]) for step in result.trace if step["action"]}
    for key in {f"{action}|{plugin}|{op}" for action, op in decisions for plugin in plugins}:
        stats.combinations[key] = stats.combinations.get(key, 0) + 1


def _mutant_context(name: str | None):
    if not name:
        return contextlib.nullcontext()
    from schedcheck.mutants import mutant

    return mutant(name)


def run_worker(cfg: WorkerConfig, strategy=None) -> tuple[WorkerStats, Failure | None]:
    """Search until the budget (or example count) is spent or a counterexample is found."""
    if strategy is None:
        strategy = conf_variants(gate_scenarios(cfg.profile))
    from schedcheck.gc_tuning import tune_gc

    tune_gc()  # a worker may be a pytest-xdist or Dask process that did not start through the CLI
    store = FailureStore(open_database(cfg.database), cfg.mutant, cfg.strict)
    stats = WorkerStats(cfg.worker)
    started = time.monotonic()
    deadline = started + cfg.budget
    last_failure: list[Failure] = []
    last_write = [0.0]
    first_found: list[float] = []
    at_first_failure: list[float] = []  # run and check seconds when the first failure was found
    shrink_calls = [0]
    last_example: list[Any] = []

    def run_one(doc: dict[str, Any],
                prepare: Callable[[], Scenario]) -> tuple[RunResult | None, dict[str, Any] | None, int]:
        """One scenario under the tie-breaking seeds: (result, first failure, the seed that failed).
        `prepare` gives the scenario read from `doc` with objects of its own, for each run."""
        result = failure = None
        failing_seed = cfg.seed
        # A scenario whose run broke a tie runs again under more tie-breaking seeds: a bug that needs one
        # particular tie-break is met sooner.
        for offset in range(SEEDS_PER_DOCUMENT):
            failing_seed = cfg.seed + offset
            run_started = time.perf_counter()
            result, failure = check_document(doc, failing_seed, cfg.strict, cfg.only, cfg.fail_on_known, stats,
                                             scenario=prepare())
            stats.run_seconds += time.perf_counter() - run_started
            if result is not None:
                stats.cycles += result.cycles
                stats.invariant_checks += result.invariant_checks
            if failure is not None or result is None or not result.ties:
                break  # no tie broken: another seed would decide the same
        return result, failure, failing_seed

    def body(example: Any) -> None:
        """`example`: a scenario document, or (document, confs): the document, then its cluster under each
        of the other confs (conf_variants)."""
        doc, confs = example if isinstance(example, tuple) else (example, ())
        if cfg.max_examples is None and time.monotonic() > deadline and not last_failure:
            return  # the budget is spent: let the batch finish quickly
        if last_failure:
            shrink_calls[0] += 1
            if shrink_calls[0] > SHRINK_CALLS and example != last_example[0]:
                # enough shrinking (counted, so it stays deterministic): stop Hypothesis's shrinker, which
                # would otherwise go on until its own 300 s limit, and keep the best so far
                raise ShrinkBudgetSpent
        results: list[RunResult] = []
        run_started = time.perf_counter()
        try:
            # read once: the tie-breaking reruns and the conf variants copy its objects
            base = scenario_from_document(doc, "<generated>")
        except ScenarioError:
            return  # an edit made the document unreadable: nothing to judge (never a generated one)
        finally:
            stats.run_seconds += time.perf_counter() - run_started
        for candidate, prepare in variant_runs(doc, confs, base):
            try:
                result, failure, failing_seed = run_one(candidate, prepare)
            except ScenarioError:
                continue  # a conf the loader refuses (never a drawn one)
            stats.examples += 1
            if result is not None:
                results.append(result)
            if failure is not None:
                name_variant(candidate)
                if not first_found:
                    first_found.append(time.monotonic() - started)
                    at_first_failure[:] = [stats.run_seconds, stats.check_seconds]
                last_example[:] = [example]
                last_failure[:] = [Failure(candidate, failure["id"], failure.get("message", ""),
                                           failure.get("cycle", -1), failure.get("action", ""), first_found[0],
                                           failing_seed)]
                raise CounterexampleFound(f"{failure['id']}: {failure.get('message', '')}")
        if results and currently_in_test_context():  # not for a saved failure retried
            # steer the search towards contested states: evictions, reservations, admissions held back
            target(float(max(len(r.evicted) for r in results)), label="evictions")
            target(float(max(len(r.pipelined) for r in results)), label="pipelined")
            target(float(max(sum(1 for phase in r.pod_group_phases.values() if phase == "Pending")
                             for r in results)), label="jobs left pending")
            # victims tried: evictions made inside statements, kept or discarded (the preempt/reclaim search)
            target(float(max(sum(1 for step in r.trace if step["op"] == "evict") for r in results)),
                   label="victims tried")
        if time.monotonic() - last_write[0] > 1.0:
            stats.seconds = time.monotonic() - started
            _write_stats(cfg, stats)
            last_write[0] = time.monotonic()

    def retry_saved() -> bool:
        """Failures any worker saved (now or in an earlier run) are retried before anything is generated."""
        for doc in store.untried():
            try:
                body(doc)
            except CounterexampleFound:
                return True
            if cfg.only is None and not cfg.fail_on_known:
                store.forget(doc)  # passes under the whole catalog: the bug is gone
        return False

    # batches take turns: generated scenarios, the stateful machine, edits of corpus scenarios
    kinds = ["generated"] + (["machine"] if cfg.machine else []) + (["corpus-mutations"] if cfg.corpus else [])
    mutations = None
    with _mutant_context(cfg.mutant):
        batch = 0
        if cfg.corpus:
            found = _replay_corpus(cfg, stats, started)
            if found is not None:
                last_failure[:] = [found]
            deadline += stats.corpus_seconds  # the budget is the generated search's
        while not last_failure:
            if cfg.max_examples is None and time.monotonic() > deadline:
                break
            if retry_saved():
                break
            examples = cfg.max_examples if cfg.max_examples is not None else BATCH_EXAMPLES
            batch_seed = cfg.seed * 7919 + cfg.worker * 104729 + batch
            kind = kinds[batch % len(kinds)]
            if kind == "machine":
                machine_failure = _machine_batch(cfg, stats, batch_seed, max(5, examples // 4), started)
                if machine_failure is not None:
                    last_failure[:] = [machine_failure]
                    break
            else:
                if kind == "corpus-mutations" and mutations is None:
                    mutations = _corpus_mutations(cfg)
                chosen = mutations if kind == "corpus-mutations" else strategy
                test = _batch_test(body, chosen, examples, batch_seed)
                try:
                    test()
                except (CounterexampleFound, ShrinkBudgetSpent):
                    break
                except FlakyFailure:
                    # the failing example passed when Hypothesis ran it again (the budget ran out between the
                    # runs, or the bug depends on state): keep what was found first rather than crash the gate
                    if last_failure:
                        break
            batch += 1
            if cfg.max_examples is not None:
                break
    stats.batches = batch + 1
    stats.seconds = time.monotonic() - started
    failure = last_failure[0] if last_failure else None
    if failure is not None and failure.corpus is None:
        stats.shrink_seconds = max(0.0, stats.seconds - failure.found_after)
        if at_first_failure:
            stats.run_seconds, stats.check_seconds = at_first_failure
    if failure is not None and failure.doc:
        store.save(failure.doc)  # every other worker, and the next run, retries it first
    if failure is not None:
        stats.failure = {"invariant": failure.invariant, "cycle": failure.cycle, "action": failure.action,
                         "foundAfter": round(failure.found_after, 2)}
    _write_stats(cfg, stats)
    return stats, failure


def _corpus_mutations(cfg: WorkerConfig):
    """Edits of the corpus scenarios (generators/corpus_mutations.py), the withheld ones left out."""
    from schedcheck.gate_corpus import corpus, corpus_documents
    from schedcheck.generators.corpus_mutations import corpus_mutations

    withheld = set(cfg.corpus_exclude)
    docs = [doc for entry, doc in zip(corpus(), corpus_documents())
            if entry.name not in withheld and not _uses_extender(doc)]
    return corpus_mutations(docs)


def _uses_extender(doc: dict[str, Any]) -> bool:
    """The extender scenarios stay out of the generated search, as the extender stays out of drawn confs:
    they need the process their extenderServer names (relative to their own file) or a URL."""
    return "extenderServer" in doc or "extender" in str(doc.get("schedulerConf", ""))


def _replay_corpus(cfg: WorkerConfig, stats: WorkerStats, started: float) -> Failure | None:
    from schedcheck.gate_corpus import SEED, replay_corpus

    outcome = replay_corpus(worker=cfg.worker, workers=cfg.workers, exclude=cfg.corpus_exclude, only=cfg.only,
                            fail_on_known=cfg.fail_on_known, stats=stats)
    stats.corpus_scenarios += outcome.scenarios
    stats.corpus_cycles += outcome.cycles
    stats.corpus_seconds += outcome.seconds
    if outcome.failure is None or outcome.doc is None:
        return None
    f = outcome.failure
    return Failure(outcome.doc, f["id"], f.get("message", ""), f.get("cycle", -1), f.get("action", ""),
                   time.monotonic() - started, SEED, f.get("scenario"))


def _machine_batch(cfg: WorkerConfig, stats: WorkerStats, batch_seed: int, examples: int,
                   started: float) -> Failure | None:
    """Run the stateful machine (sessions in a row, the world changing between) for one batch."""
    from hypothesis.stateful import run_state_machine_as_test

    from schedcheck.generators.machine import machine_for

    machine = machine_for(batch_seed, strict=cfg.strict, only=cfg.only)
    try:
        run_state_machine_as_test(machine, settings=settings(
            max_examples=examples, stateful_step_count=20, deadline=None, derandomize=True, database=None,
            suppress_health_check=list(HealthCheck), print_blob=False, phases=GATE_PHASES))
    except Exception as exc:  # noqa: BLE001 - a violation (AssertionError) or a crash of the reference
        found = machine.last_failure
        stats.examples += examples
        stats.cycles += machine.sessions_total
        stats.invariant_checks += machine.checks_total
        found_at = (machine.first_found_at or time.monotonic()) - started
        if found is not None and found[0] is not None:
            doc, violation = found
            return Failure(doc, violation["id"], violation.get("message", ""), violation.get("cycle", -1),
                           violation.get("action", ""), found_at)
        return Failure({}, CRASH, f"{type(exc).__name__}: {exc}", -1, "", time.monotonic() - started)
    stats.examples += examples
    stats.cycles += machine.sessions_total
    stats.invariant_checks += machine.checks_total
    return None


# Every phase but explain: explain traces every line run while Hypothesis shrinks (sys.settrace), to say which
# lines only failing examples reach, which the gate never prints; it made shrinking 4-6 times slower.
GATE_PHASES = [phase for phase in Phase if phase is not Phase.explain]


def _batch_test(body: Callable[[Any], None], strategy, examples: int, batch_seed: int):
    # database=None: a seeded test neither saves nor replays examples (FailureStore does that instead)
    @hypothesis_seed(batch_seed)
    @settings(max_examples=examples, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck), phases=GATE_PHASES, print_blob=False,
              report_multiple_bugs=False)
    @given(strategy)
    def test(example: Any) -> None:
        body(example)

    # Hypothesis would hash the test's source for a database key at every batch (inspect.getsource:
    # about 2% of a worker); the gate runs without Hypothesis's database, so any fixed key does.
    test._hypothesis_internal_database_key = b"schedcheck-gate"  # type: ignore[attr-defined]
    return test


def _write_stats(cfg: WorkerConfig, stats: WorkerStats) -> None:
    if not cfg.stats_dir:
        return
    path = Path(cfg.stats_dir) / f"worker-{cfg.worker}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(stats)), encoding="utf-8")
    os.replace(tmp, path)

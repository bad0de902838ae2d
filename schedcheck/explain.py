"""`schedcheck explain SCENARIO --job NS/NAME`: why a job stays pending, as a minimal set of conflicting
constraints (the unsat core of "this job fits now", model/pending.py)."""

from __future__ import annotations

import argparse
import json
import sys

DESCRIPTION = ("Run the reference scheduler on SCENARIO, then ask Z3 whether the job could be placed in the last "
               "session's state; when it cannot, print a minimal set of conflicting constraints (node capacity, "
               "predicates, gang size, queue deserved and state, enqueue admission) in scheduler terms.")
EPILOG = """example:
  schedcheck explain tests/scenarios/resources-insufficient-everywhere.yaml --job bi/analytics
  schedcheck explain tests/scenarios/proportion-capability-cap.yaml --job team-c/capped-job --json

exit status: 0 explained, 1 could not explain (e.g. the job is not pending), 2 unreadable input or unknown job"""

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenario", help="scenario YAML file")
    parser.add_argument("--job", required=True, help="the job's PodGroup as NAMESPACE/NAME")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--seed", type=int, default=0, help="tie-break seed of the run (default 0)")
    parser.add_argument("--conf", help="scheduler configuration file overriding the scenario's")


def main(args: argparse.Namespace) -> int:
    from schedcheck.scenario.errors import ScenarioError
    from schedcheck.scenario.loader import load_scenario

    if args.job.count("/") != 1 or not all(args.job.split("/")):
        print(f"schedcheck: explain: --job {args.job}: expected NAMESPACE/NAME", file=sys.stderr)
        return EXIT_USAGE
    try:
        scenario = load_scenario(args.scenario, conf_path=args.conf)
    except ScenarioError as exc:
        print(f"schedcheck: {exc}", file=sys.stderr)
        return EXIT_USAGE
    groups = {f"{pg.namespace}/{pg.name}" for pg in scenario.objects.pod_groups}
    if args.job not in groups:
        print(f"schedcheck: explain: {args.scenario}: job {args.job}: no such PodGroup in the scenario",
              file=sys.stderr)
        return EXIT_USAGE
    print(f"seed {args.seed}", file=sys.stderr)
    explanation = _run(scenario, args.job, args.seed)
    if explanation is None:
        payload = {"job": args.job, "pending": None, "explained": False,
                   "note": f"job {args.job} is not in the scheduling session (unknown queue or no tasks?)"}
    else:
        payload = explanation.to_json()
    payload["scenario"] = scenario.name
    payload["seed"] = args.seed
    if args.json:
        json.dump(payload, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(_render(payload))
    return EXIT_OK if payload.get("explained") else EXIT_FAILED


def _run(scenario, job_key: str, seed: int):
    from schedcheck.model.pending import explain
    from schedcheck.reference.framework.session import SessionObserverHooks
    from schedcheck.reference.scheduler import Scheduler

    found: list = [None]

    def on_close(ssn) -> None:
        found[0] = None
        for job in ssn.jobs.values():
            if f"{job.namespace}/{job.name}" == job_key:
                found[0] = explain(ssn, job)

    def factory() -> SessionObserverHooks:
        hooks = SessionObserverHooks()
        hooks.on_session_close.append(on_close)
        return hooks

    scheduler = Scheduler(scenario.objects, scenario.conf, seed=seed, now=scenario.now, server_options=scenario.options,
                          hooks_factory=factory)
    for index in range(scenario.cycles):
        if index:
            scheduler.advance()
        scheduler.run_once()
    return found[0]


def _render(payload: dict) -> str:
    lines = [f"job {payload['job']} (scenario {payload['scenario']}, seed {payload['seed']})"]
    if not payload.get("pending"):
        lines.append(f"not pending: {payload.get('note', '')}")
        return "\n".join(lines) + "\n"
    lines.append(f"pending tasks: {', '.join(payload['pendingTasks'])}")
    if payload["explained"]:
        lines.append(f"it cannot be placed now; a minimal set of conflicting constraints "
                     f"({len(payload['reasons'])} of {payload['constraints']}):")
        lines += [f"  - {reason}" for reason in payload["reasons"]]
    else:
        lines.append(f"could not explain: {payload['note']}")
    return "\n".join(lines) + "\n"

"""`schedcheck fuzz-input`: malformed and extreme scenarios through the whole input path.

Structure-aware corruption of real scenarios (the packaged mutant scenarios, or the files given):
values replaced by junk and extremes (wrong types, negative, huge or unreadable quantities, odd
encodings), objects dropped, duplicated or emptied, raw text mangled, and cache dumps (dumper.go's shape, some cut
short) made of them for `--from-dump`. Each case must either be
rejected by the loader with one line (no newline, naming the file) or load and then run, check (its
report written), replay and conform (the reference behind protocol 1) without an exception and within a time limit. Crashes and hangs are saved,
with the input that caused them, to reports/<time>-fuzz-input/. A small fixed slice runs in the suite
(tests/test_fuzz_input.py).
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

DESCRIPTION = ("Corrupt real scenarios (types, quantities, references, encodings, raw text) and feed each to the "
               "loader, the runner, the report writer, replay and conform: every case must be rejected in one line or run "
               "without an exception or a hang. Crashes are saved with their input.")
EPILOG = """example:
  schedcheck fuzz-input --count 10000 --seed 1
  schedcheck fuzz-input --count 500 tests/scenarios

exit status: 0 no crash or hang, 1 some, 2 usage"""

CONFORM_IMPL = "python:schedcheck.conform.reference:run"  # the reference behind protocol 1

JUNK: tuple[Any, ...] = (
    None, 0, -1, 1.5, True, "", "x", "-1", "4GB", "1.5.5", [], [1], {}, {"a": 1}, {"kind": "List"},
    "1e400", 10**30, 2**63, "8Ei", 1e300, "NaN", "Infinity", "+5", " 5 ", "0.000000001m", "é", "\x00", "a" * 300,
    {"cpu": "1e400"}, [{"name": "gang"}], "enqueue, allocate, nope", "true", "maybe", -10**20,
)
TEXT_NOISE = ":-[]{}\"' \n\t#&*!|>%@`,?0a\u00e9\ufeff"
CASE_SECONDS = 20  # a case running longer than this is a hang


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", help="scenario files or folders to corrupt (default: the packaged "
                                                 "mutant scenarios)")
    parser.add_argument("--count", type=int, default=1000, help="cases to try (default 1000)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the corruption (default: from the clock)")
    parser.add_argument("--report", default="reports", help="where crashes are saved (default reports/)")


def corpus(paths: list[str]) -> list[tuple[str, str]]:
    """(name, text) of every scenario to start from."""
    files: list[Path] = []
    if not paths:
        files = sorted((Path(__file__).parent / "mutant_scenarios").glob("*.yaml"))
    for raw in paths:
        path = Path(raw)
        files += sorted(path.rglob("*.yaml")) if path.is_dir() else [path]
    return [(f.name, f.read_text(encoding="utf-8")) for f in files]


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if prefix:
        yield prefix
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            yield from _paths(value, prefix + (index,))


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    for step in path[:-1]:
        doc = doc[step]
    doc[path[-1]] = value


DUMP = "--from-dump"  # the first line of a case that goes through `run --from-dump`


def as_dump(rng: random.Random, text: str) -> str:
    """The scenario's objects shaped as a scheduler cache dump (dumper.go), sometimes cut short."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return DUMP + "\n" + text  # already mangled text: a dump that is not JSON
    listed = doc.get("objects") if isinstance(doc, dict) else None
    objects = [o for o in listed if isinstance(o, dict)] if isinstance(listed, list) else []
    strip = [{k: v for k, v in o.items() if k not in ("apiVersion", "kind")} for o in objects]
    nodes = {str(i): {"Node": o} for i, o in enumerate(strip) if objects[i].get("kind") == "Node"}
    jobs = {str(i): {"PodGroup": o, "Tasks": {}} for i, o in enumerate(strip) if objects[i].get("kind") != "Node"}
    dump = json.dumps(nodes, default=str) + "\n{}\n" + json.dumps(jobs, default=str)
    if rng.random() < 0.3:
        dump = dump[:rng.randrange(len(dump))]
    return DUMP + "\n" + dump


def corrupt(rng: random.Random, text: str) -> str:
    """One malformed variant of a scenario's text (or, one time in ten, of a cache dump made of it)."""
    if rng.random() < 0.1:
        return as_dump(rng, _corrupt_scenario(rng, text) if rng.random() < 0.5 else text)
    return _corrupt_scenario(rng, text)


def _corrupt_scenario(rng: random.Random, text: str) -> str:
    if rng.random() < 0.15:  # raw text: the YAML itself broken
        chars = list(text)
        for _ in range(rng.randint(1, 6)):
            chars[rng.randrange(len(chars))] = rng.choice(TEXT_NOISE)
        return "".join(chars)
    doc = yaml.safe_load(text)
    paths = list(_paths(doc))
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(paths)
        try:
            roll = rng.random()
            parent = doc
            for step in path[:-1]:
                parent = parent[step]
            if roll < 0.1 and isinstance(parent, list):
                parent.append(copy.deepcopy(parent[path[-1]]))  # a duplicate
            elif roll < 0.2 and isinstance(parent, (dict, list)):
                del parent[path[-1]]  # a missing field or object
            else:
                _set(doc, path, copy.deepcopy(rng.choice(JUNK)))
        except (KeyError, IndexError, TypeError):
            continue
        paths = list(_paths(doc))
        if not paths:
            break
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


class CaseTimeout(BaseException):
    """The case's time is up. Not an Exception, so no handler on the way (the commands turn a scheduler's
    exception into one line) can swallow it and let the case run on unbounded."""


@contextmanager
def _time_limit(seconds: int) -> Iterator[None]:
    def expired(signum: int, frame: Any) -> None:
        raise CaseTimeout(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def try_case(text: str, name: str, workdir: Path) -> tuple[str, str | None]:
    """("rejected" | "ran" | "problem", what went wrong)."""
    from schedcheck.cli import main as cli_main
    from schedcheck.scenario.errors import ScenarioError
    from schedcheck.scenario.loader import load_scenario_text

    dump = text.startswith(DUMP + "\n")
    try:
        with _time_limit(CASE_SECONDS):
            try:
                if dump:
                    from schedcheck.scenario.loader import load_from_dump

                    path = workdir / name
                    path.write_text(text[len(DUMP) + 1:], encoding="utf-8")
                    load_from_dump(path)
                else:
                    load_scenario_text(text, name)
            except ScenarioError as err:
                message = str(err)
                if "\n" in message or name not in message:
                    return "problem", f"rejection is not one line naming the file: {message!r}"
                return "rejected", None
            path = workdir / name
            if dump:
                runs = [["run", "--from-dump", str(path), "--json"],
                        ["check", "--from-dump", str(path), "--json", "--report", str(workdir)]]
            else:
                path.write_text(text, encoding="utf-8")
                folder = workdir / f"conform-{name}"  # conform reads a folder: this case alone
                folder.mkdir(exist_ok=True)
                (folder / "case.yaml").write_text(text, encoding="utf-8")
                runs = [["run", str(path), "--json"], ["check", str(path), "--json", "--report", str(workdir)],
                        ["replay", str(path)],
                        ["conform", "--impl", CONFORM_IMPL, "--scenarios", str(folder), "--budget", "30",
                         "--minimise-budget", "5", "--report", str(workdir), "--json"]]
            for argv in runs:
                with open(workdir / "out", "w", encoding="utf-8") as sink:
                    saved = sys.stdout, sys.stderr
                    sys.stdout = sys.stderr = sink
                    try:
                        code = cli_main(argv)
                    finally:
                        sys.stdout, sys.stderr = saved
                if code not in (0, 1, 2):
                    return "problem", f"`schedcheck {argv[0]}` exited {code}"
    except CaseTimeout as err:
        return "problem", f"hang: {err}"
    except Exception as exc:  # noqa: BLE001 - any exception out of the harness is the finding
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        return "problem", f"{type(exc).__name__} at {Path(frame.filename).name}:{frame.lineno}: {exc}"
    return "ran", None


def campaign(texts: list[tuple[str, str]], count: int, seed: int, report: Path | None,
             out: Any = sys.stderr) -> dict[str, Any]:
    rng = random.Random(seed)
    found: dict[str, tuple[str, str]] = {}  # what went wrong -> (file name, input)
    rejected = ran = 0
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="schedcheck-fuzz-") as tmp:
        workdir = Path(tmp)
        for index in range(count):
            name, text = rng.choice(texts)
            case = corrupt(rng, text)
            outcome, problem = try_case(case, f"case{index}-{name}", workdir)
            rejected += outcome == "rejected"
            ran += outcome == "ran"
            if problem is not None:
                found.setdefault(problem[:120], (name, case))
            if out is not None and (index + 1) % 250 == 0:
                print(f"  {index + 1}/{count} cases, {len(found)} problem(s), {time.monotonic() - started:.0f} s",
                      file=out)
    summary = {"seed": seed, "cases": count, "rejectedInOneLine": rejected, "ran": ran, "problems": len(found),
               "seconds": round(time.monotonic() - started, 1), "found": sorted(found)}
    if found and report is not None:
        from schedcheck.report_folder import write_report_folder

        files = {"summary.json": json.dumps(summary, indent=2) + "\n"}
        for i, (problem, (name, case)) in enumerate(sorted(found.items())):
            header = "".join(f"# {line}\n" for line in problem.splitlines())  # the case stays loadable
            files[f"case-{i}.yaml"] = f"{header}# from {name}\n" + case
        summary["report"] = str(write_report_folder(report, "fuzz-input", files))
    return summary


def main(args: argparse.Namespace) -> int:
    if args.count <= 0:
        print("schedcheck: fuzz-input: --count must be positive", file=sys.stderr)
        return 2
    try:
        texts = corpus(args.paths)
    except OSError as exc:
        print(f"schedcheck: fuzz-input: {exc}", file=sys.stderr)
        return 2
    if not texts:
        print("schedcheck: fuzz-input: no scenario files to start from", file=sys.stderr)
        return 2
    from schedcheck.report_folder import unusable_parent

    problem = unusable_parent(Path(args.report))
    if problem:
        print(f"schedcheck: fuzz-input: --report {args.report}: {problem}", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else int(time.time()) % 100_000
    print(f"schedcheck fuzz-input: seed {seed}, {args.count} cases from {len(texts)} scenario(s)", file=sys.stderr)
    summary = campaign(texts, args.count, seed, Path(args.report))
    print(f"{summary['cases']} cases: {summary['rejectedInOneLine']} rejected in one line, {summary['ran']} ran, "
          f"{summary['problems']} problem(s) in {summary['seconds']} s")
    for problem in summary["found"]:
        print(f"  PROBLEM {problem}")
    if summary.get("report"):
        print(f"report: {summary['report']}")
    return 1 if summary["problems"] else 0

"""`schedcheck upstream-tests`: upstream Volcano's own unit-test cases, extracted and run on the reference.

Upstream's action and plugin tests describe each case as a `uthelper.TestCommonStruct` (pods, nodes,
PodGroups, queues, priority classes, quotas, hypernodes, the tiers it opens its session with, the actions
it runs, and what it expects: ExpectBindMap, ExpectEvicted, ExpectPipeLined, ExpectStatus,
ExpectTaskStatusNums and the bind and evict counts). This command runs those tests in a Volcano checkout
with `go test -overlay` (the checkout is never written to) laying adapters/volcano-unittests/scenario_dump.go
into pkg/scheduler/uthelper, so every case that reaches `Run` is written out as a schedcheck scenario whose
`expect` block is upstream's own expectation. Each scenario then runs on the reference at seed 0 (and, if
that disagrees, at seeds 1-7 for a tie-break): agree, agree only under another tie-break, disagree, or
unsupported (a test-only plugin the dump does not recognise, a conf upstream's loader refuses, ...). The
test-only plugins it does recognise (uthelper.RejecterPlugin, preempt's device-fit-after-eviction fixture,
shuffle's gomock victim plugin) are written as schedcheck's test plugins (schedcheck/scenario/testplugins.py). The scenarios and a report go to the report folder.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

DUMP_SOURCE = Path(__file__).resolve().parents[2] / "adapters" / "volcano-unittests" / "scenario_dump.go"
HELPER = Path("pkg") / "scheduler" / "uthelper" / "helper.go"
DEFAULT_PACKAGES = ("./pkg/scheduler/actions/...", "./pkg/scheduler/plugins/...")
TIE_SEEDS = range(1, 8)
HOOKS = (  # (a line of helper.go, the call put after it)
    ("func (test *TestCommonStruct) RegisterSession(tiers []conf.Tier, config []conf.Configuration) "
     "*framework.Session {", "\tschedcheckRemember(test, tiers, config)"),
    ("func (test *TestCommonStruct) Run(actions []framework.Action) {", "\tschedcheckDump(test, actions)"),
)
# hooks laid in only when uthelper has all of them (else every Expect* field stays an expectation): which
# checks a test asks for, and Close, where the case is written again with only the expectations it checked
CHECK_HOOKS = tuple(
    (f"func (test *TestCommonStruct) {name}(caseIndex int) {result} {{", f'\tschedcheckChecked(test, "{name}")')
    for name, result in (("CheckAll", "(err error)"), ("CheckBind", "error"), ("CheckEvict", "error"),
                         ("CheckPipelined", "error"), ("CheckTaskStatusNums", "error"), ("CheckPGStatus", "error"),
                         ("CheckBindInHyperNode", "error"))
) + (("func (test *TestCommonStruct) Close() {", "\tschedcheckClosed(test)"),)
EMPTY_STATUS = {"Node": ("daemonEndpoints", "nodeInfo"), "Queue": ("allocated", "reservation")}
PID_SUFFIX = re.compile(r"\.\d+\.json$")
HELP = "extract upstream Volcano's own unit-test cases as scenarios and run them on the reference"
DESCRIPTION = ("Run upstream's action and plugin unit tests in a Volcano checkout (go test -overlay; the checkout "
               "is not written to), write every uthelper.TestCommonStruct case as a scenario with upstream's "
               "expectations, and run each on the reference: which agree, which need another tie-break, which "
               "disagree, which use what the reference does not model. Exit 0 when every supported case agrees, "
               "1 when one disagrees, 2 on a usage error.")
EPILOG = """examples:
  schedcheck upstream-tests --src ~/src/volcano
  schedcheck upstream-tests --src ~/src/volcano --packages ./pkg/scheduler/actions/preempt/ --json
  schedcheck upstream-tests --from reports/<time>-upstream-tests/scenarios   # rerun extracted cases only
"""


class UpstreamTestsError(RuntimeError):
    """A one-line usage or environment error."""


@dataclass
class CaseResult:
    name: str
    test: str  # upstream file and test function
    case: str  # upstream's case name
    verdict: str  # agree | tie | disagree | unsupported
    detail: str = ""
    seed: int | None = None  # the tie-break seed that agrees (verdict tie)
    violations: list[str] = field(default_factory=list)  # invariants the reference broke on the case (seed 0)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "test": self.test, "case": self.case, "verdict": self.verdict,
                "detail": self.detail, "seed": self.seed, "violations": self.violations}


@dataclass
class Summary:
    source: str
    cases: list[CaseResult] = field(default_factory=list)
    seconds: float = 0.0
    go_seconds: float = 0.0
    unbuilt: list[str] = field(default_factory=list)  # Go packages whose tests did not build (none of their cases ran)

    def counts(self) -> dict[str, int]:
        out = {"agree": 0, "tie": 0, "disagree": 0, "unsupported": 0}
        for c in self.cases:
            out[c.verdict] += 1
        return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--src", metavar="DIR", help="a Volcano checkout (default: $SCHEDCHECK_VOLCANO_SRC)")
    parser.add_argument("--packages", metavar="PKGS", default=",".join(DEFAULT_PACKAGES),
                        help="comma-separated Go package patterns (default: every action and plugin)")
    parser.add_argument("--from", dest="from_dir", metavar="DIR",
                        help="skip go test: judge the scenarios already extracted into DIR")
    parser.add_argument("--report", metavar="DIR", default="reports", help="where the report folder goes")
    parser.add_argument("--keep-agreeing", metavar="DIR",
                        help="also copy every case the reference meets without an invariant violation into DIR "
                             "(how schedcheck/corpus/upstream/ is made; existing files are left alone)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


UNBUILT = re.compile(r"^FAIL\s+(\S+)\s+\[(?:setup|build) failed\]", re.MULTILINE)


def extract(src: Path, packages: list[str], out_dir: Path) -> tuple[float, list[str]]:
    """Run the packages' tests with the dump hook; the scenarios land in out_dir. Returns go's seconds and
    the packages whose tests did not build."""
    go = shutil.which("go")
    if go is None:
        raise UpstreamTestsError("go not found on PATH (install Go >= 1.26)")
    helper = src / HELPER
    if not helper.is_file():
        raise UpstreamTestsError(f"{src}: no {HELPER} (not a Volcano checkout with uthelper)")
    text = helper.read_text(encoding="utf-8")
    for line, call in HOOKS:
        if line not in text:
            raise UpstreamTestsError(f"{helper}: no line {line!r} to hook (this Volcano version's uthelper differs)")
        text = text.replace(line, f"{line}\n{call}", 1)
    if all(line in text for line, _ in CHECK_HOOKS):  # all or none: a check not seen would drop its expectations
        for line, call in CHECK_HOOKS:
            text = text.replace(line, f"{line}\n{call}", 1)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="schedcheck-upstream-tests-") as scratch:
        patched = Path(scratch) / "helper.go"
        patched.write_text(text, encoding="utf-8")
        overlay = Path(scratch) / "overlay.json"
        overlay.write_text(json.dumps({"Replace": {str(helper.resolve()): str(patched),
                                                   str((helper.parent / DUMP_SOURCE.name).resolve()): str(DUMP_SOURCE)}}))
        raw = Path(scratch) / "raw"
        raw.mkdir()
        env = {**os.environ, "SCHEDCHECK_DUMP_DIR": str(raw),
               "GOFLAGS": (os.environ.get("GOFLAGS", "") + " -mod=mod").strip()}
        started = time.monotonic()
        done = subprocess.run([go, "test", "-count=1", "-overlay", str(overlay), *packages], cwd=src, env=env,
                              capture_output=True, text=True)
        seconds = time.monotonic() - started
        unbuilt = sorted(set(UNBUILT.findall(done.stdout + "\n" + done.stderr)))
        files = sorted(raw.glob("*.json"))
        if not files:
            lines = [ln for ln in (done.stderr or done.stdout).splitlines() if ln.strip()]
            raise UpstreamTestsError(f"go test wrote no case (exit {done.returncode}): "
                                     f"{lines[-1].strip() if lines else 'no output'}")
        origin = _origin(src)
        for path in files:
            doc = tidy(json.loads(path.read_text(encoding="utf-8")))
            doc.setdefault("metadata", {}).setdefault("annotations", {})[SOURCE_NOTE] = origin
            target = out_dir / (PID_SUFFIX.sub("", path.name) + ".yaml")
            target.write_text(yaml.safe_dump(doc, sort_keys=False, width=120), encoding="utf-8")
    return seconds, unbuilt


SOURCE_NOTE = "schedcheck.io/upstream-source"
TEST_PLUGINS_NOTE = "schedcheck.io/upstream-test-plugins"  # the test-only plugins the dump recognised
CHECKS_NOTE = "schedcheck.io/upstream-checks"  # the checks a test asked for, when not all (scenario_dump.go)


def _origin(src: Path) -> str:
    """volcano@<commit> for a git checkout, else the folder's path."""
    try:
        done = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return str(src)
    return f"volcano@{done.stdout.strip()[:12]}" if done.returncode == 0 and done.stdout.strip() else str(src)


def tidy(doc: dict[str, Any]) -> dict[str, Any]:
    """Drop the empty status fields Go's JSON writes for unset structs (they only make warnings)."""
    for obj in doc.get("objects") or []:
        status = obj.get("status")
        if not isinstance(status, dict):
            continue
        for key in EMPTY_STATUS.get(obj.get("kind"), ()):
            if not _has_content(status.get(key)):
                status.pop(key, None)
    return doc


def _has_content(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_content(v) for v in value.values())
    if isinstance(value, list):
        return bool(value)
    return value not in (None, "", 0)


def judge(path: Path) -> CaseResult:
    """Run one extracted case on the reference."""
    from schedcheck.runner import run_scenario
    from schedcheck.scenario.errors import ScenarioError
    from schedcheck.scenario.loader import load_scenario

    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    notes = (raw.get("metadata") or {}).get("annotations") or {}
    result = CaseResult(path.stem, notes.get("schedcheck.io/upstream-test", ""),
                        notes.get("schedcheck.io/upstream-case", ""), "agree")
    if notes.get("schedcheck.io/upstream-unsupported"):
        result.verdict, result.detail = "unsupported", notes["schedcheck.io/upstream-unsupported"]
        return result
    try:
        scenario = load_scenario(path)
    except ScenarioError as err:
        result.verdict, result.detail = "unsupported", str(err).split(": ", 1)[-1]
        return result
    first = run_scenario(scenario, seed=0)
    if first.skipped_plugins:
        result.verdict = "unsupported"
        result.detail = f"plugins the reference does not model: {', '.join(sorted(set(first.skipped_plugins)))}"
        return result
    result.violations = sorted({v.get("id", "") for v in first.violations})
    if not first.expectation_failures:
        if notes.get(CHECKS_NOTE, "").startswith("none"):
            result.detail = "the test asserts only that the session opens and its actions run (it calls no check)"
        return result
    result.detail = "; ".join(first.expectation_failures[:2])
    for seed in TIE_SEEDS:
        if first.ties and not run_scenario(scenario, seed=seed).expectation_failures:
            result.verdict, result.seed = "tie", seed
            return result
    result.verdict = "disagree"
    return result


def run(args: argparse.Namespace) -> Summary:
    started = time.monotonic()
    report = Path(args.report)
    if args.from_dir:
        scenarios = Path(args.from_dir)
        if not scenarios.is_dir():
            raise UpstreamTestsError(f"--from {args.from_dir}: not a folder")
        summary = Summary(source=str(scenarios))
    else:
        value = args.src or os.environ.get("SCHEDCHECK_VOLCANO_SRC")
        if not value:
            raise UpstreamTestsError("--src: name a Volcano checkout (or set SCHEDCHECK_VOLCANO_SRC)")
        src = Path(value).expanduser().resolve()
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        scenarios = report / f"{stamp}-upstream-tests" / "scenarios"
        summary = Summary(source=str(src))
        packages = [p.strip() for p in args.packages.split(",") if p.strip()]
        summary.go_seconds, summary.unbuilt = extract(src, packages, scenarios)
    for path in sorted(scenarios.glob("*.yaml")):
        summary.cases.append(judge(path))
    summary.seconds = time.monotonic() - started
    if getattr(args, "keep_agreeing", None):
        keep(scenarios, summary, Path(args.keep_agreeing))
    folder = scenarios.parent
    if not args.from_dir:
        (folder / "report.json").write_text(json.dumps(to_json(summary), indent=2) + "\n", encoding="utf-8")
        (folder / "report.md").write_text(render(summary), encoding="utf-8")
    return summary


def keep(scenarios: Path, summary: Summary, target: Path) -> int:
    """Copy the agreeing, violation-free cases into target with a header naming their upstream test; files
    already there are not overwritten. Returns how many were written."""
    target.mkdir(parents=True, exist_ok=True)
    written = 0
    for case in summary.cases:
        destination = target / f"{case.name}.yaml"
        if case.verdict != "agree" or case.violations or destination.exists():
            continue
        text = (scenarios / f"{case.name}.yaml").read_text(encoding="utf-8")
        notes = ((yaml.safe_load(text) or {}).get("metadata") or {}).get("annotations") or {}
        header = (f"# Upstream unit test {case.test}, case {case.case!r}: its objects, tiers, actions and expectations,\n"
                  f"# extracted by `schedcheck upstream-tests` from {notes.get(SOURCE_NOTE, summary.source)}; "
                  f"the reference meets them.\n")
        if notes.get(TEST_PLUGINS_NOTE):
            header += (f"# Upstream's test-only plugin, written as a schedcheck test plugin "
                       f"(schedcheck/scenario/testplugins.py): {notes[TEST_PLUGINS_NOTE]}.\n")
        if notes.get(CHECKS_NOTE):
            header += (f"# Upstream's test runs only some of uthelper's checks ({notes[CHECKS_NOTE]}); the "
                       f"expectations it never checks are left out.\n")
        destination.write_text(header + text, encoding="utf-8")
        written += 1
    return written


def to_json(summary: Summary) -> dict[str, Any]:
    return {"source": summary.source, "counts": summary.counts(), "seconds": round(summary.seconds, 1),
            "goTestSeconds": round(summary.go_seconds, 1), "unbuiltPackages": summary.unbuilt,
            "cases": [c.to_json() for c in summary.cases]}


def render(summary: Summary) -> str:
    counts = summary.counts()
    lines = ["# Upstream unit-test cases on the reference", "",
             f"Source: `{summary.source}`. {len(summary.cases)} cases: {counts['agree']} agree, {counts['tie']} agree "
             f"under another tie-break, {counts['disagree']} disagree, {counts['unsupported']} unsupported."
             + (f" Packages whose tests did not build (no case of theirs ran): {', '.join(summary.unbuilt)}."
                if summary.unbuilt else ""), "",
             "| upstream test | case | verdict | detail |", "| --- | --- | --- | --- |"]
    for c in summary.cases:
        if c.verdict != "agree" or c.violations:
            detail = c.detail.replace("|", "\\|")[:300]
            if c.violations:
                detail += f" (invariants broken: {', '.join(c.violations)})"
            lines.append(f"| {c.test} | {c.case} | {c.verdict}{f' (seed {c.seed})' if c.seed else ''} | {detail} |")
    return "\n".join(lines) + "\n"


def main(args: argparse.Namespace) -> int:
    try:
        summary = run(args)
    except UpstreamTestsError as err:
        print(f"schedcheck: upstream-tests: {err}", file=sys.stderr)
        return 2
    if args.json:
        json.dump(to_json(summary), sys.stdout, indent=2)
        print()
    else:
        counts = summary.counts()
        print(f"{len(summary.cases)} upstream cases from {summary.source}: {counts['agree']} agree, {counts['tie']} "
              f"agree under another tie-break, {counts['disagree']} disagree, {counts['unsupported']} unsupported "
              f"({summary.seconds:.0f} s, go test {summary.go_seconds:.0f} s)")
        if summary.unbuilt:
            print(f"  tests that did not build (go test's module downloads?): {', '.join(summary.unbuilt)}")
        for c in summary.cases:
            if c.verdict in ("disagree", "unsupported"):
                print(f"  {c.verdict}: {c.test} / {c.case}: {c.detail[:200]}")
            if c.violations:
                print(f"  invariants broken on {c.test} / {c.case}: {', '.join(c.violations)}")
    return 1 if summary.counts()["disagree"] else 0

"""Every `schedcheck` command, declared once.

The table below is the one place a command is named: the parser's
subcommands (schedcheck.cli), the README's "## Commands" table and the CLI
contract (../shared/spec/cli.md) are checked against it (tests/test_commands.py).
Each row names the module that implements the command; the module exposes

    add_arguments(parser)   the command's options and positionals
    main(args) -> int       run it; the exit status
    DESCRIPTION, EPILOG     optional: the `--help` text and its examples

and imports anything heavy (z3, hypothesis) inside `main`. Adding a command is
one row here, one module, and one row in the README's table.
"""

from __future__ import annotations

from dataclasses import dataclass

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


@dataclass(frozen=True)
class Command:
    name: str
    module: str
    summary: str  # one line: the `schedcheck --help` entry
    usage: str  # the arguments after the name, as the README's table shows them
    exits: tuple[str, str, str] | None  # what exit 0 / 1 / 2 mean; None: it always exits 0


COMMANDS: tuple[Command, ...] = (
    Command("run", "schedcheck.commands.run", "run the reference scheduler on one scenario",
            "SCENARIO|--from-dump FILE [--objects FILE] [--json] [--seed N] [--conf FILE] [--trace] "
            "[--fail-on-known IDS]",
            ("ran, expectations and invariants held", "an expectation or a safety invariant failed",
             "unreadable input")),
    Command("check", "schedcheck.commands.check", "run a scenario with every invariant on and write a report",
            "SCENARIO|--from-dump FILE [--objects FILE] [--json] [--only IDS] [--seed N] [--conf FILE] "
            "[--report DIR] [--fail-on-known IDS]",
            ("no violation", "violation", "unreadable input")),
    Command("invariants", "schedcheck.commands.invariants", "list the invariant catalog",
            "[--json] [--markdown]", None),
    Command("gate", "schedcheck.commands.gate",
            "generate clusters and cycles, check every invariant, minimise the first failure",
            "[--budget S] [--seed N] [--profile ci|nightly] [--workers N] [--cluster ADDRESS] [--report DIR] "
            "[--junit FILE] [--database DIR|URL] [--strict] [--only IDS] [--mutant NAME] [--fail-on-known IDS] "
            "[--no-corpus] [--no-progress] [--json] [--bench N]",
            ("clean within the budget", "violation found", "usage error")),
    Command("replay", "schedcheck.replay", "replay a saved counterexample",
            "FILE [--impl CMD] [--json]", ("no longer fails", "still fails", "unreadable")),
    Command("prove", "schedcheck.prove", "discharge the Z3 proof obligations",
            "[--json] [--only NAME]",
            ("every obligation proved or refuted as documented", "an unexpected result", "usage")),
    Command("explain", "schedcheck.explain", "why a job stays pending (minimal conflicting constraints)",
            "SCENARIO --job NS/NAME [--json] [--seed N] [--conf FILE]",
            ("explained", "could not explain", "unreadable input or unknown job")),
    Command("conform", "schedcheck.commands.conform",
            "test another scheduler implementation for conformance (protocol 1)",
            "--impl CMD [--budget S] [--seed N] [--timeout S] [--scenarios DIR] [--report DIR] [--json]",
            ("conformant within the budget", "not conformant", "usage")),
    Command("check-trace", "schedcheck.commands.check_trace",
            "check a recorded trace (a protocol-1 result and its scenario) offline",
            "FILE", ("clean", "violation", "unreadable")),
    Command("bench", "schedcheck.bench", "print performance figures",
            "[--json] [--sizes 100,1000] [--seed N] [--no-invariants] [--no-upstream]", None),
    Command("selftest", "schedcheck.selftest", "run every deliberate bug and show which rule catches it",
            "[--budget S] [--seed N] [--only NAMES] [--no-corpus] [--report DIR] [--json]",
            ("every mutant caught", "some mutant missed", "usage")),
    Command("differential", "schedcheck.adapters.differential",
            "run scenarios through the reference and upstream Volcano; show where they decide differently",
            "PATHS [--json] [--seed N]",
            ("no divergence", "divergence or error", "unreadable input or no adapter")),
    Command("compare-persistence", "schedcheck.persistence_compare",
            "compare pipelined-state persistence modes on the same multi-session programs",
            "[--budget N] [--seed N] [--walks N]", None),
    Command("overhead", "schedcheck.conform.overhead", "time the conformance protocol's round trip (figures only)",
            "[--count N] [--seed N]", None),
    Command("fuzz-input", "schedcheck.fuzz_input",
            "corrupt real scenarios and check every one is rejected in one line or runs without a traceback",
            "[PATHS] [--count N] [--seed N] [--report DIR]", ("no crash or hang", "some", "usage")),
    Command("upstream-tests", "schedcheck.adapters.upstream_tests",
            "extract upstream Volcano's own unit-test cases as scenarios and run them on the reference",
            "[--src DIR] [--packages PKGS] [--from DIR] [--report DIR] [--json]",
            ("every supported case agrees", "some case disagrees", "usage")),
    Command("rediscover", "schedcheck.rediscovery.command",
            "find fixed upstream Volcano bugs again in upstream's own code (buggy and fixed builds)",
            "[--bug ID] [--list] [--git DIR] [--budget S] [--seed N] [--keep DIR] [--table FILE] [--report DIR] "
            "[--json]", ("every bug found", "some bug not found", "usage")),
)


def scheduler_stopped(source: str, exc: BaseException) -> str:
    """The one line for a scenario on which the scheduler under test raised (upstream panics there too, or a
    reference bug): no traceback, exit 1."""
    where = ""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is not None:
        where = f" (at {tb.tb_frame.f_code.co_filename.rsplit('/', 1)[-1]}:{tb.tb_lineno})"
    return f"schedcheck: {source}: the scheduler stopped: {type(exc).__name__}: {exc}{where}"


def known_ids(raw: str | None) -> tuple[str, ...]:
    """--fail-on-known: the known upstream findings (invariants/known.py) that fail like any violation."""
    return tuple(part.strip() for part in raw.split(",") if part.strip()) if raw else ()


def unknown_known_ids(raw: str | None) -> str | None:
    """What is wrong with a --fail-on-known value (an id no known finding has), or None."""
    from schedcheck.invariants.known import known_ids as every_known_id

    known = set(every_known_id())
    unknown = [part for part in known_ids(raw) if part != "all" and part not in known]
    if not unknown:
        return None
    return f"unknown known-finding id(s) {', '.join(unknown)}; known: {', '.join(sorted(known, key=_finding_order))}, all"


def _finding_order(finding_id: str) -> tuple[int, str]:
    digits = finding_id.lstrip("F")
    return (int(digits), finding_id) if digits.isdigit() else (10**6, finding_id)


KNOWN_HELP = ("known upstream findings (invariants/known.py, docs/findings.md) that fail the run like any "
              "violation: comma-separated ids such as F1, or all (default: reported only)")


def command(name: str) -> Command | None:
    return next((c for c in COMMANDS if c.name == name), None)

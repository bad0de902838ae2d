"""Commands are declared once (schedcheck.commands.COMMANDS): `schedcheck --help`, the README's
"## Commands" table and the CLI contract (../shared/spec/cli.md) agree with that table."""

from __future__ import annotations

import argparse
import importlib
import re
from pathlib import Path

import pytest

from schedcheck.cli import build_parser, main
from schedcheck.commands import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
# the contract lives beside the repository (../shared/spec/cli.md; a worktree sits one level deeper);
# tests/data/cli-contract.md is a pinned copy, so a clone without it still checks the contract
PINNED_CONTRACT = ROOT / "tests" / "data" / "cli-contract.md"
SHARED_CONTRACT = next((p for p in (ROOT.parent / "shared" / "spec" / "cli.md",
                                    ROOT.parent.parent / "shared" / "spec" / "cli.md") if p.exists()), None)
CONTRACT = SHARED_CONTRACT or PINNED_CONTRACT


def test_the_pinned_contract_is_the_shared_one():
    if SHARED_CONTRACT is not None:  # beside the shared folder: the copy must not have drifted
        assert PINNED_CONTRACT.read_text(encoding="utf-8") == SHARED_CONTRACT.read_text(encoding="utf-8")
    assert "| `schedcheck run" in PINNED_CONTRACT.read_text(encoding="utf-8")


def markdown_rows(text: str, heading: str | None = None) -> list[list[str]]:
    """The rows of the first table (under `heading`, if given) whose header starts with `| command |`."""
    if heading is not None:
        text = text.split(heading, 1)[1]
    rows, inside = [], False
    for line in text.splitlines():
        if line.startswith("| command |"):
            inside = True
            continue
        if inside and line.startswith("| ---"):
            continue
        if inside and line.startswith("|"):
            cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
            rows.append([c.strip().replace("\\|", "|") for c in cells])
        elif inside:
            break
    return rows


def usage_of(cell: str) -> tuple[str, str]:
    """(name, arguments) of a `schedcheck NAME ARGS` cell."""
    words = cell.strip("`").split(" ", 2)
    assert words[0] == "schedcheck", cell
    return words[1], words[2] if len(words) > 2 else ""


def exits_text(exits: tuple[str, str, str] | None) -> str:
    return "-" if exits is None else " / ".join(exits)


def subparsers() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def options_in(usage: str) -> set[str]:
    return set(re.findall(r"--[a-z][a-z-]*", usage))


def test_every_row_names_a_module_with_add_arguments_and_main():
    names = [c.name for c in COMMANDS]
    assert len(names) == len(set(names))
    for row in COMMANDS:
        module = importlib.import_module(row.module)
        assert callable(module.add_arguments) and callable(module.main), row.module


def test_the_parser_has_exactly_the_table_commands_in_order():
    assert list(subparsers()) == [c.name for c in COMMANDS]


def test_help_lists_every_command_with_its_summary(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    for row in COMMANDS:
        assert f"{row.name} {row.summary}" in text


def test_every_option_the_table_shows_exists():
    parsers = subparsers()
    for row in COMMANDS:
        known = {s for a in parsers[row.name]._actions for s in a.option_strings}
        assert options_in(row.usage) <= known, row.name


def test_the_readme_table_is_the_command_table():
    rows = markdown_rows((ROOT / "README.md").read_text(encoding="utf-8"), "## Commands")
    assert [usage_of(r[0])[0] for r in rows] == [c.name for c in COMMANDS]
    for row, cells in zip(COMMANDS, rows):
        assert usage_of(cells[0])[1] == row.usage, row.name
        assert cells[2] == exits_text(row.exits), row.name


def test_the_contract_commands_exist_with_their_options_and_exit_statuses():
    rows = markdown_rows(CONTRACT.read_text(encoding="utf-8"))
    assert rows
    by_name = {c.name: c for c in COMMANDS}
    parsers = subparsers()
    for cells in rows:
        name, usage = usage_of(cells[0])
        assert name in by_name, f"cli.md names `{name}`, which the command table lacks"
        known = {s for a in parsers[name]._actions for s in a.option_strings}
        assert options_in(usage) <= known, f"{name}: cli.md promises {sorted(options_in(usage) - known)}"
        promises_statuses = cells[2].strip() != "-"
        assert promises_statuses == (by_name[name].exits is not None), name


@pytest.mark.parametrize("argv, message", [
    (["overhead", "--count", "0"], "schedcheck: overhead: --count: expected 1 or more scenarios"),
    (["selftest", "--budget", "-3"],
     "schedcheck: selftest: --budget: expected seconds per mutant, 0 (no blind gate) or more"),
    (["rediscover", "--workers", "0"], "schedcheck: rediscover: --workers: expected 1 or more"),
    (["rediscover", "--report", "/dev/null"], "schedcheck: rediscover: --report /dev/null: not a folder"),
    (["run", "examples/gpu-training-gang.yaml", "--fail-on-known", "F999,F1"],
     "schedcheck: run: --fail-on-known: unknown known-finding id(s) F999; known: "),
    (["gate", "--fail-on-known", "F1,nope"], "schedcheck: gate: --fail-on-known: unknown known-finding id(s) nope"),
])
def test_a_bad_option_value_is_one_line_before_any_work(argv, message, capsys, monkeypatch):
    monkeypatch.chdir(Path(__file__).parent.parent)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(message) and "\n" not in err

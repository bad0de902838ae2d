"""The `schedcheck` command line (../shared/spec/cli.md).

The commands are the rows of schedcheck.commands.COMMANDS; each row's module
adds its arguments and runs it. Exit statuses are contracts: 0 ran and
everything held, 1 an expectation or invariant failed, 2 the input could not
be read (one line naming the file, the object and the field; never a
traceback).
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
from collections.abc import Sequence

from schedcheck import __version__
from schedcheck.commands import COMMANDS, EXIT_FAILED, EXIT_OK, EXIT_USAGE, command

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="schedcheck",
        description="Invariant-checking test harness for Volcano-style batch schedulers.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Run `schedcheck COMMAND --help` for each command's options and an example.",
    )
    parser.add_argument("--version", action="version", version=f"schedcheck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for row in COMMANDS:
        module = importlib.import_module(row.module)
        child = sub.add_parser(row.name, help=row.summary, description=getattr(module, "DESCRIPTION", row.summary),
                               epilog=getattr(module, "EPILOG", None),
                               formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(child)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `schedcheck invariants | head` ends quietly
    parser = build_parser()
    args = parser.parse_args(argv)
    row = command(args.command) if args.command else None
    if row is None:
        parser.print_help()
        return EXIT_USAGE
    module = importlib.import_module(row.module)
    from schedcheck.gc_tuning import tune_gc

    tune_gc()
    return module.main(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

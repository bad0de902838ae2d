"""`schedcheck prove`: placeholder until its issue lands (wired in schedcheck/cli.py COMMAND_MODULES)."""

from __future__ import annotations

import argparse
import sys

HELP = "(not implemented yet)"
DESCRIPTION = "Not implemented yet."
EPILOG = ""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rest", nargs="*")


def main(args: argparse.Namespace) -> int:
    print("schedcheck: prove: not implemented yet", file=sys.stderr)
    return 2

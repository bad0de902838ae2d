"""`schedcheck invariants`: the invariant catalog."""

from __future__ import annotations

import argparse
import json
import sys

from schedcheck.commands import EXIT_OK

DESCRIPTION = "Every invariant: id, class, the rule in one line, and where it comes from."
EPILOG = """examples:
  schedcheck invariants
  schedcheck invariants --json
  schedcheck invariants --markdown > docs/invariants.md
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--markdown", action="store_true",
                        help="print the catalog as the Markdown page docs/invariants.md holds")


def main(args: argparse.Namespace) -> int:
    from schedcheck.invariants.catalog import catalog
    from schedcheck.render import table

    invariants = catalog()
    if args.markdown:
        from schedcheck.catalog_doc import render_catalog_markdown

        sys.stdout.write(render_catalog_markdown(invariants))
        return EXIT_OK
    if args.json:
        json.dump({"invariants": [inv.to_json() for inv in invariants]}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return EXIT_OK
    rows = [[inv.id, inv.cls, inv.severity, inv.statement, inv.source] for inv in invariants]
    sys.stdout.write(table(["id", "class", "severity", "rule", "source"], rows))
    sys.stdout.write(f"{len(invariants)} invariants\n")
    return EXIT_OK

"""report.html of `schedcheck selftest --report DIR`: every mutant, the rule that caught it on its
scenario, and how long the blind gate needed to find it, as a table and a bar chart."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from schedcheck.report_html.figure import COLORS, Part, guarded, new_figure, omitted, svg_of
from schedcheck.report_html.page import document, esc, facts, fallback, note, section, table
from schedcheck.report_html.units import number


def render_selftest_html(report: Mapping[str, Any]) -> str:
    """`report` is selftest's report.json: totals and "results" (MutantResult.to_json() each)."""
    try:
        return _page(report)
    except Exception as exc:  # noqa: BLE001
        return fallback("schedcheck selftest", exc)


def _results(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    results = report.get("results")
    if not isinstance(results, Sequence) or isinstance(results, str):
        return []
    return [r for r in results if isinstance(r, Mapping)]


def _page(report: Mapping[str, Any]) -> str:
    results = _results(report)
    budget = number(report.get("gateBudget"))
    caught = sum(1 for r in results if r.get("caught"))
    rows = [("mutants", esc(len(results))), ("caught on their scenario", esc(f"{caught} of {len(results)}"))]
    if budget > 0:
        found = sum(1 for r in results if r.get("gateSeconds") is not None)
        rows.append(("blind gate", esc(f"found {found} of {len(results)} within {budget:g} s each "
                                       f"(seed {report.get('gateSeed')})")))
    else:
        rows.append(("blind gate", "not run (use --budget S)"))
    if report.get("seconds") is not None:
        rows.append(("seconds", esc(report.get("seconds"))))
    table_rows = []
    for r in results:
        by = ", ".join(str(i) for i in r.get("caughtBy") or []) if r.get("caught") else (
            "MISSED" + (f" (clean run reports {', '.join(r.get('cleanProblems') or [])})"
                        if r.get("cleanProblems") else ""))
        if budget <= 0:
            gate = "-"
        elif r.get("gateSeconds") is None:
            gate = f"not found in {budget:g} s"
        else:
            gate = f"{number(r.get('gateSeconds')):.1f} s"
        table_rows.append((r.get("mutant"), by, gate, r.get("gateInvariant") or "-", r.get("source") or "",
                           r.get("description") or ""))
    body = [facts(rows),
            section("Blind-gate seconds per mutant", [guarded("Blind gate", render_gate_seconds, results, budget)]),
            section("Mutants", [table(["mutant", "caught on its scenario by", "blind gate", "gate found",
                                       "source", "the bug"], table_rows, numeric=(2,))])]
    missed = [str(r.get("mutant")) for r in results if not r.get("caught")]
    if missed:
        body.insert(1, note(f"missed on their scenario: {', '.join(missed)}"))
    ok = bool(results) and caught == len(results)
    return document("schedcheck selftest", body, status=("every mutant caught" if ok else "some mutant missed", ok),
                    subtitle="Each deliberate bug run on its own scenario, and searched for by the blind gate")


def render_gate_seconds(results: list[Mapping[str, Any]], budget: float) -> Part:
    title = "Blind gate"
    if not results:
        return omitted(title, "Blind gate: not drawn (no mutant was run)")
    if budget <= 0:
        return omitted(title, "Blind gate: not drawn (the blind gate was not run: selftest --budget S runs it)")
    names = [str(r.get("mutant")) for r in results]
    seconds = [r.get("gateSeconds") for r in results]
    fig = new_figure(8.5, 0.24 * len(results) + 1.4)
    ax = fig.subplots()
    for y, value in enumerate(seconds):
        if value is None:
            ax.barh(y, budget, color="white", edgecolor=COLORS["bad"], hatch="///", lw=0.8, height=0.65)
            ax.text(budget, y, " not found", va="center", fontsize=7.5, color=COLORS["bad"])
        else:
            ax.barh(y, number(value), color=COLORS["allocated"], height=0.65)
            ax.text(number(value), y, f" {number(value):.1f} s", va="center", fontsize=7.5)
    ax.axvline(budget, color="#888888", ls="--", lw=0.9)
    ax.text(budget, -0.9, f"budget {budget:g} s", ha="right", va="bottom", fontsize=7.5, color="#666666")
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names, fontsize=8)
    for tick, result in zip(ax.get_yticklabels(), results):
        if not result.get("caught"):
            tick.set_color(COLORS["bad"])
    ax.set_ylim(len(names) - 0.5, -1.2)
    ax.set_xlim(0, budget * 1.18)
    ax.set_xlabel("seconds until the blind gate found the bug")
    ax.tick_params(axis="y", length=0)
    ax.grid(axis="x", color="#eeeeee")
    return Part(title, svg=svg_of(fig), caption="Hatched red: not found within the budget. A mutant missed on its own "
                                                "scenario is labelled red.")

"""report.html of a clean gate (its summary.json): the totals, where the time went, the checks per
invariant (the catalog's rules that never ran in red), and what the generated scenarios reached."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedcheck.report_html.figure import COLORS, Part, guarded, new_figure, omitted, svg_of
from schedcheck.report_html.page import document, esc, facts, fallback, note, section
from schedcheck.report_html.units import number


def render_summary_html(summary: Mapping[str, Any]) -> str:
    """The page of a clean gate's summary.json (schedcheck.gate writes the dict)."""
    title = "schedcheck gate"
    try:
        title += ": " + ("clean" if summary.get("result", "clean") == "clean" else str(summary.get("result")))
        return _page(title, summary)
    except Exception as exc:  # noqa: BLE001
        return fallback(title, exc)


def _page(title: str, summary: Mapping[str, Any]) -> str:
    rows = []
    for key, label in (("seed", "seed"), ("budget", "budget (s)"), ("workers", "workers"), ("examples", "examples"),
                       ("cycles", "sessions"), ("invariantChecks", "invariant checks"), ("seconds", "seconds"),
                       ("cyclesPerSecond", "sessions per second"), ("checksPerSecond", "checks per second")):
        if key in summary:
            rows.append((label, esc(summary[key])))
    rows.append(("deliberate bug", f"<code>{esc(summary['mutant'])}</code>" if summary.get("mutant") else "none"))
    never = [str(i) for i in summary.get("neverChecked") or []]
    if never:
        rows.append(("never checked", f'<span class="bad">{esc(", ".join(never))}</span>'))
    body = [facts(rows), note("summary.json in this folder holds the same figures.")]
    body.append(section("Where the time went", [guarded("Time share", render_time_share, summary.get("timeShare"))]))
    body.append(section("Checks per invariant", [guarded("Checks per invariant", render_checks,
                                                         summary.get("checksPerInvariant"), never)]))
    body.append(section("What the scenarios reached", [guarded("Reached", render_reached, summary.get("reached"))]))
    ok = summary.get("result", "clean") == "clean"
    return document(title, body, status=("clean" if ok else str(summary.get("result")), ok))


def render_time_share(share: Any) -> Part:
    if not isinstance(share, Mapping) or not share:
        return omitted("Time share", "Time share: not drawn (the summary has no timeShare)")
    colors = ("#4c72b0", "#55a868", "#c4c4c4", "#dd8452", "#8172b3")
    fig = new_figure(8.5, 1.5)
    ax = fig.subplots()
    left = 0.0
    for i, (name, value) in enumerate(share.items()):
        width = 100 * number(value)
        ax.barh(0, width, left=left, color=colors[i % len(colors)], label=f"{name} {width:.0f}%")
        if width >= 8:
            ax.text(left + width / 2, 0, f"{width:.0f}%", ha="center", va="center", color="white", fontsize=8)
        left += width
    ax.set_xlim(0, max(left, 100))
    ax.set_yticks([])
    ax.set_xlabel("% of the workers' time")
    fig.legend(loc="outside lower center", ncols=max(len(share), 1))
    return Part("Time share", svg=svg_of(fig))


def render_checks(checks: Any, never: list[str] | None = None) -> Part:
    never = never or []
    if not isinstance(checks, Mapping) or not (checks or never):
        return omitted("Checks per invariant",
                       "Checks per invariant: not drawn (the summary has no checksPerInvariant)")
    items = sorted(((str(k), number(v)) for k, v in checks.items()), key=lambda kv: kv[0])
    items += [(n, 0.0) for n in sorted(never) if n not in checks]
    fig = new_figure(8.5, 0.17 * len(items) + 1.3)
    ax = fig.subplots()
    ys = range(len(items))
    ax.barh(list(ys), [max(v, 0.8) if v > 0 else 0 for _, v in items],
            color=[COLORS["allocated"] if v > 0 else COLORS["bad"] for _, v in items], height=0.7)
    for y, (name, value) in zip(ys, items):
        if value <= 0:
            ax.text(1, y, "never checked", va="center", fontsize=7, color=COLORS["bad"])
    ax.set_xscale("log")
    ax.set_yticks(list(ys))
    ax.set_yticklabels([n for n, _ in items], fontsize=7.5)
    for tick, (_, value) in zip(ax.get_yticklabels(), items):
        if value <= 0:
            tick.set_color(COLORS["bad"])
    ax.set_ylim(len(items) - 0.5, -0.5)
    ax.set_xlabel("checks (log scale)")
    ax.tick_params(axis="y", length=0)
    ax.grid(axis="x", color="#eeeeee")
    return Part("Checks per invariant", svg=svg_of(fig),
                caption="How often each invariant was checked over the whole gate run; red: never checked.")


def render_reached(reached: Any) -> Part:
    if not isinstance(reached, Mapping) or not reached:
        return omitted("Reached", "Reached: not drawn (the summary has no reached counts)")
    groups: dict[str, list[tuple[str, float]]] = {}
    for key, value in reached.items():
        family, _, name = str(key).partition(":")
        groups.setdefault(family if name else "other", []).append((name or family, number(value)))
    fig = new_figure(max(3.0 * len(groups), 6.0), 0.2 * max(len(v) for v in groups.values()) + 1.4)
    axes = fig.subplots(1, len(groups), squeeze=False)[0]
    for ax, (family, items) in zip(axes, sorted(groups.items())):
        items.sort(key=lambda kv: -kv[1])
        ax.barh(range(len(items)), [v for _, v in items], color="#55a868", height=0.7)
        ax.set_yticks(range(len(items)))
        ax.set_yticklabels([n for n, _ in items], fontsize=7.5)
        ax.set_ylim(len(items) - 0.5, -0.5)
        ax.set_title(family, loc="left")
        ax.set_xlabel("scenarios")
        ax.tick_params(axis="y", length=0)
    return Part("Reached", svg=svg_of(fig), caption="How many generated scenarios reached each action, outcome and "
                                                    "plugin.")

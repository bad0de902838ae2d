"""Node ledgers before and after the failing operation: per node and resource dimension, a stacked bar
of Used (without Releasing), Releasing and Idle inside an outline at Allocatable, and a hatched strip
for Pipelined, which claims the future idle (Releasing + Idle). In upstream's ledger Used includes
Releasing and Used + Idle = Allocatable, so on a consistent node the stack ends at the outline; a stack
past it, a gap before it, or a Pipelined strip past it is what the ledger invariants catch. The
node(s) the violation names are marked in red."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Any

from schedcheck.report_html.figure import COLORS, Part, new_figure, omitted, svg_of
from schedcheck.report_html.units import dimensions, number, readable, readable_of

TITLE = "Node ledgers"
MAX_NODES = 10
FIELDS = ("allocatable", "used", "releasing", "pipelined", "idle")

Ledger = Mapping[str, Any]  # {"allocatable": {...}, "used": {...}, "idle": {...}, "releasing"?, "pipelined"?}


def nodes_of_state(state: Any) -> dict[str, Ledger]:
    """The node ledgers of a state excerpt ({"node NAME": {...}}) by node name."""
    out: dict[str, Ledger] = {}
    if isinstance(state, Mapping):
        for key, value in state.items():
            if isinstance(key, str) and key.startswith("node ") and is_ledger(value):
                out[key[len("node "):]] = value
    return out


def is_ledger(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("allocatable"), Mapping) and (
        isinstance(value.get("used"), Mapping) or isinstance(value.get("idle"), Mapping))


def render_ledgers(panels: list[tuple[str, Mapping[str, Ledger]]], offending: set[str] | None = None,
                   caption: str = "") -> Part:
    """One panel per (label, {node: ledger}); a panel without nodes is left out."""
    offending = offending or set()
    panels = [(label, nodes) for label, nodes in panels if nodes]
    if not panels:
        return omitted(TITLE, "Node ledgers: not drawn (this report holds no node's ledger: the violation names "
                              "no node, or no state was recorded)")
    names: list[str] = []
    for _, nodes in panels:
        names += [n for n in nodes if n not in names]
    names = sorted(names, key=lambda n: n not in offending)  # the offending node(s) first, else as listed
    dropped = names[MAX_NODES:]
    names = names[:MAX_NODES]
    dims = dimensions(ledger.get(f) for _, nodes in panels for ledger in nodes.values() for f in FIELDS)
    if not dims:
        return omitted(TITLE, "Node ledgers: not drawn (every value of the recorded ledgers is zero)")
    rows = [(n, d) for n in names for d in dims]
    fig = new_figure(5.6 * len(panels) + 1.6, 0.34 * len(rows) + 1.7)
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    for index, (ax, (label, nodes)) in enumerate(zip(axes, panels)):
        _panel(ax, label, nodes, rows, offending, show_labels=index == 0)
    _legend(fig, bool(offending & set(names)), columns=6 if len(panels) > 1 else 3)
    notes = [caption] if caption else []
    if dropped:
        notes.append(f"{len(dropped)} more node(s) not drawn: {', '.join(dropped[:8])}"
                     + ("..." if len(dropped) > 8 else ""))
    notes.append("Bars are % of each dimension's Allocatable (the black outline); labels give the amounts.")
    return Part(TITLE, svg=svg_of(fig), caption=" ".join(notes))


def _panel(ax: Any, label: str, nodes: Mapping[str, Ledger], rows: list[tuple[str, str]], offending: set[str],
           show_labels: bool) -> None:
    from matplotlib.patches import Rectangle

    furthest = 100.0
    previous = None
    for y, (name, dim) in enumerate(rows):
        if name in offending:
            ax.axhspan(y - 0.5, y + 0.5, color=COLORS["badfill"], zorder=0, lw=0)
        if previous is not None and name != previous:
            ax.axhline(y - 0.5, color="#bbbbbb", lw=0.6, zorder=1)
        previous = name
        ledger = nodes.get(name)
        if ledger is None:
            ax.text(1, y, "not in this state", va="center", fontsize=7.5, color=COLORS["muted"], style="italic")
            continue
        value = {f: number((ledger.get(f) or {}).get(dim, 0)) for f in FIELDS}
        alloc = value["allocatable"]
        base = alloc if alloc > 0 else max(value["used"] + value["idle"], value["pipelined"], 1.0)
        pct = {f: 100.0 * v / base for f, v in value.items()}
        held = max(pct["used"] - pct["releasing"], 0.0)
        releasing = max(pct["releasing"], 0.0)
        idle = max(pct["idle"], 0.0)
        top, height = y - 0.08, 0.5  # the main bar; the pipelined strip sits below it
        ax.barh(top, held, height=height, left=0, color=COLORS["used"], zorder=2)
        ax.barh(top, releasing, height=height, left=held, color=COLORS["releasing"], zorder=2)
        ax.barh(top, idle, height=height, left=held + releasing, color=COLORS["idle"], edgecolor="#c8c8c8",
                lw=0.5, zorder=2)
        if pct["pipelined"] > 0:
            ax.barh(y + 0.3, pct["pipelined"], height=0.18, left=held, color="white", edgecolor=COLORS["pipelined"],
                    hatch="////", lw=0.8, zorder=2)
        red = name in offending
        if alloc > 0:
            ax.add_patch(Rectangle((0, top - height / 2), 100, height, fill=False, ec=COLORS["bad"] if red else "black",
                                   lw=1.6 if red else 1.1, zorder=3))
        end = max(held + releasing + idle, held + pct["pipelined"], 100.0)
        furthest = max(furthest, end)
        ax.text(end + 2, y, _amounts(dim, value), va="center", fontsize=7.5, zorder=4,
                color=COLORS["bad"] if _inconsistent(value) else COLORS["ink"])
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlim(0, furthest + 62)
    ax.set_xticks([t for t in (0, 25, 50, 75, 100, 125, 150, 200, 300) if t <= furthest])
    ax.set_xlabel("% of allocatable")
    ax.set_title("\n".join(textwrap.wrap(label or "state", 70)), loc="left", fontsize=9)
    ax.set_yticks(range(len(rows)))
    if show_labels:
        ax.set_yticklabels([f"{n} · {d}" for n, d in rows])
        for tick, (name, _) in zip(ax.get_yticklabels(), rows):
            if name in offending:
                tick.set_color(COLORS["bad"])
                tick.set_fontweight("bold")
    ax.tick_params(axis="y", length=0)
    ax.spines["left"].set_visible(False)


def _amounts(dim: str, value: Mapping[str, float]) -> str:
    text = f"{readable_of(dim, value['used'], value['allocatable'])} used"
    if value["releasing"]:
        text += f", rel {readable(dim, value['releasing'])}"
    if value["pipelined"]:
        text += f", pip {readable(dim, value['pipelined'])}"
    if _inconsistent(value):
        text += f", idle {readable(dim, value['idle'])} (!)"
    return text


def _inconsistent(value: Mapping[str, float]) -> bool:
    tolerance = max(abs(value["allocatable"]) * 1e-9, 1e-6)
    return value["idle"] < 0 or abs(value["used"] + value["idle"] - value["allocatable"]) > tolerance


def _legend(fig: Any, any_offending: bool, columns: int) -> None:
    from matplotlib.patches import Patch

    handles = [Patch(color=COLORS["used"], label="Used (not releasing)"),
               Patch(color=COLORS["releasing"], label="Releasing (part of Used)"),
               Patch(facecolor=COLORS["idle"], edgecolor="#c8c8c8", label="Idle"),
               Patch(facecolor="white", edgecolor=COLORS["pipelined"], hatch="////",
                     label="Pipelined (claims Releasing + Idle)"),
               Patch(fill=False, edgecolor="black", label="Allocatable")]
    if any_offending:
        handles.append(Patch(facecolor=COLORS["badfill"], edgecolor=COLORS["bad"], label="node the violation names"))
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), columns))


def task_changes(before: Any, after: Any) -> list[tuple[str, str, str]]:
    """(object, before, after) for every task status that differs between two state excerpts: the tasks
    of the nodes and the "task X" entries."""
    def statuses(state: Any) -> dict[str, str]:
        out: dict[str, str] = {}
        if not isinstance(state, Mapping):
            return out
        for key, value in state.items():
            if not isinstance(value, Mapping):
                continue
            if isinstance(key, str) and key.startswith("task ") and "status" in value:
                out[key[len("task "):]] = f"{value.get('status')} on {value.get('node') or '-'}"
            for task, status in (value.get("tasks") or {}).items() if isinstance(value.get("tasks"), Mapping) else ():
                if isinstance(key, str) and key.startswith("node "):
                    out.setdefault(str(task), f"{status} on {key[len('node '):]}")
        return out

    old, new = statuses(before), statuses(after)
    return [(task, old.get(task, "-"), new.get(task, "-")) for task in sorted(set(old) | set(new))
            if old.get(task) != new.get(task)]

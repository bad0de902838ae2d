"""A timeline of the run's operations: one row per task, one marker per operation (allocate, bind,
pipeline, evict; statement discards hollow), x the operation's index in the run with the sessions and
actions shaded behind, and an arrow from each victim's eviction to the preemptor it made room for when
the run's eviction log (the overkill observer's entries: preemptor and victims) says who that was.

Without an operation trace (a check report keeps only the outcomes) the outcomes are drawn by kind:
evicted, pipelined at the end, bound."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from schedcheck.report_html.figure import COLORS, Part, new_figure, omitted, svg_of

TITLE = "Timeline"
MAX_ROWS = 32
MARKERS = {"allocate": ("o", "allocate"), "bind": ("s", "bind"), "pipeline": (">", "pipeline"),
           "evict": ("X", "evict"), "unallocate": ("o", "undo"), "unpipeline": (">", "undo"),
           "unevict": ("X", "undo")}
OUTCOME_COLUMNS = ("evict", "pipeline", "bind")


@dataclass
class Event:
    x: float
    cycle: int | None
    action: str
    op: str
    task: str
    node: str


def render_timeline(trace: Sequence[Mapping[str, Any]] | None = None,
                    overkill: Sequence[Mapping[str, Any]] | None = None,
                    outcome: Mapping[str, Any] | None = None,
                    violation: Mapping[str, Any] | None = None) -> Part:
    """The trace's operations if there is one, else the outcome's binds, pipelines and evictions."""
    events = events_of_trace(trace) if trace else []
    traced = bool(events)
    if not traced:
        events = events_of_outcome(outcome or {})
    if not events:
        return omitted(TITLE, "Timeline: not drawn (the run made no bind, pipeline or eviction that this report "
                              "records)")
    named = {ref.split(" ", 1)[1] for ref in (violation or {}).get("objects") or []
             if isinstance(ref, str) and ref.startswith("task ")}
    links = _links(events, overkill or [])
    rows = _rows(events, named, {t for pair in links for t in (pair[0].task, pair[1].task)})
    dropped = len({e.task for e in events}) - len(rows)
    index = {task: i for i, task in enumerate(rows)}
    shown = [e for e in events if e.task in index]
    span = max((e.x for e in shown), default=1)
    width = min(max(6.5, 0.16 * span + 4.0), 14.0) if traced else 7.5
    fig = new_figure(width, 0.3 * len(rows) + 2.0)
    ax = fig.subplots()
    if traced:
        _sessions(ax, events, violation)
    for kind, (marker, color) in MARKERS.items():
        points = [e for e in shown if e.op == kind]
        if points:
            undo = color == "undo"
            ax.scatter([e.x for e in points], [index[e.task] for e in points], marker=marker, s=46, zorder=4,
                       facecolors="none" if undo else COLORS[color], edgecolors=COLORS[color], linewidths=1.2,
                       label=kind if not undo else None)
    if any(e.op.startswith("un") for e in shown):
        ax.scatter([], [], marker="o", s=46, facecolors="none", edgecolors=COLORS["undo"],
                   label="discarded (unallocate, unpipeline, unevict)")
    for victim, preemptor in links:
        if victim.task in index and preemptor.task in index:
            ax.annotate("", xy=(preemptor.x, index[preemptor.task]), xytext=(victim.x, index[victim.task]),
                        arrowprops={"arrowstyle": "->", "color": COLORS["evict"], "lw": 1.1, "alpha": 0.75,
                                    "connectionstyle": "arc3,rad=-0.25", "shrinkA": 5, "shrinkB": 6}, zorder=3)
    if links:
        ax.plot([], [], color=COLORS["evict"], lw=1.1, label="victim → preemptor")
    failing = _failing_event(shown, violation) if traced else None
    if failing is not None:
        ax.scatter([failing.x], [index[failing.task]], s=230, facecolors="none", edgecolors=COLORS["bad"],
                   linewidths=2.0, zorder=5, label="failing operation")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(rows)
    for tick, task in zip(ax.get_yticklabels(), rows):
        if task in named:
            tick.set_color(COLORS["bad"])
            tick.set_fontweight("bold")
    ax.set_ylim(len(rows) - 0.4, -1.1 if traced else -0.6)
    ax.tick_params(axis="y", length=0)
    if traced:
        ax.set_xlim(-0.8, span + 0.8)
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
        ax.set_xlabel("operation (in the order the run made them)")
    else:
        ax.set_xlim(-0.6, len(OUTCOME_COLUMNS) - 0.4)
        ax.set_xticks(range(len(OUTCOME_COLUMNS)))
        ax.set_xticklabels(["evicted", "pipelined at the end", "bound"])
    ax.grid(axis="y", color="#f0f0f0", zorder=0)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    notes = []
    if not traced:
        notes.append("This report holds no operation trace: the run's outcomes are drawn by kind, without their "
                     "order.")
    if links:
        notes.append("Arrows run from each victim's eviction to the task it was evicted for (the run's eviction log).")
    if dropped > 0:
        notes.append(f"{dropped} more task(s) not drawn.")
    return Part(TITLE, svg=svg_of(fig), caption=" ".join(notes))


def events_of_trace(trace: Sequence[Mapping[str, Any]]) -> list[Event]:
    out = []
    for i, op in enumerate(trace):
        if isinstance(op, Mapping) and op.get("op") in MARKERS and op.get("task"):
            cycle = op.get("cycle")
            out.append(Event(float(i), cycle if isinstance(cycle, int) else None, str(op.get("action") or ""),
                             str(op["op"]), str(op["task"]), str(op.get("node") or "")))
    for i, e in enumerate(out):  # x is the index among the drawn operations
        e.x = float(i)
    return out


def events_of_outcome(outcome: Mapping[str, Any]) -> list[Event]:
    out = []
    column = {kind: float(i) for i, kind in enumerate(OUTCOME_COLUMNS)}
    for task in outcome.get("evicted") or []:
        out.append(Event(column["evict"], None, "", "evict", str(task), ""))
    for kind, key in (("pipeline", "pipelined"), ("bind", "binds")):
        values = outcome.get(key) or {}
        if isinstance(values, Mapping):
            out += [Event(column[kind], None, "", kind, str(task), str(node)) for task, node in values.items()]
    return out


def _rows(events: list[Event], named: set[str], linked: set[str]) -> list[str]:
    order: list[str] = []
    for e in events:
        if e.task not in order:
            order.append(e.task)
    if len(order) <= MAX_ROWS:
        return order
    keep = [t for t in order if t in named or t in linked][:MAX_ROWS]
    keep += [t for t in order if t not in keep][:MAX_ROWS - len(keep)]
    return [t for t in order if t in keep]


def _links(events: list[Event], overkill: Sequence[Mapping[str, Any]]) -> list[tuple[Event, Event]]:
    """(victim's eviction, preemptor's placement) pairs the eviction log names."""
    pairs = []
    for entry in overkill:
        if not isinstance(entry, Mapping) or not entry.get("preemptor"):
            continue
        preemptor, victims = str(entry["preemptor"]), [str(v) for v in entry.get("victims") or []]

        def same_place(e: Event) -> bool:
            return (entry.get("cycle") is None or e.cycle is None or e.cycle == entry.get("cycle")) and (
                not entry.get("action") or not e.action or e.action == entry.get("action"))

        whole_job = preemptor.startswith("job ")  # a gang statement: its victims made room for all its tasks
        placed = [e for e in events if (whole_job or e.task == preemptor) and e.op in ("pipeline", "allocate")
                  and same_place(e)]
        for victim in victims:
            evictions = [e for e in events if e.task == victim and e.op == "evict" and same_place(e)]
            if not evictions:
                continue
            before = [p for p in placed if p.x >= evictions[0].x]
            target = before[0] if before else (placed[0] if placed else None)
            if target is None:  # the preemptor was not placed after all: point at its row
                target = Event(evictions[-1].x + 0.5, evictions[-1].cycle, evictions[-1].action, "", preemptor, "")
            source = max((e for e in evictions if e.x <= target.x), key=lambda e: e.x, default=evictions[0])
            pairs.append((source, target))
    return pairs


def _sessions(ax: Any, events: list[Event], violation: Mapping[str, Any] | None) -> None:
    """Shade each (session, action) run of operations and label it; the failing one in red."""
    spans: list[tuple[int | None, str, float, float]] = []
    for e in events:
        if spans and spans[-1][0] == e.cycle and spans[-1][1] == e.action:
            spans[-1] = (e.cycle, e.action, spans[-1][2], e.x)
        else:
            spans.append((e.cycle, e.action, e.x, e.x))
    bad_cycle = (violation or {}).get("cycle")
    bad_action = (violation or {}).get("action")
    last_cycle = None
    for i, (cycle, action, start, end) in enumerate(spans):
        bad = cycle == bad_cycle and action == bad_action and bad_action
        color = COLORS["badfill"] if bad else ("#f3f3f3" if i % 2 == 0 else "#fafafa")
        ax.axvspan(start - 0.45, end + 0.45, color=color, zorder=0, lw=0)
        label = action + (" (fails)" if bad else "")
        ax.text((start + end) / 2, -0.75, label, ha="center", va="center", fontsize=7.5,
                color=COLORS["bad"] if bad else COLORS["muted"],
                rotation=0 if end - start >= 2 or len(spans) <= 4 else 30)
        if cycle != last_cycle:
            if i:
                ax.axvline(start - 0.5, color="#888888", lw=0.9, ls="--", zorder=1)
            ax.annotate(f"session {cycle}" if cycle is not None else "session ?", xy=(start - 0.45, 1.0),
                        xycoords=("data", "axes fraction"), xytext=(2, 3), textcoords="offset points",
                        fontsize=8, color="#444444", ha="left", va="bottom")
            last_cycle = cycle


def _failing_event(events: list[Event], violation: Mapping[str, Any] | None) -> Event | None:
    """The operation a violation at an operation checkpoint names ("pipeline ns/task on node ...")."""
    if not violation or violation.get("checkpoint") != "operation" or not violation.get("operation"):
        return None
    text = str(violation["operation"])
    for e in events:
        if text.startswith(f"{e.op} {e.task}") and e.cycle == violation.get("cycle") and (
                e.action == violation.get("action") or not violation.get("action")):
            return e
    return None

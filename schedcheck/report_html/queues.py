"""Queues: per queue and resource dimension, a bar of what is allocated with markers at its deserved,
guarantee and capability; queues with a parent are indented under it (the capacity plugin's hierarchy).

The excerpt a violation records holds a queue's weight and priority only, so the limits are read from
the scenario's Queue objects (spec.deserved, spec.guarantee.resource, spec.capability) and "allocated"
is what the scenario's placed pods (a nodeName, not finished) request, before the first session.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from schedcheck.report_html.figure import COLORS, Part, new_figure, omitted, svg_of
from schedcheck.report_html.units import dimensions, number, scale

TITLE = "Queues"
MAX_QUEUES = 24
LIMITS = ("deserved", "guarantee", "capability")
MARKERS = {"deserved": ("D", 6), "guarantee": ("^", 7), "capability": ("|", 16)}


@dataclass
class QueueRow:
    name: str
    parent: str = ""
    depth: int = 0
    allocated: dict[str, float] = field(default_factory=dict)
    deserved: dict[str, float] = field(default_factory=dict)
    guarantee: dict[str, float] = field(default_factory=dict)
    capability: dict[str, float] = field(default_factory=dict)


def queue_rows(objects: Any) -> list[QueueRow]:
    """The queues of a scenario's ClusterObjects in tree order (children under their parent)."""
    from schedcheck.reference.api.resource_info import Resource

    def resource(values: Any) -> dict[str, float]:
        """Only the dimensions the spec names: an unnamed one is no limit (not a limit of 0)."""
        if not values:
            return {}
        converted = Resource.from_resource_list(values).as_dict()
        return {dim: number(value) for dim, value in converted.items() if dim in values}

    rows = {q.name: QueueRow(q.name, q.parent or "", deserved=resource(q.deserved),
                             guarantee=resource(q.guarantee), capability=resource(q.capability))
            for q in objects.queues}
    groups = {f"{pg.namespace}/{pg.name}": pg.queue or "default" for pg in objects.pod_groups}
    for pod in objects.pods:
        if not pod.node_name or pod.phase in ("Succeeded", "Failed"):
            continue
        group = (pod.annotations or {}).get("scheduling.k8s.io/group-name", "")
        queue = groups.get(f"{pod.namespace}/{group}", "default")
        row = rows.setdefault(queue, QueueRow(queue))
        request = Resource()
        for container in pod.containers:
            request.add(Resource.from_resource_list(container.requests))
        for dim, value in request.as_dict().items():
            row.allocated[dim] = row.allocated.get(dim, 0.0) + number(value)
    return _tree_order(rows)


def _tree_order(rows: dict[str, QueueRow]) -> list[QueueRow]:
    children: dict[str, list[str]] = {}
    roots = []
    for name, row in rows.items():
        if row.parent and row.parent in rows and row.parent != name:
            children.setdefault(row.parent, []).append(name)
        else:
            roots.append(name)
    out: list[QueueRow] = []
    seen: set[str] = set()

    def walk(name: str, depth: int) -> None:
        if name in seen:
            return
        seen.add(name)
        rows[name].depth = depth
        out.append(rows[name])
        for child in sorted(children.get(name, [])):
            walk(child, depth + 1)

    for root in sorted(roots, key=lambda n: (n != "root", n)):
        walk(root, 0)
    for name in rows:  # a parent cycle: still listed, flat
        walk(name, 0)
    return out


def render_queues(rows: list[QueueRow] | None, offending: set[str] | None = None, caption: str = "") -> Part:
    offending = offending or set()
    if not rows:
        return omitted(TITLE, "Queues: not drawn (no scenario document with Queue objects is available to this "
                              "report)")
    dims = dimensions(m for r in rows for m in (r.allocated, r.deserved, r.guarantee, r.capability))
    dims = [d for d in dims if d != "pods"] or dims
    if not dims:
        return omitted(TITLE, "Queues: not drawn (no queue has an allocation, deserved, guarantee or capability)")
    shown = rows[:MAX_QUEUES]
    fig = new_figure(max(3.3 * len(dims), 6.5) + 1.4, 0.32 * len(shown) + 1.5)
    axes = fig.subplots(1, len(dims), sharey=True, squeeze=False)[0]
    for index, (ax, dim) in enumerate(zip(axes, dims)):
        _panel(ax, dim, shown, offending, show_labels=index == 0)
    _legend(fig)
    notes = [caption] if caption else []
    if len(rows) > len(shown):
        notes.append(f"{len(rows) - len(shown)} more queue(s) not drawn.")
    notes.append("Allocated is what the scenario's placed pods request before the first session; the limits are "
                 "the Queue objects' spec (proportion computes its own deserved, not shown).")
    return Part(TITLE, svg=svg_of(fig), caption=" ".join(notes))


def _panel(ax: Any, dim: str, rows: list[QueueRow], offending: set[str], show_labels: bool) -> None:
    divisor, unit = scale(dim)
    if dim == "memory":
        unit = "GiB"
    top = 0.0
    for y, row in enumerate(rows):
        if row.name in offending:
            ax.axhspan(y - 0.5, y + 0.5, color=COLORS["badfill"], zorder=0, lw=0)
        allocated = number(row.allocated.get(dim, 0)) / divisor
        ax.barh(y, allocated, height=0.55, color=COLORS["allocated"], zorder=2)
        top = max(top, allocated)
        for limit in LIMITS:
            values = getattr(row, limit)
            if dim in values:
                value = number(values[dim]) / divisor
                if value > 1e15:  # an unlimited capability
                    continue
                marker, size = MARKERS[limit]
                ax.plot([value], [y], marker=marker, ms=size, color=COLORS[limit], mew=2.2 if marker == "|" else 1,
                        ls="none", zorder=3)
                top = max(top, value)
    ax.set_xlim(0, top * 1.12 if top > 0 else 1)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_title(dim, loc="left")
    ax.set_xlabel(unit)
    ax.set_yticks(range(len(rows)))
    if show_labels:
        labels = [("\u00a0\u00a0\u00a0" * row.depth + ("\u2514 " if row.depth else "") + row.name) for row in rows]
        ax.set_yticklabels(labels, ha="left")
        ax.tick_params(axis="y", pad=_label_pad(labels))
        for tick, row in zip(ax.get_yticklabels(), rows):
            if row.name in offending:
                tick.set_color(COLORS["bad"])
                tick.set_fontweight("bold")
    ax.tick_params(axis="y", length=0)
    ax.grid(axis="x", color="#eeeeee", zorder=0)


def _label_pad(labels: list[str]) -> float:
    """Left-aligned tick labels need the pad of the longest one (about 5.2 pt per character at 9 pt)."""
    return 5.2 * max((len(label) for label in labels), default=4) + 4


def _legend(fig: Any) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Patch(color=COLORS["allocated"], label="allocated")]
    for limit in LIMITS:
        marker, size = MARKERS[limit]
        handles.append(Line2D([], [], marker=marker, ms=size, color=COLORS[limit], ls="none",
                              mew=2.2 if marker == "|" else 1, label=limit))
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles))


def rows_from_mapping(queues: Mapping[str, Any]) -> list[QueueRow]:
    """QueueRows from a mapping of queue name to {allocated, deserved, guarantee, capability, parent} (a state
    that records queue ledgers)."""
    rows = {}
    for name, value in queues.items():
        if isinstance(value, Mapping):
            rows[name] = QueueRow(str(name), str(value.get("parent") or ""),
                                  **{k: {d: number(v) for d, v in (value.get(k) or {}).items()}
                                     for k in ("allocated", *LIMITS) if isinstance(value.get(k), Mapping)})
    return _tree_order(rows)

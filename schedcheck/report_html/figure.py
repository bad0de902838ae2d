"""One matplotlib figure to inline SVG, guarded: a picture that cannot be drawn becomes a one-line note.

Figures are made with matplotlib's object API (`matplotlib.figure.Figure`, no pyplot and no global
backend switch) and saved as SVG text. The SVG is trimmed for inlining in HTML: no XML prolog or
DOCTYPE, no namespace declarations or metadata (an HTML parser puts <svg> in the SVG namespace
itself), and every id prefixed so that several figures in one page never share one.
"""

from __future__ import annotations

import io
import itertools
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

STYLE = {
    "svg.fonttype": "none",  # text stays text: small, selectable, searchable
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Liberation Sans", "Arial", "Helvetica"],
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.fontsize": 8,
    "legend.frameon": False,
}
METADATA = {"Creator": None, "Date": None, "Format": None, "Type": None}

COLORS = {
    "used": "#4c72b0", "releasing": "#dd8452", "pipelined": "#8172b3", "idle": "#e5e5e5",
    "allocated": "#4c72b0", "deserved": "#2ca02c", "guarantee": "#ff7f0e", "capability": "#d62728",
    "allocate": "#4c72b0", "bind": "#2ca02c", "pipeline": "#8172b3", "evict": "#d62728", "undo": "#999999",
    "bad": "#d62728", "badfill": "#fdeceb", "ink": "#222222", "muted": "#777777",
}

_ids = itertools.count(1)


@dataclass
class Part:
    """A picture of the page: its SVG, or a note saying why it is not there."""

    title: str
    svg: str = ""
    note: str = ""
    caption: str = ""

    @property
    def drawn(self) -> bool:
        return bool(self.svg)


def omitted(title: str, why: str) -> Part:
    return Part(title, note=why)


@contextmanager
def style() -> Iterator[None]:
    import matplotlib

    with matplotlib.rc_context(STYLE):
        yield


def new_figure(width: float, height: float, **kwargs: Any) -> Any:
    """A matplotlib Figure of width x height inches with constrained layout (no pyplot state)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, max(height, 1.2)), layout="constrained", **kwargs)


def svg_of(fig: Any) -> str:
    """The figure as an <svg> element for inlining in HTML."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata=METADATA)
    return inline_svg(buf.getvalue())


def inline_svg(text: str) -> str:
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    text = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", text)
    prefix = f"f{next(_ids)}-"
    text = re.sub(r'\bid="', f'id="{prefix}', text)
    text = re.sub(r"url\(#", f"url(#{prefix}", text)
    text = re.sub(r'href="#', f'href="#{prefix}', text)
    # scale with the page: the width/height attributes become the largest size, the viewBox keeps the shape
    return re.sub(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"',
                  lambda m: f'<svg class="figure" role="img" width="{m.group(1)}pt" height="{m.group(2)}pt"',
                  text, count=1)


def guarded(title: str, draw: Callable[..., Part], *args: Any, **kwargs: Any) -> Part:
    """draw(*args) under the report style; any failure (matplotlib missing, odd data) becomes a note."""
    try:
        with style():
            part = draw(*args, **kwargs)
        if not isinstance(part, Part):
            return omitted(title, f"{title}: not drawn (the renderer returned {type(part).__name__})")
        return part
    except Exception as exc:  # noqa: BLE001 - a picture must never break a report
        return omitted(title, f"{title}: not drawn ({type(exc).__name__}: {str(exc)[:200]})")

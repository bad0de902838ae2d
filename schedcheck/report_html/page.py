"""The HTML document: inline style, sections, tables, figures and notes. Everything given as text is
escaped here (html.escape); only the SVG of figures and the fragments built by these helpers pass
through as markup."""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Sequence
from typing import Any

from schedcheck.report_html.figure import Part

CSS = """
:root { color-scheme: light; }
body { font: 14px/1.45 "DejaVu Sans", "Liberation Sans", Arial, sans-serif; color: #222; margin: 0;
       background: #f6f6f4; }
main { max-width: 1180px; margin: 0 auto; padding: 18px 28px 48px; background: #fff; }
h1 { font-size: 22px; margin: 8px 0 4px; }
h1 .status { font-size: 14px; padding: 2px 8px; border-radius: 10px; vertical-align: middle; margin-left: 8px; }
.status.bad { background: #fde0dd; color: #a50f15; } .status.good { background: #e5f5e0; color: #006d2c; }
h2 { font-size: 17px; margin: 26px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 3px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.subtitle { color: #555; margin: 0 0 12px; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f2f2f2; } table.facts th { width: 130px; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code, pre { font-family: "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 12.5px; }
pre { background: #f4f4f4; border: 1px solid #e2e2e2; padding: 8px 10px; overflow-x: auto; white-space: pre-wrap; }
figure { margin: 10px 0 18px; }
figure svg.figure { max-width: 100%; height: auto; display: block; }
figcaption { color: #555; font-size: 12.5px; margin-top: 4px; max-width: 980px; }
p.note { color: #666; font-style: italic; margin: 6px 0 12px; }
.bad { color: #a50f15; } .good { color: #006d2c; }
details summary { cursor: pointer; color: #444; }
"""


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def as_text(value: Any) -> str:
    """A JSON value as one line of text (strings as they are)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, sort_keys=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def document(title: str, body: Iterable[str], subtitle: str = "", status: tuple[str, bool] | None = None) -> str:
    """A complete self-contained HTML page."""
    badge = ""
    if status is not None:
        badge = f' <span class="status {"good" if status[1] else "bad"}">{esc(status[0])}</span>'
    head = (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n"
            f"<h1>{esc(title)}{badge}</h1>\n")
    sub = f'<p class="subtitle">{esc(subtitle)}</p>\n' if subtitle else ""
    return head + sub + "\n".join(body) + "\n</main>\n</body>\n</html>\n"


def heading(text: str, level: int = 2) -> str:
    return f"<h{level}>{esc(text)}</h{level}>"


def paragraph(text: str) -> str:
    return f"<p>{esc(text)}</p>"


def note(text: str) -> str:
    return f'<p class="note">{esc(text)}</p>'


def code_block(text: str) -> str:
    return f"<pre><code>{esc(text)}</code></pre>"


def facts(rows: Sequence[tuple[str, str]]) -> str:
    """A two-column table of (name, already-escaped HTML value)."""
    body = "".join(f"<tr><th>{esc(k)}</th><td>{v}</td></tr>" for k, v in rows)
    return f'<table class="facts">{body}</table>'


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], numeric: Sequence[int] = ()) -> str:
    """A table of plain values (escaped); columns in `numeric` are right-aligned."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    lines = []
    for row in rows:
        cells = "".join(f'<td class="num">{esc(c)}</td>' if i in numeric else f"<td>{esc(c)}</td>"
                        for i, c in enumerate(row))
        lines.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(lines)}</tbody></table>"


def figure(part: Part) -> str:
    """A drawn picture with its caption, or the one-line note saying why it is not there."""
    if part.drawn:
        caption = f"<figcaption>{esc(part.caption)}</figcaption>" if part.caption else ""
        return (f'<figure data-part="{esc(part.title)}" aria-label="{esc(part.title)}">'
                f'<h3>{esc(part.title)}</h3>{part.svg}{caption}</figure>')
    return note(part.note or f"{part.title}: not drawn")


def section(title: str, parts: Iterable[Part | str], level: int = 2) -> str:
    """A heading and its pictures (Part) or ready HTML fragments (str)."""
    inner = [p if isinstance(p, str) else figure(p) for p in parts]
    return "\n".join([heading(title, level), *inner])


def fallback(title: str, exc: BaseException) -> str:
    """The page when assembling the page itself failed: still a valid document with one note."""
    return document(title, [note(f"this page could not be assembled ({type(exc).__name__}: {str(exc)[:300]}); "
                                 "report.json and report.md in the same folder hold the facts")])

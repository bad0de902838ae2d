"""The textual facts of a failure as HTML: invariant, rule, message, where, objects, expected, found,
and the replay command. Every value is escaped."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedcheck.report_html.page import as_text, code_block, esc, facts


def offending(objects: Any, kind: str) -> set[str]:
    """The names of the objects of one kind ("node", "queue", "task", "job") a violation lists."""
    names: set[str] = set()
    for ref in objects or []:
        if isinstance(ref, str) and ref.startswith(kind + " "):
            names.add(ref[len(kind) + 1:])
    return names


def where(v: Mapping[str, Any]) -> str:
    text = (f"cycle {v.get('cycle', '-')}, action {v.get('action') or '-'}, "
            f"at {v.get('checkpoint') or '-'}")
    if v.get("operation"):
        text += f", after {v['operation']}"
    return text


def violation_facts(v: Mapping[str, Any], rule: str | None = None, replay: str | None = None,
                    extra: list[tuple[str, str]] | None = None) -> str:
    """The violation (Violation.to_json() form) as a table, then the replay command."""
    rows: list[tuple[str, str]] = [("invariant", f"<code>{esc(v.get('id') or v.get('invariant') or '?')}</code>")]
    if rule:
        rows.append(("rule", esc(rule)))
    if v.get("message"):
        rows.append(("what happened", esc(v["message"])))
    rows.append(("where", esc(where(v))))
    objects = v.get("objects") or []
    rows.append(("objects", ", ".join(f"<code>{esc(o)}</code>" for o in objects) or "-"))
    rows.append(("expected", f"<code>{esc(as_text(v.get('expected')))}</code>"))
    rows.append(("found", f'<code class="bad">{esc(as_text(v.get("found")))}</code>'))
    if v.get("known"):
        rows.append(("known finding", esc(f"{v['known']} (an upstream behaviour, docs/findings.md)")))
    rows += extra or []
    out = facts(rows)
    if replay:
        out += code_block(replay)
    return out

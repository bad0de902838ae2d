"""report.html: one self-contained page per report folder, with pictures.

Every report folder (`schedcheck check --report`, the gate's counterexamples, `conform`, `selftest
--report`, the clean gate's summary) gets a report.html beside report.json: the textual facts escaped
as HTML and matplotlib figures rendered to SVG and embedded inline, so the page needs no network (no
script, style sheet or font from elsewhere). Each picture is drawn on its own: a payload that lacks
its part, or a figure that fails to draw, leaves a one-line note in the page instead; rendering never
raises, so the folder's other files are always written.

    page          the document: style, sections, tables, figures, notes
    figure        one figure to inline SVG, guarded (a failure becomes a note)
    units         resource values for people (cpu cores, GiB, GPUs)
    facts         a violation's invariant, rule, expected, found, objects, replay as HTML
    ledger        node ledgers before and after the failing operation
    queues        queues' allocation against deserved, guarantee and capability
    timeline      binds, pipelines and evictions over operations, victim to preemptor
    topology      the HyperNode tree by tier
    scenario      the cluster objects of a scenario document, for queues and topology
    replay        a quiet replay of a counterexample for its operation trace
    check, counterexample, conform, summary, selftest   the pages
"""

from __future__ import annotations

from schedcheck.report_html.check import render_check_html
from schedcheck.report_html.conform import render_conform_html
from schedcheck.report_html.counterexample import render_counterexample_html
from schedcheck.report_html.selftest import render_selftest_html
from schedcheck.report_html.summary import render_summary_html

__all__ = ["render_check_html", "render_conform_html", "render_counterexample_html", "render_selftest_html",
           "render_summary_html"]

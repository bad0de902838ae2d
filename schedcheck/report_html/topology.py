"""The HyperNode tree: HyperNodes by tier above the nodes they hold (spec.members: HyperNodes by exact
name, nodes by exactMatch, regexMatch or labelMatch, resolved as the reference resolves them), drawn
with networkx on matplotlib; the node(s) a violation names in red, nodes under no HyperNode grey."""

from __future__ import annotations

from typing import Any

from schedcheck.report_html.figure import COLORS, Part, new_figure, omitted, svg_of

TITLE = "HyperNode topology"
MAX_LEAVES = 40
TIER_COLORS = ("#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5")


def render_topology(objects: Any, offending: set[str] | None = None) -> Part:
    """The tree of the scenario's HyperNodes (ClusterObjects), or a note when it has none."""
    import networkx as nx

    offending = offending or set()
    if objects is None:
        return omitted(TITLE, "HyperNode topology: not drawn (no scenario document is available to this report)")
    hyper_nodes = list(getattr(objects, "hyper_nodes", []) or [])
    if not hyper_nodes:
        return omitted(TITLE, "HyperNode topology: not drawn (the scenario has no HyperNode)")
    graph, notes = _graph(objects, offending)
    if not nx.is_directed_acyclic_graph(graph):
        return omitted(TITLE, "HyperNode topology: not drawn (the HyperNodes' members form a cycle: not a tree)")
    pos = _tree_layout(graph)
    leaves = sum(1 for n in graph if graph.out_degree(n) == 0)
    top = max((graph.nodes[n]["y"] for n in graph), default=1)
    fig = new_figure(min(max(6.5, 1.05 * leaves + 2.0), 15.0), 1.0 * top + 1.6)
    ax = fig.subplots()
    dashed = [(u, v) for u, v, d in graph.edges(data=True) if d.get("selector") != "exact"]
    solid = [(u, v) for u, v in graph.edges() if (u, v) not in dashed]
    nx.draw_networkx_edges(graph, pos, edgelist=solid, ax=ax, arrows=False, edge_color="#888888", width=1.0)
    nx.draw_networkx_edges(graph, pos, edgelist=dashed, ax=ax, arrows=False, edge_color="#888888", width=1.0,
                           style="dashed")
    for name, data in graph.nodes(data=True):
        x, y = pos[name]
        kind = data["kind"]
        if kind == "hypernode":
            face = TIER_COLORS[min(max(data["tier"] - 1, 0), len(TIER_COLORS) - 1)]
            edge, text = "#2b5d8a", data["label"]
        else:
            bad = data.get("bad", False)
            face = COLORS["badfill"] if bad else ("#f0f0f0" if data.get("loose") else "#ffffff")
            edge, text = (COLORS["bad"] if bad else "#777777"), data["label"]
        ax.text(x, y, text, ha="center", va="center", fontsize=7.5 if kind != "hypernode" else 8, zorder=3,
                color=COLORS["bad"] if data.get("bad") else COLORS["ink"],
                fontweight="bold" if data.get("bad") or kind == "hypernode" else "normal",
                bbox={"boxstyle": "round,pad=0.35", "fc": face, "ec": edge, "lw": 1.6 if data.get("bad") else 0.9,
                      "ls": "--" if data.get("loose") else "-"})
    tiers = sorted({d["y"] for _, d in graph.nodes(data=True)})
    names = {hn.tier: hn.tier_name for hn in hyper_nodes if hn.tier_name}
    ax.set_yticks(tiers)
    ax.set_yticklabels(["nodes" if t == 0 else f"tier {t}" + (f" ({names[t]})" if t in names else "") for t in tiers])
    xs = [p[0] for p in pos.values()]
    ax.set_xlim(min(xs) - 0.8, max(xs) + 0.8)
    ax.set_ylim(-0.6, top + 0.6)
    ax.set_xticks([])
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    ax.tick_params(axis="y", length=0, left=False, labelleft=True)  # networkx turns the labels off
    caption = ["Dashed edges: members chosen by regexMatch or labelMatch; grey dashed boxes: nodes under no "
               "HyperNode."] + notes
    return Part(TITLE, svg=svg_of(fig), caption=" ".join(caption))


def _graph(objects: Any, offending: set[str]) -> tuple[Any, list[str]]:
    import networkx as nx

    from schedcheck.reference.api.hyper_node_info import node_members

    graph = nx.DiGraph()
    notes: list[str] = []
    known = {hn.name: hn for hn in objects.hyper_nodes}
    for hn in objects.hyper_nodes:
        label = f"{hn.name}\ntier {hn.tier}"
        graph.add_node(("hn", hn.name), kind="hypernode", tier=hn.tier, y=hn.tier, label=label)
    held: set[str] = set()
    for hn in objects.hyper_nodes:
        for member in hn.members:
            selector = "exact" if member.exact else ("regex" if member.regex else "labels")
            if member.type == "HyperNode":
                if member.exact not in known:
                    graph.add_node(("hn", member.exact), kind="hypernode", tier=max(hn.tier - 1, 1),
                                   y=max(hn.tier - 1, 0.5), label=f"{member.exact}\n(missing)")
                    notes.append(f"HyperNode {hn.name} names {member.exact}, which does not exist.")
                graph.add_edge(("hn", hn.name), ("hn", member.exact), selector="exact")
                continue
            for node in sorted(node_members(member, objects.nodes)):
                held.add(node)
                graph.add_node(("node", node), kind="node", y=0, label=node, bad=node in offending)
                graph.add_edge(("hn", hn.name), ("node", node), selector=selector)
    loose = [n.name for n in objects.nodes if n.name not in held]
    for name in loose:
        graph.add_node(("node", name), kind="node", y=0, label=name, bad=name in offending, loose=True)
    return _collapse(graph, offending, notes), notes


def _collapse(graph: Any, offending: set[str], notes: list[str]) -> Any:
    """Past MAX_LEAVES nodes, each HyperNode's nodes become one box ("12 nodes"), the offending ones kept."""
    nodes = [n for n, d in graph.nodes(data=True) if d["kind"] == "node"]
    if len(nodes) <= MAX_LEAVES:
        return graph
    for parent in [n for n, d in graph.nodes(data=True) if d["kind"] == "hypernode"]:
        children = [c for c in graph.successors(parent) if graph.nodes[c]["kind"] == "node"
                    and c[1] not in offending]
        if len(children) > 1:
            graph.remove_nodes_from([c for c in children if graph.in_degree(c) <= 1])
            box = ("group", parent[1])
            graph.add_node(box, kind="group", y=0, label=f"{len(children)} nodes")
            graph.add_edge(parent, box, selector="exact")
    loose = [n for n, d in graph.nodes(data=True) if d.get("loose") and n[1] not in offending]
    if len(loose) > 1:
        graph.remove_nodes_from(loose)
        graph.add_node(("group", ""), kind="group", y=0, label=f"{len(loose)} nodes\nunder no HyperNode", loose=True)
    notes.append("Nodes are grouped per HyperNode (too many to draw one by one).")
    return graph


def _tree_layout(graph: Any) -> dict[Any, tuple[float, float]]:
    """x: leaves left to right in depth-first order from the highest tier; a parent over its children."""
    roots = sorted((n for n in graph if graph.in_degree(n) == 0),
                   key=lambda n: (graph.nodes[n]["kind"] != "hypernode", -graph.nodes[n]["y"], str(n[1])))
    x: dict[Any, float] = {}
    slot = [0.0]

    def place(n: Any) -> float:
        if n in x:
            return x[n]
        children = sorted(graph.successors(n), key=lambda c: (-graph.nodes[c]["y"], str(c[1])))
        fresh = [place(c) for c in children if c not in x] if children else []
        if not fresh:
            x[n] = slot[0]
            slot[0] += 1.0
        else:
            x[n] = sum(fresh) / len(fresh)
        return x[n]

    for root in roots:
        place(root)
    return {n: (x[n], float(graph.nodes[n]["y"])) for n in graph}

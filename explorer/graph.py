"""Interactive graphs (pyvis + networkx) that work with no internet.

pyvis inlines vis-network with `cdn_resources="in_line"` but still links Bootstrap from
a CDN; `offline_html` strips those links (and a commented-out local path and a source
map) and adds the little CSS the page used Bootstrap for. Three drawings: the walked
paths of a recall, an entity's neighbourhood, and what the rule hid (Hidden page).
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlparse

import networkx as nx
from pyvis.network import Network

from brain.read.trace import Node, Recall

HEIGHT = 560
PALETTE = ("#4e79a7", "#59a14f", "#9c755f", "#f28e2b", "#76b7b2", "#b07aa1", "#edc948", "#ff9da7",
           "#86bcb6", "#8cd17d", "#d4a6c8", "#a0cbe8")
ANSWER = "#e4572e"        # the answer path
HIDDEN = "#9aa0a6"        # what the rule hid
EDGE = "#8a96a8"

_OPTIONS: dict[str, Any] = {
    "nodes": {"font": {"size": 14, "face": "sans-serif", "strokeWidth": 3, "strokeColor": "#ffffff"},
              "borderWidth": 1},
    "edges": {"arrows": {"to": {"enabled": True, "scaleFactor": 0.6}},
              "font": {"size": 11, "align": "middle", "color": "#4a5568", "strokeWidth": 3,
                       "strokeColor": "#ffffff"},
              "smooth": {"enabled": True, "type": "dynamic"}, "color": {"color": EDGE}},
    "interaction": {"hover": True, "tooltipDelay": 80, "navigationButtons": False, "keyboard": False},
    "physics": {"enabled": True, "solver": "forceAtlas2Based",
                "forceAtlas2Based": {"gravitationalConstant": -60, "springLength": 120,
                                     "avoidOverlap": 0.4},
                "stabilization": {"enabled": True, "iterations": 250, "fit": True}},
}

# What Bootstrap gave the template: a card around the canvas. Nothing else is used.
_CSS = """<style>
body { margin: 0; font-family: sans-serif; }
.card { border: 1px solid #e2e8f0; border-radius: 6px; }
.card-body { padding: 0; }
div.vis-tooltip { white-space: pre-wrap; font-family: sans-serif; max-width: 460px; font-size: 12px; line-height: 1.35;
                  background: #fffdf5; border: 1px solid #d9cfa8; padding: 6px 8px; }
</style>"""

_OUTSIDE = re.compile(r"""<(?:link|script)\b[^>]*?(?:href|src)\s*=\s*["']https?://[^"']*["'][^>]*>"""
                      r"""(?:\s*</script\s*>)?""", re.I | re.S)
# Only the template's own commented-out local links: the inlined library holds "<!--" too.
_COMMENTED = re.compile(r"<!--\s*<link[^>]*node_modules.*?-->", re.S)
_HEADING = re.compile(r"<center>\s*<h1>\s*</h1>\s*</center>", re.S)
_SOURCEMAP = re.compile(r"//# sourceMappingURL=[^\s<]+")
_REF = re.compile(r"""\b(?:src|href)\s*=\s*["']([^"']+)["']""", re.I)


# The usual kinds of a business get distinct colours; any other kind a stable one from
# the palette (crc32, unlike hash(), is the same in every process).
KIND_COLOURS = {"company": "#4e79a7", "customer": "#4e79a7", "person": "#f28e2b", "order": "#59a14f",
                "invoice": "#b07aa1", "payment": "#76b7b2", "product": "#edc948", "ticket": "#ff9da7",
                "complaint": "#e15759", "supplier": "#9c755f", "account": "#86bcb6", "employment": "#d4a6c8"}


def kind_colour(kind: str) -> str:
    return KIND_COLOURS.get(kind) or PALETTE[zlib.crc32(kind.encode("utf-8")) % len(PALETTE)]


def offline_html(net: Network) -> str:
    """The network as one self-contained HTML page: no request leaves the machine."""
    html = net.generate_html(notebook=False)
    html = _OUTSIDE.sub("", html)
    html = _COMMENTED.sub("", html)
    html = _HEADING.sub("", html)
    html = _SOURCEMAP.sub("", html)
    html = html.replace("</head>", _CSS + "\n</head>", 1)
    # Stop the physics once laid out, so the drawing holds still for reading.
    html = html.replace("return network;", 'network.once("stabilizationIterationsDone", function () '
                        '{ network.setOptions({physics: false}); });\n                  return network;', 1)
    return html


def outside_references(html: str) -> list[str]:
    """Every src/href in `html` that points off this machine (for tests and a guard)."""
    out = []
    for ref in _REF.findall(html):
        parsed = urlparse(ref)
        if parsed.scheme in ("http", "https", "ftp") or ref.startswith("//"):
            if (parsed.hostname or "") not in ("localhost", "127.0.0.1", "::1"):
                out.append(ref)
        elif parsed.scheme == "" and ref and not ref.startswith(("#", "data:", "about:", "javascript:")):
            out.append(ref)  # a relative path would be fetched from the app's server
    return out


def _network(graph: nx.MultiDiGraph) -> str:
    net = Network(height=f"{HEIGHT}px", width="100%", directed=True, cdn_resources="in_line",
                  bgcolor="#ffffff", font_color="#1a202c")
    net.from_nx(graph, show_edge_weights=False)
    net.set_options(json.dumps(_OPTIONS))
    return offline_html(net)


def _clip(text: str, n: int = 420) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _node_attrs(node: Node, *, title_extra: Iterable[str] = ()) -> dict[str, Any]:
    name = node.name if len(node.name) <= 34 else node.name[:33] + "…"
    label = name if node.name == node.key else f"{name}\n{node.kind} {node.key}"
    lines = [node.label, f"kind: {node.kind}", *title_extra]
    return {"label": label, "title": "\n".join(lines), "color": kind_colour(node.kind), "shape": "dot",
            "size": 14}


# ---------------------------------------------------------------------------- Ask page
def trace_graph(result: Recall) -> tuple[str | None, dict[str, int]]:
    """The walked paths of a recall with the answer path (the best path) highlighted.

    Returns the HTML (None when the walk found no path) and a few counts for a caption.
    Everything drawn comes from the trace, which holds only what the asker may see.
    """
    tr = result.trace
    paths = tr.paths.paths
    nodes: dict[int, Node] = dict(tr.paths.nodes)
    anchors = {a.node.entity_id: a for a in tr.anchors.anchors}
    for a in tr.anchors.anchors:
        nodes.setdefault(a.node.entity_id, a.node)
    if not paths and not anchors:
        return None, {}
    evidence = {h.memory_id: h.text for h in tr.recall.fused}
    evidence.update({f.memory_id: f.text for f in tr.rank.facts})
    in_context = {ln.memory_id for ln in tr.compact.lines if ln.memory_id is not None}
    answer = paths[0] if paths else None
    answer_hops = {(h.src, h.rel, h.dst, h.memory_id) for h in answer.hops} if answer else set()
    answer_nodes = set(answer.nodes) if answer else set()

    g = nx.MultiDiGraph()
    shown = set(anchors) | {n for p in paths for n in p.nodes}
    for eid in shown:
        node = nodes.get(eid)
        if node is None:  # cannot happen for a visible path; drawn unlabelled if it did
            g.add_node(eid, label=f"#{eid}", title=f"entity #{eid}", color=EDGE)
            continue
        extra = []
        if eid in anchors:
            a = anchors[eid]
            extra.append(f"anchor: {a.how} match of “{a.matched}” (score {a.score:.2f})")
        if eid in answer_nodes:
            extra.append("on the answer path")
        attrs = _node_attrs(node, title_extra=extra)
        if eid in anchors:
            attrs.update(shape="star", size=24)
        if eid in answer_nodes:
            attrs.update(borderWidth=3, color={"background": kind_colour(node.kind), "border": ANSWER})
        g.add_node(eid, **attrs)
    seen: set[tuple[int, str, int, int]] = set()
    for p in paths:
        for h in p.hops:
            key = (h.src, h.rel, h.dst, h.memory_id)
            if key in seen:
                continue
            seen.add(key)
            on_answer = key in answer_hops
            text = evidence.get(h.memory_id)
            title = (f"{h.rel} (memory [{h.memory_id}]"
                     f"{', in the context' if h.memory_id in in_context else ''})\n"
                     + (_clip(text) if text else "the stating memory is outside the ranked facts"))
            g.add_edge(h.src, h.dst, label=h.rel, title=title,
                       color=ANSWER if on_answer else EDGE, weight=4 if on_answer else 1.5)
    html = _network(g)
    return html, {"nodes": g.number_of_nodes(), "edges": g.number_of_edges(), "paths": len(paths)}


# -------------------------------------------------------------------------- Graph page
def neighbourhood_graph(nb: Any) -> str:
    """An entity's neighbourhood (brain.read.graph.Neighbourhood), evidence on hover."""
    g = nx.MultiDiGraph()
    for eid, node in nb.nodes.items():
        attrs = _node_attrs(node)
        if eid == nb.center.entity_id:
            attrs.update(size=26, shape="star", borderWidth=3,
                         color={"background": kind_colour(node.kind), "border": ANSWER})
        g.add_node(eid, **attrs)
    for e in nb.edges:
        when = e.valid_from.date().isoformat() if hasattr(e.valid_from, "date") else str(e.valid_from)
        title = f"{e.rel} · module {e.module} · since {when} · memory [{e.memory_id}]\n{_clip(e.evidence)}"
        g.add_edge(e.src, e.dst, label=e.rel, title=title, color=EDGE, weight=1.5)
    return _network(g)


# ------------------------------------------------------------------------- Hidden page
def hidden_graph(report: Any, reasons_text: dict[str, str]) -> str:
    """The operator's graph around the question: what the member sees drawn as usual,
    what the rule hid from them dashed and grey, with the reason on hover. A node the
    operator may not read either keeps no label."""
    visible = set(report.visible_nodes)
    hidden_why: dict[int, str] = {}
    for it in report.items:
        if it.what == "entity":
            for eid in it.entity_ids:
                hidden_why[eid] = it.reason
    g = nx.MultiDiGraph()
    # The relations walked and every hidden entity; visible entities the walk merely
    # visited would only crowd the drawing.
    ids = {e.src for e in report.edges} | {e.dst for e in report.edges} | set(hidden_why)
    for eid in sorted(ids):
        node = report.nodes.get(eid)
        if node is None:
            g.add_node(eid, label=" ", title="not readable by the operator", color=HIDDEN, shape="dot",
                       size=10, shapeProperties={"borderDashes": [4, 3]})
            continue
        if eid in visible:
            g.add_node(eid, **_node_attrs(node, title_extra=["visible to the member"]))
        else:
            why = hidden_why.get(eid, "named_only_by_hidden")
            attrs = _node_attrs(node, title_extra=[f"HIDDEN from the member: {reasons_text.get(why, why)}"])
            attrs.update(color={"background": "#eef0f2", "border": HIDDEN}, borderWidth=2,
                         shapeProperties={"borderDashes": [5, 4]}, font={"color": "#6b7280"})
            g.add_node(eid, **attrs)
    for e in report.edges:
        if e.reason:
            g.add_edge(e.src, e.dst, label=e.rel, color=HIDDEN, dashes=True, weight=1.5,
                       title=f"{e.rel}: HIDDEN from the member ({reasons_text.get(e.reason, e.reason)})")
        else:
            g.add_edge(e.src, e.dst, label=e.rel, color=EDGE, weight=1.5, title=f"{e.rel}: visible to the member")
    return _network(g)

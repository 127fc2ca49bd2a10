"""The explorer's graphs: self-contained HTML (no request leaves the machine), the
answer path and evidence from the trace, hidden nodes in their own style, and text from
the store that cannot break out of the page's script."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from types import SimpleNamespace

import pytest
from pyvis.network import Network

import brain
from brain.read.trace import Node
from explorer import graph as eg

NOW = datetime(2026, 11, 20, tzinfo=timezone.utc)
QUESTION = "Ağaoğlu Yapı'nın siparişleri hangi faturalarla ödendi?"
_OUTSIDE = re.compile(r"""\b(?:src|href)\s*=\s*["'](?:https?:)?//(?!localhost|127\.0\.0\.1)""", re.I)


def assert_offline(html: str) -> None:
    assert not _OUTSIDE.search(html), _OUTSIDE.search(html)
    assert eg.outside_references(html) == []
    assert "cdn.jsdelivr.net" not in html and "cdnjs.cloudflare.com" not in html
    assert "sourceMappingURL" not in html
    assert "new vis.Network" in html and "vis-network" in html  # the library itself is inlined


def test_plain_pyvis_still_links_a_cdn_and_offline_html_removes_it() -> None:
    net = Network(cdn_resources="in_line", directed=True)
    net.add_node(1, label="a")
    net.add_node(2, label="b")
    net.add_edge(1, 2)
    raw = net.generate_html()
    assert _OUTSIDE.search(raw), "pyvis no longer links Bootstrap: the stripping may be dropped"
    assert_offline(eg.offline_html(net))


def test_trace_graph_is_offline_and_highlights_the_answer_path(demo_store) -> None:  # type: ignore[no-untyped-def]
    result = brain.recall(QUESTION, workspace="acme-tr", member="u-murat", now=NOW, store=demo_store)
    html, counts = eg.trace_graph(result)
    assert html is not None and counts["paths"] == len(result.trace.paths.paths) > 0
    assert_offline(html)
    best = result.trace.paths.paths[0]
    assert eg.ANSWER in html
    for hop in best.hops:  # each answer hop carries its stating memory on hover
        assert f"memory [{hop.memory_id}]" in html
    assert "anchor:" in html


def test_neighbourhood_graph_is_offline(demo_store) -> None:  # type: ignore[no-untyped-def]
    from brain.read.graph import neighbourhood, search_entities

    found = search_entities("Ağaoğlu", workspace="acme-tr", member="u-murat", store=demo_store)
    nb = neighbourhood(found[0].entity_id, workspace="acme-tr", member="u-murat", depth=2, store=demo_store)
    assert nb is not None and nb.edges
    html = eg.neighbourhood_graph(nb)
    assert_offline(html)
    assert all(f"memory [{e.memory_id}]" in html for e in nb.edges)   # the evidence on hover


def test_hidden_nodes_are_dashed_grey_and_unreadable_ones_unlabelled() -> None:
    nodes = {1: Node(1, "company", "C-1", "Visible Co"), 2: Node(2, "account", "ACC-1", "Secret account")}
    report = SimpleNamespace(
        nodes=nodes, visible_nodes=(1,),
        items=(SimpleNamespace(what="entity", entity_ids=(2,), reason="module_not_granted"),),
        edges=(SimpleNamespace(src=2, rel="for", dst=1, reason="module_not_granted"),
               SimpleNamespace(src=3, rel="of", dst=1, reason="private_other")))
    html = eg.hidden_graph(report, {"module_not_granted": "not granted"})
    assert_offline(html)
    assert '"borderDashes": [5, 4]' in html and eg.HIDDEN in html
    assert "HIDDEN from the member: not granted" in html
    assert "not readable by the operator" in html       # node 3 is not in the operator's view
    assert '"id": 3, "label": " "' in html or '"label": " "' in html


def _one_edge(name: str) -> SimpleNamespace:
    nodes = {1: Node(1, "company", "C-1", name), 2: Node(2, "order", "SO-1", "SO-1")}
    return SimpleNamespace(center=nodes[1], nodes=nodes,
                           edges=(SimpleNamespace(src=2, rel="placed_by", dst=1, module="sales", memory_id=9,
                                                  evidence=name, valid_from=NOW),))


@pytest.mark.parametrize("evil", ["</script><script>alert(1)</script>", "<img src=x onerror=alert(1)>"])
def test_text_from_the_store_cannot_break_out_of_the_script(evil: str) -> None:
    html = eg.neighbourhood_graph(_one_edge(evil))
    plain = eg.neighbourhood_graph(_one_edge("Plain Co"))
    assert evil not in html
    assert "\\u003c" in html                          # escaped inside the JSON data
    for tag in ("<script", "</script>", "<img"):
        assert html.count(tag) == plain.count(tag), tag

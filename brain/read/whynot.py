""""Why not?": where an expected fact fell out of a recall, step by step.

Looks only at what the asker may see (every statement is bound to the asker), so a fact
the rule hides reads exactly like one that is not stored: saying it exists is the
privileged Hidden page's job (brain.read.hidden.explain_expected), never this one's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from brain import text as tx
from brain.db import Store, default_store
from brain.embed import Embedder, get_embedder
from brain.read.hidden import search_needle
from brain.read.question import analyse
from brain.read.recall import KEYWORD_SCORES, text_query
from brain.read.trace import Recall

FIND_SQL = """
SELECT m.memory_id, m.text FROM visible_memories m
 WHERE m.workspace_id = %(ws)s AND strpos(m.search_text, %(needle)s) > 0
 ORDER BY m.occurred_at DESC LIMIT 10"""

ONE_SQL = "SELECT memory_id, text FROM visible_memories WHERE workspace_id = %(ws)s AND memory_id = %(id)s"

# A fact's rank in each recall leg over everything the asker may see.
LEG_RANKS_SQL = """
WITH scores AS (""" + KEYWORD_SCORES + """),
me AS (SELECT m.embedding <=> %(qv)s AS dist, s.score
         FROM visible_memories m LEFT JOIN scores s USING (memory_id)
        WHERE m.workspace_id = %(ws)s AND m.memory_id = %(id)s)
SELECT (SELECT count(*) + 1 FROM visible_memories m WHERE m.workspace_id = %(ws)s
           AND (m.embedding <=> %(qv)s) < me.dist) AS vector_rank,
       CASE WHEN me.score IS NOT NULL THEN (SELECT count(*) + 1 FROM scores s WHERE s.score > me.score) END
  FROM me"""

ENTITIES_SQL = """
SELECT e.entity_id, e.kind, e.key, e.name FROM visible_memory_entities me
  JOIN visible_entities e USING (workspace_id, entity_id)
 WHERE me.workspace_id = %(ws)s AND me.memory_id = %(id)s"""

SEARCH_FACTS_SQL = """
SELECT 'fact', m.memory_id, left(m.text, 160) FROM visible_memories m
 WHERE m.workspace_id = %(ws)s AND strpos(m.search_text, %(needle)s) > 0
 ORDER BY m.occurred_at DESC LIMIT %(limit)s"""

SEARCH_ENTITIES_SQL = """
SELECT 'entity', e.entity_id, e.kind || ' ' || e.key || CASE WHEN e.name <> e.key THEN ' (' || e.name || ')' ELSE '' END
  FROM visible_entities e
 WHERE e.workspace_id = %(ws)s AND (strpos(e.name_key, %(folded)s) > 0 OR strpos(upper(e.key), upper(%(raw)s)) > 0)
 ORDER BY length(e.name) LIMIT %(limit)s"""


@dataclass(frozen=True)
class WhyNot:
    expected: str
    verdict: str        # in_context | never_anchored | outside_recall | not_reached | below_budget | marked_earlier | not_found
    detail: str
    memory_ids: tuple[int, ...]
    stages: tuple[tuple[str, str], ...]


def _contains(context: str, expected: str) -> bool:
    return tx.tr_lower(expected) in tx.tr_lower(context)


def why_not(result: Recall, expected: str | int, *, store: Store | None = None,
            embedder: Embedder | None = None) -> WhyNot:
    """Explain where `expected` (a string or a memory id) left this recall."""
    store = store or default_store()
    embedder = embedder or get_embedder()
    label = str(expected)
    if isinstance(expected, str) and _contains(result.context, expected):
        return WhyNot(label, "in_context", "the context holds it", (), (("compact", "in the context"),))
    q = analyse(result.question, result.now)
    qvec = embedder.embed_query(result.question)
    with store.bound(result.workspace, member=result.member, now=result.now, readonly=True) as (conn, _):
        if isinstance(expected, int):
            rows = conn.execute(ONE_SQL, {"ws": result.workspace, "id": expected}).fetchall()
        else:
            rows = conn.execute(FIND_SQL, {"ws": result.workspace, "needle": search_needle(expected)}).fetchall()
        if not rows:
            return WhyNot(label, "not_found",
                          "nothing this member may see holds it (the Hidden page tells an operator more)", (), ())
        mid = int(rows[0][0])
        tq = text_query(conn, q, result.workspace)
        ranks = conn.execute(LEG_RANKS_SQL, {"ws": result.workspace, "id": mid, "qv": qvec, "tqs": list(tq.parts), "idfs": list(tq.idf)}).fetchone()
        entities = conn.execute(ENTITIES_SQL, {"ws": result.workspace, "id": mid}).fetchall()
    return _diagnose(result, label, mid, [int(r[0]) for r in rows], ranks, entities)


def _diagnose(result: Recall, label: str, mid: int, ids: list[int], ranks: Any, entities: list[Any]) -> WhyNot:
    tr = result.trace
    stages: list[tuple[str, str]] = []
    anchored = {a.node.entity_id for a in tr.anchors.anchors}
    ent_ids = {int(e[0]) for e in entities}
    names = ", ".join(f"{e[1]} {e[2]}" for e in entities) or "no entity"
    stages.append(("anchors", f"anchored one of its entities ({names})" if anchored & ent_ids
                   else f"none of its entities ({names}) was anchored"))
    vr, trk = (ranks or (None, None))
    in_fused = next((h for h in tr.recall.fused if h.memory_id == mid), None)
    leg = f"vector rank {vr} (top {tr.recall.k_vector} kept), text rank {trk or 'no keyword match'} " \
          f"(top {tr.recall.k_text} kept)"
    stages.append(("recall", ("in the fused list: " if in_fused else "outside both legs' top k: ") + leg))
    reached = set(tr.paths.nodes)
    pruned = {n for lv in tr.paths.levels for n in lv.pruned}
    skipped = [(n, rel, c, lv.hop) for lv in tr.paths.levels for (n, rel, c) in lv.skipped_fanouts]
    if ent_ids & reached:
        walk = "the walk reached one of its entities"
    elif ent_ids & pruned:
        walk = "the walk reached its entity but the beam cut it"
    elif skipped:
        n, rel, c, hop = skipped[0]
        walk = f"not reached; at hop {hop} the relation '{rel}' of node {n} fanned out to {c} and was skipped"
    else:
        walk = f"not reached by the walk ({tr.paths.stopped})"
    stages.append(("paths", walk))
    fact = next((f for f in tr.rank.facts if f.memory_id == mid), None)
    kept = [ln for ln in tr.compact.lines if ln.memory_id is not None]
    last = min((f.score for f in tr.rank.facts if f.memory_id in {ln.memory_id for ln in kept}), default=0.0)
    if fact is not None:
        stages.append(("rank", f"scored {fact.score:.3f} ({', '.join(f'{k} {v:.2f}' for k, v in fact.parts.items())})"))
    in_ctx = any(ln.memory_id == mid for ln in kept)
    if in_ctx:
        verdict, detail = "in_context", "its fact is in the context (the string may be worded differently)"
    elif fact is not None and fact.earlier:
        verdict, detail = "marked_earlier", f"an earlier value, replaced by [{fact.newer_id}]"
    elif fact is not None:
        verdict, detail = "below_budget", f"ranked {fact.score:.3f}, below the last fact kept ({last:.3f}) " \
                                          f"within {tr.compact.budget} tokens"
    elif not (anchored & ent_ids) and not in_fused and not (ent_ids & reached):
        verdict = "never_anchored" if not tr.anchors.anchors else "outside_recall"
        detail = f"not anchored and {leg}"
    elif not in_fused:
        verdict, detail = ("not_reached" if not (ent_ids & reached) else "outside_recall"), walk + "; " + leg
    else:
        verdict, detail = "below_budget", "recalled but not among the ranked facts kept"
    stages.append(("compact", "in the context" if in_ctx else "not in the context"))
    return WhyNot(label, verdict, detail, tuple(ids), tuple(stages))


def search_visible(query: str, *, workspace: str, member: str | None, now: Any = None,
                   store: Store | None = None, limit: int = 20) -> list[tuple[str, int, str]]:
    """Facts and entities matching `query` that this member may see (for a picker)."""
    store = store or default_store()
    if not query.strip():
        return []
    with store.bound(workspace, member=member, now=now, readonly=True) as (conn, _):
        ents = conn.execute(SEARCH_ENTITIES_SQL, {"ws": workspace, "folded": tx.fold(query), "raw": query.strip(),
                                                  "limit": limit}).fetchall()
        facts = conn.execute(SEARCH_FACTS_SQL, {"ws": workspace, "needle": search_needle(query),
                                                "limit": limit}).fetchall()
    return [(str(k), int(i), str(lbl)) for k, i, lbl in [*ents, *facts]][:limit]

"""Step 4, rank: score every candidate fact and order them for the context.

Candidates are the fused recall hits, the memories that state the walked hops, the
records that define the nodes on the best paths, conversation about the anchors, and
the turns beside the strongest recall hits in their thread. Each is scored by meaning
(vector similarity), by the question's word stems it contains (each weighed by its
rarity among the candidates), by its place in recall and on a path, by the question's
period words, by a soft recency × importance prior, and by the strength of a hit it
sits beside. A value stated twice (a re-synced record, a corrected message) is ordered
newest first, the older one marked earlier.
"""

from __future__ import annotations

import dataclasses
import math
import re
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from brain import text as tx
from brain.db import IntArray
from brain.read.config import RecallConfig
from brain.read.question import Question
from brain.read.trace import AnchorStep, Fact, PathStep, RankStep, RecallStep
from brain.wire import Executor, Rows

# The candidates, and the turns beside the strongest recall hits ("seeds"): the few turns
# just before and after each in its thread, the same day. An answer is often the reply to
# the turn that matches the question ("Did you make that bowl?" - "Yes, in class"), or the
# turn a matching reaction answers ("Congrats on the promotion!"); it need not share a
# word with the question. Fetched here, in the one candidates statement, so a recall pays
# no extra round trip; `beside` lists the seeds a row sits next to.
_CANDIDATES = """
WITH {node_facts}seed AS (
    SELECT s.memory_id, s.thread, s.occurred_at
      FROM visible_memories s
     WHERE s.workspace_id = %(ws)s AND s.memory_id = ANY(%(seeds)s) AND s.thread IS NOT NULL
), near AS (
    SELECT s.memory_id AS seed, b.memory_id
      FROM seed s CROSS JOIN LATERAL (
          SELECT b.memory_id FROM visible_memories b
           WHERE b.workspace_id = %(ws)s AND b.thread = s.thread
             AND b.occurred_at >= s.occurred_at - interval '1 day'
             AND (b.occurred_at, b.memory_id) < (s.occurred_at, s.memory_id)
           ORDER BY b.occurred_at DESC, b.memory_id DESC
           LIMIT %(width)s) b
    UNION ALL
    SELECT s.memory_id, a.memory_id
      FROM seed s CROSS JOIN LATERAL (
          SELECT a.memory_id FROM visible_memories a
           WHERE a.workspace_id = %(ws)s AND a.thread = s.thread
             AND a.occurred_at <= s.occurred_at + interval '1 day'
             AND (a.occurred_at, a.memory_id) > (s.occurred_at, s.memory_id)
           ORDER BY a.occurred_at, a.memory_id
           LIMIT %(width)s) a
-- one id list, so each row is a primary-key lookup (an OR of the two sets made the planner
-- read every memory of the workspace: 50 ms at 100,000 rows). Every id in it came through
-- the visibility rule (recall, path, node facts, and `near` above).
), cand AS (
    SELECT unnest(%(ids)s::bigint[]) AS memory_id UNION SELECT n.memory_id FROM near n{node_cand}
-- the conversation turns among these candidates that restate another of them (found when
-- they were written, brain/corrections.py), the latest first: all pairs in one look, as a
-- subquery per row cost 0.3-0.6 ms on LoCoMo's ~90 candidates
), restated AS (
    SELECT c.older_id, array_agg(c.newer_id ORDER BY c.newer_at DESC, c.newer_id DESC) AS newer
      FROM corrections c
     WHERE c.workspace_id = %(ws)s AND c.older_id IN (SELECT memory_id FROM cand)
       AND c.newer_id IN (SELECT memory_id FROM cand)
     GROUP BY 1
)
SELECT m.memory_id, m.text, m.origin, m.kind, m.module, m.source, m.occurred_at, m.confirmed_at,
       m.expires_at, m.valid_to, m.importance,
       1 - (m.embedding <=> %(qv)s) AS sim,
       rs.newer AS correctors,
       se.name AS sender,
       -- an earlier version of a record: the version that replaced it, if the asker sees it
       CASE WHEN m.valid_to IS NOT NULL AND m.origin = 'record' THEN
           (SELECT c.memory_id FROM visible_memories c
             WHERE c.workspace_id = m.workspace_id AND c.ref_key = m.ref_key AND c.valid_to IS NULL
             LIMIT 1) END AS current_version,
       bs.seeds AS beside,
       {node_cols} AS node_facts,
       -- the link targets a record's stored text gives by kind and key alone (its writer
       -- could not carry a name some of its readers may not read, sql/036), with the names
       -- this asker may read: rank reads the record as naming them (_with_link_names)
       CASE WHEN m.origin = 'record' THEN
           (SELECT jsonb_agg(jsonb_build_array(t.kind || ' ' || t.key, t.name) ORDER BY t.entity_id)
              FROM memory_entities l
              JOIN named_entities t ON t.workspace_id = l.workspace_id AND t.entity_id = l.entity_id
             WHERE l.workspace_id = m.workspace_id AND l.memory_id = m.memory_id AND l.role = 'link'
               AND strpos(m.text, ' → ' || t.kind || ' ' || t.key || ' (') = 0 AND t.name <> t.key)
       END AS link_names
  FROM visible_memories m
  LEFT JOIN restated rs ON rs.older_id = m.memory_id
  -- the seeds a row sits beside, grouped once (a subquery per row cost ~0.3 ms on LoCoMo)
  LEFT JOIN (SELECT n.memory_id, array_agg(n.seed ORDER BY n.seed) AS seeds FROM near n GROUP BY 1) bs
         ON bs.memory_id = m.memory_id
  -- who sent it (one sender at most: sql/020)
  LEFT JOIN memory_entities mf ON mf.workspace_id = m.workspace_id AND mf.memory_id = m.memory_id AND mf.role = 'from'
  LEFT JOIN named_entities se ON se.workspace_id = mf.workspace_id AND se.entity_id = mf.entity_id{node_join}
 WHERE m.workspace_id = %(ws)s AND m.memory_id IN (SELECT memory_id FROM cand)
 -- equal scores keep row order: a fixed one, not the plan's
 ORDER BY m.memory_id"""

# Current records that define a node ("subject"), and the conversation about a node that
# best matches the question's rare words (an anchor may be named in hundreds of turns; the
# most recent first among equals). Each node is looked up on its own (unnest + LATERAL):
# under generic plans a bare `= ANY(array)` is planned for hundreds of ids, and the plan
# read every memory of the workspace to join them. Only turns that hold a word of the
# query are ranked by ts_rank, which costs far more than the match itself.
ABOUT_COUNTED = 1000   # an anchor's newest turns read, at most (it pulls them as weakly beyond)

_SUBJECT_ROWS = """    (SELECT me.entity_id, me.memory_id, 'subject' AS role, 1 AS named
       FROM unnest(%(nodes)s::bigint[]) AS n(entity_id)
       JOIN memory_entities me ON me.workspace_id = %(ws)s AND me.entity_id = n.entity_id AND me.role = 'subject'
       JOIN visible_memories m ON m.workspace_id = me.workspace_id AND m.memory_id = me.memory_id)"""
_ABOUT_ROWS = """    (SELECT a.entity_id, x.memory_id, 'about', x.n
       FROM unnest(%(anchors)s::bigint[]) AS a(entity_id)
       CROSS JOIN LATERAL (
           SELECT y.memory_id, y.n
             FROM (
               -- the anchor's turns, judged and counted from their narrow copies (sql/021:
               -- a party to a conversation is named in hundreds); a turn naming the anchor
               -- twice (sender and mention) is one row. Whether a turn holds a query word
               -- comes from the text index (testing each turn's text vector cost ~2 us a
               -- turn). LoCoMo, this part alone: 2.22 -> 1.46 ms p50.
               SELECT t.memory_id, t.occurred_at, count(*) OVER () AS n,
                      t.memory_id IN (SELECT h.memory_id FROM memories h
                                       WHERE h.workspace_id = %(ws)s AND h.fts @@ %(tsq)s::tsquery) AS hit
                 -- its newest ABOUT_COUNTED, from sql/026's index: a company named in
                 -- 12,000 turns made this a 14 ms statement that grew with them
                 FROM (SELECT t.memory_id, t.occurred_at FROM visible_entity_turns t
                        WHERE t.workspace_id = %(ws)s AND t.entity_id = a.entity_id
                        ORDER BY t.occurred_at DESC, t.memory_id DESC LIMIT {counted}) t) y
            -- only a turn that holds a word of the query is ranked by ts_rank (it is
            -- visible: its row came through the rule above)
            ORDER BY CASE WHEN y.hit THEN (SELECT ts_rank(m.fts, %(tsq)s::tsquery) FROM memories m
                                            WHERE m.workspace_id = %(ws)s AND m.memory_id = y.memory_id)
                          ELSE 0 END DESC,
                     y.occurred_at DESC, y.memory_id DESC
            LIMIT 8) x)"""
_ATTACHED_ROWS = """    (SELECT a.entity_id, x.memory_id, 'attached', 1
       FROM unnest(%(ends)s::bigint[]) AS a(entity_id)
       CROSS JOIN LATERAL (
           SELECT me.memory_id
             FROM memory_entities me JOIN visible_memories m USING (workspace_id, memory_id)
            WHERE me.workspace_id = %(ws)s AND me.entity_id = a.entity_id AND me.role = 'link'
              AND m.valid_to IS NULL
            ORDER BY CASE WHEN m.fts @@ %(tsq)s::tsquery THEN ts_rank(m.fts, %(tsq)s::tsquery) ELSE 0 END DESC,
                     m.occurred_at DESC, me.memory_id DESC
            LIMIT 4) x)"""
# the current records of what an answer node's own record links to, holding a word of
# the question: what it asks may sit one step beyond the kinds it names ("modemi kuran
# teknisyenin net maaşı": the technician's payroll record, which his record links to)
_BEYOND_ROWS = """    (SELECT a.entity_id, x.memory_id, 'beyond', 1
       FROM unnest(%(ends)s::bigint[]) AS a(entity_id)
       CROSS JOIN LATERAL (
           SELECT tm.memory_id
             FROM memory_entities s
             JOIN visible_memories sm ON sm.workspace_id = s.workspace_id AND sm.memory_id = s.memory_id
             JOIN memory_entities l ON l.workspace_id = s.workspace_id AND l.memory_id = s.memory_id AND l.role = 'link'
             JOIN memory_entities t ON t.workspace_id = l.workspace_id AND t.entity_id = l.entity_id AND t.role = 'subject'
             JOIN visible_memories tm ON tm.workspace_id = t.workspace_id AND tm.memory_id = t.memory_id
            WHERE s.workspace_id = %(ws)s AND s.entity_id = a.entity_id AND s.role = 'subject'
              AND sm.valid_to IS NULL AND tm.valid_to IS NULL AND tm.fts @@ %(tsq)s::tsquery
            ORDER BY ts_rank(tm.fts, %(tsq)s::tsquery) DESC, tm.memory_id DESC
            LIMIT 4) x)"""
# A node fact's part, numbered from 1 in this order (the order node facts come in).
_ROLES = ("subject", "about", "attached", "beyond")
_SUBJECT, _ABOUT, _ATTACHED, _BEYOND = (_ROLES.index(r) + 1 for r in _ROLES)
_PART = "array_position(ARRAY[" + ", ".join(f"'{r}'" for r in _ROLES) + "], u.role)"


def _union(*parts: str) -> str:
    return "\nSELECT * FROM (\n" + "\n    UNION ALL\n".join(parts) + "\n) u"


def node_facts_sql(counted: int) -> str:
    """The node facts alone, as a statement (entity, memory, role, how many turns name the
    entity), reading at most `counted` of an anchor's newest turns (written into the text:
    under generic plans a LIMIT it cannot see is planned as if it kept most rows)."""
    # the parts in the order above, each in a fixed order (not the plan's)
    rows = _union(_SUBJECT_ROWS, _ABOUT_ROWS.replace("{counted}", str(int(counted))), _ATTACHED_ROWS, _BEYOND_ROWS)
    return rows + f"\nORDER BY {_PART}, 1, 2"


# The conversation about the anchors (the "about" part, as node_facts_sql reads it: entity,
# memory, how many turns name the entity), a statement of its own: it needs only the
# anchors and the keyword query, both known before path search walks, and the server reads
# it while this process walks (run.py). Inside the candidates statement it was ~0.16 ms of
# the server's work after the walk (demo and accounting questions, that statement alone).
ABOUT_SQL = ("SELECT u.entity_id, u.memory_id, u.n FROM (\n"
             + _ABOUT_ROWS.replace("{counted}", str(ABOUT_COUNTED)) + "\n) u\nORDER BY 1, 2")


def send_about(conn: Executor, anchors: AnchorStep, recall: RecallStep, *, workspace: str) -> Rows | None:
    """The conversation about `anchors` that best holds the question's keyword query, for
    rank_facts (`about`): sent as soon as the anchors are known."""
    ids = [a.node.entity_id for a in anchors.anchors]
    return (conn.execute(ABOUT_SQL, {"ws": workspace, "anchors": IntArray(ids), "tsq": recall.tsquery or None})
            if ids else None)


# The node facts read inside the candidates statement (all but the "about" part, read
# before: ABOUT_SQL): their memories join the candidates on the server, and each candidate
# row carries what made it one, [part, entity, named] per node fact in the order of
# node_facts_sql (part: _SUBJECT, _ATTACHED, _BEYOND).
# As two statements they cost an exchange between them, the server idle while this process
# read the first one's rows and sent the second (~0.1-0.17 ms), and a second plan's start
# and end (bench compare, 16 rounds: read path 5.3 -> 5.2 ms; LoCoMo, three runs: 6.2 ->
# 6.3, 6.1 -> 5.7, 6.6 -> 6.5 ms).
_WITH_NODES = {
    "node_facts": "nf AS MATERIALIZED (\nSELECT u.*, " + _PART + " AS part FROM ("
                  + _union(_SUBJECT_ROWS, _ATTACHED_ROWS, _BEYOND_ROWS) + ") u\n), ",
    "node_cand": " UNION SELECT nf.memory_id FROM nf",
    "node_cols": "nfa.why",
    "node_join": """
  LEFT JOIN (SELECT nf.memory_id,
                    array_agg(ARRAY[nf.part::bigint, nf.entity_id, nf.named::bigint] ORDER BY nf.part, nf.entity_id) AS why
               FROM nf GROUP BY 1) nfa ON nfa.memory_id = m.memory_id""",
}
CANDIDATES_SQL = _CANDIDATES.format(**{**dict.fromkeys(_WITH_NODES, ""), "node_cols": "NULL::bigint[]"})
CANDIDATES_WITH_NODES_SQL = _CANDIDATES.format(**_WITH_NODES)


WEIGHTS = {"meaning": 0.30, "stems": 0.45, "recall": 0.30, "path": 0.80, "period": 0.5, "prior": 0.08,
           "codes": 0.35, "said": 0.25, "beside": 0.45, "answer": 0.40, "later": 1.0, "kind": 0.25}
_BESIDE_DECAY = 0.6   # the lift of a turn two steps from a hit, against one right beside it
# The lift of a record one step beyond an answer node (its own record links to it) that
# holds a word of the question, against the node's weight.
BEYOND_WEIGHT = 0.3
# The lift of a turn that names a walked record's code, against the record's own weight
# (an end node's 1.0, a path node's 0.6).
MENTIONED_WEIGHT = 0.6
_CODED_NODES = 6   # walked records whose codes are looked for in conversation, at most
_ABOUT_SPECIFIC = 20   # conversation turns an anchor may be named in before its pull weakens


def rank_facts(conn: Executor, q: Question, qvec: np.ndarray, recall: RecallStep,
               anchors: AnchorStep, paths: PathStep, *, workspace: str, cfg: RecallConfig,
               then: Callable[[], object] | None = None, about: Rows | None = None) -> RankStep:
    """Rank reads the read's last rows: `then`, if given, is called as soon as its last
    statement is sent (run.py ends the transaction there, brain.wire.Reader.end).
    `about`: the conversation about the anchors as `send_about` sent it (asked for here
    when not given)."""
    t0 = time.perf_counter()
    why: dict[int, list[str]] = {}
    path_score: dict[int, float] = {}
    # the records defining the node the best path ends at, when that is what the question
    # asks for (a supplier asked as "hangi firmadan"): the answer itself, lifted above
    # facts that only mention the anchor (its code, its name)
    answer: set[int] = set()
    answer_node: int | None = None

    def add(mid: int, reason: str, bonus: float = 0.0) -> None:
        why.setdefault(mid, [])
        if reason not in why[mid]:
            why[mid].append(reason)
        path_score[mid] = max(path_score.get(mid, 0.0), bonus)

    max_fused = max((h.fused for h in recall.fused), default=1.0) or 1.0
    fused = {h.memory_id: h.fused / max_fused for h in recall.fused}
    for h in recall.fused:
        add(h.memory_id, "recall")

    graph_mode = cfg.mode == "hybrid" and not cfg.top_k
    if graph_mode:
        best = paths.paths[:3]
        # The best path carries the answer; a runner-up counts by how close it comes
        # (its score, and how many of the asked kinds it covers, against the best's).
        top = best[0] if best else None
        weights = [1.0 if p is top else
                   0.6 * (p.score / top.score) ** 2 * (len(p.covers) + 1) / (len(top.covers) + 1)
                   for p in best] if top else []
        # (a question asking for kinds no path reached: the best path is only the nearest
        # context, not an answer)
        if top is not None and paths.kinds_asked and not top.covers:
            weights = [0.5 * w for w in weights]
        for p, weight in zip(best, weights):
            for hop in p.hops:
                add(hop.memory_id, "path evidence", weight)
        end_nodes = {p.nodes[-1]: w for p, w in zip(best, weights)}
        answer_node = top.nodes[-1] if top is not None and top.ends_asked else None
        on_path = {n: 0.6 for p in best for n in p.nodes}
        anchor_ids = [a.node.entity_id for a in anchors.anchors]
        node_weight = {**on_path, **{a.node.entity_id: 0.8 * a.score for a in anchors.anchors}, **end_nodes}

    # Only the read path proper looks beside its hits; the plain baselines stay plain.
    seeds = [h.memory_id for h in recall.fused[: cfg.beside_seeds]] if graph_mode else []
    params = {"ws": workspace, "ids": IntArray(why), "qv": qvec, "seeds": IntArray(seeds), "width": cfg.beside_width}
    with_nodes = graph_mode and bool(node_weight)
    # the turns about an anchor, by memory: [part, entity, how many turns name it] each,
    # merged below into the node facts the candidates statement gives (in its order)
    about_of: dict[int, list[tuple[int, int, int]]] = {}
    if with_nodes:
        for eid, mid, named in (about if about is not None
                                else send_about(conn, anchors, recall, workspace=workspace)) or ():
            about_of.setdefault(mid, []).append((_ABOUT, eid, named))
        params["ids"] = IntArray([*why, *(m for m in about_of if m not in why)])   # (the turns about too)
        # Records attached to an answer node (an account for a company) hold what the
        # question may ask one step beyond the kinds it names; best text matches first.
        params.update({"nodes": IntArray(node_weight), "anchors": IntArray(anchor_ids),
                       "ends": IntArray([n for n, w in end_nodes.items() if w >= 0.5] or anchor_ids),
                       # the keyword leg's query (its rare words; None when it kept none)
                       "tsq": recall.tsquery or None})
    # binary: ids, times and numbers come back as values, not text for Python to parse
    sent = (conn.execute(CANDIDATES_WITH_NODES_SQL if with_nodes else CANDIDATES_SQL, params, binary=True)
            if why or with_nodes else None)
    if then is not None:
        then()
    rows = [_with_link_names(r) for r in sent.fetchall()] if sent is not None else []
    beside_answer: list[Any] = []   # records attached to the answer node or one step beyond it
    if with_nodes:
        # each candidate's node facts (see _WITH_NODES), in node_facts_sql's order for it
        for r in rows:
            mid = r[0]
            found = r[16] or ()
            if mid in about_of:
                found = sorted([*map(tuple, found), *about_of[mid]])
            for part, eid, named in found:
                if part == _ATTACHED:
                    add(mid, "attached to answer node", 0.3 * node_weight.get(eid, 0.5))
                    if eid == answer_node:
                        beside_answer.append(r)
                elif part == _BEYOND:
                    add(mid, "beyond answer node", BEYOND_WEIGHT * node_weight.get(eid, 0.5))
                    if eid == answer_node:
                        beside_answer.append(r)
                elif part == _SUBJECT:
                    add(mid, "answer node" if eid in end_nodes else "anchor" if eid in anchor_ids else "path node",
                        node_weight.get(eid, 0.5))
                    if eid == answer_node:
                        answer.add(mid)
                else:
                    # an anchor that hundreds of turns name (a party to the conversation)
                    # says little about which of them answers
                    add(mid, "about anchor", 0.35 * min(1.0, _ABOUT_SPECIFIC / max(1, named)))
    if beside_answer and answer_node is not None:
        # The field the question asks for ("IBAN", "vergi numarası") that the answer node's
        # own records do not state, stated by a record attached to it or one step beyond
        # it (a supplier's bank account in its current-account record): that record is the
        # answer. (Without it, the answer node's records and the path's filled the context
        # and the account, weighed as any record beside the node, came thirteenth.)
        fields = tx.asked_fields(q.text)
        if fields and not any(fields & tx.field_names(r[1]) for r in rows if r[0] in answer):
            for r in beside_answer:
                if r[2] == "record" and fields & tx.field_names(r[1]):
                    add(r[0], "states what is asked, beside answer node", node_weight.get(answer_node, 0.5))
                    answer.add(r[0])
    q_stems = q.stems
    # What each candidate shares with the question (the sender named before the text):
    # counted here for the weights, summed below for the score. Stems are read word by
    # word, so "sender: text" has the sender's and the text's: the text is split once.
    shared: dict[int, frozenset[str]] = {}
    df = dict.fromkeys(q_stems, 0)
    for r in rows:
        own = tx.stem_set(r[1])
        common = q_stems & (own | tx.stem_set(r[13]) if r[13] else own)
        shared[r[0]] = common
        for st in common:
            df[st] += 1
    if with_nodes:
        # A turn naming a walked record by its code and holding a word of the question
        # ("2026/233 E. sayılı dosyada ... sulh teklif ediyoruz", asked of the client whose
        # case it is): FORMAT.md links a message to no synced record, its code meets the
        # record at query time, through text, and the question named the client, not the
        # code. (Without a word of the question, every turn about a case would crowd out
        # what was asked. Sought in SQL among all turns, 0.26 ms a recall; among the
        # candidates, nothing.)
        coded = _coded(paths, node_weight, q)
        if coded:
            for r in rows:
                if r[2] != "record" and shared[r[0]]:
                    low = r[1].lower()
                    for eid, code in coded:
                        if code in low:
                            add(r[0], "names a path node's code", MENTIONED_WEIGHT * node_weight.get(eid, 0.5))
    # A question word most candidates contain (the name of a party to every turn) tells
    # them apart least: each stem weighs by its rarity among the candidates (IDF).
    idf = {st: math.log(1 + len(rows) / (1 + df[st])) for st in q_stems}
    idf_total = sum(idf.values()) or 1.0
    facts: list[Fact] = []
    replaced_by: dict[int, int] = {}   # an earlier record version -> its current version
    restated: dict[int, list[int]] = {}   # a turn -> the later turns restating it, latest first
    now = q.now
    codes = [c.lower() for c in q.info.codes]
    beside: dict[int, tuple[int, ...]] = {}
    said = q.conversation
    # (a period that begins after the question's moment, "Haziran için kaç araç istiyor?"
    # in May, holds no fact yet: it says what the facts are about, not when they were
    # stated, and lifts none of them)
    period = q.period if q.period is not None and q.period.start <= q.now else None
    if period is not None:   # (its days, for the days records' fields hold)
        p_first, p_last = period.start.date(), period.end.date()
    # (a period naming a record, "Ekim faturasını ne zaman ödeyeceğini söyledi?", is the
    # record's: what was said about it, often later, is neither in nor out of it)
    records_only = period is not None and tx.period_of_a_record(q.info.text, period)
    # ... but a record planned for it says so in a field: "önümüzdeki hafta hangi mülakat
    # planlı?" asks for the interview whose "scheduled_at" falls next week (any date field
    # counts, as nothing has happened yet; a record without one is neither in nor out)
    ahead = q.period if q.period is not None and period is None else None
    if ahead is not None:
        a_first, a_last = ahead.start.date(), ahead.end.date()
    # (the weights as locals, and no conversions of values the binary rows already give as
    # int and float: the loop runs for every candidate, ~90 on LoCoMo)
    w_codes, w_said, w_meaning, w_stems = WEIGHTS["codes"], WEIGHTS["said"], WEIGHTS["meaning"], WEIGHTS["stems"]
    w_recall, w_path, w_period, w_prior = WEIGHTS["recall"], WEIGHTS["path"], WEIGHTS["period"], WEIGHTS["prior"]
    w_answer, w_later, w_kind = WEIGHTS["answer"], WEIGHTS["later"], WEIGHTS["kind"]
    # a question listing what a period holds asks for records of its kinds ("Nisan'da gelen
    # şikayetler": the complaint records, before the bookings and guests the month also
    # holds); (not for the plain baselines)
    asked = set(paths.kinds_asked) if graph_mode and period is not None else set()
    # The question is asked at `now`: a fact stated after it (a store loaded ahead of the
    # moment an evaluation replays, FORMAT.md's `now`) ranks below everything stated by
    # then, never makes one of those an earlier value, and a record version that was
    # current at `now` is not one.
    stated_later: set[int] = set()
    idf_of = idf.__getitem__
    baseline = bool(cfg.top_k)
    for (mid, text, origin, kind, module, source, occurred, confirmed, expires, valid_to, importance,
         sim, correctors, sender, current_version, next_to, _node_facts, _link_names) in rows:
        if next_to:
            beside[mid] = tuple(next_to)
        if sender:  # the sender is a visible entity: this fact links it
            text = f"{sender}: {text}"
        # the score: the parts' weighted sum, added up in the order the parts are listed
        parts: dict[str, float] = {}
        score = 0.0
        if codes:
            low = text.lower()
            parts["codes"] = v = sum(1 for c in codes if c in low) / len(codes)
            score += w_codes * v
        if said and origin != "record":
            parts["said"] = 1.0
            score += w_said
        parts["meaning"] = v = max(0.0, min(1.0, (sim - 0.70) / 0.22))
        score += w_meaning * v
        if q_stems:
            parts["stems"] = v = sum(map(idf_of, shared[mid])) / idf_total
            score += w_stems * v
        parts["recall"] = v = fused.get(mid, 0.0)
        score += w_recall * v
        parts["path"] = v = path_score.get(mid, 0.0) if graph_mode else 0.0
        score += w_path * v
        if mid in answer:
            parts["answer"] = 1.0
            score += w_answer
        if period is not None and (origin == "record" or not records_only):
            # (a record with a date field is in the period by that day, not by the day it
            # was synced: an event "tarih: 2026-05-16" booked in March took place in May,
            # one booked in May for September did not)
            spans = tx.record_spans(text) if origin == "record" else ()
            parts["period"] = v = 1.0 if (any(first < p_last and end > p_first for first, end in spans) if spans
                                          else period.start <= occurred < period.end) else -0.4
            score += w_period * v
        if ahead is not None and origin == "record" and any(a_first <= d < a_last for d in tx.field_days(text, True)):
            parts["period"] = 1.0
            score += w_period
        age_days = max(0.0, (now - occurred).total_seconds() / 86400)
        parts["prior"] = v = math.exp(-age_days / 180) * importance * 2
        score += w_prior * v
        if asked and origin == "record" and not asked.isdisjoint(tx.kind_concepts(kind)):
            parts["kind"] = 1.0
            score += w_kind
        if occurred > now:
            stated_later.add(mid)
            parts["later"] = -1.0
            score -= w_later
        # (parts stay unrounded: the trace rounds floats when it is written, and rounding
        # each part here cost more than building the fact)
        if baseline:  # plain baselines: their own leg's order, nothing else
            score = parts["recall"]
        facts.append(_fact(mid, text, origin, kind, module, source, occurred, confirmed, expires,
                           valid_to is not None and valid_to <= now, None, tuple(why.get(mid, ())), parts,
                           round(score, 5),
                           sender or None))
        if correctors:
            restated[mid] = correctors
        if current_version is not None and current_version != mid:
            replaced_by[mid] = current_version

    facts = _add_beside(facts, beside)
    facts = _mark_earlier(facts, restated, replaced_by, stated_later)
    ordered = _order(facts)
    return RankStep(tuple(ordered[: max(cfg.max_facts, cfg.top_k)]), q.info.period, (time.perf_counter() - t0) * 1000)


def _coded(paths: PathStep, node_weight: dict[int, float], q: Question) -> list[tuple[int, str]]:
    """The walked records (anchors, the best paths' nodes) whose key or name holds a code
    the question does not: (entity, the code in lower case)."""
    asked = {c.upper() for c in q.codes}
    out: list[tuple[int, str]] = []
    nodes = 0
    for eid, _ in sorted(node_weight.items(), key=lambda kv: -kv[1]):
        node = paths.nodes.get(eid)
        if node is None:
            continue
        found = [c for c in tx.codes(f"{node.key or ''} {node.name or ''}") if c not in asked]
        out += [(eid, c.lower()) for c in found]
        nodes += bool(found)
        if nodes >= _CODED_NODES:
            break
    return out


def _with_link_names(row: Any) -> Any:
    """A candidate row whose record text gives some link targets by kind and key alone,
    with their names added as its writer adds a name it may carry ("contact → person E-9
    (Zorbey Gizlitan)"): the names this asker may read (the statement's last column)."""
    names = row[-1]
    if not names:
        return row
    text = row[1]
    for target, name in names:
        part = f" → {target}"
        text = re.sub(re.escape(part) + r"(?= \| |$)", f"{part} ({name})".replace("\\", "\\\\"), text)
    return (row[0], text, *row[2:])


_FACT_FIELDS = tuple(f.name for f in dataclasses.fields(Fact))


def _fact(*values: Any) -> Fact:
    """Fact(*values), filled in directly: a frozen dataclass's __init__ sets each of its 15
    fields through object.__setattr__ (4.5 against 2.7 us, timeit), and a recall builds a
    Fact for every candidate (LoCoMo: ~75) and again for each one lifted or marked earlier."""
    fact = object.__new__(Fact)
    fact.__dict__.update(zip(_FACT_FIELDS, values))
    return fact


def _refact(fact: Fact, **changes: Any) -> Fact:
    """A copy of `fact` with `changes` (dataclasses.replace, without its per-call checks)."""
    new = object.__new__(Fact)
    new.__dict__.update(fact.__dict__)
    new.__dict__.update(changes)
    return new


def _add_beside(facts: list[Fact], beside: dict[int, tuple[int, ...]]) -> list[Fact]:
    """Lift the turns next to a strong hit by how strong it is and how close they sit."""
    if not beside:
        return facts
    by_id = {f.memory_id: f for f in facts}
    top = max((f.score for f in facts), default=0.0)
    if top <= 0:
        return facts
    lift: dict[int, tuple[float, int]] = {}
    for seed in {s for seeds in beside.values() for s in seeds}:
        if seed not in by_id:
            continue
        # positions in the thread: the seed and the turns fetched beside it, in order
        row = sorted([seed, *(m for m, seeds in beside.items() if seed in seeds and m in by_id)],
                     key=lambda m: (by_id[m].occurred_at, m))
        at = row.index(seed)
        strength = max(0.0, by_id[seed].score) / top
        for i, mid in enumerate(row):
            step = abs(i - at)
            if step == 0:
                continue
            value = strength * _BESIDE_DECAY ** (step - 1)
            if value > lift.get(mid, (0.0, 0))[0]:
                lift[mid] = (value, seed)
    out = []
    for f in facts:
        if f.memory_id in lift:
            value, seed = lift[f.memory_id]
            parts = {**f.parts, "beside": value}
            why = (*f.why, f"beside [{seed}]")
            f = _refact(f, parts=parts, why=why, score=round(f.score + WEIGHTS["beside"] * value, 5))
        out.append(f)
    return out


def _mark_earlier(facts: list[Fact], restated: dict[int, list[int]],
                  replaced_by: dict[int, int], stated_later: set[int] | frozenset[int] = frozenset()) -> list[Fact]:
    """Link each earlier value to the newer one that replaced it: a record's earlier
    version to its current one (read with it), a conversation turn to the latest of the
    later turns restating it that is among these facts (brain.corrections) and was
    stated by the question's moment (not one of `stated_later`)."""
    newer: dict[int, int] = {f.memory_id: replaced_by[f.memory_id] for f in facts
                             if f.earlier and f.memory_id in replaced_by}
    if restated:
        here = {f.memory_id for f in facts} - stated_later
        for old_id, later in restated.items():
            for new_id in later:
                if new_id in here:
                    newer[old_id] = new_id
                    break
    if not newer:
        return facts
    out = []
    for f in facts:
        if f.memory_id in newer:
            f = _refact(f, earlier=True, newer_id=newer[f.memory_id])
        out.append(f)
    return out


def _order(facts: list[Fact]) -> list[Fact]:
    """Best first; an earlier value right after the newer one, never before it."""
    newer = {f.memory_id: f.newer_id for f in facts if f.newer_id is not None}
    if not newer:   # (most recalls: no earlier value among the facts, each is its own group)
        return sorted(facts, key=lambda f: (-f.score, -f.occurred_at.timestamp()))
    # the newer value carries the best score of its group: each fact's score goes to
    # the newest value its chain reaches (cycles, which should not occur, stop the walk)
    group_best: dict[int, float] = {}
    for f in facts:
        head = f.memory_id
        if head in newer:
            seen = set()
            while head in newer and head not in seen:
                seen.add(head)
                head = newer[head]
        best = group_best.get(head)
        if best is None or f.score > best:
            group_best[head] = f.score
    ids = {f.memory_id for f in facts}
    heads = [f for f in facts if f.newer_id is None or f.newer_id not in ids]
    heads.sort(key=lambda f: (-max(f.score, group_best.get(f.memory_id, f.score)), -f.occurred_at.timestamp()))
    followers: dict[int, list[Fact]] = {}
    for f in facts:
        if f.newer_id is not None and f.newer_id in ids:
            followers.setdefault(f.newer_id, []).append(f)
    out: list[Fact] = []
    placed: set[int] = set()

    def place(f: Fact) -> None:
        if f.memory_id in placed:
            return
        placed.add(f.memory_id)
        out.append(f)
        after = followers.get(f.memory_id)
        if after:
            for g in sorted(after, key=lambda x: -x.occurred_at.timestamp()):
                place(g)

    for f in heads:
        place(f)
    for f in facts:  # cycles, if any
        place(f)
    return out
